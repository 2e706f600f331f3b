"""Next-token sampling and BERT's masking."""
import pytest
import torch

from lmcourse.masking import IGNORE_INDEX, mask_tokens
from lmcourse.sampling import filter_logits, greedy_next, sample_next

PROBS = torch.tensor([[0.5, 0.3, 0.15, 0.05]])


def test_temperature_sharpens_and_flattens():
    logits = PROBS.log()
    assert torch.allclose(filter_logits(logits).softmax(-1), PROBS)
    cold = filter_logits(logits, temperature=0.5).softmax(-1)
    hot = filter_logits(logits, temperature=2.0).softmax(-1)
    assert cold[0, 0] > PROBS[0, 0] > hot[0, 0]
    expected = PROBS ** 2 / (PROBS ** 2).sum()  # T = 0.5 squares the probabilities
    assert torch.allclose(cold, expected, atol=1e-6)


def test_top_k_and_top_p_keep_the_right_tokens():
    logits = PROBS.log()
    assert torch.allclose(filter_logits(logits, top_k=2).softmax(-1), torch.tensor([[0.625, 0.375, 0, 0]]))
    # top-p keeps the smallest prefix whose mass reaches p: 0.5 -> {0}; 0.8 -> {0, 1}; 0.81 -> {0, 1, 2}
    assert (filter_logits(logits, top_p=0.5).softmax(-1) > 0).sum() == 1
    assert (filter_logits(logits, top_p=0.8).softmax(-1) > 0).sum() == 2
    assert (filter_logits(logits, top_p=0.81).softmax(-1) > 0).sum() == 3
    assert (filter_logits(logits, top_p=1.0).softmax(-1) > 0).sum() == 4
    shuffled = logits[:, [2, 0, 3, 1]]
    assert (filter_logits(shuffled, top_p=0.8).softmax(-1) > 0).tolist() == [[False, True, False, True]]


def test_sampling_bad_inputs():
    logits = PROBS.log()
    with pytest.raises(ValueError, match="temperature must be > 0"):
        filter_logits(logits, temperature=0.0)
    with pytest.raises(ValueError, match="top_p must be > 0"):
        filter_logits(logits, top_p=0.0)
    with pytest.raises(ValueError, match="top_p must be <= 1"):
        filter_logits(logits, top_p=1.5)
    with pytest.raises(ValueError, match="top_k must be >= 1"):
        filter_logits(logits, top_k=0)
    with pytest.raises(ValueError, match=r"logits must be \(batch, vocab\)"):
        sample_next(logits[0])
    with pytest.raises(TypeError, match="logits must be Tensor"):
        filter_logits([1.0])


def test_sample_next_follows_the_distribution():
    g = torch.Generator().manual_seed(0)
    draws = sample_next(PROBS.log().expand(20000, 4), generator=g)
    freq = torch.bincount(draws, minlength=4).float() / len(draws)
    assert torch.allclose(freq, PROBS[0], atol=0.015)
    assert greedy_next(PROBS.log()).tolist() == [0]


def test_mask_tokens_proportions_and_labels():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 1000, (64, 512), generator=g)
    ids[:, 0] = 2  # a special token at every position 0, never chosen
    out = mask_tokens(ids, mask_id=3, vocab_size=1000, special_ids=(0, 1, 2, 3, 4), generator=g)
    n = ids.numel()
    assert abs(out.chosen.sum() / n - 0.15) < 0.005
    assert abs(out.masked.sum() / n - 0.12) < 0.005
    assert abs(out.randomized.sum() / n - 0.015) < 0.002
    assert abs(out.kept.sum() / n - 0.015) < 0.002
    assert not out.chosen[:, 0].any()
    assert torch.equal(out.masked | out.randomized | out.kept, out.chosen)
    assert (out.input_ids[out.masked] == 3).all()
    assert torch.equal(out.input_ids[out.kept], ids[out.kept])
    assert torch.equal(out.input_ids[~out.chosen], ids[~out.chosen])
    assert (out.input_ids[out.randomized] >= 5).all()
    assert torch.equal(out.labels[out.chosen], ids[out.chosen])
    assert (out.labels[~out.chosen] == IGNORE_INDEX).all()


def test_mask_tokens_bad_inputs():
    ids = torch.tensor([5, 6, 7])
    with pytest.raises(TypeError, match="int64"):
        mask_tokens(ids.float(), 3, 10)
    with pytest.raises(ValueError, match="mask_prob must be <= 1"):
        mask_tokens(ids, 3, 10, mask_prob=1.5)
    with pytest.raises(ValueError, match="mask_fraction \\+ random_fraction"):
        mask_tokens(ids, 3, 10, mask_fraction=0.9, random_fraction=0.2)
    with pytest.raises(ValueError, match="input_ids must lie in"):
        mask_tokens(torch.tensor([12]), 3, 10)
    with pytest.raises(ValueError, match="mask_id must be <= 9"):
        mask_tokens(ids, 10, 10)
