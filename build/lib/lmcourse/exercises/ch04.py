"""Checks for the exercises of chapter 4 (RNN and LSTM)."""
import torch
from torch import nn

__all__ = ["lstm_step", "clip_global_norm"]


def lstm_step(candidate) -> int:
    """``candidate(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh) -> (h_new, c_new)`` vs torch.nn.LSTMCell."""
    torch.manual_seed(0)
    reference = nn.LSTMCell(3, 5)
    with torch.no_grad():
        reference.bias_ih[5:10] += 1.0           # distinct gates, so a wrong gate order shows
    x, h, c = torch.randn(4, 3), torch.randn(4, 5), torch.randn(4, 5)
    with torch.no_grad():
        out = candidate(x, h, c, reference.weight_ih, reference.weight_hh, reference.bias_ih, reference.bias_hh)
        h_ref, c_ref = reference(x, (h, c))
    assert isinstance(out, tuple) and len(out) == 2, "return a pair (h_new, c_new)"
    h_new, c_new = out
    assert h_new.shape == (4, 5) and c_new.shape == (4, 5), \
        f"h_new and c_new must be (batch, hidden) = (4, 5), got {tuple(h_new.shape)} and {tuple(c_new.shape)}"
    assert torch.allclose(c_new, c_ref, atol=1e-5), \
        "c_new is wrong: c_t = f * c_{t-1} + i * g, with gates in the order i, f, g, o (g uses tanh)"
    assert torch.allclose(h_new, h_ref, atol=1e-5), "c_new is right but h_new is wrong: h_t = o * tanh(c_t)"
    return 3


def clip_global_norm(candidate) -> int:
    """``candidate(grads, max_norm) -> list of tensors`` vs torch.nn.utils.clip_grad_norm_."""
    torch.manual_seed(0)
    grads = [torch.randn(3, 4) * 5, torch.randn(7) * 5]
    params = [nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    nn.utils.clip_grad_norm_(params, 1.0)
    out = candidate([g.clone() for g in grads], 1.0)
    assert isinstance(out, (list, tuple)) and len(out) == len(grads), "return one tensor per gradient"
    total = torch.sqrt(sum((g ** 2).sum() for g in out))
    assert abs(float(total) - 1.0) < 1e-4, f"after clipping to 1.0 the global norm must be 1.0, got {float(total):.4f}"
    for o, p in zip(out, params):
        assert torch.allclose(o, p.grad, atol=1e-6), \
            "every gradient must be scaled by the same factor max_norm / (global norm); did you clip each tensor separately?"
    small = [torch.full((2,), 0.1)]
    kept = candidate([g.clone() for g in small], 1.0)
    assert torch.allclose(kept[0], small[0]), "a gradient whose norm is already below max_norm must stay unchanged"
    return 3
