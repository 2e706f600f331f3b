import pytest
import torch

from lmcourse.dynamic_masking import coverage, distinct_masks, masks_per_epoch


def _ids():
    return torch.randint(5, 100, (64, 128), generator=torch.Generator().manual_seed(0))


def test_static_masks_repeat_every_num_copies_epochs():
    chosen = masks_per_epoch(_ids(), 40, 10, mask_id=1, vocab_size=100,
                             generator=torch.Generator().manual_seed(1))
    assert chosen.shape == (40, 64, 128)
    assert torch.equal(chosen[0], chosen[10]) and torch.equal(chosen[3], chosen[33])
    assert distinct_masks(chosen[:, 0]) == 10


def test_dynamic_masks_differ_every_epoch():
    chosen = masks_per_epoch(_ids(), 40, None, mask_id=1, vocab_size=100,
                             generator=torch.Generator().manual_seed(1))
    assert distinct_masks(chosen[:, 0]) == 40


@pytest.mark.parametrize("copies", [1, 10, None])
def test_coverage_matches_theory(copies):
    chosen = masks_per_epoch(_ids(), 40, copies, mask_id=1, vocab_size=100,
                             generator=torch.Generator().manual_seed(2))
    k = 40 if copies is None else copies
    expected = 1 - 0.85 ** k
    assert abs(coverage(chosen)[-1].item() - expected) < 0.01   # 8192 positions: sd < 0.005


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_copies"):
        masks_per_epoch(_ids(), 4, 0, mask_id=1, vocab_size=100)
    with pytest.raises(TypeError, match="input_ids"):
        masks_per_epoch([1, 2], 4, 1, mask_id=1, vocab_size=100)
    with pytest.raises(ValueError, match="chosen"):
        coverage(torch.zeros(4))
    with pytest.raises(ValueError, match="chosen"):
        distinct_masks(torch.zeros(4, 3, 2, dtype=torch.bool))


def test_masked_epochs_reuse_static_copies_and_match_masks_per_epoch():
    from lmcourse.dynamic_masking import masked_epochs
    epochs = masked_epochs(_ids(), 12, 3, mask_id=1, vocab_size=100, generator=torch.Generator().manual_seed(3))
    assert len(epochs) == 12 and epochs[0] is epochs[3] and epochs[1] is not epochs[2]
    chosen = masks_per_epoch(_ids(), 12, 3, mask_id=1, vocab_size=100, generator=torch.Generator().manual_seed(3))
    assert all(torch.equal(m.chosen, c) for m, c in zip(epochs, chosen))


def test_tiny_mlm_loss_counts_only_chosen_positions():
    from lmcourse.dynamic_masking import TinyMLM, mlm_loss
    from lmcourse.masking import mask_tokens
    torch.manual_seed(0)
    model = TinyMLM(100, d_model=16, num_heads=2, num_layers=1, max_len=128)
    batch = mask_tokens(_ids()[:4], 1, 100, generator=torch.Generator().manual_seed(4))
    logits = model(batch.input_ids)
    assert logits.shape == (4, 128, 100)
    chosen = batch.chosen
    expected = torch.nn.functional.cross_entropy(logits[chosen], batch.labels[chosen])
    assert torch.allclose(mlm_loss(model, batch), expected, atol=1e-6)
    with pytest.raises(TypeError, match="batch"):
        mlm_loss(model, (batch.input_ids, batch.labels))


def test_mlm_batches_are_windows_of_the_stream_masked_afresh():
    from lmcourse.dynamic_masking import mlm_batches
    stream = torch.arange(3, 203)
    batches = mlm_batches(stream, 3, batch_size=4, seq_len=8, mask_id=1, vocab_size=300,
                          special_ids=(0, 1), generator=torch.Generator().manual_seed(0))
    assert len(batches) == 3
    for b in batches:
        assert b.input_ids.shape == b.labels.shape == (4, 8)
        original = torch.where(b.chosen, b.labels, b.input_ids)
        assert (original.diff(dim=1) == 1).all()          # consecutive tokens of the stream
    assert not torch.equal(batches[0].chosen, batches[1].chosen)
    with pytest.raises(ValueError, match="num_batches"):
        mlm_batches(stream, 0, 4, 8, 1, 300)
