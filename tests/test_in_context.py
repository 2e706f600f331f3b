import pytest
import torch

from lmcourse.gpt import GPT, GPTConfig
from lmcourse.in_context import answer_logits, key_value_batch, lookup_loss


def test_batch_answers_are_the_values_of_the_queried_key():
    ids, answers = key_value_batch(200, 8, 5, 4, torch.Generator().manual_seed(0))
    assert ids.shape == (200, 5) and answers.shape == (200,)
    for row, a in zip(ids, answers):
        pairs, query = row[:-1], row[-1].item()
        key = query - 8 * 5
        keys, values = pairs // 5, pairs % 5
        assert len(set(keys.tolist())) == 4                       # distinct keys
        assert key in keys.tolist() and values[keys.tolist().index(key)] == a
    assert ids.max() < 8 * 5 + 8


def test_tables_differ_between_sequences():
    ids, _ = key_value_batch(100, 8, 8, 6, torch.Generator().manual_seed(1))
    assert len({tuple(r[:-1].tolist()) for r in ids}) > 90


def test_loss_and_logits_shapes_and_validation():
    model = GPT(GPTConfig(vocab_size=8 * 8 + 8, context_size=7, d_model=16, num_layers=1, num_heads=2))
    batch = key_value_batch(4, generator=torch.Generator().manual_seed(2))
    assert answer_logits(model, batch[0], 8).shape == (4, 8)
    assert lookup_loss(model, batch, 8).dim() == 0
    with pytest.raises(ValueError, match="num_pairs"):
        key_value_batch(4, num_keys=3, num_pairs=4)
