import numpy as np
import pytest

from lmcourse.bart_noise import (
    MASK,
    NOISES,
    document_rotation,
    sentence_permutation,
    text_infilling,
    token_deletion,
    token_masking,
)

DOC = "the cat sat on the mat . a dog barked at it . then both slept all day .".split()


def test_token_masking_keeps_length_and_only_masks():
    out = token_masking(DOC, 0.5, np.random.default_rng(0))
    assert len(out) == len(DOC) and MASK in out
    assert all(o == t or o == MASK for o, t in zip(out, DOC))


def test_token_deletion_leaves_a_subsequence():
    out = token_deletion(DOC, 0.3, np.random.default_rng(1))
    assert len(out) < len(DOC)
    it = iter(DOC)
    assert all(t in it for t in out)          # order kept, nothing added


def test_text_infilling_one_mask_per_span_and_about_p_covered():
    for seed in range(20):
        out = text_infilling(DOC, 0.3, 3.0, np.random.default_rng(seed))
        kept = [t for t in out if t != MASK]
        it = iter(DOC)
        assert all(t in it for t in kept)
        assert out.count(MASK) >= 1                              # at least one span
        assert len(DOC) - len(kept) <= round(0.3 * len(DOC))       # never more than the budget


def test_sentence_permutation_and_rotation_are_rearrangements():
    perm = sentence_permutation(DOC, np.random.default_rng(3))
    assert sorted(perm) == sorted(DOC)
    sentences = {" ".join(DOC[i:j]) for i, j in ((0, 7), (7, 13), (13, len(DOC)))}
    assert sentences <= {" ".join(perm[i:j]) for i in range(len(perm)) for j in range(i, len(perm) + 1)}
    rot = document_rotation(DOC, np.random.default_rng(4))
    assert any(rot == DOC[k:] + DOC[:k] for k in range(len(DOC)))


def test_every_noise_validates_its_input():
    for fn in NOISES.values():
        with pytest.raises((TypeError, ValueError)):
            fn("not a list")
        with pytest.raises(ValueError):
            fn([])
    with pytest.raises(ValueError, match="p"):
        token_masking(DOC, 1.5)
