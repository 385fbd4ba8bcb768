"""What the book's sources mean: the exercise markup, the metadata keys, the macros, ASCII formulas.

One of the machinery's shared modules, with :mod:`booktools.toc` (where the sources
are), :mod:`booktools.records` (what their executions left) and, for the grader,
:mod:`booktools.cell_deps`: no tool imports another tool (``tests/test_architecture.py``),
so a convention that two tools read lives here, once.

* **Exercises** (CONTRIBUTING.md, "Exercises"): an ``{exercise}`` directive labelled
  ``ex-N-M`` states exercise N.M; its solution code sits between ``### BEGIN SOLUTION``
  and ``### END SOLUTION`` (nbgrader's markers) and its solution prose between
  ``{solution-start}`` and ``{solution-end}``. :func:`find_exercises` reads an edition's
  exercises, :func:`student_notebook` writes one chapter's student edition (the one walk
  of :func:`transform`: the solution blocks replaced by stubs, the prose gates removed, an
  answer cell after each prose exercise).
* **Cell metadata keys**: :data:`EXERCISE_KEY` (a stub cell), :data:`ANSWER_KEY` (an
  answer cell), :data:`INSTALL_KEY` (the student edition's install cell),
  :data:`GRADER_KEY` (a cell the grader inserted), :data:`MACRO_KEY` (the macro cell).
* **Macros**: :func:`book_macros`, the math macros of ``_config.yml``.
* **ASCII formulas** in docstrings and claims (``E|h^(l)|^2 = sum_{j <= l} |x^(j)|^2``):
  :func:`is_formula`, :func:`ascii_to_tex`, :func:`formula_spans`, used by the API pages'
  docstring hook, the ledger, the browser check and the portable copies.

This module imports neither rnnlib nor torch.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from booktools.toc import ROOT

#: Cell metadata key of a cell the grader inserted after an exercise (its checker).
GRADER_KEY = "rnnlib_grader"


BEGIN = "### BEGIN SOLUTION"


END = "### END SOLUTION"


#: Tags given to every stub cell of the student edition.
STUB_TAGS = ("raises-exception", "remove-output")


#: Cell metadata key holding the exercise number ("N.M") of a stub cell.
EXERCISE_KEY = "rnnlib_exercise"


#: Cell metadata key holding the exercise number ("N.M") of an answer cell (prose exercises).
ANSWER_KEY = "rnnlib_answer"


#: The text of an answer cell that the student has not touched.
ANSWER_PLACEHOLDER = "Replace this line by your answer (Markdown; math as in the text, between dollar signs)."


#: Points per exercise (the gradebook's weights; chapters/instructor_guide.md).
GRADING_CONFIG = Path(__file__).resolve().parent / "grading.yml"


DIRECTIVE = re.compile(
    r"^\s*(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[a-z-]+)\}\s*(?P<arg>.*?)\s*$"
)


LABEL = re.compile(r"^\s*:label:\s*(?P<label>\S+)\s*$")


EXERCISE_LABEL = re.compile(r"^ex-(?P<chapter>\d+)-(?P<number>\d+)$")


_CHECKER_CALL = re.compile(r"check_exercise_(?P<chapter>\d+)_(?P<number>\d+)\s*\(")


def exercise_points(
    config: Path = GRADING_CONFIG,
) -> dict[str, float]:
    """The points of each exercise ("N.M" -> points) from the grading configuration."""
    data = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    points = data.get("points") or {}
    return {str(k): float(v) for k, v in points.items()}


class MarkupError(ValueError):
    """The exercise markup of a notebook does not follow the convention of CONTRIBUTING.md."""


def exercise_number(label: str, where: str = "") -> str:
    """``"ex-1-2"`` -> ``"1.2"``; raises :class:`MarkupError` (naming ``where``) for other labels."""
    match = EXERCISE_LABEL.match(label)
    if not match:
        raise MarkupError(
            f"{where}: exercise label {label!r} is not of the form ex-N-M"
        )
    return f"{int(match['chapter'])}.{int(match['number'])}"


def checker_calls(source: str) -> list[str]:
    """The exercise numbers ``"N.M"`` of every ``check_exercise_N_M(`` call in ``source``."""
    return [
        f"{int(m['chapter'])}.{int(m['number'])}"
        for m in _CHECKER_CALL.finditer(source)
    ]


def stub_solution(source: str, number: str, where: str = "") -> tuple[str, int]:
    """Replace every ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` block of ``source`` by a stub.

    The stub sits at the indentation of the BEGIN marker::

        # YOUR CODE HERE
        raise NotImplementedError("Exercise N.M: replace this line by your solution")

    Returns the new source and the number of blocks replaced. Raises
    :class:`MarkupError`, naming ``where`` and the line, for a BEGIN without
    END, an END without BEGIN, or a BEGIN inside a block.
    """
    out: list[str] = []
    blocks = 0
    open_line: int | None = None
    for i, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            if open_line is not None:
                raise MarkupError(
                    f"{where}: line {i}: {BEGIN!r} inside the block opened on line {open_line}"
                )
            open_line = i
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(
                f'{indent}raise NotImplementedError("Exercise {number}: replace this line by your solution")'
            )
        elif stripped.startswith(END):
            if open_line is None:
                raise MarkupError(
                    f"{where}: line {i}: {END!r} without a {BEGIN!r} before it"
                )
            open_line = None
            blocks += 1
        elif open_line is None:
            out.append(line)
    if open_line is not None:
        raise MarkupError(
            f"{where}: line {open_line}: {BEGIN!r} without a matching {END!r}"
        )
    return "\n".join(out), blocks


def count_stubs(source: str) -> int:
    """The number of ``raise NotImplementedError("Exercise ...`` stubs in ``source``."""
    return len(
        re.findall(
            r'raise NotImplementedError\("Exercise \d+\.\d+',
            source,
        )
    )


@dataclass
class Exercise:
    """One exercise of a chapter notebook, as found by :func:`find_exercises`."""

    number: str  #: "N.M"
    title: str  #: the directive's title, e.g. "1.1 · Normalize a sequence by hand"
    statement_cell: (
        int  #: index of the markdown cell holding the ``{exercise}`` directive
    )
    #: code cells of its solution (or its stubs)
    code_cells: list[int] = field(default_factory=list)
    solution_blocks: int = (
        0  #: BEGIN/END blocks (instructor edition) or stubs (student edition)
    )
    #: numbers of the checkers called in its code cells
    checkers: list[str] = field(default_factory=list)
    gated: bool = False  #: whether a ``{solution-start}`` gate refers to it

    @property
    def kind(self) -> str:
        """``"code"`` when the exercise has solution code (or stubs), else ``"prose"``."""
        return "code" if self.solution_blocks else "prose"


def _block_end(lines: list[str], i: int, fence: str) -> int:
    """The line that closes the directive opened on line ``i`` with ``fence``: a line made of
    its fence character, at least as long (``len(lines)`` if none)."""
    closing = rf"\s*{re.escape(fence[0])}{{{len(fence)},}}\s*"
    return next(
        (j for j in range(i + 1, len(lines)) if re.fullmatch(closing, lines[j])),
        len(lines),
    )


def scan_markdown(
    text: str, gate: str | None, where: str
) -> tuple[str, str | None, list[tuple[str, str, str]]]:
    """Walk one markdown cell: drop the solution gates and the prose inside them.

    ``gate`` is the label of the gate open when the cell starts (or None). Returns
    the kept text, the gate open at the end of the cell, and the events seen, as
    ``(kind, label, text)``: ``"exercise"`` (text: its title), ``"statement"`` (the
    text of its block, options removed), ``"solution-start"``, ``"solution-end"``, and
    ``"prose"`` for each line inside a gate (the model answer).
    """
    lines = text.split("\n")
    kept: list[str] = []
    events: list[tuple[str, str, str]] = []
    i = 0
    while i < len(lines):
        match = DIRECTIVE.match(lines[i])
        if match and match["name"] in (
            "solution-start",
            "solution-end",
        ):
            j = _block_end(lines, i, match["fence"])
            if j == len(lines):
                raise MarkupError(
                    f"{where}: the {{{match['name']}}} directive is not closed in its cell"
                )
            if match["name"] == "solution-start":
                if gate is not None:
                    raise MarkupError(
                        f"{where}: {{solution-start}} {match['arg']} inside the open gate of {gate}"
                    )
                gate = match["arg"] or "?"
                events.append(("solution-start", gate, ""))
            else:
                if gate is None:
                    raise MarkupError(
                        f"{where}: {{solution-end}} without a {{solution-start}} before it"
                    )
                events.append(("solution-end", gate, ""))
                gate = None
            i = j + 1
            continue
        if match and match["name"] == "exercise" and gate is None:
            label = ""
            for option in lines[i + 1 :]:
                if not option.strip().startswith(":"):
                    break
                found = LABEL.match(option)
                if found:
                    label = found["label"]
            if not label:
                raise MarkupError(
                    f"{where}: an {{exercise}} directive without :label: ex-N-M"
                )
            events.append(("exercise", label, match["arg"]))
            body = lines[i + 1 : _block_end(lines, i, match["fence"])]
            text = "\n".join(line for line in body if not line.strip().startswith(":"))
            events.append(("statement", label, text.strip()))
        if gate is None:
            kept.append(lines[i])
        else:
            events.append(("prose", gate, lines[i]))
        i += 1
    return "\n".join(kept).strip("\n"), gate, events


def _split_statements(text: str) -> list[str]:
    """``text`` cut before its second, third, ... ``{exercise}`` directive (empty pieces dropped)."""
    lines = text.split("\n")
    starts = [
        i
        for i, line in enumerate(lines)
        if (m := DIRECTIVE.match(line)) and m["name"] == "exercise"
    ]
    cuts = [0] + starts[1:] + [len(lines)]
    pieces = ["\n".join(lines[a:b]).strip("\n") for a, b in zip(cuts, cuts[1:])]
    return [p for p in pieces if p.strip()]


def _statement_number(source: str) -> str | None:
    """The number of the last ``{exercise}`` stated in a markdown cell's text, if any."""
    found = None
    for line in source.split("\n"):
        m = DIRECTIVE.match(line)
        if m and m["name"] == "exercise":
            found = "?"
        label = LABEL.match(line)
        if found == "?" and label:
            found = exercise_number(label["label"])
    return found if found != "?" else None


def answer_cell(number: str) -> nbformat.NotebookNode:
    """The markdown cell a student writes the answer of prose exercise ``number`` in.

    Tagged ``metadata["rnnlib_answer"] = "N.M"`` (the grader collects these cells),
    and given nbgrader's metadata of a manually graded answer cell (points from
    :data:`GRADING_CONFIG`).
    """
    cell = nbformat.v4.new_markdown_cell(
        f"**Your answer to exercise {number}.** {ANSWER_PLACEHOLDER}"
    )
    cell["id"] = f"answer-{number.replace('.', '-')}"
    cell.metadata[ANSWER_KEY] = number
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": f"answer-{number.replace('.', '-')}",
        "locked": False,
        "points": exercise_points().get(number, 1),
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    return cell


def _add_answer_cells(
    out: nbformat.NotebookNode, exercises: dict[str, Exercise]
) -> None:
    """After the statement of every prose exercise, an answer cell (unless one is there already)."""
    prose = {n for n, e in exercises.items() if e.kind == "prose"}
    cells = []
    for index, cell in enumerate(out.cells):
        cells.append(cell)
        if cell.cell_type != "markdown":
            continue
        number = _statement_number(cell.source)
        following = out.cells[index + 1] if index + 1 < len(out.cells) else None
        if (
            number in prose
            and not (
                following is not None and following.metadata.get(ANSWER_KEY) == number
            )
            and cell.metadata.get(ANSWER_KEY) is None
        ):
            cells.append(answer_cell(number))
    out.cells = cells


def _transform(
    nb: nbformat.NotebookNode, where: str, student: bool
) -> tuple[nbformat.NotebookNode, list[Exercise]]:
    """Walk a notebook once: find its exercises and (if ``student``) build the student edition."""
    out = copy.deepcopy(nb)
    out.cells = []
    exercises: dict[str, Exercise] = {}
    current: Exercise | None = None
    gate: str | None = None
    for index, cell in enumerate(nb.cells):
        here = f"{where}: cell {index}"
        if cell.cell_type == "markdown":
            text, gate_after, events = scan_markdown(cell.source, gate, here)
            for kind, label, title in events:
                if kind == "exercise":
                    number = exercise_number(label, here)
                    if number in exercises:
                        raise MarkupError(f"{here}: exercise {number} is stated twice")
                    current = exercises[number] = Exercise(number, title, index)
                elif kind == "solution-start":
                    number = exercise_number(label, here)
                    if number not in exercises:
                        raise MarkupError(
                            f"{here}: the solution of {label} comes before its {{exercise}} statement"
                        )
                    current = exercises[number]
                    current.gated = True
            gate = gate_after
            new = copy.deepcopy(cell)
            if student:
                # one cell per exercise statement, so an answer cell can follow each
                for piece in _split_statements(text):
                    part = copy.deepcopy(cell)
                    part.source = piece
                    if "id" in part and len(out.cells) and piece != text:
                        part["id"] = f"{cell.get('id', 'cell')}-{len(out.cells)}"[:64]
                    out.cells.append(part)
                continue
            out.cells.append(new)
            continue
        new = copy.deepcopy(cell)
        if cell.cell_type == "code":
            has_markers = BEGIN in cell.source or END in cell.source
            is_stub = (
                cell.metadata.get(EXERCISE_KEY) is not None
                or count_stubs(cell.source) > 0
            )
            if has_markers or is_stub or gate is not None:
                number = cell.metadata.get(EXERCISE_KEY) or (
                    current.number if current else None
                )
                if number is None:
                    raise MarkupError(
                        f"{here}: solution markers before any {{exercise}} statement"
                    )
                exercise = exercises.get(number)
                if exercise is None:
                    raise MarkupError(
                        f"{here}: cell metadata names exercise {number}, which is not stated before it"
                    )
                if has_markers:
                    stubbed, blocks = stub_solution(cell.source, number, here)
                elif is_stub:
                    stubbed, blocks = (
                        cell.source,
                        count_stubs(cell.source),
                    )
                else:  # code inside a gate without markers: solution material
                    if not student:
                        out.cells.append(new)
                    continue
                exercise.code_cells.append(len(out.cells))
                exercise.solution_blocks += blocks
                exercise.checkers += checker_calls(cell.source)
                if student:
                    new.source = stubbed
                    tags = list(new.metadata.get("tags", []))
                    new.metadata["tags"] = tags + [
                        t for t in STUB_TAGS if t not in tags
                    ]
                    new.metadata[EXERCISE_KEY] = number
                    new.metadata["nbgrader"] = {
                        "grade": False,
                        "grade_id": f"code-{number.replace('.', '-')}-{len(exercise.code_cells)}",
                        "locked": False,
                        "schema_version": 3,
                        "solution": True,
                        "task": False,
                    }
                    new.outputs = []
                    new.execution_count = None
        out.cells.append(new)
    if gate is not None:
        raise MarkupError(
            f"{where}: the gate {{solution-start}} {gate} is never closed by {{solution-end}}"
        )
    if student:
        out.metadata["rnnlib_edition"] = "student"
        _add_answer_cells(out, exercises)
    return out, list(exercises.values())


def _read(
    notebook: nbformat.NotebookNode | str | Path,
) -> tuple[nbformat.NotebookNode, str]:
    if isinstance(notebook, (str, Path)):
        path = Path(notebook)
        if not path.is_file():
            raise FileNotFoundError(f"notebook: no such file {str(path)!r}")
        return nbformat.read(path, as_version=4), str(path)
    if not isinstance(notebook, nbformat.NotebookNode):
        raise TypeError(
            f"notebook must be a path or an nbformat notebook, got {type(notebook).__name__}"
        )
    return notebook, "<notebook>"


def find_exercises(
    notebook: nbformat.NotebookNode | str | Path,
) -> list[Exercise]:
    """The exercises of a notebook (instructor or student edition), in order of statement.

    Code cells are indexed in the notebook as it is (for an instructor notebook,
    the indices of its solution cells; for a student notebook, of its stubs).
    Raises :class:`MarkupError` for markup that breaks the convention.
    """
    nb, where = _read(notebook)
    return _transform(nb, where, student=False)[1]


def student_notebook(
    notebook: nbformat.NotebookNode | str | Path,
) -> nbformat.NotebookNode:
    """The student edition of one chapter notebook.

    * every block of solution lines between ``### BEGIN SOLUTION`` and
      ``### END SOLUTION`` (nbgrader's markers) is replaced, at the marker's
      indentation, by ``raise NotImplementedError("Exercise N.M: ...")``; the
      ``def`` line above it and the checker call below it stay, so a student fills
      in the body and runs the cell;
    * the solution gates are removed: the ``{solution-start}`` and ``{solution-end}``
      directives and every markdown line between them (the solution prose), also
      when they share a cell with the exercise statement; a markdown cell left
      empty is dropped, so a stub cell follows its exercise statement directly;
    * a code cell inside a gate without markers is solution material and is dropped;
    * stub cells are tagged ``raises-exception`` (the book build and nbval accept
      their error) and ``remove-output`` (the HTML shows no traceback), and carry
      ``metadata["rnnlib_exercise"] = "N.M"`` so :mod:`booktools.grade` finds them;
    * every prose exercise (a proof, an explanation) is followed by an answer cell,
      a markdown cell with ``metadata["rnnlib_answer"] = "N.M"`` that the grader
      collects for the instructor (a markdown cell holding several statements is
      cut into one cell per statement first);
    * stub and answer cells also carry nbgrader's cell metadata (``metadata.nbgrader``,
      schema 3: an autograded answer, a manually graded answer with the points of
      ``booktools/grading.yml``), so nbgrader's tools recognise them.
    """
    nb, where = _read(notebook)
    out, _ = _transform(nb, where, student=True)
    nbformat.validate(out)
    return out


#: Cell metadata key of the install cell that opens every student notebook.
INSTALL_KEY = "rnnlib_install"


def statements_and_model_answers(
    nb: nbformat.NotebookNode,
) -> tuple[dict[str, str], dict[str, str]]:
    """The statement (the ``{exercise}`` block, without its options) and the model answer (the prose
    inside its ``{solution-start}`` gate) of each exercise of an instructor notebook, by number."""
    statements: dict[str, str] = {}
    models: dict[str, list[str]] = {}
    gate = None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        _, gate, events = scan_markdown(cell.source, gate, f"cell {index}")
        for kind, label, text in events:
            if kind == "statement":
                statements[exercise_number(label)] = text
            elif kind in ("solution-start", "prose"):
                number = exercise_number(label)
                models.setdefault(number, []).append(text)
    return statements, {n: "\n".join(t).strip() for n, t in models.items()}


#: Cell metadata key marking the generated macro cell.
MACRO_KEY = "rnnlib_macros"


#: Tags of the macro cell: the book does not render it.
MACRO_TAGS = ("remove-cell",)


def book_macros(root: Path = ROOT) -> dict[str, str | list]:
    """The macros of ``_config.yml`` (``name -> body`` or ``name -> [body, n_args]``)."""
    config = yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf-8"))
    try:
        macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    except (KeyError, TypeError) as exc:
        raise ValueError(
            "_config.yml: no sphinx.config.mathjax3_config.tex.macros"
        ) from exc
    for name, body in macros.items():
        if not (
            isinstance(body, str)
            or (
                isinstance(body, list)
                and len(body) == 2
                and isinstance(body[0], str)
                and isinstance(body[1], int)
            )
        ):
            raise ValueError(
                f"_config.yml: macro {name!r} must be a string or [body, n_args], got {body!r}"
            )
    return dict(macros)


def is_macro_cell(cell) -> bool:
    return cell.cell_type == "markdown" and bool(cell.metadata.get(MACRO_KEY))


#: an inner product ``<u, v>`` (not ``<=``, ``<-``, ``->``, ``>=``)
ANGLE = re.compile(r"<(?![=-])([^<>]*?,[^<>]*?)(?<![-=])>(?!=)")


#: signs that an inline literal is a formula
FORMULA_SIGNS = re.compile(
    r"\^|\|\||<=|>=|\bsum_|\bsqrt\(|\bprod_|\bexp\(|_\{|\|[^|]+\|"
    r"|(?<![\w.])[EP1]\[|" + ANGLE.pattern
)


#: signs that it is code: quotes around a string, Python's own operators and
#: keywords, attribute access, keyword arguments, an annotation
CODE_SIGNS = re.compile(
    r"[\"`@#$\\]|(?<![\w)'\]])'[^']*'|\*\*|==|\+=|//|::|\w: |:$"
    r"|\b(torch|np|numpy|self|None|True|False|def|return|import)\b"
    r"|[A-Za-z_]\w*\.[A-Za-z_]|(?<![{\w])[A-Za-z_]\w*=\w|, *\w+="
)


GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta kappa lambda mu nu xi rho "
    "sigma tau phi chi psi omega Gamma Delta Theta Lambda Xi Phi Psi Omega pi"
).split()


#: written ``\\log``, ``\\max`` ... wherever they stand (``inf`` is the infinity below)
FUNCTIONS = (
    "exp",
    "log",
    "sin",
    "cos",
    "arccos",
    "tanh",
    "max",
    "min",
    "sup",
    "lim",
    "det",
)


#: written ``\\operatorname{relu}`` ... where an argument follows
OPERATORS = (
    "relu",
    "diag",
    "mean",
    "Var",
    "sign",
    "ceil",
    "floor",
    "argmax",
    "argmin",
    "logit",
    "Bin",
)


#: the first part of a name that is a sum or a Greek letter with its index (``theta_jk``)
_SCRIPTED = {"sum", "prod", "lim", "grad", "eps", *GREEK}


#: an identifier of the code (``out_scale``, ``u_f_radius``, ``min_length``): upright, as one
#: word; ``He_j``, ``mean_n``, ``max_t`` are a name with an index, not an identifier
IDENTIFIER = re.compile(
    r"(?<![\\\w])(?:[A-Za-z]{2,}(?:_[A-Za-z0-9]+)*_[A-Za-z0-9]{2,}"
    r"|[A-Za-z]+(?:_[A-Za-z0-9]+){2,})(?!\w)"
)


#: what a subscript word is in TeX (``f_max``, ``lambda_inf``, ``C_eps``, ``L_rho``)
_SUBSCRIPT_TEX = {
    "inf": r"\infty",
    "eps": r"\varepsilon",
    **{f: "\\" + f for f in FUNCTIONS},
    **{g: "\\" + g for g in GREEK},
}


#: two-letter words that are words, not a product of two symbols
WORDS2 = {"lr", "is", "of", "or", "if", "on", "sd"}


#: a run of two or more words of prose inside a formula (``1[z has exactly one 1]``)
PROSE = re.compile(
    r"(?<![\\\w{])[A-Za-z]{2,}(?:'s)?(?:\s+[A-Za-z]{2,}(?:'s)?)+(?![\w{(])"
)


#: what begins a factor: after a name, TeX needs a thin space to keep the blank
_FACTOR = re.compile(
    r"[A-Za-z(]|\\(?:mathrm|sqrt|sum|nabla|langle|bar|hat|operatorname|"
    + "|".join(GREEK + list(FUNCTIONS))
    + r")(?![A-Za-z])"
)


def _braces(text: str) -> str:
    """Braces after ``_`` or ``^`` group (TeX); others are a set's braces, escaped."""
    out, stack = [], []
    for i, ch in enumerate(text):
        if ch == "{":
            group = i > 0 and text[i - 1] in "_^"
            stack.append(group)
            out.append("{" if group else r"\{")
        elif ch == "}":
            group = stack.pop() if stack else False
            out.append("}" if group else r"\}")
        else:
            out.append(ch)
    return "".join(out)


def is_formula(text: str) -> bool:
    """Whether an inline literal holds a formula (math signs, no code punctuation)."""
    return bool(FORMULA_SIGNS.search(text)) and not CODE_SIGNS.search(text)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _sqrt(text: str) -> str:
    """``sqrt(...)`` -> ``\\sqrt{...}``, the argument to its matching parenthesis."""
    out, pos = [], 0
    opening = re.compile(r"(?<![\\A-Za-z])sqrt\(")
    while m := opening.search(text, pos):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        if depth:
            break
        inner = _sqrt(text[m.end() : j - 1])
        out.append(text[pos : m.start()] + r"\sqrt{" + inner + "}")
        pos = j
    out.append(text[pos:])
    return "".join(out)


def _identifiers(text: str) -> tuple[str, list[str]]:
    """``text`` with the code's identifiers replaced by placeholders (restored upright)."""
    names: list[str] = []

    def hold(m: re.Match) -> str:
        if m.group(0).split("_")[0] in _SCRIPTED:
            return m.group(0)
        names.append(m.group(0).replace("_", r"\_"))
        return f"\x00{len(names) - 1}\x00"

    return IDENTIFIER.sub(hold, text), names


def ascii_to_tex(text: str) -> str:
    """The TeX of an ASCII formula of a docstring (see the module docstring)."""
    t = _braces(text)
    t = re.sub(r"%", r"\\%", t)
    t = re.sub(r"&", r"\\&", t)
    t, names = _identifiers(t)

    def upright(word: str) -> str:
        names.append(word)
        return f"\x00{len(names) - 1}\x00"

    t = re.sub(
        r"(?<![\\A-Za-z])([A-Za-z])(bar|hat)(?![A-Za-z])",
        r"\\\2{\1}",
        t,
    )
    t = t.replace("||", r"\|")
    while ANGLE.search(t):
        t = ANGLE.sub(r"\\langle \1 \\rangle ", t)
    t = t.replace("<=", r" \le ").replace(">=", r" \ge ")
    t = t.replace("<-", r" \leftarrow ").replace("+-", r" \pm ")
    t = t.replace("!=", r" \ne ").replace("->", r" \to ")
    t = _sqrt(t)
    t = re.sub(r"(?<![\\A-Za-z])sqrt\s+(\w+)", r"\\sqrt{\1}", t)
    t = re.sub(r"\b(sum|prod)_", r"\\\1_", t)
    t = re.sub(r"\b(sum|prod)\b(?!_)", r"\\\1", t)
    # h^(l-1)^T: the transpose of h^(l-1), not a double superscript
    t = re.sub(r"(\w+'*)\^\(([^()]*)\)\^", r"{\1^{(\2)}}^", t)
    t = re.sub(r"\^\(([^()]*)\)", r"^{(\1)}", t)
    t = re.sub(r"\^\[([^\[\]]*)\]", r"^{[\1]}", t)
    t = re.sub(r"_\(([^()]*)\)", r"_{(\1)}", t)
    t = re.sub(r"\^(-?[A-Za-z0-9]+(?:\.\d+)?)", r"^{\1}", t)
    # b0, h0^(l), b0_r: an initial value's index
    t = re.sub(r"(?<![\\\w])([A-Za-z])0_(\w)", r"\1_{0,\2}", t)
    t = re.sub(r"(?<![\\\w])([A-Za-z])0(?!\w)", r"\1_0", t)
    t = re.sub(
        r"_([A-Za-z]{3,}\w*)",
        lambda m: (
            "_{"
            + (
                _SUBSCRIPT_TEX.get(m.group(1))
                or upright(r"\mathrm{" + m.group(1) + "}")
            )
            + "}"
        ),
        t,
    )
    t = re.sub(
        r"_([A-Za-z]{2}|[A-Za-z]?\d{2,}|[A-Za-z]\d)(?!\w)",
        r"_{\1}",
        t,
    )
    t = re.sub(r"\beps\b|\beps(?=_)", r"\\varepsilon", t)
    t = re.sub(r"(?<![\w.])E(?=\[|\|)", r"\\mathbb{E}", t)
    t = re.sub(r"(?<![\w.])E\s+(?=[a-z])", r"\\mathbb{E}\\, ", t)
    t = re.sub(r"(?<![\w.])P\[", r"\\mathbb{P}[", t)
    t = re.sub(r"(?<![\w.])1\[", r"\\mathbf{1}[", t)
    t = re.sub(r"(?<![\\A-Za-z])grad(?![A-Za-z])", r"\\nabla ", t)
    for g in GREEK:
        t = re.sub(rf"(?<![\\A-Za-z]){g}(?![A-Za-z])", rf"\\{g}", t)
    for f in FUNCTIONS:
        t = re.sub(rf"(?<![\\A-Za-z]){f}(?![A-Za-z])", rf"\\{f}", t)
    t = re.sub(r"\{inf\}", r"{\\infty}", t)
    t = re.sub(r"(?<![\\\w])inf\b", r"\\infty ", t)
    for f in OPERATORS:
        t = re.sub(
            rf"(?<![\\A-Za-z]){f}(?=\s*\(|_)",
            rf"\\operatorname{{{f}}}",
            t,
        )
    t = re.sub(r"\s+in\s+", r" \\in ", t)
    t = re.sub(r"\s+mod\s+", r" \\bmod ", t)
    t = re.sub(r"\s+o\s+", r" \\circ ", t)
    t = t.replace("...", r"\dots ").replace("~", r"\sim ")
    t = re.sub(r"\s+\.\s+", r" \\cdot ", t)
    t = re.sub(r"\(\.,", r"(\\cdot,", t)
    t = t.replace(" * ", r" \cdot ")
    # prose inside a formula (1[z has exactly one 1]) is text; other words
    # (PARITY, tokens, norm) upright, as the names they are
    t = PROSE.sub(lambda m: upright(r"\text{ " + m.group(0) + " }"), t)
    t = re.sub(
        r"(?<![\\{\w])[A-Za-z]{2,}(?![A-Za-z0-9{])",
        lambda m: (
            m.group(0)
            if len(m.group(0)) == 2 and m.group(0) not in WORDS2
            else upright(m.group(0))
        ),
        t,
    )
    # restore the names, upright; a name juxtaposed with a factor keeps its blank
    while "\x00" in t:
        t = re.sub(
            "\x00(\\d+)\x00",
            lambda m: (
                names[int(m.group(1))]
                if names[int(m.group(1))].startswith("\\")
                else r"\mathrm{" + names[int(m.group(1))] + "}"
            ),
            t,
        )
    t = re.sub(
        r"(\\mathrm\{[^{}]*\})\s+(?=" + _FACTOR.pattern + ")",
        r"\1\\, ",
        t,
    )
    t = re.sub(r"\s+", " ", t).strip()
    return t


#: a word of prose that carries a formula sign (``h^(l)``, ``||W||_2``, ``m^(-1/2)``)
_MATH_WORD = re.compile(r"\S*(?:\^|\|\||<=|>=|_\{|\bsqrt\(|\bsum_)\S*")


#: what may join two such words into one formula
_JOIN = re.compile(r"^(?:\s*(?:[=<>+*/~-]|<=|>=|\b[A-Za-z]\b|\b\d+(?:\.\d+)?\b)\s*)*$")


def formula_spans(text: str) -> list[tuple[int, int, str]]:
    """The ASCII formulas of a sentence: ``(start, end, tex)``, for :func:`ascii_to_tex`.

    A formula is a run of words with formula signs (:data:`_MATH_WORD`) joined by
    operators and short symbols; punctuation that closes the sentence is left out.
    A run whose TeX would not balance its braces, or that holds code, is left as text.
    """
    words = [(m.start(), m.end()) for m in _MATH_WORD.finditer(text)]
    runs: list[list[int]] = []
    for start, end in words:
        if runs and _JOIN.match(text[runs[-1][1] : start]):
            runs[-1][1] = end
        else:
            runs.append([start, end])
    spans = []
    for start, end in runs:
        while end > start and text[end - 1] in ".,;:":
            end -= 1
        body = text[start:end]
        # unmatched closing parenthesis: a sentence's, not the formula's
        while body.endswith(")") and body.count(")") > body.count("("):
            body, end = body[:-1], end - 1
        while body.startswith("(") and body.count("(") > body.count(")"):
            body, start = body[1:], start + 1
        if (
            not body
            or body.count("(") != body.count(")")
            or CODE_SIGNS.search(body.replace("'", ""))
        ):
            continue
        tex = ascii_to_tex(body)
        if not safe_tex(tex):
            continue
        spans.append((start, end, tex))
    return spans


_SCRIPT = r"(?:\{[^{}]*\}|\\?\w+)"


#: ``x_t_1`` or ``a^2^3``: TeX refuses a double subscript or superscript
_DOUBLE_SCRIPT = re.compile(rf"_{_SCRIPT}_|\^{_SCRIPT}\^")


def safe_tex(tex: str) -> bool:
    """Whether MathJax will typeset ``tex``: balanced braces, no double sub/superscript."""
    return "`" not in tex and _balanced(tex) and not _DOUBLE_SCRIPT.search(tex)
