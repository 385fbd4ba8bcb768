"""Grade a student's completed chapter notebook offline: one score per exercise.

    python -m booktools.grade path/to/01_rnns_as_functions.ipynb   # or: make grade NB=...
    python -m booktools.grade --json NB.ipynb                      # machine-readable
    python -m booktools.grade --class submissions/ [--out DIR]     # or: make grade SUBMISSIONS=...
    python -m booktools.grade --class submissions/ --student alice # regrade one student (STUDENT=...)
    python -m booktools.grade --expect-stubs student/chapters/*.ipynb            # an untouched student edition
    python -m booktools.grade --expect-stubs --executed student/_build student/chapters/*.ipynb
    python -m booktools.grade --gradebook GRADES_DIR [--config FILE] [--roster roster.csv]

What it executes (by default only the exercise cells, without the student's own
checker calls, and the cells they need: :func:`booktools.cell_deps.cells_to_run`;
``--full``: every cell), the verdicts (pass, FAIL, not done, error, missing, by hand),
partial credit, the time limits, ``--class`` and its gradebook, and the warning about
untrusted code: chapters/instructor_guide.md, "Grading". The exercise code cells are
the cells tagged by the student edition (``metadata.rnnlib_exercise``), the cells that
call ``check_exercise_N_M(...)`` and the cells with solution markers. For each
exercise with a checker (the checker calls of the chapter of the same name in
``chapters/``, or of ``--reference``), the grader draws fresh inputs here
(:func:`grading_seed`), computes their expected values here, and after the
exercise's last cell adds a cell that calls the student's function on those inputs
in the student's kernel (:func:`rnnlib.homework.run_cases`, freshly imported) and
saves what it returns; the results are compared here (:func:`_scored`). So neither
a printed "passed" line, nor a patched checker, torch or numpy, nor a table of the
fixed inputs' answers passes, and a kernel that dies later does not take the
exercise down (it is restarted for the exercises after it).

``--executed BUILD_DIR`` grades the execution that a book build already made (the
notebook's record in ``BUILD_DIR/.jupyter_cache``) without executing again and so
without the re-run checkers: it serves only ``--expect-stubs``, where every exercise
must stop at its stub (``make student-check``).

**The gradebook** (:func:`write_gradebook`): ``--class`` ends by writing, in its
``--out`` folder, ``gradebook.csv`` (a row per submission: the points of each exercise,
partial credit being the share of an exercise's checks passed, the automatic total, the
prose exercises to grade by hand, the submission time, the days late, the late factor,
the total after it, and a note listing every error), ``canvas.csv`` and
``gradescope.csv`` (one row per student and a column per notebook, in the columns
Canvas's gradebook import and Gradescope's score import read; a roster
``student,name,email,sis_id,section`` fills the identities) and
``feedback/<student>__<notebook>.md`` (each exercise's result, points and message; no
message shows an expected value). ``--gradebook GRADES_DIR`` rewrites those files from
``GRADES_DIR/grades.json`` without grading again: after the prose points were typed into
the gradebook (they are kept), the late policy or the points changed, or a roster was
added. Hand-written because the job is small and specific: nbgrader's exporters need its
database, which this grader does not use.

Exit status: 0 when the notebook was graded (whatever the score), 1 when
``--expect-stubs`` finds a problem, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import math
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import yaml
from nbclient.exceptions import DeadKernelError

from booktools.cell_deps import (
    cells_to_run,
    drop_checker_calls,
    parse_cell,
)
from booktools.markup import (
    ANSWER_KEY,
    ANSWER_PLACEHOLDER,
    BEGIN,
    EXERCISE_KEY,
    GRADER_KEY,
    GRADING_CONFIG,
    checker_calls,
    exercise_number,
    find_exercises,
    scan_markdown,
    statements_and_model_answers,
)
from booktools.records import (
    WAITS,
    Client,
    executed_in_build,
    outputs_below,
    widget_state,
)
from booktools.toc import ROOT

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
    #: indices of its code cells in the student's notebook
    cells: list[int] = field(default_factory=list)
    #: the checks it passed on the inputs drawn at grading time, of how many (0 of 0: none drawn)
    cases_passed: int = 0
    cases_total: int = 0
    #: the seed of those inputs (``rnnlib.homework.EXERCISES[number].cases(seed)`` draws them again)
    seed: int | None = None

    @property
    def fraction(self) -> float:
        """The share of its points it earns: 1 for a pass, the share of checks passed otherwise."""
        if self.status == PASS:
            return 1.0
        return self.cases_passed / self.cases_total if self.cases_total else 0.0

    @property
    def auto(self) -> bool:
        """Whether the exercise is graded automatically (not a prose exercise)."""
        return self.status != BY_HAND


@dataclass
class GradeReport:
    """The grades of one notebook, and the errors raised outside exercise cells."""

    notebook: str
    exercises: list[ExerciseGrade]
    #: (cell, exception, message)
    other_errors: list[tuple[int, str, str]] = field(default_factory=list)
    #: the student's answer to each prose exercise ("" when not answered)
    answers: dict[str, str] = field(default_factory=dict)
    skipped: int = 0  #: code cells not executed (fast mode: no exercise needs them)
    seconds: float = 0.0  #: wall time of the grading

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
            lines.append(f"{e.number:<9} {e.status:<9} {detail[0] if detail else ''}")
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
    return next(iter((text or "").strip().splitlines()), "")


def _checker_arguments(source: str) -> list[tuple[str, str]]:
    """``(number, argument source)`` of each ``check_exercise_N_M(arg)`` call that parses in ``source``."""
    tree = parse_cell(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", "")
            numbers = checker_calls(name + "(")
            if numbers and name.startswith("check_exercise_"):
                found.append((numbers[0], ast.unparse(node.args[0])))
    return found


def _exercise_cells(nb: nbformat.NotebookNode, where: str) -> dict[str, list[int]]:
    """Map each exercise number to the indices of its code cells (see the module docstring)."""
    cells: dict[str, list[int]] = {}
    current, gate = None, None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            _, gate, events = scan_markdown(cell.source, gate, f"{where}: cell {index}")
            for kind, label, _title in events:
                if kind in ("exercise", "solution-start"):
                    current = exercise_number(label, f"{where}: cell {index}")
        if cell.cell_type != "code" or cell.metadata.get(GRADER_KEY):
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
            return output.get("ename", "Error"), output.get("evalue", "")
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
    state = widget_state(nb)
    errors = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            view = output.get("data", {}).get(
                "application/vnd.jupyter.widget-view+json"
            )
            if not view:
                continue
            inner = outputs_below(state, view.get("model_id", ""))
            failed = [o for o in inner if o.get("output_type") == "error"]
            for o in failed:
                errors.append(
                    (
                        index,
                        f"{o.get('ename', 'Error')} (inside a widget)",
                        o.get("evalue", ""),
                    )
                )
            interact = "widget-interact" in state.get(view.get("model_id", ""), {}).get(
                "state", {}
            ).get("_dom_classes", [])
            if (
                interact
                and not failed
                and not any("image/png" in o.get("data", {}) for o in inner)
            ):
                errors.append(
                    (
                        index,
                        "NoFigure (inside a widget)",
                        "the explorer shows no figure at its default values",
                    )
                )
    return errors


TIMEOUT_ENAME = "CellTimeoutError"
#: Seconds a cell that is neither an exercise nor a checker may run (``--timeout`` bounds
#: the student's exercise cells; the chapter's own cells, imports included, get this).
SETUP_TIMEOUT = WAITS.grade_setup
#: Seconds a kernel may take to start (a kernel that did not start is not the student's
#: error; booktools.records says why this size).
STARTUP_TIMEOUT = WAITS.kernel_start


def _verdict(ename: str, evalue: str) -> tuple[str, str]:
    if ename in (TIMEOUT_ENAME, "KeyboardInterrupt"):
        return ERROR, evalue or "the cell ran past the time limit"
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
    run: set[int] | None = None,
    exercise_of: dict[int, str] | None = None,
    order: list[int] | None = None,
    limits: dict[int, int] | None = None,
) -> tuple[str, int] | None:
    """Execute ``nb`` in place in ``path``'s folder, errors allowed; ``(message, cell)`` if the kernel died.

    Only the code cells in ``run`` are executed (all when None). A grader cell
    (``metadata.rnnlib_grader``) is not executed when a cell of its exercise
    (``exercise_of``: cell -> exercise) already failed: the verdict is that error,
    and an endless loop is not waited for twice. A cell that runs past its limit
    (``limits``: cell -> seconds, for the exercise cells and the grader's cells;
    ``timeout`` for the others' floor, at least :data:`SETUP_TIMEOUT`) is
    interrupted and gets a ``CellTimeoutError``. ``order`` is the order of
    execution (default: the notebook's). When the kernel dies, the cells after
    the one it died in are not executed, and that cell's index is returned.
    """
    exercise_of = exercise_of or {}
    limits = limits or {}
    by_id = {id(nb.cells[i]): s for i, s in limits.items()}
    graded = {id(nb.cells[i]) for i in exercise_of} | {
        id(c) for c in nb.cells if c.metadata.get(GRADER_KEY)
    }
    setup = max(timeout, SETUP_TIMEOUT)

    def limit_of(cell) -> int:
        if id(cell) in by_id:
            return by_id[id(cell)]
        return timeout if id(cell) in graded else setup

    client = Client(  # IPC kernels, the reply polled in slices (booktools.records)
        nb,
        timeout=timeout,
        startup_timeout=STARTUP_TIMEOUT,
        timeout_func=limit_of,
        kernel_name=kernel_name,
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={
            "ename": TIMEOUT_ENAME,
            "evalue": "the cell ran past its time limit and was interrupted",
            "traceback": [],
        },
        resources={"metadata": {"path": str(path.resolve().parent)}},
    )
    failed: set[str] = set()
    index = -1
    try:
        client.reset_execution_trackers()
        with client.setup_kernel():
            for index in order if order is not None else range(len(nb.cells)):
                cell = nb.cells[index]
                if cell.cell_type != "code" or (run is not None and index not in run):
                    continue
                if cell.metadata.get(GRADER_KEY) in failed:
                    continue
                client.execute_cell(
                    cell,
                    index,
                    execution_count=client.code_cells_executed + 1,
                )
                error = _error_of(cell)
                if error and index in exercise_of:
                    failed.add(exercise_of[index])
                if error and error[0] in (
                    "KeyboardInterrupt",
                    TIMEOUT_ENAME,
                ):
                    cell.outputs = [
                        o for o in cell.outputs if o.get("output_type") != "error"
                    ] + [
                        nbformat.v4.new_output(
                            "error",
                            ename=TIMEOUT_ENAME,
                            evalue=f"the cell ran past its time limit of {limit_of(cell)} s and was interrupted",
                            traceback=[],
                        )
                    ]
            client.set_widgets_metadata()
    except DeadKernelError as exc:  # the rest of the cells did not run
        exercise = nb.cells[index].metadata.get(GRADER_KEY)
        where = (
            f"while exercise {exercise} ran on fresh inputs"
            if exercise
            else f"in cell {index}"
        )
        return f"the kernel died {where}: {exc}", index
    return None


#: The time limit of an exercise's cells and of the grader's run of it: this many seconds,
#: plus :data:`LIMIT_FACTOR` times the reference solution's time on the same fresh inputs
#: (measured in the grader's process), at most ``--timeout``. The reference solutions take
#: 1-200 ms; a student's loop in Python may take a hundred times longer and still pass, an
#: endless loop costs about this long instead of ``--timeout``.
LIMIT_FLOOR = 20
LIMIT_FACTOR = 100


@dataclass
class FreshCases:
    """The inputs of one exercise drawn at grading time, and their expected values (kept in the grader's process)."""

    number: str
    seed: int
    descriptions: list[str]
    expected: list
    atol: float
    rtol: float
    #: the file of inputs handed to the student's kernel
    inputs: Path
    results: Path  #: the folder where the student's kernel writes its results
    limit: int  #: seconds for the exercise's cells and for the run on these inputs


def grading_seed(key: str | None, number: str) -> int:
    """The seed of exercise ``number``'s inputs at grading time: random, or derived from ``key``.

    ``key`` is the class's secret with the student and the notebook
    (:func:`grade_class`): the same submission regraded draws the same inputs (a
    regrade gives the same score), two students draw different ones, and no
    student can compute them (the secret is not in the installed package).
    Without a key, a random seed.
    """
    if key is None:
        return secrets.randbits(62)
    digest = hashlib.sha256(f"{key}\n{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def _fresh_cases(
    number: str,
    workdir: Path,
    timeout: int,
    key: str | None = None,
) -> FreshCases:
    """Draw exercise ``number``'s inputs (:func:`grading_seed`), compute the expected values here, save the inputs."""
    import torch

    import rnnlib.homework as homework

    spec = homework.EXERCISES.get(number)
    if spec is None:
        raise LookupError(
            f"exercise {number} has a checker call but no registered rnnlib.homework.Exercise"
        )
    seed = grading_seed(key, number)
    cases = spec.cases(seed)
    began = time.perf_counter()
    expected = spec.expected(cases)
    reference_s = time.perf_counter() - began
    folder = workdir / number
    folder.mkdir(parents=True)
    inputs = folder / "inputs.pt"
    torch.save([(c.description, c.args, c.kwargs) for c in cases], inputs)
    return FreshCases(
        number,
        seed,
        [c.description for c in cases],
        expected,
        spec.atol,
        spec.rtol,
        inputs,
        folder / "results",
        min(
            timeout,
            math.ceil(LIMIT_FLOOR + LIMIT_FACTOR * reference_s),
        ),
    )


def _scored(fresh: FreshCases) -> tuple[int, int, list[str]]:
    """``(passed, not done, failure messages)`` of the student's results on ``fresh``, compared here.

    The results are read as data (:func:`rnnlib.homework.read_results`) and
    compared with :func:`rnnlib.homework.mismatch` in this process: whatever the
    student's cells patched in their kernel, only the arrays they returned count.
    """
    from rnnlib.homework import mismatch, read_results

    passed, not_done, failures = 0, 0, []
    results = read_results(fresh.results, len(fresh.descriptions))
    for index, (description, result) in enumerate(zip(fresh.descriptions, results)):
        if result.status == "ok":
            message = mismatch(
                fresh.number,
                description,
                result.value,
                result.dtype,
                fresh.expected[index],
                fresh.atol,
                fresh.rtol,
            )
            if message is None:
                passed += 1
            else:
                failures.append(message)
        elif result.status == "missing":
            failures.append(
                f"Exercise {fresh.number}: did not run on input: {description} ({result.message})"
            )
        else:
            not_done += result.status == "not done"
            failures.append(result.message)
    return passed, not_done, failures


def _run_submission(
    nb: nbformat.NotebookNode,
    path: Path,
    cells: dict[str, list[int]],
    first_grader_cell: int,
    fresh: dict[str, FreshCases],
    timeout: int,
    kernel_name: str,
    fast: bool,
) -> tuple[int, list[tuple[int, str]]]:
    """Execute a submission with its grader cells; ``(cells skipped, [(cell, message) of each kernel death])``.

    The student's own checker calls are dropped from the exercise cells
    (:func:`drop_checker_calls`); each exercise's grader cell runs right after
    its last cell. A kernel that dies is restarted for the exercises after the
    cell it died in (their setup cells run again; the cell it died in does not),
    at most :data:`MAX_RESTARTS` times.
    """
    exercise_of = {i: number for number, idx in cells.items() for i in idx}
    for index in exercise_of:
        nb.cells[index].source = drop_checker_calls(nb.cells[index].source)
    graders = list(range(first_grader_cell, len(nb.cells)))
    limits = {g: fresh[nb.cells[g].metadata[GRADER_KEY]].limit for g in graders} | {
        i: fresh[number].limit for i, number in exercise_of.items() if number in fresh
    }
    run = None
    skipped = 0
    if fast:
        run = cells_to_run(nb, set(exercise_of) | set(graders))
        skipped = sum(
            c.cell_type == "code" and i not in run for i, c in enumerate(nb.cells)
        )
    order = []
    for index in range(first_grader_cell):
        order.append(index)
        order += [
            g
            for g in graders
            if max(cells.get(nb.cells[g].metadata[GRADER_KEY], [-1])) == index
        ]
    order += [g for g in graders if g not in order]
    deaths: list[tuple[int, str]] = []
    todo = order
    while True:
        died = _execute(
            nb,
            path,
            timeout,
            kernel_name,
            run,
            exercise_of,
            todo,
            limits,
        )
        if died is None:
            break
        message, at = died
        deaths.append((at, message))
        rest = todo[todo.index(at) + 1 :] if at in todo else []
        later = [i for i in rest if i in exercise_of or i in graders]
        if not later or len(deaths) > MAX_RESTARTS:
            break
        # a fresh kernel: the setup cells the later exercises need, then those exercises
        needed = cells_to_run(nb, set(later)) - {at}
        done = set(todo) - set(rest)
        todo = [
            i
            for i in order
            if i in needed
            and (i in rest or (i in done and i not in exercise_of and i not in graders))
        ]
        run = set(todo)
    return skipped, deaths


#: Kernel restarts after a death, per submission (a cell that kills every kernel is not re-run).
MAX_RESTARTS = 3


def _grades(
    nb: nbformat.NotebookNode,
    cells: dict[str, list[int]],
    code_numbers: set[str],
    statements: list,
    first_grader_cell: int,
    fresh: dict[str, FreshCases],
    deaths: list[tuple[int, str]],
) -> list[ExerciseGrade]:
    """The verdict on each exercise of an executed submission (or a build's execution, with no fresh cases)."""
    answers = collect_answers(nb)
    grades = []
    stated = [s.number for s in statements]
    numbers = stated + sorted(
        (set(cells) | code_numbers) - set(stated),
        key=lambda n: tuple(map(int, n.split("."))),
    )
    died_in = {at: message for at, message in deaths}
    for number in numbers:
        own = cells.get(number, [])
        if number not in code_numbers and not own:
            answer = answers.get(number)
            grades.append(
                ExerciseGrade(
                    number,
                    BY_HAND,
                    "prose exercise: no answer cell"
                    if answer is None
                    else "prose exercise: not answered"
                    if not answer
                    else f"prose exercise: answered ({len(answer.split())} words), read it",
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
        total = len(fresh[number].descriptions) if number in fresh else 0
        grade = ExerciseGrade(number, PASS, "", own, 0, total)
        if number in fresh:
            grade.seed = fresh[number].seed
        reruns = [
            i
            for i in range(first_grader_cell, len(nb.cells))
            if nb.cells[i].metadata.get(GRADER_KEY) == number
        ]
        own_error = next(
            (
                (ERROR, died_in[i])
                if i in died_in
                else (lambda v: (v[0], f"cell {i}: {v[1]}"))(
                    _verdict(*_error_of(nb.cells[i]))
                )
                for i in own
                if i in died_in or _error_of(nb.cells[i])
            ),
            None,
        )
        run_error = next(
            (
                (ERROR, died_in[i])
                if i in died_in
                else _verdict(*_error_of(nb.cells[i]))
                for i in reruns
                if i in died_in or _error_of(nb.cells[i])
            ),
            None,
        )
        if own_error:  # the exercise's own cells did not run: nothing to score
            grade.status, grade.detail = own_error
        elif number in fresh:
            passed, not_done, failures = _scored(fresh[number])
            grade.cases_passed = passed
            score = f"{passed} of {total} checks passed on fresh inputs"
            if run_error:
                grade.status = FAIL if passed else ERROR
                grade.detail = f"{score}; {run_error[1]}"
            elif not_done == total:
                grade.status, grade.detail = NOT_DONE, failures[0]
            elif passed == total:
                grade.detail = f"all {score.split(' of ')[1]}"
            else:
                grade.status, grade.detail = (
                    FAIL,
                    f"{score}; {failures[0]}",
                )
        elif deaths:
            grade.status, grade.detail = ERROR, deaths[0][1]
        else:
            grade.detail = "ran without error (no checker)"
        grades.append(grade)
    return grades


def grade_notebook(
    notebook: str | Path,
    *,
    reference: str | Path | None = None,
    timeout: int = WAITS.grade_exercise,
    kernel_name: str = "python3",
    executed: nbformat.NotebookNode | None = None,
    fast: bool = True,
    seed_key: str | None = None,
) -> GradeReport:
    """Execute ``notebook`` in a fresh kernel and grade each of its exercises.

    ``reference`` is the instructor notebook of the chapter; by default the
    notebook of the same name in ``chapters/`` if there is one. ``executed`` is
    an execution of ``notebook`` made elsewhere (a build's, see ``--executed``): it
    is graded as it is, without executing again and without re-running the
    checkers. With ``fast`` (the default) only the exercise cells, cut after
    their last checker call, the grader's checker cells and the cells they need
    (:func:`cells_to_run`) are executed; ``fast=False`` executes every cell.
    Each exercise runs on inputs drawn now (:func:`grading_seed` of
    ``seed_key``), its expected values computed in this process; it earns the
    share of those checks it passes (:attr:`ExerciseGrade.fraction`).
    Raises ``FileNotFoundError`` naming the argument for a path that does
    not exist.
    """
    path = Path(notebook)
    if not path.is_file():
        raise FileNotFoundError(f"notebook: no such file {str(path)!r}")
    reference = _reference_of(path, None if reference is None else Path(reference))
    if reference is not None and not Path(reference).is_file():
        raise FileNotFoundError(f"reference: no such file {str(reference)!r}")
    nb = nbformat.read(path, as_version=4)
    where = str(path)
    statements = find_exercises(nb)  # also validates the markup
    cells = _exercise_cells(nb, where)

    # which exercises are code exercises, and which checker calls to re-run
    if reference is not None:
        ref_nb = nbformat.read(reference, as_version=4)
        ref_cells = _exercise_cells(ref_nb, str(reference))
        code_numbers = set(ref_cells)
        sources = [ref_nb.cells[i].source for idx in ref_cells.values() for i in idx]
        statements = statements or find_exercises(ref_nb)
    else:
        code_numbers = set(cells)
        sources = [nb.cells[i].source for idx in cells.values() for i in idx]
    recheck = list(
        dict.fromkeys(call for source in sources for call in _checker_arguments(source))
    )
    if executed is not None:
        if [c.source for c in executed.cells] != [c.source for c in nb.cells]:
            raise ValueError(
                f"executed: its cells are not those of {where} (an execution of an older version?)"
            )
        nb, recheck = executed, []
    started = time.monotonic()
    first_grader_cell = len(nb.cells)
    workdir = Path(tempfile.mkdtemp(prefix="rnnlib-grade-"))
    try:
        fresh = {
            number: _fresh_cases(number, workdir, timeout, seed_key)
            for number, _argument in recheck
        }
        for number, argument in recheck:
            # the student's function on the fresh inputs, with the checkers freshly imported
            cell = nbformat.v4.new_code_cell(
                "import sys as _rnnlib_grader_sys\n"
                "for _m in [m for m in _rnnlib_grader_sys.modules if m.startswith('rnnlib.homework')]:\n"
                "    del _rnnlib_grader_sys.modules[_m]\n"
                "import rnnlib.homework as _rnnlib_grader_homework\n"
                f"_rnnlib_grader_homework.run_cases({number!r}, {argument}, "
                f"{str(fresh[number].inputs)!r}, {str(fresh[number].results)!r})"
            )
            cell.metadata[GRADER_KEY] = number
            nb.cells.append(cell)
        skipped, deaths = 0, []
        if executed is None:
            skipped, deaths = _run_submission(
                nb,
                path,
                cells,
                first_grader_cell,
                fresh,
                timeout,
                kernel_name,
                fast,
            )
        grades = _grades(
            nb,
            cells,
            code_numbers,
            statements,
            first_grader_cell,
            fresh,
            deaths,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    in_exercises = {i for idx in cells.values() for i in idx}
    others = []
    for index, cell in enumerate(nb.cells[:first_grader_cell]):
        if cell.cell_type == "code" and index not in in_exercises:
            error = _error_of(cell)
            if error:
                others.append((index, *error))
    others = sorted(
        others + [e for e in widget_errors(nb) if e[0] < first_grader_cell],
        key=lambda e: e[0],
    )
    others += [(-1, "DeadKernelError", message) for _, message in deaths]
    answers = collect_answers(nb)
    return GradeReport(
        str(path),
        grades,
        others,
        {g.number: answers.get(g.number, "") for g in grades if not g.auto},
        skipped,
        round(time.monotonic() - started, 2),
    )


def collect_answers(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The text of each answer cell (``metadata.rnnlib_answer``) of a student notebook, by exercise.

    An untouched answer cell gives ""; a cell whose metadata was lost is still
    found by its first words, ``**Your answer to exercise N.M.**``.
    """
    answers: dict[str, list[str]] = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        number = cell.metadata.get(ANSWER_KEY)
        text = cell.source.strip()
        if number is None and text.startswith("**Your answer to exercise "):
            number = text.split("exercise ", 1)[1].split(".**", 1)[0]
        if number is None:
            continue
        text = text.removeprefix(f"**Your answer to exercise {number}.**").strip()
        if text == ANSWER_PLACEHOLDER:
            text = ""
        answers.setdefault(str(number), []).append(text)
    return {n: "\n\n".join(t for t in texts if t) for n, texts in answers.items()}


def student_edition_problems(report: GradeReport) -> list[str]:
    """What is wrong with ``report`` for an untouched student edition (empty when all is well).

    Every automatically graded exercise must be "not done", with the
    ``NotImplementedError`` of its own stub, and no other cell may raise.
    """
    problems = []
    for e in report.exercises:
        if e.auto and (e.status != NOT_DONE or f"Exercise {e.number}" not in e.detail):
            problems.append(
                f"exercise {e.number}: expected the stub's NotImplementedError, got {e.status}: {e.detail}"
            )
    for index, ename, evalue in report.other_errors:
        problems.append(
            f"cell {index} is not an exercise cell but raised {ename}: {_first_line(evalue)}"
        )
    return problems


# --------------------------------------------------------------------------- a class at once


def _student_of(path: Path, folder: Path) -> str:
    """``folder/alice/05_sgd.ipynb`` -> ``alice``; ``folder/alice.ipynb`` -> ``alice``."""
    rel = path.relative_to(folder)
    return "/".join(rel.parts[:-1]) if len(rel.parts) > 1 else rel.stem


def _reference_of(path: Path, reference: Path | None) -> Path | None:
    if reference is not None:
        return reference
    candidate = ROOT / "chapters" / path.name
    return candidate if candidate.is_file() else None


def _grade_in_a_process(
    path: Path,
    reference: Path | None,
    timeout: int,
    limit: int,
    fast: bool,
    seed_key: str | None = None,
) -> dict:
    """Grade one submission in its own process (and kernel), killed after ``limit`` seconds."""
    command = [
        sys.executable,
        "-m",
        "booktools.grade",
        "--json",
        "--timeout",
        str(timeout),
        *(["--reference", str(reference)] if reference else []),
        *([] if fast else ["--full"]),
        *(["--seed-key", seed_key] if seed_key else []),
        str(path),
    ]
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
        ),
    }
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its kernel too is killed with the group
    )
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return {
            "failure": f"the grading ran past the limit of {limit} s per submission and was stopped",
            "seconds": round(time.monotonic() - started, 2),
        }
    try:
        report = json.loads(out)[0]
    except (json.JSONDecodeError, IndexError):
        last = (err or out).strip().splitlines()
        return {
            "failure": f"the grader failed (exit status {process.returncode}): "
            + (last[-1] if last else "no output"),
            "seconds": round(time.monotonic() - started, 2),
        }
    report["wall_seconds"] = round(time.monotonic() - started, 2)
    return report


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _answers_file(
    student: str,
    report: dict,
    reference: Path | None,
    points: dict[str, float],
) -> str:
    statements, models = (
        statements_and_model_answers(nbformat.read(reference, as_version=4))
        if reference
        else ({}, {})
    )
    lines = [
        f"# Answers of {student} to the prose exercises",
        "",
        f"Submission: `{report.get('notebook', '?')}`. Grade each answer with the rubric of the",
        'instructor guide ("Grading proofs and explanations"); the model answer is the',
        "instructor edition's. Write the points in the gradebook's column of the exercise.",
    ]
    answers = report.get("answers", {})
    if not answers:
        lines += ["", "(This chapter has no prose exercise.)"]
    for number, answer in answers.items():
        lines += [
            "",
            f"## Exercise {number} ({_number(points.get(number, 1))} points)",
            "",
            "### Statement",
            "",
            statements.get(number, "(see the chapter)"),
            "",
            "### The student's answer",
            "",
            answer or "*(not answered)*",
            "",
            "### Model answer (instructor edition)",
            "",
            models.get(number, "(none in the chapter)"),
            "",
            f"Points: ____ / {_number(points.get(number, 1))}",
        ]
    return "\n".join(lines) + "\n"


def answers_name(student: str, notebook: Path) -> str:
    """``answers/`` file of one submission: keyed by student and notebook (``alice__05_sgd.md``).

    A student who hands in two notebooks gets two files, not one overwritten by the other.
    """
    return f"{student.replace('/', '_')}__{Path(notebook).stem}.md"


#: The class's secret, in the grades folder: the grading inputs of each submission derive from it.
SECRET_FILE = ".grading_secret"


def class_secret(out: Path) -> str:
    """The secret of a class's grading (``out/.grading_secret``, made on the first grading, mode 0600).

    The fresh inputs of each submission derive from it (:func:`grading_seed`):
    a regrade draws the same ones. Keep the grades folder private.
    """
    path = out / SECRET_FILE
    if not path.is_file():
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(16), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


def grade_class(
    folder: str | Path,
    out: str | Path,
    *,
    reference: str | Path | None = None,
    jobs: int | None = None,
    timeout: int = WAITS.grade_exercise,
    limit: int = WAITS.grade_submission,
    fast: bool = True,
    config: str | Path = GRADING_CONFIG,
    student: str | None = None,
    roster: str | Path | None = None,
) -> list[dict]:
    """Grade every ``.ipynb`` under ``folder`` in parallel; write the gradebook to ``out``.

    Each submission is graded in its own process and kernel (``jobs`` at once,
    default: the cores this process may use), stopped after ``limit`` seconds;
    an exercise's cells are interrupted after its own limit (at most
    ``timeout``). ``student``: regrade that student's submissions only, into the
    existing ``out/grades.json`` (the others' records, and every prose point typed
    into the gradebook, are kept). Writes ``out/grades.json`` (every verdict and
    message, the seed of each exercise's inputs, the submission time),
    ``out/answers/<student>__<notebook>.md`` (:func:`answers_name`: the answers to
    the prose exercises beside the statement and the model answer) and, through
    :func:`write_gradebook` (``config``'s points and late
    policy, ``roster``), the gradebook, the LMS exports and the feedback files.
    Returns the JSON records.
    """
    folder, out = Path(folder), Path(out)
    if not folder.is_dir():
        raise FileNotFoundError(f"submissions: no such folder {str(folder)!r}")
    submissions = sorted(
        p
        for p in folder.rglob("*")
        if p.suffix == ".ipynb"
        and ".ipynb_checkpoints" not in p.parts
        and not p.resolve().is_relative_to(out.resolve())
    )
    if not submissions:
        raise FileNotFoundError(f"submissions: no .ipynb under {str(folder)!r}")
    owner = {p: _student_of(p, folder) for p in submissions}
    earlier: list[dict] = []
    if student is not None:
        mine = [p for p in submissions if owner[p] == student]
        if not mine:
            raise FileNotFoundError(
                f"student: no submission of {student!r} under {str(folder)!r} "
                f"(students: {', '.join(sorted(set(owner.values())))})"
            )
        if not (out / "grades.json").is_file():
            raise FileNotFoundError(
                f"student: no gradebook to regrade into ({out / 'grades.json'} does not exist; grade the class first)"
            )
        earlier = [
            r
            for r in json.loads((out / "grades.json").read_text(encoding="utf-8"))[
                "grades"
            ]
            if r["student"] != student
        ]
        submissions = mine
    points, _policy = read_config(Path(config))  # validated before any grading
    secret = class_secret(out)
    handed_in = submission_times(folder, {p: owner[p] for p in submissions})
    jobs = jobs or len(os.sched_getaffinity(0))
    started = time.monotonic()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    references = {
        p: _reference_of(p, Path(reference) if reference else None) for p in submissions
    }
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        reports = list(
            pool.map(
                lambda p: _grade_in_a_process(
                    p,
                    references[p],
                    timeout,
                    limit,
                    fast,
                    f"{secret}\n{owner[p]}\n{p.name}",
                ),
                submissions,
            )
        )
    records = []
    for path, report in zip(submissions, reports):
        ref = references[path]
        if "failure" in report:
            # every exercise of the chapter gets the failure
            report.update(
                notebook=str(path),
                answers={},
                exercises=[
                    asdict(
                        ExerciseGrade(e.number, BY_HAND)
                        if e.kind == "prose"
                        else ExerciseGrade(e.number, ERROR, report["failure"])
                    )
                    for e in (find_exercises(ref) if ref else [])
                ],
            )
        records.append(
            {
                "student": owner[path],
                **report,
                "submitted": handed_in[path].isoformat(),
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "answers").mkdir(exist_ok=True)
    for path, record in zip(submissions, records):
        (out / "answers" / answers_name(record["student"], path)).write_text(
            _answers_file(record["student"], record, references[path], points),
            encoding="utf-8",
        )
    seconds = round(time.monotonic() - started, 1)
    # the CPU of the graders and their kernels (each reaps its kernel)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = round(
        after.ru_utime + after.ru_stime - (cpu_before.ru_utime + cpu_before.ru_stime),
        1,
    )
    every = sorted(
        earlier + records,
        key=lambda r: (r["student"], Path(r["notebook"]).name),
    )
    (out / "grades.json").write_text(
        json.dumps(
            {
                "submissions": len(every),
                "graded_now": len(records),
                "jobs": jobs,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "fast": fast,
                "grades": every,
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    write_gradebook(every, out, config=config, roster=roster)
    print(
        f"graded {len(records)} submission{'s' if len(records) != 1 else ''} in {seconds} s "
        f"({jobs} at a time, {cpu} s of CPU) into {out}/: gradebook.csv, canvas.csv, "
        "gradescope.csv, grades.json, feedback/, answers/"
    )
    return records


# The gradebook: the CSV, the late policy, the LMS exports and the feedback files

#: Optional file in the submissions folder: ``student,notebook,submitted`` (ISO 8601 times,
#: as an LMS download lists them); without it, a notebook's modification time counts.
SUBMITTED_FILE = "submitted.csv"


def exercise_key(number: str) -> tuple[int, ...]:
    """``"10.2"`` -> ``(10, 2)``: exercises in the book's order."""
    return tuple(map(int, number.split(".")))


@dataclass(frozen=True)
class LatePolicy:
    """The deadline and what lateness costs (``late:`` in the grading file).

    A submission ``d`` days late (a started day counts, ``ceil``) keeps
    ``max(0, 1 - penalty_per_day * d)`` of its points; later than ``max_days``
    days it keeps none. Without a deadline nothing is late.
    """

    deadline: datetime | None = None
    penalty_per_day: float = 0.0
    max_days: float | None = None

    def days_late(self, submitted: datetime | None) -> int:
        """Whole days (started days count) after the deadline; 0 when on time or unknown."""
        if self.deadline is None or submitted is None:
            return 0
        seconds = (submitted - self.deadline).total_seconds()
        return max(0, math.ceil(seconds / 86400))

    def factor(self, days: int) -> float:
        """The share of its points a submission ``days`` late keeps."""
        if days <= 0:
            return 1.0
        if self.max_days is not None and days > self.max_days:
            return 0.0
        return max(0.0, 1.0 - self.penalty_per_day * days)


def _aware(value: str | datetime, what: str) -> datetime:
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if stamp.tzinfo is None:
        raise ValueError(
            f"{what}: {value!r} has no time zone (write e.g. 2027-01-15T23:59:00+01:00)"
        )
    return stamp


def read_config(
    config: str | Path = GRADING_CONFIG,
) -> tuple[dict[str, float], LatePolicy]:
    """The points per exercise and the late policy of a grading file."""
    path = Path(config)
    if not path.is_file():
        raise FileNotFoundError(f"config: no such file {str(path)!r}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    points = {str(k): float(v) for k, v in (data.get("points") or {}).items()}
    late = data.get("late") or {}
    unknown = set(late) - {
        "deadline",
        "penalty_per_day",
        "max_days",
    }
    if unknown:
        raise ValueError(
            f"config: late: unknown key(s) {sorted(unknown)}; expected deadline, penalty_per_day, max_days"
        )
    penalty = float(late.get("penalty_per_day") or 0.0)
    if not 0.0 <= penalty <= 1.0:
        raise ValueError(
            f"config: late.penalty_per_day must be in [0, 1], got {penalty}"
        )
    max_days = late.get("max_days")
    policy = LatePolicy(
        _aware(late["deadline"], "config: late.deadline")
        if late.get("deadline")
        else None,
        penalty,
        None if max_days is None else float(max_days),
    )
    return points, policy


def submission_times(
    folder: Path, submissions: dict[Path, str]
) -> dict[Path, datetime]:
    """When each submission (path -> student) was handed in: ``submitted.csv`` if listed, else its file time (UTC)."""
    listed: dict[tuple[str, str], datetime] = {}
    table = folder / SUBMITTED_FILE
    if table.is_file():
        with open(table, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                try:
                    key = (
                        row["student"],
                        row.get("notebook") or "",
                    )
                    listed[key] = _aware(
                        row["submitted"],
                        f"{table}: {row['student']}",
                    )
                except KeyError as exc:
                    raise ValueError(
                        f"{table}: expected the columns student, notebook, submitted; missing {exc}"
                    ) from None
    out = {}
    for path, student in submissions.items():
        out[path] = (
            listed.get((student, path.name))
            or listed.get((student, ""))
            or datetime.fromtimestamp(path.stat().st_mtime, UTC)
        )
    return out


def read_roster(
    path: str | Path | None,
) -> dict[str, dict[str, str]]:
    """``roster.csv`` (``student,name,email,sis_id,section``; only ``student`` required) by student."""
    if path is None:
        return {}
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"roster: no such file {str(path)!r}")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and "student" not in rows[0]:
        raise ValueError(
            f"roster: {path} has no 'student' column (the submission folder's name of each student)"
        )
    return {r["student"]: r for r in rows}


def fraction(e: dict) -> float:
    """The share of its points an exercise's verdict earns: 1 for a pass, else the share of its checks passed."""
    if e["status"] == PASS:
        return 1.0
    total = e.get("cases_total") or 0
    return (e.get("cases_passed") or 0) / total if total else 0.0


def note(record: dict) -> str:
    """The gradebook's note: a failed grading, and every error raised outside the exercises."""
    notes = [record["failure"]] if record.get("failure") else []
    notes += [
        f"cell {index} (not an exercise cell) raised {ename}: {_first_line(evalue)}"
        for index, ename, evalue in record.get("other_errors", [])
    ]
    return "; ".join(notes)


def feedback_name(student: str, notebook: str | Path) -> str:
    """The file of one submission (``alice__05_sgd.md``): keyed by student and notebook."""
    return f"{student.replace('/', '_')}__{Path(notebook).stem}.md"


@dataclass
class Row:
    """One submission's line of the gradebook."""

    student: str
    notebook: str
    cells: dict[
        str, str
    ]  #: exercise -> points ("" for a prose exercise not yet graded)
    auto: float
    auto_max: float
    by_hand: list[str]
    prose: float  #: the points typed in for the prose exercises
    prose_max: float
    submitted: datetime | None
    days_late: int
    factor: float
    note: str

    @property
    def total(self) -> float:
        return round((self.auto + self.prose) * self.factor, 2)

    @property
    def total_max(self) -> float:
        return self.auto_max + self.prose_max


def _rows(
    records: list[dict],
    points: dict[str, float],
    policy: LatePolicy,
    numbers: list[str],
    typed: dict[tuple[str, str], dict[str, str]],
) -> list[Row]:
    rows = []
    for record in records:
        notebook = Path(record["notebook"]).name
        by_number = {e["number"]: e for e in record["exercises"]}
        cells, auto, auto_max, prose, prose_max = (
            {},
            0.0,
            0.0,
            0.0,
            0.0,
        )
        kept = typed.get((record["student"], notebook), {})
        for number in numbers:
            e = by_number.get(number)
            worth = points.get(number, 1.0)
            if e is None:
                cells[number] = ""
            elif e["status"] == BY_HAND:
                value = (kept.get(number) or "").strip()
                if value:
                    try:
                        given = float(value)
                    except ValueError:
                        raise ValueError(
                            f"gradebook.csv: {record['student']}, {notebook}, exercise {number}: "
                            f"{value!r} is not a number of points"
                        ) from None
                    if not 0 <= given <= worth:
                        raise ValueError(
                            f"gradebook.csv: {record['student']}, {notebook}, exercise {number}: "
                            f"{given:g} points is outside [0, {worth:g}]"
                        )
                    prose += given
                cells[number] = value
                prose_max += worth
            else:
                earned = round(worth * fraction(e), 2)
                cells[number] = _number(earned)
                auto += earned
                auto_max += worth
        submitted = (
            datetime.fromisoformat(record["submitted"])
            if record.get("submitted")
            else None
        )
        days = policy.days_late(submitted)
        rows.append(
            Row(
                record["student"],
                notebook,
                cells,
                round(auto, 2),
                auto_max,
                [e["number"] for e in record["exercises"] if e["status"] == BY_HAND],
                prose,
                prose_max,
                submitted,
                days,
                policy.factor(days),
                note(record),
            )
        )
    return rows


GRADEBOOK_COLUMNS = [
    "auto_points",
    "auto_max",
    "by_hand",
    "submitted",
    "days_late",
    "late_factor",
    "total",
    "total_max",
    "note",
]


def _typed_prose(
    out: Path, numbers: list[str]
) -> dict[tuple[str, str], dict[str, str]]:
    """The prose points already typed into ``out/gradebook.csv``, by (student, notebook)."""
    path = out / "gradebook.csv"
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {
            (r["student"], r["notebook"]): {n: r.get(n, "") for n in numbers}
            for r in csv.DictReader(f)
        }


def _feedback(row: Row, record: dict, points: dict[str, float]) -> str:
    lines = [
        f"# Feedback: {row.notebook}",
        "",
        f"Student: {row.student}. Submitted: "
        + (row.submitted.isoformat(timespec="minutes") if row.submitted else "unknown")
        + (
            f", {row.days_late} day{'s' if row.days_late != 1 else ''} late "
            f"(the points are multiplied by {row.factor:g})"
            if row.days_late
            else ""
        )
        + ".",
        "",
        "Each code exercise was run on inputs drawn at grading time (not those of the",
        "checker in your notebook) and earns the share of its checks it passed.",
        "",
        "| exercise | result | points |",
        "|---|---|---|",
    ]
    details = []
    for e in record["exercises"]:
        worth = _number(points.get(e["number"], 1.0))
        got = row.cells.get(e["number"], "")
        if e["status"] == BY_HAND:
            shown = f"{got} / {worth}" if got else f"graded by hand (out of {worth})"
        else:
            shown = f"{got} / {worth}"
        lines.append(f"| {e['number']} | {e['status']} | {shown} |")
        if e["status"] not in (PASS, BY_HAND) and e.get("detail"):
            details += [
                "",
                f"## Exercise {e['number']}: {e['status']}",
                "",
                "```text",
                e["detail"].strip(),
                "```",
            ]
    lines += [
        "",
        f"Total: {_number(row.total)} / {_number(row.total_max)}"
        + (
            ""
            if all(row.cells.get(n) for n in row.by_hand)
            else " (the prose exercises are still to be graded)"
        ),
    ]
    if row.note:
        lines += ["", f"Other problems: {row.note}"]
    return "\n".join(lines + details) + "\n"


def write_gradebook(
    records: list[dict],
    out: str | Path,
    *,
    config: str | Path = GRADING_CONFIG,
    roster: str | Path | None = None,
) -> list[Row]:
    """Write ``gradebook.csv``, ``canvas.csv``, ``gradescope.csv`` and ``feedback/`` in ``out`` from ``records``.

    ``records`` are the grader's (``grades.json``'s ``grades``). Prose points
    already typed into ``out/gradebook.csv`` are kept (a regrade does not wipe
    them). Returns the rows.
    """
    out = Path(out)
    points, policy = read_config(config)
    people = read_roster(roster)
    numbers = sorted(
        {e["number"] for r in records for e in r["exercises"]},
        key=exercise_key,
    )
    rows = _rows(
        records,
        points,
        policy,
        numbers,
        _typed_prose(out, numbers),
    )
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "gradebook.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "notebook", *numbers, *GRADEBOOK_COLUMNS])
        for row in rows:
            writer.writerow(
                [row.student, row.notebook, *row.cells.values()]
                + [
                    _number(row.auto),
                    _number(row.auto_max),
                    " ".join(row.by_hand),
                    row.submitted.isoformat(timespec="seconds")
                    if row.submitted
                    else "",
                    row.days_late,
                    _number(row.factor),
                    _number(row.total),
                    _number(row.total_max),
                    row.note,
                ]
            )
    assignments = sorted({Path(r.notebook).stem for r in rows})
    students = sorted({r.student for r in rows})
    total = {(r.student, Path(r.notebook).stem): r.total for r in rows}
    with open(out / "canvas.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "Student",
                "ID",
                "SIS User ID",
                "SIS Login ID",
                "Section",
                *assignments,
            ]
        )
        for s in students:
            p = people.get(s, {})
            writer.writerow(
                [
                    p.get("name") or s,
                    p.get("canvas_id", ""),
                    p.get("sis_id", ""),
                    p.get("login") or p.get("email") or s,
                    p.get("section", ""),
                ]
                + [_number(total[s, a]) if (s, a) in total else "" for a in assignments]
            )
    with open(out / "gradescope.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Name", "SID", "Email", *assignments])
        for s in students:
            p = people.get(s, {})
            writer.writerow(
                [
                    p.get("name") or s,
                    p.get("sis_id") or s,
                    p.get("email", ""),
                ]
                + [_number(total[s, a]) if (s, a) in total else "" for a in assignments]
            )
    (out / "feedback").mkdir(exist_ok=True)
    for row, record in zip(rows, records):
        (out / "feedback" / feedback_name(row.student, row.notebook)).write_text(
            _feedback(row, record, points), encoding="utf-8"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", help="the student's notebook(s)")
    parser.add_argument(
        "--reference",
        help="the instructor notebook of the chapter (default: chapters/<same name>)",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=WAITS.grade_exercise,
        help=f"seconds per exercise cell (default {WAITS.grade_exercise})",
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
    parser.add_argument(
        "--full",
        action="store_true",
        help="execute every cell (default: only the exercises and the cells they need)",
    )
    parser.add_argument(
        "--class",
        dest="folder",
        action="store_true",
        help="the argument is a folder of submissions: grade them all in parallel into --out",
    )
    parser.add_argument(
        "--out",
        help="with --class: where to write gradebook.csv, grades.json and answers/ (default: FOLDER_grades)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="with --class: submissions graded at once (default: the cores)",
    )
    parser.add_argument(
        "--student",
        help="with --class: regrade this student's submissions into the existing gradebook in --out",
    )
    parser.add_argument(
        "--roster",
        help="with --class: roster.csv (student,name,email,sis_id,section) for the Canvas and Gradescope exports",
    )
    parser.add_argument(
        "--config",
        default=str(GRADING_CONFIG),
        help="with --class: the grading file (points per exercise, late policy; default booktools/grading.yml)",
    )
    parser.add_argument(
        "--seed-key",
        help=argparse.SUPPRESS,  # set by --class: the inputs of this submission derive from it
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=WAITS.grade_submission,
        help=f"with --class: seconds per submission before it is stopped (default {WAITS.grade_submission})",
    )
    parser.add_argument(
        "--gradebook",
        action="store_true",
        help="the argument is a folder of a class's grades: rewrite its gradebook, exports and feedback from grades.json",
    )
    args = parser.parse_args(argv)
    if args.gradebook:
        if len(args.notebooks) != 1:
            parser.error("--gradebook takes one folder of grades")
        folder = Path(args.notebooks[0])
        try:
            records = json.loads((folder / "grades.json").read_text(encoding="utf-8"))[
                "grades"
            ]
            rows = write_gradebook(
                records, folder, config=args.config, roster=args.roster
            )
        except (OSError, ValueError, KeyError) as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        print(
            f"{len(rows)} rows: {folder / 'gradebook.csv'}, canvas.csv, "
            "gradescope.csv, feedback/"
        )
        return 0
    if args.folder:
        if len(args.notebooks) != 1:
            parser.error("--class takes one folder of submissions")
        folder = Path(args.notebooks[0])
        try:
            grade_class(
                folder,
                args.out or folder.parent / f"{folder.name}_grades",
                reference=args.reference,
                jobs=args.jobs,
                timeout=args.timeout,
                limit=args.limit,
                fast=not args.full,
                config=args.config,
                student=args.student,
                roster=args.roster,
            )
        except (FileNotFoundError, ValueError) as exc:
            print(f"grade: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.executed and not args.expect_stubs:
        parser.error(
            "--executed grades without re-running the checkers: it serves only --expect-stubs"
        )
    status = 0
    results = []
    for notebook in args.notebooks:
        try:
            executed = (
                executed_in_build(notebook, args.executed) if args.executed else None
            )
            report = grade_notebook(
                notebook,
                reference=args.reference,
                timeout=args.timeout,
                executed=executed,
                fast=not args.full,
                seed_key=args.seed_key,
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
            stubs = sum(e.status == NOT_DONE for e in report.exercises)
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
