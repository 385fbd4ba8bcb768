"""Per-chapter execution times of the book build: a report in ``make test``, a budget in ``make bench``.

The book build executes every chapter notebook once and records, in its
jupyter-cache (``<build>/.jupyter_cache``), how many seconds each execution took
(wall time), how much CPU time the kernel used, where the wall time went (kernel
start, first answer, cells, shutdown), how many chapters ran at once, and the CPU
seconds of the budget's reference workload measured in the same run
(``booktools.execute``, ``booktools.records``). This module looks up the cache record
that matches each chapter of ``_toc.yml`` *as it is now* (jupyter-cache matches on the
code cells) and prints a table: wall, CPU, CPU in reference units, and the budget in
those units.

``make test`` runs it without ``--enforce``: it reports, and warns about a chapter
whose wall time is far above its CPU time (a stall: :func:`booktools.records.is_stall`)
or that is over budget, but it never fails on a time (a test command must pass on a
busy machine: ``booktools.records`` says why). It fails only when a chapter has no
execution record. ``make bench`` runs it with ``--enforce``: then a chapter at or over
``budget.CHAPTER_LIMIT_S`` reference-machine seconds (in reference units) or a book at
or over ``budget.BOOK_LIMIT_S`` fails.

Usage: ``python -m booktools.exec_times [--enforce] [BUILD_DIR]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from jupyter_cache import get_cache

from booktools import records as budget
from booktools.records import is_stall
from booktools.toc import ROOT, chapter_notebooks


def execution_records(build: Path, root: Path = ROOT) -> dict[str, dict | None]:
    """The timing data of the build's execution of each chapter (None: no matching cache record).

    Each dict has ``execution_seconds`` (wall time), and, for executions made by
    ``booktools.execute``, ``cpu_seconds`` and ``jobs``.
    """
    cache = get_cache(str(build / ".jupyter_cache"))
    records: dict[str, dict | None] = {}
    for path in chapter_notebooks(root):
        rel = str(path.relative_to(root))
        try:
            record = cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            records[rel] = None
            continue
        records[rel] = dict(record.data)
    return records


def budget_seconds(data: dict) -> float:
    """The time the budget is checked on: the kernel's CPU seconds if recorded, else the wall time."""
    cpu = data.get("cpu_seconds")
    return cpu if cpu is not None else data["execution_seconds"]


def reference_units(data: dict) -> float | None:
    """A record's budget time in units of the reference workload of its run (None: not measured)."""
    ref = data.get("reference_cpu_seconds")
    return budget_seconds(data) / ref if ref else None


def check(
    records: dict[str, dict | None],
    chapter_limit: float = budget.CHAPTER_LIMIT_S,
    total_limit: float = budget.BOOK_LIMIT_S,
) -> tuple[list[str], list[str], list[str]]:
    """The table's lines, the missing records, and the budget and stall warnings.

    ``chapter_limit`` and ``total_limit`` are reference-machine seconds; a chapter is
    compared in reference units where its run measured the reference workload, else
    in its own seconds.
    """
    unit = budget.limit_units(chapter_limit)
    lines = [
        f"| {'chapter':45s} | wall s | CPU s | x ref | budget | phases (start, info, cells, end) |",
        f"|{'-' * 47}|-------:|------:|------:|-------:|{'-' * 34}|",
    ]
    missing: list[str] = []
    warnings: list[str] = []
    total = wall = units_total = 0.0
    all_units = True
    for rel, data in records.items():
        if data is None or data.get("execution_seconds") is None:
            lines.append(
                f"| {rel:45s} | {'-':>6s} | {'-':>5s} | {'-':>5s} | {'-':>6s} | {'':32s} |"
            )
            missing.append(
                f"{rel}: no execution record matches the notebook (was the book built?)"
            )
            continue
        cpu = data.get("cpu_seconds")
        seconds = budget_seconds(data)
        units = reference_units(data)
        total += seconds
        wall += data["execution_seconds"]
        if units is None:
            all_units = False
        else:
            units_total += units
        phases = data.get("phases") or {}
        shown_phases = ", ".join(
            f"{phases[k]:.1f}"
            for k in (
                "kernel_start",
                "kernel_info",
                "cells",
                "shutdown",
            )
            if k in phases
        )
        lines.append(
            f"| {rel:45s} | {data['execution_seconds']:6.1f} | "
            f"{'-' if cpu is None else f'{cpu:.1f}':>5s} | "
            f"{'-' if units is None else f'{units:.1f}':>5s} | {unit:6.1f} | {shown_phases:32s} |"
        )
        if units is not None and units >= unit:
            warnings.append(
                f"{rel}: {units:.1f} x the reference workload >= the budget of {unit:.1f} "
                f"({chapter_limit:g} s on the reference machine)"
            )
        elif units is None and seconds >= chapter_limit:
            warnings.append(
                f"{rel}: {seconds:.1f} s >= {chapter_limit:g} s per chapter (no reference measured)"
            )
        if is_stall(data["execution_seconds"], cpu):
            warnings.append(
                f"{rel}: a stall? {data['execution_seconds']:.1f} s of wall time for {cpu:.1f} s "
                "of CPU (more than 3 x CPU + 10 s; the phases column says where)"
            )
    book_unit = budget.limit_units(total_limit)
    lines.append(
        f"| {'total':45s} | {wall:6.1f} | {total:5.1f} | "
        f"{f'{units_total:.1f}' if all_units else '-':>5s} | {book_unit:6.1f} | {'':32s} |"
    )
    if all_units and units_total >= book_unit:
        warnings.append(
            f"the whole book: {units_total:.1f} x the reference >= {book_unit:.1f}"
        )
    elif not all_units and total >= total_limit:
        warnings.append(f"the whole book: {total:.1f} s >= {total_limit:g} s")
    return lines, missing, warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="_build")
    parser.add_argument(
        "--enforce",
        action="store_true",
        help="fail when a chapter or the book is over budget (make bench); default: report",
    )
    args = parser.parse_args(argv)
    build = (ROOT / args.build).resolve()
    if not (build / ".jupyter_cache").is_dir():
        print(
            f"no execution cache under {build} (build the book first: make book)",
            file=sys.stderr,
        )
        return 1
    lines, missing, warnings = check(execution_records(build))
    print("\n".join(lines))
    print(
        f"x ref: kernel CPU seconds / CPU seconds of the reference workload measured in the same run "
        f"(booktools.records); budget: {budget.CHAPTER_LIMIT_S:g} s per chapter and "
        f"{budget.BOOK_LIMIT_S:g} s for the book on the reference machine, in those units"
    )
    for line in warnings:
        print(f"WARNING: {line}", file=sys.stderr)
    if missing:
        print(
            "execution records missing:\n  " + "\n  ".join(missing),
            file=sys.stderr,
        )
        return 1
    if args.enforce and any("x the reference" in w or " s >= " in w for w in warnings):
        print(
            "execution time budget exceeded (see the warnings above)",
            file=sys.stderr,
        )
        return 1
    print(
        "execution times reported"
        + (
            " and within budget"
            if args.enforce
            else " (make bench enforces the budget)"
        )
    )
    return 0


def table_rows(records: dict[str, dict | None]) -> list[list[str]]:
    """The appendix table: chapter name, wall s, CPU s, x reference, budget, status (``{exec-times}``)."""
    unit = budget.limit_units(budget.CHAPTER_LIMIT_S)
    rows = []
    for rel, data in records.items():
        name = Path(rel).stem  # the chapter's name: the column stays narrow
        if data is None or data.get("execution_seconds") is None:
            rows.append([name, "-", "-", "-", f"{unit:.0f}", "no record"])
            continue
        cpu = data.get("cpu_seconds")
        units = reference_units(data)
        note = []
        if units is not None and units >= unit:
            note.append("over budget")
        if is_stall(data["execution_seconds"], cpu):
            note.append("waited (stall)")
        rows.append(
            [
                name,
                f"{data['execution_seconds']:.1f}",
                "-" if cpu is None else f"{cpu:.1f}",
                "-" if units is None else f"{units:.1f}",
                f"{unit:.0f}",
                ", ".join(note) or "ok",
            ]
        )
    return rows


def setup(app):
    """Sphinx extension: the ``{exec-times}`` directive, this build's table (the "Execution times" page)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class ExecTimes(Directive):
        has_content = False

        def run(self):
            src = Path(app.srcdir)
            rows = table_rows(execution_records(src / "_build", root=src))
            header = [
                "chapter",
                "wall s",
                "CPU s",
                "× ref.",
                "budget",
                "status",
            ]
            table = nodes.table(classes=["exec-times"])
            group = nodes.tgroup(cols=len(header))
            table += group
            # the chapter's name gets the room; the numbers need a few characters each
            for width in (5, 1, 1, 1, 1, 2):
                group += nodes.colspec(colwidth=width)
            head, body = nodes.thead(), nodes.tbody()
            for cells, parent in [(header, head)] + [(r, body) for r in rows]:
                row = nodes.row()
                for text in cells:
                    entry = nodes.entry()
                    entry += nodes.paragraph(text=text)
                    row += entry
                parent += row
            group += head
            group += body
            return [table]

    app.add_directive("exec-times", ExecTimes)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }


if __name__ == "__main__":
    sys.exit(main())
