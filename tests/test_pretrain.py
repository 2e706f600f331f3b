"""The course-made pretrained checkpoints: shipped intact, loadable, equal to an independent
implementation's reading of them, and made by a command that reproduces its output."""
import os
import shutil
import subprocess
import sys

import pytest
import torch

from lmcourse import pretrain
from lmcourse.pretrain import NAMES, build, checkpoint_dir, load_pretrained, manifest, sha256, write_directory

SAMPLE = "The government said the bushfires near Sydney were under control. Anarchism is a philosophy."


@pytest.mark.parametrize("name", NAMES)
def test_shipped_checkpoint_matches_its_recorded_hashes_and_loads(name):
    record = manifest()[name]
    assert record["command"] == f"python -m lmcourse.pretrain {name}"
    directory = checkpoint_dir(name)
    assert sorted(p.name for p in directory.iterdir()) == sorted(record["sha256"])
    model, tokenizer = load_pretrained(name)
    assert not model.training
    assert sum(p.numel() for p in model.parameters()) == record["stored_parameters"]  # tied ones once


def test_checkpoints_fit_the_size_budget():
    total = sum(p.stat().st_size for p in pretrain.CHECKPOINTS.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert total <= 25e6, f"checkpoints take {total / 1e6:.1f} MB, the budget is 25 MB"


def test_pretrained_gpt_equals_transformers_gpt2_on_the_same_files():
    transformers = pytest.importorskip("transformers")
    model, tokenizer = load_pretrained("gpt")
    theirs = transformers.GPT2LMHeadModel.from_pretrained(checkpoint_dir("gpt"), torch_dtype=torch.float32).eval()
    their_tokenizer = transformers.GPT2Tokenizer.from_pretrained(checkpoint_dir("gpt"))
    ids = tokenizer.encode(SAMPLE)
    assert their_tokenizer.encode(SAMPLE) == ids
    ids = torch.tensor([ids])
    with torch.no_grad():
        torch.testing.assert_close(model(ids), theirs(ids).logits, atol=1e-4, rtol=1e-4)


def test_pretrained_bert_equals_transformers_bert_on_the_same_files():
    transformers = pytest.importorskip("transformers")
    model, tokenizer = load_pretrained("bert")
    theirs = transformers.BertForPreTraining.from_pretrained(checkpoint_dir("bert"), torch_dtype=torch.float32).eval()
    their_tokenizer = transformers.BertTokenizer(str(checkpoint_dir("bert") / "vocab.txt"))
    enc = tokenizer.encode(SAMPLE, "It rained.")
    assert their_tokenizer(SAMPLE, "It rained.")["input_ids"] == enc.input_ids
    ids, segments = torch.tensor([enc.input_ids]), torch.tensor([enc.token_type_ids])
    with torch.no_grad():
        mlm, nsp = model(ids, segments)
        out = theirs(input_ids=ids, token_type_ids=segments)
    torch.testing.assert_close(mlm, out.prediction_logits, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(nsp, out.seq_relationship_logits, atol=1e-4, rtol=1e-4)


def test_pretrained_models_beat_their_baselines():
    """The held-out measurements recorded at build time beat the trivial predictors measured beside
    them: the unigram model for the language models, unigram and always guessing the most frequent
    piece for BERT's masked LM (scored at [MASK]ed positions only, so no answer is visible), and the
    all-'original' answer and chance (AUC 0.5) for ELECTRA's detector."""
    gpt, bert, elmo, electra = (manifest()[name]["measured"] for name in NAMES)
    assert gpt["valid_loss"] < gpt["valid_unigram_loss"] - 0.5
    assert elmo["valid_loss"] < elmo["valid_unigram_loss"] - 0.2
    assert bert["valid_mlm_accuracy"] > 2 * bert["valid_mlm_most_frequent_accuracy"]
    assert bert["valid_mlm_loss"] < bert["valid_mlm_unigram_loss"] - 0.5
    assert bert["valid_mlm_distinct_predictions"] > 50         # not the same few pieces at every [MASK]
    assert electra["valid_AUC"] > 0.7


def test_recorded_gpt_loss_is_that_of_the_shipped_weights():
    """Re-measured from the float16 files, the validation loss is the recorded one (to fp16 rounding)."""
    from lmcourse.bpe import END_OF_TEXT
    from lmcourse.data import lm_batches
    from lmcourse.gpt import lm_loss
    from lmcourse.train import evaluate_loss
    model, tokenizer = load_pretrained("gpt")
    eot = tokenizer.special_id(END_OF_TEXT)
    ids = torch.tensor([i for d in pretrain.pretraining_text("valid") for i in tokenizer.encode(d) + [eot]])
    with torch.no_grad():
        loss = evaluate_loss(model, lm_loss, lm_batches(ids, 8, model.config.context_size))
    assert loss == pytest.approx(manifest()["gpt"]["measured"]["valid_loss"], abs=0.01)


def test_a_changed_file_is_refused(tmp_path):
    copy = tmp_path / "elmo"
    shutil.copytree(checkpoint_dir("elmo"), copy)
    data = bytearray((copy / "model.safetensors").read_bytes())
    data[-1] ^= 1
    (copy / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="model.safetensors does not match its recorded SHA-256"):
        load_pretrained("elmo", copy)
    shutil.copy(checkpoint_dir("elmo") / "model.safetensors", copy)
    (copy / "vocab.txt").unlink()
    with pytest.raises(ValueError, match="vocab.txt is missing"):
        load_pretrained("elmo", copy)
    with pytest.raises(ValueError, match="name must be one of"):
        load_pretrained("gpt3")


def test_write_directory_replaces_whole_or_not_at_all(tmp_path):
    target = tmp_path / "ckpt"
    write_directory(target, {"a.txt": b"old"})
    with pytest.raises(TypeError):
        write_directory(target, {"a.txt": b"new", "b.txt": None})   # fails half-way
    assert [p.name for p in target.iterdir()] == ["a.txt"] and (target / "a.txt").read_bytes() == b"old"
    write_directory(target, {"b.txt": b"new"})
    assert [p.name for p in target.iterdir()] == ["b.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]      # nothing left beside it


def test_smoke_build_is_deterministic_and_loads(tmp_path):
    """The command's smoke version (CI runs it) writes loadable checkpoints, the same bytes every time."""
    env = {**os.environ, "LMCOURSE_PROGRESS": "0"}
    run = subprocess.run([sys.executable, "-m", "lmcourse.pretrain", "--smoke", "--out", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    for name in NAMES:
        model, tokenizer = load_pretrained(name, tmp_path / name, check_hashes=False)
        assert len(tokenizer) > 0
    files, entry = build("elmo", smoke=True)          # again, in this process
    assert entry["sha256"] == {f: sha256((tmp_path / "elmo" / f).read_bytes()) for f in files}


def test_smoke_needs_an_output_folder():
    run = subprocess.run([sys.executable, "-m", "lmcourse.pretrain", "--smoke"], capture_output=True, text=True)
    assert run.returncode == 2 and "--smoke needs --out" in run.stderr


@pytest.mark.skipif(os.environ.get("LMCOURSE_REBUILD_CHECKPOINTS") != "1",
                    reason="takes about 40 minutes: run `make pretrain-check` (or set LMCOURSE_REBUILD_CHECKPOINTS=1)")
@pytest.mark.parametrize("name", NAMES)
def test_full_rebuild_reproduces_the_shipped_bytes(name):
    _, entry = build(name)
    assert entry["sha256"] == manifest()[name]["sha256"]
