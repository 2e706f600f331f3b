"""Chapter 4's long character-LSTM runs: the record and the weights are checked by hash, and a run reproduces."""
import json
import shutil

import pytest

from lmcourse import long_char_lm


def test_record_covers_every_seed_and_pass():
    runs = long_char_lm.recorded_runs()
    passes = long_char_lm.SETTINGS["passes"]
    assert [r["seed"] for r in runs] == list(long_char_lm.SEEDS)
    for r in runs:
        assert len(r["valid bits"]) == len(r["train bits"]) == passes
        assert len(r["samples"]) == passes + 1
        assert all(s.startswith(long_char_lm.SETTINGS["prompt"]) for s in r["samples"])
        assert r["valid bits"][r["best pass"] - 1] == min(r["valid bits"])


def test_the_shipped_weights_give_the_recorded_best_loss():
    vocab, _, valid_ids = long_char_lm.news_characters()
    model = long_char_lm.load_best_model()
    recorded = long_char_lm.recorded_runs()[0]
    assert long_char_lm.valid_bits(model, valid_ids) == pytest.approx(min(recorded["valid bits"]), abs=1e-3)
    assert long_char_lm.sample(model, vocab) == recorded["samples"][recorded["best pass"]]


def test_the_first_passes_of_a_recorded_run_reproduce():
    recorded = long_char_lm.recorded_runs()[1]
    rerun, _ = long_char_lm.run(1, passes=2)
    assert rerun["valid bits"] == pytest.approx(recorded["valid bits"][:2], abs=1e-3)
    assert rerun["train bits"] == pytest.approx(recorded["train bits"][:2], abs=1e-3)
    assert rerun["samples"][0] == recorded["samples"][0]


def test_an_edited_record_or_weights_file_is_refused(tmp_path):
    record = json.loads(long_char_lm.RESULTS.read_text(encoding="utf-8"))
    record["runs"][0]["valid bits"][0] -= 1.0
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="SHA-256"):
        long_char_lm.recorded_runs(edited)
    record = json.loads(long_char_lm.RESULTS.read_text(encoding="utf-8"))
    record["settings"]["hidden_size"] = 1
    edited.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="settings"):
        long_char_lm.recorded_runs(edited)
    copy = tmp_path / "copy.json"
    shutil.copy(long_char_lm.RESULTS, copy)
    weights = long_char_lm.RESULTS.with_suffix(".safetensors").read_bytes()
    copy.with_suffix(".safetensors").write_bytes(weights[:-1] + bytes([weights[-1] ^ 1]))
    with pytest.raises(ValueError, match="SHA-256"):
        long_char_lm.load_best_model(copy)


def test_bad_inputs():
    with pytest.raises(ValueError, match="seed"):
        long_char_lm.run(-1)
    with pytest.raises(ValueError, match="passes"):
        long_char_lm.run(0, passes=0)
