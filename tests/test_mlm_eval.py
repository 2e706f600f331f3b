"""The neighbour-count baseline of a masked LM, on streams where the answer is known."""
import pytest
import torch

from lmcourse.mlm_eval import NeighbourCounts, neighbour_log_probs


def test_a_piece_always_between_the_same_neighbours_is_predicted():
    stream = torch.tensor([2, 3, 4] * 50 + [5, 6] * 10)          # 3 always follows 2 and precedes 4
    counts = NeighbourCounts(stream, vocab_size=8, k=0.01)
    x = torch.tensor([[2, 7, 4, 5, 7]])                          # 7 stands for [MASK]
    chosen = torch.tensor([[False, True, False, False, True]])
    logp = neighbour_log_probs(counts, x, chosen)                # (2, 8)
    assert logp.shape == (2, 8)
    assert torch.allclose(logp.exp().sum(-1), torch.ones(2))
    assert logp[0].argmax() == 3 and logp[0, 3].exp() > 0.9
    # the last position has one neighbour, 5, which is followed by 6 every time
    assert logp[1].argmax() == 6


def test_masked_missing_or_unseen_neighbours_fall_back_on_the_unigram():
    stream = torch.tensor([1, 2, 3, 1, 2, 3, 1, 1])
    counts = NeighbourCounts(stream, vocab_size=6)
    x = torch.tensor([[5, 4, 4]])                                # 5 never seen, 4 chosen ([MASK]) twice
    chosen = torch.tensor([[False, True, True]])
    logp = neighbour_log_probs(counts, x, chosen)
    unigram = torch.log_softmax(counts.unigram, -1).float()
    assert torch.allclose(logp, unigram.expand(2, -1), atol=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="train_ids"):
        NeighbourCounts(torch.tensor([1]), vocab_size=4)
    with pytest.raises(ValueError, match="train_ids"):
        NeighbourCounts(torch.tensor([1, 9]), vocab_size=4)
    with pytest.raises(ValueError, match="k"):
        NeighbourCounts(torch.tensor([1, 2]), vocab_size=4, k=0.0)
    counts = NeighbourCounts(torch.tensor([1, 2, 3]), vocab_size=4)
    with pytest.raises(ValueError, match="chosen"):
        neighbour_log_probs(counts, torch.tensor([[1, 2]]), torch.tensor([[True]]))
