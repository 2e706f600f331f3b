"""Checks for the exercises of chapter 3 (word embeddings)."""
import numpy as np
import torch

from lmcourse.similarity import analogy_scores

__all__ = ["hs_gradient", "three_cos_mul"]


def hs_gradient(candidate) -> int:
    """candidate(h (d,), node_vectors (n, d), code list of 0/1 turns, point list of inner-node ids) ->
    (grad_h (d,), grad_nodes (n, d)): the gradients of the hierarchical-softmax loss
    L = -sum_j log sigma((1 - 2 code_j) node_vectors[point_j] . h), checked against autograd
    (rows of grad_nodes off the path are 0)."""
    rng = np.random.default_rng(5)
    for trial, (d, n, code, point) in enumerate([(3, 4, [1], [2]), (5, 7, [0, 1, 1], [6, 2, 0]),
                                                 (8, 12, [1, 0, 0, 1, 1], [11, 7, 3, 9, 1])]):
        h, nodes = rng.normal(size=d), rng.normal(size=(n, d))
        th, tn = torch.tensor(h, requires_grad=True), torch.tensor(nodes, requires_grad=True)
        signs = torch.tensor([1.0 - 2 * c for c in code], dtype=torch.float64)
        loss = -torch.nn.functional.logsigmoid(signs * (tn[point] @ th)).sum()
        loss.backward()
        got = candidate(h.copy(), nodes.copy(), list(code), list(point))
        assert isinstance(got, tuple) and len(got) == 2, "return a tuple (grad_h, grad_nodes)"
        for name, value, want in zip(("grad_h", "grad_nodes"), got, (th.grad, tn.grad)):
            value = np.asarray(value.detach() if isinstance(value, torch.Tensor) else value, dtype=np.float64)
            assert value.shape == tuple(want.shape), f"{name} must have shape {tuple(want.shape)}, got {value.shape}"
            assert np.allclose(value, want.numpy(), atol=1e-8), (
                f"test {trial + 1}: {name} differs from autograd's by up to {np.abs(value - want.numpy()).max():.3g}; "
                "remember d/dx [-log sigma(x)] = sigma(x) - 1 and the sign (1 - 2 code_j) of each turn")
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
