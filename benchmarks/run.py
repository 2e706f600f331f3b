"""Run every benchmark, each in a fresh process, and print their verdicts together.

    python -m benchmarks.run              # full run (about 10 minutes on 2 cores)
    python -m benchmarks.run --smoke      # a minute or two: checks that each benchmark still works
    python -m benchmarks.run --save       # full run, and write benchmarks/results.json for the book
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes; targets are not enforced")
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
    print("\nSummary" + (" (smoke run: targets not enforced)" if args.smoke else ""))
    for result in results:
        print("  " + result["line"])
    if args.save:   # with --only, the other benchmarks' saved results are kept
        saved = json.loads(RESULTS.read_text())["results"] if args.only and RESULTS.exists() else []
        fresh = {r["name"]: r for r in results}
        merged = [fresh.pop(r["name"], r) for r in saved] + list(fresh.values())
        RESULTS.write_text(json.dumps({"machine": machine(), "results": merged}, indent=2) + "\n")
        print(f"saved {RESULTS.relative_to(ROOT)}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
