"""The benchmark harness: verdicts, fair timing, budgets, the record of the code a run measured, and
the Performance page generated from results."""
import json
import shutil
import subprocess

import pytest

from benchmarks.common import ROOT, Result, check, interleaved_best


def test_verdict_needs_the_target_and_every_check():
    assert Result("x", 1.2, 1.0, "x peer").passed
    assert not Result("x", 0.9, 1.0, "x peer").passed
    assert Result("t", 300.0, 480.0, "s", higher_is_better=False).passed
    missed = Result("x", 1.2, 1.0, "x peer", checks={"gap": check(0.08, 0.05, at_most=True)})
    assert not missed.passed and missed.line().endswith("FAIL") and "MISSED" in missed.line()
    smoke = Result("x", 0.1, 1.0, "x peer", smoke=True, checks={"MFU": check(0.1, 0.35, speed=True)})
    assert smoke.passed and "speed not judged" in smoke.line() and "MISSED" not in smoke.line()
    assert not Result("x", 1.2, 1.0, "x peer", checks={"MFU": check(0.1, 0.35, speed=True)}).passed
    assert not Result("x", 0.1, 1.0, "x peer", smoke=True, checks={"ids differ": check(3, 0, at_most=True)}).passed
    noted = Result("x", 1.2, 1.0, "x peer", note="peak matmul 150 GFLOP/s").line()
    assert noted.endswith("(target >= 1); peak matmul 150 GFLOP/s PASS")


def test_interleaved_best_alternates_order_and_keeps_the_minimum():
    calls = []
    best = interleaved_best({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]
    assert set(best) == {"a", "b"} and all(0 <= v < 1 for v in best.values())


def test_the_course_budget_scales_with_the_measured_peak():
    from benchmarks.course_runtime import budget_seconds
    assert budget_seconds(480, 150) == 480 and budget_seconds(90, 600) == 90
    assert budget_seconds(90, 75) == pytest.approx(180) and budget_seconds(120, 100) == pytest.approx(180)
    for peak in (0, -5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="peak_gflops"):
            budget_seconds(90, peak)
    with pytest.raises(ValueError, match="base_seconds"):
        budget_seconds(0, 150)


def test_the_code_fingerprint_follows_the_benchmarked_sources_contents(tmp_path):
    from benchmarks.run import code_fingerprint
    files = {"lmcourse/gpt.py": "a = 1\n", "lmcourse/sub/bert.py": "b = 2\n", "benchmarks/run.py": "c = 3\n",
             "requirements.lock": "torch==2\n", "benchmarks/results.json": "{}", "notes.md": "text"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    before = code_fingerprint(tmp_path)
    assert len(before) == 16
    (tmp_path / "benchmarks" / "results.json").write_text('{"runs": []}')   # not a benchmarked source
    (tmp_path / "notes.md").write_text("other text")
    (tmp_path / "lmcourse" / "gpt.py").touch()                             # a new date, the same contents
    assert code_fingerprint(tmp_path) == before
    for name in ("lmcourse/sub/bert.py", "benchmarks/run.py", "requirements.lock"):
        (tmp_path / name).write_text(files[name] + "# changed\n")
        assert code_fingerprint(tmp_path) != before, name
        (tmp_path / name).write_text(files[name])
    assert code_fingerprint(tmp_path) == before
    with pytest.raises(ValueError, match="root"):
        code_fingerprint(tmp_path / "missing")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_commit_is_marked_dirty_by_changed_benchmarked_code_only(tmp_path):
    from benchmarks.run import commit

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=tmp_path,
                       check=True, capture_output=True)
    for name in ("lmcourse/gpt.py", "benchmarks/results.json", "README.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "c")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    (tmp_path / "benchmarks" / "results.json").write_text("y\n")
    (tmp_path / "README.md").write_text("y\n")
    (tmp_path / "lmcourse" / "new.py").write_text("untracked\n")
    assert commit(tmp_path) == head
    (tmp_path / "lmcourse" / "gpt.py").write_text("y\n")
    assert commit(tmp_path) == head + "+dirty"


def _record(name: str, figure: float, **checks) -> dict:
    result = Result(name, figure, 1.0, "x peer", checks={k: check(v, 0.05, at_most=True) for k, v in checks.items()},
                    details={"words/s": {"lmcourse": 3e5}})
    return {**result.__dict__, "passed": result.passed, "line": result.line()}


def _machine(cpu: str, date: str) -> dict:
    return {"cpu": cpu, "cores": 2, "memory_gib": 1.0, "simd": "AVX2", "python": "3.11", "torch": "2",
            "threads": 2, "date": date}


def test_only_runs_of_the_newest_code_go_side_by_side():
    from test_book_pages import _script
    split_runs = _script("performance_page").split_runs
    unrecorded = {"machine": _machine("u", "2026-01-05"), "results": []}      # saved before fingerprints
    b = {"machine": _machine("b", "2026-01-02"), "commit": "1" * 40, "fingerprint": "f1", "results": []}
    a = {"machine": _machine("a", "2026-01-03"), "commit": "2" * 40, "fingerprint": "f2", "results": []}
    c = {"machine": _machine("c", "2026-01-03"), "commit": "3" * 40, "fingerprint": "f1", "results": []}
    d = {"machine": _machine("d", "2026-01-01"), "commit": "4" * 40 + "+dirty", "fingerprint": "f1", "results": []}
    newest, history = split_runs([unrecorded, b, a, c, d])   # a and c share the newest date; c was saved later
    assert newest == [b, c, d] and history == [unrecorded, a]
    assert split_runs([unrecorded, a]) == ([a], [unrecorded])
    assert split_runs([unrecorded]) == ([], [unrecorded]) and split_runs([]) == ([], [])
    with pytest.raises(ValueError, match="runs"):
        split_runs([{"machine": _machine("x", "2026-01-01")}])


def test_performance_page_puts_the_newest_code_side_by_side_and_the_rest_in_history(tmp_path):
    from test_book_pages import _script
    page = _script("performance_page")
    (tmp_path / "benchmarks").mkdir()
    runs = [{"machine": _machine("cpu Z", "2026-01-01"), "results": [_record("word2vec", 0.4)]},
            {"machine": _machine("cpu B", "2026-01-02"), "commit": "b" * 40, "fingerprint": "new",
             "results": [_record("word2vec", 0.6, **{"WordSim-353 gap": 0.02})]},
            {"machine": _machine("cpu A", "2026-01-02"), "commit": "a" * 40 + "+dirty", "fingerprint": "new",
             "results": [_record("word2vec", 0.7, **{"WordSim-353 gap": 0.08})]},
            {"machine": _machine("cpu Y", "2026-01-01"), "commit": "c" * 40, "fingerprint": "old",
             "results": [_record("word2vec", 0.5)]}]
    (tmp_path / "benchmarks" / "results.json").write_text(json.dumps({"runs": runs}))
    text = page.render(tmp_path)
    newest, history = text.split("## History")
    history, gpu = history.split("## On a GPU")
    columns = "cpu A (AVX2), commit `aaaaaaaaaa` with uncommitted changes | cpu B (AVX2), commit `bbbbbbbbbb` |"
    assert f"| benchmark | figure | {columns}" in newest and "fingerprint `new`" in newest
    assert "| word2vec | x peer | 0.7 (>= 1): missed | 0.6 (>= 1): missed |" in newest
    assert "|  | WordSim-353 gap | 0.08 (<= 0.05): missed | 0.02 (<= 0.05): met |" in newest
    assert "words/s: lmcourse: 300,000" in newest and "cpu Y" not in newest and "cpu Z" not in newest
    assert "### cpu Y (AVX2): older code, measured on 2026-01-01, commit `cccccccccc`" in history
    assert "### cpu Z (AVX2): older code, measured on 2026-01-01, commit not recorded" in history
    assert history.index("cpu Z") > history.index("cpu Y") and "cpu A" not in history
    assert "No GPU figure has been measured yet" in gpu


def test_performance_page_without_a_run_of_recorded_code_and_with_a_gpu_run(tmp_path):
    from test_book_pages import _script
    page = _script("performance_page")
    (tmp_path / "benchmarks").mkdir()
    runs = [{"machine": _machine("cpu Z", "2026-01-01"), "results": [_record("word2vec", 0.4)]}]
    (tmp_path / "benchmarks" / "results.json").write_text(json.dumps({"runs": runs}))
    gpu = json.loads((ROOT / "benchmarks" / "gpu_results.json").read_text())
    gpu.update(device="NVIDIA H100", commit="e" * 40, date="2026-02-01")
    gpu["runs"][0]["tokens_per_s"] = 250000.0
    (tmp_path / "benchmarks" / "gpu_results.json").write_text(json.dumps(gpu))
    text = page.render(tmp_path)
    assert "No saved run records the code it measured yet" in text and "### cpu Z (AVX2): older code" in text
    gpu_section = text.split("## On a GPU")[1]
    assert "NVIDIA H100 on 2026-02-01" in gpu_section and "commit `eeeeeeeeee`" in gpu_section
    assert "| 250,000 |" in gpu_section
    assert "```{figure} figures/gpu_loss.png" in gpu_section and "{numref}`fig-gpu-loss`" in gpu_section
    assert "### Where a step goes" not in text                     # no step breakdown recorded: none shown


def test_performance_page_says_where_a_gpu_step_goes(tmp_path):
    from test_book_pages import _script
    page = _script("performance_page")
    step = json.loads((ROOT / "benchmarks" / "gpu_step_results.json").read_text())
    queued = next(r for r in step["runs"] if r["loop"] == "queued" and r["compiled"] and r["batch"] == step["batch"])
    queued.update(ms_per_step=40.0, kernel_ms_per_step=9.5, tokens_per_s=400000.0)
    (tmp_path / "gpu_step_results.json").write_text(json.dumps(step))
    text = "\n".join(page._gpu_step_section(tmp_path / "gpu_step_results.json"))
    assert "| queued | yes | 64 | 40.0 | 9.5 |" in text
    assert "busy for 9.5 of those 40.0 ms" in text
    graphs = next(r for r in step["runs"] if r["loop"] == "queued, CUDA graphs" and r["batch"] == step["batch"])
    assert f"({graphs['tokens_per_s'] / 400000:.1f} times the tokens/s)" in text


def test_saving_keeps_each_machines_latest_run(tmp_path, monkeypatch):
    from benchmarks import run
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results.json")
    here = {"cpu": "cpu A", "simd": "AVX2"}
    monkeypatch.setattr(run, "machine", lambda: here)
    code = {"commit": "1" * 40, "fingerprint": "f1"}
    run.save([{"name": "a", "figure": 1}, {"name": "b", "figure": 1}], code)
    run.save([{"name": "b", "figure": 2}], code)                       # --only b: a is kept
    here = {"cpu": "cpu B", "simd": "AVX512"}
    run.save([{"name": "a", "figure": 3}], code)
    runs = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert [r["machine"]["cpu"] for r in runs] == ["cpu A", "cpu B"]
    assert runs[0] == {"machine": {"cpu": "cpu A", "simd": "AVX2"}, **code,
                       "results": [{"name": "a", "figure": 1}, {"name": "b", "figure": 2}]}
    assert runs[1]["results"] == [{"name": "a", "figure": 3}]
    run.save([{"name": "b", "figure": 4}], {"commit": "2" * 40, "fingerprint": "f2"})   # other code: a is not kept
    runs = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert [r["machine"]["cpu"] for r in runs] == ["cpu A", "cpu B"]
    assert runs[1]["fingerprint"] == "f2" and runs[1]["results"] == [{"name": "b", "figure": 4}]
    with pytest.raises(ValueError, match="code"):
        run.save([], {"commit": "3" * 40})


def test_machines_with_one_name_are_told_apart_by_family_and_model():
    from benchmarks.run import same_machine
    zen2 = {"cpu": "AMD EPYC", "simd": "AVX2", "family": "family 23, model 49"}
    zen5 = {"cpu": "AMD EPYC", "simd": "AVX512", "family": "family 26, model 2"}
    zen5_again = {**zen5, "date": "later"}
    unrecorded = {"cpu": "AMD EPYC", "simd": "AVX512"}           # runs saved before the family was recorded
    assert same_machine(zen5, zen5_again) and same_machine(zen5, unrecorded)
    assert not same_machine(zen2, zen5)
    assert not same_machine({**zen5, "family": "family 25, model 17"}, zen5)


def test_performance_page_defines_the_reply_lag_where_it_first_uses_it():
    from test_book_pages import _script
    text = _script("performance_page").render(ROOT)
    first = text.index("longest reply lag")
    assert text.startswith("longest reply lag: the longest time", first), \
        "the first mention of the longest reply lag must define it"
