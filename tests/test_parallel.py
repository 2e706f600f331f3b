"""Independent runs in forked processes: the same results, in order, as one after another."""
import os

import pytest
import torch
from torch import nn

from lmcourse.parallel import available_cores, parallel_map
from lmcourse.train import fit


def trained_weights(seed: int) -> torch.Tensor:
    """A seeded fit of a small network: its flattened weights (they depend on every bit computed)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 8, generator=g)
    batches = [(x[i:i + 16], x[i:i + 16].sum(1, keepdim=True)) for i in range(0, 64, 16)]
    torch.manual_seed(seed)                            # the initial weights too
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    fit(model, lambda m, b: nn.functional.mse_loss(m(b[0]), b[1]), batches, num_epochs=3,
        seed=seed, progress=False)
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_forked_runs_equal_runs_one_after_another():
    alone = [trained_weights(seed) for seed in range(3)]
    forked = parallel_map(trained_weights, range(3), processes=2, progress=False)
    assert len(forked) == 3
    for a, b in zip(alone, forked):
        assert torch.equal(a, b)


def test_order_lambdas_and_models_come_back():
    offset = 10                                        # a closure: workers inherit it, no pickling
    assert parallel_map(lambda i: (i + offset, os.getpid()), range(5), processes=2,
                        progress=False)[3][0] == 13
    models = parallel_map(lambda seed: torch.manual_seed(seed) and nn.Linear(2, 2), [0, 1],
                          processes=2, progress=False)
    assert torch.equal(models[0].weight, torch.manual_seed(0) and nn.Linear(2, 2).weight)
    assert not models[0].weight.is_shared()             # copied back by value, not via /dev/shm


def test_workers_are_separate_processes_on_one_thread():
    pids = parallel_map(lambda _: (os.getpid(), torch.get_num_threads()), range(4), processes=2,
                        progress=False)
    if available_cores() > 1 and os.name == "posix" and os.uname().sysname == "Linux":
        assert {pid for pid, _ in pids} - {os.getpid()}
    assert all(threads == 1 for pid, threads in pids if pid != os.getpid())


def test_nested_calls_run_inside_the_worker():
    inner = parallel_map(lambda i: parallel_map(lambda j: i * 10 + j, range(2), progress=False),
                         range(2), processes=2, progress=False)
    assert inner == [[0, 1], [10, 11]]


def test_one_process_and_empty_inputs():
    assert parallel_map(lambda i: os.getpid(), range(3), processes=1, progress=False) == [os.getpid()] * 3
    assert parallel_map(abs, [], progress=False) == []


def test_an_error_in_a_run_reaches_the_caller():
    def fails(i):
        if i == 1:
            raise ValueError("run 1 failed")
        return i
    with pytest.raises(ValueError, match="run 1 failed"):
        parallel_map(fails, range(3), processes=2, progress=False)


def test_bad_arguments():
    with pytest.raises(TypeError, match="fn must be callable"):
        parallel_map(3, range(2))
    with pytest.raises(ValueError, match="processes"):
        parallel_map(abs, range(2), processes=0)
