"""The long-memory task: data layout, chance level, and a quick learnability check."""
import pytest
import torch

from lmcourse.memory_task import MemoryTask, SequenceClassifier, accuracy, train_on_gap
from lmcourse.rnn import set_forget_bias


def test_batches_have_signal_first_noise_then_query():
    task = MemoryTask(num_classes=3, num_noise=5)
    x, y = task.batch(10, gap=7, generator=torch.Generator().manual_seed(0))
    assert x.shape == (10, 9) and y.shape == (10,)
    assert torch.equal(x[:, 0], y) and torch.all(y < 3)
    assert torch.all((x[:, 1:-1] >= 3) & (x[:, 1:-1] < 8))
    assert task.query_id == 8 and torch.all(x[:, -1] == 8) and task.vocab_size == 9
    assert task.chance == pytest.approx(1 / 3)
    a = task.batch(4, 3, torch.Generator().manual_seed(1))
    b = task.batch(4, 3, torch.Generator().manual_seed(1))
    assert torch.equal(a[0], b[0])


def test_classifier_shapes_and_forget_bias():
    model = SequenceClassifier(vocab_size=9, num_classes=3, hidden_size=8, forget_bias=2.0)
    assert model(torch.zeros(5, 4, dtype=torch.long)).shape == (5, 3)
    cell = model.rnn.cells[0]
    assert torch.all(cell.bias_ih[8:16] == 2.0) and torch.all(cell.bias_hh[8:16] == 0.0)


def test_short_gap_is_learned_and_accuracy_is_a_share():
    _, acc = train_on_gap("lstm", gap=2, steps=60, hidden_size=16)
    assert acc > 0.9
    task = MemoryTask()
    model = SequenceClassifier(task.vocab_size, task.num_classes)
    assert 0.0 <= accuracy(model, task.batch(50, 3)) <= 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_classes"):
        MemoryTask(num_classes=1)
    with pytest.raises(ValueError, match="gap"):
        MemoryTask().batch(4, gap=-1)
    with pytest.raises(ValueError, match="mode"):
        train_on_gap("cnn", 3)
    with pytest.raises(ValueError, match="rnn must be an LSTM"):
        set_forget_bias(SequenceClassifier(9, 3, mode="gru").rnn, 1.0)


def test_orthogonal_init_early_stopping_and_parameter_matching():
    from lmcourse.gradients import spectral_radius
    from lmcourse.memory_task import init_orthogonal_, limit, matched_rnn_width
    from lmcourse.rnn import count_parameters

    model = init_orthogonal_(SequenceClassifier(9, 3, hidden_size=8, mode="rnn"), torch.Generator().manual_seed(0))
    w = model.rnn.cells[0].weight_hh.detach()
    assert torch.allclose(w @ w.T, torch.eye(8), atol=1e-5) and spectral_radius(w) == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="simple RNN"):
        init_orthogonal_(SequenceClassifier(9, 3, hidden_size=8, mode="lstm"))

    model, acc = train_on_gap("lstm", gap=2, steps=200, hidden_size=16, stop_at=0.95, init="default")
    assert acc > 0.9 and model.steps_trained < 200           # stopped early once solved
    model, _ = train_on_gap("rnn", gap=2, steps=20, hidden_size=8, init="orthogonal")
    assert model.steps_trained == 20

    task = MemoryTask()
    width = matched_rnn_width(16, task)
    lstm = SequenceClassifier(task.vocab_size, task.num_classes, 16, "lstm")
    rnn = SequenceClassifier(task.vocab_size, task.num_classes, width, "rnn")
    wider = SequenceClassifier(task.vocab_size, task.num_classes, width + 1, "rnn")
    assert abs(count_parameters(rnn) - count_parameters(lstm)) <= abs(count_parameters(wider) - count_parameters(lstm))
    assert abs(count_parameters(rnn) / count_parameters(lstm) - 1) < 0.02       # the chapter's matched pair

    assert limit({4: [1.0, 0.95], 8: [0.99, 0.5], 16: [1.0, 1.0]}) == 4     # 16 does not count after 8 failed
    assert limit({4: [0.5], 8: []}) is None
    assert limit({4: [1.0], 8: []}) == 4                                      # a gap not run counts as failed
    with pytest.raises(ValueError, match="init"):
        train_on_gap("rnn", 2, init="identity")
    with pytest.raises(ValueError, match="stop_at"):
        train_on_gap("rnn", 2, stop_at=1.5)


def test_irnn_starts_as_an_identity_relu_rnn_and_learns_a_short_gap():
    from lmcourse.memory_task import IRNN, init_orthogonal_

    irnn = IRNN(5, 6)
    assert torch.equal(irnn.rnn.weight_hh_l0, torch.eye(6)) and irnn.rnn.nonlinearity == "relu"
    assert not irnn.rnn.bias_ih_l0.any() and not irnn.rnn.bias_hh_l0.any()
    out, h = irnn(torch.randn(2, 7, 5))
    assert out.shape == (2, 7, 6) and torch.equal(out[:, -1], h[0])
    model, acc = train_on_gap("irnn", gap=4, steps=300, hidden_size=16, stop_at=0.95)
    assert isinstance(model.rnn, IRNN) and acc > 0.9
    with pytest.raises(ValueError, match="simple RNN"):
        init_orthogonal_(SequenceClassifier(9, 3, hidden_size=8, mode="irnn"))
    with pytest.raises(ValueError, match="input_std"):
        IRNN(5, 6, input_std=-1.0)
