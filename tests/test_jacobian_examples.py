"""The fixed 2 x 2 matrices of chapter 4's Correction 5: what their arithmetic shows, checked once here."""
import torch

from lmcourse.gradients import spectral_radius


def _norm(matrix: torch.Tensor) -> float:
    return torch.linalg.matrix_norm(matrix, ord=2).item()


def test_a_matrix_with_eigenvalues_one_half_has_powers_above_one():
    A = torch.tensor([[0.5, 4.0], [0.0, 0.5]])
    assert abs(spectral_radius(A) - 0.5) < 1e-6
    assert min(_norm(torch.linalg.matrix_power(A, k)) for k in (1, 2, 5)) > 1
    assert _norm(torch.linalg.matrix_power(A, 20)) < 1e-3


def test_radius_below_one_yet_the_jacobian_product_explodes():
    W = 0.9 * torch.tensor([[1.0, 2.0], [-2.0, -3.0]])
    D = torch.diag(torch.tensor([0.01, 1.0]))
    assert abs(spectral_radius(W) - 0.9) < 1e-3 and abs(_norm(W) - 3.81) < 0.01
    five, ten = (_norm(torch.linalg.matrix_power(D @ W, k)) for k in (5, 10))
    assert 160 < five < 180 and 2.3e4 < ten < 2.5e4
    growth = (ten / five) ** (1 / 5)                    # per step, from k = 5 to 10
    assert spectral_radius(D @ W) > 1 and abs(growth / spectral_radius(D @ W) - 1) < 0.02
