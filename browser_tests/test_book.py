"""The built book in a real browser, offline: every page of the toc loads cleanly, its images and
internal links resolve, its saved widgets render, its kernel-free sliders move, and its self-check
quizzes answer."""
import json
from pathlib import Path

import pytest

from browser_tests import bookcheck

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"
QUIZ_MARK = "data-numquestions="   # in the saved HTML output of a quiz (lmcourse.quiz)
REPORTS: dict[str, bookcheck.PageReport] = {}


def source_notebook(site: Path, page_name: str) -> dict | None:
    """The notebook a page was built from (the book copies it to ``_sources/``), if any."""
    path = site / "_sources" / Path(page_name).with_suffix(".ipynb")
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def widget_views(notebook: dict) -> int:
    """How many widget views the notebook's saved outputs display."""
    return sum(WIDGET_VIEW_MIME in output.get("data", {})
               for cell in notebook["cells"] if cell["cell_type"] == "code"
               for output in cell.get("outputs", []))


def quizzes(notebook: dict) -> int:
    """How many self-check quizzes the notebook's saved outputs display."""
    return sum(QUIZ_MARK in "".join(output.get("data", {}).get("text/html", ""))
               for cell in notebook["cells"] if cell["cell_type"] == "code"
               for output in cell.get("outputs", []))


def test_index_leads_to_the_root_page(site, pytestconfig):
    """``index.html``, the file a reader opens first, redirects to the toc's root page."""
    root = bookcheck.toc_pages(pytestconfig.getoption("--book-toc"))[0]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert root == "index.html" or f"url={root}" in index, f"index.html does not lead to {root}"


def test_page(page_name, site, base_url, context, screenshots):
    """Loads with HTTP 200 and shows no problem of any kind (see ``bookcheck.KINDS``), shows
    every widget view and quiz its notebook saved, has a kernel-free slider if it has ipywidgets
    explorers, moves its first kernel-free slider and sees the frame change, and answers the first
    question of its first quiz and sees the verdict and explanation."""
    stem = page_name.removesuffix(".html").replace("/", "__")
    moves, answers = [], []

    def move_first_slider(page, report):
        if report.static_sliders:
            moves.append(bookcheck.move_static_slider(page, 0))
            if screenshots:
                page.locator("div.lmc-slider").first.screenshot(
                    path=str(screenshots / f"{stem}__slider.png"))

    def answer_first_quiz(page, report):
        if report.quizzes and "quiz" not in report.problems:   # (a quiz problem fails below)
            answers.append(bookcheck.answer_quiz(page, 0))
            if screenshots:
                page.locator(bookcheck.QUIZ).first.locator(".Quiz").first.screenshot(
                    path=str(screenshots / f"{stem}__quiz.png"))

    def then(page, report):
        move_first_slider(page, report)
        answer_first_quiz(page, report)

    report = bookcheck.check_page(
        context, base_url + page_name, site, base_url,
        screenshot=screenshots / f"{stem}.png" if screenshots else None, then=then)
    REPORTS[page_name] = report
    if report.problems:
        pytest.fail("\n" + report.summary(), pytrace=False)
    notebook = source_notebook(site, page_name)
    if notebook is not None:
        expected = widget_views(notebook)
        assert report.widget_views == expected, (
            f"{page_name}: the notebook displays {expected} widget views, the page has "
            f"{report.widget_views}")
        assert report.quizzes == quizzes(notebook), (
            f"{page_name}: the notebook displays {quizzes(notebook)} quizzes, the page has "
            f"{report.quizzes}")
        if expected:
            assert WIDGET_STATE_MIME in notebook["metadata"].get("widgets", {}), (
                f"{page_name}: widget views but no saved widget state in the notebook's metadata "
                "(execute it with nbconvert, which stores the state)")
            assert report.static_sliders, (
                f"{page_name}: its explorers need a kernel to move; give the main one a "
                "kernel-free version (lmcourse.widgets.static_slider) for the book")
    for before, after_fill, after_click in moves:
        assert before != after_fill, f"{page_name}: moving the slider did not change the frame"
        assert after_click != after_fill, f"{page_name}: the step button did not change the frame"
    for answer in answers:
        verdict = "correct" if answer["correct"] else "incorrect"
        assert answer["verdict"] == verdict and answer["visible"], (
            f"{page_name}: clicking {answer['choice']!r} ({verdict}) shows the verdict "
            f"{answer['verdict'] or 'none'!r}")
        # (a question with several correct choices adds a count: "... [1/2]")
        assert answer["expected"] and answer["feedback"].startswith(answer["expected"]), (
            f"{page_name}: clicking {answer['choice']!r} shows {answer['feedback']!r}, not its "
            f"explanation {answer['expected']!r}")


def test_book_has_a_kernel_free_slider(site):
    """Each chapter's main explorer has a slider that works without a kernel: a book with
    notebooks has at least one, and test_page moved each page's first one."""
    if not REPORTS:
        pytest.skip("no page was checked")
    notebooks = [name for name in REPORTS if source_notebook(site, name) is not None]
    if not notebooks:
        pytest.skip("the book has no notebook pages yet")
    with_sliders = [name for name in notebooks if REPORTS[name].static_sliders]
    assert with_sliders, f"no kernel-free slider on any notebook page: {notebooks}"
