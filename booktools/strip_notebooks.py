"""Strip chapter notebooks of outputs and execution counts, as they are stored (CONTRIBUTING.md).

    python -m booktools.strip_notebooks                  # every chapter of _toc.yml, in place
    python -m booktools.strip_notebooks NB.ipynb ...     # these notebooks
    python -m booktools.strip_notebooks --check          # list the notebooks that hold outputs; exit 1 if any

The stripping is nbstripout's (outputs, execution counts, and volatile metadata such as
``metadata.execution`` timings; ``--check`` is ``nbstripout --verify``). This wrapper adds
only what nbstripout cannot know: the default list of notebooks (the chapters of
``_toc.yml``) and the book's one setting, ``--keep-id``: cell ids are kept, because
nbstripout's default renumbers them, which would rewrite every chapter's cells and the ids
that ``booktools.macros`` and ``booktools.student_edition`` give their cells.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from booktools.toc import chapter_notebooks

#: nbstripout's options for this book (also those of its git filter, CONTRIBUTING.md).
NBSTRIPOUT_FLAGS = ("--keep-id",)


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
        help="only list the notebooks that hold outputs (nbstripout --verify)",
    )
    args = parser.parse_args(argv)
    paths = args.notebooks or chapter_notebooks()
    command = [
        sys.executable,
        "-m",
        "nbstripout",
        *NBSTRIPOUT_FLAGS,
    ]
    if args.check:
        command.append("--verify")
    return subprocess.run([*command, *map(str, paths)]).returncode


if __name__ == "__main__":
    sys.exit(main())
