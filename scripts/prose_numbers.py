"""Numbers in the prose come from the outputs: find the decimals a chapter's Markdown states that
none of its outputs (nor its code's settings) supports.

A decimal number in a Markdown cell is *supported* when some number printed by the notebook, or
written in its code (a setting such as ``lr=0.05``), rounds to it at the prose's precision (with
the unit the prose gives: ``96.4%`` matches ``0.964``, ``22.7M`` and ``22.7 million`` match
``22,713,216``). Exempt: maths (``$...$``), code (inline and fenced), headings, references to the
chapter's own sections ("see 9.3"), and sentences that cite a paper (a ``{cite}`` or
``{footcite}`` role in the same sentence): a number taken from a paper is marked by its citation.

Usage: python scripts/prose_numbers.py chapters/*.ipynb   (lists unsupported numbers)
"""
import argparse
import json
import re
import sys
from pathlib import Path

DECIMAL = re.compile(r"(?<![\w.,])(\d+\.\d+)(?![\w.]*\d)\s*(%|k\b|M\b|B\b|million|billion)?")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# what a printed number is multiplied by to read in the prose's unit (a share prints as 0.165 or 16.5%)
SCALES = {None: (1.0,), "%": (100.0, 1.0), "k": (1e-3,), "M": (1e-6,), "million": (1e-6,),
          "B": (1e-9,), "billion": (1e-9,)}
CITATION = re.compile(r"\{(foot)?cite[:\w]*\}")
EXEMPT = [
    re.compile(r"^(`{3,})(python|bash|text|)[ \t]*$.*?^\1[ \t]*$", re.S | re.M),  # code blocks
    re.compile(r"\$\$.*?\$\$", re.S), re.compile(r"\$[^$\n]+\$"),  # maths
    re.compile(r"`[^`\n]*`"),                           # inline code, the target of a role
    re.compile(r"^#+ .*$", re.M),                       # headings (section numbers)
    re.compile(r"\]\([^)]*\)"),                         # link targets
]


def sentences(markdown: str) -> list[str]:
    """Split Markdown into rough sentences (a citation belongs to the sentence it ends)."""
    return re.split(r"(?<=[.!?])\s+(?=[A-Z*(])|\n\s*\n", markdown)


def _blank(text: str, pattern: re.Pattern) -> str:
    """Replace every match by spaces, keeping its line breaks."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def stated_numbers(markdown: str, sections: set[str] = frozenset()) -> list[tuple[str, str | None]]:
    """The decimals the prose states, as ``(digits, unit)``, less the exempt ones."""
    for pattern in EXEMPT:
        markdown = _blank(markdown, pattern)
    found = []
    for sentence in sentences(markdown):
        if CITATION.search(sentence):
            continue
        for match in DECIMAL.finditer(sentence):
            if match.group(1) not in sections:
                found.append((match.group(1), match.group(2)))
    return found


def printed_numbers(text: str) -> list[float]:
    """Every number in a text, with thousands separators removed (``22,713,216`` is one)."""
    return [float(n) for n in NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3}\b)", "", text))]


def supported(digits: str, unit: str | None, numbers: list[float]) -> bool:
    places = len(digits.split(".")[1])
    value = float(digits)
    # the prose's digits carry no sign (a minus, "−" or "-", is not part of DECIMAL), so compare magnitudes
    return any(abs(round(abs(n) * scale, places) - value) < 10 ** -(places + 3)
               for scale in SCALES[unit] for n in numbers)


def output_text(outputs) -> str:
    """The printed text of notebook outputs: streams and the textual parts of display data."""
    texts = []
    for out in outputs:
        texts.append("".join(out.get("text", "")))
        texts += ["".join(v) for k, v in out.get("data", {}).items()
                  if k in ("text/plain", "text/html", "text/markdown", "text/latex")]
    return "\n".join(texts)


def notebook_texts(path: Path) -> tuple[str, str, str]:
    """(Markdown, printed outputs, code) of a notebook."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    markdown = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return markdown, output_text(o for c in cells for o in c.get("outputs", [])), code


def unsupported_numbers(path: Path) -> list[str]:
    """The decimals of a notebook's prose that no output or setting supports, in order."""
    markdown, outputs, code = notebook_texts(path)
    sections = set(re.findall(r"^#+ (\d+(?:\.\d+)+)", markdown, re.M))
    numbers = printed_numbers(outputs) + printed_numbers(code)
    return [digits + (unit or "") for digits, unit in stated_numbers(markdown, sections)
            if not supported(digits, unit, numbers)]


def notebook_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file() or path.suffix != ".ipynb":
        raise argparse.ArgumentTypeError(f"no such notebook (.ipynb file): {text!r}")
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python scripts/prose_numbers.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", type=notebook_file, nargs="+", metavar="NOTEBOOK", help="chapter notebooks")
    status = 0
    for name in parser.parse_args().notebooks:
        missing = unsupported_numbers(name)
        print(f"{name}: {', '.join(missing) if missing else 'every number supported'}")
        status |= bool(missing)
    sys.exit(status)
