"""The chapter-6 exercise checks accept a right answer and reject typical wrong ones."""
import math

import pytest
import torch

from lmcourse.exercises import check


def _cross(x_q, x_kv, key_padding, W_q, W_k, W_v, W_o, num_heads, fill=float("-inf"), scale_width=None):
    B, Tq, d = x_q.shape

    def split(t):
        return t.view(B, t.size(1), num_heads, d // num_heads).transpose(1, 2)

    q, k, v = split(x_q @ W_q), split(x_kv @ W_k), split(x_kv @ W_v)
    scores = q @ k.transpose(-1, -2) / math.sqrt(scale_width or d // num_heads)     # (B, h, Tq, Tk)
    w = scores.masked_fill(key_padding[:, None, None, :], fill).softmax(-1)
    return (w @ v).transpose(1, 2).reshape(B, Tq, d) @ W_o, w


def _sliced_after(x_q, x_kv, key_padding, W_q, W_k, W_v, W_o, num_heads):
    """The wrong 'heads' of correction 8: one attention, its output cut into slices."""
    out, w = _cross(x_q, x_kv, key_padding, W_q, W_k, W_v, W_o, 1)
    return out, w.expand(-1, num_heads, -1, -1)


def test_cross_attention_check():
    assert check("ch06-cross-attention", _cross) == "ch06-cross-attention: all 3 checks passed"
    with pytest.raises(AssertionError, match="heads"):
        check("ch06-cross-attention", _sliced_after)
    with pytest.raises(AssertionError, match="exactly 0"):
        check("ch06-cross-attention", lambda *args: _cross(*args, fill=0.0))
    with pytest.raises(AssertionError, match="sqrt"):
        check("ch06-cross-attention", lambda *args: _cross(*args, scale_width=16))

    def self_attention(x_q, x_kv, key_padding, W_q, W_k, W_v, W_o, num_heads):      # ignores x_kv
        return _cross(x_q, x_q, key_padding[:, :x_q.size(1)], W_q, W_k, W_v, W_o, num_heads)

    with pytest.raises(AssertionError, match="shape"):
        check("ch06-cross-attention", self_attention)

    def no_mask(x_q, x_kv, key_padding, W_q, W_k, W_v, W_o, num_heads):
        return _cross(x_q, x_kv, torch.zeros_like(key_padding), W_q, W_k, W_v, W_o, num_heads)

    with pytest.raises(AssertionError, match="exactly 0"):
        check("ch06-cross-attention", no_mask)


def test_mha_cost_check():
    def good(B, T, d, h):
        return 4 * B * T * d * d + 2 * B * T * T * d, 4 * B * h * T * T

    assert check("ch06-mha-cost", good) == "ch06-mha-cost: all 4 checks passed"
    with pytest.raises(AssertionError, match="projections"):
        check("ch06-mha-cost", lambda B, T, d, h: (2 * B * T * T * d, 4 * B * h * T * T))
    with pytest.raises(AssertionError, match="share out"):
        check("ch06-mha-cost", lambda B, T, d, h: (4 * B * T * d * d + 2 * B * T * T * d * h, 4 * B * h * T * T))
    with pytest.raises(AssertionError, match="every head"):
        check("ch06-mha-cost", lambda B, T, d, h: (4 * B * T * d * d + 2 * B * T * T * d, 4 * B * T * T))

def test_dot_variance_check():
    assert (check("ch06-dot-variance", lambda d, sq, sk: d * sq ** 2 * sk ** 2)
            == "ch06-dot-variance: all 2 checks passed")
    with pytest.raises(AssertionError, match="simulation"):
        check("ch06-dot-variance", lambda d, sq, sk: d * sq * sk)


def test_local_p_check():
    def good(scores, p, D):
        offset = torch.arange(scores.size(-1)) - p[:, None]
        align = scores.masked_fill(offset.abs() > D, float("-inf")).softmax(-1)
        return align * torch.exp(-offset ** 2 / (2 * (D / 2) ** 2))

    assert check("ch06-local-p-weights", good) == "ch06-local-p-weights: all 4 checks passed"

    def whole_softmax(scores, p, D):                # softmax over every position, then the window
        offset = torch.arange(scores.size(-1)) - p[:, None]
        return (scores.softmax(-1) * torch.exp(-offset ** 2 / (2 * (D / 2) ** 2))).masked_fill(offset.abs() > D, 0)

    def renormalised(scores, p, D):
        w = good(scores, p, D)
        return w / w.sum(-1, keepdim=True)

    def sigma_is_D(scores, p, D):
        offset = torch.arange(scores.size(-1)) - p[:, None]
        align = scores.masked_fill(offset.abs() > D, float("-inf")).softmax(-1)
        return align * torch.exp(-offset ** 2 / (2 * D ** 2))

    def no_window(scores, p, D):
        offset = torch.arange(scores.size(-1)) - p[:, None]
        return scores.softmax(-1) * torch.exp(-offset ** 2 / (2 * (D / 2) ** 2))

    with pytest.raises(AssertionError, match="softmax of the window"):
        check("ch06-local-p-weights", whole_softmax)
    with pytest.raises(AssertionError, match="renormalised"):
        check("ch06-local-p-weights", renormalised)
    with pytest.raises(AssertionError, match="softmax of the window"):
        check("ch06-local-p-weights", sigma_is_D)
    with pytest.raises(AssertionError, match="exactly 0"):
        check("ch06-local-p-weights", no_window)
