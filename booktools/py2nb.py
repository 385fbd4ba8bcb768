"""Authoring aid: turn a jupytext py:percent source into a chapter notebook without outputs.

    python -m booktools.py2nb SOURCE.py chapters/NN_name.ipynb

Needs jupytext (``pip install jupytext``; not a dependency of the book). The
.ipynb in chapters/ is the source of truth; this only helps write it.
"""

from __future__ import annotations

import argparse
import json
import sys


def convert(src: str, dst: str) -> None:
    """Write the notebook of the py:percent file ``src`` to ``dst``, without outputs."""
    import jupytext  # an authoring aid's dependency, not the book's

    nb = jupytext.read(src)
    nb.metadata = {
        "kernelspec": {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        },
        "language_info": {"name": "python"},
    }
    for cell in nb.cells:
        cell.metadata.pop("lines_to_next_cell", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    text = json.dumps(
        json.loads(jupytext.writes(nb, fmt="ipynb")),
        indent=1,
        ensure_ascii=False,
    )
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "source", help="a jupytext py:percent file"
    )
    parser.add_argument("notebook", help="the .ipynb to write")
    args = parser.parse_args(argv)
    convert(args.source, args.notebook)
    return 0


if __name__ == "__main__":
    sys.exit(main())
