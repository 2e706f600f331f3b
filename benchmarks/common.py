"""What every benchmark shares: the machine's description, fair timing, and the one-line verdict.

Fair timing: both sides run in the same process on the same inputs with the same number of
threads; their repetitions are interleaved (ours, theirs, ours, theirs, ...) so that a slow moment
of a shared machine hits both; each side's best repetition is kept, the usual estimate of what the
code costs when nothing else interferes.
"""
import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREADS = 2   # lmcourse.seed.DEFAULT_NUM_THREADS, and the number of gensim workers

# keep benchmark processes offline and quiet, like the tests
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LMCOURSE_PROGRESS", "0")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@dataclass
class Result:
    """One benchmark's outcome. ``figure`` is the headline number, compared with ``target``."""
    name: str
    figure: float                 # e.g. a throughput ratio, ours / theirs
    target: float
    unit: str                     # what the figure is, in words ("x gensim's words/s")
    higher_is_better: bool = True
    smoke: bool = False           # a smoke run checks that the benchmark works, not its speed
    details: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)   # further targets: name -> check(...)
    note: str = ""                # printed in the verdict: what a target depends on, a figure beside it

    def _judged(self, c: dict) -> bool:
        return not (self.smoke and c["speed"])

    @property
    def passed(self) -> bool:
        met = self.figure >= self.target if self.higher_is_better else self.figure <= self.target
        return (self.smoke or met) and all(c["passed"] for c in self.checks.values() if self._judged(c))

    def line(self) -> str:
        """The verdict, printed last: figure, target, PASS/FAIL."""
        op = ">=" if self.higher_is_better else "<="
        extra = "".join(f"; {k} {c['value']:.3g} (bound {c['op']} {c['bound']:.3g}"
                        f"{'' if c['passed'] or not self._judged(c) else ', MISSED'})"
                        for k, c in self.checks.items())
        note = f"; {self.note}" if self.note else ""
        mode = " [smoke: speed not judged]" if self.smoke else ""
        verdict = "PASS" if self.passed else "FAIL"
        return f"{self.name}: {self.figure:.3g} {self.unit} (target {op} {self.target:g}){extra}{note}{mode} {verdict}"


def check(value: float, bound: float, at_most: bool = False, speed: bool = False) -> dict:
    """A further target for ``Result.checks``. ``speed``: a timing figure, which smoke runs (tiny
    sizes) record but do not judge; the others (equal outputs, identical ids) are always judged."""
    return {"value": float(value), "bound": float(bound), "op": "<=" if at_most else ">=",
            "speed": speed, "passed": bool(value <= bound if at_most else value >= bound)}


def machine() -> dict:
    """What the numbers were measured on."""
    import torch
    cpu, ids = platform.processor() or "unknown", {}
    try:   # the first processor's name, family and model (a virtual machine's name can be as bare as "AMD EPYC")
        for line in Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines():
            key, _, value = (part.strip() for part in line.partition(":"))
            if key == "model name":
                cpu = value
            elif key in ("cpu family", "model"):
                ids[key] = value
    except OSError:
        pass
    mem_gib = None
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem_gib = round(kib / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    family = f"family {ids['cpu family']}, model {ids['model']}" if len(ids) == 2 else None
    return {"cpu": cpu, "family": family, "cores": os.cpu_count(), "memory_gib": mem_gib,
            "simd": torch.backends.cpu.get_cpu_capability(), "python": platform.python_version(),
            "torch": torch.__version__, "threads": THREADS,
            "date": time.strftime("%Y-%m-%d")}


def interleaved_best(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 1,
                     block: int = 1) -> dict[str, float]:
    """Seconds of the best call of each function. Rounds are interleaved across functions, and
    their order is reversed every other round (A B, B A, ...) so that neither side always runs
    first. Each round calls a function ``block`` times in a row, so that its memory allocator
    reaches its own steady state rather than inheriting the other side's."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    best = {name: float("inf") for name in fns}
    items = list(fns.items())
    for round_ in range(repeats):
        for name, fn in (items if round_ % 2 == 0 else items[::-1]):
            for _ in range(block):
                start = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - start)
    return best


def peak_matmul_flops(n: int = 2048, repeats: int = 10, device: str = "cpu", dtype=None) -> float:
    """This machine's peak FLOP/s, as the best of ``repeats`` (n, n) @ (n, n) products (2 n^3 FLOPs
    each) in ``dtype`` (default float32) on ``device``: on the CPU with the threads this process uses;
    on a GPU each product is waited for."""
    import torch
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    wait = torch.cuda.synchronize if a.is_cuda else (lambda: None)
    wait()
    best = interleaved_best({"matmul": lambda: (a @ b, wait())}, repeats=repeats, warmup=2)["matmul"]
    return 2 * n**3 / best


def versions(*modules: str) -> dict[str, str]:
    """Installed versions of the peers, for the record."""
    from importlib.metadata import version
    return {m: version(m) for m in modules}


def main(run: Callable[[bool], Result]) -> None:
    """Command line of one benchmark: ``--smoke`` for a quick run, ``--json FILE`` to save the result.

    Prints the details, then the verdict as the last line; exits 1 when a target is missed.
    """
    from lmcourse.cli import output_file

    parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: check it runs, not the target")
    parser.add_argument("--json", type=output_file, help="also write the result (and the machine) to this file")
    args = parser.parse_args()
    import torch
    torch.set_num_threads(THREADS)
    result = run(args.smoke)
    for key, value in result.details.items():
        print(f"  {key}: {value}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": machine(), **asdict(result), "passed": result.passed,
                                         "line": result.line()}, indent=2) + "\n")
    print(result.line())
    sys.exit(0 if result.passed else 1)
