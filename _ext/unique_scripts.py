"""Sphinx extension: every page lists each of its scripts once.

sphinx-thebe (which Jupyter Book 1.x always loads, although this book does not use thebe) adds its
inline configuration script twice, and the second copy fails in the browser because it redeclares
the same ``const`` names. Dropping exact repeats from each page's script list removes the error.
"""


def drop_repeated_scripts(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        # a script is its file (None or "" for an inline one) and its attributes (an inline one's body)
        key = (getattr(script, "filename", None) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", drop_repeated_scripts, priority=900)  # after every other extension
    return {"parallel_read_safe": True, "parallel_write_safe": True}
