"""The from-scratch cells and stacks against torch.nn, with copied weights, forward and backward."""
import pytest
import torch
from torch import nn

from lmcourse.rnn import CELLS, GRUCell, LSTMCell, Recurrent, RecurrentLM, RNNCell, count_parameters, lm_loss

TOL = dict(rtol=1e-5, atol=1e-6)   # float32; the loop and torch's kernels sum in different orders
TORCH_CELLS = {"rnn": nn.RNNCell, "lstm": nn.LSTMCell, "gru": nn.GRUCell}
TORCH_STACKS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


@pytest.mark.parametrize("mode", ["rnn", "lstm", "gru"])
def test_cell_matches_torch_forward_and_backward(mode):
    torch.manual_seed(0)
    ours, theirs = CELLS[mode](5, 7), TORCH_CELLS[mode](5, 7)
    ours.load_state_dict(theirs.state_dict())          # same names, same layout
    x = torch.randn(3, 5)
    if mode == "lstm":
        state = (torch.randn(3, 7), torch.randn(3, 7))
        h1, c1 = ours(x, state)
        h2, c2 = theirs(x, state)
        torch.testing.assert_close(c1, c2, **TOL)
        out1, out2 = h1 + c1, h2 + c2
    else:
        state = torch.randn(3, 7)
        out1, out2 = ours(x, state), theirs(x, state)
    torch.testing.assert_close(out1, out2, **TOL)
    (out1 ** 2).sum().backward()
    (out2 ** 2).sum().backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **TOL, msg=f"gradient of {name}")


@pytest.mark.parametrize("mode", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("fast", [False, True])
def test_stack_matches_torch_forward_and_backward(mode, fast):
    torch.manual_seed(1)
    theirs = TORCH_STACKS[mode](4, 6, num_layers=2, batch_first=True)
    ours = Recurrent(mode, 4, 6, num_layers=2, fast=fast).load_from_torch(theirs)
    x = torch.randn(3, 9, 4, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    out1, state1 = ours(x)
    out2, state2 = theirs(x2)
    torch.testing.assert_close(out1, out2, **TOL)
    if mode == "lstm":
        torch.testing.assert_close(state1[0], state2[0], **TOL)
        torch.testing.assert_close(state1[1], state2[1], **TOL)
    else:
        torch.testing.assert_close(state1, state2, **TOL)
    (out1.tanh().sum() + out1[:, -1].pow(2).sum()).backward()
    (out2.tanh().sum() + out2[:, -1].pow(2).sum()).backward()
    torch.testing.assert_close(x.grad, x2.grad, **TOL)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.torch_parameters().items():
        torch.testing.assert_close(p.grad, theirs_params[name].grad, **TOL, msg=f"gradient of {name}")


@pytest.mark.parametrize("mode", ["rnn", "lstm", "gru"])
def test_fast_and_explicit_paths_agree_with_initial_state(mode):
    torch.manual_seed(2)
    slow = Recurrent(mode, 3, 5, num_layers=2)
    fast = Recurrent(mode, 3, 5, num_layers=2, fast=True)
    fast.load_state_dict(slow.state_dict())
    h0 = torch.randn(2, 4, 5)
    state = (h0, torch.randn(2, 4, 5)) if mode == "lstm" else h0
    x = torch.randn(4, 6, 3)
    torch.testing.assert_close(slow(x, state)[0], fast(x, state)[0], **TOL)


def test_parameter_counts_match_torch():
    for mode, gates in (("rnn", 1), ("lstm", 4), ("gru", 3)):
        ours = Recurrent(mode, 10, 20, num_layers=2)
        assert count_parameters(ours) == sum(p.numel() for p in TORCH_STACKS[mode](10, 20, 2).parameters())
        assert count_parameters(ours.cells[0]) == gates * (20 * 10 + 20 * 20 + 2 * 20)


def test_lm_shapes_loss_and_generation_are_deterministic():
    torch.manual_seed(0)
    model = RecurrentLM(vocab_size=11, embed_dim=4, hidden_size=8, num_layers=2)
    x = torch.randint(11, (2, 5))
    logits, (h, c) = model(x)
    assert logits.shape == (2, 5, 11) and h.shape == (2, 2, 8) and c.shape == (2, 2, 8)
    loss = lm_loss(model, (x, x))
    assert loss.ndim == 0 and torch.isfinite(loss)
    a = model.generate([1, 2], 10, generator=torch.Generator().manual_seed(0))
    b = model.generate([1, 2], 10, generator=torch.Generator().manual_seed(0))
    assert a == b and len(a) == 12 and a[:2] == [1, 2] and all(0 <= i < 11 for i in a)
    greedy = model.generate([3], 5, top_k=1)
    assert greedy == model.generate([3], 5, top_k=1)


def test_generation_with_state_equals_rereading_the_whole_sequence():
    torch.manual_seed(0)
    model = RecurrentLM(vocab_size=7, embed_dim=3, hidden_size=5, mode="gru")
    ids = model.generate([0], 6, top_k=1)
    logits, _ = model(torch.tensor([ids[:-1]]))
    assert logits[0].argmax(-1).tolist() == ids[1:]


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="mode"):
        Recurrent("transformer", 3, 4)
    with pytest.raises(ValueError, match="hidden_size"):
        RNNCell(3, 0)
    with pytest.raises(TypeError, match="num_layers"):
        Recurrent("rnn", 3, 4, num_layers=1.5)
    with pytest.raises(ValueError, match=r"x must be \(batch, 3\)"):
        LSTMCell(3, 4)(torch.randn(2, 5), LSTMCell(3, 4).zero_state(2))
    with pytest.raises(ValueError, match=r"x must be \(batch, time, 3\)"):
        Recurrent("gru", 3, 4)(torch.randn(2, 3))
    with pytest.raises(TypeError, match="module must be LSTM"):
        Recurrent("lstm", 3, 4).load_from_torch(nn.GRU(3, 4, batch_first=True))
    with pytest.raises(ValueError, match="one-directional"):
        Recurrent("gru", 3, 4).load_from_torch(nn.GRU(3, 4, batch_first=True, bidirectional=True))
    with pytest.raises(ValueError, match="ids must be"):
        RecurrentLM(5, 2, 3)(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="prompt_ids"):
        RecurrentLM(5, 2, 3).generate([], 3)
    assert isinstance(GRUCell(2, 3).zero_state(4), torch.Tensor)


def test_stateful_loss_carries_detached_state_and_resets_each_pass():
    from lmcourse.data import lm_batches
    from lmcourse.rnn import StatefulLMLoss, detach_state, stream_loss

    torch.manual_seed(0)
    model = RecurrentLM(6, 3, 5, mode="lstm")
    ids = torch.randint(6, (64,), generator=torch.Generator().manual_seed(0))
    batches = lm_batches(ids, 2, 8)
    loss_fn = StatefulLMLoss(len(batches))
    first = loss_fn(model, batches[0])
    assert loss_fn.state is not None and not loss_fn.state[0].requires_grad
    second = loss_fn(model, batches[1])
    # the second window started from the first one's final state: same as running the two joined
    x = torch.cat([batches[0][0], batches[1][0]], dim=1)
    y = torch.cat([batches[0][1], batches[1][1]], dim=1)
    logits, _ = model(x)
    joined = nn.functional.cross_entropy(logits[:, 8:].reshape(-1, 6), y[:, 8:].reshape(-1))
    assert torch.allclose(second, joined, atol=1e-6)
    second.backward()                                           # the graph stops at the window boundary
    for batch in batches[2:]:
        loss_fn(model, batch)
    assert torch.allclose(loss_fn(model, batches[0]), first)   # a new pass starts from zeros again

    # stream_loss: carrying the state reads the stream as one text
    carried = stream_loss(model, batches[:2], carry_state=True)
    whole = nn.functional.cross_entropy(logits.reshape(-1, 6), y.reshape(-1)).item()
    assert carried == pytest.approx(whole, rel=1e-5)
    assert stream_loss(model, batches[:1], carry_state=False) == pytest.approx(first.item(), rel=1e-5)
    assert detach_state(None) is None
    with pytest.raises(ValueError, match="batches"):
        stream_loss(model, [])
    with pytest.raises(ValueError, match="windows_per_pass"):
        StatefulLMLoss(0)


def test_lstm_gate_trace_reproduces_the_model():
    from lmcourse.rnn import lstm_gate_trace

    torch.manual_seed(0)
    model = RecurrentLM(6, 3, 5, mode="lstm")
    ids = torch.tensor([1, 4, 2, 0, 5])
    trace = lstm_gate_trace(model, ids)
    assert set(trace) == {"input", "forget", "output", "cell"} and trace["forget"].shape == (5, 5)
    assert ((trace["forget"] > 0) & (trace["forget"] < 1)).all()
    _, (h_n, c_n) = model.rnn(model.embedding(ids[None]))
    assert torch.allclose(trace["cell"][-1], c_n[0, 0], atol=1e-6)
    with pytest.raises(ValueError, match="one-layer LSTM"):
        lstm_gate_trace(RecurrentLM(6, 3, 5, mode="gru"), ids)
    with pytest.raises(ValueError, match="one sequence"):
        lstm_gate_trace(model, ids[None])


def test_two_of_our_stacks_compute_torchs_bidirectional_lstm():
    torch.manual_seed(0)
    reference = nn.LSTM(3, 5, batch_first=True, bidirectional=True)
    forward, backward = Recurrent("lstm", 3, 5), Recurrent("lstm", 3, 5)
    with torch.no_grad():
        for name, p in forward.torch_parameters().items():
            p.copy_(getattr(reference, name))
        for name, p in backward.torch_parameters().items():
            p.copy_(getattr(reference, name + "_reverse"))
    x = torch.randn(2, 7, 3)
    ours = torch.cat([forward(x)[0], backward(x.flip(1))[0].flip(1)], dim=-1)   # (2, 7, 10)
    torch.testing.assert_close(ours, reference(x)[0], rtol=1e-5, atol=1e-6)
