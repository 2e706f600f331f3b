"""Static versus dynamic masking (RoBERTa, Liu et al. 2019).

BERT's data pipeline drew the masks once, while writing the training files: with its default
``dupe_factor=10`` each sequence got 10 different masks, reused over about 40 epochs (correction 20).
RoBERTa draws a fresh mask every time a sequence is fed to the model. This module produces the
masks each scheme shows over the epochs, using :func:`lmcourse.masking.mask_tokens`.
"""
import torch

from lmcourse.masking import mask_tokens
from lmcourse.validate import check_int, check_type


def masks_per_epoch(input_ids: torch.Tensor, num_epochs: int, num_copies: int | None,
                    mask_id: int, vocab_size: int, special_ids: tuple[int, ...] = (),
                    mask_prob: float = 0.15, generator: torch.Generator | None = None) -> torch.Tensor:
    """(num_epochs, *input_ids.shape) bool: the positions chosen for prediction in each epoch.

    ``num_copies=k`` is static masking with k pre-drawn masks used in turn (BERT: k = 10);
    ``num_copies=None`` is dynamic masking, a new mask every epoch (RoBERTa).
    """
    check_type(input_ids, "input_ids", torch.Tensor)
    check_int(num_epochs, "num_epochs", minimum=1)
    if num_copies is not None:
        check_int(num_copies, "num_copies", minimum=1)
    draws = num_epochs if num_copies is None else min(num_copies, num_epochs)
    drawn = [mask_tokens(input_ids, mask_id, vocab_size, special_ids, mask_prob,
                         generator=generator).chosen for _ in range(draws)]
    return torch.stack([drawn[epoch % draws] for epoch in range(num_epochs)])


def coverage(chosen: torch.Tensor) -> torch.Tensor:
    """(num_epochs,) fraction of positions chosen at least once in the first 1, 2, ... epochs.

    chosen: (num_epochs, ...) bool from :func:`masks_per_epoch`. With selection probability p and
    k independent masks the expectation is 1 - (1 - p)^k.
    """
    check_type(chosen, "chosen", torch.Tensor)
    if chosen.dtype != torch.bool or chosen.dim() < 2:
        raise ValueError(f"chosen must be a bool tensor (num_epochs, ...), got {chosen.dtype} {tuple(chosen.shape)}")
    seen = chosen.flatten(1).cummax(dim=0).values      # (E, N): chosen in any epoch so far
    return seen.float().mean(dim=1)


def distinct_masks(chosen: torch.Tensor) -> int:
    """How many different masks a single sequence saw: chosen is (num_epochs, time) bool."""
    check_type(chosen, "chosen", torch.Tensor)
    if chosen.dtype != torch.bool or chosen.dim() != 2:
        raise ValueError(f"chosen must be a bool tensor (num_epochs, time), got {chosen.dtype} {tuple(chosen.shape)}")
    return len({tuple(row.tolist()) for row in chosen})
