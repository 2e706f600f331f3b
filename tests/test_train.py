"""The training loop and checkpoints."""
import os

import pytest
import torch
from torch import nn

from lmcourse.seed import DEFAULT_NUM_THREADS
from lmcourse.train import (
    History,
    evaluate_loss,
    fit,
    load_checkpoint,
    perplexity,
    progress_enabled,
    save_checkpoint,
    write_atomically,
)


def regression_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
    return [(x[i:i + 16], y[i:i + 16]) for i in range(0, 64, 16)]


def mse(model, batch):
    x, y = batch
    return nn.functional.mse_loss(model(x), y)


def test_fit_learns_and_records_history():
    batches = regression_data()
    model = nn.Linear(3, 1)
    history = fit(model, mse, batches, num_epochs=30, lr=0.05,
                  eval_fn=lambda m: {"valid_loss": evaluate_loss(m, mse, batches)}, eval_every=40)
    assert history.steps == 120 and len(history.train_loss) == 120
    assert [s for s, _ in history.evals["valid_loss"]] == [40, 80, 120]
    assert history.last("valid_loss") < 1e-3 < history.train_loss[0]
    assert history.last("train_loss") == history.train_loss[-1]
    with pytest.raises(KeyError, match="no metric"):
        history.last("accuracy")


def test_fit_is_deterministic_given_seed():
    def run():
        torch.manual_seed(123)  # a different init each call unless fit reseeds
        model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
        return fit(model, mse, lambda epoch: regression_data(), num_epochs=2, seed=7).train_loss
    # seeding inside fit happens after construction, so compare two runs built alike
    assert run() == run()


def test_fit_epoch_function_max_steps_schedule_and_clipping():
    seen = []

    def batches(epoch):
        seen.append(epoch)
        return regression_data()

    model = nn.Linear(3, 1)
    history = fit(model, mse, batches, num_epochs=5, max_steps=6, clip_grad_norm=0.1,
                  lr_schedule=lambda step: min(1.0, (step + 1) / 3))
    assert history.steps == 6 and seen == [0, 1]


def test_fit_sets_the_thread_count():
    fit(nn.Linear(3, 1), mse, regression_data(), num_threads=2)
    assert torch.get_num_threads() == 2
    fit(nn.Linear(3, 1), mse, regression_data())
    assert torch.get_num_threads() == DEFAULT_NUM_THREADS == 1


def test_fit_leaves_frozen_parameters_alone():
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    model[0].requires_grad_(False)
    before = model[0].weight.clone()
    fit(model, mse, regression_data(), num_epochs=2)
    assert torch.equal(before, model[0].weight)


def test_fit_bad_inputs():
    model = nn.Linear(3, 1)
    data = regression_data()
    with pytest.raises(TypeError, match="model must be Module"):
        fit("model", mse, data)
    with pytest.raises(TypeError, match="loss_fn must be callable"):
        fit(model, None, data)
    with pytest.raises(TypeError, match="re-iterable"):
        fit(model, mse, iter(data))
    with pytest.raises(ValueError, match="num_epochs must be >= 1"):
        fit(model, mse, data, num_epochs=0)
    with pytest.raises(ValueError, match="lr must be > 0"):
        fit(model, mse, data, lr=0.0)
    with pytest.raises(ValueError, match="yielded no batch"):
        fit(model, mse, [])
    frozen = nn.Linear(3, 1).requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        fit(frozen, mse, data)
    with pytest.raises(FloatingPointError, match="loss became"):
        fit(model, lambda m, b: m(b[0]).sum() * float("nan"), data)


def test_progress_is_silenced_by_environment(monkeypatch):
    monkeypatch.setenv("LMCOURSE_PROGRESS", "0")
    assert not progress_enabled()
    assert progress_enabled(True)
    monkeypatch.setenv("LMCOURSE_PROGRESS", "1")
    assert not progress_enabled()  # not inside a Jupyter kernel


class Tied(nn.Module):
    def __init__(self, vocab=5, dim=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.emb.weight


def test_checkpoint_roundtrip_with_tied_weights(tmp_path):
    model = Tied()
    path = save_checkpoint(model, tmp_path / "sub" / "model.safetensors")
    other = Tied()
    load_checkpoint(other, path)
    assert torch.equal(other.emb.weight, model.emb.weight)
    assert other.out.weight is other.emb.weight
    assert [p.name for p in tmp_path.joinpath("sub").iterdir()] == ["model.safetensors"]


def test_checkpoint_shape_mismatch_is_reported_and_changes_nothing(tmp_path):
    path = save_checkpoint(nn.Linear(3, 2), tmp_path / "m.safetensors")
    target = nn.Linear(4, 2)
    before = target.weight.clone()
    with pytest.raises(ValueError, match=r"weight: checkpoint \(2, 3\) vs model \(2, 4\)"):
        load_checkpoint(target, path)
    assert torch.equal(before, target.weight)
    with pytest.raises(ValueError, match="in the checkpoint but not in the model"):
        load_checkpoint(nn.Linear(3, 2, bias=False), path)
    with pytest.raises(FileNotFoundError):
        load_checkpoint(target, tmp_path / "missing.safetensors")


def test_failed_save_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    path = save_checkpoint(nn.Linear(3, 2), tmp_path / "m.safetensors")
    old = path.read_bytes()

    def crash(model, filename):
        with open(filename, "wb") as f:
            f.write(b"partial")
        raise KeyboardInterrupt("crash mid-save")

    monkeypatch.setattr("lmcourse.train.save_model", crash)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(nn.Linear(3, 2), path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["m.safetensors"]  # no temporary file left behind


def test_fit_saves_checkpoint(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    fit(nn.Linear(3, 1), mse, regression_data(), checkpoint=path)
    load_checkpoint(nn.Linear(3, 1), path)


def test_perplexity():
    assert perplexity(0.0) == 1.0
    assert abs(perplexity(2.0) - 7.389056) < 1e-6
    with pytest.raises(ValueError, match="mean_nll"):
        perplexity(-1.0)


def test_history_defaults():
    assert History().steps == 0


def test_an_interrupted_atomic_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = write_atomically(tmp_path / "sub" / "f.json", b"old")
    assert path.read_bytes() == b"old"

    def crash(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr("lmcourse.train.os.replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, b"new")
    assert path.read_bytes() == b"old" and [p.name for p in path.parent.iterdir()] == ["f.json"]
    with pytest.raises(TypeError, match="data"):
        write_atomically(path, "text")
