import pytest
import torch

from lmcourse import set_seed
from lmcourse.attention import MultiHeadAttention, causal_mask
from lmcourse.xlnet import order_ranks, permutation_masks, prediction_targets, sample_order


def test_paper_example_order_3_2_4_1():
    # XLNet's Figure 1 uses the order 3 -> 2 -> 4 -> 1 (1-based): x_3 sees nothing, x_1 sees all others
    content, query = permutation_masks([2, 1, 3, 0])
    assert query[2].sum() == 0 and content[2].tolist() == [False, False, True, False]
    assert query[1].tolist() == [False, False, True, False]
    assert query[0].tolist() == [False, True, True, True]
    assert not query.diagonal().any() and content.diagonal().all()
    assert torch.equal(content, query | torch.eye(4, dtype=torch.bool))


def test_identity_order_is_causal():
    content, query = permutation_masks(torch.arange(6))
    assert torch.equal(content, causal_mask(6))
    assert torch.equal(query, causal_mask(6).tril(-1))


def test_ranks_invert_order():
    order = sample_order(9, torch.Generator().manual_seed(0))
    ranks = order_ranks(order)
    assert torch.equal(order[ranks], torch.arange(9))


def test_masked_attention_equals_causal_attention_on_reordered_input():
    # correction 16: masks on the unshuffled sequence = a causal model reading the tokens in the
    # factorisation order, each token carrying ITS OWN position (tolerance 1e-6)
    set_seed(0)
    T, C = 7, 16
    tokens, positions = torch.randn(1, T, C), torch.randn(1, T, C)
    x = tokens + positions
    mha = MultiHeadAttention(C, 4, fused=False).eval()
    order = sample_order(T, torch.Generator().manual_seed(3))
    content, _ = permutation_masks(order)
    out_masked, _ = mha(x, mask=content)
    out_reordered, _ = mha(x[:, order], mask=causal_mask(T))
    torch.testing.assert_close(out_masked[:, order], out_reordered, atol=1e-6, rtol=1e-6)


def test_prediction_targets_tail_of_order():
    order = torch.tensor([5, 0, 3, 1, 4, 2])
    assert prediction_targets(order, K=3).tolist() == [False, False, True, False, True, False]
    assert prediction_targets(order, K=100).sum() == 1


@pytest.mark.parametrize("order, error", [([0, 0, 1], ValueError), ([[0, 1]], ValueError),
                                          ([0.0, 1.0], TypeError), ([], ValueError)])
def test_bad_orders(order, error):
    with pytest.raises(error, match="order"):
        permutation_masks(order)


def test_bad_arguments():
    with pytest.raises(ValueError, match="length"):
        sample_order(0)
    with pytest.raises(ValueError, match="K"):
        prediction_targets([1, 0], K=0.5)


def _two_stream(seed=0, T=5, C=8):
    from lmcourse.xlnet import TwoStreamAttention
    torch.manual_seed(seed)
    layer = TwoStreamAttention(C, 2).eval()
    h, g = torch.randn(1, T, C), torch.randn(1, T, C)
    return layer, h, g


def test_two_stream_query_never_sees_its_own_content():
    from lmcourse.xlnet import order_ranks
    layer, h, g = _two_stream()
    order = [3, 0, 4, 1, 2]
    ranks = order_ranks(order)
    _, g1 = layer(h, g, order)
    for i in range(5):
        for j in range(5):
            h2 = h.clone()
            h2[0, j] += 1.0                                   # change token j's content
            _, g2 = layer(h2, g, order)
            changed = not torch.allclose(g1[0, i], g2[0, i], atol=1e-6)
            # g_i depends on x_j exactly when j comes before i in the factorisation order
            assert changed == bool(ranks[j] < ranks[i]), (i, j)


def test_two_stream_content_sees_itself_and_earlier_positions():
    from lmcourse.xlnet import order_ranks
    layer, h, g = _two_stream(1)
    order = [2, 4, 0, 1, 3]
    ranks = order_ranks(order)
    h1, _ = layer(h, g, order)
    for j in range(5):
        h2 = h.clone()
        h2[0, j] += 1.0
        out, _ = layer(h2, g, order)
        for i in range(5):
            changed = not torch.allclose(h1[0, i], out[0, i], atol=1e-6)
            assert changed == bool(ranks[j] <= ranks[i]), (i, j)


def test_two_stream_first_position_gets_no_context_and_checks_shapes():
    layer, h, g = _two_stream(2)
    _, g1 = layer(h, g, [1, 0, 2, 3, 4])
    assert torch.equal(g1[0, 1], g[0, 1])                      # nothing to read: unchanged
    assert torch.isfinite(g1).all()
    with pytest.raises(ValueError, match="h and g"):
        layer(h, g[:, :4], [1, 0, 2, 3, 4])
