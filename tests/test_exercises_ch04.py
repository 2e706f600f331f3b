import pytest
import torch

from lmcourse.exercises import check


def _rnn_bptt(weights, x, target, carry=True, tanh_slope=True, mean=True, previous_state=True):
    W_ih, W_hh, b_ih, b_hh, W_hy, b_y = (weights[k] for k in ("W_ih", "W_hh", "b_ih", "b_hh", "W_hy", "b_y"))
    B, T, _ = x.shape
    hs = [torch.zeros(B, W_hh.shape[0])]
    for t in range(T):
        hs.append(torch.tanh(x[:, t] @ W_ih.T + b_ih + hs[-1] @ W_hh.T + b_hh))
    grads = {k: torch.zeros_like(v) for k, v in weights.items()}
    g_next = torch.zeros(B, W_hh.shape[0])
    for t in range(T, 0, -1):
        g_y = torch.softmax(hs[t] @ W_hy.T + b_y, -1)
        g_y[torch.arange(B), target[:, t - 1]] -= 1
        g_y = g_y / (B * T if mean else 1)
        grads["W_hy"] += g_y.T @ hs[t]
        grads["b_y"] += g_y.sum(0)
        g_h = g_y @ W_hy + (g_next if carry else 0)
        g_z = g_h * ((1 - hs[t] ** 2) if tanh_slope else 1)
        grads["W_ih"] += g_z.T @ x[:, t - 1]
        grads["W_hh"] += g_z.T @ (hs[t - 1] if previous_state else hs[t])
        grads["b_ih"] += g_z.sum(0)
        grads["b_hh"] += g_z.sum(0)
        g_next = g_z @ W_hh
    return grads


def test_rnn_bptt_reference_passes_and_plausible_mistakes_fail():
    assert check("ch04-rnn-bptt", _rnn_bptt) == "ch04-rnn-bptt: all 2 checks passed"
    for mistake in ({"carry": False}, {"tanh_slope": False}, {"mean": False}, {"previous_state": False}):
        with pytest.raises(AssertionError, match="differs from autograd"):
            check("ch04-rnn-bptt", lambda w, x, y, mistake=mistake: _rnn_bptt(w, x, y, **mistake))
    with pytest.raises(AssertionError, match="keys"):
        check("ch04-rnn-bptt", lambda w, x, y: {k: v for k, v in _rnn_bptt(w, x, y).items() if k != "b_hh"})


def test_rnn_bptt_refuses_autograd():
    def with_autograd(weights, x, target):
        params = {k: v.clone().requires_grad_() for k, v in weights.items()}
        h, loss = torch.zeros(x.shape[0], params["W_hh"].shape[0]), 0
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] @ params["W_ih"].T + params["b_ih"] + h @ params["W_hh"].T + params["b_hh"])
            loss = loss + torch.nn.functional.cross_entropy(h @ params["W_hy"].T + params["b_y"], target[:, t])
        (loss / x.shape[1]).backward()
        return {k: v.grad for k, v in params.items()}

    def with_grad_enabled(weights, x, target):
        with torch.enable_grad():
            return with_autograd(weights, x, target)

    def loss_of(x, target):
        def loss(params):
            h, total = torch.zeros(x.shape[0], params["W_hh"].shape[0]), 0
            for t in range(x.shape[1]):
                h = torch.tanh(x[:, t] @ params["W_ih"].T + params["b_ih"] + h @ params["W_hh"].T + params["b_hh"])
                total = total + torch.nn.functional.cross_entropy(h @ params["W_hy"].T + params["b_y"], target[:, t])
            return total / x.shape[1]
        return loss

    def with_torch_func(weights, x, target):
        return torch.func.grad(loss_of(x, target))(dict(weights))

    def with_functional_vjp(weights, x, target):
        keys, loss = list(weights), loss_of(x, target)
        _, grads = torch.autograd.functional.vjp(lambda *values: loss(dict(zip(keys, values))),
                                                 tuple(weights.values()))
        return dict(zip(keys, grads))

    for cheat in (with_autograd, with_grad_enabled, with_torch_func, with_functional_vjp):
        with pytest.raises(AssertionError, match="called autograd"):
            check("ch04-rnn-bptt", cheat)


def _clip(grads, max_norm, per_tensor=False, by_value=False, always=False, norm_after=False, unguarded=False):
    total = torch.sqrt(sum((g ** 2).sum() for g in grads))
    if by_value:
        return [g.clamp(-max_norm, max_norm) for g in grads], float(total)
    if per_tensor:
        return [g * min(1.0, max_norm / float(g.norm())) for g in grads], float(total)
    if unguarded:                                   # 0 / 0 for an all-zero gradient
        return [g / total * torch.clamp(total, max=max_norm) for g in grads], float(total)
    scale = max_norm / (float(total) + 1e-6)         # always: scaled up to max_norm too, not only down
    clipped = [g * (scale if always else min(1.0, scale)) for g in grads]
    return clipped, float(torch.sqrt(sum((g ** 2).sum() for g in clipped))) if norm_after else float(total)


def test_clip_global_norm_reference_passes_and_plausible_mistakes_fail():
    assert check("ch04-clip-global-norm", _clip) == "ch04-clip-global-norm: all 4 checks passed"
    for mistake in ({"per_tensor": True}, {"by_value": True}, {"always": True}):
        with pytest.raises(AssertionError, match="same factor"):
            check("ch04-clip-global-norm", lambda g, m, mistake=mistake: _clip(g, m, **mistake))
    with pytest.raises(AssertionError, match="before clipping"):
        check("ch04-clip-global-norm", lambda g, m: _clip(g, m, norm_after=True))
    with pytest.raises(AssertionError, match="no division by zero"):
        check("ch04-clip-global-norm", lambda g, m: _clip(g, m, unguarded=True))
    with pytest.raises(AssertionError, match="a pair"):
        check("ch04-clip-global-norm", lambda g, m: _clip(g, m)[0])
