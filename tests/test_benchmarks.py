"""The benchmark harness: verdicts, fair timing, and the Performance page generated from results."""
import json

from benchmarks.common import Result, check, interleaved_best


def test_verdict_needs_the_target_and_every_check():
    assert Result("x", 1.2, 1.0, "x peer").passed
    assert not Result("x", 0.9, 1.0, "x peer").passed
    assert Result("t", 300.0, 480.0, "s", higher_is_better=False).passed
    missed = Result("x", 1.2, 1.0, "x peer", checks={"gap": check(0.08, 0.05, at_most=True)})
    assert not missed.passed and missed.line().endswith("FAIL") and "MISSED" in missed.line()
    smoke = Result("x", 0.1, 1.0, "x peer", smoke=True)
    assert smoke.passed and "target not enforced" in smoke.line()          # smoke: speed not judged
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
    machine = {"cpu": "test cpu", "cores": 2, "memory_gib": 1.0, "simd": "AVX2", "python": "3.11",
               "torch": "2", "threads": 2, "date": "2026-01-01"}
    data = {"machine": machine, "results": [{**result.__dict__, "passed": result.passed, "line": result.line()}]}
    (tmp_path / "benchmarks" / "results.json").write_text(json.dumps(data))
    text = page.render(tmp_path)
    assert "test cpu, 2 cores" in text and "| word2vec |" in text and "0.6 x gensim's words/s" in text
    assert "| | | | WordSim-353 gap | 0.02 | <= 0.05 | yes |" in text and "words/s: lmcourse: 300,000" in text
