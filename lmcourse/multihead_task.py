"""Two tasks that need two positions at once, for one head against several.

``two_position_batch``: y_t = (x_{t-a} - x_{t-b}) mod K for tokens x drawn uniformly from K
symbols. The two positions sit at fixed offsets, and the difference is not symmetric, so a model
must read both and know which is which. Reading only one of the two tokens gives chance, 1 / K.

``latest_pair_batch``: every token is a digit 0..K-1 in one of three colours (red, blue, plain),
and y_t = (latest red digit - latest blue digit) mod K over the positions up to t. The two
positions move from sequence to sequence, and a red or blue token that is no longer the latest
of its colour must be ignored.

``TwoPositionModel`` is one causal self-attention layer (token embeddings plus learned positions,
``lmcourse.attention.MultiHeadAttention``) followed by a small ReLU layer and a linear read-out;
its parameter count does not depend on the number of heads.
"""
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import MultiHeadAttention, causal_mask
from lmcourse.validate import check_float, check_int

IGNORE = -100   # target at positions without one (cross_entropy's ignore_index)
RED, BLUE, PLAIN = 0, 1, 2   # colours of latest_pair_batch: token id = digit + K * colour


def two_position_batch(batch_size: int, length: int, num_symbols: int, offsets: tuple[int, int] = (1, 3),
                       generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(x (B, T) token ids, y (B, T) targets): y_t = (x_{t-a} - x_{t-b}) mod K, IGNORE for t < max(a, b)."""
    check_int(batch_size, "batch_size", minimum=1)
    check_int(num_symbols, "num_symbols", minimum=2)
    if len(offsets) != 2 or min(offsets) < 1 or offsets[0] == offsets[1]:
        raise ValueError(f"offsets must be two different positive integers, got {offsets}")
    check_int(length, "length", minimum=max(offsets) + 1)
    a, b = offsets
    x = torch.randint(num_symbols, (batch_size, length), generator=generator)
    y = torch.full_like(x, IGNORE)
    t = torch.arange(max(a, b), length)
    y[:, t] = (x[:, t - a] - x[:, t - b]) % num_symbols
    return x, y


def latest_pair_batch(batch_size: int, length: int, num_symbols: int, generator: torch.Generator | None = None,
                      marked_share: float = 0.4) -> tuple[torch.Tensor, torch.Tensor]:
    """(x (B, T) ids in [0, 3K), y (B, T) targets): id = digit + K * colour; a share ``marked_share`` of the
    tokens is red or blue (half each), the rest plain; y_t = (latest red digit - latest blue digit) mod K
    over positions <= t, IGNORE until both colours have appeared."""
    check_int(batch_size, "batch_size", minimum=1)
    check_int(length, "length", minimum=2)
    check_int(num_symbols, "num_symbols", minimum=2)
    check_float(marked_share, "marked_share", minimum=0.0, maximum=1.0)
    if marked_share == 0:
        raise ValueError("marked_share must be above 0: with no red or blue token there is no target")
    digit = torch.randint(num_symbols, (batch_size, length), generator=generator)
    u = torch.rand(batch_size, length, generator=generator)
    colour = torch.where(u < marked_share / 2, RED, torch.where(u < marked_share, BLUE, PLAIN))
    latest = {}
    for c in (RED, BLUE):
        where = torch.where(colour == c, torch.arange(length), -1).cummax(1).values   # (B, T), -1: none yet
        latest[c] = (digit.gather(1, where.clamp(min=0)), where >= 0)
    seen = latest[RED][1] & latest[BLUE][1]
    y = torch.where(seen, (latest[RED][0] - latest[BLUE][0]) % num_symbols, IGNORE)
    return digit + num_symbols * colour, y


@torch.no_grad()
def latest_pair_shares(weights: torch.Tensor, x: torch.Tensor, num_symbols: int) -> torch.Tensor:
    """weights (B, h, T, T), x (B, T) ids of latest_pair_batch -> (h, 5): each head's mean weight on the
    latest red, the latest blue, older reds, older blues and plain tokens, averaged over the batch and
    over the query positions where both colours have appeared."""
    check_int(num_symbols, "num_symbols", minimum=2)
    if weights.dim() != 4 or x.shape != (weights.size(0), weights.size(-1)):
        raise ValueError(f"weights must be (batch, heads, T, T) and x (batch, T), got {tuple(weights.shape)} "
                         f"and {tuple(x.shape)}")
    colour = x // num_symbols                                                   # (B, T)
    B, T = x.shape
    masks = []
    for c in (RED, BLUE):
        is_c = colour == c                                                      # (B, T)
        pos = torch.where(is_c, torch.arange(T), -1).cummax(1).values          # latest c at or before t
        latest = F.one_hot(pos.clamp(min=0), T).bool() & (pos >= 0)[..., None]  # (B, Tq, Tk)
        earlier = is_c[:, None, :] & ~latest & (torch.arange(T)[None, :, None] >= torch.arange(T))
        masks.append((latest, earlier))
    (red, old_red), (blue, old_blue) = masks
    plain = (colour == PLAIN)[:, None, :].expand(B, T, T)
    query = red.any(-1) & blue.any(-1)                                          # (B, Tq): target exists
    parts = [red, blue, old_red, old_blue, plain]
    return torch.stack([(weights * m[:, None].float()).sum(-1).transpose(1, 2)[query].mean(0) for m in parts],
                       dim=1)


def conflict_positions(x: torch.Tensor, num_symbols: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x (B, T) ids of latest_pair_batch -> (crossed, older), each (B, T) bool.

    crossed: positions t where an older red lies after the latest blue, or an older blue after the
    latest red. A score that adds a term for the colour to a term for the position ranks the two
    latest tokens above every older red and blue here only by favouring one colour, which ranks them
    wrongly in the other kind of crossing. older: positions, crossed or not, where some red or blue
    token before t is no longer the latest of its colour (the control for crossed)."""
    check_int(num_symbols, "num_symbols", minimum=2)
    colour = x // num_symbols
    B, T = x.shape
    latest = torch.full((B, 2), -1)                                             # latest red, blue position
    second = torch.full((B, 2), -1)                                             # the one before it
    rows = torch.arange(B)
    crossed = torch.zeros(B, T, dtype=torch.bool)
    older = torch.zeros(B, T, dtype=torch.bool)
    for t in range(T):
        marked = colour[:, t] != PLAIN
        c = colour[marked, t]
        second[rows[marked], c] = latest[rows[marked], c]
        latest[rows[marked], c] = t
        both = (latest >= 0).all(1)
        crossed[:, t] = both & ((second[:, RED] > latest[:, BLUE]) | (second[:, BLUE] > latest[:, RED]))
        older[:, t] = both & (second >= 0).any(1)
    return crossed, older


class TwoPositionModel(nn.Module):
    """Embeddings + learned positions -> causal multi-head self-attention -> ReLU layer -> logits.

    ``num_inputs`` token ids in, ``num_symbols`` classes out (the same number unless given).

    forward(x (B, T) ids, need_weights) -> (logits (B, T, K), weights (B, h, T, T) or None).
    """

    def __init__(self, num_symbols: int, length: int, d_model: int, num_heads: int, d_hidden: int = 64,
                 num_inputs: int | None = None):
        super().__init__()
        check_int(num_symbols, "num_symbols", minimum=2)
        num_inputs = num_symbols if num_inputs is None else num_inputs
        check_int(num_inputs, "num_inputs", minimum=2)
        check_int(length, "length", minimum=1)
        check_int(d_hidden, "d_hidden", minimum=1)
        self.embed = nn.Embedding(num_inputs, d_model)
        self.position = nn.Parameter(0.1 * torch.randn(length, d_model))
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.hidden = nn.Linear(d_model, d_hidden)
        self.out = nn.Linear(d_hidden, num_symbols)
        self.register_buffer("mask", causal_mask(length), persistent=False)

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        T = x.size(1)
        if x.dim() != 2 or T > self.position.size(0):
            raise ValueError(f"x must be (batch, time <= {self.position.size(0)}), got {tuple(x.shape)}")
        h = self.embed(x) + self.position[:T]                                       # (B, T, d)
        z, weights = self.attention(h, mask=self.mask[:T, :T], need_weights=need_weights)
        return self.out(F.relu(self.hidden(z))), weights                            # (B, T, K)


def train_two_position(model: TwoPositionModel, steps: int, batch_size: int,
                       make_batch: Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]],
                       lr: float = 3e-3, seed: int = 0, eval_every: int = 25, eval_batch: int = 1000) -> list[float]:
    """Train with Adam on fresh batches ``make_batch(batch_size, generator) -> (x, y)``; return the
    held-out accuracy every ``eval_every`` steps."""
    check_int(steps, "steps", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    check_int(eval_every, "eval_every", minimum=1)
    check_float(lr, "lr", minimum=0.0)
    g = torch.Generator().manual_seed(seed)
    x_test, y_test = make_batch(eval_batch, torch.Generator().manual_seed(10_000 + seed))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    curve = []
    for step in range(1, steps + 1):
        x, y = make_batch(batch_size, g)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            curve.append(accuracy(model, x_test, y_test))
    return curve


@torch.no_grad()
def accuracy(model: TwoPositionModel, x: torch.Tensor, y: torch.Tensor, where: torch.Tensor | None = None) -> float:
    """Share of the positions with a target (and, if given, ``where`` (B, T) true) predicted right."""
    logits, _ = model(x)
    keep = (y != IGNORE) if where is None else (y != IGNORE) & where
    return (logits.argmax(-1)[keep] == y[keep]).float().mean().item()


@torch.no_grad()
def offset_shares(weights: torch.Tensor, max_offset: int) -> torch.Tensor:
    """weights (B, h, T, T) -> (h, max_offset + 1): each head's mean weight on offset 0..max_offset back,
    averaged over the batch and over the query positions t >= max_offset."""
    check_int(max_offset, "max_offset", minimum=0)
    if weights.dim() != 4 or weights.size(-1) <= max_offset:
        raise ValueError(f"weights must be (batch, heads, T, T) with T > max_offset, got {tuple(weights.shape)}")
    T = weights.size(-1)
    t = torch.arange(max_offset, T)
    return torch.stack([weights[:, :, t, t - o].mean((0, 2)) for o in range(max_offset + 1)], dim=1)
