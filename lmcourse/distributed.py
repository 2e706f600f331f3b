"""Data parallelism for :func:`lmcourse.train.fit`: one process per device, launched by ``torchrun``.

``torchrun --nproc_per_node N script.py`` starts N copies of a script and tells each its rank
through environment variables. :func:`setup` joins them into one process group (gloo on CPU, NCCL on
GPUs); ``fit`` then wraps the model in ``DistributedDataParallel``, which averages the gradients of
all ranks after every backward pass. Each rank trains on its own slice of every batch
(:func:`shard`). When every slice's loss is a mean over the same number of terms (a language model
on full windows), N processes take the optimiser steps that one process takes on the whole batch:
same data, same updates, N times the compute. When the count varies between slices (a masked-LM
loss over the masked positions, a loss over the real tokens of a padded batch), the mean of the
slices' means weights slices, not terms, and the steps differ slightly from one process's.
"""
import os

import torch
import torch.distributed as dist

from lmcourse.validate import check_int


def world() -> tuple[int, int]:
    """(rank, world size): (0, 1) unless this process is one of several joined by :func:`setup`."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def is_main() -> bool:
    """Whether this process logs, draws progress and saves checkpoints (rank 0)."""
    return world()[0] == 0


def setup(device: str | torch.device) -> torch.device:
    """Join the process group if ``torchrun`` launched several processes; return this rank's device.

    Outside ``torchrun`` (no ``WORLD_SIZE`` above 1) nothing happens and ``device`` is returned.
    On GPUs every rank takes the GPU numbered by its ``LOCAL_RANK`` and the NCCL backend; on CPU
    the gloo backend.
    """
    device = torch.device(device)
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return device
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return device


def shard(batch, rank: int, world_size: int):
    """This rank's contiguous slice, along dimension 0, of every tensor in a (nested) batch.

    batch: a tensor (B, ...) or a tuple, list or dict of them, B divisible by ``world_size``; the
    slices of ranks 0..world_size-1, concatenated, give the batch back.
    """
    check_int(world_size, "world_size", minimum=1)
    check_int(rank, "rank", minimum=0)
    if rank >= world_size:
        raise ValueError(f"rank must be below world_size={world_size}, got {rank}")
    if isinstance(batch, torch.Tensor):
        if batch.dim() == 0 or batch.shape[0] % world_size:
            raise ValueError(f"every tensor in a batch must have a first dimension divisible by the "
                             f"{world_size} processes, got shape {tuple(batch.shape)}")
        size = batch.shape[0] // world_size
        return batch[rank * size:(rank + 1) * size]
    if isinstance(batch, (list, tuple)):
        return type(batch)(shard(b, rank, world_size) for b in batch)
    if isinstance(batch, dict):
        return {k: shard(v, rank, world_size) for k, v in batch.items()}
    return batch


def mean_over_ranks(value: torch.Tensor) -> torch.Tensor:
    """The mean of a tensor over all ranks (itself when there is one process)."""
    if world()[1] == 1:
        return value
    value = value.detach().clone()
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value / dist.get_world_size()
