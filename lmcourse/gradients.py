"""Measuring gradient flow through time: Jacobian products, per-step state gradients, and the
per-step pieces that backpropagation through time (BPTT) adds up into a weight's gradient.

For a tanh RNN, h_k = tanh(z_k) with z_k = W_ih x_k + W_hh h_{k-1} + b, the chain rule gives

    dh_T/dh_t = prod_{k=t+1..T} diag(tanh'(z_k)) W_hh,

so ||dh_T/dh_t|| <= prod_k ||diag(tanh'(z_k))|| ||W_hh|| <= ||W_hh||_2^(T-t), because |tanh'| <= 1.
"""
import torch
from torch import nn
from torch.func import functional_call

from lmcourse.validate import check_float, check_int, check_type


def scaled_orthogonal(size: int, radius: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """A random (size, size) orthogonal matrix times ``radius``.

    Every eigenvalue then has modulus ``radius`` and every singular value equals it, so the
    spectral radius and the spectral norm are both ``radius`` (for most matrices they differ).
    """
    check_int(size, "size", minimum=1)
    check_float(radius, "radius", minimum=0.0)
    q, r = torch.linalg.qr(torch.randn(size, size, generator=generator))
    q = q * torch.sign(torch.diagonal(r))          # makes the draw uniform over orthogonal matrices
    return radius * q


def spectral_radius(matrix: torch.Tensor) -> float:
    """Largest modulus of an eigenvalue of a square matrix."""
    check_type(matrix, "matrix", torch.Tensor)
    if matrix.dim() != 2 or matrix.size(0) != matrix.size(1):
        raise ValueError(f"matrix must be square, got shape {tuple(matrix.shape)}")
    return float(torch.linalg.eigvals(matrix.double()).abs().max())


def rnn_jacobian_norms(weight_hh: torch.Tensor, pre_activations: torch.Tensor) -> torch.Tensor:
    """Spectral norms of dh_T/dh_{T-d} for d = 0..T, computed as explicit products.

    weight_hh: (H, H); pre_activations: (T, H), the z_1..z_T of one tanh-RNN sequence.
    Returns (T + 1,): entry d is || prod_{k=T-d+1..T} diag(tanh'(z_k)) W_hh ||_2 (entry 0 is ||I|| = 1).
    """
    check_type(weight_hh, "weight_hh", torch.Tensor)
    check_type(pre_activations, "pre_activations", torch.Tensor)
    H = weight_hh.size(0)
    if weight_hh.shape != (H, H) or pre_activations.dim() != 2 or pre_activations.size(1) != H:
        raise ValueError(f"weight_hh must be (H, H) and pre_activations (T, H); got "
                         f"{tuple(weight_hh.shape)} and {tuple(pre_activations.shape)}")
    weight_hh, z = weight_hh.double(), pre_activations.double()
    product = torch.eye(H, dtype=torch.float64)
    norms = [1.0]
    for k in range(z.size(0) - 1, -1, -1):                       # k = T, T-1, ..., 1 (0-based)
        jacobian = (1 - torch.tanh(z[k]) ** 2)[:, None] * weight_hh   # diag(tanh'(z_k)) W_hh: (H, H)
        product = product @ jacobian                                  # dh_T/dh_{k-1}: (H, H)
        norms.append(float(torch.linalg.matrix_norm(product, ord=2)))
    return torch.tensor(norms, dtype=torch.float64)


def tanh_rnn_states(weight_ih: torch.Tensor, weight_hh: torch.Tensor, x: torch.Tensor,
                    bias: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Run a tanh RNN over one sequence x (T, I) from h_0 = 0: (pre-activations z (T, H), states h (T, H))."""
    check_type(x, "x", torch.Tensor)
    if x.dim() != 2 or x.size(1) != weight_ih.size(1):
        raise ValueError(f"x must be (T, {weight_ih.size(1)}), got {tuple(x.shape)}")
    h = torch.zeros(weight_hh.size(0), dtype=x.dtype)
    zs, hs = [], []
    for x_t in x:
        z = weight_ih @ x_t + weight_hh @ h + (0 if bias is None else bias)   # (H, I) @ (I,) + (H, H) @ (H,) -> (H,)
        h = torch.tanh(z)
        zs.append(z)
        hs.append(h)
    return torch.stack(zs), torch.stack(hs)


def _run_cell(cell: nn.Module, x: torch.Tensor, params_at=None):
    """Unroll ``cell`` over x (B, T, I); returns the list of states (h_t, or (h_t, c_t))."""
    state = cell.zero_state(x.size(0))
    states = []
    for t in range(x.size(1)):
        if params_at is None:
            state = cell(x[:, t], state)
        else:
            state = functional_call(cell, params_at(t), (x[:, t], state))
        states.append(state)
    return states


def _hidden(state):
    return state[0] if isinstance(state, tuple) else state


def _check_cell_input(cell, x, readout):
    check_type(cell, "cell", nn.Module)
    if not hasattr(cell, "zero_state"):
        raise TypeError(f"cell must be an lmcourse.rnn cell (RNNCell, LSTMCell, GRUCell), got {type(cell).__name__}")
    check_type(x, "x", torch.Tensor)
    if x.dim() != 3 or x.size(2) != cell.input_size:
        raise ValueError(f"x must be (batch, time, {cell.input_size}), got {tuple(x.shape)}")
    if readout is not None and readout.shape != (cell.hidden_size,):
        raise ValueError(f"readout must be ({cell.hidden_size},), got {tuple(readout.shape)}")


def state_gradient_norms(cell: nn.Module, x: torch.Tensor, readout: torch.Tensor | None = None
                         ) -> torch.Tensor:
    """||dL/dh_t|| for t = 1..T, where L = sum over the batch of readout . h_T (by autograd).

    cell: an lmcourse.rnn cell; x: (B, T, I); readout: (H,), all ones by default.
    Returns (T,): how strongly the loss at the last step reaches back to each earlier state.
    """
    _check_cell_input(cell, x, readout)
    states = _run_cell(cell, x)
    hidden = [_hidden(s) for s in states]                  # T x (B, H)
    for h in hidden:
        h.retain_grad()
    readout = torch.ones(cell.hidden_size) if readout is None else readout
    (hidden[-1] @ readout).sum().backward()                 # (B, H) @ (H,) -> (B,) -> scalar
    return torch.stack([h.grad.norm() for h in hidden]).detach()


def per_step_weight_gradients(cell: nn.Module, x: torch.Tensor, readout: torch.Tensor | None = None,
                              name: str = "weight_hh") -> torch.Tensor:
    """BPTT's sum, term by term: the contribution of each time step to dL/d(weight ``name``).

    The weight is shared by every step, so its gradient is a sum over steps. Giving step t its own
    copy W_t (equal in value) and differentiating with respect to each copy separates the terms:
    sum_t dL/dW_t = dL/dW. L is as in :func:`state_gradient_norms`.
    Returns (T, *weight.shape): the term of step t = 1..T.
    """
    _check_cell_input(cell, x, readout)
    params = dict(cell.named_parameters())
    if name not in params:
        raise ValueError(f"name must be one of {sorted(params)}, got {name!r}")
    copies = [params[name].detach().clone().requires_grad_(True) for _ in range(x.size(1))]
    states = _run_cell(cell, x, params_at=lambda t: {**params, name: copies[t]})
    readout = torch.ones(cell.hidden_size) if readout is None else readout
    loss = (_hidden(states[-1]) @ readout).sum()
    return torch.stack(torch.autograd.grad(loss, copies))


def train_tracking_gradients(model: nn.Module, loss_fn, batches, lr: float,
                             clip_grad_norm: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain SGD over ``batches``, recording each step's loss and gradient norm (before clipping).

    Plain SGD makes the step proportional to the gradient, so an exploding gradient throws the
    weights far unless ``clip_grad_norm`` bounds it. Stops at the first non-finite loss (the rest
    of both curves is then nan). Returns (losses (S,), gradient norms (S,)) for S = len(batches).
    """
    check_type(model, "model", nn.Module)
    check_float(lr, "lr", minimum=0.0, strict_minimum=True)
    if clip_grad_norm is not None:
        check_float(clip_grad_norm, "clip_grad_norm", minimum=0.0, strict_minimum=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.full((len(batches),), float("nan"))
    norms = torch.full((len(batches),), float("nan"))
    for step, batch in enumerate(batches):
        loss = loss_fn(model, batch)
        if not torch.isfinite(loss):
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm or float("inf"))
        losses[step], norms[step] = loss.item(), norm.item()
        if not torch.isfinite(norm):
            break
        optimizer.step()
    return losses, norms


def loss_along_gradient(model: nn.Module, loss_fn, batch, distances) -> tuple[torch.Tensor, float]:
    """The loss on ``batch`` after moving the weights a distance s down the gradient, for each s.

    The gradient g of ``loss_fn(model, batch)`` is taken at the current weights; the loss is then
    evaluated at theta - s * g / ||g|| for every s in ``distances`` (s = 0 is the current loss), and the
    weights are put back. A plain SGD step with learning rate lr goes a distance lr * ||g||; clipped
    at norm tau it goes at most lr * tau. Returns (losses (K,) for the K distances, ||g||).
    """
    check_type(model, "model", nn.Module)
    distances = torch.as_tensor(distances, dtype=torch.float32)
    if distances.ndim != 1 or len(distances) == 0 or (distances < 0).any():
        raise ValueError(f"distances must be a non-empty 1-D list of numbers >= 0, got {distances.tolist()}")
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss_fn(model, batch), params)
    norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    start = [p.detach().clone() for p in params]
    losses = torch.empty(len(distances))
    with torch.no_grad():
        for k, s in enumerate(distances):
            for p, p0, g in zip(params, start, grads, strict=True):
                p.copy_(p0 - s * g / norm)
            losses[k] = loss_fn(model, batch)
        for p, p0 in zip(params, start, strict=True):
            p.copy_(p0)
    return losses, norm.item()


def one_unit_rnn(w: torch.Tensor, b: torch.Tensor, steps: int = 20, start: float = 0.5) -> torch.Tensor:
    """The last state x_T of the one-unit RNN x_t = w tanh(x_{t-1}) + b, with no input, from x_0 = start.

    w and b broadcast (a grid of parameter values at once); x_T has their broadcast shape. Where the
    map has two stable fixed points, x_T falls to one or the other, and the border between the two
    basins is a cliff in any loss of x_T.
    """
    check_type(w, "w", torch.Tensor)
    check_type(b, "b", torch.Tensor)
    check_int(steps, "steps", minimum=1)
    check_float(start, "start")
    x = torch.full(torch.broadcast_shapes(w.shape, b.shape), float(start), dtype=w.dtype)
    for _ in range(steps):
        x = w * torch.tanh(x) + b
    return x


class OneUnitRNN(nn.Module):
    """``one_unit_rnn`` with its two parameters, the recurrent weight w and the bias b, learnable."""

    def __init__(self, w: float, b: float, steps: int = 20, start: float = 0.5):
        super().__init__()
        check_float(w, "w")
        check_float(b, "b")
        check_int(steps, "steps", minimum=1)
        check_float(start, "start")
        self.w, self.b = nn.Parameter(torch.tensor(float(w))), nn.Parameter(torch.tensor(float(b)))
        self.steps, self.start = steps, start

    def forward(self) -> torch.Tensor:
        """x_T, a scalar."""
        return one_unit_rnn(self.w, self.b, self.steps, self.start)
