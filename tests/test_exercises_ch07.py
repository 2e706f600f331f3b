"""The chapter-7 exercise checks accept a right answer and reject typical wrong ones."""
import math

import pytest
import torch

from lmcourse.exercises import check


def _mha(query, key, value, in_w, in_b, out_w, out_b, num_heads, key_padding_mask=None):
    B, T, d = query.shape
    S = key.size(1)
    W_q, W_k, W_v = in_w.chunk(3)
    b_q, b_k, b_v = in_b.chunk(3)

    def split(t, n):
        return t.view(B, n, num_heads, d // num_heads).transpose(1, 2)

    q, k, v = split(query @ W_q.T + b_q, T), split(key @ W_k.T + b_k, S), split(value @ W_v.T + b_v, S)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d // num_heads)
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
    w = scores.softmax(-1)
    return (w @ v).transpose(1, 2).reshape(B, T, d) @ out_w.T + out_b, w


def _layer_norm(x, norm):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def _attention(x, attn, heads):
    w_in = torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight])
    b_in = torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias])
    return _mha(x, x, x, w_in, b_in, attn.out_proj.weight, attn.out_proj.bias, heads)[0]


def _ffn(x, ff):
    return torch.relu(x @ ff.linear1.weight.T + ff.linear1.bias) @ ff.linear2.weight.T + ff.linear2.bias


def _encoder_layer(x, layer, heads=4):
    if layer.norm_first:
        x = x + _attention(_layer_norm(x, layer.norm1), layer.self_attn, heads)
        return x + _ffn(_layer_norm(x, layer.norm2), layer.ff)
    x = _layer_norm(x + _attention(x, layer.self_attn, heads), layer.norm1)
    return _layer_norm(x + _ffn(x, layer.ff), layer.norm2)


def test_multi_head_attention_check():
    assert check("ch07-multi-head-attention", _mha) == "ch07-multi-head-attention: all 3 checks passed"


def test_multi_head_attention_check_rejects_wrong_answers():
    def no_mask(*args):
        return _mha(*args[:-1], None)

    def unscaled(query, key, value, in_w, in_b, out_w, out_b, num_heads, mask=None):
        return _mha(query * math.sqrt(query.size(-1) // num_heads), key, value, in_w, in_b, out_w, out_b,
                    num_heads, mask)

    with pytest.raises(AssertionError, match="padding"):
        check("ch07-multi-head-attention", no_mask)
    with pytest.raises(AssertionError, match="num_heads"):
        check("ch07-multi-head-attention", lambda *a: _mha(*a[:7], 1, a[8]))   # one head only
    with pytest.raises(AssertionError):
        check("ch07-multi-head-attention", unscaled)


def test_encoder_layer_check():
    assert check("ch07-encoder-layer", _encoder_layer) == "ch07-encoder-layer: all 2 checks passed"


def test_encoder_layer_check_rejects_wrong_answers():
    def always_post_ln(x, layer):
        layer.norm_first = False
        try:
            return _encoder_layer(x, layer)
        finally:
            layer.norm_first = True

    def no_residual(x, layer, heads=4):
        x = _layer_norm(_attention(x, layer.self_attn, heads), layer.norm1)
        return _layer_norm(x + _ffn(x, layer.ff), layer.norm2)

    with pytest.raises(AssertionError, match="pre-LN"):
        check("ch07-encoder-layer", always_post_ln)
    with pytest.raises(AssertionError, match="post-LN"):
        check("ch07-encoder-layer", no_residual)
    with pytest.raises(AssertionError, match="shape"):
        check("ch07-encoder-layer", lambda x, layer: x[:, 0])


def _beam(step, bos, eos, beam_size, max_len, stop_at_eos=True):
    beams, finished = [([bos], 0.0)], []
    for _ in range(max_len):
        log_probs = step([seq for seq, _ in beams]).tolist()
        candidates = sorted(((seq + [t], total + lp) for (seq, total), row in zip(beams, log_probs)
                             for t, lp in enumerate(row)), key=lambda c: -c[1])[:beam_size]
        if stop_at_eos:
            finished += [c for c in candidates if c[0][-1] == eos]
            candidates = [c for c in candidates if c[0][-1] != eos]
        beams = candidates
        if not beams:
            break
    return sorted(finished + beams, key=lambda h: -h[1])[:beam_size]


def test_beam_search_check_accepts_a_beam_search():
    assert check("ch07-beam-search", _beam) == "ch07-beam-search: all 5 checks passed"


@pytest.mark.parametrize("wrong", [
    lambda step, bos, eos, k, n: _beam(step, bos, eos, 1, n),                    # greedy, whatever the beam
    lambda step, bos, eos, k, n: _beam(step, bos, eos, k, n, stop_at_eos=False),  # extends past EOS
])
def test_beam_search_check_rejects_greedy_and_runs_past_eos(wrong):
    with pytest.raises(AssertionError):
        check("ch07-beam-search", wrong)
