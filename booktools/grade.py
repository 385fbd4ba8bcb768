"""Grade a student's completed chapter notebook offline: one score per exercise.

    python -m booktools.grade path/to/01_rnns_as_functions.ipynb   # or: make grade NB=...
    python -m booktools.grade --json NB.ipynb                      # machine-readable
    python -m booktools.grade --expect-stubs student/chapters/*.ipynb            # an untouched student edition
    python -m booktools.grade --expect-stubs --executed student/_build student/chapters/*.ipynb

The notebook is executed top to bottom with nbclient in a fresh kernel, errors
allowed (a cell that fails does not stop the run; a cell that runs past
``--timeout`` is interrupted and counts as an error). Errors in cells that are
not exercises, and errors inside widgets (an explorer whose figure function
fails shows the error in its widget while the cell succeeds), are listed. The exercise code cells
are the cells tagged by the student edition (``metadata.rnnlib_exercise``), the
cells that call ``check_exercise_N_M(...)`` and the cells with solution markers.
After the student's cells, the grader appends one cell per checker call that
runs the registered checker again, ``rnnlib.homework.CHECKERS["N.M"](arg)``, on
the student's function, so a printed "passed" line alone does not pass. When a
chapter notebook of the same name exists in ``chapters/`` (or ``--reference`` is
given), its checker calls are the ones re-run, and a code exercise whose cell
the student deleted is reported as missing.

An exercise passes when all its code cells ran without error and every re-run
checker printed ``Exercise N.M: all K checks passed``. It fails with the
checker's message (``ExerciseCheckFailed``), as "not done" (the stub's
``NotImplementedError``), or with the error its cell raised. Prose exercises are
listed "by hand". The grader runs the student's code with your permissions: run
it in a container or a throw-away account for untrusted submissions.

``--executed BUILD_DIR`` grades the execution that a book build already made
(the notebook's record in ``BUILD_DIR/.jupyter_cache``, filled by
``booktools.execute``) instead of executing again; the grader's re-run checker cells
are then not run, so it serves only ``--expect-stubs``, where every exercise must
stop at its stub anyway (``make student-check`` grades the execution that the student
edition's HTML shows).

Exit status: 0 when the notebook was graded (whatever the score), 1 when
``--expect-stubs`` finds a problem, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from booktools.execute import executed_in_build
from booktools.student_edition import (
    BEGIN,
    EXERCISE_KEY,
    ROOT,
    checker_calls,
    exercise_number,
    find_exercises,
    scan_markdown,
)

GRADER_KEY = "rnnlib_grader"
PASS, FAIL, NOT_DONE, ERROR, MISSING, BY_HAND = (
    "pass",
    "FAIL",
    "not done",
    "error",
    "missing",
    "by hand",
)


@dataclass
class ExerciseGrade:
    """The verdict on one exercise."""

    number: str
    status: str  #: one of pass, FAIL, not done, error, missing, by hand
    detail: str = ""
    cells: list[int] = field(
        default_factory=list
    )  #: indices of its code cells in the student's notebook

    @property
    def auto(self) -> bool:
        """Whether the exercise is graded automatically (not a prose exercise)."""
        return self.status != BY_HAND


@dataclass
class GradeReport:
    """The grades of one notebook, and the errors raised outside exercise cells."""

    notebook: str
    exercises: list[ExerciseGrade]
    other_errors: list[tuple[int, str, str]] = field(
        default_factory=list
    )  #: (cell, exception, message)

    @property
    def passed(self) -> int:
        return sum(e.status == PASS for e in self.exercises)

    @property
    def graded(self) -> int:
        return sum(e.auto for e in self.exercises)

    def table(self) -> str:
        """The per-exercise table and the total, as printed by the command line."""
        lines = [
            f"Grades for {self.notebook}",
            "",
            f"{'exercise':<9} {'result':<9} detail",
            "-" * 72,
        ]
        for e in self.exercises:
            detail = e.detail.splitlines()
            lines.append(
                f"{e.number:<9} {e.status:<9} {detail[0] if detail else ''}"
            )
            lines += [f"{'':<19} {more}" for more in detail[1:3]]
        lines.append("-" * 72)
        manual = len(self.exercises) - self.graded
        lines.append(
            f"Total: {self.passed}/{self.graded} automatically graded exercises passed"
            + (
                f"; {manual} prose exercise{'s' if manual != 1 else ''} to grade by hand"
                if manual
                else ""
            )
        )
        for index, ename, evalue in self.other_errors:
            lines.append(
                f"warning: cell {index} (not an exercise cell) raised {ename}: {_first_line(evalue)}"
            )
        return "\n".join(lines)


def _first_line(text: str) -> str:
    return (
        (text or "").strip().splitlines()[0]
        if (text or "").strip()
        else ""
    )


def _checker_arguments(source: str) -> list[tuple[str, str]]:
    """``(number, argument source)`` of each ``check_exercise_N_M(arg)`` call that parses in ``source``."""
    code = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in source.split("\n")
    )
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            numbers = checker_calls(name + "(")
            if numbers and name.startswith("check_exercise_"):
                found.append(
                    (
                        numbers[0],
                        ast.get_source_segment(code, node.args[0])
                        or "",
                    )
                )
    return found


def _exercise_cells(
    nb: nbformat.NotebookNode, where: str
) -> dict[str, list[int]]:
    """Map each exercise number to the indices of its code cells (see the module docstring)."""
    cells: dict[str, list[int]] = {}
    current, gate = None, None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            _, gate, events = scan_markdown(
                cell.source, gate, f"{where}: cell {index}"
            )
            for kind, label, _title in events:
                if kind in ("exercise", "solution-start"):
                    current = exercise_number(
                        label, f"{where}: cell {index}"
                    )
        if cell.cell_type != "code" or cell.metadata.get(
            GRADER_KEY
        ):
            continue
        numbers = set(checker_calls(cell.source))
        if cell.metadata.get(EXERCISE_KEY):
            numbers.add(str(cell.metadata[EXERCISE_KEY]))
        if BEGIN in cell.source and current:
            numbers.add(current)
        for number in numbers:
            cells.setdefault(number, []).append(index)
    return cells


def _error_of(
    cell: nbformat.NotebookNode,
) -> tuple[str, str] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", "Error"), output.get(
                "evalue", ""
            )
    return None


def _stdout_of(cell: nbformat.NotebookNode) -> str:
    return "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream"
    )


def widget_errors(
    nb: nbformat.NotebookNode,
) -> list[tuple[int, str, str]]:
    """Errors raised inside the widgets (explorers) of an executed notebook, as ``(cell, exception, message)``.

    ``ipywidgets.interactive`` catches the error of its function and shows it in
    its ``Output`` widget, so the cell itself succeeds (and nbval passes it). nbclient
    stores the widgets' state in the notebook's metadata; this walks from each
    cell's displayed widgets to their ``Output`` widgets and collects the errors,
    and flags an explorer (an ``interactive``) whose output holds no figure.
    """
    state = (
        nb.metadata.get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )

    def outputs_below(model_id: str, seen: set[str]) -> list[dict]:
        if model_id in seen or model_id not in state:
            return []
        seen.add(model_id)
        model = state[model_id].get("state", {})
        found = (
            list(model.get("outputs", []))
            if state[model_id].get("model_name") == "OutputModel"
            else []
        )
        for child in model.get("children", []):
            found += outputs_below(
                str(child).removeprefix("IPY_MODEL_"), seen
            )
        return found

    errors = []
    for index, cell in enumerate(nb.cells):
        for output in (
            cell.get("outputs", [])
            if cell.cell_type == "code"
            else []
        ):
            view = output.get("data", {}).get(
                "application/vnd.jupyter.widget-view+json"
            )
            if not view:
                continue
            inner = outputs_below(view.get("model_id", ""), set())
            failed = [
                o for o in inner if o.get("output_type") == "error"
            ]
            for o in failed:
                errors.append(
                    (
                        index,
                        f"{o.get('ename', 'Error')} (inside a widget)",
                        o.get("evalue", ""),
                    )
                )
            interact = "widget-interact" in state.get(
                view.get("model_id", ""), {}
            ).get("state", {}).get("_dom_classes", [])
            if (
                interact
                and not failed
                and not any(
                    "image/png" in o.get("data", {}) for o in inner
                )
            ):
                errors.append(
                    (
                        index,
                        "NoFigure (inside a widget)",
                        "the explorer shows no figure at its default values",
                    )
                )
    return errors


def _verdict(ename: str, evalue: str) -> tuple[str, str]:
    if ename == "NotImplementedError":
        return NOT_DONE, evalue or "NotImplementedError"
    if ename == "ExerciseCheckFailed":
        return FAIL, evalue
    return ERROR, f"{ename}: {evalue}"


def _execute(
    nb: nbformat.NotebookNode,
    path: Path,
    timeout: int,
    kernel_name: str,
) -> str | None:
    """Execute ``nb`` in place in ``path``'s folder, errors allowed; a message if the kernel died."""
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        allow_errors=True,
        interrupt_on_timeout=True,
        resources={
            "metadata": {"path": str(path.resolve().parent)}
        },
    )
    try:
        client.execute()
    except (
        DeadKernelError
    ) as exc:  # the rest of the cells did not run
        return f"the kernel died: {exc}"
    return None


def grade_notebook(
    notebook: str | Path,
    *,
    reference: str | Path | None = None,
    timeout: int = 300,
    kernel_name: str = "python3",
    executed: nbformat.NotebookNode | None = None,
) -> GradeReport:
    """Execute ``notebook`` in a fresh kernel and grade each of its exercises.

    ``reference`` is the instructor notebook of the chapter; by default the
    notebook of the same name in ``chapters/`` if there is one. ``executed`` is
    an execution of ``notebook`` made elsewhere (a build's, see ``--executed``): it
    is graded as it is, without executing again and without re-running the
    checkers. Raises ``FileNotFoundError`` naming the argument for a path that does
    not exist.
    """
    path = Path(notebook)
    if not path.is_file():
        raise FileNotFoundError(
            f"notebook: no such file {str(path)!r}"
        )
    if (
        reference is None
        and (ROOT / "chapters" / path.name).is_file()
    ):
        reference = ROOT / "chapters" / path.name
    if reference is not None and not Path(reference).is_file():
        raise FileNotFoundError(
            f"reference: no such file {str(reference)!r}"
        )
    nb = nbformat.read(path, as_version=4)
    where = str(path)
    statements = find_exercises(nb)  # also validates the markup
    cells = _exercise_cells(nb, where)

    # which exercises are code exercises, and which checker calls to re-run
    if reference is not None:
        ref_nb = nbformat.read(reference, as_version=4)
        ref_cells = _exercise_cells(ref_nb, str(reference))
        code_numbers = set(ref_cells)
        sources = [
            ref_nb.cells[i].source
            for idx in ref_cells.values()
            for i in idx
        ]
        statements = statements or find_exercises(ref_nb)
    else:
        code_numbers = set(cells)
        sources = [
            nb.cells[i].source
            for idx in cells.values()
            for i in idx
        ]
    recheck = list(
        dict.fromkeys(
            call
            for source in sources
            for call in _checker_arguments(source)
        )
    )
    if executed is not None:
        if [c.source for c in executed.cells] != [
            c.source for c in nb.cells
        ]:
            raise ValueError(
                f"executed: its cells are not those of {where} (an execution of an older version?)"
            )
        nb, recheck, dead = executed, [], None
    first_grader_cell = len(nb.cells)
    for number, argument in recheck:
        cell = nbformat.v4.new_code_cell(
            "import rnnlib.homework as _rnnlib_grader_homework\n"
            f"_rnnlib_grader_homework.CHECKERS[{number!r}]({argument})"
        )
        cell.metadata[GRADER_KEY] = number
        nb.cells.append(cell)

    if executed is None:
        dead = _execute(nb, path, timeout, kernel_name)

    grades = []
    stated = [s.number for s in statements]
    numbers = stated + sorted(
        (set(cells) | code_numbers) - set(stated),
        key=lambda n: tuple(map(int, n.split("."))),
    )
    for number in numbers:
        own = cells.get(number, [])
        if number not in code_numbers and not own:
            grades.append(
                ExerciseGrade(
                    number,
                    BY_HAND,
                    "prose exercise: read the answer",
                )
            )
            continue
        if not own:
            grades.append(
                ExerciseGrade(
                    number,
                    MISSING,
                    f"no code cell of exercise {number} (its checker call was removed?)",
                )
            )
            continue
        grade = None
        for index in own:
            error = _error_of(nb.cells[index])
            if error:
                status, detail = _verdict(*error)
                grade = ExerciseGrade(
                    number, status, f"cell {index}: {detail}", own
                )
                break
        if grade is None:
            reruns = [
                c
                for c in nb.cells[first_grader_cell:]
                if c.metadata.get(GRADER_KEY) == number
            ]
            for cell in reruns:
                error = _error_of(cell)
                if error:
                    grade = ExerciseGrade(
                        number, *_verdict(*error), own
                    )
                    break
                out = _stdout_of(cell)
                if (
                    f"Exercise {number}: all" not in out
                    or "checks passed" not in out
                ):
                    grade = ExerciseGrade(
                        number,
                        ERROR,
                        dead
                        or "the checker did not run to its pass line",
                        own,
                    )
                    break
        if grade is None:
            checks = [
                _stdout_of(c).strip()
                for c in nb.cells[first_grader_cell:]
                if c.metadata.get(GRADER_KEY) == number
            ]
            if any(checks):
                detail = "; ".join(
                    line.split(": ", 1)[-1] for line in checks
                )
            else:
                detail = dead or "ran without error (no checker)"
            grade = ExerciseGrade(
                number, PASS if not dead else ERROR, detail, own
            )
        grades.append(grade)

    in_exercises = {i for idx in cells.values() for i in idx}
    others = []
    for index, cell in enumerate(nb.cells[:first_grader_cell]):
        if cell.cell_type == "code" and index not in in_exercises:
            error = _error_of(cell)
            if error:
                others.append((index, *error))
    others = sorted(
        others
        + [
            e
            for e in widget_errors(nb)
            if e[0] < first_grader_cell
        ],
        key=lambda e: e[0],
    )
    if dead:
        others.append((-1, "DeadKernelError", dead))
    return GradeReport(str(path), grades, others)


def student_edition_problems(report: GradeReport) -> list[str]:
    """What is wrong with ``report`` for an untouched student edition (empty when all is well).

    Every automatically graded exercise must be "not done", with the
    ``NotImplementedError`` of its own stub, and no other cell may raise.
    """
    problems = []
    for e in report.exercises:
        if e.auto and (
            e.status != NOT_DONE
            or f"Exercise {e.number}" not in e.detail
        ):
            problems.append(
                f"exercise {e.number}: expected the stub's NotImplementedError, got {e.status}: {e.detail}"
            )
    for index, ename, evalue in report.other_errors:
        problems.append(
            f"cell {index} is not an exercise cell but raised {ename}: {_first_line(evalue)}"
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "notebooks", nargs="+", help="the student's notebook(s)"
    )
    parser.add_argument(
        "--reference",
        help="the instructor notebook of the chapter (default: chapters/<same name>)",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=300,
        help="seconds per cell (default 300)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the grades as JSON",
    )
    parser.add_argument(
        "--expect-stubs",
        action="store_true",
        help="check untouched student-edition notebooks",
    )
    parser.add_argument(
        "--executed",
        metavar="BUILD_DIR",
        help="with --expect-stubs: grade the execution of that book build instead of executing",
    )
    args = parser.parse_args(argv)
    if args.executed and not args.expect_stubs:
        parser.error(
            "--executed grades without re-running the checkers: it serves only --expect-stubs"
        )
    status = 0
    results = []
    for notebook in args.notebooks:
        try:
            executed = (
                executed_in_build(notebook, args.executed)
                if args.executed
                else None
            )
            report = grade_notebook(
                notebook,
                reference=args.reference,
                timeout=args.timeout,
                executed=executed,
            )
        except (FileNotFoundError, ValueError, LookupError) as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        if args.json:
            results.append(
                {
                    **asdict(report),
                    "passed": report.passed,
                    "graded": report.graded,
                }
            )
        elif args.expect_stubs:
            problems = student_edition_problems(report)
            stubs = sum(
                e.status == NOT_DONE for e in report.exercises
            )
            print(
                f"{notebook}: {'OK' if not problems else 'PROBLEMS'} ({stubs} stub{'s' if stubs != 1 else ''} raising NotImplementedError)"
            )
            for problem in problems:
                print(f"  {problem}")
            status = status or (1 if problems else 0)
        else:
            print(report.table())
            print()
    if args.json:
        print(json.dumps(results, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
