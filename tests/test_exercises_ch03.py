import numpy as np
import pytest

from lmcourse.exercises import check


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def hs_gradient(h, node_vectors, code, point):
    signs = 1.0 - 2 * np.array(code)                      # (L,) +1 for a turn coded 0, -1 for a turn coded 1
    u = node_vectors[point]                                # (L, d)
    g = (sigmoid(signs * (u @ h)) - 1) * signs             # (L,) dL/d(u_j . h)
    grad_nodes = np.zeros_like(node_vectors)
    np.add.at(grad_nodes, point, g[:, None] * h)
    return g @ u, grad_nodes


def three_cos_mul(unit, a, b, c):
    cos = (1 + unit @ unit[[a, b, c]].T) / 2       # (n, 3) shifted cosines
    scores = cos[:, 1] * cos[:, 2] / (cos[:, 0] + 1e-3)
    scores[[a, b, c]] = -np.inf
    return int(np.argmax(scores))


def test_reference_solutions_pass():
    assert check("ch03-hs-gradient", hs_gradient) == "ch03-hs-gradient: all 3 checks passed"
    assert check("ch03-three-cos-mul", three_cos_mul) == "ch03-three-cos-mul: all 15 checks passed"


def test_wrong_solutions_fail_with_a_hint():
    wrong_sign = lambda h, n, c, p: tuple(-g for g in hs_gradient(h, n, c, p))
    with pytest.raises(AssertionError, match="differs from autograd"):
        check("ch03-hs-gradient", wrong_sign)
    with pytest.raises(AssertionError, match="return a tuple"):
        check("ch03-hs-gradient", lambda h, n, c, p: h)
    with pytest.raises(ValueError, match="unknown"):
        check("ch03-cosine", lambda u, v: 0.0)

    def three_cos_add(unit, a, b, c):
        scores = unit @ (unit[b] - unit[a] + unit[c])
        scores[[a, b, c]] = -np.inf
        return int(np.argmax(scores))
    with pytest.raises(AssertionError, match="3CosMul answers"):
        check("ch03-three-cos-mul", three_cos_add)
    with pytest.raises(AssertionError, match="must not be one of"):
        check("ch03-three-cos-mul", lambda unit, a, b, c: a)
    with pytest.raises(TypeError, match="pass your function"):
        check("ch03-three-cos-mul", 3)
