"""Checks for the exercises of chapter 5 (ELMo)."""
import torch

from lmcourse.elmo import ScalarMix

__all__ = ["scalar_mix"]


def scalar_mix(candidate) -> int:
    """``candidate(layers (L, ..., D), s (L,), gamma) -> (..., D)`` vs :class:`lmcourse.elmo.ScalarMix`."""
    torch.manual_seed(0)
    layers = torch.randn(3, 2, 4, 5)
    s = torch.tensor([0.5, -1.0, 2.0])
    reference = ScalarMix(3)
    with torch.no_grad():
        reference.scalars.copy_(s)
        reference.gamma.fill_(1.5)
        expected = reference(layers)
        out = candidate(layers, s.clone(), 1.5)
    assert out.shape == expected.shape, f"the result must drop the layer dimension: expected {tuple(expected.shape)}, got {tuple(out.shape)}"
    plain = 1.5 * (s[:, None, None, None] * layers).sum(0)
    assert not torch.allclose(out, plain, atol=1e-5), "normalise the scalars with a softmax before weighting"
    assert torch.allclose(out, expected, atol=1e-5), "expected gamma * sum_j softmax(s)_j * layers[j]"
    with torch.no_grad():
        equal = candidate(layers, torch.zeros(3), 1.0)
    assert torch.allclose(equal, layers.mean(0), atol=1e-5), "with s = 0 and gamma = 1 the mix is the mean of the layers"
    return 3
