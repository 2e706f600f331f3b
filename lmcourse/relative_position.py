"""Positions for inputs longer than any seen in training: absolute (sinusoidal, learned), none, and
relative, where a learned bias per head and per offset i - j is added to the attention scores
(Shaw et al. 2018; T5 (Raffel et al. 2020) shares one bias among the far offsets, as here).

``OffsetModel`` is one causal self-attention layer, a ReLU layer and a read-out, with the kind of
position chosen by name; on a rule that depends only on offsets (``lmcourse.multihead_task``'s
y_t = (x_{t-1} - x_{t-3}) mod K) it shows which kinds carry a rule learned on short inputs to longer ones.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.positional import sinusoidal_encoding
from lmcourse.validate import check_int

KINDS = ("sinusoidal", "learned", "relative", "none")


def relative_bias(table: torch.Tensor, length: int) -> torch.Tensor:
    """table (h, R + 1) learned scores for offsets 0 .. R -> (h, T, T) bias b[h, i, j] = table[h, min(i - j, R)]
    for j <= i (offsets of R and more share the last entry), 0 above the diagonal (masked anyway)."""
    check_int(length, "length", minimum=1)
    if table.dim() != 2:
        raise ValueError(f"table must be (heads, offsets), got shape {tuple(table.shape)}")
    offset = torch.arange(length)[:, None] - torch.arange(length)[None, :]         # (T, T): i - j
    clip = table.size(1) - 1                                                        # R: offsets >= R share
    return table[:, offset.clamp(0, clip)]                                          # (h, T, T)


class OffsetModel(nn.Module):
    """Embeddings (+ absolute positions) -> causal self-attention (+ relative bias) -> ReLU layer -> logits.

    positional: "sinusoidal" or "learned" add a (max_len, d_model) table to the embeddings; "relative"
    adds relative_bias(table (h, max_offset + 1)) to every head's scores and works at any length; "none"
    gives the layer no position at all.

    forward(x (B, T) ids) -> (logits (B, T, num_symbols), weights (B, h, T, T)).
    """

    def __init__(self, num_symbols: int, positional: str, d_model: int = 32, num_heads: int = 2,
                 max_len: int = 64, max_offset: int = 8, d_hidden: int = 64):
        super().__init__()
        if positional not in KINDS:
            raise ValueError(f"positional must be one of {KINDS}, got {positional!r}")
        for value, name in ((num_symbols, "num_symbols"), (d_model, "d_model"), (num_heads, "num_heads"),
                            (max_len, "max_len"), (max_offset, "max_offset"), (d_hidden, "d_hidden")):
            check_int(value, name, minimum=1)
        if d_model % num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.positional, self.num_heads, self.max_len = positional, num_heads, max_len
        self.embed = nn.Embedding(num_symbols, d_model)
        if positional == "learned":
            self.position = nn.Parameter(0.1 * torch.randn(max_len, d_model))
        elif positional == "sinusoidal":
            self.register_buffer("position", sinusoidal_encoding(max_len, d_model), persistent=False)
        elif positional == "relative":
            self.offset_scores = nn.Parameter(torch.zeros(num_heads, max_offset + 1))
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.hidden = nn.Linear(d_model, d_hidden)
        self.out = nn.Linear(d_hidden, num_symbols)

    def forward(self, x: torch.Tensor):
        if x.dim() != 2:
            raise ValueError(f"x must be (batch, time) ids, got shape {tuple(x.shape)}")
        B, T = x.shape
        if self.positional in ("sinusoidal", "learned") and T > self.max_len:
            raise ValueError(f"x has {T} positions, more than max_len ({self.max_len})")
        h = self.embed(x)                                                            # (B, T, d)
        if self.positional in ("sinusoidal", "learned"):
            h = h + self.position[:T]
        q, k, v = self.qkv(h).view(B, T, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)   # 3 x (B, h, T, d_head)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))                    # (B, h, T, T)
        if self.positional == "relative":
            scores = scores + relative_bias(self.offset_scores, T)                  # + b[h, i - j]
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        weights = scores.softmax(-1)
        z = self.proj((weights @ v).transpose(1, 2).reshape(B, T, -1))              # (B, T, d)
        return self.out(F.relu(self.hidden(z))), weights
