"""The numbers a chapter's exercise solutions state come from running them: execute the chapter, then
each solution's Python code after it (in the chapter's namespace, in order), and list the numbers of
each solution's prose that neither its own output and code nor the chapter's outputs support (a
solution may quote the chapter).

A solution is a ``{solution}`` block of a Markdown cell; its code is its fenced ``python`` blocks and
its prose the rest. Checked: every decimal (as in prose_numbers.py) and every whole number of two or
more digits (``238 pieces``, ``110 windows``), except maths, inline code, years and section references.
A solution whose code prints nothing checks nothing; run this after changing a chapter's experiments.

Usage: python scripts/solution_numbers.py chapters/09_bert.ipynb   (about as long as the chapter runs)
"""
import argparse
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.notebook_client import notebook_client  # noqa: E402
from scripts.prose_numbers import (  # noqa: E402
    EXEMPT,
    _blank,
    notebook_file,
    output_text,
    printed_numbers,
    stated_numbers,
    supported,
)

SOLUTION = re.compile(r"^(`{3,})\{solution\}\s+(\S+)[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
CODE = re.compile(r"^(`{3,})python[ \t]*\n(.*?)^\1[ \t]*$", re.S | re.M)
SCIENTIFIC = re.compile(r"(?<![\w.])(\d\.\d+e[-+]?\d+)\b")
SECTION = re.compile(r"\b[Ss]ections? \d+(?:\.\d+)*")
WHOLE = re.compile(r"(?<![\w.,\-])(\d{1,3}(?:,\d{3})+|\d{2,})(?![\w.,]*\d)")


def solutions(notebook) -> list[tuple[str, str, str]]:
    """``(label, code, prose)`` of every solution block, in order."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for match in SOLUTION.finditer(cell.source):
                body = match.group(3)
                code = "\n".join(m.group(2) for m in CODE.finditer(body))
                found.append((match.group(2), code, CODE.sub("", body)))
    return found


def stated(prose: str) -> list[tuple[str, str | None]]:
    """The decimals (``unit`` None or a suffix such as ``%``), the numbers in scientific notation
    (``unit`` "e") and the whole numbers of two or more digits that a solution's prose states."""
    numbers = [(m.group(1), "e") for m in SCIENTIFIC.finditer(_blank(prose, EXEMPT[1]))]
    prose = _blank(prose, SCIENTIFIC)
    numbers += stated_numbers(_blank(prose, SECTION))
    for pattern in (*EXEMPT, SECTION):
        prose = _blank(prose, pattern)
    for match in WHOLE.finditer(prose):
        value = int(match.group(1).replace(",", ""))
        if not 1900 <= value <= 2030:                                      # a year
            numbers.append((match.group(1).replace(",", "") + ".0", None))
    return numbers


def holds(digits: str, unit: str | None, numbers: list[float]) -> bool:
    """Some number rounds to ``digits`` (in scientific notation, to its significant digits)."""
    if unit == "e":
        places = len(digits.split("e")[0].split(".")[1])
        return any(f"{n:.{places}e}" == f"{float(digits):.{places}e}" for n in numbers)
    return supported(digits, unit, numbers)


def unsupported_solution_numbers(path: Path, timeout: int = 600) -> dict[str, list[str]]:
    """Solution label -> the error its code raised, if any, and the numbers its prose states that its output
    and code do not support. The chapter's own cells must run without error."""
    client = notebook_client(path, timeout=timeout, allow_errors=True)     # a failing solution is reported
    found = solutions(client.nb)
    first = len(client.nb.cells)
    client.nb.cells += [nbformat.v4.new_code_cell(code) for _, code, _ in found]
    client.execute()
    failed = [i for i, cell in enumerate(client.nb.cells[:first]) for o in cell.get("outputs", [])
              if o["output_type"] == "error"]
    if failed:
        raise RuntimeError(f"{path}: the chapter's own cells {failed} raised an error; fix them first")
    quoted = printed_numbers(output_text(o for cell in client.nb.cells[:first] for o in cell.get("outputs", [])))
    report = {}
    for k, (label, code, prose) in enumerate(found):
        outputs = client.nb.cells[first + k].outputs
        errors = [f"raised {o['ename']}: {o['evalue']}" for o in outputs if o["output_type"] == "error"]
        numbers = printed_numbers(output_text(outputs)) + printed_numbers(code) + quoted
        report[label] = errors + [digits.removesuffix(".0") + (unit if unit not in (None, "e") else "")
                         for digits, unit in stated(prose) if not holds(digits, unit, numbers)]
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python scripts/solution_numbers.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", type=notebook_file, nargs="+", metavar="NOTEBOOK", help="chapter notebooks")
    status = 0
    for name in parser.parse_args().notebooks:
        for label, missing in unsupported_solution_numbers(name).items():
            print(f"{name} {label}: {', '.join(missing) if missing else 'every number supported'}")
            status |= bool(missing)
    sys.exit(status)
