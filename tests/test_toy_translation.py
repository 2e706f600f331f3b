"""The date translation task: formats, disjoint splits, encoding, batching, scoring."""
import datetime

import pytest
import torch

from lmcourse.toy_translation import (
    BOS,
    EOS,
    FORMATS,
    batches,
    date_pairs,
    date_vocabs,
    encode_pairs,
    exact_match,
    format_date,
    strip,
)


def test_formats():
    d = datetime.date(1987, 11, 5)
    target = list("1987") + ["-"] + list("11") + ["-"] + list("05")
    assert format_date(d, "day month year") == (["5", "november", "1", "9", "8", "7"], target)
    assert format_date(d, "month day , year")[0] == ["november", "5", ",", "1", "9", "8", "7"]
    assert format_date(d, "day mon year")[0] == ["5", "nov", "1", "9", "8", "7"]


def test_splits_are_disjoint_and_deterministic():
    train, test = date_pairs(2000, 300, seed=3)
    assert len(train) == 2000 and len(test) == 300
    assert {tuple(t) for _, t in train}.isdisjoint({tuple(t) for _, t in test})
    assert date_pairs(2000, 300, seed=3) == (train, test)
    assert {len(s) for s, _ in train} <= {5, 6, 7, 8}


def test_encode_and_strip_round_trip():
    sv, tv = date_vocabs()
    pairs = [format_date(datetime.date(2001, 2, 3), style) for style in FORMATS]
    src, tgt = encode_pairs(pairs, sv, tv)
    assert src.shape == (3, 7) and tgt.shape == (3, 12)
    assert (tgt[:, 0] == tv[BOS]).all() and (tgt[:, -1] == tv[EOS]).all()
    assert src[1].tolist().count(0) == 0 and src[0].tolist().count(0) == 1   # padding
    assert strip(tgt[0], tv) == pairs[0][1]
    assert sv.unk_id not in src.flatten().tolist()
    assert exact_match([strip(t, tv) for t in tgt], [p[1] for p in pairs]) == 1.0


def test_batches_reshuffle_every_epoch_and_cover_all():
    src, tgt = torch.arange(10)[:, None], torch.arange(10)[:, None]
    make = batches(src, tgt, 4)
    e0, e1 = make(0), make(1)
    assert [b[0].size(0) for b in e0] == [4, 4, 2]
    assert sorted(torch.cat([b[0] for b in e0]).flatten().tolist()) == list(range(10))
    assert not torch.equal(torch.cat([b[0] for b in e0]), torch.cat([b[0] for b in e1]))
    assert all(torch.equal(a, b) for a, b in e0)                           # pairs stay aligned


def test_bad_inputs():
    with pytest.raises(ValueError, match="style"):
        format_date(datetime.date(2000, 1, 1), "iso")
    with pytest.raises(ValueError, match="distinct dates"):
        date_pairs(70000, 5000)
    with pytest.raises(ValueError, match="same length"):
        exact_match([["1"]], [["1"], ["2"]])
    with pytest.raises(ValueError, match="same number of rows"):
        batches(torch.zeros(3, 1), torch.zeros(4, 1), 2)
