"""Reference solutions of chapter 2's new exercises pass their checks; typical mistakes fail."""
import math
from collections import Counter

import pytest

from lmcourse.exercises import check


def kneser_ney_bigram(sentences, prev, word, d):
    padded = [["<s>"] + s + ["</s>"] for s in sentences]
    pairs = Counter((a, b) for s in padded for a, b in zip(s, s[1:]))
    vocab_size = len({w for s in sentences for w in s}) + 2            # + </s> and <unk>
    left = Counter(b for (a, b) in pairs)                               # N1+(. w)
    n_types = len(pairs)                                                # N1+(. .)
    p_lower = max(left[word] - d, 0) / n_types + d * len(left) / n_types / vocab_size
    after = {b: c for (a, b), c in pairs.items() if a == prev}
    total = sum(after.values())
    if total == 0:
        return p_lower
    return max(after.get(word, 0) - d, 0) / total + d * len(after) / total * p_lower


def perplexity(model, sentences):
    order = model.order
    logprob, n = 0.0, 0
    for s in sentences:
        history = ["<s>"] * (order - 1)
        for w in s + ["</s>"]:
            p = model.prob(w, history)
            if p == 0:
                return math.inf
            logprob, n = logprob + math.log(p), n + 1
            history.append(w)
    return math.exp(-logprob / n)


def test_kneser_ney_reference_passes():
    assert check("ch02-kneser-ney-bigram", kneser_ney_bigram) == "ch02-kneser-ney-bigram: all 3 checks passed"


def test_kneser_ney_with_raw_counts_below_fails():
    def raw_unigram(sentences, prev, word, d):   # a common mistake: c(w) instead of N1+(. w)
        padded = [["<s>"] + s + ["</s>"] for s in sentences]
        unigrams = Counter(w for s in padded for w in s[1:])
        total_u = sum(unigrams.values())
        pairs = Counter((a, b) for s in padded for a, b in zip(s, s[1:]))
        after = {b: c for (a, b), c in pairs.items() if a == prev}
        total = sum(after.values())
        return max(after.get(word, 0) - d, 0) / total + d * len(after) / total * unigrams[word] / total_u
    with pytest.raises(AssertionError, match="continuation"):
        check("ch02-kneser-ney-bigram", raw_unigram)


def test_perplexity_reference_passes_and_forgetting_the_end_fails():
    assert check("ch02-perplexity", perplexity) == "ch02-perplexity: all 3 checks passed"

    def no_end(model, sentences):   # scores the words but not the </s> of each sentence
        logprobs = [math.log(model.prob(w, s[:i])) for s in sentences for i, w in enumerate(s)]
        return math.exp(-sum(logprobs) / len(logprobs))
    with pytest.raises(AssertionError, match="</s>"):
        check("ch02-perplexity", no_end)


def test_checks_refuse_non_callables():
    with pytest.raises(TypeError, match="function itself"):
        check("ch02-perplexity", 3)
