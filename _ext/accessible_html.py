"""Sphinx extension: HTML that assistive technology reads correctly.

docutils marks each bibliography entry with the DPub role ``doc-biblioentry`` inside a
``role="list"`` container; ARIA 1.2 deprecated that role, so the list has no list items and screen
readers (and axe-core's ``aria-required-children`` rule) find a broken list. Each entry becomes a
``listitem``.

The theme's sidebar gives a page with sections of its own (a chapter split into section notebooks)
a disclosure toggle, a ``<summary>`` holding only a decorative chevron, so a screen reader announces
an unnamed control (axe-core's ``summary-name`` rule). Each such toggle is named after its page:
"Sections of 6. Attention".

A small stylesheet (``static/accessible.css``) raises the contrast of what the theme leaves below
WCAG AA: links on the tinted background of admonitions in light mode, and the controls of a
kernel-free slider in dark mode.
"""
from pathlib import Path

from bs4 import BeautifulSoup

STATIC = Path(__file__).with_name("static")


def entries_as_list_items(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


def named_toc_toggles(app, pagename, templatename, context, doctree):
    """Wrap the theme's sidebar generator so that every unnamed toggle gets an ``aria-label``."""
    generate = context.get("generate_toctree_html")
    if generate is None:
        return

    def generate_named(*args, **kwargs):
        soup = BeautifulSoup(str(generate(*args, **kwargs)), "html.parser")
        for summary in soup.find_all("summary"):
            item = summary.find_parent("li")
            link = item.find("a", recursive=False) if item is not None else None
            if link is not None and not summary.get_text(strip=True) and not summary.get("aria-label"):
                summary["aria-label"] = "Sections of " + link.get_text(" ", strip=True)
        return str(soup)

    context["generate_toctree_html"] = generate_named


def add_static_path(app):
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("builder-inited", add_static_path)
    app.add_css_file("accessible.css")
    app.connect("html-page-context", entries_as_list_items)
    # after the theme has put its generate_toctree_html into the context (default priority 500)
    app.connect("html-page-context", named_toc_toggles, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
