"""Sphinx extension: HTML that assistive technology reads correctly.

docutils marks each bibliography entry with the DPub role ``doc-biblioentry`` inside a
``role="list"`` container; ARIA 1.2 deprecated that role, so the list has no list items and screen
readers (and axe-core's ``aria-required-children`` rule) find a broken list. Each entry becomes a
``listitem``.
"""


def entries_as_list_items(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app):
    app.connect("html-page-context", entries_as_list_items)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
