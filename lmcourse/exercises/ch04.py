"""Checks for the exercises of chapter 4 (RNN and LSTM)."""
import torch
from torch import nn

from lmcourse.exercises._no_autograd import assert_gradients_match, refusing_autograd
from lmcourse.gradients import scaled_orthogonal
from lmcourse.rnn import RNNCell

__all__ = ["rnn_bptt", "clip_global_norm"]

_NAMES = ("W_ih", "W_hh", "b_ih", "b_hh", "W_hy", "b_y")


def rnn_bptt(candidate) -> int:
    """``candidate(weights, x, target) -> {name: gradient}``: backpropagation through time, by hand, for a
    tanh RNN with an output at every step, h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) from h_0 = 0
    and y_t = W_hy h_t + b_y, under the mean cross-entropy over the batch and the steps. ``weights`` holds
    plain tensors W_ih (H, I), W_hh (H, H), b_ih (H,), b_hh (H,), W_hy (V, H), b_y (V,); x is (B, T, I)
    and target (B, T) int64. Checked against autograd on the package's ``RNNCell`` with copied weights,
    at two sizes, with W_hh large enough that the steps far from a loss still count; autograd is
    refused while the candidate runs."""
    for batch, steps, inputs, hidden, vocab in ((3, 6, 4, 5, 7), (2, 11, 3, 6, 4)):
        torch.manual_seed(0)
        cell, head = RNNCell(inputs, hidden), nn.Linear(hidden, vocab)
        with torch.no_grad():
            cell.weight_hh.copy_(scaled_orthogonal(hidden, 1.2, torch.Generator().manual_seed(1)))
        x = torch.randn(batch, steps, inputs)
        target = torch.randint(0, vocab, (batch, steps))
        h, logits = torch.zeros(batch, hidden), []
        for t in range(steps):
            h = cell(x[:, t], h)
            logits.append(head(h))
        nn.functional.cross_entropy(torch.stack(logits, 1).flatten(0, 1), target.flatten()).backward()
        params = dict(zip(_NAMES, (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, head.weight, head.bias),
                          strict=True))
        plain = {k: v.detach().clone() for k, v in params.items()}
        with refusing_autograd("rnn_bptt"):                # no graph can be built while the candidate runs
            got = candidate(plain, x.clone(), target.clone())
        assert_gradients_match(
            got, params, f"({steps} steps)",
            "The loss is the mean over batch and steps; go back from t = T to 1 carrying dL/dh_t, which gets the "
            "output's part W_hy^T (softmax(y_t) - one_hot) plus the part that came back from step t + 1; multiply "
            "by tanh'(z_t) = 1 - h_t^2 before W_ih, W_hh and the biases; W_hh's gradient at step t uses h_(t-1)")
    return 2


def clip_global_norm(candidate) -> int:
    """``candidate(grads, max_norm) -> (clipped, norm)``: clipping by the global norm, by hand. ``grads`` is a
    list of tensors; ``norm`` is the norm of all of them together before clipping, and ``clipped`` a list of
    the same tensors each multiplied by min(1, max_norm / norm). Compared with
    ``torch.nn.utils.clip_grad_norm_`` on gradients of three shapes (global norm about 21) at two thresholds
    below their norm and one above it, and on an all-zero gradient."""
    torch.manual_seed(0)
    grads = [torch.randn(3, 4) * 5, torch.randn(7) * 5, torch.randn(2, 2, 2)]
    thresholds = (0.5, 3.0, 1e3)
    for max_norm in thresholds:
        params = [nn.Parameter(torch.zeros_like(g)) for g in grads]
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        norm = float(nn.utils.clip_grad_norm_(params, max_norm))
        out = candidate([g.clone() for g in grads], max_norm)
        assert isinstance(out, tuple) and len(out) == 2, \
            "return a pair: (the clipped gradients, the norm before clipping)"
        clipped, total = out
        assert isinstance(clipped, (list, tuple)) and len(clipped) == len(grads), "return one tensor per gradient"
        assert abs(float(total) - norm) <= 1e-5 * norm, \
            (f"the norm before clipping is {norm:.4f} (the norm of all the gradients together, as one vector), "
             f"got {float(total):.4f}")
        for o, p in zip(clipped, params, strict=True):
            assert isinstance(o, torch.Tensor) and o.shape == p.grad.shape, "each clipped gradient keeps its shape"
            assert torch.allclose(o, p.grad, rtol=1e-5, atol=1e-7), \
                (f"at max_norm={max_norm:g} every gradient must be multiplied by the same factor "
                 "min(1, max_norm / global norm); did you clip each tensor separately, or cut single entries?")
    zero, total = candidate([torch.zeros(4)], 1.0)
    assert float(total) == 0.0 and torch.equal(zero[0], torch.zeros(4)), \
        "an all-zero gradient has norm 0 and must stay zero (no division by zero)"
    return len(thresholds) + 1
