"""BERT's masked-language-model corruption (Devlin et al. 2019).

15% of the (non-special) positions are chosen for prediction; of those, 80% become [MASK], 10% a
random token and 10% stay unchanged, so about 12% / 1.5% / 1.5% of all tokens (correction 12).
"""
from dataclasses import dataclass

import torch

from lmcourse.validate import check_int, check_probability, check_type

IGNORE_INDEX = -100  # label of positions that are not predicted (torch's cross_entropy default)


@dataclass
class MaskedBatch:
    """The result of :func:`mask_tokens`; every tensor has the shape of the input ids."""
    input_ids: torch.Tensor   # corrupted ids fed to the model
    labels: torch.Tensor      # original id at chosen positions, IGNORE_INDEX elsewhere
    chosen: torch.Tensor      # bool: selected for prediction (the 15%)
    masked: torch.Tensor      # bool: replaced by [MASK]  (about 80% of chosen)
    randomized: torch.Tensor  # bool: replaced by a random token (about 10% of chosen)
    kept: torch.Tensor        # bool: left unchanged but still predicted (about 10% of chosen)


def mask_tokens(input_ids: torch.Tensor, mask_id: int, vocab_size: int,
                special_ids: tuple[int, ...] = (), mask_prob: float = 0.15,
                mask_fraction: float = 0.8, random_fraction: float = 0.1,
                generator: torch.Generator | None = None) -> MaskedBatch:
    """Choose ``mask_prob`` of the positions (never ``special_ids``) and corrupt them 80/10/10.

    input_ids: (batch, time) or (time,) int64. Random replacements are drawn uniformly from the
    vocabulary outside ``special_ids``. Returns a :class:`MaskedBatch` saying which position got what.
    """
    check_type(input_ids, "input_ids", torch.Tensor)
    if input_ids.dtype != torch.long:
        raise TypeError(f"input_ids must be int64, got {input_ids.dtype}")
    check_int(vocab_size, "vocab_size", minimum=2)
    check_int(mask_id, "mask_id", minimum=0, maximum=vocab_size - 1)
    check_probability(mask_prob, "mask_prob")
    check_probability(mask_fraction, "mask_fraction")
    check_probability(random_fraction, "random_fraction")
    if mask_fraction + random_fraction > 1:
        raise ValueError(f"mask_fraction + random_fraction must be <= 1, got "
                         f"{mask_fraction} + {random_fraction}")
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= vocab_size):
        raise ValueError(f"input_ids must lie in [0, {vocab_size})")
    special = torch.zeros(vocab_size, dtype=torch.bool)
    special[list(special_ids)] = True
    candidates = ~special[input_ids]
    u = torch.rand(input_ids.shape, generator=generator)
    chosen = (u < mask_prob) & candidates
    action = torch.rand(input_ids.shape, generator=generator)
    masked = chosen & (action < mask_fraction)
    randomized = chosen & (action >= mask_fraction) & (action < mask_fraction + random_fraction)
    kept = chosen & ~masked & ~randomized
    allowed = (~special).nonzero().squeeze(1)
    if len(allowed) == 0:
        raise ValueError("special_ids must leave some token ids for random replacement")
    random_ids = allowed[torch.randint(len(allowed), input_ids.shape, generator=generator)]
    corrupted = torch.where(masked, torch.full_like(input_ids, mask_id), input_ids)
    corrupted = torch.where(randomized, random_ids, corrupted)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
    return MaskedBatch(corrupted, labels, chosen, masked, randomized, kept)
