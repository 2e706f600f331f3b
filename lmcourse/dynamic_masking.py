"""Static versus dynamic masking (RoBERTa, Liu et al. 2019).

BERT's data pipeline drew the masks once, while writing the training files: with its default
``dupe_factor=10`` each sequence got 10 different masks, reused over about 40 epochs (correction 20).
RoBERTa draws a fresh mask every time a sequence is fed to the model. This module produces the
masks each scheme shows over the epochs, using :func:`lmcourse.masking.mask_tokens`, and trains a
small masked LM (:class:`TinyMLM`) on them to compare the schemes.

The comparison (:func:`run`, :data:`SETTINGS`): the same TinyMLM, with the same initial weights per
seed, trains on all 1,615 sequences of 32 words of the news corpus's training articles under each scheme for up to
40 epochs (BERT's count), always corrupted 80/10/10 as BERT was. After every epoch it is scored on
validation text with fixed masks (also drawn 80/10/10), at the positions that hold [MASK] only
(:func:`masked_loss`): where the answer stays visible (the 10% kept) a model that copies its input
scores well without reading any context (:func:`copy_lines`). It stops when that validation loss
has not fallen for ``patience`` epochs (after at least the equal budget of ``budget_epochs``); the
best epoch's weights are then scored once, the same way, on the test articles. A unigram model fitted
on the same sequences, scored at the same [MASK] positions (:func:`unigram_lines`), is the level
a model must beat to have learned anything from the context. Fifteen runs take about half an hour of two cores, so
they are computed once::

    python -m lmcourse.dynamic_masking    # writes lmcourse/checkpoints/dynamic_masking.json

under the reference settings (numerics.env); :func:`recorded_runs` reads the file after checking its
settings and SHA-256, and :func:`plot_masking_runs` draws it.
"""
import argparse
import copy
import math
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.cli import output_file
from lmcourse.context_probe import mean_se
from lmcourse.data import news_word_streams, random_windows
from lmcourse.electra import TinyEncoder
from lmcourse.masking import IGNORE_INDEX, MaskedBatch, mask_tokens
from lmcourse.mlm_eval import unigram_loss
from lmcourse.parallel import parallel_map
from lmcourse.positional import sinusoidal_encoding
from lmcourse.seed import DEFAULT_DEVICE, set_seed
from lmcourse.train import fit, runs_by, save_record
from lmcourse.validate import check_float, check_int, check_type, load_record


def masked_epochs(input_ids: torch.Tensor, num_epochs: int, num_copies: int | None,
                  mask_id: int, vocab_size: int, special_ids: tuple[int, ...] = (),
                  mask_prob: float = 0.15, generator: torch.Generator | None = None) -> list[MaskedBatch]:
    """The masked copy of ``input_ids`` (batch, time) that each of ``num_epochs`` epochs shows.

    ``num_copies=k`` is static masking with k pre-drawn masks used in turn (BERT: k = 10);
    ``num_copies=None`` is dynamic masking, a new mask every epoch (RoBERTa).
    """
    check_type(input_ids, "input_ids", torch.Tensor)
    check_int(num_epochs, "num_epochs", minimum=1)
    if num_copies is not None:
        check_int(num_copies, "num_copies", minimum=1)
    draws = num_epochs if num_copies is None else min(num_copies, num_epochs)
    drawn = [mask_tokens(input_ids, mask_id, vocab_size, special_ids, mask_prob, generator=generator)
             for _ in range(draws)]
    return [drawn[epoch % draws] for epoch in range(num_epochs)]


def masks_per_epoch(input_ids: torch.Tensor, num_epochs: int, num_copies: int | None,
                    mask_id: int, vocab_size: int, special_ids: tuple[int, ...] = (),
                    mask_prob: float = 0.15, generator: torch.Generator | None = None) -> torch.Tensor:
    """(num_epochs, *input_ids.shape) bool: the positions chosen for prediction in each epoch.

    ``num_copies=k`` is static masking with k pre-drawn masks used in turn (BERT: k = 10);
    ``num_copies=None`` is dynamic masking, a new mask every epoch (RoBERTa).
    """
    epochs = masked_epochs(input_ids, num_epochs, num_copies, mask_id, vocab_size, special_ids,
                           mask_prob, generator)
    return torch.stack([m.chosen for m in epochs])


def coverage(chosen: torch.Tensor) -> torch.Tensor:
    """(num_epochs,) fraction of positions chosen at least once in the first 1, 2, ... epochs.

    chosen: (num_epochs, ...) bool from :func:`masks_per_epoch`. With selection probability p and
    k independent masks the expectation is 1 - (1 - p)^k.
    """
    check_type(chosen, "chosen", torch.Tensor)
    if chosen.dtype != torch.bool or chosen.dim() < 2:
        raise ValueError(f"chosen must be a bool tensor (num_epochs, ...), got {chosen.dtype} {tuple(chosen.shape)}")
    seen = chosen.flatten(1).cummax(dim=0).values      # (E, N): chosen in any epoch so far
    return seen.float().mean(dim=1)


def distinct_masks(chosen: torch.Tensor) -> int:
    """How many different masks a single sequence saw: chosen is (num_epochs, time) bool."""
    check_type(chosen, "chosen", torch.Tensor)
    if chosen.dtype != torch.bool or chosen.dim() != 2:
        raise ValueError(f"chosen must be a bool tensor (num_epochs, time), got {chosen.dtype} {tuple(chosen.shape)}")
    return len({tuple(row.tolist()) for row in chosen})


def mlm_batches(stream, num_batches: int, batch_size: int, seq_len: int, mask_id: int, vocab_size: int,
                special_ids: tuple[int, ...] = (), mask_prob: float = 0.15,
                generator: torch.Generator | None = None) -> list[MaskedBatch]:
    """``num_batches`` random windows (batch_size, seq_len) of ``stream``, each freshly masked:
    dynamic masking, the masked-LM counterpart of :func:`lmcourse.electra.rtd_batches`."""
    check_int(num_batches, "num_batches", minimum=1)
    return [mask_tokens(random_windows(stream, batch_size, seq_len, generator)[0], mask_id, vocab_size,
                        special_ids, mask_prob, generator=generator)
            for _ in range(num_batches)]


class TinyMLM(TinyEncoder):
    """A small masked language model: a :class:`~lmcourse.electra.TinyEncoder` and a linear layer
    to the vocabulary. forward(ids (B, T)) -> logits (B, T, vocab_size).

    ``position_scale > 0`` starts the learned position table as that many times the sinusoids
    (:func:`lmcourse.positional.sinusoidal_encoding`) instead of random, as chapter 9's BERT does:
    with a random table a small masked LM sits at the unigram line for long (chapter 9)."""

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int | None = None, max_len: int = 128, position_scale: float = 0.0,
                 device: str | torch.device = DEFAULT_DEVICE):
        super().__init__(vocab_size, d_model, num_heads, num_layers, d_ff, max_len)
        check_float(position_scale, "position_scale", minimum=0.0)
        self.head = nn.Linear(d_model, vocab_size)
        if position_scale:       # start the learned position table as sinusoids: neighbours start alike
            with torch.no_grad():
                self.pos.weight.copy_(position_scale * sinusoidal_encoding(max_len, d_model))
        self.to(device)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encode(ids))               # (B, T, C) -> (B, T, V)


def mlm_loss(model: "TinyMLM", batch: MaskedBatch) -> torch.Tensor:
    """Mean cross-entropy (nats) over the positions chosen for prediction (labels != -100).

    Only those positions go through the output layer (about 15% of them: the costly part)."""
    check_type(model, "model", TinyMLM)
    check_type(batch, "batch", MaskedBatch)
    chosen = batch.labels != IGNORE_INDEX                                    # (B, T)
    logits = model.head(model.encode(batch.input_ids)[chosen])               # (N, C) -> (N, V)
    return F.cross_entropy(logits, batch.labels[chosen])


#: scheme -> number of static masks (None: a new mask every epoch)
SCHEMES = {"static, 1 mask": 1, "static, 10 masks (BERT)": 10, "dynamic (RoBERTa)": None}
SETTINGS = {"sequences": 1615, "seq_len": 32, "batch_size": 32, "eval_sequences": 160, "eval_masks": 2,
            "d_model": 32, "num_heads": 2, "num_layers": 2, "position_scale": 1.0, "lr": 3e-3,
            "max_epochs": 40, "budget_epochs": 15, "patience": 8, "seeds": [0, 1, 2, 3, 4],
            "schemes": list(SCHEMES)}
RESULTS = Path(__file__).parent / "checkpoints" / "dynamic_masking.json"
_SPECIAL_IDS = (0, 2)          # <pad> and [MASK] are never chosen (news_word_streams' ids)


def masking_data() -> dict:
    """The experiment's data: ``train`` (sequences, seq_len) ids, ``valid`` and ``test`` lists of
    :class:`MaskedBatch` with fixed 80/10/10 masks (the same for every model; :func:`masked_loss`
    scores their [MASK] positions), ``mask_id``, ``vocab_size``."""
    vocab, streams = news_word_streams()
    s = SETTINGS
    mask_id, vocab_size = vocab["[MASK]"], len(vocab)

    def masked(split, offset):
        ids = streams[split][: s["eval_sequences"] * s["seq_len"]].view(s["eval_sequences"], s["seq_len"])
        return [mask_tokens(ids, mask_id, vocab_size, _SPECIAL_IDS, generator=torch.Generator().manual_seed(offset + k))
                for k in range(s["eval_masks"])]

    train = streams["train"][: s["sequences"] * s["seq_len"]].view(s["sequences"], s["seq_len"])
    return {"train": train, "valid": masked("valid", 100), "test": masked("test", 200), "mask_id": mask_id,
            "vocab_size": vocab_size}


def unigram_lines(data: dict | None = None) -> dict[str, float]:
    """{"valid", "test"}: the loss (nats) at the [MASK] positions (those :func:`masked_loss` scores)
    of a unigram model (add-one) fitted on the same training sequences: the level of a model that
    learned nothing from the context."""
    data = masking_data() if data is None else data
    return {split: unigram_loss(data["train"], torch.cat([b.labels[b.masked] for b in data[split]]),
                                data["vocab_size"]) for split in ("valid", "test")}


def copy_lines(data: dict | None = None) -> dict[str, float]:
    """Why :func:`masked_loss` scores [MASK] positions only: the loss (nats) over ALL chosen
    positions (80/10/10) of a context-free model that copies. At a [MASK] it predicts the add-one
    unigram of the training sequences; where the input shows a word it puts ``q`` on that word and
    1 - q on the unigram. ``q`` (about one half: the kept share of the unmasked chosen positions) is
    the best of 0.01, 0.02, ..., 0.99 on validation. Returns {"valid", "test", "unigram_valid",
    "unigram_test", "q"}: the copier's loss, the unigram's over the same positions, and q."""
    data = masking_data() if data is None else data
    counts = torch.bincount(data["train"].flatten(), minlength=data["vocab_size"]).double() + 1
    log_unigram = (counts / counts.sum()).log()                                       # (V,)

    def losses(split, q):                  # q: (Q,) -> (Q,) mean loss over the chosen positions
        shown = torch.cat([b.input_ids[b.chosen] for b in data[split]])              # (N,)
        labels = torch.cat([b.labels[b.chosen] for b in data[split]])                 # (N,)
        masked = torch.cat([b.masked[b.chosen] for b in data[split]])                 # (N,)
        unigram = log_unigram[labels].exp()                                            # (N,)
        copied = (shown == labels).double()
        p = torch.where(masked, unigram, q[:, None] * copied + (1 - q[:, None]) * unigram)   # (Q, N)
        return -p.log().mean(dim=1)

    grid = torch.arange(1, 100, dtype=torch.float64) / 100
    q = grid[losses("valid", grid).argmin()]
    return {"valid": losses("valid", q[None]).item(), "test": losses("test", q[None]).item(),
            "unigram_valid": losses("valid", torch.zeros(1, dtype=torch.float64)).item(),
            "unigram_test": losses("test", torch.zeros(1, dtype=torch.float64)).item(), "q": q.item()}


def masked_loss(model: TinyMLM, batches: list[MaskedBatch]) -> float:
    """Mean cross-entropy (nats) of ``model`` over the positions of ``batches`` (fixed masks) that
    hold [MASK] (``batch.masked``), pooled over the batches, without gradients. The chosen positions
    left visible or replaced at random are not scored: there a model could copy its input."""
    check_type(model, "model", TinyMLM)
    check_type(batches, "batches", list)
    if not batches or not all(isinstance(b, MaskedBatch) for b in batches):
        raise ValueError("batches must be a non-empty list of MaskedBatch")
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for b in batches:
            logits = model.head(model.encode(b.input_ids)[b.masked])                  # (N, V)
            total += F.cross_entropy(logits, b.labels[b.masked], reduction="sum").item()
            count += int(b.masked.sum())
    model.train(was_training)
    if count == 0:
        raise ValueError("batches must hold at least one [MASK] position")
    return total / count


def _batches(m: MaskedBatch, size: int) -> list[MaskedBatch]:
    """An epoch's masked copy of the training sequences, cut into batches in order."""
    return [MaskedBatch(*(getattr(m, f)[i:i + size] for f in MaskedBatch.__dataclass_fields__))
            for i in range(0, len(m.input_ids), size)]


def run(scheme: str, seed: int, data: dict | None = None, max_epochs: int | None = None) -> dict:
    """One TinyMLM trained under ``scheme`` (a key of :data:`SCHEMES`) with ``seed`` (its initial
    weights and its masks: every scheme's first masks are the same draws), scored on the validation
    [MASK] positions (:func:`masked_loss`) after every epoch; early stopping as in the module's
    docstring. ``max_epochs`` (default the settings') cuts the run short, for a quick rerun of its start.

    Returns ``{scheme, seed, epochs, valid_loss (one per epoch), best_epoch, best_valid_loss,
    test_loss_at_best, budget_valid_loss (None if the run stopped earlier)}``."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {tuple(SCHEMES)}, got {scheme!r}")
    check_int(seed, "seed", minimum=0)
    s = SETTINGS
    max_epochs = s["max_epochs"] if max_epochs is None else max_epochs
    check_int(max_epochs, "max_epochs", minimum=1, maximum=s["max_epochs"])
    data = masking_data() if data is None else data
    shown = masked_epochs(data["train"], max_epochs, SCHEMES[scheme], data["mask_id"], data["vocab_size"],
                          _SPECIAL_IDS, generator=torch.Generator().manual_seed(seed))
    set_seed(seed)                                        # the same initial weights under every scheme
    model = TinyMLM(data["vocab_size"], s["d_model"], s["num_heads"], s["num_layers"], max_len=s["seq_len"],
                    position_scale=s["position_scale"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=0.0)
    curve, best, best_state = [], math.inf, None
    for epoch in range(max_epochs):
        fit(model, mlm_loss, _batches(shown[epoch], s["batch_size"]), optimizer=optimizer, seed=None,
            progress=False)
        curve.append(round(masked_loss(model, data["valid"]), 5))
        if curve[-1] < best:
            best, best_epoch, best_state = curve[-1], epoch + 1, copy.deepcopy(model.state_dict())
        if epoch + 1 >= s["budget_epochs"] and epoch + 1 - best_epoch >= s["patience"]:
            break
    model.load_state_dict(best_state)
    budget = s["budget_epochs"]
    return {"scheme": scheme, "seed": seed, "epochs": len(curve), "valid_loss": curve, "best_epoch": best_epoch,
            "best_valid_loss": best, "test_loss_at_best": round(masked_loss(model, data["test"]), 5),
            "budget_valid_loss": curve[budget - 1] if len(curve) >= budget else None}


def experiment(processes: int | None = None) -> list[dict]:
    """Every scheme with every seed of :data:`SETTINGS`, side by side (the longest runs first)."""
    data = masking_data()
    jobs = [(scheme, seed) for scheme in reversed(SCHEMES) for seed in SETTINGS["seeds"]]
    runs = parallel_map(lambda job: run(*job, data=data), jobs, processes=processes, desc="masking runs")
    return sorted(runs, key=lambda r: (list(SCHEMES).index(r["scheme"]), r["seed"]))


def recorded_runs(path: str | Path = RESULTS) -> list[dict]:
    """The recorded runs, after checking the file's settings and SHA-256 (``ValueError`` otherwise)."""
    return load_record(path, SETTINGS)["runs"]


def by_scheme(runs: list[dict], key: str) -> dict[str, torch.Tensor]:
    """scheme -> (seeds,) the runs' ``key`` (e.g. ``"best_valid_loss"``), in seed order."""
    return runs_by(runs, "scheme", SCHEMES, key)


def paired_gaps(runs: list[dict], key: str, first: str, second: str) -> tuple[float, float]:
    """Mean and standard error over seeds of ``first``'s ``key`` minus ``second``'s (paired by seed)."""
    values = by_scheme(runs, key)
    for name, scheme in (("first", first), ("second", second)):
        if scheme not in SCHEMES:
            raise ValueError(f"{name} must be one of {tuple(SCHEMES)}, got {scheme!r}")
    return mean_se(values[first] - values[second])


def plot_masking_runs(runs: list[dict], unigram: float, ax=None):
    """Validation loss at the [MASK] positions per epoch of every run (one colour per scheme, one line per seed), each
    run's best epoch marked, the unigram line and the equal budget drawn; returns the axes."""
    import matplotlib.pyplot as plt
    check_type(runs, "runs", list)
    check_float(unigram, "unigram", minimum=0.0)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for k, scheme in enumerate(SCHEMES):
        chosen = [r for r in runs if r["scheme"] == scheme]
        if not chosen:
            raise ValueError(f"runs holds no run of {scheme!r}")
        for i, r in enumerate(chosen):
            ax.plot(range(1, r["epochs"] + 1), r["valid_loss"], color=f"C{k}", alpha=0.7, lw=1.2,
                    label=f"{scheme} ({len(chosen)} seeds)" if i == 0 else None)
            ax.plot(r["best_epoch"], r["best_valid_loss"], "o", color=f"C{k}", ms=4)
    ax.axhline(unigram, color="0.3", ls="--", lw=1, label=f"unigram of the same text, same positions ({unigram:.2f})")
    ax.axvline(SETTINGS["budget_epochs"], color="0.5", ls=":", lw=1, label="equal budget")
    low = min(min(r["valid_loss"]) for r in runs)
    ax.set(xlabel=f"epoch ({SETTINGS['sequences']} sequences of {SETTINGS['seq_len']} words)",
           ylabel="validation loss at [MASK] (nats)", ylim=(low - 0.1, unigram + 0.6),
           title="The same small masked LM under three masking schemes (dots: best epochs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.dynamic_masking", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    runs = experiment()
    save_record(args.out, "python -m lmcourse.dynamic_masking", SETTINGS, runs)
    lines, copier = unigram_lines(), copy_lines()
    print(f"at the [MASK] positions, unigram of the training sequences: validation {lines['valid']:.3f}, "
          f"test {lines['test']:.3f}")
    print(f"at all chosen positions (80/10/10), the context-free copier (q = {copier['q']:.2f}): validation "
          f"{copier['valid']:.3f}, test {copier['test']:.3f}; the unigram {copier['unigram_valid']:.3f}, "
          f"{copier['unigram_test']:.3f}")
    for key in ("best_valid_loss", "test_loss_at_best", "budget_valid_loss"):
        for scheme, values in by_scheme(runs, key).items():
            mean, se = mean_se(values)
            print(f"{key:18s} {scheme:24s} {mean:.3f} +- {se:.3f}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
