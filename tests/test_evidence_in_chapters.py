"""Every chapter binds its prose to its evidence: claims checked by code, numbers from outputs."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
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
