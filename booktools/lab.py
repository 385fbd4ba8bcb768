"""Read the chapters in JupyterLab with their MyST rendered: ``make lab``.

JupyterLab with jupyterlab-myst (pinned in requirements.txt) renders the chapters'
directives, roles and math; the macros come from each notebook's first cell
(:mod:`booktools.macros`). One thing it cannot render is MyST-NB's
``{glue:text}`key:fmt` `` (it shows ``key:fmt``), so the notebooks are opened as
*reader copies* in ``lab/`` (gitignored), where each such role is rewritten into the
inline expression ``{eval}`rnnlib.notebook.glued("key", "fmt")` ``: jupyterlab-myst
evaluates it in the kernel, and it shows the number once the cell that glues it
has run ("(computed when the chapter runs)" before). Nothing else changes.

    python -m booktools.lab                 # reader copies of chapters/ into lab/, then jupyter lab
    python -m booktools.lab --student       # the same for the student edition (student/chapters/)
    python -m booktools.lab --prepare-only  # write the copies, do not start JupyterLab
    python -m booktools.lab --portable      # the portable copies instead (booktools.portable)

``--portable`` opens the *portable copies* (``portable/book/`` or ``portable/student/``,
:mod:`booktools.portable`): plain Markdown with the build's numbers, what a front end
without MyST (Colab, VS Code, classic Jupyter) shows. A copy newer than its chapter is
kept, as a reader copy is.

A reader copy is rewritten from its source only when the source is newer, so work
saved in ``lab/`` stays until the chapter itself changes.

Threads: the server, and so every kernel it starts, gets ``OMP_NUM_THREADS=1`` and
``MKL_NUM_THREADS=1`` unless the caller's environment sets them (the book's thread
policy, ARCHITECTURE.md "Threads: one policy"). The chapters' tensors are small, and
torch's default of one thread per core makes them slower, not faster: idle threads
spin between the many small operations and use every core of the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from booktools.toc import ROOT, chapter_notebooks

#: The environment variables that set a kernel's threads (one each unless the caller sets them).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")

#: ``{glue:text}`key` `` or ``{glue:text}`key:fmt` `` (also ``{glue}``), as MyST-NB spells them.
GLUE_ROLE = re.compile(
    r"\{glue(?::text)?\}`(?P<key>[A-Za-z0-9_]+)(?::(?P<fmt>[^`]*))?`"
)


def eval_roles(text: str) -> str:
    """Rewrite every glue role of a markdown text into an ``{eval}`` inline expression."""

    def repl(match: re.Match) -> str:
        key, fmt = match["key"], match["fmt"] or ""
        return f'{{eval}}`rnnlib.notebook.glued("{key}", "{fmt}")`'

    return GLUE_ROLE.sub(repl, text)


def reader_notebook(
    nb: nbformat.NotebookNode,
) -> nbformat.NotebookNode:
    """The reader copy of a notebook: its glue roles as inline expressions (a new notebook)."""
    out = nbformat.from_dict(nb)  # a deep copy
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = eval_roles(cell.source)
    return out


def prepare(source: Path, target: Path) -> list[Path]:
    """Write the reader copy of every notebook in ``source`` into ``target``; return the copies."""
    source, target = Path(source), Path(target)
    # the book's chapters (booktools.toc), as they are in ``source`` (the chapters or
    # the student edition's copies of them)
    notebooks = [
        source / nb.name for nb in chapter_notebooks() if (source / nb.name).exists()
    ]
    if not notebooks:
        raise FileNotFoundError(f"no notebooks in {source}")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        copy = target / path.name
        if not copy.exists() or copy.stat().st_mtime < path.stat().st_mtime:
            nb = nbformat.read(path, as_version=4)
            nbformat.write(reader_notebook(nb), copy)
        written.append(copy)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--student",
        action="store_true",
        help="the student edition (make student-notebooks first)",
    )
    parser.add_argument(
        "--prepare-only",
        action="store_true",
        help="write the reader copies and exit",
    )
    parser.add_argument(
        "--portable",
        action="store_true",
        help="open the portable copies (plain Markdown, booktools.portable)",
    )
    parser.add_argument(
        "lab_args",
        nargs="*",
        help="passed on to jupyter lab",
    )
    args = parser.parse_args(argv)
    source = ROOT / "student" / "chapters" if args.student else ROOT / "chapters"
    target = ROOT / "lab" / ("student" if args.student else "chapters")
    try:
        if args.portable:
            edition = "student" if args.student else "book"
            target = ROOT / "portable" / edition
            # the portable copies (booktools.portable), a reader's newer work kept
            command = [sys.executable, "-m", "booktools.portable", "--edition"]
            done = subprocess.run([*command, edition, "--keep-newer"], check=False)
            if done.returncode:
                return done.returncode  # portable said why
            source_root = ROOT / "student" if args.student else ROOT
            copies = [target / p.name for p in chapter_notebooks(source_root)]
        else:
            copies = prepare(source, target)
    except FileNotFoundError as exc:
        hint = " (run make student-notebooks first)" if args.student else ""
        print(f"lab: {exc}{hint}", file=sys.stderr)
        return 2
    print(f"lab: {len(copies)} reader copies in {target}")
    if args.prepare_only:
        return 0
    jupyter = Path(sys.executable).with_name("jupyter")
    env = dict(os.environ)
    # one thread per kernel unless the caller says otherwise (the
    # book's thread policy; torch reads these when it starts)
    for name in THREAD_VARIABLES:
        env.setdefault(name, "1")
    # the kernels import rnnlib from this checkout
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p
    )
    os.execve(
        str(jupyter),
        [str(jupyter), "lab", str(target), *args.lab_args],
        env,
    )
    return 0  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main())
