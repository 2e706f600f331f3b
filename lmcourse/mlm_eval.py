"""Scoring a masked language model fairly: at [MASK]ed positions only, against baselines.

A masked LM is trained on 15% of the positions, 80/10/10: most become [MASK], some a random piece,
some stay as they are. Scored on all of them, a model that predicts the piece frequencies at a
[MASK] and copies the input wherever the answer is visible already looks good. Scored where every
chosen position is [MASK]ed, nothing can be copied, and two count-based baselines mark the levels:
the piece frequencies (no context at all) and the two neighbouring pieces
(:func:`neighbour_log_probs`), the smallest context a model can read.
"""
import torch

from lmcourse.validate import check_float, check_int, check_token_ids, check_type


def unigram_loss(train_ids: torch.Tensor, targets: torch.Tensor, vocab_size: int) -> float:
    """Mean negative log-probability (nats) of ``targets`` (any shape) under add-one unigram counts
    of ``train_ids`` (any shape): the no-context baseline a trained model must beat."""
    check_int(vocab_size, "vocab_size", minimum=1)
    for ids, name in ((train_ids, "train_ids"), (targets, "targets")):
        check_type(ids, name, torch.Tensor)
        if ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
            raise TypeError(f"{name} must hold integer token ids, got {ids.dtype}")
        if ids.numel() == 0:
            raise ValueError(f"{name} must hold at least one id")
        low, high = torch.stack(torch.aminmax(ids)).tolist()
        if low < 0 or high >= vocab_size:
            raise ValueError(f"{name} must lie in [0, {vocab_size}), found {low if low < 0 else high}")
    counts = torch.bincount(train_ids.flatten(), minlength=vocab_size).double() + 1
    return -(counts / counts.sum()).log()[targets].mean().item()


class NeighbourCounts:
    """Add-``k`` bigram counts of a training stream, read in both directions.

    ``left[a]``: log P(x | the piece before x is a), (V, V); ``right[b]``: log P(x | the piece
    after x is b), (V, V); ``unigram``: log P(x), (V,), add-one.
    """

    def __init__(self, train_ids: torch.Tensor, vocab_size: int, k: float = 0.1):
        check_int(vocab_size, "vocab_size", minimum=2)
        check_type(train_ids, "train_ids", torch.Tensor)
        if train_ids.dim() != 1 or len(train_ids) < 2:
            raise ValueError(f"train_ids must be a 1-d stream of at least 2 ids, got shape {tuple(train_ids.shape)}")
        check_token_ids(train_ids, vocab_size, "train_ids")
        check_float(k, "k", minimum=0.0, strict_minimum=True)
        self.vocab_size = vocab_size
        self.seen = torch.bincount(train_ids, minlength=vocab_size) > 0                      # (V,)
        counts = torch.bincount(train_ids, minlength=vocab_size).double() + 1
        self.unigram = (counts / counts.sum()).log()                                       # (V,)
        pairs = torch.zeros(vocab_size, vocab_size, dtype=torch.float64)                   # [before, after]
        pairs.index_put_((train_ids[:-1], train_ids[1:]), torch.ones(len(train_ids) - 1, dtype=torch.float64),
                         accumulate=True)
        self.left = ((pairs + k) / (pairs + k).sum(1, keepdim=True)).log()                 # (V, V)
        self.right = ((pairs.T + k) / (pairs.T + k).sum(1, keepdim=True)).log()            # (V, V)


def neighbour_log_probs(counts: NeighbourCounts, input_ids: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """(N, V) log-probabilities at the ``chosen`` positions of ``input_ids`` (B, T) from the visible
    pieces on either side: P(x | left) P(x | right) / P(x), renormalised. A neighbour that is
    missing, [MASK]ed or never seen in training (a special piece) contributes nothing."""
    check_type(counts, "counts", NeighbourCounts)
    check_token_ids(input_ids, counts.vocab_size, "input_ids")
    if input_ids.dim() != 2 or chosen.shape != input_ids.shape or chosen.dtype != torch.bool:
        raise ValueError(f"input_ids must be (batch, time) and chosen a bool tensor of the same shape, got "
                         f"{tuple(input_ids.shape)} and {tuple(chosen.shape)} {chosen.dtype}")
    b, t = chosen.nonzero(as_tuple=True)                                                   # (N,), (N,)
    T = input_ids.size(1)
    score = counts.unigram.expand(len(b), -1).clone()                                      # (N, V)
    for offset, table in ((-1, counts.left), (1, counts.right)):
        where = t + offset
        inside = (where >= 0) & (where < T)
        neighbour = input_ids[b[inside], where[inside]]
        usable = counts.seen[neighbour] & ~chosen[b[inside], where[inside]]
        rows = inside.nonzero(as_tuple=True)[0][usable]
        score[rows] += table[neighbour[usable]] - counts.unigram
    return torch.log_softmax(score, dim=-1).float()
