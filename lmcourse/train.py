"""One training loop for every chapter, and safe checkpoints.

``fit`` is deliberately small: seed, loop over batches, step, record. Everything chapter-specific
lives in the ``loss_fn(model, batch)`` the caller passes, so the same loop trains a CNN, an LSTM
and a Transformer.
"""
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import load_model, save_model
from torch.nn.parallel import DistributedDataParallel

from lmcourse import distributed
from lmcourse.seed import DEFAULT_DEVICE, DEFAULT_NUM_THREADS, set_seed
from lmcourse.validate import check_float, check_int, check_state_fits, check_type, runs_digest, safetensors_shapes

#: set LMCOURSE_PROGRESS=0 to silence progress bars (the tests and the notebook refresh do)
PROGRESS_ENV = "LMCOURSE_PROGRESS"


@dataclass
class History:
    """What ``fit`` measured: the loss of every step (the mean over processes when there are several),
    and each evaluation as ``(step, value)`` (recorded on rank 0 only)."""
    train_loss: list[float] = field(default_factory=list)
    evals: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.train_loss)

    def last(self, name: str) -> float:
        """The most recent value of an evaluated metric (or ``'train_loss'``)."""
        if name == "train_loss":
            return self.train_loss[-1]
        if name not in self.evals:
            raise KeyError(f"no metric {name!r}; recorded: {sorted(self.evals)}")
        return self.evals[name][-1][1]


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether to draw a progress bar: explicitly, or in an IPython kernel unless silenced."""
    if progress is not None:
        return progress
    if os.environ.get(PROGRESS_ENV, "1") == "0":
        return False
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    return type(shell).__name__ == "ZMQInteractiveShell"  # a Jupyter kernel


def to_device(batch, device):
    """Move every tensor in a (nested) tuple, list or dict to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def fit(model: torch.nn.Module,
        loss_fn: Callable[[torch.nn.Module, object], torch.Tensor],
        batches: Iterable | Callable[[int], Iterable],
        *,
        num_epochs: int = 1,
        lr: float = 1e-3,
        optimizer: torch.optim.Optimizer | None = None,
        lr_schedule: Callable[[int], float] | None = None,
        clip_grad_norm: float | None = None,
        eval_fn: Callable[[torch.nn.Module], dict[str, float]] | None = None,
        eval_every: int | None = None,
        max_steps: int | None = None,
        seed: int | None = 0,
        num_threads: int | None = DEFAULT_NUM_THREADS,
        device: str | torch.device = DEFAULT_DEVICE,
        checkpoint: str | Path | None = None,
        progress: bool | None = None,
        desc: str = "train") -> History:
    """Train ``model`` by minimising ``loss_fn(model, batch)`` and return the :class:`History`.

    batches: a re-iterable (list, DataLoader) of batches, or a function ``epoch -> iterable``
        for data that changes every epoch. Tensors inside a batch are moved to ``device``.
    optimizer: defaults to AdamW(lr, weight_decay=0) over the trainable parameters.
    lr_schedule: ``step -> multiplier`` of the learning rate (e.g. a warm-up).
    eval_fn: ``model -> {name: value}``, run in eval mode without gradients every ``eval_every``
        steps and after the last one; the values are recorded in ``history.evals``.
    checkpoint: if given, the weights are saved there (atomically) after every epoch.
    seed, num_threads: passed to :func:`lmcourse.set_seed` first (``seed=None`` skips seeding);
        tiny models often run faster on one thread.

    Launched by ``torchrun`` on several processes, the same call trains data-parallel
    (:mod:`lmcourse.distributed`): ``loss_fn`` receives the model wrapped in
    ``DistributedDataParallel`` (so it must call the model, not its other methods) and each rank's
    slice of every batch; rank 0 alone draws progress, evaluates and saves the checkpoint.
    """
    check_type(model, "model", torch.nn.Module)
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    if not callable(batches):
        if iter(batches) is batches:
            raise TypeError("batches must be re-iterable (a list or DataLoader) or a function "
                            "epoch -> iterable, not a one-shot iterator")
    check_int(num_epochs, "num_epochs", minimum=1)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    if clip_grad_norm is not None:
        check_float(clip_grad_norm, "clip_grad_norm", minimum=0.0, strict_minimum=True)
    if eval_every is not None:
        check_int(eval_every, "eval_every", minimum=1)
    if max_steps is not None:
        check_int(max_steps, "max_steps", minimum=1)
    if seed is not None:
        set_seed(seed, num_threads=num_threads)
    device = distributed.setup(device)
    rank, world_size = distributed.world()
    model.to(device)
    trained = model
    if world_size > 1:
        trained = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    if optimizer is None:
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise ValueError("model has no trainable parameters")
        optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_schedule) if lr_schedule else None

    history = History()

    def evaluate():
        if eval_fn is None or rank != 0:
            return
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for name, value in eval_fn(model).items():
                history.evals.setdefault(name, []).append((history.steps, float(value)))
        model.train(was_training)

    total = None
    if not callable(batches) and hasattr(batches, "__len__"):
        total = len(batches) * num_epochs
    if max_steps is not None:
        total = min(total, max_steps) if total else max_steps
    bar = None
    if rank == 0 and progress_enabled(progress):
        from tqdm.auto import tqdm
        bar = tqdm(total=total, desc=desc)

    model.train()
    done = False
    for epoch in range(num_epochs):
        for batch in (batches(epoch) if callable(batches) else batches):
            if world_size > 1:
                batch = distributed.shard(batch, rank, world_size)
            loss = loss_fn(trained, to_device(batch, device))
            recorded = distributed.mean_over_ranks(loss.detach())
            if not torch.isfinite(recorded):
                raise FloatingPointError(f"loss became {recorded.item()} at step {history.steps}")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            history.train_loss.append(recorded.item())
            if bar is not None:
                bar.update(1)
                if history.steps % 10 == 0:
                    bar.set_postfix(loss=f"{history.train_loss[-1]:.3f}")
            if eval_every is not None and history.steps % eval_every == 0:
                evaluate()
            if max_steps is not None and history.steps >= max_steps:
                done = True
                break
        if checkpoint is not None:
            if rank == 0:
                save_checkpoint(model, checkpoint)
            if world_size > 1:
                torch.distributed.barrier()
        if done:
            break
    if bar is not None:
        bar.close()
    if history.steps == 0:
        raise ValueError("batches yielded no batch")
    if eval_fn is not None and (eval_every is None or history.steps % eval_every != 0):
        evaluate()
    return history


@contextmanager
def _replaced_atomically(path: Path) -> Iterator[str]:
    """Yield a temporary file name beside ``path``; once the caller has written it, sync it to disk and
    rename it over ``path``. On any error the temporary file is removed and ``path`` is untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_atomically(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` under a temporary name beside it, flushed to disk, then renamed over
    it: a reader sees the old file or the whole new one, never a part."""
    check_type(data, "data", bytes)
    path = Path(path)
    with _replaced_atomically(path) as tmp:
        Path(tmp).write_bytes(data)
    return path


def runs_by(runs: list[dict], field: str, names, key: str) -> dict[str, torch.Tensor]:
    """name -> (seeds,) float64: the ``key`` of the runs whose ``field`` is ``name``, in seed order, for each
    of ``names`` (a record's runs as :func:`save_record` stores them); ``ValueError`` if a name has no run."""
    check_type(runs, "runs", list)
    out = {}
    for name in names:
        chosen = sorted((r for r in runs if r[field] == name), key=lambda r: r["seed"])
        if not chosen:
            raise ValueError(f"runs holds no run of {name!r}")
        out[name] = torch.tensor([r[key] for r in chosen], dtype=torch.float64)
    return out


def save_record(path: str | Path, command: str, settings: dict, runs: list, **extra) -> Path:
    """Write a record of computed-once results, atomically: the command that made it, its settings, the
    runs, their SHA-256 (:func:`lmcourse.validate.runs_digest`) and ``extra`` fields; read it back with
    :func:`lmcourse.validate.load_record`."""
    record = {"command": command, "settings": settings, "runs": runs, "sha256": runs_digest(runs), **extra}
    return write_atomically(path, (json.dumps(record, indent=1) + "\n").encode("utf-8"))


def save_checkpoint(model: torch.nn.Module, path: str | Path) -> Path:
    """Save the model's weights as safetensors, atomically.

    The file is written beside ``path`` under a temporary name and renamed over it only once
    complete, so a crash mid-save leaves any earlier checkpoint intact. Tied weights are stored once.
    """
    check_type(model, "model", torch.nn.Module)
    path = Path(path)
    with _replaced_atomically(path) as tmp:
        save_model(model, tmp)
    return path


def load_checkpoint(model: torch.nn.Module, path: str | Path) -> torch.nn.Module:
    """Load weights saved by :func:`save_checkpoint` into ``model``, checking names and shapes.

    Raises ``FileNotFoundError`` if there is no file, and ``ValueError`` naming ``path`` if it is
    not a safetensors file (empty, truncated, corrupt, another format) or does not fit the model
    (every misshapen, missing or unexpected tensor listed), before any weight is changed.
    """
    check_type(model, "model", torch.nn.Module)
    path = Path(path)
    stored = safetensors_shapes(path)
    # tied weights are saved once; a missing name is fine if it shares storage with a stored one
    shared = _tied_names(model)
    tied = {k for k in model.state_dict() if shared.get(k, set()) & stored.keys()}
    check_state_fits(model.state_dict(), stored, f"checkpoint {path}", type(model).__name__, optional=tied)
    load_model(model, str(path), strict=True)
    return model


def _tied_names(model: torch.nn.Module) -> dict[str, set[str]]:
    """name -> other state-dict names sharing its storage."""
    by_ptr: dict[int, set[str]] = {}
    for name, tensor in model.state_dict().items():
        by_ptr.setdefault(tensor.untyped_storage().data_ptr(), set()).add(name)
    return {n: names - {n} for names in by_ptr.values() for n in names}


def evaluate_loss(model: torch.nn.Module, loss_fn: Callable[[torch.nn.Module, object], torch.Tensor],
                  batches: Iterable, device: str | torch.device = DEFAULT_DEVICE) -> float:
    """Mean of ``loss_fn(model, batch)`` over ``batches``, in eval mode and without gradients."""
    check_type(model, "model", torch.nn.Module)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        losses = [loss_fn(model, to_device(b, device)).item() for b in batches]
    model.train(was_training)
    if not losses:
        raise ValueError("batches must not be empty")
    return sum(losses) / len(losses)


def perplexity(mean_nll: float) -> float:
    """exp of a mean negative log-likelihood in nats."""
    check_float(mean_nll, "mean_nll", minimum=0.0)
    return math.exp(mean_nll)
