"""Checks for the exercises of chapter 6 (attention)."""
import torch

__all__ = ["local_p_weights", "cross_attention", "mha_cost", "dot_variance"]


def _local_p_reference(scores: torch.Tensor, p: torch.Tensor, D: int) -> torch.Tensor:
    s = torch.arange(scores.size(-1), dtype=scores.dtype)
    offset = s - p[:, None]                                                     # (B, S)
    align = scores.masked_fill(offset.abs() > D, float("-inf")).softmax(-1)     # softmax over the window
    return align * torch.exp(-offset ** 2 / (2 * (D / 2) ** 2))


def local_p_weights(candidate) -> int:
    """``candidate(scores (B, S), p (B,), D) -> (B, S)``: Luong et al.'s local-p weights for one decoder
    step: the softmax of the scores over the window |s - p| <= D, times exp(-(s - p)^2 / (2 sigma^2)) with
    sigma = D / 2, exactly 0 outside the window, not renormalised."""
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 12, generator=g) * 2
    p = torch.tensor([5.3, 0.4, 11.0])                                          # inside, at the left edge, at the end
    out = candidate(scores.clone(), p.clone(), 2)
    assert isinstance(out, torch.Tensor) and out.shape == scores.shape, \
        f"expected a tensor of shape {tuple(scores.shape)}, got {getattr(out, 'shape', type(out))}"
    outside = (torch.arange(12) - p[:, None]).abs() > 2
    assert torch.all(out[outside] == 0), "positions farther than D from p must get weight exactly 0"
    expected = _local_p_reference(scores, p, 2)
    assert not torch.allclose(out.sum(-1), torch.ones(3), atol=1e-4), \
        "the weights must not be renormalised after the Gaussian (Luong et al. do not)"
    assert torch.allclose(out, expected, atol=1e-5), \
        "inside the window: the softmax of the window's scores alone, times exp(-(s - p)^2 / (2 sigma^2)), " \
        "sigma = D / 2"
    wide = candidate(scores.clone(), p.clone(), 4)
    assert torch.allclose(wide, _local_p_reference(scores, p, 4), atol=1e-5), \
        "with D = 4 the window and sigma (D / 2 = 2) must both grow"
    return 4


def cross_attention(candidate) -> int:
    """``candidate(x_q (B, Tq, d), x_kv (B, Tk, d), key_padding (B, Tk) bool, W_q, W_k, W_v, W_o, num_heads)
    -> (out (B, Tq, d), weights (B, h, Tq, Tk))``: multi-head cross-attention without biases, each W (d, d)
    applied as ``x @ W``, keys where ``key_padding`` is True getting weight exactly 0; compared with
    ``torch.nn.MultiheadAttention`` holding the same weights and given the same ``key_padding_mask``."""
    g = torch.Generator().manual_seed(0)
    d, B, Tq, Tk = 16, 3, 4, 6
    x_q, x_kv = torch.randn(B, Tq, d, generator=g), torch.randn(B, Tk, d, generator=g)
    W_q, W_k, W_v, W_o = (torch.randn(d, d, generator=g) / d ** 0.5 for _ in range(4))
    key_padding = torch.arange(Tk) >= torch.tensor([6, 4, 2])[:, None]           # (B, Tk): 0, 2 and 4 padded keys
    checks = 0
    for h in (1, 4):
        ref = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True)
        with torch.no_grad():
            ref.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))
            ref.out_proj.weight.copy_(W_o.T)
            expected, expected_w = ref(x_q, x_kv, x_kv, key_padding_mask=key_padding, average_attn_weights=False)
        out, weights = candidate(x_q.clone(), x_kv.clone(), key_padding.clone(), W_q, W_k, W_v, W_o, h)
        assert isinstance(out, torch.Tensor) and out.shape == (B, Tq, d), \
            f"out must have shape {(B, Tq, d)} (one vector per query), got {getattr(out, 'shape', type(out))}"
        assert isinstance(weights, torch.Tensor) and weights.shape == (B, h, Tq, Tk), \
            f"weights must have shape {(B, h, Tq, Tk)} (queries against keys, one map per head), " \
            f"got {getattr(weights, 'shape', type(weights))}"
        assert torch.all(weights[key_padding[:, None, None, :].expand_as(weights)] == 0), \
            "padded keys must get weight exactly 0: fill their scores with -inf before the softmax, not 0"
        assert torch.allclose(weights, expected_w, atol=1e-5), \
            f"with {h} head(s) the attention weights differ from torch's: queries from x_q, keys from x_kv, " \
            "split into heads before the softmax, scores divided by sqrt(d / num_heads)"
        assert torch.allclose(out, expected, atol=1e-5), \
            f"with {h} head(s) the output differs from torch's: values from x_kv, concatenate the heads, " \
            "then multiply by W_o"
        checks += 1
    return checks + 1


def mha_cost(candidate) -> int:
    """``candidate(B, T, d_model, h) -> (multiply_adds, weight_bytes)`` for one multi-head self-attention
    layer's forward pass on the explicit path: the multiply-adds of the four projections, the scores
    and the weighted sum, and the bytes of the float32 attention weights it stores (the weights only,
    not the scores that the explicit path also keeps)."""
    cases = [(1, 8, 16, 1), (2, 8, 16, 4), (3, 100, 64, 8), (1, 512, 512, 8)]
    for B, T, d, h in cases:
        out = candidate(B, T, d, h)
        assert isinstance(out, tuple) and len(out) == 2, f"return (multiply_adds, weight_bytes), got {out!r}"
        macs, weight_bytes = (int(v) for v in out)
        assert weight_bytes == 4 * B * h * T * T, \
            f"B={B}, T={T}, h={h}: count the weights only: every head of every sequence stores a (T, T) " \
            "table of 4-byte floats"
        score_macs = 2 * B * T * T * d
        if macs != 4 * B * T * d * d + score_macs:
            if macs == score_macs:
                raise AssertionError("the four projections (queries, keys, values and the output) cost too")
            if macs == 4 * B * T * d * d + score_macs * h:
                raise AssertionError("the heads share out d_model: the score products cost T * T * (d / h) per head")
            raise AssertionError(f"B={B}, T={T}, d_model={d}, h={h}: count the four (d, d) projections of every "
                                 "token, Q K^T and the weighted sum of the values")
    return len(cases)


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
