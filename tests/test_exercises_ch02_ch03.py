from collections import Counter

import pytest
import torch

from lmcourse.exercises import check


def add_k(sentences, prev, word, k):
    pairs = Counter((a, b) for s in sentences for a, b in zip(s, s[1:]))
    context = Counter(a for s in sentences for a in s[:-1])
    vocab_size = len({w for s in sentences for w in s})
    return (pairs[(prev, word)] + k) / (context[prev] + k * vocab_size)


def test_add_k_reference_passes_and_wrong_fails():
    assert check("ch02-add-k", add_k) == "ch02-add-k: all 3 checks passed"
    forgot_k_in_denominator = lambda s, p, w, k: add_k(s, p, w, 0) if k == 0 else (
        add_k(s, p, w, 0) * 0 + (Counter((a, b) for x in s for a, b in zip(x, x[1:]))[(p, w)] + k)
        / Counter(a for x in s for a in x[:-1])[p])
    with pytest.raises(AssertionError, match="k="):
        check("ch02-add-k", forgot_k_in_denominator)


def _nnlm_backward(weights, context, target, accumulate=True, tanh_slope=True, mean=True):
    C, H, d, U, b = (weights[k] for k in "CHdUb")
    x = C[context].flatten(1)
    a = torch.tanh(d + x @ H.T)
    g_y = torch.softmax(b + a @ U.T, -1)
    g_y[torch.arange(len(target)), target] -= 1
    if mean:
        g_y = g_y / len(target)
    g_pre = g_y @ U * ((1 - a ** 2) if tanh_slope else 1)
    g_x = (g_pre @ H).reshape(-1, C.shape[1])
    g_C = torch.zeros_like(C)
    if accumulate:
        g_C.index_add_(0, context.flatten(), g_x)
    else:
        g_C[context.flatten()] = g_x                   # a repeated word keeps only one of its gradients
    return {"C": g_C, "H": g_pre.T @ x, "d": g_pre.sum(0), "U": g_y.T @ a, "b": g_y.sum(0)}


def test_nnlm_backward_reference_passes_and_plausible_mistakes_fail():
    assert check("ch02-nnlm-backward", _nnlm_backward) == "ch02-nnlm-backward: all 2 checks passed"
    for mistake in ({"accumulate": False}, {"tanh_slope": False}, {"mean": False}):
        with pytest.raises(AssertionError, match="differs from autograd"):
            check("ch02-nnlm-backward", lambda w, c, t, mistake=mistake: _nnlm_backward(w, c, t, **mistake))


def test_nnlm_backward_refuses_autograd():
    def with_autograd(weights, context, target):
        params = {k: v.clone().requires_grad_() for k, v in weights.items()}
        C, H, d, U, b = (params[k] for k in "CHdUb")
        y = b + torch.tanh(d + C[context].flatten(1) @ H.T) @ U.T
        torch.nn.functional.cross_entropy(y, target).backward()
        return {k: v.grad for k, v in params.items()}

    def with_functional_autograd(weights, context, target):
        params = {k: v.clone().requires_grad_() for k, v in weights.items()}
        C, H, d, U, b = (params[k] for k in "CHdUb")
        y = b + torch.tanh(d + C[context].flatten(1) @ H.T) @ U.T
        torch.autograd.backward(torch.nn.functional.cross_entropy(y, target))
        return {k: v.grad for k, v in params.items()}

    def with_grad_enabled(weights, context, target):
        with torch.enable_grad():
            return with_autograd(weights, context, target)

    for cheat in (with_autograd, with_functional_autograd, with_grad_enabled):
        with pytest.raises(AssertionError, match="called autograd"):
            check("ch02-nnlm-backward", cheat)
