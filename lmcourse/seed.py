"""Reproducibility: one call seeds every random source and fixes the thread count."""
import os
import random

import numpy as np
import torch

from lmcourse.validate import check_int

#: Every model and the training loop run here unless given another ``device``.
DEFAULT_DEVICE = "cpu"

#: Float results depend on the number of threads that split a matmul; the book's outputs were
#: computed with one (as ``numerics.env`` sets), so a machine with any number of cores
#: reproduces them.
DEFAULT_NUM_THREADS = 1


def set_seed(seed: int = 0, num_threads: int | None = DEFAULT_NUM_THREADS) -> None:
    """Seed Python, NumPy and torch, and fix torch's CPU thread count.

    ``num_threads=None`` leaves the thread count alone (faster on big machines, but float
    results may then differ in the last digits from the book's).
    """
    check_int(seed, "seed", minimum=0)
    if num_threads is not None:
        check_int(num_threads, "num_threads", minimum=1)
        torch.set_num_threads(num_threads)
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
