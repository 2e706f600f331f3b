"""Checks for the exercises of chapter 4 (RNN and LSTM)."""
import torch
from torch import nn

__all__ = ["lstm_layer", "clip_global_norm"]


class _NoForward(nn.LSTMCell):
    """An LSTMCell whose forward is switched off: the candidate must do the arithmetic itself."""

    def forward(self, *args, **kwargs):
        raise AssertionError("compute the gates from cell.weight_ih, weight_hh, bias_ih and bias_hh; "
                             "do not call the cell")


def lstm_layer(candidate) -> int:
    """``candidate(x (B, T, I), cell) -> (outputs (B, T, H), (h_T, c_T))``, from a zero state, vs
    a ``torch.nn.LSTM`` holding the cell's weights (copied)."""
    torch.manual_seed(0)
    cell = _NoForward(3, 5)
    with torch.no_grad():
        cell.bias_ih[5:10] += 1.0                # distinct gates, so a wrong gate order shows
    reference = nn.LSTM(3, 5, batch_first=True)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(reference, f"{name}_l0").copy_(getattr(cell, name))
    x = torch.randn(4, 6, 3)
    with torch.no_grad():
        out = candidate(x, cell)
        ref_out, (h_ref, c_ref) = reference(x)
    assert isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], tuple) and len(out[1]) == 2, \
        "return (outputs, (h_T, c_T))"
    outputs, (h_T, c_T) = out
    assert outputs.shape == (4, 6, 5), f"outputs must be (batch, time, hidden) = (4, 6, 5), got {tuple(outputs.shape)}"
    assert h_T.shape == (4, 5) and c_T.shape == (4, 5), \
        f"h_T and c_T must be (batch, hidden) = (4, 5), got {tuple(h_T.shape)} and {tuple(c_T.shape)}"
    assert torch.allclose(outputs[:, 0], ref_out[:, 0], atol=1e-5), \
        "the first step is wrong: start from h = c = 0; gates stacked in the order i, f, g, o (g uses tanh)"
    assert torch.allclose(c_T, c_ref[0], atol=1e-5), "c_T is wrong: c_t = f * c_{t-1} + i * g, carried across steps"
    assert torch.allclose(outputs, ref_out, atol=1e-5) and torch.allclose(h_T, h_ref[0], atol=1e-5), \
        "c is right but h is wrong: h_t = o * tanh(c_t), and outputs[:, t] = h_t"
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
            ("every gradient must be scaled by the same factor max_norm / (global norm); "
             "did you clip each tensor separately?")
    small = [torch.full((2,), 0.1)]
    kept = candidate([g.clone() for g in small], 1.0)
    assert torch.allclose(kept[0], small[0]), "a gradient whose norm is already below max_norm must stay unchanged"
    return 3
