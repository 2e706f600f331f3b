"""The benchmark harness: verdicts, fair timing, and the Performance page generated from results."""
import json

from benchmarks.common import Result, check, interleaved_best


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


def test_interleaved_best_alternates_order_and_keeps_the_minimum():
    calls = []
    best = interleaved_best({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]
    assert set(best) == {"a", "b"} and all(0 <= v < 1 for v in best.values())


def test_performance_page_renders_every_result(tmp_path):
    from test_book_pages import _script
    page = _script("performance_page")
    (tmp_path / "benchmarks").mkdir()
    result = Result("word2vec", 0.6, 0.5, "x gensim's words/s", details={"words/s": {"lmcourse": 3e5}},
                    checks={"WordSim-353 gap": check(0.02, 0.05, at_most=True)})
    machines = [{"cpu": cpu, "cores": 2, "memory_gib": 1.0, "simd": simd, "python": "3.11",
                 "torch": "2", "threads": 2, "date": "2026-01-01"}
                for cpu, simd in (("cpu B", "AVX2"), ("cpu A", "AVX512"))]
    record = {**result.__dict__, "passed": result.passed, "line": result.line()}
    data = {"runs": [{"machine": m, "results": [record]} for m in machines]}
    (tmp_path / "benchmarks" / "results.json").write_text(json.dumps(data))
    text = page.render(tmp_path)
    assert "## cpu A (AVX512)" in text and text.index("## cpu A") < text.index("## cpu B (AVX2)")
    assert "| word2vec |" in text and "0.6 x gensim's words/s" in text and "words/s: lmcourse: 300,000" in text
    assert "| | | | WordSim-353 gap | 0.02 | <= 0.05 | yes |" in text


def test_saving_keeps_each_machines_latest_run(tmp_path, monkeypatch):
    from benchmarks import run
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results.json")
    here = {"cpu": "cpu A", "simd": "AVX2"}
    monkeypatch.setattr(run, "machine", lambda: here)
    run.save([{"name": "a", "figure": 1}, {"name": "b", "figure": 1}])
    run.save([{"name": "b", "figure": 2}])                       # --only b: a is kept
    here = {"cpu": "cpu B", "simd": "AVX512"}
    run.save([{"name": "a", "figure": 3}])
    runs = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert [r["machine"]["cpu"] for r in runs] == ["cpu A", "cpu B"]
    assert runs[0]["results"] == [{"name": "a", "figure": 1}, {"name": "b", "figure": 2}]
    assert runs[1]["results"] == [{"name": "a", "figure": 3}]


def test_machines_with_one_name_are_told_apart_by_family_and_model():
    from benchmarks.run import same_machine
    zen2 = {"cpu": "AMD EPYC", "simd": "AVX2", "family": "family 23, model 49"}
    zen5 = {"cpu": "AMD EPYC", "simd": "AVX512", "family": "family 26, model 2"}
    zen5_again = {**zen5, "date": "later"}
    unrecorded = {"cpu": "AMD EPYC", "simd": "AVX512"}           # runs saved before the family was recorded
    assert same_machine(zen5, zen5_again) and same_machine(zen5, unrecorded)
    assert not same_machine(zen2, zen5)
    assert not same_machine({**zen5, "family": "family 25, model 17"}, zen5)
