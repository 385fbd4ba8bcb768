"""The book's math macros, from one source, for the book and for the notebooks.

The one source is ``_config.yml``: ``sphinx.config.mathjax3_config.tex.macros``
(the book's MathJax reads it there). A notebook front end (JupyterLab, Notebook,
Colab, VS Code) does not read ``_config.yml``, so every chapter notebook carries,
as its first cell, one hidden markdown cell generated from it: the macros as MyST
front matter (``math:``, read by jupyterlab-myst for the whole notebook), followed
by the same macros as ``\\def`` definitions inside one ``$...$`` (for MathJax front
ends, where they typeset to nothing and hold for every later cell of the page). The cell is
tagged ``remove-cell`` (the book does not show it) and marked
``metadata["rnnlib_macros"] = true``.

    python -m booktools.macros            # write the cell into every chapter of _toc.yml
    python -m booktools.macros --check    # list the notebooks whose cell is missing or stale; exit 1 if any

``tests/test_notebook_front_ends.py`` runs the check, so a macro added to ``_config.yml``
and not to the notebooks (or the other way round) fails the tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from booktools.markup import MACRO_KEY, MACRO_TAGS, book_macros, is_macro_cell
from booktools.toc import chapter_notebooks


def definitions(macros: dict[str, str | list]) -> list[str]:
    """One TeX ``\\def`` per macro (``\\def\\norm#1{...}``), in the order of ``_config.yml``."""
    lines = []
    for name, body in macros.items():
        if isinstance(body, list):
            text, n_args = body
            params = "".join(f"#{i + 1}" for i in range(n_args))
            lines.append(f"\\def\\{name}{params}{{{text}}}")
        else:
            lines.append(f"\\def\\{name}{{{body}}}")
    return lines


def macro_source(macros: dict[str, str | list]) -> str:
    """The markdown of the macro cell: MyST front matter ``math:``, then the same macros as ``\\def``.

    jupyterlab-myst (KaTeX) reads the macros of the notebook's front matter (its first
    cell) and would refuse a ``\\newcommand`` of a macro so defined; a plain Markdown front
    end with MathJax (Notebook, VS Code, Colab) shows the front matter as text and takes
    the ``\\def`` definitions, which KaTeX accepts silently.
    """
    yaml_lines = []
    for name, body in macros.items():
        text = body[0] if isinstance(body, list) else body
        quoted = text.replace("'", "''")
        yaml_lines.append(f"  '\\{name}': '{quoted}'")
    return (
        "---\nmath:\n"
        + "\n".join(yaml_lines)
        + "\n---\n$"
        + " ".join(definitions(macros))
        + "$"
    )


def sync(nb: nbformat.NotebookNode, macros: dict) -> bool:
    """Put the current macro cell first in ``nb`` (the title may use a macro); return whether ``nb`` changed."""
    source = macro_source(macros)
    found = [i for i, c in enumerate(nb.cells) if is_macro_cell(c)]
    for extra in reversed(found[1:]):
        del nb.cells[extra]
    changed = len(found) > 1
    if found:
        cell = nb.cells[found[0]]
        tags = list(cell.metadata.get("tags", []))
        if cell.source != source or any(t not in tags for t in MACRO_TAGS):
            cell.source = source
            cell.metadata["tags"] = tags + [t for t in MACRO_TAGS if t not in tags]
            changed = True
        return changed
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata["tags"] = list(MACRO_TAGS)
    cell.metadata[MACRO_KEY] = True
    cell["id"] = "rnnlib-macros"
    nb.cells.insert(0, cell)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="default: the chapters of _toc.yml",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only list the notebooks whose macro cell is missing or stale",
    )
    args = parser.parse_args(argv)
    macros = book_macros()
    stale = []
    for path in args.notebooks or chapter_notebooks():
        nb = nbformat.read(path, as_version=4)
        if sync(nb, macros):
            stale.append(path)
            if not args.check:
                nbformat.write(nb, path)
    for path in stale:
        print(f"{path}: macro cell {'stale' if args.check else 'written'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
