import numpy as np
import pytest

from lmcourse.exercises import check


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def sgns_gradient(h, u_pos, u_neg):
    g_pos = sigmoid(u_pos @ h) - 1                 # dL/ds for the observed pair
    g_neg = sigmoid(u_neg @ h)                     # (K,) dL/ds_k for the negatives
    return g_pos * u_pos + g_neg @ u_neg, g_pos * h, np.outer(g_neg, h)


def three_cos_mul(unit, a, b, c):
    cos = (1 + unit @ unit[[a, b, c]].T) / 2       # (n, 3) shifted cosines
    scores = cos[:, 1] * cos[:, 2] / (cos[:, 0] + 1e-3)
    scores[[a, b, c]] = -np.inf
    return int(np.argmax(scores))


def test_reference_solutions_pass():
    assert check("ch03-sgns-gradient", sgns_gradient) == "ch03-sgns-gradient: all 3 checks passed"
    assert check("ch03-three-cos-mul", three_cos_mul) == "ch03-three-cos-mul: all 15 checks passed"


def test_wrong_solutions_fail_with_a_hint():
    wrong_sign = lambda h, p, n: tuple(-g for g in sgns_gradient(h, p, n))
    with pytest.raises(AssertionError, match="differs from autograd"):
        check("ch03-sgns-gradient", wrong_sign)
    with pytest.raises(AssertionError, match="return a tuple"):
        check("ch03-sgns-gradient", lambda h, p, n: h)

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
