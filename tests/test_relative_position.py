"""The relative bias table and the one-layer model with four kinds of position."""
import pytest
import torch

from lmcourse import set_seed
from lmcourse.positional import sinusoidal_encoding
from lmcourse.relative_position import KINDS, OffsetModel, relative_bias


def test_relative_bias_indexes_the_clipped_offset():
    table = torch.arange(8.0).view(2, 4)                               # 2 heads, offsets 0..3
    bias = relative_bias(table, 6)
    assert bias.shape == (2, 6, 6)
    for h in range(2):
        for i in range(6):
            for j in range(i + 1):
                assert bias[h, i, j] == table[h, min(i - j, 3)]


def test_a_learned_offset_works_at_any_length():
    set_seed(0)
    model = OffsetModel(5, "relative", d_model=8, num_heads=2, max_len=4, max_offset=3).eval()
    with torch.no_grad():
        model.qkv.weight.zero_()                                       # scores come from the bias alone
        model.qkv.bias.zero_()
        model.offset_scores.fill_(-30.0)
        model.offset_scores[:, 1] = 30.0                               # every head reads the previous token
    _, weights = model(torch.randint(5, (2, 40)))                     # ten times max_len
    t = torch.arange(1, 40)
    assert torch.allclose(weights[:, :, t, t - 1], torch.ones(2, 2, 39), atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_gives_causal_weights_and_logits(kind):
    set_seed(0)
    model = OffsetModel(7, kind, d_model=8, num_heads=2, max_len=12)
    logits, weights = model(torch.randint(7, (3, 10)))
    assert logits.shape == (3, 10, 7) and weights.shape == (3, 2, 10, 10)
    assert torch.triu(weights, diagonal=1).abs().max() == 0
    assert torch.allclose(weights.sum(-1), torch.ones(3, 2, 10))


def test_no_positions_sees_the_past_as_a_bag():
    set_seed(0)
    model = OffsetModel(7, "none", d_model=8, num_heads=2).eval()
    x = torch.randint(7, (1, 6))
    shuffled = x.clone()
    shuffled[0, :5] = x[0, torch.tensor([3, 0, 4, 1, 2])]              # the past permuted, the last token kept
    with torch.no_grad():
        assert torch.allclose(model(x)[0][:, -1], model(shuffled)[0][:, -1], atol=1e-6)


def test_sinusoidal_table_and_absolute_limits():
    model = OffsetModel(7, "sinusoidal", d_model=8, max_len=12)
    assert torch.equal(model.position, sinusoidal_encoding(12, 8))
    for kind in ("sinusoidal", "learned"):
        with pytest.raises(ValueError, match="max_len"):
            OffsetModel(7, kind, d_model=8, max_len=12)(torch.zeros(1, 13, dtype=torch.long))


@pytest.mark.parametrize("kwargs, name", [({"positional": "rotary"}, "positional"), ({"d_model": 0}, "d_model"),
                                          ({"num_heads": 3}, "num_heads"), ({"max_offset": 0}, "max_offset")])
def test_bad_arguments_name_themselves(kwargs, name):
    args = {"num_symbols": 7, "positional": "relative", "d_model": 8, "num_heads": 2, **kwargs}
    with pytest.raises(ValueError, match=name):
        OffsetModel(**args)


def test_bad_inputs():
    with pytest.raises(ValueError, match="table"):
        relative_bias(torch.zeros(3), 4)
    with pytest.raises(ValueError, match="length"):
        relative_bias(torch.zeros(2, 3), 0)
    with pytest.raises(ValueError, match="x"):
        OffsetModel(7, "none", d_model=8)(torch.zeros(5, dtype=torch.long))
