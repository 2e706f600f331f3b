"""The chapter 8 exercise checks accept the reference answers and reject typical mistakes."""
import pytest
import torch

from lmcourse.exercises import check


def nucleus(probs, p):
    order = probs.argsort(descending=True)
    before = probs[order].cumsum(0) - probs[order]          # mass of the tokens ranked above
    keep = torch.zeros_like(probs, dtype=torch.bool)
    keep[order] = before < p
    return keep


def cached_step(attn, x_new, past_k, past_v):
    q, k, v = attn.project_qkv(x_new)                       # (B, h, 1, d_head) each
    k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
    weights = (q @ k.transpose(-2, -1) / k.size(-1) ** 0.5).softmax(-1)
    out = (weights @ v).transpose(1, 2).reshape(x_new.shape)
    return attn.out_proj(out), k, v


def test_top_p_reference_passes_and_mistakes_fail():
    assert check("ch08-top-p", nucleus) == "ch08-top-p: all 8 checks passed"
    with pytest.raises(AssertionError, match="nucleus has"):      # keeps only tokens whose cumsum <= p
        check("ch08-top-p", lambda probs, p: nucleus(probs, p) & (probs.sort(descending=True).values.cumsum(0)
                                                                  [probs.argsort(descending=True).argsort()] <= p))
    with pytest.raises(AssertionError, match="bool tensor"):
        check("ch08-top-p", lambda probs, p: nucleus(probs, p).float())


def test_kv_cache_reference_passes_and_mistakes_fail():
    assert check("ch08-kv-cache", cached_step) == "ch08-kv-cache: all 3 checks passed"

    def no_past(attn, x_new, past_k, past_v):                   # forgets the cache
        out, k, v = cached_step(attn, x_new, past_k[:, :, :0], past_v[:, :, :0])
        return out, torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)

    def no_out_proj(attn, x_new, past_k, past_v):
        out, k, v = cached_step(attn, x_new, past_k, past_v)
        return out - attn.out_proj.bias, k, v

    for wrong in (no_past, no_out_proj):
        with pytest.raises(AssertionError, match="differs from a full"):
            check("ch08-kv-cache", wrong)
