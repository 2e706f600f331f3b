import math

import numpy as np
import pytest

from lmcourse.data import toy_corpus
from lmcourse.ngram import BOS, EOS, NGramLM, lm_vocab, tokenized_sentences
from lmcourse.vocab import UNK, Vocab

CORPUS = [s.split() for s in ["a b a c", "b a b", "c a a b c", "a c b"]]


def test_chinese_bigram_example_gives_two_thirds():
    sentences = [line.split() for line in toy_corpus("chinese_bigram")]
    model = NGramLM(2, k=0.0).fit(sentences)
    assert model.count("的", "词性") == 2 and model.count("的") == 3
    assert model.prob("词性", ["的"]) == pytest.approx(2 / 3)


def test_add_one_matches_formula():
    model = NGramLM(2, k=1.0).fit(CORPUS)
    v = len(model.outcomes)   # a b c </s> <unk>
    assert v == 5
    c_ab, c_a = model.count("a", "b"), sum(model.counts[2][("a",)].values())
    assert model.prob("b", ["a"]) == pytest.approx((c_ab + 1) / (c_a + v))
    assert model.prob("zzz", ["a"]) == pytest.approx(1 / (c_a + v))   # unknown word -> <unk>


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("smoothing,k", [("add-k", 1.0), ("add-k", 0.1), ("kneser-ney", 0.0)])
def test_distributions_sum_to_one(order, smoothing, k):
    model = NGramLM(order, smoothing, k=k).fit(CORPUS)
    for context in ([], ["a"], ["b", "a"], ["a", "zzz"], ["c", "c", "c"]):
        p = model.distribution(context)
        assert p.sum() == pytest.approx(1.0) and (p > 0).all()


def test_maximum_likelihood_unseen_gives_infinite_perplexity():
    model = NGramLM(2, k=0.0).fit(CORPUS)
    assert model.perplexity([["a", "b"]]) < math.inf
    assert model.perplexity([["c", "c"]]) == math.inf          # bigram (c, c) never seen
    assert model.distribution(["<unk>"]).sum() == 0            # unseen context: no estimate


def test_kneser_ney_matches_hand_computation():
    # bigram KN: P(w|h) = max(c(h,w)-d,0)/c(h) + d*N1+(h.)/c(h) * Pcont(w),
    # Pcont(w) = max(N1+(.w)-d,0)/N1+(..) + d*|{w: N1+(.w)>0}|/N1+(..) / |V|
    d = 0.75
    model = NGramLM(2, "kneser-ney", discount=d).fit(CORPUS)
    bigrams = {(h[0], w) for h, nexts in model.counts[2].items() for w in nexts}
    left = {w: sum(1 for (_, x) in bigrams if x == w) for w in model.outcomes}
    n_types, n_words = len(bigrams), sum(1 for w in left if left[w] > 0)
    pcont = {w: max(left[w] - d, 0) / n_types + d * n_words / n_types / len(model.outcomes)
             for w in model.outcomes}
    c_a = model.counts[2][("a",)]
    for w in model.outcomes:
        expected = max(c_a[w] - d, 0) / sum(c_a.values()) + d * len(c_a) / sum(c_a.values()) * pcont[w]
        assert model.prob(w, ["a"]) == pytest.approx(expected)


def test_perplexity_of_uniform_model_is_vocabulary_size():
    model = NGramLM(1, k=1e9).fit(CORPUS)   # huge k: every word equally likely
    assert model.perplexity([["a", "b", "c"]]) == pytest.approx(len(model.outcomes), rel=1e-6)


def test_padding_counts_sentence_starts_and_ends():
    model = NGramLM(3, k=0.0).fit(CORPUS)
    assert model.count(BOS, BOS, "a") == 2 and model.count("b", "c", EOS) == 1
    assert model.count(BOS) == 0   # <s> is context only, never predicted


def test_generate_is_seeded_and_stops():
    model = NGramLM(2, k=0.0).fit(CORPUS)
    a, b = model.generate(50, seed=3), model.generate(50, seed=3)
    assert a == b and len(a) <= 50 and EOS not in a
    assert all(w in {"a", "b", "c"} for w in a)


def test_min_freq_maps_rare_words_to_unk():
    model = NGramLM(1, k=0.0).fit(CORPUS + [["rare"]], min_freq=2)
    assert "rare" not in model.vocab and model.count(UNK) == 1


def test_tokenized_sentences_splits_on_end_punctuation():
    assert tokenized_sentences(["One two. Three!", "Four"]) == [["one", "two", "."], ["three", "!"], ["four"]]


def test_lm_vocab_has_specials():
    v = lm_vocab(CORPUS)
    assert v.itos[:4] == ["<pad>", UNK, BOS, EOS]


@pytest.mark.parametrize("kwargs,error", [
    ({"order": 0}, ValueError), ({"order": 2.0}, TypeError), ({"order": 2, "k": -0.5}, ValueError),
    ({"order": 2, "smoothing": "witten-bell"}, ValueError), ({"order": 2, "discount": 1.5}, ValueError),
])
def test_bad_constructor_arguments(kwargs, error):
    with pytest.raises(error):
        NGramLM(**kwargs)


def test_bad_fit_and_query_arguments():
    with pytest.raises(ValueError, match="sentences must not be empty"):
        NGramLM(2).fit([])
    with pytest.raises(TypeError, match="lists of tokens"):
        NGramLM(2).fit(["a b c"])
    with pytest.raises(RuntimeError, match="fit"):
        NGramLM(2).prob("a", [])
    model = NGramLM(2).fit(CORPUS)
    with pytest.raises(TypeError, match="context"):
        model.distribution("a b")
    with pytest.raises(ValueError, match="predictable"):
        model.prob(BOS, ["a"])
    with pytest.raises(ValueError, match="ngram"):
        model.count("a", "b", "c")
    with pytest.raises(ValueError, match="vocab must contain"):
        NGramLM(2).fit(CORPUS, vocab=Vocab(["a"]))
    assert np.isclose(model.distribution(["a"]).sum(), 1.0)
