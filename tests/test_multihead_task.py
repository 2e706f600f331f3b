import pytest
import torch

from lmcourse.multihead_task import (
    BLUE,
    IGNORE,
    PLAIN,
    RED,
    TwoPositionModel,
    accuracy,
    conflict_positions,
    latest_pair_batch,
    latest_pair_shares,
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
    curve = train_two_position(model, 300, 64, lambda b, g: two_position_batch(b, 8, 5, (1, 3), g), lr=1e-2,
                               seed=0, eval_every=100, eval_batch=200)
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


def _coloured(colours, digits, K=10):
    return torch.tensor([[d + K * c for c, d in zip(colours, digits)]])


def test_latest_pair_targets_follow_the_latest_of_each_colour():
    x, y = latest_pair_batch(300, 12, 10, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (300, 12) and x.max() < 30
    colour, digit = x // 10, x % 10
    for b in range(300):
        red = blue = None
        for t in range(12):
            red = digit[b, t].item() if colour[b, t] == RED else red
            blue = digit[b, t].item() if colour[b, t] == BLUE else blue
            assert y[b, t].item() == (IGNORE if red is None or blue is None else (red - blue) % 10)
    shares = torch.bincount(colour.flatten(), minlength=3).float() / colour.numel()
    assert (shares - torch.tensor([0.2, 0.2, 0.6])).abs().max() < 0.02


def test_conflict_positions_mark_an_older_token_after_the_other_colours_latest():
    # t:        0     1     2      3     4
    x = _coloured([RED, BLUE, RED, PLAIN, BLUE], [1, 2, 3, 4, 5])
    # t=2: the older red (t=0) lies before the latest blue (t=1): no conflict;
    # t=4: the older blue (t=1) lies before the latest red (t=2): no conflict
    crossed, older = conflict_positions(x, 10)
    assert crossed.tolist() == [[False] * 5]
    assert older.tolist() == [[False, False, True, True, True]]       # an older red from t=2, blue from t=4
    x = _coloured([BLUE, RED, RED, PLAIN], [1, 2, 3, 4])
    # t=2: older red (t=1) lies after the latest blue (t=0): a conflict, and it stays one at t=3
    crossed, older = conflict_positions(x, 10)
    assert crossed.tolist() == [[False, False, True, True]] and older.tolist() == [[False, False, True, True]]


def test_latest_pair_shares_reads_a_known_pattern():
    x = _coloured([RED, BLUE, RED, PLAIN], [1, 2, 3, 4])
    w = torch.zeros(1, 2, 4, 4)
    w[0, 0, torch.arange(4), torch.tensor([0, 0, 2, 2])] = 1.0     # head 0: always the latest red
    w[0, 1, :, 0] = 0.5                                              # head 1: half on the first (older) red,
    w[0, 1, :, 3] = 0.5                                              # half on the plain token
    shares = latest_pair_shares(w, x, 10)                            # query rows 1..3 have a target
    assert torch.allclose(shares[0], torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0]))
    assert torch.allclose(shares[1], torch.tensor([1 / 6, 0.0, 1 / 3, 0.0, 0.5]))


def test_accuracy_restricted_to_positions():
    model = TwoPositionModel(10, 6, 8, 2, num_inputs=30)
    x, y = latest_pair_batch(50, 6, 10, torch.Generator().manual_seed(1))
    everywhere = accuracy(model, x, y)
    crossed, _ = conflict_positions(x, 10)
    a, b = accuracy(model, x, y, crossed), accuracy(model, x, y, ~crossed)
    n_a, n_b = ((y != IGNORE) & crossed).sum(), ((y != IGNORE) & ~crossed).sum()
    assert abs((a * n_a + b * n_b) / (n_a + n_b) - everywhere) < 1e-6


def test_two_heads_learn_the_moving_task():
    torch.manual_seed(0)
    model = TwoPositionModel(10, 12, 32, 2, num_inputs=30)
    curve = train_two_position(model, 400, 128, lambda b, g: latest_pair_batch(b, 12, 10, g), seed=0,
                               eval_every=200, eval_batch=500)
    assert curve[-1] > 0.9, curve


def test_bad_latest_pair_inputs_raise():
    with pytest.raises(ValueError, match="marked_share"):
        latest_pair_batch(2, 8, 10, marked_share=0.0)
    with pytest.raises(ValueError, match="length"):
        latest_pair_batch(2, 1, 10)
    with pytest.raises(ValueError, match="weights must be"):
        latest_pair_shares(torch.zeros(1, 1, 4, 4), torch.zeros(1, 5, dtype=torch.long), 10)
