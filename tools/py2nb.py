"""Authoring aid: turn a jupytext py:percent source into a chapter notebook without outputs.

    python tools/py2nb.py SOURCE.py chapters/NN_name.ipynb

Needs jupytext (``pip install jupytext``; not a dependency of the book). The
.ipynb in chapters/ is the source of truth; this only helps write it.
"""

from __future__ import annotations

import json
import sys

import jupytext


def convert(src: str, dst: str) -> None:
    nb = jupytext.read(src)
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    for cell in nb.cells:
        cell.metadata.pop("lines_to_next_cell", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    text = json.dumps(json.loads(jupytext.writes(nb, fmt="ipynb")), indent=1, ensure_ascii=False)
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")


if __name__ == "__main__":
    convert(sys.argv[1], sys.argv[2])
