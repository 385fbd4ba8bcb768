"""Reproducibility: a second, independent execution of every chapter gives the book build's text outputs.

The book build shows one execution of each chapter (``booktools.execute book``,
cached by jupyter-cache in ``<build>/.jupyter_cache``, where the build reads it).
``booktools.execute repro`` executes each chapter of ``_toc.yml`` once more, in a
fresh kernel in the chapter's folder, into ``<build>/repro/``; this module compares
the two executions' *text* outputs cell by cell:
printed output (stdout and stderr streams), ``text/plain``, ``text/latex`` and
``text/markdown`` results, and errors. Images are not compared.

Lines that report timings (``1.2 s``, ``35 ms``, ``12.3it/s``, ``[00:01<00:02]``,
"elapsed") are ignored, and memory addresses (``0x7f...``) are masked; any other
difference fails the check with a unified diff. Two executions of a chapter must
give the same numbers: every random draw in the book goes through an explicit
seed or generator.

This one comparison is also the check that every chapter runs without error outside
the build (what nbval did before, with a third execution). Chapters whose
independent execution is missing or out of date (``booktools.execute.repro_is_current``)
are executed first, ``--jobs`` at a time.

Usage: ``python -m booktools.repro_check [BUILD_DIR] [--chapters chapters/01_x ...]``
(``make repro-check``, after the book is built).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

import nbformat

from booktools.execute import (
    STAMP_KEY,
    execute,
    executed_in_build,
    repro_is_current,
    repro_path,
)
from booktools.toc import ROOT, chapter_notebooks

TIMING = re.compile(
    r"\d+(?:\.\d+)?\s*(?:s|ms|µs|us|ns|sec|secs|seconds|min|mins|minutes)\b"
    r"|it/s|s/it|\[\d+:\d+|\d+:\d+<|elapsed|wall time|cpu time",
    re.IGNORECASE,
)
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
TEXT_MIMES = ("text/plain", "text/latex", "text/markdown")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _clean(text: str) -> list[str]:
    # a carriage return rewrites the line (progress bars): keep what is finally shown
    lines = []
    text = ANSI.sub("", text).replace("\r\n", "\n")
    for line in text.split("\n")[
        : -1 if text.endswith("\n") else None
    ]:
        line = line.rsplit("\r", 1)[-1]
        if TIMING.search(line):
            continue
        lines.append(ADDRESS.sub("0x…", line.rstrip()))
    return lines


def _coalesce_streams(outputs: list) -> list:
    """Consecutive outputs of the same stream joined into one.

    A kernel may deliver one ``print`` in several stream messages (how it
    splits them depends on timing), and one execution may store them apart
    where another stores them together: only the joined text is compared.
    """
    merged: list = []
    for output in outputs:
        if (
            output.get("output_type") == "stream"
            and merged
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == output.get("name")
        ):
            merged[-1] = {
                **merged[-1],
                "text": merged[-1].get("text", "")
                + output.get("text", ""),
            }
        else:
            merged.append(output)
    return merged


def text_outputs(nb: nbformat.NotebookNode) -> list[str]:
    """Every code cell's text outputs as lines ``[cell N] ...``, timings removed."""
    out = []
    index = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        index += 1
        for output in _coalesce_streams(cell.get("outputs", [])):
            kind = output.get("output_type")
            if kind == "stream":
                lines = _clean(output.get("text", ""))
                label = output.get("name", "stream")
            elif kind in ("execute_result", "display_data"):
                data = output.get("data", {})
                lines, label = [], kind
                for mime in TEXT_MIMES:
                    if mime in data:
                        value = data[mime]
                        lines += _clean(
                            value
                            if isinstance(value, str)
                            else "".join(value)
                        )
            elif kind == "error":
                label = "error"
                lines = _clean(
                    f"{output.get('ename')}: {output.get('evalue')}"
                )
            else:
                continue
            out += [
                f"[cell {index}] {label}: {line}" for line in lines
            ]
    return out


def compare(
    chapter: Path, build: Path, root: Path = ROOT
) -> list[str]:
    """The unified diff of ``chapter``'s text outputs, build vs independent execution (empty: the same)."""
    fresh = repro_path(chapter, root, build)
    try:
        built = executed_in_build(chapter, build)
    except (FileNotFoundError, LookupError) as exc:
        return [f"{exc}\n"]
    if not fresh.exists():
        return [
            f"no independent execution at {fresh} (python -m booktools.execute repro)\n"
        ]
    expected = text_outputs(built)
    got = text_outputs(nbformat.read(fresh, as_version=4))
    shown = (
        fresh.relative_to(root)
        if fresh.is_relative_to(root)
        else fresh
    )
    return list(
        difflib.unified_diff(
            [line + "\n" for line in expected],
            [line + "\n" for line in got],
            fromfile=f"book build: the execution cache in {build.name}/.jupyter_cache",
            tofile=f"independent execution: {shown}",
            n=2,
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0]
    )
    parser.add_argument("build", nargs="?", default="_build")
    parser.add_argument(
        "--chapters",
        nargs="*",
        help="chapter paths (default: every notebook in _toc.yml)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="executions at once, for the missing ones",
    )
    args = parser.parse_args(argv)
    build = (ROOT / args.build).resolve()
    chapters = chapter_notebooks()
    if args.chapters:
        chosen = {
            (
                ROOT
                / (c if c.endswith(".ipynb") else c + ".ipynb")
            ).resolve()
            for c in args.chapters
        }
        chapters = [c for c in chapters if c.resolve() in chosen]
    if not all(repro_is_current(c, ROOT, build) for c in chapters):
        results = execute(["repro"], jobs=args.jobs)
        if any(r.nb is None for r in results):
            print(
                "reproducibility check FAILED: a chapter does not run outside the build (above)",
                file=sys.stderr,
            )
            return 1
    failures = 0
    for path in chapters:
        rel = path.relative_to(ROOT)
        diff = compare(path, build)
        if not diff:
            fresh = nbformat.read(
                repro_path(path, ROOT, build), as_version=4
            )
            seconds = fresh.metadata.get(STAMP_KEY, {}).get(
                "execution_seconds", float("nan")
            )
            lines = len(text_outputs(fresh))
            print(
                f"{str(rel):45s} same text outputs ({lines} lines); independent execution took {seconds:.1f} s"
            )
        else:
            failures += 1
            print(
                f"{rel}: text outputs DIFFER between the book build and an independent execution:",
                file=sys.stderr,
            )
            sys.stderr.writelines(diff)
    if failures:
        print(
            f"reproducibility check FAILED for {failures} of {len(chapters)} chapters",
            file=sys.stderr,
        )
        return 1
    print(
        f"reproducibility check passed: {len(chapters)} chapters give the same text outputs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
