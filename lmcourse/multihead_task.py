"""A task that needs two positions at once: y_t = (x_{t-a} - x_{t-b}) mod K.

The tokens x are drawn uniformly from K symbols. The target at position t combines the tokens at
two fixed offsets back, so a model must read both, and must know which is which: the difference
is not symmetric in its two arguments. Positions t < max(offsets) have no target. Reading only one
of the two tokens gives chance, 1 / K: for uniform, independent tokens the difference is uniform
whatever one of them is.

``TwoPositionModel`` is one causal self-attention layer (token embeddings plus learned positions,
``lmcourse.attention.MultiHeadAttention``) followed by a small ReLU layer and a linear read-out;
its parameter count does not depend on the number of heads.
"""
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.attention import MultiHeadAttention, causal_mask
from lmcourse.validate import check_float, check_int

IGNORE = -100   # target at positions without one (cross_entropy's ignore_index)


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


class TwoPositionModel(nn.Module):
    """Embeddings + learned positions -> causal multi-head self-attention -> ReLU layer -> logits.

    forward(x (B, T) ids, need_weights) -> (logits (B, T, K), weights (B, h, T, T) or None).
    """

    def __init__(self, num_symbols: int, length: int, d_model: int, num_heads: int, d_hidden: int = 64):
        super().__init__()
        check_int(num_symbols, "num_symbols", minimum=2)
        check_int(length, "length", minimum=1)
        check_int(d_hidden, "d_hidden", minimum=1)
        self.embed = nn.Embedding(num_symbols, d_model)
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


def train_two_position(model: TwoPositionModel, steps: int, batch_size: int, length: int, num_symbols: int,
                       offsets: tuple[int, int] = (1, 3), lr: float = 3e-3, seed: int = 0,
                       eval_every: int = 25, eval_batch: int = 1000) -> list[float]:
    """Train with Adam on fresh batches; return the held-out accuracy every ``eval_every`` steps."""
    check_int(steps, "steps", minimum=1)
    check_int(eval_every, "eval_every", minimum=1)
    check_float(lr, "lr", minimum=0.0)
    g = torch.Generator().manual_seed(seed)
    x_test, y_test = two_position_batch(eval_batch, length, num_symbols, offsets,
                                        torch.Generator().manual_seed(10_000 + seed))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    curve = []
    for step in range(1, steps + 1):
        x, y = two_position_batch(batch_size, length, num_symbols, offsets, g)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            curve.append(accuracy(model, x_test, y_test))
    return curve


@torch.no_grad()
def accuracy(model: TwoPositionModel, x: torch.Tensor, y: torch.Tensor) -> float:
    """Share of the positions with a target that the model predicts right."""
    logits, _ = model(x)
    keep = y != IGNORE
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
