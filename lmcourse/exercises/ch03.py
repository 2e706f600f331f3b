"""Checks for the exercises of chapter 3 (word embeddings)."""
import math

import numpy as np
import torch

from lmcourse.similarity import analogy_scores

__all__ = ["cosine", "sgns_gradient", "three_cos_mul"]


def cosine(candidate) -> int:
    """candidate(u, v) -> cosine similarity of two 1-D NumPy vectors, a float in [-1, 1]."""
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


def sgns_gradient(candidate) -> int:
    """candidate(h (d,), u_pos (d,), u_neg (K, d)) -> (grad_h, grad_u_pos, grad_u_neg): the gradients of
    L = -log sigma(u_pos . h) - sum_k log sigma(-u_neg[k] . h), checked against autograd."""
    rng = np.random.default_rng(3)
    for trial, (d, k) in enumerate([(4, 1), (6, 3), (10, 5)]):
        h, u_pos, u_neg = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(k, d))
        th, tp, tn = (torch.tensor(a, requires_grad=True) for a in (h, u_pos, u_neg))
        loss = -torch.nn.functional.logsigmoid(tp @ th) - torch.nn.functional.logsigmoid(-(tn @ th)).sum()
        loss.backward()
        got = candidate(h.copy(), u_pos.copy(), u_neg.copy())
        assert isinstance(got, tuple) and len(got) == 3, "return a tuple (grad_h, grad_u_pos, grad_u_neg)"
        for name, value, want in zip(("grad_h", "grad_u_pos", "grad_u_neg"), got, (th.grad, tp.grad, tn.grad)):
            value = np.asarray(value.detach() if isinstance(value, torch.Tensor) else value, dtype=np.float64)
            assert value.shape == tuple(want.shape), f"{name} must have shape {tuple(want.shape)}, got {value.shape}"
            assert np.allclose(value, want.numpy(), atol=1e-8), (
                f"test {trial + 1}: {name} differs from autograd's by up to {np.abs(value - want.numpy()).max():.3g}; "
                "remember d/ds [-log sigma(s)] = sigma(s) - 1 and d/ds [-log sigma(-s)] = sigma(s)")
    return 3


def three_cos_mul(candidate) -> int:
    """candidate(unit (n, d) rows of length 1, a, b, c word ids) -> the id of the 3CosMul answer to
    a : b :: c : ?, never a, b or c; compared with :func:`lmcourse.similarity.analogy_scores`."""
    rng = np.random.default_rng(7)
    checks = 0
    for n, d in ((20, 5), (50, 8), (200, 16)):
        unit = rng.normal(size=(n, d))
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        for _ in range(5):
            a, b, c = (int(i) for i in rng.choice(n, 3, replace=False))
            want = int(np.argmax(analogy_scores(unit, np.array([[a, b, c]]), "mul")[0]))
            plus = int(np.argmax(analogy_scores(unit, np.array([[a, b, c]]), "add")[0]))
            got = int(candidate(unit.copy(), a, b, c))
            assert got not in (a, b, c), f"the answer must not be one of a, b, c ({a}, {b}, {c}), got {got}"
            hint = " (that is the 3CosAdd answer)" if got == plus else ""
            assert got == want, (f"{n} words, a, b, c = {a}, {b}, {c}: 3CosMul answers {want}, got {got}{hint}; "
                                 "shift cosines to (1 + cos) / 2 and use epsilon 1e-3")
            checks += 1
    return checks
