"""Every chapter binds its prose to its evidence: claims checked by code, numbers from outputs."""
import importlib.util
import json
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]*_*.ipynb"))   # a split chapter's 06b_... included
spec = importlib.util.spec_from_file_location("prose_numbers", ROOT / "scripts/prose_numbers.py")
prose_numbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prose_numbers)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_decimal_in_the_prose_appears_in_an_output(path):
    missing = prose_numbers.unsupported_numbers(path)
    assert not missing, (f"{path.name}: these numbers in the prose appear in no output (print them, "
                         f"or cite the paper they come from): {missing}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_checks_at_least_five_claims(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    printed = [line for c in cells for out in c.get("outputs", [])
               for line in "".join(out.get("text", "")).splitlines()]
    ticks = [line for line in printed if line.startswith("✔ ")]
    assert not [line for line in printed if line.startswith("✘ ")]
    assert len(ticks) >= 5, f"{path.name} checks {len(ticks)} claims: {ticks}"


def test_a_typed_number_is_caught_and_a_printed_one_passes():
    stated = prose_numbers.stated_numbers(
        "The LSTM reaches 0.93 and the RNN 71.4% of it. Devlin et al. report 84.6 "
        "{cite:p}`Devlin2019`. See 9.3 and $0.95^{32} \\approx 0.19$, `lr=0.05`.\n\n"
        "```python\nprint(0.123)\n```\nBERT has 22.7M parameters.", sections={"9.3"})
    assert stated == [("0.93", None), ("71.4", "%"), ("22.7", "M")]
    printed = prose_numbers.printed_numbers("lstm = 0.9312, share 0.7138, params 22,713,216")
    assert [prose_numbers.supported(d, u, printed) for d, u in stated] == [True, True, True]
    assert not prose_numbers.supported("0.94", None, printed)
    assert not prose_numbers.supported("22.8", "M", printed)
    assert prose_numbers.supported("16.5", "%", prose_numbers.printed_numbers("<unk> 16.5% of tokens"))


def test_solution_numbers_reads_each_solutions_code_and_prose():
    from scripts.solution_numbers import holds, solutions, stated
    markdown = ("````{exercise} Count\n:label: ch99-ex\nHow many?\n````\n````{solution} ch99-ex\n:class: dropdown\n"
                "```python\nprint(238 // 20, 0.8234)\n```\nThe 238 pieces give 11 windows, 0.82 of them empty, "
                "in 2019; a gap of 2.9e-06 and $x_{12}$ (section 9.3).\n````\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown)])
    [(label, code, prose)] = solutions(notebook)
    assert label == "ch99-ex" and code.strip() == "print(238 // 20, 0.8234)" and "print" not in prose
    numbers = stated(prose)
    assert numbers == [("2.9e-06", "e"), ("0.82", None), ("238.0", None), ("11.0", None)]
    printed = prose_numbers.printed_numbers("11 0.8234 2.93e-06") + prose_numbers.printed_numbers(code)
    assert [holds(d, u, printed) for d, u in numbers] == [True, True, True, True]
    assert not holds("12.0", None, printed) and not holds("3.1e-06", "e", printed)
