"""XLNet's permutation language modelling as attention masks (Yang et al. 2019).

XLNet maximises E_z [ sum_t log p(x_{z_t} | x_{z_<t}) ] over factorisation orders z, permutations
of the positions 1..T. The tokens are NOT shuffled: every token keeps its position (and position
encoding); only the order in which they are predicted changes, and that order is imposed by masks
(correction 16). Two streams attend with two masks:

* content stream h: position i sees the positions predicted up to and including itself;
* query stream g: position i sees only the positions predicted strictly before it (it knows where
  it is, through its position, but not which token is there: that is what it must predict).

Masks are bool, True = may attend, like :mod:`lmcourse.attention`. :class:`TwoStreamAttention` runs
one layer of both streams with shared weights.
"""
import math

import torch
from torch import nn

from lmcourse.attention import MultiHeadAttention
from lmcourse.validate import check_int, check_type


def _order_tensor(order) -> torch.Tensor:
    order = torch.as_tensor(order)
    if order.dim() != 1 or order.numel() == 0:
        raise ValueError(f"order must be a non-empty 1-D permutation, got shape {tuple(order.shape)}")
    if order.dtype.is_floating_point or order.dtype == torch.bool:
        raise TypeError(f"order must hold integers, got {order.dtype}")
    if not torch.equal(order.sort().values, torch.arange(len(order))):
        raise ValueError(f"order must be a permutation of 0..{len(order) - 1}, got {order.tolist()}")
    return order.long()


def order_ranks(order) -> torch.Tensor:
    """rank[p] = the step at which position p is predicted (the inverse permutation of ``order``)."""
    order = _order_tensor(order)
    ranks = torch.empty_like(order)
    ranks[order] = torch.arange(len(order))
    return ranks


def permutation_masks(order) -> tuple[torch.Tensor, torch.Tensor]:
    """Content-stream and query-stream masks, each (T, T), for the factorisation ``order``.

    order[k] is the position predicted at step k, e.g. [2, 1, 3, 0] predicts x_2 first.
    content[i, j] = rank[j] <= rank[i];  query[i, j] = rank[j] < rank[i].
    """
    ranks = order_ranks(order)                       # (T,)
    content = ranks[None, :] <= ranks[:, None]       # (1, T) vs (T, 1) -> (T, T)
    query = ranks[None, :] < ranks[:, None]          # (T, T): never itself
    return content, query


def sample_order(length: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """A random factorisation order: a uniformly drawn permutation of 0..length-1."""
    check_int(length, "length", minimum=1)
    return torch.randperm(length, generator=generator)


def prediction_targets(order, K: float = 6.0) -> torch.Tensor:
    """(T,) bool: the positions XLNet predicts, the last ~T/K of the factorisation order.

    Predicting only the tail ("partial prediction", K = 6 or 7 in the paper) leaves each
    prediction a long context and saves compute.
    """
    ranks = order_ranks(order)
    check_type(K, "K", (int, float))
    if not K >= 1:
        raise ValueError(f"K must be >= 1, got {K}")
    num_predicted = max(1, math.floor(len(ranks) / K))
    return ranks >= len(ranks) - num_predicted


class TwoStreamAttention(nn.Module):
    """One XLNet attention layer run on both streams with the same weights (no FFN, no memory).

    forward(h (B, T, C), g (B, T, C), order) -> (h', g'):

    * content stream: h'_i = h_i + Attn(q = h_i, k = v = h_j for rank[j] <= rank[i]);
    * query stream:   g'_i = g_i + Attn(q = g_i, k = v = h_j for rank[j] <  rank[i]).

    The query stream reads the content stream of the EARLIER positions only, so g'_i never depends
    on token i's content. At the first layer h_i = e(x_i) + p_i and g_i = w + p_i (a learned vector
    w and the position). The position predicted first has no context: its attention term is 0.
    """

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, num_heads, fused=False)

    def forward(self, h: torch.Tensor, g: torch.Tensor, order) -> tuple[torch.Tensor, torch.Tensor]:
        check_type(h, "h", torch.Tensor)
        check_type(g, "g", torch.Tensor)
        content, query = permutation_masks(order)                   # (T, T) each
        if h.shape != g.shape or h.dim() != 3 or h.size(1) != len(content):
            raise ValueError(f"h and g must both be (batch, {len(content)}, d_model), got "
                             f"{tuple(h.shape)} and {tuple(g.shape)}")
        no_context = ~query.any(dim=1)                             # (T,) the first position in the order
        h_new = h + self.attn(h, mask=content)[0]                   # (B, T, C)
        g_att = self.attn(g, h, h, mask=query | no_context[:, None])[0]   # (B, T, C)
        return h_new, g + g_att.masked_fill(no_context[:, None], 0.0)
