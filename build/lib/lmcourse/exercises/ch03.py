"""Checks for the exercises of chapter 3 (word embeddings)."""
import math

import numpy as np

__all__ = ["cosine"]


def cosine(candidate) -> int:
    """candidate(u, v) -> cosine similarity of two 1-D NumPy vectors, a float in [-1, 1]."""
    if not callable(candidate):
        raise TypeError("pass your function itself, e.g. check('ch03-cosine', cosine)")
    one_hot = np.eye(8)
    got = candidate(one_hot[0], one_hot[7])
    assert math.isclose(got, 0.0, abs_tol=1e-12), f"two different one-hot vectors have cosine 0, got {got}"
    u = np.array([10.0, 12.0, 19.0])
    for v, want in ((3 * u, 1.0), (-u, -1.0)):
        got = candidate(u, v)
        assert math.isclose(got, want, rel_tol=1e-9), (
            f"cos(u, {v.tolist()}) must be {want} (length must not matter), got {got}: divide by both norms")
    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.normal(size=5), rng.normal(size=5)
        want = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        got = candidate(a, b)
        assert math.isclose(got, want, rel_tol=1e-9), f"cos({a.round(2)}, {b.round(2)}) = {want:.6f}, got {got}"
    return 3
