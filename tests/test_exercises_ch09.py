"""The chapter 9 exercise check for sentence-order prediction (SOP) pairs."""
import random

import pytest

from lmcourse.exercises import check


def _sop_reference(sentences, seed):
    rng = random.Random(seed)
    out = []
    for a, b in zip(sentences, sentences[1:]):
        out.append((a, b, 1) if rng.random() < 0.5 else (b, a, 0))
    return out


def test_sop_pairs_accepts_a_right_answer():
    assert check("ch09-sop-pairs", _sop_reference).endswith("4 checks passed")


@pytest.mark.parametrize("wrong, message", [
    (lambda s, seed: [(a, b, 1) for a, b in zip(s, s[1:])], "swapped"),                  # never swaps
    (lambda s, seed: [(b, a, 1) for a, b in zip(s, s[1:])], "pair 0"),                    # swaps, wrong label
    (lambda s, seed: _sop_reference(s, random.random()), "same seed"),                    # ignores the seed
    (lambda s, seed: _sop_reference(s, seed)[:-1], "consecutive pairs"),                  # drops a pair
])
def test_sop_pairs_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch09-sop-pairs", wrong)
