"""The generated reference pages are up to date, and every chapter meets the book's rules:
three or more exercises with hidden solutions, citations that exist in references.bib."""
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sources = _script("book_sources")
TOC = sources.toc_files(ROOT)
CHAPTERS = [doc for doc in TOC if doc.startswith("chapters/")]
FENCE = r"(`{3,}|:{3,})"


def test_corrections_index_is_up_to_date():
    expected = _script("corrections_index").render(ROOT)
    assert (ROOT / "corrections.md").read_text(encoding="utf-8") == expected, \
        "corrections.md is out of date: run python scripts/corrections_index.py"


def test_glossary_is_up_to_date():
    expected = _script("glossary").render(ROOT)
    assert (ROOT / "glossary.md").read_text(encoding="utf-8") == expected, \
        "glossary.md is out of date: run python scripts/glossary.py"


def test_every_chapter_lists_its_glossary_terms():
    glossary = _script("glossary")
    for chapter in glossary.CHAPTERS:
        nb = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
        cell = nb["cells"][1]
        assert (cell.get("id") == glossary.TERMS_CELL_ID
                and "".join(cell["source"]) == glossary.terms_cell_source(chapter)), \
            f"chapters/{chapter}.ipynb: key-terms cell missing or out of date: run python scripts/glossary.py"


def test_glossary_links_resolve():
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    for target in re.findall(r"\{doc\}`[^`<]*<([^>`]+)>`", text):
        assert target in TOC, f"glossary links to {target}, which is not in _toc.yml"
        assert sources.source_path(target, ROOT) is not None, f"glossary links to missing {target}"
    glossary = _script("glossary")
    for english, _, _, chapter in glossary.TERMS:
        assert chapter in glossary.CHAPTERS, f"term {english!r} names unknown chapter {chapter!r}"


def test_performance_page_is_up_to_date():
    expected = _script("performance_page").render(ROOT)
    assert (ROOT / "performance.md").read_text(encoding="utf-8") == expected, \
        "performance.md is out of date: run python scripts/performance_page.py"


def test_reference_pages_are_in_the_toc():
    for page in ("glossary", "corrections", "bibliography", "performance", "scaling"):
        assert page in TOC, f"{page}.md is missing from _toc.yml"


def _exercises(markdown: str) -> tuple[list[str], dict[str, str]]:
    """Labels of the {exercise} blocks, and {solution} target -> its option lines."""
    labels = []
    for match in re.finditer(FENCE + r"\{exercise\}[^\n]*\n((?::[^\n]*\n)*)", markdown):
        label = re.search(r"^:label:\s*(\S+)", match.group(2), re.MULTILINE)
        labels.append(label.group(1) if label else "")
    solutions = {m.group(2): m.group(3) for m in
                 re.finditer(FENCE + r"\{solution\}\s+(\S+)[^\n]*\n((?::[^\n]*\n)*)", markdown)}
    return labels, solutions


def _chapter_markdown(doc: str) -> str:
    path = sources.source_path(doc, ROOT)
    if path is None:
        pytest.skip(f"{doc} is listed in _toc.yml but not in this checkout yet")
    return sources.markdown_of(path)


#: chapter number -> its pages: one notebook, or the section notebooks of a split chapter
#: (chapters/06_attention and chapters/06b_self_attention are chapter 6), which share out its exercises
CHAPTER_PAGES: dict[str, list[str]] = {}
for _doc in CHAPTERS:
    CHAPTER_PAGES.setdefault(re.match(r"chapters/(\d+)", _doc).group(1), []).append(_doc)


@pytest.mark.parametrize("chapter", sorted(CHAPTER_PAGES))
def test_chapter_has_three_exercises_with_hidden_solutions(chapter):
    """At least 3 exercises in the chapter as a whole, each with its hidden solution on its own page."""
    count = 0
    for doc in CHAPTER_PAGES[chapter]:
        labels, solutions = _exercises(_chapter_markdown(doc))
        count += len(labels)
        for label in labels:
            assert label, f"{doc}: every exercise needs a :label: for its solution"
            assert label in solutions, f"{doc}: exercise {label} has no {{solution}} {label}"
            assert re.search(r"^:class:.*\bdropdown\b", solutions[label], re.MULTILINE), \
                f"{doc}: the solution of {label} must be hidden (:class: dropdown)"
    assert count >= 3, f"chapter {int(chapter)} ({', '.join(CHAPTER_PAGES[chapter])}) has {count} exercises; " \
                       "every chapter needs at least 3"


@pytest.mark.parametrize("doc", CHAPTERS)
def test_chapter_cites_its_papers(doc):
    text = _chapter_markdown(doc)
    assert re.search(r"\{footcite(:[a-z]+)?\}`", text), f"{doc} cites no paper"
    assert "{footbibliography}" in text, f"{doc} has no {{footbibliography}} block"


def _bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text(encoding="utf-8"),
                          re.MULTILINE))


def _cited_keys() -> dict[str, set[str]]:
    """page -> the keys it cites."""
    cited = {}
    for doc in TOC:
        path = sources.source_path(doc, ROOT)
        if path is None:
            continue
        roles = re.findall(r"\{(?:foot)?cite(?::[a-z]+)?\}`([^`]+)`", sources.markdown_of(path))
        cited[doc] = {key.strip() for role in roles for key in role.split(",")}
    return cited


def test_every_cited_key_is_in_references_bib():
    keys = _bib_keys()
    for doc, cited in _cited_keys().items():
        assert cited <= keys, f"{doc} cites {sorted(cited - keys)}, missing from references.bib"


def test_the_bibliography_lists_only_cited_works():
    cited = set().union(*_cited_keys().values())
    assert not _bib_keys() - cited, f"references.bib holds works no page cites: {sorted(_bib_keys() - cited)}"


def test_parsers_on_a_sample():
    sample = (
        "````{exercise} Count\n:label: ch99-ex-a\nText\n````\n"
        "````{solution} ch99-ex-a\n:class: dropdown\n```python\nx = 1\n```\n````\n"
        ":::{exercise} Other\n:label: ch99-ex-b\n:::\n"
        "```{solution} ch99-ex-b\n:label: sol-b\n```\n"
        "```{admonition} Correction 12: 80/10/10 applies to the chosen 15%\n:class: warning\n"
        ":name: correction-12\n```\n")
    labels, solutions = _exercises(sample)
    assert labels == ["ch99-ex-a", "ch99-ex-b"]
    assert "dropdown" in solutions["ch99-ex-a"] and "dropdown" not in solutions["ch99-ex-b"]
    boxes = _script("corrections_index").BOX.findall(sample)
    assert boxes == [("12", "80/10/10 applies to the chosen 15%")]


def test_a_correction_box_without_its_name_is_refused(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "99_x.md").write_text(
        "# X\n\n```{admonition} Correction 3: a fact\n:class: warning\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match=":name: correction-3"):
        _script("corrections_index").find_corrections(tmp_path)


def test_figure_names_are_unique_and_every_reference_resolves():
    names, referenced = [], set()
    for doc in CHAPTERS:
        path = sources.source_path(doc, ROOT)
        if path is None or path.suffix != ".ipynb":
            continue
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            figure = cell["metadata"].get("mystnb", {}).get("figure")
            if figure:
                names.append(figure["name"])
            if cell["cell_type"] == "markdown":
                referenced |= set(re.findall(r"\{numref\}`(?:[^`<]*<)?(fig-[\w-]+)>?`", "".join(cell["source"])))
    duplicates = sorted({name for name in names if names.count(name) > 1})
    assert not duplicates, f"figure names used twice: {duplicates}"
    assert referenced <= set(names), f"references to no figure: {sorted(referenced - set(names))}"


def test_the_corrections_index_explains_unused_numbers():
    index = _script("corrections_index")
    assert index.unused_numbers([1, 2, 3]) == []
    assert index.unused_numbers([1, 2, 26, 30, 32]) == [3, *range(4, 26), 27, 28, 29, 31]
    assert index._spans([27, 28, 29, 40]) == "27 to 29 and 40"
    assert index._spans([5]) == "5" and index._spans([5, 6, 9]) == "5, 6 and 9"
    text = (ROOT / "corrections.md").read_text(encoding="utf-8")
    numbers = sorted({b[0] for b in index.find_corrections(ROOT)})
    if gaps := index.unused_numbers(numbers):
        assert index._spans(gaps) in text and "not used" in text


def test_the_scaling_page_sizes_its_gpu_model_against_gpt1_as_lmcourse_counts_them():
    import torch

    from lmcourse.gpt import GPT, GPTConfig
    with torch.device("meta"):
        gpu_model = GPT(GPTConfig(vocab_size=8192, context_size=256, d_model=384, num_layers=12, num_heads=6))
        gpt1_sizes = GPT(GPTConfig(vocab_size=40478, context_size=512, d_model=768, num_layers=12, num_heads=12))

    def count(model, part=""):
        return sum(p.numel() for name, p in model.named_parameters() if name.startswith(part))
    text = (ROOT / "scaling.md").read_text(encoding="utf-8")
    for model in (gpu_model, gpt1_sizes):
        for n in (count(model), count(model, "blocks."), count(model, "wte.") + count(model, "wpe.")):
            assert f"{n:,}" in text, f"scaling.md does not give lmcourse's count {n:,}"
    assert f"{count(gpt1_sizes) - 2 * 768:,}" in text           # GPT-1 itself has no final LayerNorm
    assert 0.19 < count(gpu_model) / count(gpt1_sizes) < 0.22 and "about a fifth" in text
