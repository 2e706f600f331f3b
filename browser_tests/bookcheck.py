"""Check a built static site page by page in headless Chromium, offline.

Used by the browser test of the book (``test_book.py``) and by its own test on deliberately broken
sites (``test_checker.py``). Everything a reader's browser would do happens here: the site is
served over HTTP from this machine, every request that leaves that server is blocked and recorded,
and each page is inspected after its scripts (MathJax, the widget manager) have run.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import json
import re
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import yaml

CHROMIUM = "/usr/bin/chromium"
# Chromium's own background traffic (updates, sync, field trials) is switched off: the only
# requests left are the page's, and all of them must go to the local server. No sandbox (CI runs
# as root), no GPU, and no reliance on a large /dev/shm (containers often have 64 MB).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'
WIDGET_STATE = 'script[type="application/vnd.jupyter.widget-state+json"]'
QUIZ = "div[data-numquestions]"   # a jupyterquiz quiz (lmcourse.quiz); its script adds the questions
# What each kind of problem means, in the words a failing test prints.
KINDS = {
    "http": "the page did not load with HTTP 200",
    "request": "a request of the page failed or was answered with an HTTP error",
    "offsite": "the page tried to reach another host (readers may be offline)",
    "console": "a console error",
    "pageerror": "an uncaught JavaScript exception",
    "image": "an <img> that did not load",
    "link": "an internal link to a file that does not exist",
    "fragment": "an internal link to an #anchor that does not exist on its target page",
    "docutils": "a rendered Sphinx/docutils error (system-message or problematic element, or a "
                "cross-reference left unresolved)",
    "traceback": "a notebook output that is an error traceback",
    "math": "math that MathJax did not typeset",
    "widget": "a saved widget view that did not render",
    "quiz": "a self-check quiz that did not show its questions",
    "axe": "a critical or serious violation of axe-core's WCAG 2 A/AA rules",
}
# axe-core, vendored (vendor/axe-core: version, licence and hash in browser_tests/README.md), run
# on every page in the theme's light and dark modes; these impacts fail the page
AXE = Path(__file__).with_name("vendor") / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
AXE_FAILING_IMPACTS = ("critical", "serious")
_AXE_RUN = """async (mode) => {
  document.documentElement.dataset.theme = mode;
  document.documentElement.dataset.mode = mode;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const result = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']},
                                          resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160)}))}));
}"""


@dataclass
class PageReport:
    """What one page did in the browser: its problems by kind, and what it contains."""

    url: str
    status: int | None = None
    problems: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    widget_views: int = 0
    static_sliders: int = 0
    quizzes: int = 0
    images: int = 0
    internal_links: int = 0

    def add(self, kind: str, message: str, detail: str = "") -> None:
        """Record a problem, with ``detail`` such as where it came from."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        message = f"{message} ({detail})" if detail else message
        if message not in self.problems[kind]:
            self.problems[kind].append(message)

    def summary(self) -> str:
        """Every problem, one line each, grouped by kind."""
        lines = [f"{self.url}:"]
        for kind, messages in self.problems.items():
            lines += [f"  [{kind}] {KINDS[kind]}:"] + [f"      {m}" for m in messages]
        return "\n".join(lines)


# ---------------------------------------------------------------------------- serving the site
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@contextlib.contextmanager
def serve(directory: str | Path):
    """Serve ``directory`` over HTTP on 127.0.0.1 (a free port); yields the base URL."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"directory must be an existing folder, got {directory}")
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def launch(playwright):
    """Debian's Chromium, headless, with the flags that keep it quiet and offline-friendly."""
    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} not found: install Debian's chromium "
                                "(apt-get install -y chromium)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


# ---------------------------------------------------------------------------- which pages
def toc_pages(toc: str | Path) -> list[str]:
    """The HTML pages (relative paths) of a Jupyter Book ``_toc.yml``: its root, then every
    ``file`` entry of its parts, chapters and sections in book order."""
    toc = Path(toc)
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "root" not in data:
        raise ValueError(f"toc must be a Jupyter Book _toc.yml with a 'root' entry: {toc}")
    files = [data["root"]]

    def walk(entry):
        for key in ("parts", "chapters", "sections"):
            for child in entry.get(key) or []:
                if "glob" in child:
                    raise ValueError(f"glob entries are not supported in {toc}: {child['glob']}")
                if "file" in child:
                    files.append(child["file"])
                walk(child)

    walk(data)
    pages = []
    for name in files:
        stem = re.sub(r"\.(md|ipynb|rst)$", "", str(name))
        page = f"{stem}.html"
        if page not in pages:
            pages.append(page)
    return pages


# ---------------------------------------------------------------------------- anchors of a file
class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.anchors: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and (name == "id" or (tag == "a" and name == "name")):
                self.anchors.add(value)


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    """Every ``id`` (and ``<a name>``) in an HTML file: the targets a ``#fragment`` may name."""
    parser = _Anchors()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.anchors)


def local_file(site: Path, base_url: str, url: str) -> Path | None:
    """The file of ``site`` that the same-origin ``url`` names (None for another origin)."""
    if not url.startswith(base_url):
        return None
    path = unquote(urlsplit(url).path)[len(urlsplit(base_url).path):]
    target = site / path
    if path == "" or path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target


# ---------------------------------------------------------------------------- one page
_COLLECT = """() => {
  const visible = el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const text = el => (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 160);
  return {
    images: [...document.images].map(img => ({src: img.getAttribute('src') || '',
        ok: img.complete && img.naturalWidth > 0})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    docutils: [...document.querySelectorAll('.system-message, .problematic')].map(text).concat(
        // a cross-reference Sphinx could not resolve is left as text, outside any link ("section %%s"
        // for a {numref} to an unnumbered heading, which Sphinx does not warn about)
        [...document.querySelectorAll('.xref')].filter(x => !x.closest('a'))
            .map(x => 'unresolved cross-reference: ' + text(x))),
    tracebacks: [...document.querySelectorAll('.output.traceback, .output.error')].map(text),
    math: document.querySelectorAll('.math, span.math, div.math').length,
    typeset: document.querySelectorAll('mjx-container').length,
    views: [...document.querySelectorAll('%s')].map(s => {
        const area = s.previousElementSibling;
        const w = area && area.classList.contains('widget-subarea')
                  && area.querySelector('.jupyter-widgets');
        const model = JSON.parse(s.textContent || '{}').model_id || '?';
        const outputs = w ? [...area.querySelectorAll('.widget-output')] : [];
        return {rendered: !!w && visible(w), model: model,
                output_shown: outputs.some(o => o.children.length && visible(o))};
    }),
    states: [...document.querySelectorAll('%s')].map(s => s.textContent),
    sliders: document.querySelectorAll('div.lmc-slider input[type=range]').length,
    quizzes: [...document.querySelectorAll('%s')].map(d => ({id: d.id,
        expected: parseInt(d.dataset.numquestions, 10),
        shown: [...d.querySelectorAll('.Quiz')].filter(visible).length})),
  };
}""" % (WIDGET_VIEW, WIDGET_STATE, QUIZ)  # noqa: UP031 (JavaScript: its braces would need doubling)

_IMAGES_SETTLED = """() => Promise.all([...document.images].map(img => {
  img.loading = 'eager';
  return img.complete ? null : new Promise(r => { img.onload = img.onerror = r; });
}))"""

_WIDGETS_RENDERED = """() => {
  const views = document.querySelectorAll('%s');
  if (views.length && typeof window.require === 'undefined') return true;  // no manager to wait for
  return [...views].every(s => { const a = s.previousElementSibling;
      return a && a.classList.contains('widget-subarea') && a.querySelector('.jupyter-widgets'); });
}""" % WIDGET_VIEW  # noqa: UP031 (JavaScript: its braces would need doubling)

_QUIZZES_RENDERED = """() => [...document.querySelectorAll('%s')].every(
    d => d.querySelector('.Quiz'))""" % QUIZ  # noqa: UP031 (JavaScript: its braces would need doubling)

_MATHJAX_DONE = """() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise.then(() => true) : true"""


def check_page(context, url: str, site: Path, base_url: str, screenshot: Path | None = None,
               settle_ms: int = 30_000, then=None) -> PageReport:
    """Open ``url`` in a new tab of ``context`` and report every problem it shows.

    ``site`` is the folder served at ``base_url`` (internal links are checked against its
    files); ``settle_ms`` bounds the wait for images, MathJax and widgets; ``then(page, report)``,
    if given, runs on the checked page before it is closed.
    """
    site = Path(site)
    report = PageReport(url)
    page = context.new_page()
    blocked: set[str] = set()

    def route(r):
        if r.request.url.startswith(base_url):
            r.continue_()
        else:
            blocked.add(r.request.url)
            report.add("offsite", r.request.url)
            r.abort("blockedbyclient")

    page.route("**/*", route)
    failed: list[tuple[str, str]] = []   # (url, why), judged once the page has settled
    errors: list[tuple[str, str]] = []   # (console text, url of the script or resource)
    page.on("console", lambda m: m.type == "error"
            and errors.append((m.text, m.location.get("url", ""))))
    page.on("pageerror", lambda e: report.add("pageerror", str(e)))
    page.on("requestfailed", lambda r: failed.append((r.url, str(r.failure))))
    page.on("response", lambda r: r.status >= 400 and r.url != url
            and failed.append((r.url, f"HTTP {r.status}")))
    try:
        response = page.goto(url, wait_until="load", timeout=60_000)
        report.status = response.status if response else None
        if report.status != 200:
            report.add("http", f"HTTP {report.status}")
            return report
        _settle(page, settle_ms)
        _judge_requests(report, failed, errors, blocked)
        _judge(report, page.evaluate(_COLLECT), site, base_url, url)
        audit(page, report)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
        if then is not None:
            then(page, report)
        return report
    finally:
        page.close()


@functools.cache
def _axe_script() -> str:
    """The vendored axe-core, read once and checked against its recorded hash."""
    script = AXE.read_bytes()
    if hashlib.sha256(script).hexdigest() != AXE_SHA256:
        raise RuntimeError(f"{AXE} is not the vendored axe-core (its SHA-256 differs)")
    return script.decode("utf-8")


def audit(page, report: PageReport) -> None:
    """Run axe-core's WCAG 2 A and AA rules on an open page, in light then dark mode, and report
    each critical or serious violation with its rule and the elements it found."""
    page.add_script_tag(content=_axe_script())
    for mode in ("light", "dark"):
        for v in page.evaluate(_AXE_RUN, mode):
            if v["impact"] in AXE_FAILING_IMPACTS:
                for node in v["nodes"]:
                    report.add("axe", f"{mode} mode, {v['impact']} {v['id']} ({v['help']}): "
                               f"{node['target']}", node["html"])
    page.evaluate("() => { document.documentElement.dataset.theme = 'light';"
                  " document.documentElement.dataset.mode = 'light'; }")


def _judge_requests(report: PageReport, failed, errors, blocked: set[str]) -> None:
    """One line per failed request: Chromium also reports an HTTP error as an aborted request
    and as a console error, and a blocked request as a console error; those echoes are dropped."""
    http_errors = {u for u, why in failed if why.startswith("HTTP")}
    for u, why in failed:
        if u not in blocked and (why.startswith("HTTP") or u not in http_errors):
            report.add("request", f"{u}: {why}")
    known = blocked | {u for u, _ in failed}
    for text, source in errors:
        echo = text.startswith("Failed to load resource") and source in known
        if not echo and "ERR_BLOCKED_BY_CLIENT" not in text:
            report.add("console", text, source or "?")


def _settle(page, settle_ms: int) -> None:
    """Wait (bounded) until images, MathJax, the widget manager and quizzes have done their work."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    waits = [lambda s=script: page.wait_for_function(s, timeout=settle_ms)
             for script in (_IMAGES_SETTLED, _MATHJAX_DONE, _WIDGETS_RENDERED, _QUIZZES_RENDERED)]
    waits.append(lambda: page.wait_for_load_state("networkidle", timeout=settle_ms))
    for wait in waits:
        try:
            wait()
        except PlaywrightTimeout:
            pass  # what did not finish is reported by _judge


def _judge(report: PageReport, found: dict, site: Path, base_url: str, url: str) -> None:
    report.images = len(found["images"])
    for img in found["images"]:
        if not img["ok"]:
            report.add("image", img["src"] or "(an <img> without src)")
    internal = [href for href in found["links"] if href.startswith(base_url)]
    report.internal_links = len(internal)
    page_file = local_file(site, base_url, url)
    for href in internal:
        target_url, fragment = urldefrag(href)
        target = local_file(site, base_url, target_url)
        if not target.is_file():
            report.add("link", href[len(base_url):])
        elif fragment and unquote(fragment) not in anchors(target):
            where = "" if target == page_file else target_url[len(base_url):]
            report.add("fragment", f"{where}#{fragment}")
    for text in found["docutils"]:
        report.add("docutils", text)
    for text in found["tracebacks"]:
        report.add("traceback", text)
    if found["math"] and not found["typeset"]:
        report.add("math", f"{found['math']} math elements, none typeset by MathJax")
    report.widget_views = len(found["views"])
    models = {}
    for text in found["states"]:
        models.update(json.loads(text).get("state", {}))
    for view in found["views"]:
        if not view["rendered"]:
            report.add("widget", f"widget view of model {view['model']} not rendered")
        elif saved_outputs(models, view["model"]) and not view["output_shown"]:
            report.add("widget", f"widget view of model {view['model']} shows none of the "
                       "outputs (such as an interact plot) saved in its Output widget")
    report.static_sliders = found["sliders"]
    report.quizzes = len(found["quizzes"])
    for quiz in found["quizzes"]:
        # jupyterquiz's default count, 1,000,000, means "all of them"
        if not quiz["shown"] or (quiz["expected"] < 1_000_000 and quiz["shown"] != quiz["expected"]):
            report.add("quiz", f"quiz {quiz['id'] or '(no id)'} shows {quiz['shown']} of "
                       f"{quiz['expected']} questions")


def saved_outputs(models: dict, model_id: str, seen: frozenset = frozenset()) -> bool:
    """Whether the saved widget ``model_id`` or any widget inside it is an Output widget with
    saved outputs (``models``: the ``state`` of the page's widget-state JSON)."""
    model = models.get(model_id)
    if model is None or model_id in seen:
        return False
    state = model.get("state", {})
    if model.get("model_name") == "OutputModel" and state.get("outputs"):
        return True
    children = state.get("children") or []
    return any(saved_outputs(models, child.removeprefix("IPY_MODEL_"), seen | {model_id})
               for child in children if isinstance(child, str))


# ---------------------------------------------------------------------------- kernel-free sliders
def move_static_slider(page, index: int = 0) -> list[str]:
    """Move the ``index``-th kernel-free slider (``lmcourse.widgets.static_slider``) of an open page.

    Sets its range input to the last frame, then steps back one frame with its "previous frame"
    button; returns the frame image's ``src`` and ``alt`` before and after each move (three
    strings each, as ``src | alt``).
    """
    box = page.locator("div.lmc-slider").nth(index)
    slider, image = box.locator("input[type=range]"), box.locator("img")
    page.wait_for_function("box => !!box.querySelector('img').getAttribute('src')",
                           arg=box.element_handle())

    def frame():
        return f"{image.get_attribute('src')} | {image.get_attribute('alt')}"

    frames = [frame()]
    slider.scroll_into_view_if_needed()
    slider.fill(slider.get_attribute("max"))
    frames.append(frame())
    box.get_by_role("button", name="previous frame").click()
    frames.append(frame())
    return frames


# ---------------------------------------------------------------------------- self-check quizzes
_ANSWER = """wrapper => {
  const choice = wrapper.querySelector('.MCButton');
  const fb = wrapper.querySelector('.Feedback');
  const expected = document.createElement('div');
  expected.innerHTML = choice.dataset.feedback || '';
  const clean = t => (t || '').trim().replace(/\\s+/g, ' ');
  return {choice: clean(choice.textContent), correct: choice.dataset.correct === 'true',
          verdict: fb.classList.contains('correct') ? 'correct'
                   : fb.classList.contains('incorrect') ? 'incorrect' : '',
          feedback: clean(fb.innerText), expected: clean(expected.textContent),
          visible: fb.getBoundingClientRect().height > 0};
}"""


def answer_quiz(page, index: int = 0) -> dict:
    """Click the first choice of the first multiple-choice question of the ``index``-th quiz of an
    open page (a quiz may open with a numeric question).

    Returns what the page shows afterwards: the ``choice`` clicked, whether it is ``correct``, the
    feedback's ``verdict`` (``"correct"``, ``"incorrect"`` or ``""`` for none), its text
    (``feedback``), the text it should show (``expected``, the choice's saved feedback), and
    whether it is ``visible``.
    """
    questions = page.locator(QUIZ).nth(index).locator(".Quiz").filter(has=page.locator(".MCButton"))
    if not questions.count():
        raise ValueError(f"quiz {index} has no multiple-choice question")
    question = questions.first
    question.scroll_into_view_if_needed()
    question.locator(".MCButton").first.click()
    return question.evaluate(_ANSWER)
