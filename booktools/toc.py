"""The pages of the book, as ``_toc.yml`` lists them: the one place that walks the table of contents.

Every tool that needs "the chapters" asks this module (the student edition, the
executor, the reproducibility and timing checks, the browser check, the tests), so
a chapter added to ``_toc.yml`` is covered by all of them, and a notebook that is not
in ``_toc.yml`` is not part of the book.

``ROOT`` is the repository that holds this package (installed editable with
``pip install -e .``, as ``make env`` does); every function takes another ``root``,
e.g. the student edition's ``student/``.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

#: The book's root: the folder with ``_config.yml`` and ``_toc.yml``.
ROOT = Path(__file__).resolve().parent.parent

#: Extensions a ``file:`` entry of ``_toc.yml`` may stand for, in Jupyter Book's order.
SOURCE_SUFFIXES = (".ipynb", ".md")


def read_toc(root: Path = ROOT) -> dict:
    """The parsed ``_toc.yml`` of ``root``; ``FileNotFoundError`` naming ``root`` if it has none."""
    path = Path(root) / "_toc.yml"
    if not path.is_file():
        raise FileNotFoundError(
            f"root: {str(root)!r} has no _toc.yml (is it the book's root?)"
        )
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _entries(node) -> list[str]:
    """The ``root`` and ``file`` entries of a _toc.yml node, depth first, in order."""
    found: list[str] = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if isinstance(node.get(key), str):
                found.append(node[key])
        for value in node.values():
            if isinstance(value, (dict, list)):
                found += _entries(value)
    elif isinstance(node, list):
        for item in node:
            found += _entries(item)
    return found


def toc_entries(root: Path = ROOT) -> list[str]:
    """Every document of ``_toc.yml`` (root first), as written there (``chapters/01_x``), without repeats."""
    return list(dict.fromkeys(_entries(read_toc(root))))


def source_of(entry: str, root: Path = ROOT) -> Path | None:
    """The source file of a _toc.yml entry (``.ipynb`` or ``.md``), or None if there is none."""
    base = Path(root) / entry
    candidates = (
        [base]
        if base.suffix in SOURCE_SUFFIXES
        else [base.with_name(base.name + s) for s in SOURCE_SUFFIXES]
    )
    return next((p for p in candidates if p.is_file()), None)


def pages(root: Path = ROOT) -> list[Path]:
    """The source file of every page of the book, in the order of ``_toc.yml`` (missing ones left out)."""
    return [
        path
        for path in (source_of(e, root) for e in toc_entries(root))
        if path is not None
    ]


def missing_pages(root: Path = ROOT) -> list[str]:
    """The entries of ``_toc.yml`` that name no existing source file."""
    return [e for e in toc_entries(root) if source_of(e, root) is None]


def chapter_notebooks(root: Path = ROOT) -> list[Path]:
    """The executable chapters: the notebooks of ``_toc.yml``, in its order."""
    return [path for path in pages(root) if path.suffix == ".ipynb"]


def without(toc: dict, drop: tuple[str, ...]) -> dict:
    """A copy of a parsed ``_toc.yml`` without the entries whose ``file`` is in ``drop``."""

    def prune(node):
        if isinstance(node, list):
            return [
                prune(n)
                for n in node
                if not (isinstance(n, dict) and n.get("file") in drop)
            ]
        if isinstance(node, dict):
            return {k: prune(v) for k, v in node.items()}
        return copy.deepcopy(node)

    return prune(toc)
