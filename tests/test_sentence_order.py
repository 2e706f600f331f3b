import numpy as np
import pytest

from lmcourse.sentence_order import nsp_pairs, sop_pairs, split_sentences, word_overlap

DOCS = [split_sentences("a b . c d . e f .".split()), split_sentences("x y . z w .".split())]


def test_split_sentences_keeps_every_token():
    assert split_sentences("a b . c".split()) == [["a", "b", "."], ["c"]]


def test_sop_pairs_are_consecutive_sentences_in_or_out_of_order():
    pairs = sop_pairs(DOCS, np.random.default_rng(0))
    assert len(pairs) == 3
    consecutive = {(tuple(a), tuple(b)) for d in DOCS for a, b in zip(d, d[1:])}
    for a, b, label in pairs:
        assert ((tuple(a), tuple(b)) if label else (tuple(b), tuple(a))) in consecutive


def test_nsp_negatives_come_from_another_document():
    for seed in range(10):
        for a, b, label in nsp_pairs(DOCS, np.random.default_rng(seed)):
            home = next(d for d in DOCS if a in d)
            assert (b in home) == bool(label)


def test_overlap_and_validation():
    assert word_overlap(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="documents"):
        sop_pairs([[["a"]]])
    with pytest.raises(ValueError, match="two documents"):
        nsp_pairs(DOCS[:1])
    with pytest.raises(TypeError, match="documents"):
        sop_pairs("text")
