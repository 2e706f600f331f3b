"""Positional encodings: the sinusoid formula, the rotation property, learned tables, errors."""
import math

import pytest
import torch

from lmcourse import set_seed
from lmcourse.positional import (
    LearnedPositionalEncoding,
    SinusoidalPositionalEncoding,
    relative_rotation,
    sinusoidal_encoding,
)


def test_formula_alternates_over_dimensions():
    pe = sinusoidal_encoding(50, 8)
    p, i = 7, 2
    angle = p / 10000 ** (2 * i / 8)
    assert math.isclose(pe[p, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
    assert math.isclose(pe[p, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)
    assert torch.all(pe[0, 0::2] == 0) and torch.all(pe[0, 1::2] == 1)
    assert torch.allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(50, 4), atol=1e-6)


@pytest.mark.parametrize("offset", [1, 3, 17, -5])
def test_offset_is_a_rotation(offset):
    pe = sinusoidal_encoding(100, 16)
    m = relative_rotation(offset, 16)
    lo, hi = max(0, -offset), min(100, 100 - offset)
    assert torch.allclose(pe[lo + offset:hi + offset], pe[lo:hi] @ m.T, atol=1e-5)
    assert torch.allclose(m @ m.T, torch.eye(16), atol=1e-6)           # orthogonal


def test_modules_add_encodings():
    set_seed(0, num_threads=1)
    x = torch.randn(2, 5, 8)
    sin = SinusoidalPositionalEncoding(8, max_len=10)
    assert torch.allclose(sin(x) - x, sinusoidal_encoding(5, 8).expand(2, 5, 8), atol=1e-6)
    assert len(list(sin.parameters())) == 0
    learned = LearnedPositionalEncoding(8, max_len=10)
    assert torch.allclose(learned(x) - x, learned.table.weight[:5].expand(2, 5, 8), atol=1e-6)
    assert sum(p.numel() for p in learned.parameters()) == 80


def test_bad_inputs():
    with pytest.raises(ValueError, match="even"):
        sinusoidal_encoding(10, 7)
    with pytest.raises(ValueError, match="max_len"):
        SinusoidalPositionalEncoding(8, max_len=4)(torch.zeros(1, 5, 8))
    with pytest.raises(ValueError, match="batch, time, 8"):
        LearnedPositionalEncoding(8, max_len=4)(torch.zeros(1, 3, 6))
    with pytest.raises(TypeError, match="max_len"):
        sinusoidal_encoding(2.5, 8)


def test_exercise_checker_sinusoidal():
    from lmcourse.exercises import check
    assert check("ch07-sinusoidal-encoding", sinusoidal_encoding).endswith("all 4 checks passed")

    def swapped(max_len, d_model):          # sin/cos alternating over positions: correction 9
        pe = sinusoidal_encoding(max_len, d_model)
        pe[1::2] = pe[1::2].roll(1, dims=1)
        return pe
    with pytest.raises(AssertionError):
        check("ch07-sinusoidal-encoding", swapped)
    with pytest.raises(AssertionError, match="shape"):
        check("ch07-sinusoidal-encoding", lambda n, d: torch.zeros(d, n))
