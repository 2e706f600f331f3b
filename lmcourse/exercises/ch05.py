"""Checks for the exercises of chapter 5 (ELMo)."""
import torch

from lmcourse import elmo
from lmcourse.elmo import ScalarMix

__all__ = ["scalar_mix", "scalar_mix_norm", "reverse_padded", "nearest_centroid"]


def _against_scalar_mix(candidate, layers: torch.Tensor, s: torch.Tensor, layer_norm: bool):
    """(candidate's mix, :class:`ScalarMix`'s) of ``layers`` (L, ..., D) with scalars ``s`` and gamma 1.5,
    after checking that the candidate drops the layer dimension."""
    reference = ScalarMix(len(s), layer_norm=layer_norm)
    with torch.no_grad():
        reference.scalars.copy_(s)
        reference.gamma.fill_(1.5)
        expected = reference(layers)
        out = candidate(layers, s.clone(), 1.5)
    assert out.shape == expected.shape, (f"the result must drop the layer dimension: "
                                         f"expected {tuple(expected.shape)}, got {tuple(out.shape)}")
    return out, expected


def scalar_mix(candidate) -> int:
    """``candidate(layers (L, ..., D), s (L,), gamma) -> (..., D)`` vs :class:`lmcourse.elmo.ScalarMix`."""
    torch.manual_seed(0)
    layers = torch.randn(3, 2, 4, 5)
    s = torch.tensor([0.5, -1.0, 2.0])
    out, expected = _against_scalar_mix(candidate, layers, s, layer_norm=False)
    plain = 1.5 * (s[:, None, None, None] * layers).sum(0)
    assert not torch.allclose(out, plain, atol=1e-5), "normalise the scalars with a softmax before weighting"
    assert torch.allclose(out, expected, atol=1e-5), "expected gamma * sum_j softmax(s)_j * layers[j]"
    with torch.no_grad():
        equal = candidate(layers, torch.zeros(3), 1.0)
    assert torch.allclose(equal, layers.mean(0), atol=1e-5), \
        "with s = 0 and gamma = 1 the mix is the mean of the layers"
    return 3


def scalar_mix_norm(candidate) -> int:
    """``candidate(layers (L, ..., D), s (L,), gamma) -> (..., D)``, each layer layer-normalised over D first,
    vs :class:`lmcourse.elmo.ScalarMix` with ``layer_norm=True``."""
    torch.manual_seed(0)
    layers = torch.randn(3, 2, 4, 5) * torch.tensor([1.0, 10.0, 0.1]).view(3, 1, 1, 1) + 3
    s = torch.tensor([0.5, -1.0, 2.0])
    out, expected = _against_scalar_mix(candidate, layers, s, layer_norm=True)
    plain = 1.5 * (s.softmax(0)[:, None, None, None] * layers).sum(0)
    assert not torch.allclose(out, plain, atol=1e-4), "normalise each layer (layer_norm over the last dimension) first"
    assert torch.allclose(out, expected, atol=1e-4), \
        "expected gamma * sum_j softmax(s)_j * layer_norm(layers[j]), the norm over the last dimension only"
    with torch.no_grad():
        scaled = candidate(layers * 7.0, s.clone(), 1.5)
    assert torch.allclose(scaled, expected, atol=1e-2), "after layer norm, scaling the layers must not change the mix"
    return 3


def reverse_padded(candidate) -> int:
    """``candidate(x (B, T, ...), lengths (B,)) -> (B, T, ...)`` vs :func:`lmcourse.elmo.reverse_padded`."""
    x = torch.arange(2 * 5).view(2, 5)
    lengths = torch.tensor([3, 5])
    out = candidate(x.clone(), lengths)
    assert tuple(out.shape) == (2, 5), f"the shape must not change: expected (2, 5), got {tuple(out.shape)}"
    assert torch.equal(out[:, 3:][0], x[0, 3:]), "padding (positions at or after a row's length) must stay at the end"
    assert torch.equal(out, elmo.reverse_padded(x, lengths)), \
        "each row must be reversed within its first lengths[b] positions"
    y = torch.randn(3, 4, 2)
    ly = torch.tensor([1, 4, 2])
    assert torch.equal(candidate(y.clone(), ly), elmo.reverse_padded(y, ly)), \
        "it must also work with a feature dimension (B, T, D)"
    return 3


def nearest_centroid(candidate) -> int:
    """``candidate(train_x (N, D), train_y (N,), test_x (M, D)) -> predicted classes (M,)``: the nearest class mean."""
    g = torch.Generator().manual_seed(0)
    train_x = torch.cat([torch.randn(20, 3, generator=g) + 2, torch.randn(10, 3, generator=g) - 2])
    train_y = torch.cat([torch.zeros(20), torch.ones(10)]).long()
    test_x = torch.randn(15, 3, generator=g) * 3
    centroids = torch.stack([train_x[train_y == c].mean(0) for c in (0, 1)])
    expected = torch.cdist(test_x, centroids).argmin(1)
    out = torch.as_tensor(candidate(train_x, train_y, test_x)).long()
    assert tuple(out.shape) == (15,), f"one class per test row: expected shape (15,), got {tuple(out.shape)}"
    assert torch.equal(out, expected), \
        "predict the class whose mean training vector is nearest (Euclidean) to each test vector"
    return 2
