import pytest
import torch

from lmcourse.multihead_task import (
    IGNORE,
    TwoPositionModel,
    offset_shares,
    train_two_position,
    two_position_batch,
)


def test_targets_are_the_difference_of_the_two_offsets():
    x, y = two_position_batch(4, 12, 10, (1, 3), torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 12)
    assert (y[:, :3] == IGNORE).all()
    for t in range(3, 12):
        assert torch.equal(y[:, t], (x[:, t - 1] - x[:, t - 3]) % 10)


def test_one_token_alone_says_nothing_about_the_target():
    x, y = two_position_batch(20000, 4, 5, (1, 3), torch.Generator().manual_seed(1))
    for token in range(5):
        counts = torch.bincount(y[x[:, 2] == token, 3], minlength=5).float()
        assert (counts / counts.sum() - 0.2).abs().max() < 0.03


def test_parameters_do_not_depend_on_the_heads():
    counts = {h: sum(p.numel() for p in TwoPositionModel(10, 16, 32, h).parameters()) for h in (1, 2, 4)}
    assert len(set(counts.values())) == 1


def test_model_shapes_and_causality():
    torch.manual_seed(0)
    model = TwoPositionModel(10, 8, 16, 2)
    x = torch.randint(10, (3, 8))
    logits, w = model(x, need_weights=True)
    assert logits.shape == (3, 8, 10) and w.shape == (3, 2, 8, 8)
    assert w.triu(1).abs().max() == 0
    x2 = x.clone()
    x2[:, -1] = (x2[:, -1] + 1) % 10
    assert torch.allclose(model(x2)[0][:, :-1], logits[:, :-1], atol=1e-6)


def test_offset_shares_reads_a_known_pattern():
    w = torch.zeros(1, 1, 6, 6)
    w[0, 0, torch.arange(1, 6), torch.arange(0, 5)] = 1.0          # always the previous token
    w[0, 0, 0, 0] = 1.0
    shares = offset_shares(w, 2)
    assert torch.allclose(shares, torch.tensor([[0.0, 1.0, 0.0]]))


def test_training_learns_the_task():
    torch.manual_seed(0)
    model = TwoPositionModel(5, 8, 16, 2)
    curve = train_two_position(model, 300, 64, 8, 5, lr=1e-2, seed=0, eval_every=100, eval_batch=200)
    assert len(curve) == 3 and curve[-1] > 0.9


@pytest.mark.parametrize("kwargs", [dict(batch_size=0), dict(num_symbols=1), dict(length=3),
                                    dict(offsets=(1, 1)), dict(offsets=(0, 2))])
def test_bad_inputs_raise(kwargs):
    args = dict(batch_size=2, length=8, num_symbols=10, offsets=(1, 3)) | kwargs
    with pytest.raises(ValueError):
        two_position_batch(**args)


def test_bad_model_input_raises():
    with pytest.raises(ValueError, match="x must be"):
        TwoPositionModel(10, 8, 16, 2)(torch.zeros(2, 9, dtype=torch.long))
    with pytest.raises(ValueError):
        offset_shares(torch.zeros(1, 1, 3, 3), 3)
