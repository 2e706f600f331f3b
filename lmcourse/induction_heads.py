"""Induction heads in small: attention-only Transformers trained on sequences with a repeat.

After Elhage et al. (2021, "A mathematical framework for transformer circuits") and Olsson et al.
(2022, "In-context learning and induction heads"). Every sequence is random tokens in which one
random segment occurs twice (:func:`repeated_segment_batch`). Inside the second occurrence the next
token is predictable, but only by looking back: find the earlier occurrence of the current token and
copy the token that followed it. That takes two heads in two layers:

- a **previous-token head** (layer 1) writes into position j which token stood at j - 1;
- an **induction head** (layer 2) at position t looks for the position j whose previous token equals
  the token at t (a query from layer 2 against a key that layer 1 built), and copies the token at j.

A one-layer model has no earlier layer to build such a key: its keys hold only a position's own token
and position. The gap between the two occurrences is random, so no fixed offset ("look L - 1 tokens
back"), which learned positions can encode in one layer, always finds the earlier occurrence; a
one-layer model can only bet on the distances at which it usually lies.

Measurements: the loss on the tokens of each occurrence (:func:`next_token_losses`,
:func:`occurrence_losses`), each head's :func:`previous_token_scores` and :func:`induction_scores`, and
:func:`best_head`.

Chapter 8's ten models (one and two layers, five seeds) are trained and measured once by::

    python -m lmcourse.induction_heads      # writes lmcourse/checkpoints/induction_heads.json

under the reference settings (numerics.env); :func:`recorded_runs` reads the record after checking its
settings and SHA-256, and the chapter trains seed 0 of both models again beside it (:func:`train_and_measure`).
"""
import argparse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.cli import output_file
from lmcourse.gpt import CausalSelfAttention
from lmcourse.parallel import parallel_map
from lmcourse.seed import DEFAULT_DEVICE, set_seed
from lmcourse.train import History, fit, save_record
from lmcourse.validate import check_float, check_int, check_token_ids, check_type, load_record


class RepeatBatch(NamedTuple):
    """ids (B, T) token ids; first, second (B,) where the two occurrences of the segment start."""
    ids: torch.Tensor
    first: torch.Tensor
    second: torch.Tensor


def repeated_segment_batch(batch_size: int, length: int, segment_length: int, vocab_size: int,
                           generator: torch.Generator | None = None) -> RepeatBatch:
    """Uniformly random tokens in which one segment of ``segment_length`` tokens occurs twice.

    ids[b, second[b] + k] == ids[b, first[b] + k] for k < segment_length. The starts are random:
    1 <= first, first + segment_length <= second, second + segment_length <= length, so at least one
    token precedes the first occurrence (every token of both has a prediction). The gap
    d = second - first - segment_length is the difference of two uniform draws from 0 .. s - 1,
    s = length - 2 * segment_length, so short gaps are the commonest: P(d) = 1/s for d = 0 and
    2 (s - d) / s^2 for d >= 1. Needs length >= 2 * segment_length + 1.
    """
    check_int(batch_size, "batch_size", minimum=1)
    check_int(segment_length, "segment_length", minimum=2)
    check_int(length, "length", minimum=2 * segment_length + 1)
    check_int(vocab_size, "vocab_size", minimum=2)
    ids = torch.randint(vocab_size, (batch_size, length), generator=generator)      # (B, T)
    slack = length - 2 * segment_length                                             # room for the gaps
    ends = torch.randint(slack, (batch_size, 2), generator=generator).sort(dim=1).values   # (B, 2)
    first = 1 + ends[:, 0]                                                          # (B,)
    second = 1 + ends[:, 1] + segment_length                                        # (B,)
    offsets = torch.arange(segment_length)                                          # (L,)
    rows = torch.arange(batch_size)[:, None]                                        # (B, 1)
    ids[rows, second[:, None] + offsets] = ids[rows, first[:, None] + offsets]      # the repeat
    return RepeatBatch(ids, first, second)


class AttentionOnlyTransformer(nn.Module):
    """Token and learned position embeddings, ``num_layers`` causal multi-head attention layers each
    added to the residual stream, no MLP, a final LayerNorm, and an unembedding.

    x_0 = W_E[ids] + P,   x_l = x_{l-1} + Attention_l(x_{l-1}),   logits = W_U LayerNorm(x_L).

    forward(ids (B, T), need_weights) -> logits (B, T, vocab_size), and with ``need_weights`` also the
    attention weights (B, num_layers, num_heads, T, T).
    """

    def __init__(self, vocab_size: int, context_size: int, d_model: int, num_layers: int, num_heads: int):
        super().__init__()
        check_int(vocab_size, "vocab_size", minimum=2)
        check_int(context_size, "context_size", minimum=1)
        check_int(num_layers, "num_layers", minimum=1)
        self.vocab_size, self.context_size = vocab_size, context_size
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(context_size, d_model)
        self.layers = nn.ModuleList(CausalSelfAttention(d_model, num_heads) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, ids: torch.Tensor, need_weights: bool = False):
        check_token_ids(ids, self.vocab_size, "ids")
        if ids.dim() != 2 or not 1 <= ids.size(1) <= self.context_size:
            raise ValueError(f"ids must be (batch, time) with 1 <= time <= {self.context_size}, "
                             f"got {tuple(ids.shape)}")
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))   # (B, T, C)
        weights = []
        for layer in self.layers:
            if need_weights:
                out, w = layer(x, need_weights=True)                     # (B, T, C), (B, h, T, T)
                weights.append(w)
            else:
                out = layer(x)
            x = x + out                                                  # the residual stream
        logits = self.unembed(self.norm(x))                              # (B, T, V)
        return (logits, torch.stack(weights, dim=1)) if need_weights else logits


def next_token_losses(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """(B, T): entry t is -log p(ids[:, t] | ids[:, :t]) in nats; column 0, with no prediction, is NaN."""
    logits = model(ids)                                                               # (B, T, V)
    losses = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")   # (B, T - 1)
    return torch.cat([torch.full_like(losses[:, :1], float("nan")), losses], dim=1)


def occurrence_losses(losses: torch.Tensor, starts: torch.Tensor, segment_length: int) -> torch.Tensor:
    """losses (B, T) from :func:`next_token_losses`, starts (B,) of one occurrence -> (B, segment_length):
    the loss on the token k places into each sequence's occurrence, k = 0 .. segment_length - 1."""
    check_int(segment_length, "segment_length", minimum=1)
    if losses.dim() != 2 or starts.shape != losses.shape[:1]:
        raise ValueError(f"losses must be (batch, time) and starts (batch,), got {tuple(losses.shape)} "
                         f"and {tuple(starts.shape)}")
    if starts.min() < 1 or starts.max() + segment_length > losses.size(1):
        raise ValueError(f"every occurrence must lie in positions 1..{losses.size(1) - 1}")
    return losses.gather(1, starts[:, None] + torch.arange(segment_length, device=starts.device))   # (B, L)


def _check_weights(weights: torch.Tensor) -> None:
    check_type(weights, "weights", torch.Tensor)
    if weights.dim() < 3 or weights.size(-1) != weights.size(-2):
        raise ValueError(f"weights must be (batch, ..., T, T), got {tuple(weights.shape)}")


def previous_token_scores(weights: torch.Tensor, by_position: bool = False) -> torch.Tensor:
    """weights (B, ..., T, T) -> (...): each head's mean weight from position i to i - 1, over the batch
    and every i >= 1; with ``by_position``, (..., T - 1): the mean over the batch at i = 1 .. T - 1.
    An exact previous-token head scores 1."""
    _check_weights(weights)
    i = torch.arange(1, weights.size(-1), device=weights.device)
    by_i = weights[..., i, i - 1].mean(dim=0)                                        # (..., T - 1)
    return by_i if by_position else by_i.mean(dim=-1)


def induction_scores(weights: torch.Tensor, first: torch.Tensor, second: torch.Tensor,
                     segment_length: int) -> torch.Tensor:
    """weights (B, ..., T, T), first and second (B,) occurrence starts -> (...): each head's mean weight
    from the token k places into the second occurrence to the position right after that token's earlier
    occurrence, first + k + 1, for k = 0 .. segment_length - 2 (the queries whose next token the first
    occurrence gives away). An exact induction head scores 1."""
    _check_weights(weights)
    check_int(segment_length, "segment_length", minimum=2)
    B = weights.size(0)
    if first.shape != (B,) or second.shape != (B,):
        raise ValueError(f"first and second must be (batch,) = ({B},), got {tuple(first.shape)} "
                         f"and {tuple(second.shape)}")
    if (second < first + segment_length).any() or second.max() + segment_length > weights.size(-1):
        raise ValueError("each second occurrence must follow its first and end by position T - 1")
    k = torch.arange(segment_length - 1, device=first.device)
    queries, keys = second[:, None] + k, first[:, None] + k + 1                      # (B, L - 1) each
    w = weights.movedim(0, -3)                                                       # (..., B, T, T)
    rows = torch.arange(B, device=first.device)[:, None]
    return w[..., rows, queries, keys].mean(dim=(-2, -1))


def best_head(scores: torch.Tensor) -> tuple[int, int]:
    """scores (layers, heads) -> (layer, head) of the highest score, both counted from 0."""
    check_type(scores, "scores", torch.Tensor)
    if scores.dim() != 2:
        raise ValueError(f"scores must be (layers, heads), got {tuple(scores.shape)}")
    layer, head = divmod(int(scores.argmax()), scores.size(1))
    return layer, head


@dataclass(frozen=True)
class InductionSetup:
    """The data, model and training sizes of the experiment."""
    vocab_size: int = 32         # token ids 0..31, drawn uniformly
    length: int = 24             # tokens per sequence
    segment_length: int = 8      # tokens of the repeated segment; the gap between its two occurrences is 0..7
    d_model: int = 64            # width of the residual stream
    num_heads: int = 2           # heads per attention layer
    steps: int = 400             # Adam steps, each on a fresh batch
    batch_size: int = 32         # sequences per step
    lr: float = 3e-3             # Adam's learning rate

    def __post_init__(self):
        for name in ("vocab_size", "length", "segment_length", "d_model", "num_heads", "steps", "batch_size"):
            check_int(getattr(self, name), name, minimum=1)
        check_float(self.lr, "lr", minimum=0.0, strict_minimum=True)
        repeated_segment_batch(1, self.length, self.segment_length, self.vocab_size)   # checks the sizes


def train_attention_only(num_layers: int, seed: int, setup: InductionSetup = InductionSetup(),
                         device: str | torch.device = DEFAULT_DEVICE) -> tuple[AttentionOnlyTransformer, History]:
    """An :class:`AttentionOnlyTransformer` of ``num_layers`` layers, initialised and trained with ``seed``
    by ``lmcourse.train.fit`` on ``setup.steps`` fresh batches; next-token loss on every position. The
    batches are drawn on the CPU, so every device trains on the same sequences."""
    set_seed(seed)
    model = AttentionOnlyTransformer(setup.vocab_size, setup.length, setup.d_model, num_layers, setup.num_heads)
    g = torch.Generator().manual_seed(seed)
    batches = [repeated_segment_batch(setup.batch_size, setup.length, setup.segment_length, setup.vocab_size, g).ids
               for _ in range(setup.steps)]
    history = fit(model, lambda m, ids: next_token_losses(m, ids)[:, 1:].mean(), batches, lr=setup.lr,
                  seed=None, device=device, desc=f"{num_layers}-layer")
    return model.eval(), history


@torch.no_grad()
def measure(model: AttentionOnlyTransformer, batch: RepeatBatch, segment_length: int) -> dict:
    """What the model does on a held-out ``batch`` (moved to the model's device; the results are on the CPU):

    first_loss, second_loss: mean loss on the tokens of each occurrence but its first (that one follows a
        random token, so no earlier match of the token before it points to it);
    first_by_offset, second_by_offset (segment_length,): the mean loss k tokens into each occurrence;
    second_by_gap (T - 2 L,): second_loss over the sequences whose occurrences are d = 0, 1, .. tokens
        apart (second = first + L + d; NaN where no sequence has that gap);
    previous_token, induction (layers, heads): every head's scores;
    previous_token_by_position (layers, heads, T - 1): the previous-token score at positions 1 .. T - 1.
    """
    batch = RepeatBatch(*(t.to(model.unembed.weight.device) for t in batch))
    losses = next_token_losses(model, batch.ids)                                     # (B, T)
    _, weights = model(batch.ids, need_weights=True)                                 # (B, layers, h, T, T)
    first = occurrence_losses(losses, batch.first, segment_length)                   # (B, L)
    second = occurrence_losses(losses, batch.second, segment_length)                 # (B, L)
    gap = batch.second - batch.first - segment_length                                # (B,)
    gaps = batch.ids.size(1) - 2 * segment_length
    per_gap = second.new_zeros(gaps).index_add(0, gap, second[:, 1:].mean(1)) / torch.bincount(gap, minlength=gaps)
    return {"first_loss": first[:, 1:].mean().item(), "second_loss": second[:, 1:].mean().item(),
            "first_by_offset": first.mean(0).cpu(), "second_by_offset": second.mean(0).cpu(),
            "second_by_gap": per_gap.cpu(), "previous_token": previous_token_scores(weights).cpu(),
            "previous_token_by_position": previous_token_scores(weights, by_position=True).cpu(),
            "induction": induction_scores(weights, batch.first, batch.second, segment_length).cpu()}


#: the recorded experiment: these layer counts and seeds, on the default :class:`InductionSetup`, measured on
#: ``test_sequences`` held-out sequences drawn with ``test_seed`` (:func:`held_out_batch`)
SETTINGS = {"layers": [1, 2], "seeds": [0, 1, 2, 3, 4], "test_sequences": 2000, "test_seed": 10_000,
            "setup": asdict(InductionSetup())}
RESULTS = Path(__file__).parent / "checkpoints" / "induction_heads.json"


def held_out_batch(setup: InductionSetup = InductionSetup()) -> RepeatBatch:
    """The held-out sequences every model is measured on (the same for every seed)."""
    return repeated_segment_batch(SETTINGS["test_sequences"], setup.length, setup.segment_length, setup.vocab_size,
                                  torch.Generator().manual_seed(SETTINGS["test_seed"]))


def train_and_measure(num_layers: int, seed: int, setup: InductionSetup, test: RepeatBatch
        ) -> tuple[AttentionOnlyTransformer, list[float], dict]:
    """One model trained (:func:`train_attention_only`) and measured on ``test`` (:func:`measure`):
    (model, training loss of every step, measurements)."""
    model, history = train_attention_only(num_layers, seed, setup)
    return model, history.train_loss, measure(model, test, setup.segment_length)


def _json(measured: dict) -> dict:
    return {k: v.tolist() if isinstance(v, torch.Tensor) else v for k, v in measured.items()}


def recorded_runs(path: str | Path = RESULTS) -> dict[tuple[int, int], tuple[list[float], dict]]:
    """``{(layers, seed): (training losses, measurements as :func:`measure` returns them)}`` from the
    record at ``path``, after checking its settings and SHA-256 (``ValueError`` otherwise)."""
    out = {}
    for r in load_record(path, SETTINGS)["runs"]:
        measured = {k: torch.tensor(v) if isinstance(v, list) else v for k, v in r["measured"].items()}
        out[r["layers"], r["seed"]] = (r["train_loss"], measured)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmcourse.induction_heads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=output_file, default=RESULTS, help="the JSON file to write")
    args = parser.parse_args(argv)
    setup, test = InductionSetup(), held_out_batch()
    jobs = [(n, seed) for n in SETTINGS["layers"] for seed in SETTINGS["seeds"]]
    results = parallel_map(lambda job: train_and_measure(*job, setup, test)[1:], jobs, desc="attention-only models")
    runs = [{"layers": n, "seed": seed, "train_loss": losses, "measured": _json(measured)}
            for (n, seed), (losses, measured) in zip(jobs, results)]
    save_record(args.out, "python -m lmcourse.induction_heads", SETTINGS, runs)
    for r in runs:
        print(f"{r['layers']} layer(s), seed {r['seed']}: loss on the second occurrence "
              f"{r['measured']['second_loss']:.3f}, on the first {r['measured']['first_loss']:.3f}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
