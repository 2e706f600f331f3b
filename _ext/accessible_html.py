"""Sphinx extension: HTML that assistive technology reads correctly.

docutils marks each bibliography entry with the DPub role ``doc-biblioentry`` inside a
``role="list"`` container; ARIA 1.2 deprecated that role, so the list has no list items and screen
readers (and axe-core's ``aria-required-children`` rule) find a broken list. Each entry becomes a
``listitem``.

A small stylesheet (``static/accessible.css``) raises the contrast of what the theme leaves below
WCAG AA: links on the tinted background of admonitions in light mode, and the controls of a
kernel-free slider in dark mode.
"""
from pathlib import Path

STATIC = Path(__file__).with_name("static")


def entries_as_list_items(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


def add_static_path(app):
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("builder-inited", add_static_path)
    app.add_css_file("accessible.css")
    app.connect("html-page-context", entries_as_list_items)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
