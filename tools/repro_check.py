"""Reproducibility: execute every chapter again and compare its text outputs with the book build's.

``make book`` / ``make book-strict`` execute each chapter notebook once (jupyter-cache)
and keep the executed copies in ``<build>/jupyter_execute/``. This script executes
each chapter listed in ``_toc.yml`` afresh (a new kernel, with nbclient, in the
chapter's folder, as the build does) and compares the *text* outputs cell by cell:
printed output (stdout and stderr streams), ``text/plain``, ``text/latex`` and
``text/markdown`` results, and errors. Images are not compared.

Lines that report timings (``1.2 s``, ``35 ms``, ``12.3it/s``, ``[00:01<00:02]``,
"elapsed") are ignored, and memory addresses (``0x7f...``) are masked; any other
difference fails the check with a unified diff. Two executions of a chapter must
give the same numbers: every random draw in the book goes through an explicit
seed or generator.

Usage: ``python tools/repro_check.py [BUILD_DIR] [--chapters chapters/01_x ...]``
(``make repro-check``, after the book is built).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import time
from pathlib import Path

import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent

TIMING = re.compile(
    r"\d+(?:\.\d+)?\s*(?:s|ms|µs|us|ns|sec|secs|seconds|min|mins|minutes)\b"
    r"|it/s|s/it|\[\d+:\d+|\d+:\d+<|elapsed|wall time|cpu time",
    re.IGNORECASE,
)
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
TEXT_MIMES = ("text/plain", "text/latex", "text/markdown")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks of ``_toc.yml``, in its order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(str(node["file"]))
            for key in ("root",):
                if key in node and isinstance(node[key], str):
                    files.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    paths = []
    for f in files:
        path = root / (f if f.endswith(".ipynb") else f + ".ipynb")
        if path.exists() and path not in paths:
            paths.append(path)
    return paths


def _clean(text: str) -> list[str]:
    # a carriage return rewrites the line (progress bars): keep what is finally shown
    lines = []
    text = ANSI.sub("", text).replace("\r\n", "\n")
    for line in text.split("\n")[: -1 if text.endswith("\n") else None]:
        line = line.rsplit("\r", 1)[-1]
        if TIMING.search(line):
            continue
        lines.append(ADDRESS.sub("0x…", line.rstrip()))
    return lines


def text_outputs(nb: nbformat.NotebookNode) -> list[str]:
    """Every code cell's text outputs as lines ``[cell N] ...``, timings removed."""
    out = []
    index = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        index += 1
        for output in cell.get("outputs", []):
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
                        lines += _clean(value if isinstance(value, str) else "".join(value))
            elif kind == "error":
                label = "error"
                lines = _clean(f"{output.get('ename')}: {output.get('evalue')}")
            else:
                continue
            out += [f"[cell {index}] {label}: {line}" for line in lines]
    return out


def execute(path: Path, timeout: int) -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="_build")
    parser.add_argument("--chapters", nargs="*", help="chapter paths (default: every notebook in _toc.yml)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    args = parser.parse_args(argv)
    build = (ROOT / args.build).resolve()
    chapters = [ROOT / (c if c.endswith(".ipynb") else c + ".ipynb") for c in args.chapters] if args.chapters else toc_notebooks()
    failures = 0
    for path in chapters:
        rel = path.relative_to(ROOT)
        built = build / "jupyter_execute" / rel
        if not built.exists():
            print(f"{rel}: no executed copy at {built} (build the book first: make book-strict)", file=sys.stderr)
            failures += 1
            continue
        expected = text_outputs(nbformat.read(built, as_version=4))
        nb, seconds = execute(path, args.timeout)
        got = text_outputs(nb)
        if got == expected:
            print(f"{str(rel):45s} same text outputs ({len(got)} lines), re-executed in {seconds:.1f} s")
        else:
            failures += 1
            print(f"{rel}: text outputs DIFFER between the book build and a fresh execution:", file=sys.stderr)
            sys.stderr.writelines(difflib.unified_diff(
                [line + "\n" for line in expected], [line + "\n" for line in got],
                fromfile=f"book build: {built.relative_to(ROOT) if built.is_relative_to(ROOT) else built}",
                tofile=f"fresh execution: {rel}", n=2))
    if failures:
        print(f"reproducibility check FAILED for {failures} of {len(chapters)} chapters", file=sys.stderr)
        return 1
    print(f"reproducibility check passed: {len(chapters)} chapters give the same text outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
