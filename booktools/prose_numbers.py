"""Numbers typed by hand in a chapter's prose: the check that keeps measured numbers glued.

A number in the text that comes from a computation ("slope -0.27", "within about 15%",
"0.37 of the bound") must be inserted from the executed cell with MyST-NB's glue
(`` {glue:text}`ch04_slope:.2f` ``), never typed: a typed number silently drifts from
what the cells compute. :func:`typed_numbers` scans the markdown cells of a chapter
notebook and returns every number that *looks measured* and is not allowed:

* looks measured: a decimal (``0.27``, ``-1.5e-3``), a percentage (``15%``), a power of
  ten with a negative exponent (``10^{-12}``), or an integer other than 0 and 1 after
  "about", "roughly", "approximately", "nearly", ``≈`` or ``\\approx``. Plain integers
  (sizes, counts, indices) are never flagged.
* allowed (the allow-list that keeps the check honest):

  - numbers of the text's structure: after "Lemma", "Theorem", "Prop.", "Sec.", "eq.",
    "Fig.", "Table", "Exercise", "Chapter", "Part", "arXiv", ... (lists such as
    "Lemmas 4.1, 4.2 and 4.4" included), the title number of a heading, the number
    after a directive name (```` ```{exercise} 9.1 ````);
  - :data:`PAPER_CONSTANTS`: constants of the two papers (and of the authors' code);
  - every number literal in the chapter's ``parameters`` cell (its sizes and settings);
  - numbers a chapter declares in a MyST comment (invisible in the book) with the reason,
    ``% typed numbers (the step sizes exercise 10.2 asks about): 0.9, 0.95``;
  - anything inside inline code, roles (``{glue:text}``, ``{cite:p}``, ...), code
    blocks, directive options, link targets and URLs.

The book build runs it on every chapter (``booktools.ledger``, a Sphinx extension: each
typed number is a warning, an error under ``-W``), and ``tests/test_ledger.py`` runs it
on the chapters too.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

__all__ = [
    "PAPER_CONSTANTS",
    "TypedNumber",
    "typed_numbers",
    "parameter_values",
    "declared_numbers",
]

#: Constants of the two papers (and of Miller & Hardt's code and blog) that prose may type.
PAPER_CONSTANTS: dict[float, str] = {
    0.5: "1/2: the fixed token coordinate, Lemma 4.4's slope -1/2, and other exact halves",
    0.25: "1/4: the bound on the sigmoid's derivative (M&H's LSTM condition)",
    1.75: "the exponent (i+1)^1.75 in P&G's Definition 2.1",
    1e4: "C* = 10^4 in P&G's Definition 2.1",
    0.395: "1 - ||f||_inf in Miller & Hardt's code (the LSTM radii)",
    0.155: "the W_f radius in Miller & Hardt's code",
    0.099: "the W_z radius in Miller & Hardt's code",
    0.605: "the forget-gate bound implied by Miller & Hardt's code",
    146.7: "M&H blog table: unstable tanh-RNN, Wikitext-2 test perplexity",
    143.5: "M&H blog table: stable tanh-RNN, Wikitext-2 test perplexity",
    92.3: "M&H blog table: unstable LSTM, Wikitext-2 test perplexity",
    95.1: "M&H blog table: stable LSTM, Wikitext-2 test perplexity",
}

_NUM = r"\d+(?:\.\d+)*[a-z]?"
_KEYWORDS = (
    r"Lemmas?|Theorems?|Thms?\.?|Propositions?|Props?\.?|Definitions?|Defs?\.?|Corollar(?:y|ies)"
    r"|Remarks?|Claims?|Sections?|Secs?\.?|§+|[Ee]qs?\.?|[Ee]quations?|Figs?\.?|Figures?|Tables?"
    r"|[Ee]xercises?|[Cc]hapters?|[Cc]hs?\.|Parts?|Appendix|Appendices|Algorithms?|Steps?"
    r"|arXiv|version|v|Python|Jupyter Book|PyTorch|torch|Sphinx|ICLR|NeurIPS|ICML"
    r"|\{[\w:.-]+\}"  # a directive name: ```{exercise} 9.1
)
_STRUCTURE = re.compile(
    rf"(?:(?<![\w])(?:{_KEYWORDS}))[ \t~]*\(?{_NUM}\)?"
    rf"(?:\s*(?:,|and|or|to|&|–|—|-)\s*\(?{_NUM}\)?)*"
)
_HEADING_NUMBER = re.compile(r"^(#+\s*)(\d+(?:\.\d+)*\.?)", re.M)
_MASKS = [
    re.compile(r"\{[\w:.-]+\}`[^`]*`"),  # roles, glue included
    re.compile(r"``[^`]+``|`[^`\n]+`"),  # inline code
    re.compile(r"\]\([^)\s]*\)"),  # link targets
    re.compile(r"https?://\S+"),  # URLs
    re.compile(r"<[^>\n]+>"),  # HTML tags
    re.compile(r"^\([\w:.-]+\)=\s*$", re.M),  # MyST labels
]

# (pattern, marked): a "marked" number (approximate, or a percentage) reads as a measurement
# even when it equals a value of the parameters cell, so only paper constants and declared
# numbers excuse it.
_CANDIDATES = [
    # a number given as approximate: about 15, ≈ 0.27, \approx 10^{10}
    (
        re.compile(
            r"(?:(?<![\w])(?:about|roughly|approximately|nearly|around)\s+|≈\s*|\\approx\s*)"
            r"\$?\s*[-−]?\s*(?P<num>\d+(?:\.\d+)?(?:[eE][-+−]?\d+)?(?:\s*\^\s*\{?\s*[-−]?\d+\s*\}?)?)(?![\w.]|\.\d)"
        ),
        True,
    ),
    # a percentage: 15%, 15 %, 15\%, 15 percent
    (
        re.compile(
            r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s*(?:\\?%|percent\b)"
        ),
        True,
    ),
    # a power of ten with a negative exponent: 10^{-12}, 10^-3
    (
        re.compile(
            r"(?<![\w.])(?P<num>10\s*\^\s*\{?\s*[-−]\s*\d+\s*\}?)"
        ),
        False,
    ),
    # a decimal or a number in scientific notation: 0.27, 1.5e-3, 3e-4
    (
        re.compile(
            r"(?<![\w.])(?P<num>\d+\.\d+(?:[eE][-+−]?\d+)?|\d+[eE][-+−]?\d+)(?![\w]|\.\d)"
        ),
        False,
    ),
]
_DECLARED = re.compile(
    r"^%\s*typed numbers\s*\((?P<reason>[^)]*)\)\s*:\s*(?P<nums>.*)$",
    re.M | re.I,
)


@dataclass(frozen=True)
class TypedNumber:
    """A number typed in the prose of markdown cell ``cell`` (0-based index), line ``line``."""

    cell: int
    line: int
    number: str
    context: str

    def __str__(self) -> str:
        return f"cell {self.cell}, line {self.line}: {self.number!r} in \u201c{self.context}\u201d"


def _value(text: str) -> float | None:
    text = (
        text.replace("−", "-")
        .replace(" ", "")
        .replace("{", "")
        .replace("}", "")
    )
    if "^" in text:
        base, _, exponent = text.partition("^")
        try:
            return abs(float(base)) ** int(exponent)
        except (ValueError, OverflowError):
            return None
    try:
        return abs(float(text))
    except ValueError:
        return None


def _is_in(value: float, allowed) -> bool:
    return any(
        math.isclose(value, abs(a), rel_tol=1e-9, abs_tol=0.0)
        for a in allowed
    )


def parameter_values(nb: dict) -> set[float]:
    """Every number literal (absolute value) in the code cells tagged ``parameters``."""
    values: set[float] = set()
    for cell in nb.get("cells", []):
        if cell.get(
            "cell_type"
        ) != "code" or "parameters" not in cell.get(
            "metadata", {}
        ).get("tags", []):
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, (int, float))
                and not isinstance(node.value, bool)
            ):
                values.add(abs(float(node.value)))
    return values


def declared_numbers(nb: dict) -> tuple[set[float], list[str]]:
    """Numbers declared in ``% typed numbers (reason): ...`` comments, and the malformed comments."""
    values: set[float] = set()
    problems: list[str] = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        for match in _DECLARED.finditer(_source(cell)):
            if not match["reason"].strip():
                problems.append(
                    f"cell {i}: a `% typed numbers (...)` comment must give its reason"
                )
                continue
            for item in re.split(
                r"[,;\s]+", match["nums"].strip()
            ):
                value = _value(item) if item else None
                if item and value is None:
                    problems.append(
                        f"cell {i}: {item!r} in a `% typed numbers` comment is not a number"
                    )
                elif value is not None:
                    values.add(value)
    return values, problems


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def _mask(text: str) -> str:
    """The prose of one markdown cell with everything that is not prose blanked (same offsets)."""
    out: list[str] = []
    stack: list[
        tuple[str, str]
    ] = []  # open fences: (fence, "code" | "directive")
    in_options = False
    for line in text.split("\n"):
        stripped = line.strip()
        blank = " " * len(line)
        if (
            stack
            and stripped
            and set(stripped) == {stack[-1][0][0]}
            and len(stripped) >= len(stack[-1][0])
        ):
            stack.pop()  # a closing fence
            out.append(blank)
            in_options = False
            continue
        if stack and stack[-1][1] == "code":
            out.append(blank)
            continue
        opener = re.match(
            r"(`{3,}|~{3,}|:{3,})\s*(\{[^}]*\})?", stripped
        )
        if opener:
            if opener.group(
                2
            ):  # a directive: its content is prose, its options are not
                stack.append((opener.group(1), "directive"))
                in_options = True
                out.append(line)
            else:  # a code block: skipped up to its closing fence
                stack.append((opener.group(1), "code"))
                out.append(blank)
            continue
        if in_options and re.match(r":[\w-]+:", stripped):
            out.append(blank)
            continue
        in_options = False
        if stripped.startswith("%"):  # a MyST comment
            out.append(blank)
            continue
        out.append(line)
    masked = "\n".join(out)
    for pattern in _MASKS:
        masked = pattern.sub(_blank, masked)
    masked = _HEADING_NUMBER.sub(
        lambda m: m.group(1) + " " * len(m.group(2)), masked
    )
    return _STRUCTURE.sub(_blank, masked)


def typed_numbers(
    nb: dict, extra_allowed: dict[float, str] | None = None
) -> list[TypedNumber]:
    """The measured-looking numbers typed in the markdown cells of notebook ``nb`` (a dict).

    ``extra_allowed`` adds values to :data:`PAPER_CONSTANTS` (e.g. for a test). Malformed
    ``% typed numbers`` comments are reported as entries with ``number`` set to the comment.
    """
    constants = set(PAPER_CONSTANTS) | set(extra_allowed or {})
    declared, problems = declared_numbers(nb)
    excused_marked = constants | declared
    excused = excused_marked | parameter_values(nb)
    found = [
        TypedNumber(-1, 0, p, "malformed typed-numbers comment")
        for p in problems
    ]
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        text = _source(cell)
        masked = _mask(text)
        hits: dict[int, tuple[str, int]] = {}
        taken: set[int] = set()
        for pattern, marked in _CANDIDATES:
            for match in pattern.finditer(masked):
                start, end = match.start("num"), match.end("num")
                if any(pos in taken for pos in range(start, end)):
                    continue
                taken.update(range(start, end))
                value = _value(match["num"])
                if value is None or _is_in(
                    value, excused_marked if marked else excused
                ):
                    continue
                if (
                    marked
                    and value in (0.0, 1.0)
                    and "%" not in masked[end : end + 3]
                ):
                    continue
                hits[start] = (match["num"], end)
        for start in sorted(hits):
            number, end = hits[start]
            line = text.count("\n", 0, start) + 1
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_text = text[
                line_start : line_end
                if line_end != -1
                else len(text)
            ]
            col = start - line_start
            context = line_text[
                max(0, col - 40) : col + len(number) + 40
            ].strip()
            found.append(TypedNumber(i, line, number, context))
    return found
