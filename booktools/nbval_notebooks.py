"""The build's executions of the chapters, written out as notebooks for nbval to check.

nbval is the book's notebook check (``make nbval``, part of ``make test``): it executes
each chapter once more, in a fresh kernel, and compares every text output of every cell
with the execution the book shows, reporting each differing or failing cell as a pytest
failure with the two outputs. The book's execution of a chapter is its record in the
build's jupyter-cache (``_build/.jupyter_cache``, written by ``booktools.execute book``);
this module writes that record as a notebook with its outputs and execution counts to
``_build/nbval/<path in the book>``, the reference nbval reads::

    python -m booktools.nbval_notebooks [--build _build] [--out _build/nbval] [NOTEBOOK ...]
    pytest --nbval --nbval-current-env --nbval-sanitize-with booktools/nbval_sanitize.cfg _build/nbval

What legitimately differs between two executions (timing lines, addresses, widget model
ids, temporary folders) is masked by the sanitizer file ``booktools/nbval_sanitize.cfg``;
images and widget views are not compared (nbval's own skip list). nbval runs the kernel
in the folder of the notebook it checks, here ``_build/nbval/chapters/`` rather than
``chapters/``: a chapter that read a file relative to its folder would fail there (none
does; data ship with packages or are made in temporary folders).

The folder ``--out`` is emptied first, so it holds exactly the chapters asked for
(default: every notebook of ``_toc.yml``). A chapter whose current code has no record
in the cache is an error: execute it first (``python -m booktools.execute book``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

from booktools.execute import executed_in_build
from booktools.toc import ROOT, chapter_notebooks

SANITIZER = ROOT / "booktools" / "nbval_sanitize.cfg"


def export(
    chapters: list[Path],
    build: Path,
    out: Path,
    root: Path = ROOT,
) -> list[Path]:
    """Write the build's execution of each chapter to ``out/<path relative to root>``; return the paths.

    Raises ``FileNotFoundError`` (no cache in ``build``) or ``LookupError`` (a chapter
    whose current code has no execution in it), naming what is missing.
    """
    root, build, out = Path(root), Path(build), Path(out)
    shutil.rmtree(out, ignore_errors=True)
    written = []
    for chapter in chapters:
        nb = executed_in_build(chapter, build)
        target = out / Path(chapter).resolve().relative_to(
            root.resolve()
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(target)
    return written


def _chosen(names: list[str], root: Path) -> list[Path]:
    """The chapters of ``_toc.yml`` named by ``names`` (paths, with or without ``.ipynb``)."""
    chapters = chapter_notebooks(root)
    if not names:
        return chapters
    by_path = {c.resolve(): c for c in chapters}
    chosen = []
    for name in names:
        path = (root / name).with_suffix(".ipynb").resolve()
        if path not in by_path:
            raise LookupError(
                f"{name}: not a notebook of _toc.yml (nbval checks the book's chapters;"
                f" for another notebook: pytest --nbval-lax {name})"
            )
        chosen.append(by_path[path])
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        help="chapters (default: every notebook of _toc.yml)",
    )
    parser.add_argument("--build", default="_build")
    parser.add_argument("--out", default="_build/nbval")
    args = parser.parse_args(argv)
    try:
        written = export(
            _chosen(args.notebooks, ROOT),
            ROOT / args.build,
            ROOT / args.out,
        )
    except (FileNotFoundError, LookupError) as exc:
        print(f"nbval_notebooks: {exc}", file=sys.stderr)
        return 1
    print(
        f"{len(written)} executed chapter(s) from {args.build}/.jupyter_cache written to {args.out}/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
