"""Sphinx extension ``booktools.sphinx_ext.layout``: outputs and docstrings wrap at the column.

Adds ``static/booktools.css`` (shipped with this package) to every page: a cell's
outputs and rnnlib's docstrings on the API page wrap at the article's column, as
outputs do in Jupyter, instead of showing a horizontal scroll bar. Code cells are not
wrapped; they are formatted to the column's width by ruff. ``booktools.browser_check``
fails on anything still wider than its place.

Also one search box per page: with pydata-sphinx-theme 0.17 the book theme's header bar
came back with a second, persistent search field above the sidebar's (and over the
book's title); ``navbar_persistent = []`` removes that header, as sphinx-book-theme
intends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent / "static"
CSS = "booktools.css"


def _add_static_path(app) -> None:
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))


def _one_search_box(app, config) -> None:
    options = config.html_theme_options
    if isinstance(options, dict):
        options.setdefault("navbar_persistent", [])


def setup(app) -> dict[str, Any]:
    app.connect("config-inited", _one_search_box)
    app.connect("builder-inited", _add_static_path)
    app.add_css_file(CSS)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
