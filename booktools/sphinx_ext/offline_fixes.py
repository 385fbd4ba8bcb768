"""Sphinx extension ``booktools.sphinx_ext.offline_fixes`` (``sphinx.extra_extensions`` in ``_config.yml``).

Fixes found by the offline browser check (``booktools.browser_check``):

* **duplicate scripts.** With Sphinx 7.4, the inline configuration scripts that
  sphinx-thebe and sphinx-togglebutton add (``const THEBE_JS_URL = ...``) and
  myst-nb's widget scripts can appear twice in a page; a second top-level
  ``const`` is a ``SyntaxError`` in the console. Each page keeps the first copy of
  every script (same file, same attributes, same body).
* **status glyphs.** myst-nb's ``{nb-exec-table}`` marks each notebook with the
  emoji ``✅``/``❌``, which shows as an empty box where no emoji font is installed
  (the CI browser); the table says ``ok``/``failed`` instead.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

_STATUS_WORDS = {"✅": "ok", "❌": "failed"}


def _dedupe_scripts(
    app,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree,
) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        filename = getattr(js, "filename", js) or ""  # inline scripts: None or ""
        attributes = getattr(js, "attributes", {}) or {}
        key = (
            str(filename),
            tuple(sorted((k, str(v)) for k, v in attributes.items())),
        )
        if key not in seen:
            seen.add(key)
            kept.append(js)
    context["script_files"] = kept


def _status_words(app, doctree, docname: str) -> None:
    for table in doctree.findall(nodes.table):
        if (
            "Run Time (s)" not in table.astext()
        ):  # only myst-nb's execution statistics table
            continue
        for text in list(table.findall(nodes.Text)):
            if str(text) in _STATUS_WORDS:
                text.parent.replace(text, nodes.Text(_STATUS_WORDS[str(text)]))


def setup(app) -> dict[str, Any]:
    # after the extensions that add scripts per page (myst-nb's widget scripts)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("doctree-resolved", _status_words)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
