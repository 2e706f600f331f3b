from collections import Counter

import pytest

from lmcourse.ngram import EOS, NGramLM

CORPUS = [s.split() for s in ["a b a c", "b a b", "c a a b c", "a c b"]]


def test_unigram_samples_are_never_empty():
    # </s> ends 4 of the 17 tokens: without min_len some unigram samples would be empty
    model = NGramLM(1, "kneser-ney").fit(CORPUS)
    assert any(model.generate(20, seed=s, min_len=0) == [] for s in range(40))
    samples = [model.generate(20, seed=s) for s in range(40)]
    assert all(len(s) >= 1 and EOS not in s for s in samples)
    assert all(len(model.generate(20, seed=s, min_len=3)) >= 3 for s in range(10))


def test_generate_min_len_is_checked():
    model = NGramLM(2).fit(CORPUS)
    with pytest.raises(ValueError, match="min_len"):
        model.generate(5, min_len=6)


def test_markov_context_keeps_the_last_n_minus_1_tokens():
    assert NGramLM(1).fit(CORPUS).markov_context(["a", "b"]) == ()
    assert NGramLM(3).fit(CORPUS).markov_context(["c", "a", "b"]) == ("a", "b")
    assert NGramLM(3).fit(CORPUS).markov_context(["zzz"]) == ("<s>", "<unk>")


def test_count_of_counts_and_ney_discount():
    model = NGramLM(2).fit(CORPUS)
    bigram_counts = Counter(c for nexts in model.counts[2].values() for c in nexts.values())
    n = model.count_of_counts()
    assert n == bigram_counts and sum(r * n_r for r, n_r in n.items()) == sum(len(s) + 1 for s in CORPUS)
    assert model.estimated_discount() == pytest.approx(n[1] / (n[1] + 2 * n[2]))
    assert model.count_of_counts(1) == Counter(model.counts[1][()].values())
    with pytest.raises(ValueError, match="m"):
        model.count_of_counts(3)


def test_distribution_is_the_same_after_caching():
    model = NGramLM(3, "kneser-ney").fit(CORPUS)
    first = model.distribution(["a", "b"]).copy()
    model.distribution(["b", "a"])
    assert (model.distribution(["a", "b"]) == first).all()
