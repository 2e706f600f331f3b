"""The test of the browser test: on a deliberately broken site (``sites/broken``) it reports every
kind of problem, on a working site (built here from the package's own widgets) it reports none,
and the book test itself, run on each site, fails and passes accordingly."""
import base64
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from browser_tests import bookcheck
from lmcourse.quiz import choice_order

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BROKEN = HERE / "sites" / "broken"


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context()
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def broken(context):
    """The report on the broken site's first page, and the site's base URL."""
    with bookcheck.serve(BROKEN) as base_url:
        yield bookcheck.check_page(context, base_url + "index.html", BROKEN, base_url), base_url


# ---------------------------------------------------------------------------- a working site
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>{head}</head>
<body><h1 id="title">{title}</h1>
{body}
</body></html>
"""


def draw(fig, k):
    """One frame of the working site's kernel-free slider: a sine of frequency k."""
    ax = fig.add_subplot()
    x = np.linspace(0, 6, 50)
    ax.plot(x, np.sin(k * x))
    ax.set_title(f"k = {k}")


QUESTIONS = [{"question": "Which layers does transfer copy?",
              "choices": {"The head": False, "The lower layers": True},
              "explanation": "The head is specific to task A, so task B gets a new one."},
             {"question": "How many classes has task B?", "answer": 5,
              "explanation": "The digits 5 to 9."}]


def make_good_site(folder: Path) -> Path:
    """A four-page site with a working image, links, a saved ipywidgets slider rendered by the
    book's vendored widget manager, kernel-free sliders from ``lmcourse.widgets`` and a quiz from
    ``lmcourse.quiz``."""
    import ipywidgets
    from ipywidgets.embed import embed_data

    from lmcourse.quiz import quiz
    from lmcourse.widgets import static_slider

    shutil.copytree(ROOT / "_vendor", folder / "_static")  # as html_static_path does
    shutil.copy(BROKEN / "ok.png", folder / "ok.png")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n"
                                     "  - file: widget\n  - file: slider\n  - file: quiz\n")
    (folder / "index.html").write_text(PAGE.format(title="A working page", head="", body=(
        '<p><a href="widget.html#title">a widget</a>, <a href="slider.html">a slider</a>, '
        '<a href="#title">this title</a>, <a href="./">this folder</a></p>'
        '<img src="ok.png" alt="a working image" width="40">')))

    # what an interact cell saves: a slider above an Output widget holding the plot it drew
    plot = io.BytesIO()
    fig = plt.figure(figsize=(3, 2))
    draw(fig, 2)
    fig.savefig(plot, format="png")
    plt.close(fig)
    output = ipywidgets.Output()
    output.outputs = ({"output_type": "display_data", "metadata": {},
                       "data": {"image/png": base64.b64encode(plot.getvalue()).decode(),
                                "text/plain": "<Figure size 300x200 with 1 Axes>"}},)
    box = ipywidgets.VBox([ipywidgets.IntSlider(value=2, min=1, max=5, description="k"), output])
    data = embed_data(views=[box])
    box.close_all()
    animation = static_slider(draw, [1, 2, 3], label="frequency k", figsize=(3, 2),
                              describe=lambda k: f"A sine curve of frequency {k} over x from 0 to 6").data
    # the scripts in the order the book's nb_ipywidgets_js names them
    (folder / "widget.html").write_text(PAGE.format(
        title="A saved widget beside a kernel-free slider",
        head=''.join(f'<script src="_static/{name}"></script>'
                     for name in ("require.js", "widget-manager-setup.js", "embed-amd.js"))
             + '<script type="application/vnd.jupyter.widget-state+json">'
             f'{json.dumps(data["manager_state"])}</script>',
        body=''.join('<script type="application/vnd.jupyter.widget-view+json">'
                     f'{json.dumps(view)}</script>' for view in data["view_specs"])
             + animation))
    (folder / "slider.html").write_text(PAGE.format(title="A kernel-free slider", head="",
                                                    body=animation))
    (folder / "quiz.html").write_text(PAGE.format(title="A quiz", head="",
                                                  body=quiz(QUESTIONS).data))
    return folder


@pytest.fixture(scope="module")
def good(tmp_path_factory, context):
    """The working site's folder, its base URL, and the report on each page of its toc."""
    site = make_good_site(tmp_path_factory.mktemp("good"))
    with bookcheck.serve(site) as base_url:
        reports = {name: bookcheck.check_page(context, base_url + name, site, base_url)
                   for name in bookcheck.toc_pages(site / "_toc.yml")}
        yield site, base_url, reports


# ---------------------------------------------------------------------------- the broken site
@pytest.mark.parametrize("kind, expected", [
    ("image", "missing.png"),
    ("link", "missing.html"),
    ("fragment", "page.html#nowhere"),
    ("fragment", "#gone"),
    ("request", "missing.css: HTTP 404"),
    ("offsite", "https://cdn.example.org/lib.js"),
    ("console", "a bad thing happened"),
    ("pageerror", "boom"),
    ("docutils", 'Unknown directive type "figur"'),
    ("docutils", "unresolved cross-reference: section %s"),
    ("traceback", "ZeroDivisionError"),
    ("math", "none typeset"),
    ("widget", "no-such-model"),
    ("quiz", "quizlost shows 0 of 2 questions"),
    ("axe", "light mode, critical label (Form elements must have labels): #unlabelled"),
    ("axe", "dark mode, critical image-alt (Images must have alternative text): #noalt"),
    ("axe", "light mode, serious color-contrast"),
])
def test_broken_page_reports_each_kind(broken, kind, expected):
    report, _ = broken
    assert any(expected in message for message in report.problems.get(kind, [])), (
        f"no [{kind}] problem mentions {expected!r}:\n{report.summary()}")


def test_broken_page_reports_nothing_that_works(broken):
    report, _ = broken
    everything = "\n".join(m for messages in report.problems.values() for m in messages)
    for working in ("ok.png", "page.html#here", "#top"):
        assert working not in everything, f"{working} works but was reported"
    assert report.images == 3 and report.internal_links == 7, report


def test_each_failed_request_reported_once(broken):
    report, _ = broken
    assert len([m for m in report.problems["request"] if "missing.css" in m]) == 1
    assert not any("missing.css" in m or "missing.png" in m for m in report.problems["console"])


def test_missing_page_is_an_http_failure(context):
    with bookcheck.serve(BROKEN) as base_url:
        report = bookcheck.check_page(context, base_url + "nothere.html", BROKEN, base_url)
    assert report.status == 404 and report.problems["http"] == ["HTTP 404"]


def test_correct_page_of_broken_site_is_clean(context):
    with bookcheck.serve(BROKEN) as base_url:
        report = bookcheck.check_page(context, base_url + "page.html", BROKEN, base_url)
    assert not report.problems, report.summary()


# ---------------------------------------------------------------------------- the working site
def test_good_site_has_no_problems(good):
    _, _, reports = good
    assert list(reports) == ["index.html", "widget.html", "slider.html", "quiz.html"]
    for report in reports.values():
        assert not report.problems, report.summary()


def test_saved_widget_renders(good):
    _, _, reports = good
    assert reports["widget.html"].widget_views == 1
    assert reports["widget.html"].static_sliders == 1


def test_saved_widget_shows_its_plot(good):
    _, _, reports = good
    assert reports["widget.html"].images == 2  # the plot in the Output widget, the slider frame
    assert not reports["widget.html"].problems


def test_widget_without_its_saved_plot_is_reported():
    """A rendered interact whose Output widget shows nothing (its plot lost) is a problem."""
    models = {"box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_out"]}},
              "out": {"model_name": "OutputModel", "state": {"outputs": [{"data": {}}]}}}
    found = {"images": [], "links": [], "docutils": [], "tracebacks": [], "math": 0,
             "typeset": 0, "sliders": 0, "states": [json.dumps({"state": models})],
             "views": [{"rendered": True, "model": "box", "output_shown": False}], "quizzes": []}
    report = bookcheck.PageReport("page.html")
    bookcheck._judge(report, found, BROKEN, "http://127.0.0.1:1/", "http://127.0.0.1:1/p.html")
    assert "none of the outputs" in report.problems["widget"][0]
    assert bookcheck.saved_outputs(models, "box") and not bookcheck.saved_outputs(models, "nope")


def test_static_slider_moves(good, context):
    _, base_url, reports = good
    assert reports["slider.html"].static_sliders == 1
    page = context.new_page()
    try:
        page.goto(base_url + "slider.html")
        first, last, previous = bookcheck.move_static_slider(page)
    finally:
        page.close()
    assert first.startswith("data:image/png;base64,") and first.endswith("frequency 1 over x from 0 to 6")
    assert last.endswith("frequency 3 over x from 0 to 6")
    assert len({first, last, previous}) == 3, "each move must show another frame and its alt text"


def test_quiz_answers(good, context):
    _, base_url, reports = good
    assert reports["quiz.html"].quizzes == 1
    page = context.new_page()
    try:
        page.goto(base_url + "quiz.html")
        page.wait_for_selector(".Quiz")
        answer = bookcheck.answer_quiz(page)
    finally:
        page.close()
    # the first choice shown: the order is shuffled per question, the same on every run
    first = choice_order(QUESTIONS[0])[0]
    correct = QUESTIONS[0]["choices"][first]
    feedback = f"{'Correct.' if correct else 'Not quite.'} {QUESTIONS[0]['explanation']}"
    assert answer == {"choice": first, "correct": correct,
                      "verdict": "correct" if correct else "incorrect",
                      "feedback": feedback, "expected": feedback, "visible": True}


def test_quiz_without_its_questions_is_reported():
    found = {"images": [], "links": [], "docutils": [], "tracebacks": [], "math": 0,
             "typeset": 0, "sliders": 0, "states": [], "views": [],
             "quizzes": [{"id": "quizok", "expected": 2, "shown": 2},
                         {"id": "quizshort", "expected": 3, "shown": 1},
                         {"id": "quizall", "expected": 1_000_000, "shown": 4}]}
    report = bookcheck.PageReport("page.html")
    bookcheck._judge(report, found, BROKEN, "http://127.0.0.1:1/", "http://127.0.0.1:1/p.html")
    assert report.problems["quiz"] == ["quiz quizshort shows 1 of 3 questions"]
    assert report.quizzes == 3


# ---------------------------------------------------------------------------- the book test itself
def run_book_test(site: Path, screenshots: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(HERE / "test_book.py"), "-q",
         f"--book-html={site}", f"--book-toc={site / '_toc.yml'}", f"--screenshots={screenshots}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_book_test_fails_on_broken_site(tmp_path):
    result = run_book_test(BROKEN, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    for expected in ("FAILED browser_tests/test_book.py::test_page[index.html]", "missing.png",
                     "missing.html", "page.html#nowhere", "1 failed, 2 passed"):
        assert expected in result.stdout, f"{expected!r} not in:\n{result.stdout}"
    assert (tmp_path / "index.png").is_file() and (tmp_path / "page.png").is_file()


def test_book_test_passes_on_good_site(good, tmp_path):
    site, _, _ = good
    result = run_book_test(site, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout, result.stdout
