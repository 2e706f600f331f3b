"""Data-parallel training: ``fit`` under torchrun gives the weights of one process on the whole batch."""
import json
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file

from lmcourse import distributed
from lmcourse.gpt import GPT, GPTConfig, hf_state_dict
from lmcourse.seed import set_seed

TINY = ["--documents", "4", "--steps", "6", "--batch-size", "4", "--context", "16", "--d-model", "16",
        "--layers", "1", "--heads", "2", "--vocab-size", "300", "--threads", "1"]
#: float sums split over two processes round differently; six Adam steps keep that below this
TOLERANCE = 1e-5


def test_shards_of_all_ranks_give_the_batch_back():
    batch = {"ids": torch.arange(12).view(6, 2), "pair": (torch.arange(6), torch.ones(6, 3)), "n": 5}
    parts = [distributed.shard(batch, rank, 3) for rank in range(3)]
    assert torch.equal(torch.cat([p["ids"] for p in parts]), batch["ids"])
    assert torch.equal(torch.cat([p["pair"][1] for p in parts]), batch["pair"][1])
    assert parts[1]["pair"][0].tolist() == [2, 3] and parts[2]["n"] == 5


def test_shard_rejects_what_cannot_be_split_evenly():
    with pytest.raises(ValueError, match="divisible"):
        distributed.shard(torch.zeros(5, 2), 0, 2)
    with pytest.raises(ValueError, match="rank"):
        distributed.shard(torch.zeros(4), 2, 2)
    with pytest.raises(TypeError, match="world_size"):
        distributed.shard(torch.zeros(4), 0, 2.0)


def test_one_process_is_rank_zero_of_one(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert distributed.world() == (0, 1) and distributed.is_main()
    assert distributed.setup("cpu") == torch.device("cpu")
    value = torch.tensor(2.5)
    assert distributed.mean_over_ranks(value) is value


def _train(tmp_path, name, launcher):
    out = tmp_path / name
    result = subprocess.run([sys.executable, *launcher, "-m", "lmcourse.scale", "--out", str(out), *TINY],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stdout


def test_two_processes_train_the_weights_of_one_on_the_combined_batch(tmp_path):
    one, log_one = _train(tmp_path, "one", [])
    two, log_two = _train(tmp_path, "two", ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"])
    assert "on 1 process(es)" in log_one and "on 2 process(es)" in log_two
    a, b = load_file(one / "model.safetensors"), load_file(two / "model.safetensors")
    assert a.keys() == b.keys()
    assert max((a[k] - b[k]).abs().max().item() for k in a) < TOLERANCE
    # the comparison can fail: training moved the weights far more than the tolerance
    set_seed(0, num_threads=1)
    config = GPTConfig.from_hf(json.loads((one / "config.json").read_text()))
    start = hf_state_dict(GPT(config))
    assert max((a[k] - start[k]).abs().max().item() for k in a) > 1000 * TOLERANCE
