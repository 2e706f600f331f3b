"""The data-size experiment of chapter 2: its record is checked by hash, and a recorded run reproduces."""
import json

import pytest

from lmcourse import nnlm_data_size
from lmcourse.ngram import lm_vocab


def test_record_covers_every_corpus_fraction_and_seed():
    runs = nnlm_data_size.recorded_runs()
    assert {(r["corpus"], r["fraction"], r["seed"]) for r in runs} == {
        (c, f, s) for c in nnlm_data_size.CORPORA for f in nnlm_data_size.FRACTIONS for s in nnlm_data_size.SEEDS}
    for r in runs:
        assert r["unigram"] > r["kneser-ney"] > 1 and r["nnlm"] > 1
        assert 0 < r["discount"] < 1 and 0 <= r["test unk"] < 1
        assert r["vocab"] <= nnlm_data_size.SETTINGS["max_vocab"] + 4        # + <pad> <unk> <s> </s>


def test_a_recorded_run_reproduces():
    recorded = next(r for r in nnlm_data_size.recorded_runs()
                    if (r["corpus"], r["fraction"], r["seed"]) == ("news", 0.25, 2))
    rerun = nnlm_data_size.run("news", 0.25, 2)
    for key in ("articles", "train tokens", "vocab", "epochs"):
        assert rerun[key] == recorded[key], key
    for key in ("discount", "test unk"):
        assert round(rerun[key], 4) == recorded[key], key
    for key in ("unigram", "kneser-ney", "nnlm"):
        assert rerun[key] == pytest.approx(recorded[key], rel=1e-3), key


def test_an_edited_record_is_refused(tmp_path):
    record = json.loads(nnlm_data_size.RESULTS.read_text(encoding="utf-8"))
    record["runs"][0]["nnlm"] -= 1.0
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="SHA-256"):
        nnlm_data_size.recorded_runs(edited)
    record = json.loads(nnlm_data_size.RESULTS.read_text(encoding="utf-8"))
    record["settings"]["hidden_dim"] = 1
    edited.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="settings"):
        nnlm_data_size.recorded_runs(edited)


def test_bad_inputs():
    with pytest.raises(ValueError, match="corpus"):
        nnlm_data_size.run("books", 0.5, 0)
    with pytest.raises(ValueError, match="fraction"):
        nnlm_data_size.run("news", 0.0, 0)
    with pytest.raises(ValueError, match="seed"):
        nnlm_data_size.run("news", 0.5, -1)
    with pytest.raises(ValueError, match="train"):
        nnlm_data_size.kneser_ney_vs_nnlm([], [["a"]], [["a"]])


def test_lm_vocab_caps_its_size_by_frequency():
    sentences = [["a", "a", "a", "b", "b", "c", "c", "d"]]
    assert lm_vocab(sentences, min_freq=2, max_size=2).itos[4:] == ["a", "b"]
    assert lm_vocab(sentences, min_freq=2).itos[4:] == ["a", "b", "c"]
