"""Per-chapter execution times of the book build, checked against the time budget.

The book build executes every chapter notebook once and records, in its
jupyter-cache (``<build>/.jupyter_cache``), how many seconds each execution took
(the same numbers the appendix page ``chapters/execution_times.md`` shows with
myst-nb's ``{nb-exec-table}``), how much CPU time the kernel used and how many
chapters ran at once (``booktools.execute``, whose docstring says how the time is
measured when chapters run in parallel). This module looks up the cache record that matches
each chapter of ``_toc.yml`` *as it is now* (jupyter-cache matches on the code
cells), prints a table, and fails if a chapter took ``--chapter-limit`` seconds or
more (90 s: CONTRIBUTING.md's budget on 2 CPU cores) or the whole book
``--total-limit`` seconds or more (600 s).

Usage: ``python -m booktools.exec_times [BUILD_DIR]`` (``make exec-times``, after the book is built).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from jupyter_cache import get_cache

from booktools.toc import ROOT, chapter_notebooks


def execution_records(
    build: Path, root: Path = ROOT
) -> dict[str, dict | None]:
    """The timing data of the build's execution of each chapter (None: no matching cache record).

    Each dict has ``execution_seconds`` (wall time), and, for executions made by
    ``booktools.execute``, ``cpu_seconds`` and ``jobs``.
    """
    cache = get_cache(str(build / ".jupyter_cache"))
    records: dict[str, dict | None] = {}
    for path in chapter_notebooks(root):
        rel = str(path.relative_to(root))
        try:
            record = cache.match_cache_notebook(
                nbformat.read(path, as_version=4)
            )
        except KeyError:
            records[rel] = None
            continue
        records[rel] = dict(record.data)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="_build")
    parser.add_argument("--chapter-limit", type=float, default=90.0)
    parser.add_argument("--total-limit", type=float, default=600.0)
    args = parser.parse_args(argv)
    build = (ROOT / args.build).resolve()
    if not (build / ".jupyter_cache").is_dir():
        print(
            f"no execution cache under {build} (build the book first: make book-strict)",
            file=sys.stderr,
        )
        return 1
    records = execution_records(build)
    problems = []
    print(f"| {'chapter':45s} | seconds | CPU s | at once |")
    print(f"|{'-' * 47}|--------:|------:|--------:|")
    total = 0.0
    for rel, data in records.items():
        if data is None or data.get("execution_seconds") is None:
            print(f"| {rel:45s} | {'-':>7s} | {'-':>5s} | {'-':>7s} |")
            problems.append(
                f"{rel}: no execution record matches the notebook (was the book built?)"
            )
            continue
        seconds, cpu, jobs = (
            data["execution_seconds"],
            data.get("cpu_seconds"),
            data.get("jobs"),
        )
        total += seconds
        cpu_shown = "-" if cpu is None else f"{cpu:.1f}"
        print(
            f"| {rel:45s} | {seconds:7.1f} | {cpu_shown:>5s} | {jobs or '-':>7} |"
        )
        if seconds >= args.chapter_limit:
            problems.append(
                f"{rel}: {seconds:.1f} s >= {args.chapter_limit:g} s per chapter"
            )
    print(f"| {'total':45s} | {total:7.1f} |       |         |")
    if total >= args.total_limit:
        problems.append(
            f"the whole book: {total:.1f} s >= {args.total_limit:g} s"
        )
    if problems:
        print(
            "execution time check FAILED:\n  " + "\n  ".join(problems),
            file=sys.stderr,
        )
        return 1
    print(
        f"execution times within budget: every chapter < {args.chapter_limit:g} s, book < {args.total_limit:g} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
