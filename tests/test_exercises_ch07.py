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


def _decode_step(model, token, position, memory, src_mask, cache, append=True, place=True):
    y = model.tgt_embed(token[:, None]) * math.sqrt(model.config.d_model)
    y = y + model.tgt_pos.pe[position if place else 0]                                  # (B, 1, d)
    new_cache = []
    for layer_index, layer in enumerate(model.decoder_layers):
        attn = layer.self_attn
        q, k, v = (attn._split(proj(y)) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
        if cache is not None and append:
            k, v = torch.cat([cache[layer_index][0], k], 2), torch.cat([cache[layer_index][1], v], 2)
        new_cache.append((k, v))
        w = (q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))).softmax(-1)
        y = layer.norm1(y + attn.out_proj((w @ v).transpose(1, 2).reshape(y.shape)))
        y = layer.norm2(y + layer.cross_attn(y, memory, memory, mask=src_mask)[0])
        y = layer.norm3(y + layer.ff(y))
    return model.out_proj(model.decoder_norm(y))[:, 0], new_cache


def test_kv_cache_check():
    assert check("ch07-kv-cache", _decode_step) == "ch07-kv-cache: all 2 checks passed"


def test_kv_cache_check_rejects_wrong_answers():
    with pytest.raises(AssertionError, match="append"):
        check("ch07-kv-cache", lambda *a: _decode_step(*a, append=False))      # forgets to append
    with pytest.raises(AssertionError, match="positional encoding"):
        check("ch07-kv-cache", lambda *a: _decode_step(*a, place=False))       # every token at position 0

    def no_cache(model, token, position, memory, src_mask, cache):             # returns a cache of token ids
        ids = token[:, None] if cache is None else torch.cat([cache[0], token[:, None]], 1)
        return model.decode(ids, memory, src_mask)[0][:, -1], [ids, ids]

    with pytest.raises(AssertionError, match="not the token ids"):
        check("ch07-kv-cache", no_cache)

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
