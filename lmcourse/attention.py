"""Attention: scaled dot-product attention, masks, and multi-head attention.

Masks follow one convention everywhere: a boolean tensor broadcastable to (batch, heads, query,
key) in which True means "may attend". Blocked scores are set to -inf before the softmax, so they
get exactly zero weight (setting them to 0 would still give them weight: correction 7).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.validate import check_float, check_int, check_type


def causal_mask(size: int, device=None) -> torch.Tensor:
    """(size, size) bool: position i may attend to positions j <= i."""
    check_int(size, "size", minimum=1)
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """(batch, time) with 1 for real tokens, 0 for padding -> (batch, 1, 1, time) bool key mask."""
    check_type(attention_mask, "attention_mask", torch.Tensor)
    if attention_mask.dim() != 2:
        raise ValueError(f"attention_mask must be (batch, time), got shape {tuple(attention_mask.shape)}")
    return attention_mask.bool()[:, None, None, :]


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None, dropout: float = 0.0,
                                 training: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v, computed explicitly so the weights can be inspected.

    q: (..., Tq, d_k), k: (..., Tk, d_k), v: (..., Tk, d_v), mask: bool broadcastable to (..., Tq, Tk).
    Returns (output (..., Tq, d_v), weights (..., Tq, Tk)).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))   # (..., Tq, d_k) @ (..., d_k, Tk) -> (..., Tq, Tk)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)                             # each row sums to 1
    if dropout > 0.0 and training:
        weights = F.dropout(weights, p=dropout)
    return weights @ v, weights                                  # (..., Tq, Tk) @ (..., Tk, d_v)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (Vaswani et al. 2017): every head projects Q, K and V itself.

    MultiHead(Q, K, V) = Concat(head_1..head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).
    The h per-head projections of width d_model / h are stored side by side in one
    (d_model, d_model) matrix each, so h heads cost what one full-width head costs.

    forward(query (B, Tq, d_model), key (B, Tk, d_model) = query, value = key, mask) ->
    (output (B, Tq, d_model), weights (B, h, Tq, Tk) if need_weights else None).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 fused: bool = True):
        super().__init__()
        check_int(d_model, "d_model", minimum=1)
        check_int(num_heads, "num_heads", minimum=1)
        if d_model % num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        check_float(dropout, "dropout", minimum=0.0, maximum=1.0)
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.dropout, self.fused = dropout, fused
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_head).transpose(1, 2)   # (B, T, C) -> (B, h, T, d_head)

    def forward(self, query: torch.Tensor, key: torch.Tensor | None = None,
                value: torch.Tensor | None = None, mask: torch.Tensor | None = None,
                need_weights: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        key = query if key is None else key
        value = key if value is None else value
        if query.dim() != 3 or query.size(-1) != self.d_model:
            raise ValueError(f"query must be (batch, time, {self.d_model}), got {tuple(query.shape)}")
        if key.shape[:2] != value.shape[:2] or key.size(0) != query.size(0):
            raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must share "
                             f"(batch, time), and batch with query {tuple(query.shape)}")
        if mask is not None and mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend), got {mask.dtype}")
        q = self._split(self.q_proj(query))                              # (B, h, Tq, d_head)
        k = self._split(self.k_proj(key))                                # (B, h, Tk, d_head)
        v = self._split(self.v_proj(value))                              # (B, h, Tk, d_head)
        p = self.dropout if self.training else 0.0
        if self.fused and not need_weights:
            # fast path: the same maths in one fused kernel that never stores the (Tq, Tk) weights
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p), None
        else:
            out, weights = scaled_dot_product_attention(q, k, v, mask, p, self.training)
        B, _, Tq, _ = out.shape
        out = out.transpose(1, 2).reshape(B, Tq, self.d_model)           # concat heads: (B, Tq, d_model)
        return self.out_proj(out), weights
