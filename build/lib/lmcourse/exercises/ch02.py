"""Checks for the exercises of chapter 2 (language models)."""
import math
from collections import Counter

from lmcourse.data import toy_corpus

__all__ = ["add_k"]


def _reference(sentences, prev, word, k):
    pairs = Counter((a, b) for s in sentences for a, b in zip(s, s[1:]))
    context = Counter(a for s in sentences for a in s[:-1])
    vocab_size = len({w for s in sentences for w in s})
    return (pairs[(prev, word)] + k) / (context[prev] + k * vocab_size)


def add_k(candidate) -> int:
    """candidate(sentences, prev, word, k) -> add-k estimate of P(word | prev) from adjacent pairs
    inside the sentences, with |V| = number of distinct words of the corpus."""
    if not callable(candidate):
        raise TypeError("pass your function itself, e.g. check('ch02-add-k', add_k)")
    chinese = [line.split() for line in toy_corpus("chinese_bigram")]
    got = candidate(chinese, "的", "词性", 0)
    assert math.isclose(got, 2 / 3), f"with k=0, P(词性 | 的) must be 2/3 (count 2 / count 3), got {got}"
    english = [s.split() for s in ["the cat sat", "the dog sat", "a cat ran"]]
    for prev, word, k in (("the", "cat", 1), ("the", "ran", 1), ("cat", "sat", 0.5), ("sat", "the", 0.1)):
        want, got = _reference(english, prev, word, k), candidate(english, prev, word, k)
        assert math.isclose(got, want, rel_tol=1e-9), (
            f"P({word} | {prev}) with k={k}: expected {want:.4f}, got {got}. Numerator: count(prev, word) + k; "
            f"denominator: count(prev followed by any word) + k * |V|")
    words = sorted({w for s in english for w in s})
    total = sum(candidate(english, "the", w, 1) for w in words)
    assert math.isclose(total, 1.0), f"P(. | the) over the {len(words)} words must sum to 1, got {total}"
    return 3
