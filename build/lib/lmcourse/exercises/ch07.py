"""Checks for the exercises of chapter 7 (the Transformer)."""
import math

import torch

__all__ = ["sinusoidal_encoding"]


def sinusoidal_encoding(candidate) -> int:
    """``candidate(max_len, d_model)`` -> the (max_len, d_model) table of Vaswani et al. (2017)."""
    pe = candidate(20, 8)
    assert isinstance(pe, torch.Tensor) and tuple(pe.shape) == (20, 8), \
        f"expected a tensor of shape (20, 8), got {getattr(pe, 'shape', type(pe))}"
    pe = pe.double()
    assert torch.allclose(pe[0], torch.tensor([0.0, 1, 0, 1, 0, 1, 0, 1], dtype=torch.float64), atol=1e-6), \
        "position 0 must be (sin 0, cos 0, ...) = (0, 1, 0, 1, ...): sin on even dimensions, cos on odd ones"
    assert abs(pe[3, 0].item() - math.sin(3)) < 1e-5 and abs(pe[3, 1].item() - math.cos(3)) < 1e-5, \
        "dimensions 0 and 1 must be sin(p) and cos(p) (frequency 1)"
    angle = 5 / 10000 ** (4 / 8)
    assert abs(pe[5, 4].item() - math.sin(angle)) < 1e-5 and abs(pe[5, 5].item() - math.cos(angle)) < 1e-5, \
        "dimension 2i must be sin(p / 10000^(2i/d_model)) and 2i+1 its cosine; check the exponent"
    assert torch.allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(20, 4, dtype=torch.float64), atol=1e-5), \
        "each (sin, cos) pair must share one angle"
    return 4
