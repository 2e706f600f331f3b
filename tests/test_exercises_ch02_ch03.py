from collections import Counter

import numpy as np
import pytest

from lmcourse.exercises import check


def add_k(sentences, prev, word, k):
    pairs = Counter((a, b) for s in sentences for a, b in zip(s, s[1:]))
    context = Counter(a for s in sentences for a in s[:-1])
    vocab_size = len({w for s in sentences for w in s})
    return (pairs[(prev, word)] + k) / (context[prev] + k * vocab_size)


def test_add_k_reference_passes_and_wrong_fails():
    assert check("ch02-add-k", add_k) == "ch02-add-k: all 3 checks passed"
    forgot_k_in_denominator = lambda s, p, w, k: add_k(s, p, w, 0) if k == 0 else (
        add_k(s, p, w, 0) * 0 + (Counter((a, b) for x in s for a, b in zip(x, x[1:]))[(p, w)] + k)
        / Counter(a for x in s for a in x[:-1])[p])
    with pytest.raises(AssertionError, match="k="):
        check("ch02-add-k", forgot_k_in_denominator)


def test_cosine_reference_passes_and_wrong_fails():
    cosine = lambda u, v: float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))
    assert check("ch03-cosine", cosine) == "ch03-cosine: all 3 checks passed"
    with pytest.raises(AssertionError, match="length must not matter"):
        check("ch03-cosine", lambda u, v: float(u @ v))
    with pytest.raises(ValueError, match="unknown"):
        check("ch03-sine", cosine)
