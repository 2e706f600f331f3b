"""Every command line (``python -m lmcourse.*``, ``benchmarks``, ``scripts/``) answers bad input with
argparse's usage error: exit status 2, a message naming the flag or argument, no traceback, and
no work done (nothing here trains or writes anything)."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ["gpt_training", "bert_inference", "word2vec_speed", "wordpiece_speed", "course_runtime"]
OUT = ["--out", "{dir}/run"]   # a valid --out for lmcourse.scale, so that the flag under test is the bad one


def module(name: str) -> list[str]:
    return ["-m", name]


def script(name: str) -> list[str]:
    return [str(ROOT / "scripts" / name)]


# (command, bad arguments, the flag or argument the error must name); {dir} is an empty directory,
# {file} and {file2} are small text files
CASES = [
    (module("lmcourse.history"), ["--bogus"], "--bogus"),
    (module("lmcourse.history"), ["--out", "{dir}"], "--out"),
    (module("lmcourse.history"), ["--out", "{file}/timeline.png"], "--out"),
    (module("lmcourse.history"), ["--scale-out", "{dir}"], "--scale-out"),
    (module("lmcourse.embedding_benchmark"), ["--seeds", "0"], "--seeds"),
    (module("lmcourse.embedding_benchmark"), ["--seeds", "two"], "--seeds"),
    (module("lmcourse.embedding_benchmark"), ["--out", "{dir}"], "--out"),
    (module("lmcourse.pretrain"), ["bogus"], "NAME"),
    (module("lmcourse.qa_tagging"), ["--out", "{dir}"], "--out"),
    (module("lmcourse.qa_tagging"), ["--bogus"], "--bogus"),
    (module("lmcourse.dynamic_masking"), ["--out", "{dir}"], "--out"),
    (module("lmcourse.dynamic_masking"), ["--bogus"], "--bogus"),
    (module("lmcourse.distillation"), ["--out", "{dir}"], "--out"),
    (module("lmcourse.distillation"), ["--bogus"], "--bogus"),
    (module("lmcourse.induction_heads"), ["--out", "{dir}"], "--out"),
    (module("lmcourse.pretrain"), ["--smoke", "gpt"], "--smoke"),
    (module("lmcourse.pretrain"), ["--smoke", "--out", "{file}", "gpt"], "--out"),
    (module("lmcourse.pretrain"), ["--check", "--out", "{dir}", "gpt"], "--check"),
    (module("lmcourse.scale"), [], "--out"),
    (module("lmcourse.scale"), ["--out", "{file}"], "--out"),
    (module("lmcourse.scale"), [*OUT, "--steps", "0"], "--steps"),
    (module("lmcourse.scale"), [*OUT, "--batch-size", "-4"], "--batch-size"),
    (module("lmcourse.scale"), [*OUT, "--context", "many"], "--context"),
    (module("lmcourse.scale"), [*OUT, "--d-model", "0"], "--d-model"),
    (module("lmcourse.scale"), [*OUT, "--layers", "0"], "--layers"),
    (module("lmcourse.scale"), [*OUT, "--heads", "5"], "--heads"),        # 96 is not divisible by 5
    (module("lmcourse.scale"), [*OUT, "--vocab-size", "100"], "--vocab-size"),
    (module("lmcourse.scale"), [*OUT, "--lr", "0"], "--lr"),
    (module("lmcourse.scale"), [*OUT, "--lr", "nan"], "--lr"),
    (module("lmcourse.scale"), [*OUT, "--seed", "-1"], "--seed"),
    (module("lmcourse.scale"), [*OUT, "--threads", "0"], "--threads"),
    (module("lmcourse.scale"), [*OUT, "--documents", "0"], "--documents"),
    (module("lmcourse.scale"), [*OUT, "--bpe-documents", "-1"], "--bpe-documents"),
    (module("lmcourse.scale"), [*OUT, "--device", "gpu"], "--device"),
    (module("lmcourse.scale"), [*OUT, "--text", "{dir}/missing.txt", "{file}"], "--text"),
    (module("lmcourse.scale"), [*OUT, "--text", "{file}"], "--text"),
    (module("lmcourse.scale"), [*OUT, "--text", "{file}", "{file2}", "--documents", "3"], "--documents"),
    (module("lmcourse.scale"), [*OUT, "--text", "{file}", "{file2}", "--context", "500"], "--context"),
    *[(module(f"benchmarks.{name}"), ["--smoke", "--json", "{dir}"], "--json") for name in BENCHMARKS],
    (module("benchmarks.course_runtime"), ["--smoke", "--bogus"], "--bogus"),
    (module("benchmarks.run"), ["--only", "nope"], "--only"),
    (module("benchmarks.run"), ["--smoke", "--save"], "--save"),
    (module("benchmarks.notebook_client"), [], "NOTEBOOK"),
    (module("benchmarks.notebook_client"), ["{dir}/missing.ipynb"], "NOTEBOOK"),
    (module("benchmarks.notebook_client"), ["{file}"], "NOTEBOOK"),
    (module("benchmarks.notebook_client"), ["--timeout", "0", "{dir}/missing.ipynb"], "--timeout"),
    (script("numerics_fingerprint.py"), ["0"], "THREADS"),
    (script("numerics_fingerprint.py"), ["two"], "THREADS"),
    (script("prose_numbers.py"), [], "NOTEBOOK"),
    (script("prose_numbers.py"), ["{dir}/missing.ipynb"], "NOTEBOOK"),
    (script("glossary.py"), ["99_nope"], "CHAPTER"),
    (script("corrections_index.py"), ["--bogus"], "--bogus"),
    (script("performance_page.py"), ["--bogus"], "--bogus"),
]
if not torch.cuda.is_available():
    CASES.append((module("lmcourse.scale"), [*OUT, "--device", "cuda"], "--device"))


@pytest.mark.parametrize(("command", "args", "name"), CASES,
                         ids=[f"{' '.join(c).removeprefix('-m ').rsplit('/', 1)[-1]} {' '.join(a)}"
                              for c, a, _ in CASES])
def test_bad_input_is_a_usage_error(tmp_path, command, args, name):
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "file.txt").write_text("the cat sat on the mat . " * 4, encoding="utf-8")
    (tmp_path / "file2.txt").write_text("a dog sat on the log . " * 4, encoding="utf-8")
    places = {"dir": str(empty), "file": str(tmp_path / "file.txt"), "file2": str(tmp_path / "file2.txt")}
    args = [a.format(**places) for a in args]
    result = subprocess.run([sys.executable, *command, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "usage:" in result.stderr and "error:" in result.stderr, result.stderr
    error = result.stderr[result.stderr.index("error:"):]
    assert name in error, f"the error does not name {name}: {error}"
    assert list(empty.iterdir()) == [], "a rejected command wrote into the output directory"


def test_argument_types_accept_good_values_and_reject_bad_ones(tmp_path):
    import argparse

    from lmcourse import cli

    assert cli.positive_int("3") == 3 and cli.nonnegative_int("0") == 0 and cli.positive_float("1e-3") == 1e-3
    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    assert cli.notebook_file(str(tmp_path / "a.ipynb")) == tmp_path / "a.ipynb"
    assert cli.output_file(str(tmp_path / "new" / "deeper" / "r.json")) == tmp_path / "new" / "deeper" / "r.json"
    assert cli.output_directory(str(tmp_path / "new" / "run")) == tmp_path / "new" / "run"
    assert cli.device("cpu") == "cpu"
    bad = [(cli.positive_int, "0"), (cli.positive_int, "1.5"), (cli.nonnegative_int, "-1"),
           (cli.positive_float, "0"), (cli.positive_float, "inf"), (cli.positive_float, "x"),
           (cli.existing_file, str(tmp_path)), (cli.notebook_file, str(tmp_path / "missing.ipynb")),
           (cli.output_file, str(tmp_path)), (cli.output_file, str(tmp_path / "a.ipynb" / "r.json")),
           (cli.output_directory, str(tmp_path / "a.ipynb")), (cli.device, "gpu"), (cli.device, "meta")]
    for convert, text in bad:
        with pytest.raises(argparse.ArgumentTypeError):
            convert(text)
