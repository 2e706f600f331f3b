"""Checks for the exercises of chapter 6 (attention)."""
import torch

from lmcourse.attention import AdditiveScore

__all__ = ["masked_softmax", "multi_head_attention", "additive_score", "dot_variance"]


def masked_softmax(candidate) -> int:
    """``candidate(scores, mask)``: softmax over the last axis where blocked entries (mask False)
    get weight exactly 0; scores (..., Tk), mask bool broadcastable to scores."""
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(2, 3, 5, generator=g) * 3
    mask = torch.rand(2, 3, 5, generator=g) > 0.4
    mask[..., 0] = True                                   # every row keeps at least one key
    out = candidate(scores.clone(), mask)
    assert isinstance(out, torch.Tensor) and out.shape == scores.shape, \
        f"expected a tensor of shape {tuple(scores.shape)}, got {getattr(out, 'shape', type(out))}"
    assert torch.all(out[~mask] == 0), \
        "blocked positions must get weight exactly 0: fill their scores with -inf before the softmax, not 0"
    assert torch.allclose(out.sum(-1), torch.ones(2, 3), atol=1e-6), "every row must sum to 1"
    expected = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    assert torch.allclose(out, expected, atol=1e-6), \
        "the unblocked weights must be the softmax of the unblocked scores alone"
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    out = candidate(torch.zeros(1, 4, 4), causal)
    assert torch.allclose(out[0, 3], torch.full((4,), 0.25)) and torch.allclose(out[0, 1, :2], torch.full((2,), 0.5)), \
        "with equal scores and a causal mask, row i must spread its weight evenly over i + 1 keys " \
        "(the mask must broadcast over the batch)"
    return 4


def multi_head_attention(candidate) -> int:
    """``candidate(x, W_q, W_k, W_v, W_o, num_heads) -> (out (B, T, d), weights (B, h, T, T))``:
    multi-head self-attention without biases, x (B, T, d), each W (d, d) applied as ``x @ W``;
    compared with ``torch.nn.MultiheadAttention`` holding the same weights."""
    g = torch.Generator().manual_seed(0)
    d, B, T = 16, 2, 5
    x = torch.randn(B, T, d, generator=g)
    W_q, W_k, W_v, W_o = (torch.randn(d, d, generator=g) / d ** 0.5 for _ in range(4))
    checks = 0
    for h in (1, 4):
        ref = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True)
        with torch.no_grad():
            ref.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))
            ref.out_proj.weight.copy_(W_o.T)
            expected, expected_w = ref(x, x, x, average_attn_weights=False)
        out, weights = candidate(x.clone(), W_q, W_k, W_v, W_o, h)
        assert isinstance(out, torch.Tensor) and out.shape == (B, T, d), \
            f"out must have shape {(B, T, d)}, got {getattr(out, 'shape', type(out))}"
        assert isinstance(weights, torch.Tensor) and weights.shape == (B, h, T, T), \
            f"weights must have shape {(B, h, T, T)} (one map per head), got {getattr(weights, 'shape', type(weights))}"
        assert torch.allclose(weights, expected_w, atol=1e-5), \
            f"with {h} head(s) the attention weights differ from torch's: split the projected Q and K " \
            "into heads before the softmax, and divide the scores by sqrt(d / num_heads)"
        assert torch.allclose(out, expected, atol=1e-5), \
            f"with {h} head(s) the output differs from torch's: concatenate the heads, then multiply by W_o"
        checks += 1
    return checks + 1


def additive_score(candidate) -> int:
    """``candidate(query (B, Tq, d_q), keys (B, Tk, d_k), W (h, d_q), U (h, d_k), v (h,))`` ->
    scores (B, Tq, Tk) with score[b, i, j] = v . tanh(W query[b, i] + U keys[b, j])."""
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 3, 6, generator=g), torch.randn(2, 4, 5, generator=g)
    ref = AdditiveScore(6, 5, 7)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
        expected = ref(q, k)
    out = candidate(q.clone(), k.clone(), ref.W.weight.detach().clone(), ref.U.weight.detach().clone(),
                    ref.v.weight.detach()[0].clone())
    assert isinstance(out, torch.Tensor) and out.shape == (2, 3, 4), \
        f"scores must have shape (B, Tq, Tk) = (2, 3, 4), got {getattr(out, 'shape', type(out))}"
    assert torch.allclose(out, expected, atol=1e-5), \
        "scores differ from v^T tanh(W q + U k): project q and k first, add them on the (Tq, Tk) grid " \
        "(query[:, :, None] + keys[:, None]), then tanh and the dot product with v"
    return 2


def dot_variance(candidate) -> int:
    """``candidate(d_k, sigma_q, sigma_k) -> float``: Var[q . k] for q, k in R^{d_k} with
    independent components of mean 0 and standard deviations sigma_q and sigma_k; compared with
    the exact value and with a simulation."""
    g = torch.Generator().manual_seed(0)
    for d_k, sq, sk in ((64, 1.0, 1.0), (16, 2.0, 0.5), (8, 3.0, 1.0)):
        got = float(candidate(d_k, sq, sk))
        q = torch.randn(20000, d_k, generator=g, dtype=torch.float64) * sq
        k = torch.randn(20000, d_k, generator=g, dtype=torch.float64) * sk
        simulated = (q * k).sum(-1).var().item()
        assert abs(got - simulated) < 0.05 * simulated, \
            f"d_k={d_k}, sigma_q={sq}, sigma_k={sk}: you give {got:.3g}, a simulation gives {simulated:.3g}; " \
            "q . k is a sum of d_k independent products, each of variance E[q_i^2] E[k_i^2]"
    assert abs(float(candidate(64, 1.0, 1.0)) - 64) < 1e-9, "with unit variances the answer is d_k exactly"
    return 2
