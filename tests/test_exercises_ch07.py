"""The chapter-7 exercise checks accept a right answer and reject typical wrong ones."""
import math

import pytest
import torch

from lmcourse.exercises import check


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

def _alibi(num_heads, length, reverse=False, sign=-1, causal=True):
    slopes = torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])
    if reverse:
        slopes = slopes.flip(0)
    offset = torch.arange(length)[:, None] - torch.arange(length)[None, :]
    bias = sign * slopes[:, None, None] * offset
    return bias.masked_fill(offset < 0, float("-inf")) if causal else bias


def test_alibi_check():
    assert check("ch07-alibi", _alibi) == "ch07-alibi: all 2 checks passed"


@pytest.mark.parametrize("wrong, message", [
    (lambda h, n: _alibi(h, n, reverse=True), "reverse order"),
    (lambda h, n: _alibi(h, n, sign=1), "sign"),
    (lambda h, n: _alibi(h, n, causal=False), "later keys"),
    (lambda h, n: _alibi(h, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), 0.0), "later keys"),
    (lambda h, n: _alibi(h, n) * 2 ** (8 / h), "count the heads from 1"),              # slopes 2^(-8(h-1)/H)
    (lambda h, n: _alibi(h, n) / 2, "differs"),
    (lambda h, n: _alibi(h, n)[0], "shape"),
])
def test_alibi_check_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check("ch07-alibi", wrong)


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
