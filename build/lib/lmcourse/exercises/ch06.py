"""Checks for the exercises of chapter 6 (attention)."""
import torch

__all__ = ["masked_softmax"]


def masked_softmax(candidate) -> int:
    """``candidate(scores, mask)``: softmax over the last axis where blocked entries (mask False)
    get weight exactly 0; scores (..., Tk), mask bool broadcastable to scores."""
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(2, 3, 5, generator=g) * 3
    mask = torch.rand(2, 3, 5, generator=g) > 0.4
    mask[..., 0] = True                                   # every row keeps at least one key
    out = candidate(scores.clone(), mask)
    assert isinstance(out, torch.Tensor) and out.shape == scores.shape, \
        f"expected a tensor of shape {tuple(scores.shape)}, got {getattr(out, 'shape', type(out))}"
    assert torch.all(out[~mask] == 0), \
        "blocked positions must get weight exactly 0: fill their scores with -inf before the softmax, not 0"
    assert torch.allclose(out.sum(-1), torch.ones(2, 3), atol=1e-6), "every row must sum to 1"
    expected = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    assert torch.allclose(out, expected, atol=1e-6), \
        "the unblocked weights must be the softmax of the unblocked scores alone"
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    out = candidate(torch.zeros(1, 4, 4), causal)
    assert torch.allclose(out[0, 3], torch.full((4,), 0.25)) and torch.allclose(out[0, 1, :2], torch.full((2,), 0.5)), \
        "with equal scores and a causal mask, row i must spread its weight evenly over i + 1 keys " \
        "(the mask must broadcast over the batch)"
    return 4
