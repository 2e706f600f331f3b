"""The whole course: seconds to execute every chapter notebook top to bottom, and to build the book.

Each chapter runs in a fresh Jupyter kernel, as ``pytest --nbval`` and a reader's "Run all" do, with
progress bars off. The book is built from the committed outputs (``jupyter-book build --all``, into
a temporary folder so that ``_build`` is left alone). The figure is the total of the chapters, in
seconds (target at most 480, 8 minutes); the checks are the slowest chapter (at most 120 s) and
the book build (at most 60 s).
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from benchmarks.common import ROOT, Result, check, main


def chapters() -> list[Path]:
    return sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


def execute_seconds(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


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
    seconds = {}
    for path in paths:
        seconds[path.stem] = execute_seconds(path)
        print(f"  {path.stem}: {seconds[path.stem]:.1f} s", flush=True)
    build = build_seconds()
    total = sum(seconds.values())
    return Result(
        name="course_runtime", figure=total, target=480.0, higher_is_better=False,
        unit="s to run every chapter", smoke=smoke,
        details={"seconds per chapter": {k: round(v, 1) for k, v in seconds.items()},
                 "book build seconds": round(build, 1)},
        checks={"slowest chapter s": check(max(seconds.values()), 120.0, at_most=True),
                "book build s": check(build, 60.0, at_most=True)})


if __name__ == "__main__":
    main(run)
