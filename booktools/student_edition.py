"""Generate the student edition of the book from the chapters as written.

The chapters in ``chapters/`` are the instructor edition and the one source of
truth. The student edition is derived from them (CONTRIBUTING.md, "Exercises"):

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

Usage (the Makefile's ``student-notebooks`` target)::

    python -m booktools.student_edition             # notebooks + book sources into student/
    python -m booktools.student_edition --out DIR   # somewhere else
    python -m booktools.student_edition --list      # the exercises of every chapter (markdown rows)

``make student`` then executes the student notebooks once (``booktools.execute``) and
builds their HTML from that execution with ``jupyter-book build student``.

This module imports neither rnnlib nor torch: it only reads and writes notebooks.
"""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from booktools.toc import (
    ROOT,
    chapter_notebooks,
    pages,
    read_toc,
    without,
)

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
#: Pages of the instructor edition that the student edition leaves out.
INSTRUCTOR_ONLY = ("chapters/instructor_guide",)

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
    """The student edition of one chapter notebook (see the module docstring)."""
    nb, where = _read(notebook)
    out, _ = _transform(nb, where, student=True)
    nbformat.validate(out)
    return out


def student_config(config: dict, repository_url: str | None = None) -> dict:
    """The ``_config.yml`` of the student edition, derived from the book's.

    The title says "student edition"; the launch and repository buttons point at
    ``repository_url`` (a repository that hosts the student edition) or, without
    one, are switched off (the chapter notebooks of the main repository hold the
    solutions). Students download a page's notebook with the download button.
    """
    cfg = copy.deepcopy(config)
    # read by booktools.student_edition, not the build
    cfg.pop("student_edition", None)
    cfg["title"] = f"{config.get('title', 'Book')} (student edition)"
    cfg["exclude_patterns"] = [
        p for p in cfg.get("exclude_patterns", []) if p != "student"
    ]
    html = cfg.setdefault("html", {})
    if repository_url:
        cfg.setdefault("repository", {})["url"] = repository_url
        cfg["repository"]["path_to_book"] = ""
        # the book's own are off (its chapters hold the solutions): on here
        cfg["launch_buttons"] = {
            "notebook_interface": "jupyterlab",
            "binderhub_url": "https://mybinder.org",
            "colab_url": "https://colab.research.google.com",
        }
    else:
        cfg.pop("repository", None)
        cfg["launch_buttons"] = {
            "binderhub_url": "",
            "colab_url": "",
            "notebook_interface": "classic",
        }
        html["use_repository_button"] = False
    html["use_issues_button"] = False
    html["use_edit_page_button"] = False
    return cfg


#: Cell metadata key of the install cell that opens every student notebook.
INSTALL_KEY = "rnnlib_install"


def install_source(url: str, branch: str = "main") -> str:
    """The install cell's code: the book's package from ``url`` (at ``branch``), where it is missing.

    Colab (or any Python without rnnlib) installs it with its run-time dependencies
    (pyproject.toml); where rnnlib is installed (the course environment, Binder) the cell
    does nothing.
    """
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ValueError(
            f"url: the repository URL must be http(s), got {url!r} (repository.url in _config.yml)"
        )
    return (
        "# Colab, or any Python without the book's library: install it first.\n"
        "try:\n"
        "    import rnnlib  # noqa: F401\n"
        "except ImportError:\n"
        "    get_ipython().run_line_magic(\n"
        '        "pip",\n'
        f"        \"install --quiet 'rnnlib @ git+{url}@{branch}'\",\n"
        "    )"
    )


def add_install_cell(
    nb: nbformat.NotebookNode, url: str, branch: str = "main"
) -> nbformat.NotebookNode:
    """Put the install cell (:func:`install_source`) before the first code cell of ``nb``."""
    cell = nbformat.v4.new_code_cell(install_source(url, branch))
    cell["id"] = "rnnlib-install"
    cell.metadata[INSTALL_KEY] = True
    # the student book does not show it
    cell.metadata["tags"] = ["remove-cell"]
    nb.cells = [c for c in nb.cells if not c.metadata.get(INSTALL_KEY)]
    first_code = next(
        (i for i, c in enumerate(nb.cells) if c.cell_type == "code"),
        len(nb.cells),
    )
    nb.cells.insert(first_code, cell)
    return nb


def student_repository_url(config: dict) -> str | None:
    """``student_edition.repository_url`` of ``_config.yml``: the repository hosting the student edition, or None.

    The one setting that turns on the student edition's launch buttons (Binder,
    Colab) and its Binder ``environment.yml`` (README.md, "Launch buttons"); empty
    or absent: no buttons.
    """
    value = (config.get("student_edition") or {}).get("repository_url")
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise ValueError(
            f"student_edition.repository_url in _config.yml must be an http(s) URL or empty, got {value!r}"
        )
    return value


def build_student_edition(
    root: Path = ROOT,
    out: Path | None = None,
    repository_url: str | None = None,
) -> list[Path]:
    """Write the student edition of the book under ``out`` (default ``root/student``).

    ``repository_url``: the repository hosting the student edition (its launch
    buttons); by default ``student_edition.repository_url`` of ``_config.yml``
    (:func:`student_repository_url`).

    Writes one student notebook per chapter notebook of ``_toc.yml``, copies its markdown pages,
    ``references.bib`` and the folders the configuration names (``_static/``,
    ``html_static_path``, ``html_extra_path``),
    and derives ``_config.yml`` and ``_toc.yml`` (without the instructor-only
    pages). The files in ``out/chapters`` are replaced (it is generated; a
    chapter deleted from the book disappears from it). Returns the notebooks written.
    """
    root = Path(root)
    out = Path(out) if out is not None else root / "student"
    toc = read_toc(root)
    if out.resolve() == root.resolve():
        raise ValueError(
            "out: the student edition must not overwrite the book's own root"
        )
    (out / "chapters").mkdir(parents=True, exist_ok=True)
    for old in (out / "chapters").glob("*"):
        if old.is_file():
            old.unlink()
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    if repository_url is None:  # the one setting: student_edition.repository_url
        repository_url = student_repository_url(config)
    written = []
    for path in chapter_notebooks(root):
        target = out / "chapters" / path.name
        nb = student_notebook(path)
        if repository_url:  # the student repository hosts the package too
            add_install_cell(nb, repository_url, "main")
        nbformat.write(nb, target)
        written.append(target)
    for page in pages(root):
        rel = page.relative_to(root)
        if (
            page.suffix == ".md"
            and rel.with_suffix("").as_posix() not in INSTRUCTOR_ONLY
        ):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(page, out / rel)
    for name in ("references.bib",):
        if (root / name).exists():
            shutil.copy2(root / name, out / name)
    sphinx = config.get("sphinx") or {}
    sphinx_config = sphinx.get("config") or {}
    asset_dirs = {
        "_static",
        *sphinx_config.get("html_static_path", []),
        *sphinx_config.get("html_extra_path", []),
    }
    for name in sorted(
        asset_dirs
    ):  # static files, vendored assets (MathJax, widget manager)
        if (root / name).is_dir():
            shutil.copytree(root / name, out / name, dirs_exist_ok=True)

    def write_yaml(name: str, data: dict) -> None:
        (out / name).write_text(
            f"# Generated by booktools.student_edition from the book's {name}: "
            "do not edit, edit the original.\n" + yaml.safe_dump(data, sort_keys=False),
            encoding="utf-8",
        )

    write_yaml("_config.yml", student_config(config, repository_url))
    if repository_url:  # Binder on the student repository (write_student_repository)
        shutil.copy2(root / "environment.yml", out / "environment.yml")
    write_yaml("_toc.yml", without(toc, INSTRUCTOR_ONLY))
    return written


def write_student_repository(
    out: Path,
    root: Path = ROOT,
    portable: Path | None = None,
) -> list[Path]:
    """Write the folder to publish at ``student_edition.repository_url``: what the launch buttons open.

    The student edition's launch buttons (Binder, Colab) open
    ``<repository_url>/blob/main/chapters/NN.ipynb``, and its install cells run
    ``pip install "rnnlib @ git+<repository_url>@main"``. So the repository holds,
    at those paths: ``chapters/NN.ipynb``, the *portable* student notebooks
    (``make portable``: plain Markdown, read by any front end), the package
    (``rnnlib/``, ``pyproject.toml``, ``requirements.txt``, the licence), Binder's
    ``environment.yml`` (which installs the package from the repository itself) and
    a README. No solution is in it: the notebooks are the student edition's.
    Returns the files written.
    """
    out, root = Path(out), Path(root)
    portable = Path(portable) if portable is not None else root / "portable" / "student"
    notebooks = [portable / path.name for path in chapter_notebooks(root)]
    missing = [nb.name for nb in notebooks if not nb.is_file()]
    if missing:
        raise FileNotFoundError(
            f"portable: no portable student notebook {missing[0]} in {str(portable)!r} "
            f"({len(missing)} of {len(notebooks)} missing; run `make portable` first)"
        )
    if out.resolve() == root.resolve() or root.resolve().is_relative_to(out.resolve()):
        raise ValueError(f"out: {str(out)!r} would overwrite the book's own files")
    if out.exists() and any(out.iterdir()):
        if not ((out / "chapters").is_dir() and (out / "rnnlib").is_dir()):
            raise ValueError(
                f"out: {str(out)!r} exists and is not a student repository written before; "
                "name a new or empty folder"
            )
        shutil.rmtree(out)
    (out / "chapters").mkdir(parents=True)
    written = []
    for nb in notebooks:
        shutil.copy2(nb, out / "chapters" / nb.name)
        written.append(out / "chapters" / nb.name)
    shutil.copytree(
        root / "rnnlib",
        out / "rnnlib",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    for name in (
        "pyproject.toml",
        "requirements.txt",
        "environment.yml",
        "LICENSE",
    ):
        if (root / name).is_file():
            shutil.copy2(root / name, out / name)
            written.append(out / name)
    (out / "README.md").write_text(
        "# Student edition: the notebooks\n\n"
        "The chapters of the course as notebooks that read in any front end (Colab, Binder,\n"
        "VS Code, Jupyter), with the exercises to solve. Each notebook installs the course's\n"
        "package (`rnnlib`, in this repository) in its first cell where it is missing.\n"
        "Locally: `pip install -e .` then open `chapters/`.\n",
        encoding="utf-8",
    )
    written.append(out / "README.md")
    return written


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


def exercise_rows(root: Path = ROOT) -> list[str]:
    """One markdown table row ``| N.M | title | kind | checker | |`` per exercise of every chapter."""
    rows = []
    for path in chapter_notebooks(root):
        for ex in find_exercises(path):
            title = ex.title.split("·", 1)[-1].strip() if "·" in ex.title else ex.title
            checker = (
                ", ".join(
                    f"`check_exercise_{n.replace('.', '_')}`" for n in ex.checkers
                )
                or "by hand"
            )
            rows.append(
                f"| {ex.number} | {path.stem} | {title} | {ex.kind} | {checker} | ? |"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the book's root (default: this repository)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the edition (default: ROOT/student)",
    )
    parser.add_argument(
        "--repository-url",
        default=None,
        help="a repository hosting the student edition (launch buttons); "
        "default: student_edition.repository_url of _config.yml",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print the exercises of every chapter and exit",
    )
    parser.add_argument(
        "--repository-folder",
        type=Path,
        default=None,
        help="write the folder to publish at student_edition.repository_url "
        "(portable notebooks and the package; make portable first) and exit",
    )
    args = parser.parse_args(argv)
    try:
        if args.list:
            print("\n".join(exercise_rows(args.root)))
            return 0
        if args.repository_folder:
            files = write_student_repository(args.repository_folder, args.root)
            print(
                f"wrote {len(files)} files and the package to {args.repository_folder}: "
                "publish it at student_edition.repository_url"
            )
            return 0
        written = build_student_edition(args.root, args.out, args.repository_url)
    except (MarkupError, FileNotFoundError, ValueError) as exc:
        print(f"student_edition: {exc}", file=sys.stderr)
        return 2
    for path in written:
        stubs = sum(
            count_stubs(c.source)
            for c in nbformat.read(path, as_version=4).cells
            if c.cell_type == "code"
        )
        print(f"wrote {path} ({stubs} stub{'s' if stubs != 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
