"""The whole course: seconds to execute every chapter notebook top to bottom, and to build the book.

Each chapter runs in a fresh Jupyter kernel, as ``pytest --nbval`` and a reader's "Run all" do, with
progress bars off, through :mod:`benchmarks.notebook_client` (nbclient without its Output-widget
stall, every cell limited to ``CELL_TIMEOUT`` seconds). The book is built from the committed outputs
(``jupyter-book build --all``, into a temporary folder so that ``_build`` is left alone). The figure
is the total of the chapters, in seconds (target at most 480, 8 minutes); the checks are the slowest
chapter (at most 120 s), the book build (at most 60 s), and the longest time an ``execute_reply``
waited in the client before the client noticed it (at most ``MAX_REPLY_LAG`` s: more means a cell
stalled in the client, which would otherwise only show as a slow chapter).
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Result, check, main
from benchmarks.notebook_client import MAX_REPLY_LAG, notebook_client


def chapters() -> list[Path]:
    return sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


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
    seconds, slowest_cell, reply_lag = {}, {}, {}
    for path in paths:
        seconds[path.stem], slowest_cell[path.stem], reply_lag[path.stem] = execute_seconds(path)
        print(f"  {path.stem}: {seconds[path.stem]:.1f} s (slowest cell {slowest_cell[path.stem]:.1f} s, "
              f"longest reply lag {reply_lag[path.stem]:.2f} s)", flush=True)
    build = build_seconds()
    total = sum(seconds.values())
    return Result(
        name="course_runtime", figure=total, target=480.0, higher_is_better=False,
        unit="s to run every chapter", smoke=smoke,
        details={"seconds per chapter": {k: round(v, 1) for k, v in seconds.items()},
                 "slowest cell seconds per chapter": {k: round(v, 1) for k, v in slowest_cell.items()},
                 "book build seconds": round(build, 1)},
        checks={"slowest chapter s": check(max(seconds.values()), 120.0, at_most=True, speed=True),
                "book build s": check(build, 60.0, at_most=True, speed=True),
                "longest reply lag s": check(max(reply_lag.values()), MAX_REPLY_LAG, at_most=True, speed=True)})


if __name__ == "__main__":
    main(run)
