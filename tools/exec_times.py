"""Per-chapter execution times of the book build, checked against the time budget.

The book build executes every chapter notebook once and records, in its
jupyter-cache (``<build>/.jupyter_cache``), how many seconds each execution took
(the same numbers the appendix page ``chapters/execution_times.md`` shows with
myst-nb's ``{nb-exec-table}``). This script looks up the cache record that matches
each chapter of ``_toc.yml`` *as it is now* (jupyter-cache matches on the code
cells), prints a table, and fails if a chapter took ``--chapter-limit`` seconds or
more (90 s: CONTRIBUTING.md's budget on 2 CPU cores) or the whole book
``--total-limit`` seconds or more (600 s).

Usage: ``python tools/exec_times.py [BUILD_DIR]`` (``make exec-times``, after the book is built).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from jupyter_cache import get_cache

sys.path.insert(0, str(Path(__file__).resolve().parent))
from repro_check import ROOT, toc_notebooks  # noqa: E402


def execution_seconds(build: Path) -> dict[str, float | None]:
    """Seconds of the build's execution of each chapter (None: no matching cache record)."""
    cache = get_cache(str(build / ".jupyter_cache"))
    times: dict[str, float | None] = {}
    for path in toc_notebooks():
        rel = str(path.relative_to(ROOT))
        try:
            record = cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            times[rel] = None
            continue
        times[rel] = record.data.get("execution_seconds")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="_build")
    parser.add_argument("--chapter-limit", type=float, default=90.0)
    parser.add_argument("--total-limit", type=float, default=600.0)
    args = parser.parse_args(argv)
    build = (ROOT / args.build).resolve()
    if not (build / ".jupyter_cache").is_dir():
        print(f"no execution cache under {build} (build the book first: make book-strict)", file=sys.stderr)
        return 1
    times = execution_seconds(build)
    problems = []
    print(f"| {'chapter':45s} | seconds |")
    print(f"|{'-' * 47}|--------:|")
    for rel, seconds in times.items():
        shown = "-" if seconds is None else f"{seconds:.1f}"
        print(f"| {rel:45s} | {shown:>7s} |")
        if seconds is None:
            problems.append(f"{rel}: no execution record matches the notebook (was the book built?)")
        elif seconds >= args.chapter_limit:
            problems.append(f"{rel}: {seconds:.1f} s >= {args.chapter_limit:g} s per chapter")
    total = sum(s for s in times.values() if s is not None)
    print(f"| {'total':45s} | {total:7.1f} |")
    if total >= args.total_limit:
        problems.append(f"the whole book: {total:.1f} s >= {args.total_limit:g} s")
    if problems:
        print("execution time check FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"execution times within budget: every chapter < {args.chapter_limit:g} s, book < {args.total_limit:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
