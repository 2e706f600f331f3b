"""The whole course: seconds to execute every chapter notebook top to bottom, and to build the book.

Each chapter runs in a fresh Jupyter kernel, as ``pytest --nbval`` and a reader's "Run all" do, with
progress bars off, through :mod:`benchmarks.notebook_client` (nbclient without its Output-widget
stall, every cell limited to ``CELL_TIMEOUT`` seconds). The book is built from the committed outputs
(``jupyter-book build --all``, into a temporary folder so that ``_build`` is left alone).

The time budget scales with the machine. On a machine whose measured matrix-product peak
(:func:`benchmarks.common.peak_matmul_flops`, on 2 threads, measured before the chapters run) is at
least ``REFERENCE_PEAK_GFLOPS``, the chapters may take ``TOTAL_BASE_S`` seconds in all (the figure's
target, 8 minutes) and ``CHAPTER_BASE_S`` each (``LONG_CHAPTER_BASE_S`` for chapters 9 and 10, the
checks); on a slower one, those times ``REFERENCE_PEAK_GFLOPS`` / peak (:func:`budget_seconds`).
The verdict line names the peak and the budget applied. Two further checks stay fixed: the book
build (at most 60 s), and the longest time an ``execute_reply`` waited in the client before the
client noticed it (at most ``MAX_REPLY_LAG`` s: more means a cell stalled in the client, which would
otherwise only show as a slow chapter).
"""
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Result, check, main, peak_matmul_flops
from benchmarks.notebook_client import MAX_REPLY_LAG, notebook_client

#: the base budgets, in seconds, hold on machines whose matrix products peak at this or more
REFERENCE_PEAK_GFLOPS = 150.0
TOTAL_BASE_S = 480.0            # every chapter together
CHAPTER_BASE_S = 90.0           # each chapter notebook but the long ones (a section notebook on its own)
LONG_CHAPTER_BASE_S = 120.0     # each long chapter, named by the number its file name starts with:
LONG_CHAPTERS = ("09", "10")
BOOK_BUILD_S = 60.0             # not scaled


def budget_seconds(base_seconds: float, peak_gflops: float) -> float:
    """The budget of ``base_seconds`` on a machine whose matrix products peak at ``peak_gflops``
    GFLOP/s: ``base_seconds`` from ``REFERENCE_PEAK_GFLOPS`` up, proportionally more below it."""
    if not (math.isfinite(peak_gflops) and peak_gflops > 0):
        raise ValueError(f"peak_gflops must be a positive number of GFLOP/s, got {peak_gflops!r}")
    if not (math.isfinite(base_seconds) and base_seconds > 0):
        raise ValueError(f"base_seconds must be a positive number of seconds, got {base_seconds!r}")
    return base_seconds * max(1.0, REFERENCE_PEAK_GFLOPS / peak_gflops)


def chapters() -> list[Path]:
    """Every chapter notebook, each section notebook of a split chapter (``06b_...``) on its own."""
    return sorted((ROOT / "chapters").glob("[0-9][0-9]*_*.ipynb"))


def execute_seconds(path: Path) -> tuple[float, float, float]:
    """Seconds to run the notebook, its slowest cell's seconds, and its longest reply lag."""
    client = notebook_client(path)
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    return seconds, max(client.cell_seconds.values(), default=0.0), client.max_reply_lag


def build_seconds() -> float:
    """Seconds of a full build with warnings as errors; infinity (a missed check) if it fails."""
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        done = subprocess.run([str(jupyter_book), "build", str(ROOT), "--all", "--path-output", out,
                               "--warningiserror"], capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
            return float("inf")
        return time.perf_counter() - start


def run(smoke: bool) -> Result:
    paths = chapters()
    if smoke:   # one short chapter is enough to see that the machinery works
        paths = [p for p in paths if p.name.startswith("06_")]
    peak_gflops = peak_matmul_flops(512 if smoke else 2048) / 1e9   # before the chapters, on an idle machine
    seconds, slowest_cell, reply_lag = {}, {}, {}
    for path in paths:
        seconds[path.stem], slowest_cell[path.stem], reply_lag[path.stem] = execute_seconds(path)
        print(f"  {path.stem}: {seconds[path.stem]:.1f} s (slowest cell {slowest_cell[path.stem]:.1f} s, "
              f"longest reply lag {reply_lag[path.stem]:.2f} s)", flush=True)
    build = build_seconds()
    total_budget = budget_seconds(TOTAL_BASE_S, peak_gflops)
    chapter_budget = budget_seconds(CHAPTER_BASE_S, peak_gflops)
    long_budget = budget_seconds(LONG_CHAPTER_BASE_S, peak_gflops)
    long = [stem for stem in seconds if stem.startswith(LONG_CHAPTERS)]
    other = [stem for stem in seconds if stem not in long]
    long_names = " and ".join(number.lstrip("0") for number in LONG_CHAPTERS)
    chapter_checks = {f"slowest of chapters {long_names} s": (long, long_budget),
                      "slowest other chapter s": (other, chapter_budget)}
    return Result(
        name="course_runtime", figure=sum(seconds.values()), target=total_budget, higher_is_better=False,
        unit="s to run every chapter", smoke=smoke,
        note=f"budget for a measured peak of {peak_gflops:.0f} GFLOP/s: {total_budget:.0f} s in all, "
             f"{chapter_budget:.0f} s a chapter, {long_budget:.0f} s for chapters {long_names}",
        details={"peak matmul GFLOP/s": round(peak_gflops, 1),
                 "seconds per chapter": {k: round(v, 1) for k, v in seconds.items()},
                 "budget per chapter s": {k: round(long_budget if k in long else chapter_budget, 1) for k in seconds},
                 "slowest cell seconds per chapter": {k: round(v, 1) for k, v in slowest_cell.items()},
                 "book build seconds": round(build, 1)},
        checks={**{name: check(max(seconds[stem] for stem in stems), bound, at_most=True, speed=True)
                   for name, (stems, bound) in chapter_checks.items() if stems},
                "book build s": check(build, BOOK_BUILD_S, at_most=True, speed=True),
                "longest reply lag s": check(max(reply_lag.values()), MAX_REPLY_LAG, at_most=True, speed=True)})


if __name__ == "__main__":
    main(run)
