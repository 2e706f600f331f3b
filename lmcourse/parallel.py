"""Independent runs (seeds, arms of an experiment) side by side, one process per core.

The course trains its small models on one thread (``lmcourse.seed.DEFAULT_NUM_THREADS``): their
matrices are too small to gain from more, and one thread makes the numbers the same on every
machine. A second core therefore sits idle while a seed trains. ``parallel_map`` runs the seeds
in forked worker processes instead, each on one thread, so every run computes exactly the bits
it computes alone, and ``n`` cores finish ``n`` runs in the time of one.

Forked workers inherit the function and its inputs, so a function defined in a notebook cell (or
a lambda) works, with no pickling. Where the operating system cannot fork safely (Windows, macOS)
the runs go one after another, with the same results.
"""
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Iterable

import torch

from lmcourse.train import PROGRESS_ENV, progress_enabled
from lmcourse.validate import check_int

# What the forked workers run: set just before the pool starts, so each child inherits it.
_job: tuple[Callable, list] | None = None
_in_worker = False


def available_cores() -> int:
    """The number of CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _start_worker() -> None:
    global _in_worker
    _in_worker = True
    torch.set_num_threads(1)
    os.environ[PROGRESS_ENV] = "0"           # only the parent draws a progress bar


def _run(index: int) -> bytes:
    """Item ``index``'s result, pickled by value here: tensors travel as bytes, not as shared-memory
    handles (a container's small /dev/shm or a low limit on open files would stop those)."""
    fn, items = _job
    return pickle.dumps(fn(items[index]))


def parallel_map(fn: Callable, items: Iterable, *, processes: int | None = None,
                 progress: bool | None = None, desc: str = "runs") -> list:
    """``[fn(item) for item in items]``, computed in up to ``processes`` forked processes.

    processes: defaults to the number of cores (and never more than the number of items); 1 runs
        everything here, one item after another.
    Each ``fn(item)`` must seed what it draws (``fit(seed=...)`` and ``set_seed`` do): a worker
    starts from a copy of this process's state, not from where the previous item left it. The
    results travel back by pickling, so return scores and small models, not open files.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    items = list(items)
    if processes is not None:
        check_int(processes, "processes", minimum=1)
    workers = min(len(items), processes or available_cores())
    bar = None
    if progress_enabled(progress) and len(items) > 1:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(items), desc=desc)
    can_fork = sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()
    results = []
    if workers <= 1 or not can_fork or _in_worker:
        _collect(map(fn, items), results, bar)
    else:
        global _job
        _job = (fn, items)
        try:
            with multiprocessing.get_context("fork").Pool(workers, initializer=_start_worker) as pool:
                _collect(map(pickle.loads, pool.imap(_run, range(len(items)))), results, bar)
        finally:
            _job = None
    if bar is not None:
        bar.close()
    return results


def _collect(finished: Iterable, results: list, bar) -> None:
    """Append each result as it arrives, moving the progress bar."""
    for result in finished:
        results.append(result)
        if bar is not None:
            bar.update(1)
