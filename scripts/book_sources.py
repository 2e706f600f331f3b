"""Reading the book's sources: the table of contents, and the Markdown of pages and notebooks.

Shared by the scripts that generate the reference pages and by the tests that check them.
"""
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def toc_files(root: Path = ROOT) -> list[str]:
    """Every ``file:`` entry of ``_toc.yml`` (and its ``root``), in book order, without suffix."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    found = [toc["root"]] if "root" in toc else []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return [re.sub(r"\.(ipynb|md)$", "", f) for f in found]


def source_path(doc: str, root: Path = ROOT) -> Path | None:
    """The notebook or Markdown file of a document name such as ``chapters/10_after_bert``."""
    for suffix in (".ipynb", ".md"):
        path = root / f"{doc}{suffix}"
        if path.exists():
            return path
    return None


def markdown_of(path: Path) -> str:
    """The Markdown of a page: the file itself, or a notebook's Markdown cells joined."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text
    cells = json.loads(text)["cells"]
    return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                       for c in cells if c["cell_type"] == "markdown")


def page_title(path: Path) -> str:
    """The first level-1 heading of a page, with a chapter's number (the book numbers chapters
    by their place in the toc, as their file names do), e.g. ``10 After BERT``; a chapter's
    section notebook (``06b_self_attention``) carries its chapter's number."""
    match = re.search(r"^#\s+(.+?)\s*$", markdown_of(path), flags=re.MULTILINE)
    title = match.group(1) if match else path.stem
    number = re.match(r"(\d+)[a-z]?_", path.name)
    return f"{int(number.group(1))} {title}" if path.parent.name == "chapters" and number else title


def doc_link(doc: str, title: str, root: Path = ROOT) -> str:
    """A MyST link to ``doc`` if the book contains it (listed in _toc.yml, file present), else plain text."""
    if doc in toc_files(root) and source_path(doc, root) is not None:
        return f"{{doc}}`{title} <{doc}>`"
    return title
