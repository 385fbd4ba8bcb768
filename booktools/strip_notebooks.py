"""Strip chapter notebooks of outputs and execution counts, as they are stored (CONTRIBUTING.md).

    python -m booktools.strip_notebooks                  # every chapter of _toc.yml, in place
    python -m booktools.strip_notebooks NB.ipynb ...     # these notebooks
    python -m booktools.strip_notebooks --check          # list the notebooks that hold outputs; exit 1 if any

Removes every code cell's outputs and execution count, and the per-cell execution
timings (``metadata.execution``) that Jupyter may record; the cells' other metadata (tags)
and the notebook's metadata are kept. A notebook that is already stripped is not rewritten.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from booktools.toc import chapter_notebooks


def strip(nb: nbformat.NotebookNode) -> bool:
    """Strip ``nb`` in place; return whether anything was removed."""
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if (
            cell.get("outputs")
            or cell.get("execution_count") is not None
            or "execution" in cell.metadata
        ):
            changed = True
        cell.outputs = []
        cell.execution_count = None
        cell.metadata.pop("execution", None)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="default: the chapters of _toc.yml",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only list the notebooks that hold outputs",
    )
    args = parser.parse_args(argv)
    dirty = []
    for path in args.notebooks or chapter_notebooks():
        nb = nbformat.read(path, as_version=4)
        if strip(nb):
            dirty.append(path)
            if not args.check:
                nbformat.write(nb, path)
    verb = "hold outputs" if args.check else "stripped"
    for path in dirty:
        print(f"{path}: {verb}")
    return 1 if args.check and dirty else 0


if __name__ == "__main__":
    sys.exit(main())
