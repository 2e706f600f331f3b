"""Peak memory of one attention layer's forward pass, measured in a freshly started process.

The explicit path (``MultiHeadAttention(..., fused=False)``) builds the (h, T, T) scores and weights;
PyTorch's fused kernel works through the keys in blocks and never stores them. What each costs is
read off the operating system: the growth of the process's peak resident memory during one forward
pass. Every measurement runs in a new Python process, so that memory freed by an earlier pass (and
kept by the allocator) cannot hide the next one.
"""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from lmcourse.attention import MultiHeadAttention
from lmcourse.validate import check_int, check_type

try:
    import resource
except ImportError:          # Windows reports no peak resident memory to Python
    resource = None


def _peak_resident_bytes() -> int:
    """This process's peak resident memory. On Linux it is read from /proc (VmHWM), because
    getrusage's figure carries over the peak of the process that started this one."""
    if sys.platform.startswith("linux"):
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024                          # kB
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024      # macOS counts bytes, other systems KiB


def _measure(length: int, d_model: int, num_heads: int, fused: bool) -> int:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    layer = MultiHeadAttention(d_model, num_heads, fused=fused).eval()
    with torch.no_grad():
        layer(torch.randn(1, 8, d_model))                           # warm up: first-call allocations
        x = torch.randn(1, length, d_model)
        before = _peak_resident_bytes()
        out = layer(x)
        after = _peak_resident_bytes()
    del out
    return after - before


def attention_peak_bytes(configs: list[tuple[int, int, bool]], d_model: int = 64) -> list[int] | None:
    """For each (T, num_heads, fused) in ``configs``: growth of the peak resident memory (bytes) while one
    ``MultiHeadAttention(d_model, num_heads, fused=fused)`` runs forward over a (1, T, d_model) input,
    each in a new Python process (two at a time). None where the system does not report peak memory."""
    check_type(configs, "configs", list)
    check_int(d_model, "d_model", minimum=1)
    for config in configs:
        if len(config) != 3:
            raise ValueError(f"configs must hold (length, num_heads, fused) triples, got {config!r}")
        length, num_heads, fused = config
        check_int(length, "configs: length", minimum=1)
        check_int(num_heads, "configs: num_heads", minimum=1)
        check_type(fused, "configs: fused", bool)
        if d_model % num_heads:
            raise ValueError(f"configs: num_heads must divide d_model = {d_model}, got {num_heads}")
    if resource is None:
        return None
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda config: _measure_in_new_process(*config, d_model), configs))


def _measure_in_new_process(length: int, num_heads: int, fused: bool, d_model: int) -> int:
    """Run :func:`_measure` in a new Python interpreter (nothing inherited) and return its result."""
    package_root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    code = (f"from lmcourse.attention_memory import _measure; "
            f"print(_measure({length}, {d_model}, {num_heads}, {fused}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return int(result.stdout.split()[-1])


def table_bytes(length: int, num_heads: int = 1) -> int:
    """Bytes of one float32 (num_heads, T, T) table of scores or weights."""
    check_int(length, "length", minimum=1)
    check_int(num_heads, "num_heads", minimum=1)
    return num_heads * length * length * 4
