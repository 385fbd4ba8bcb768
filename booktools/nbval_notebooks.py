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
images and widget views are not compared (nbval's own skip list).

One thing is rewritten. An explorer (``ipywidgets.interactive``) shows its function's
figure and prints in an ``Output`` widget: nbclient, which made the record, files those
outputs in the widget's state (``nb.metadata.widgets``), while nbval, which knows no
widgets, sees them as the cell's own outputs, before the widget's view. So the export
puts each displayed widget's captured outputs into the cell, just before the view,
where nbval finds them and compares them like any other output. nbval runs the kernel
in the folder of the notebook it checks, here ``_build/nbval/chapters/`` rather than
``chapters/``: a chapter that read a file relative to its folder would fail there (none
does; data ship with packages or are made in temporary folders).

The module is also the pytest plugin of that run (``-p booktools.nbval_notebooks``),
which gives nbval the machinery's kernels and waits (``booktools.records``): its
kernels listen on IPC sockets instead of TCP ports (two nbval workers, and the
machinery's tests beside them, start kernels at once); its cell and kernel-start
limits are ``WAITS.cell`` and ``WAITS.kernel_start`` unless given on the command line;
and nbval's fixed 5-s wait for each output message of a finished cell, which a loaded
two-core machine exceeds after a long cell ("Timeout of 5 seconds exceeded waiting for
output"), is ``WAITS.nbval_output`` on every cell (:func:`pytest_collection_modifyitems`).

The folder ``--out`` is emptied first, so it holds exactly the chapters asked for
(default: every notebook of ``_toc.yml``). A chapter whose current code has no record
in the cache is an error: execute it first (``python -m booktools.execute book``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import nbformat

from booktools.records import (
    WAITS,
    IPCKernelManager,
    executed_in_build,
    expected_cost,
    outputs_below,
    widget_state,
)
from booktools.toc import ROOT, chapter_notebooks

SANITIZER = ROOT / "booktools" / "nbval_sanitize.cfg"
#: Seconds nbval waits for each output message of a finished cell (nbval's own: 5).
OUTPUT_TIMEOUT = WAITS.nbval_output
#: nbval's own defaults of the two limits the plugin sizes (``--nbval-cell-timeout``,
#: ``--nbval-kernel-startup-timeout``): a value still at its default was not given.
_NBVAL_DEFAULTS = {
    "nbval_cell_timeout": 2000,
    "nbval_kernel_startup_timeout": 60,
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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
        nb = lift_widget_outputs(executed_in_build(chapter, build))
        target = out / Path(chapter).resolve().relative_to(root.resolve())
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(target)
    return written


def lift_widget_outputs(
    nb: nbformat.NotebookNode,
) -> nbformat.NotebookNode:
    """``nb`` with the outputs each displayed widget's ``Output`` widgets hold put into the cell, before the view."""
    state = widget_state(nb)
    for cell in nb.cells:
        if cell.cell_type != "code" or not state:
            continue
        outputs = []
        for output in cell.outputs:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                outputs += [
                    nbformat.from_dict(o)
                    for o in outputs_below(state, view.get("model_id", ""))
                ]
            outputs.append(output)
        cell.outputs = outputs
    return nb


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


def pytest_configure(config) -> None:
    """pytest hook: nbval's kernels over IPC, and its limits from ``WAITS`` unless given."""
    import nbval.kernel

    # nbval.kernel.start_new_kernel builds its manager from this module-level name
    nbval.kernel.KernelManager = IPCKernelManager
    # its kernels inherit this: no progress bars, as in the execution it compares with
    os.environ["RNNLIB_PROGRESS"] = "0"
    sizes = {
        "nbval_cell_timeout": WAITS.cell,
        "nbval_kernel_startup_timeout": WAITS.kernel_start,
    }
    for name, default in _NBVAL_DEFAULTS.items():
        if getattr(config.option, name, None) == default:
            setattr(config.option, name, sizes[name])


def pytest_report_header(config) -> str:
    """pytest hook: say that this plugin is active and what it changes."""
    return (
        f"booktools.nbval_notebooks: kernels over IPC; nbval waits up to {OUTPUT_TIMEOUT} s "
        f"for a cell's outputs, {config.option.nbval_cell_timeout:g} s for a cell, "
        f"{config.option.nbval_kernel_startup_timeout:g} s for a kernel's start"
    )


def pytest_collection_modifyitems(items: list) -> None:
    """pytest hook: every nbval cell waits :data:`OUTPUT_TIMEOUT` s for its outputs."""
    from nbval.plugin import IPyNbCell

    for item in items:
        if isinstance(item, IPyNbCell):
            item.output_timeout = OUTPUT_TIMEOUT
    # the longest chapters first (pytest-xdist's --dist loadfile hands out files in this
    # order), as booktools.execute does; a stable sort keeps each file's cells in order
    items.sort(key=lambda item: -expected_cost(Path(str(getattr(item, "path", "")))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
