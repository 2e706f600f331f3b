"""The random-future probe: a causal decoder is blind to it, an unmasked one is not."""
import pytest
import torch

from lmcourse import set_seed
from lmcourse.leak_probe import random_future_logits
from lmcourse.transformer import Seq2SeqTransformer, TransformerConfig


def _model(causal):
    set_seed(0)
    return Seq2SeqTransformer(TransformerConfig(src_vocab_size=9, tgt_vocab_size=9, d_model=16, num_heads=2,
                                                num_encoder_layers=1, num_decoder_layers=2, d_ff=32,
                                                dropout=0.0, causal=causal))


def _batch():
    torch.manual_seed(1)
    src = torch.randint(3, 9, (4, 5))
    tgt_in = torch.randint(3, 9, (4, 6))
    tgt_in[:, 0] = 2
    tgt_in[0, 4:] = 0                                                  # one padded target
    return src, tgt_in


def test_a_causal_decoder_predicts_exactly_as_before():
    model, (src, tgt_in) = _model(True), _batch()
    with torch.no_grad():
        clean = model.eval()(src, tgt_in)
    assert torch.equal(random_future_logits(model, src, tgt_in, 3, 9), clean)


def test_an_unmasked_decoder_changes_its_predictions_but_not_at_the_last_position():
    model, (src, tgt_in) = _model(False), _batch()
    with torch.no_grad():
        clean = model.eval()(src, tgt_in)
    noisy = random_future_logits(model, src, tgt_in, 3, 9)
    assert (noisy[:, :-1] - clean[:, :-1]).abs().max() > 1e-3
    assert torch.allclose(noisy[:, -1], clean[:, -1])                  # nothing after the last position


def test_same_seed_same_noise_and_training_mode_restored():
    model, (src, tgt_in) = _model(False), _batch()
    model.train()
    first = random_future_logits(model, src, tgt_in, 3, 9, seed=5)
    assert model.training
    assert torch.equal(first, random_future_logits(model, src, tgt_in, 3, 9, seed=5))
    assert not torch.equal(first, random_future_logits(model, src, tgt_in, 3, 9, seed=6))


@pytest.mark.parametrize("kwargs, name", [({"low": -1}, "low"), ({"high": 3}, "high"), ({"seed": -2}, "seed")])
def test_bad_arguments_name_themselves(kwargs, name):
    model, (src, tgt_in) = _model(True), _batch()
    args = {"low": 3, "high": 9, **kwargs}
    with pytest.raises(ValueError, match=name):
        random_future_logits(model, src, tgt_in, **args)


def test_shapes_must_agree():
    model, (src, tgt_in) = _model(True), _batch()
    with pytest.raises(ValueError, match="tgt_in"):
        random_future_logits(model, src[:2], tgt_in, 3, 9)
