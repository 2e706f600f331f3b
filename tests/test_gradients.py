"""Gradient-flow measurements against autograd and the norm bound."""
import math

import pytest
import torch

from lmcourse.gradients import (
    per_step_weight_gradients,
    rnn_jacobian_norms,
    scaled_orthogonal,
    spectral_radius,
    state_gradient_norms,
    tanh_rnn_states,
)
from lmcourse.rnn import GRUCell, LSTMCell, RNNCell


def test_scaled_orthogonal_has_the_requested_radius_and_norm():
    w = scaled_orthogonal(16, 0.9, torch.Generator().manual_seed(0))
    assert spectral_radius(w) == pytest.approx(0.9, rel=1e-5)
    assert float(torch.linalg.matrix_norm(w, ord=2)) == pytest.approx(0.9, rel=1e-5)


def test_jacobian_products_match_autograd_and_the_bound():
    g = torch.Generator().manual_seed(0)
    H, T = 6, 8
    w_ih = torch.randn(H, 3, generator=g, dtype=torch.float64)
    w_hh = scaled_orthogonal(H, 1.3, g).double()
    x = torch.randn(T, 3, generator=g, dtype=torch.float64)
    z, _ = tanh_rnn_states(w_ih, w_hh, x)
    norms = rnn_jacobian_norms(w_hh, z)
    assert norms.shape == (T + 1,) and norms[0] == 1.0

    # autograd: the Jacobian of h_T with respect to h_t, by rerunning steps t+1..T from h_t
    def h_last_from(h_t, t):
        h = h_t
        for k in range(t + 1, T):
            h = torch.tanh(w_ih @ x[k] + w_hh @ h)
        return h

    _, hs = tanh_rnn_states(w_ih, w_hh, x)
    for d in range(1, T):
        t = T - 1 - d
        jac = torch.autograd.functional.jacobian(lambda h, t=t: h_last_from(h, t), hs[t])
        assert float(torch.linalg.matrix_norm(jac, ord=2)) == pytest.approx(float(norms[d]), rel=1e-9)
        assert norms[d] <= 1.3 ** d + 1e-12                       # ||W||^d bounds the product


def test_spectral_norm_below_one_makes_gradients_vanish():
    g = torch.Generator().manual_seed(1)
    w_hh = scaled_orthogonal(32, 0.8, g)
    z, _ = tanh_rnn_states(torch.randn(32, 4, generator=g), w_hh, torch.randn(60, 4, generator=g))
    norms = rnn_jacobian_norms(w_hh, z)
    assert norms[50] < 0.8 ** 50 < 1e-4


def test_state_gradient_norms_for_every_cell():
    torch.manual_seed(0)
    x = torch.randn(2, 7, 3)
    for cell in (RNNCell(3, 5), LSTMCell(3, 5), GRUCell(3, 5)):
        norms = state_gradient_norms(cell, x)
        assert norms.shape == (7,) and torch.all(norms >= 0)
        assert norms[-1] == pytest.approx(torch.ones(2, 5).norm().item())   # dL/dh_T = readout


def test_per_step_terms_add_up_to_the_full_gradient():
    torch.manual_seed(0)
    x = torch.randn(2, 6, 3)
    for cell in (RNNCell(3, 4), LSTMCell(3, 4), GRUCell(3, 4)):
        for name in ("weight_hh", "weight_ih"):
            terms = per_step_weight_gradients(cell, x, name=name)
            assert terms.shape == (6, *getattr(cell, name).shape)
            cell.zero_grad()
            state = cell.zero_state(2)
            for t in range(6):
                state = cell(x[:, t], state)
            h = state[0] if isinstance(state, tuple) else state
            h.sum().backward()
            torch.testing.assert_close(terms.sum(0), getattr(cell, name).grad, rtol=1e-5, atol=1e-6)
    # step 1 reads h_0 = 0, so it adds nothing to the gradient of weight_hh
    assert per_step_weight_gradients(RNNCell(3, 4), x)[0].abs().max() == 0


def test_bad_inputs():
    with pytest.raises(ValueError, match="radius"):
        scaled_orthogonal(3, -1.0)
    with pytest.raises(ValueError, match="square"):
        spectral_radius(torch.ones(2, 3))
    with pytest.raises(ValueError, match="pre_activations"):
        rnn_jacobian_norms(torch.eye(3), torch.ones(4, 2))
    with pytest.raises(ValueError, match="x must be"):
        state_gradient_norms(RNNCell(3, 4), torch.randn(2, 3))
    with pytest.raises(ValueError, match="name must be one of"):
        per_step_weight_gradients(RNNCell(3, 4), torch.randn(1, 2, 3), name="W")
    with pytest.raises(TypeError, match="cell must be"):
        state_gradient_norms(torch.nn.Linear(3, 4), torch.randn(1, 2, 3))


def test_train_tracking_gradients_records_norms_and_clipping_bounds_the_step():
    from lmcourse.gradients import train_tracking_gradients
    from lmcourse.rnn import RecurrentLM, lm_loss

    g = torch.Generator().manual_seed(0)
    batches = [(torch.randint(7, (4, 6), generator=g), torch.randint(7, (4, 6), generator=g)) for _ in range(5)]
    torch.manual_seed(0)
    a = RecurrentLM(7, 4, 8, mode="rnn")
    b = RecurrentLM(7, 4, 8, mode="rnn")
    b.load_state_dict(a.state_dict())
    start = [p.detach().clone() for p in b.parameters()]
    losses, norms = train_tracking_gradients(a, lm_loss, batches, lr=0.1)
    assert losses.shape == norms.shape == (5,) and torch.isfinite(losses).all() and (norms > 0).all()
    # one clipped step moves the weights by exactly lr * max_norm when the gradient is larger
    _, clipped_norms = train_tracking_gradients(b, lm_loss, batches[:1], lr=0.1, clip_grad_norm=1e-3)
    moved = torch.sqrt(sum(((p.detach() - s) ** 2).sum() for p, s in zip(b.parameters(), start)))
    assert clipped_norms[0] > 1e-3 and float(moved) == pytest.approx(0.1 * 1e-3, rel=1e-3)
    with pytest.raises(ValueError, match="lr"):
        train_tracking_gradients(a, lm_loss, batches, lr=0.0)


def test_loss_along_gradient_matches_an_sgd_step_and_restores_the_weights():
    from lmcourse.gradients import loss_along_gradient
    from lmcourse.rnn import RecurrentLM, lm_loss

    g = torch.Generator().manual_seed(0)
    batch = (torch.randint(7, (4, 6), generator=g), torch.randint(7, (4, 6), generator=g))
    torch.manual_seed(0)
    model = RecurrentLM(7, 4, 8, mode="rnn")
    start = [p.detach().clone() for p in model.parameters()]
    losses, norm = loss_along_gradient(model, lm_loss, batch, [0.0, 0.01, 0.1 * 1.0])
    assert all(torch.equal(p, s) for p, s in zip(model.parameters(), start))
    assert losses[0].item() == pytest.approx(lm_loss(model, batch).item())
    assert losses[1] < losses[0]                      # a short step down the gradient lowers the loss
    # a distance of lr * ||g|| is exactly one plain SGD step with learning rate lr
    lr = 0.5
    stepped, _ = loss_along_gradient(model, lm_loss, batch, [lr * norm])
    torch.optim.SGD(model.parameters(), lr=lr).zero_grad()
    lm_loss(model, batch).backward()
    torch.optim.SGD(model.parameters(), lr=lr).step()
    assert stepped[0].item() == pytest.approx(lm_loss(model, batch).item(), rel=1e-5)
    with pytest.raises(ValueError, match="distances"):
        loss_along_gradient(model, lm_loss, batch, [-1.0])


def test_one_unit_rnn_matches_the_recurrence_and_its_module_trains_through_the_shared_tools():
    from lmcourse.gradients import OneUnitRNN, loss_along_gradient, one_unit_rnn, train_tracking_gradients

    x = 0.5
    for _ in range(20):
        x = 2.0 * math.tanh(x) + 0.25
    assert one_unit_rnn(torch.tensor(2.0), torch.tensor(0.25)).item() == pytest.approx(x, rel=1e-6)
    grid = one_unit_rnn(torch.tensor([1.5, 2.0])[:, None], torch.tensor([-0.5, 0.0, 0.5])[None, :])
    assert grid.shape == (2, 3) and grid[1, 1].item() == pytest.approx(
        one_unit_rnn(torch.tensor(2.0), torch.tensor(0.0)).item())
    # two stable branches: a small change of b across the border flips the sign of x_T (the cliff)
    bs = torch.linspace(-0.6, 0.0, 601)
    ends = one_unit_rnn(torch.tensor(2.0), bs)
    assert ends[0] < -1 and ends[-1] > 1
    model = OneUnitRNN(2.0, 0.25)
    loss_fn = lambda m, target: (m() - target) ** 2
    losses, norms = train_tracking_gradients(model, loss_fn, [0.7] * 3, lr=0.01)
    assert torch.isfinite(losses).all() and losses[-1] < losses[0]
    along, norm = loss_along_gradient(model, loss_fn, 0.7, [0.0, 1e-3])
    assert along[1] < along[0] and norm > 0
    with pytest.raises(ValueError, match="steps"):
        one_unit_rnn(torch.tensor(2.0), torch.tensor(0.0), steps=0)
    with pytest.raises(TypeError, match="w must be"):
        OneUnitRNN("2", 0.0)
