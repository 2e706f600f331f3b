"""Run every benchmark, each in a fresh process, and print their verdicts together.

    python -m benchmarks.run              # full run (about 10 minutes on 2 cores)
    python -m benchmarks.run --smoke      # a minute or two: checks that each benchmark still works
    python -m benchmarks.run --save       # full run, and record it in benchmarks/results.json as this machine's latest
    python -m benchmarks.run --only wordpiece_speed --save    # rerun one, keep the others' results

A saved run records the code it measured: the commit, and a fingerprint of the benchmarked sources'
contents (the Performance page compares only runs of the same code). Exits 1 if any benchmark
misses its target (or, with --smoke, fails to run or to agree with its peer).
"""
import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, machine

#: module names, in the order of the Performance page
BENCHMARKS = ["gpt_training", "bert_inference", "word2vec_speed", "wordpiece_speed", "course_runtime"]
RESULTS = ROOT / "benchmarks" / "results.json"
#: the sources whose contents make the code fingerprint: the package, the benchmarks, the environment
BENCHMARKED_SOURCES = ("lmcourse/**/*.py", "benchmarks/*.py", "requirements.lock")


def code_fingerprint(root: Path = ROOT) -> str:
    """A short SHA-256 over the paths and contents of ``root``'s BENCHMARKED_SOURCES, in path order."""
    if not root.is_dir():
        raise ValueError(f"root must be a directory, got {root}")
    paths = sorted({path for pattern in BENCHMARKED_SOURCES for path in root.glob(pattern) if path.is_file()})
    digest = hashlib.sha256()
    for path in paths:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def commit(root: Path = ROOT) -> str:
    """The checked-out commit, with "+dirty" when tracked files under lmcourse/ or benchmarks/ (the
    saved results aside) differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    changed = git("status", "--porcelain", "--untracked-files=no", "--", "lmcourse", "benchmarks",
                  f":(exclude){RESULTS.relative_to(ROOT).as_posix()}")
    return git("rev-parse", "HEAD") + ("+dirty" if changed else "")


def same_machine(a: dict, b: dict) -> bool:
    """Runs on one kind of machine replace each other: the same CPU name, family and model (where
    both runs recorded them) and vector extension."""
    same_family = a.get("family") is None or b.get("family") is None or a["family"] == b["family"]
    return (a["cpu"], a["simd"]) == (b["cpu"], b["simd"]) and same_family


def saved_runs() -> list[dict]:
    """The runs recorded in RESULTS, none before the first save."""
    return json.loads(RESULTS.read_text())["runs"] if RESULTS.exists() else []


def saved_run(here: dict) -> dict | None:
    """The run recorded in RESULTS for the machine ``here``, if any."""
    return next((r for r in saved_runs() if same_machine(r["machine"], here)), None)


def save(results: list[dict], code: dict) -> None:
    """Record ``results`` as this machine's latest run in RESULTS, with ``code`` (the commit and
    fingerprint it measured), keeping other machines' runs; benchmarks not rerun (``--only``) keep
    this machine's previous results when those measured the same code."""
    if set(code) != {"commit", "fingerprint"}:
        raise ValueError(f"code must give the commit and the fingerprint, got {sorted(code)}")
    here = machine()
    previous = saved_run(here)
    kept = previous["results"] if previous and previous.get("fingerprint") == code["fingerprint"] else []
    fresh = {r["name"]: r for r in results}
    merged = [fresh.pop(r["name"], r) for r in kept] + list(fresh.values())
    runs = [r for r in saved_runs() if not same_machine(r["machine"], here)] + [{"machine": here, **code,
                                                                                  "results": merged}]
    from lmcourse.train import write_atomically  # here, not at import: the benchmarks run in their own processes

    write_atomically(RESULTS, (json.dumps({"runs": runs}, indent=2) + "\n").encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes; speed is not judged")
    parser.add_argument("--save", action="store_true", help=f"write the results to {RESULTS.relative_to(ROOT)}")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run only these")
    args = parser.parse_args()
    if args.save and args.smoke:
        parser.error("--save records full runs only")
    if args.save:   # the code as it is now, before the benchmarks run it
        code = {"commit": commit(), "fingerprint": code_fingerprint()}
        previous = saved_run(machine())
        if args.only and previous and previous.get("fingerprint") != code["fingerprint"]:
            parser.error("--only with --save: this machine's saved run measured other code; run them all")
    results, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or BENCHMARKS:
            out = Path(tmp) / f"{name}.json"
            command = [sys.executable, "-m", f"benchmarks.{name}", "--json", str(out)]
            print(f"::: {name}", flush=True)
            start = time.perf_counter()
            exit_code = subprocess.run(command + (["--smoke"] if args.smoke else []), cwd=ROOT).returncode
            print(f"::: {name} took {time.perf_counter() - start:.0f} s", flush=True)
            if not out.exists():
                failed.append(name)
                results.append({"name": name, "passed": False, "line": f"{name}: crashed (exit {exit_code})"})
                continue
            result = json.loads(out.read_text())
            result.pop("machine")
            if exit_code != 0:
                failed.append(name)
            results.append(result)
    print("\nSummary" + (" (smoke run: speed not judged)" if args.smoke else ""))
    for result in results:
        print("  " + result["line"])
    if args.save:
        save(results, code)
        print(f"saved {RESULTS.relative_to(ROOT)}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
