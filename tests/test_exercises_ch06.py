"""The chapter-6 exercise checks accept a right answer and reject typical wrong ones."""
import math

import pytest
import torch

from lmcourse.exercises import check


def _mha(x, W_q, W_k, W_v, W_o, num_heads):
    B, T, d = x.shape

    def split(t):
        return t.view(B, T, num_heads, d // num_heads).transpose(1, 2)

    q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)
    w = (q @ k.transpose(-1, -2) / math.sqrt(d // num_heads)).softmax(-1)
    return (w @ v).transpose(1, 2).reshape(B, T, d) @ W_o, w


def _sliced_after(x, W_q, W_k, W_v, W_o, num_heads):
    """The wrong 'heads' of correction 8: one attention, its output cut into slices."""
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    w = (q @ k.transpose(-1, -2) / math.sqrt(x.size(-1))).softmax(-1)
    return (w @ v) @ W_o, w[:, None].expand(-1, num_heads, -1, -1)


def test_multi_head_attention_check():
    assert check("ch06-multi-head-attention", _mha) == "ch06-multi-head-attention: all 3 checks passed"
    with pytest.raises(AssertionError, match="heads"):
        check("ch06-multi-head-attention", _sliced_after)


def test_additive_score_check():
    def good(q, k, W, U, v):
        return torch.tanh((q @ W.T)[:, :, None] + (k @ U.T)[:, None]) @ v

    def no_tanh(q, k, W, U, v):
        return ((q @ W.T)[:, :, None] + (k @ U.T)[:, None]) @ v

    assert check("ch06-additive-score", good) == "ch06-additive-score: all 2 checks passed"
    with pytest.raises(AssertionError, match="tanh"):
        check("ch06-additive-score", no_tanh)


def test_dot_variance_check():
    assert (check("ch06-dot-variance", lambda d, sq, sk: d * sq ** 2 * sk ** 2)
            == "ch06-dot-variance: all 2 checks passed")
    with pytest.raises(AssertionError, match="simulation"):
        check("ch06-dot-variance", lambda d, sq, sk: d * sq * sk)


def test_masked_softmax_check():
    def good(scores, mask):
        return scores.masked_fill(~mask, float("-inf")).softmax(-1)

    assert check("ch06-masked-softmax", good) == "ch06-masked-softmax: all 4 checks passed"
    with pytest.raises(AssertionError, match="exactly 0"):
        check("ch06-masked-softmax", lambda s, m: s.masked_fill(~m, 0.0).softmax(-1))
