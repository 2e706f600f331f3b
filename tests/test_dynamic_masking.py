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
