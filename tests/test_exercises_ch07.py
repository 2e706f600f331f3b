"""The chapter-7 exercise checks accept a right answer and reject typical wrong ones."""
import math

import pytest
import torch

from lmcourse.attention import causal_mask, padding_mask
from lmcourse.exercises import check


def _layer_norm(x, norm):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def _attention(x, source, attn, keep=None):
    """Multi-head attention from the projections: queries from x (B, T, d), keys and values from source
    (B, S, d); keep (B, 1 or T, S) bool or None."""
    heads = attn.num_heads
    q, k, v = (attn._split(p(t)) for p, t in ((attn.q_proj, x), (attn.k_proj, source), (attn.v_proj, source)))
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
    if keep is not None:
        scores = scores.masked_fill(~keep[:, None], float("-inf"))
    w = scores.softmax(-1)
    return attn.out_proj((w @ v).transpose(1, 2).reshape(x.size(0), x.size(1), heads * q.size(-1)))


def _ffn(x, ff):
    return torch.relu(x @ ff.linear1.weight.T + ff.linear1.bias) @ ff.linear2.weight.T + ff.linear2.bias


def _decoder_layer(y, memory, src_keep, layer, causal=True, padding=True, norm_first=None):
    T = y.size(1)
    self_keep = torch.ones(T, T, dtype=torch.bool).tril().expand(y.size(0), T, T) if causal else None
    cross_keep = src_keep[:, None, :] if padding else None
    ln = _layer_norm
    if layer.norm_first if norm_first is None else norm_first:
        y = y + _attention(ln(y, layer.norm1), ln(y, layer.norm1), layer.self_attn, self_keep)
        y = y + _attention(ln(y, layer.norm2), memory, layer.cross_attn, cross_keep)
        return y + _ffn(ln(y, layer.norm3), layer.ff)
    y = ln(y + _attention(y, y, layer.self_attn, self_keep), layer.norm1)
    y = ln(y + _attention(y, memory, layer.cross_attn, cross_keep), layer.norm2)
    return ln(y + _ffn(y, layer.ff), layer.norm3)


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

def test_decoder_layer_check():
    assert check("ch07-decoder-layer", _decoder_layer) == "ch07-decoder-layer: all 2 checks passed"


@pytest.mark.parametrize("wrong, message", [
    (lambda y, m, k, layer: _decoder_layer(y, m, k, layer, causal=False), "causal mask"),
    (lambda y, m, k, layer: _decoder_layer(y, m, k, layer, padding=False), "padded source"),
    (lambda y, m, k, layer: _decoder_layer(y, m, k, layer, norm_first=not layer.norm_first), "wrong side"),
    (lambda y, m, k, layer: _decoder_layer(y, y, k[:, :1].expand(-1, y.size(1)), layer), "differs"),  # cross on y
    (lambda y, m, k, layer: layer(y, m, causal_mask(y.size(1)), padding_mask(k))[0], "compute the attention"),
    (lambda y, m, k, layer: y[:, 0], "shape"),
])
def test_decoder_layer_check_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch07-decoder-layer", wrong)


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
