"""Run every benchmark, each in a fresh process, and print their verdicts together.

    python -m benchmarks.run              # full run (about 10 minutes on 2 cores)
    python -m benchmarks.run --smoke      # a minute or two: checks that each benchmark still works
    python -m benchmarks.run --save       # full run, and record it in benchmarks/results.json as this machine's latest
    python -m benchmarks.run --only wordpiece_speed --save    # rerun one, keep the others' results

Exits 1 if any benchmark misses its target (or, with --smoke, fails to run or to agree with its peer).
"""
import argparse
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


def same_machine(a: dict, b: dict) -> bool:
    """Runs on one kind of machine replace each other: the same CPU name, family and model (where
    both runs recorded them) and vector extension."""
    same_family = a.get("family") is None or b.get("family") is None or a["family"] == b["family"]
    return (a["cpu"], a["simd"]) == (b["cpu"], b["simd"]) and same_family


def save(results: list[dict]) -> None:
    """Record ``results`` as this machine's latest run in RESULTS, keeping other machines' runs;
    benchmarks not rerun (``--only``) keep this machine's previous results."""
    here = machine()
    runs = json.loads(RESULTS.read_text())["runs"] if RESULTS.exists() else []
    previous = next((r["results"] for r in runs if same_machine(r["machine"], here)), [])
    fresh = {r["name"]: r for r in results}
    merged = [fresh.pop(r["name"], r) for r in previous] + list(fresh.values())
    runs = [r for r in runs if not same_machine(r["machine"], here)] + [{"machine": here, "results": merged}]
    RESULTS.write_text(json.dumps({"runs": runs}, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes; speed is not judged")
    parser.add_argument("--save", action="store_true", help=f"write the results to {RESULTS.relative_to(ROOT)}")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run only these")
    args = parser.parse_args()
    if args.save and args.smoke:
        parser.error("--save records full runs only")
    results, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or BENCHMARKS:
            out = Path(tmp) / f"{name}.json"
            command = [sys.executable, "-m", f"benchmarks.{name}", "--json", str(out)]
            print(f"::: {name}", flush=True)
            start = time.perf_counter()
            code = subprocess.run(command + (["--smoke"] if args.smoke else []), cwd=ROOT).returncode
            print(f"::: {name} took {time.perf_counter() - start:.0f} s", flush=True)
            if not out.exists():
                failed.append(name)
                results.append({"name": name, "passed": False, "line": f"{name}: crashed (exit {code})"})
                continue
            result = json.loads(out.read_text())
            result.pop("machine")
            if code != 0:
                failed.append(name)
            results.append(result)
    print("\nSummary" + (" (smoke run: speed not judged)" if args.smoke else ""))
    for result in results:
        print("  " + result["line"])
    if args.save:
        save(results)
        print(f"saved {RESULTS.relative_to(ROOT)}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
