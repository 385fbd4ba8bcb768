"""The lint of a chapter notebook's source: measured numbers typed in its prose, asserts outside the ledger.

``python -m booktools.chapter_lint [NOTEBOOK ...]`` (default: the chapters of ``_toc.yml``)
prints one ``path:cell N:line L: CODE ...`` per finding and exits 1 if there is any;
``tests/test_ledger.py`` runs it on every chapter (``make unit``). Two codes:

* ``TN``, a typed number: a number in a markdown cell that reads as measured, i.e. given as
  approximate (after "about", "roughly", "approximately", "nearly", "around", ``≈`` or
  ``\\approx``; 0 and 1 excepted) or as a percentage (``15%``, ``15\\%``, "15 percent"). It
  must be glued from the cell that computes it (`` {glue:text}`ch04_slope:.2f` ``): a typed
  number silently drifts from what the cells compute. A number that reads so but is not a
  measurement (a closed form, a threshold an exercise asks about, a published value) is
  declared in the chapter, with the reason, in a MyST comment the book does not show:
  ``% typed numbers (closed forms of section 8.3): 1.155, 2.83``. Code blocks, inline code,
  roles, link targets, URLs and HTML tags are not prose. Bare decimals ("a slope of
  -0.27") are not flagged: over the history of the chapters, the earlier check that also
  flagged them (and every number of the text's structure it then had to allow) raised 35
  distinct findings, of which 8 were measured numbers and 27 closed forms, thresholds or
  parameters that had to be declared; these two rules raise 22, and keep 6 of the 8.
* ``AS``, an unmarked assert: a chapter's claim is checked with ``claims.check`` (which
  asserts and leaves the ledger's record); any other ``assert`` checks the implementation
  and says so with the comment ``# implementation check`` on one of its lines.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "IMPLEMENTATION_MARK",
    "Finding",
    "typed_numbers",
    "unmarked_asserts",
    "main",
]

IMPLEMENTATION_MARK = "# implementation check"
_NUMBER = r"\d+(?:\.\d+)?(?:[eE][-+−]?\d+)?"
_CANDIDATES = (
    # given as approximate: about 15, ≈ 0.27, \approx 10^{10} (not a
    # term of a formula: \approx 2 + L)
    re.compile(
        r"(?:(?<![\w])(?i:about|roughly|approximately|nearly|around)\s+|≈\s*|\\approx\s*)"
        rf"\$?\s*[-−]?\s*(?P<num>{_NUMBER}(?:\s*\^\s*\{{?\s*[-−]?\d+\s*\}}?)?)(?!\w|\.\d|\s*[+*/])"
    ),
    # a percentage: 15%, 15 %, 15\%, 15 percent
    re.compile(r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s*(?:\\?%|percent\b)"),
)
_NOT_PROSE = (
    re.compile(r"\{[\w:.-]+\}`[^`]*`"),  # roles, glue included
    re.compile(r"``[^`]+``|`[^`\n]+`"),  # inline code
    re.compile(r"\]\([^)\s]*\)"),  # link targets
    re.compile(r"https?://\S+"),  # URLs
    re.compile(r"<[^>\n]+>"),  # HTML tags
)
_DECLARED = re.compile(
    r"^%\s*typed numbers\s*\((?P<reason>[^)]*)\)\s*:\s*(?P<nums>.*)$",
    re.M | re.I,
)


class Finding(NamedTuple):
    """One finding: code cell or markdown cell ``cell`` (0-based), ``line`` in it (1-based)."""

    cell: int
    line: int
    code: str  # "TN" (typed number) or "AS" (unmarked assert)
    what: str  # the number, the comment, or the assert's first line
    message: str

    def __str__(self) -> str:
        return f"cell {self.cell}:line {self.line}: {self.code} {self.message}"


def _source(cell: Mapping) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _mask(text: str) -> str:
    """The prose of a markdown cell, all else blanked (same offsets): code blocks,
    directive options, MyST comments (a directive's content is prose), then :data:`_NOT_PROSE`."""
    out: list[str] = []
    # the open fences, (fence, is code); in a directive's options
    fences: list[tuple[str, bool]] = []
    options = False
    for line in text.split("\n"):
        fence = re.match(r"\s*(`{3,}|~{3,}|:{3,})\s*(.*?)\s*$", line)
        top = fences[-1] if fences else ("", False)
        if (
            fence
            and not fence[2]
            and fences
            and fence[1][0] == top[0][0]
            and len(fence[1]) >= len(top[0])
        ):
            fences.pop()  # a closing fence
            blank, options = True, False
        elif top[1] or fence:  # in code, or an opening fence
            if fence and not top[1]:
                fences.append((fence[1], not fence[2].startswith("{")))
                options = not fences[-1][1]
            blank = True
        else:
            options = options and bool(re.match(r"\s*:[\w-]+:", line))
            blank = options or line.lstrip().startswith("%")
        out.append(" " * len(line) if blank else line)
    masked = "\n".join(out)
    for pattern in _NOT_PROSE:
        masked = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), masked)
    return masked


def _value(text: str) -> float | None:
    """The absolute value of a number as typed: ``0.27``, ``-1.5e-3``, ``10^{-12}``."""
    text = re.sub(r"[\s{}]", "", text.replace("−", "-"))
    base, _, exponent = text.partition("^")
    try:
        return abs(float(base)) ** (int(exponent) if exponent else 1)
    except (ValueError, OverflowError):
        return None


def _declared(nb: Mapping) -> tuple[list[float], list[Finding]]:
    values: list[float] = []
    problems: list[Finding] = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        text = _source(cell)
        for match in _DECLARED.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            items = [item for item in re.split(r"[,;\s]+", match["nums"]) if item]
            bad = [item for item in items if _value(item) is None]
            if not match["reason"].strip() or bad:
                problems.append(
                    Finding(
                        i,
                        line,
                        "TN",
                        match.group(0),
                        f"`{match.group(0)}` needs its reason and numbers "
                        "only: % typed numbers (reason): 1.155, 2.83",
                    )
                )
            values += [v for v in map(_value, items) if v is not None]
    return values, problems


def typed_numbers(nb: Mapping) -> list[Finding]:
    """The numbers typed in the prose of notebook ``nb`` (a dict) that read as measured (code ``TN``)."""
    declared, found = _declared(nb)
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        text = _source(cell)
        masked = _mask(text)
        hits: dict[int, tuple[str, int]] = {}
        for pattern in _CANDIDATES:
            for match in pattern.finditer(masked):
                start, end = match.span("num")
                value = _value(match["num"])
                if (
                    start in hits
                    or value is None
                    or any(abs(value - d) <= 1e-9 * d for d in declared)
                    or (value in (0.0, 1.0) and "%" not in masked[end : end + 3])
                ):
                    continue
                hits[start] = (match["num"], end)
        for start, (number, end) in sorted(hits.items()):
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_text = text[line_start : None if line_end == -1 else line_end]
            col = start - line_start
            context = line_text[max(0, col - 40) : end - line_start + 40]
            found.append(
                Finding(
                    i,
                    text.count("\n", 0, start) + 1,
                    "TN",
                    number,
                    f"typed number {number!r} in \u201c{context.strip()}\u201d: "
                    "glue it from the cell that computes it, or declare it "
                    "(% typed numbers (reason): ...)",
                )
            )
    return found


def unmarked_asserts(nb: Mapping) -> list[Finding]:
    """``assert`` statements of the code cells without ``# implementation check`` (code ``AS``)."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        lines = _source(cell).split("\n")
        try:  # IPython magics and shell escapes are not Python: blanked
            tree = ast.parse(
                "\n".join("" if re.match(r"\s*[%!]", line) else line for line in lines)
            )
            spans = sorted(
                (n.lineno, n.end_lineno or n.lineno)
                for n in ast.walk(tree)
                if isinstance(n, ast.Assert)
            )
        except SyntaxError:  # the lines that start with assert
            spans = [
                (k + 1, k + 1)
                for k, line in enumerate(lines)
                if re.match(r"\s*assert\b", line)
            ]
        found += [
            Finding(
                i,
                first,
                "AS",
                lines[first - 1].strip(),
                f"`{lines[first - 1].strip()}` is neither claims.check(...) "
                f"nor marked '{IMPLEMENTATION_MARK}'",
            )
            for first, last in spans
            if not any(IMPLEMENTATION_MARK in line for line in lines[first - 1 : last])
        ]
    return found


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    from booktools.toc import chapter_notebooks

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="default: the chapters of _toc.yml",
    )
    findings = 0
    for path in parser.parse_args(argv).notebooks or chapter_notebooks():
        nb = json.loads(path.read_text(encoding="utf8"))
        for finding in typed_numbers(nb) + unmarked_asserts(nb):
            print(f"{path}:{finding}")
            findings += 1
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
