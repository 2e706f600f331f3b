"""Static versus dynamic masking (RoBERTa, Liu et al. 2019).

BERT's data pipeline drew the masks once, while writing the training files: with its default
``dupe_factor=10`` each sequence got 10 different masks, reused over about 40 epochs (correction 20).
RoBERTa draws a fresh mask every time a sequence is fed to the model. This module produces the
masks each scheme shows over the epochs, using :func:`lmcourse.masking.mask_tokens`, and trains a
small masked LM (:class:`TinyMLM`) on them to compare the schemes.
"""
import torch
import torch.nn.functional as F
from torch import nn

from lmcourse.data import random_windows
from lmcourse.electra import TinyEncoder
from lmcourse.masking import IGNORE_INDEX, MaskedBatch, mask_tokens
from lmcourse.seed import DEFAULT_DEVICE
from lmcourse.validate import check_int, check_type


def masked_epochs(input_ids: torch.Tensor, num_epochs: int, num_copies: int | None,
                  mask_id: int, vocab_size: int, special_ids: tuple[int, ...] = (),
                  mask_prob: float = 0.15, generator: torch.Generator | None = None) -> list[MaskedBatch]:
    """The masked copy of ``input_ids`` (batch, time) that each of ``num_epochs`` epochs shows.

    ``num_copies=k`` is static masking with k pre-drawn masks used in turn (BERT: k = 10);
    ``num_copies=None`` is dynamic masking, a new mask every epoch (RoBERTa).
    """
    check_type(input_ids, "input_ids", torch.Tensor)
    check_int(num_epochs, "num_epochs", minimum=1)
    if num_copies is not None:
        check_int(num_copies, "num_copies", minimum=1)
    draws = num_epochs if num_copies is None else min(num_copies, num_epochs)
    drawn = [mask_tokens(input_ids, mask_id, vocab_size, special_ids, mask_prob, generator=generator)
             for _ in range(draws)]
    return [drawn[epoch % draws] for epoch in range(num_epochs)]


def masks_per_epoch(input_ids: torch.Tensor, num_epochs: int, num_copies: int | None,
                    mask_id: int, vocab_size: int, special_ids: tuple[int, ...] = (),
                    mask_prob: float = 0.15, generator: torch.Generator | None = None) -> torch.Tensor:
    """(num_epochs, *input_ids.shape) bool: the positions chosen for prediction in each epoch.

    ``num_copies=k`` is static masking with k pre-drawn masks used in turn (BERT: k = 10);
    ``num_copies=None`` is dynamic masking, a new mask every epoch (RoBERTa).
    """
    epochs = masked_epochs(input_ids, num_epochs, num_copies, mask_id, vocab_size, special_ids,
                           mask_prob, generator)
    return torch.stack([m.chosen for m in epochs])


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


def mlm_batches(stream, num_batches: int, batch_size: int, seq_len: int, mask_id: int, vocab_size: int,
                special_ids: tuple[int, ...] = (), mask_prob: float = 0.15,
                generator: torch.Generator | None = None) -> list[MaskedBatch]:
    """``num_batches`` random windows (batch_size, seq_len) of ``stream``, each freshly masked:
    dynamic masking, the masked-LM counterpart of :func:`lmcourse.electra.rtd_batches`."""
    check_int(num_batches, "num_batches", minimum=1)
    return [mask_tokens(random_windows(stream, batch_size, seq_len, generator)[0], mask_id, vocab_size,
                        special_ids, mask_prob, generator=generator)
            for _ in range(num_batches)]


class TinyMLM(TinyEncoder):
    """A small masked language model: a :class:`~lmcourse.electra.TinyEncoder` and a linear layer
    to the vocabulary. forward(ids (B, T)) -> logits (B, T, vocab_size)."""

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int | None = None, max_len: int = 128, device: str | torch.device = DEFAULT_DEVICE):
        super().__init__(vocab_size, d_model, num_heads, num_layers, d_ff, max_len)
        self.head = nn.Linear(d_model, vocab_size)
        self.to(device)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encode(ids))               # (B, T, C) -> (B, T, V)


def mlm_loss(model: "TinyMLM", batch: MaskedBatch) -> torch.Tensor:
    """Mean cross-entropy (nats) over the positions chosen for prediction (labels != -100).

    Only those positions go through the output layer (about 15% of them: the costly part)."""
    check_type(model, "model", TinyMLM)
    check_type(batch, "batch", MaskedBatch)
    chosen = batch.labels != IGNORE_INDEX                                    # (B, T)
    logits = model.head(model.encode(batch.input_ids)[chosen])               # (N, C) -> (N, V)
    return F.cross_entropy(logits, batch.labels[chosen])
