"""The homework machinery: student edition (booktools.student_edition), grader (booktools.grade), guide.

Every test that reads the chapters runs over the chapters of ``_toc.yml``, so
chapters added later are covered without editing this file. (The checkers
themselves, rnnlib.homework, are tested in tests/test_homework_checkers.py.)
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import yaml

from booktools import grade, markup
from booktools import student_edition as se
from booktools.cell_deps import (
    cut_after_checker,
    drop_checker_calls,
)
from booktools.records import executed_in_build
from booktools.toc import ROOT, chapter_notebooks
from rnnlib import homework

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "homework"
CHAPTERS = chapter_notebooks(ROOT)
GUIDE = ROOT / "chapters" / "instructor_guide.md"


def _chapter_of(path: Path) -> int:
    return int(path.name.split("_", 1)[0])


# --------------------------------------------------------------------------- stubs and markup


def test_stub_solution_keeps_indentation_and_surroundings():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    y = x\n    return y\n    ### END SOLUTION\n\ncheck(f)"
    stubbed, blocks = markup.stub_solution(source, "4.2")
    assert blocks == 1
    assert stubbed == (
        "def f(x):\n    # YOUR CODE HERE\n"
        '    raise NotImplementedError("Exercise 4.2: replace this line by your solution")\n\ncheck(f)'
    )


@pytest.mark.parametrize(
    "source, message",
    [
        (
            "### BEGIN SOLUTION\nx = 1\n",
            r"cell 7: line 1: '### BEGIN SOLUTION' without a matching '### END SOLUTION'",
        ),
        (
            "x = 1\n### END SOLUTION",
            r"cell 7: line 2: '### END SOLUTION' without a '### BEGIN SOLUTION'",
        ),
        (
            "### BEGIN SOLUTION\n  ### BEGIN SOLUTION\n### END SOLUTION",
            r"cell 7: line 2: .* inside the block opened on line 1",
        ),
    ],
)
def test_malformed_marker_pairs_are_named(source, message):
    with pytest.raises(markup.MarkupError, match=message):
        markup.stub_solution(source, "1.1", where="nb.ipynb: cell 7")


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


EX = "```{exercise} 5.1 · T\n:label: ex-5-1\n:nonumber:\n\nText.\n```"
START = "```{solution-start} ex-5-1\n:class: dropdown\n```"
END = "```{solution-end}\n```"


@pytest.mark.parametrize(
    "cells, message",
    [
        (
            [EX, START],
            r"the gate \{solution-start\} ex-5-1 is never closed",
        ),
        (
            [EX, END],
            r"cell 1: \{solution-end\} without a \{solution-start\}",
        ),
        (
            [EX + "\n\n" + START, START, END],
            r"cell 1: \{solution-start\} ex-5-1 inside the open gate",
        ),
        (
            ["```{exercise} 5.1 · T\n:nonumber:\n```"],
            r"cell 0: an \{exercise\} directive without :label:",
        ),
        (
            ["```{exercise} 5.1 · T\n:label: five-one\n```"],
            r"exercise label 'five-one' is not of the form ex-N-M",
        ),
        (
            [START, END],
            r"the solution of ex-5-1 comes before its \{exercise\} statement",
        ),
        (
            ["```{solution-start} ex-5-1\n:class: dropdown\n"],
            r"the \{solution-start\} directive is not closed in its cell",
        ),
        ([EX, EX], r"exercise 5.1 is stated twice"),
    ],
)
def test_malformed_gates_are_named(cells, message):
    nb = _notebook(*(nbformat.v4.new_markdown_cell(c) for c in cells))
    with pytest.raises(markup.MarkupError, match=message):
        markup.student_notebook(nb)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(
        FileNotFoundError,
        match="notebook: no such file .*missing.ipynb",
    ):
        markup.student_notebook(tmp_path / "missing.ipynb")
    with pytest.raises(
        TypeError,
        match="notebook must be a path or an nbformat notebook, got dict",
    ):
        markup.find_exercises({"cells": []})
    with pytest.raises(FileNotFoundError, match="root: .* has no _toc.yml"):
        se.build_student_edition(tmp_path, tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="notebook: no such file"):
        grade.grade_notebook(tmp_path / "missing.ipynb")
    assert grade.main([str(tmp_path / "missing.ipynb")]) == 2


# --------------------------------------------------------------------------- the fixture notebook


def test_student_edition_of_the_fixture_gives_the_expected_cells():
    student = markup.student_notebook(FIXTURES / "markup.ipynb")
    raise_line = (
        'raise NotImplementedError("Exercise {}: replace this line by your solution")'
    )
    expected = [
        (
            "markdown",
            "# 99. Markup fixture\n\nEvery variant of the exercise markup.",
        ),
        ("code", "import math"),
        (
            "markdown",
            "## Exercises\n\n```{exercise} 99.1 · Statement and gate share a cell\n:label: ex-99-1\n"
            ":nonumber:\n\nWrite `double(x)`.\n```",
        ),
        (
            "code",
            "def double(x):\n    # YOUR CODE HERE\n    "
            + raise_line.format("99.1")
            + "\n\nassert double(2) == 4",
        ),
        (
            "markdown",
            "```{exercise} 99.2 · Separate gate cells\n:label: ex-99-2\n:nonumber:\n\n"
            "Write `clip(x)` and `SIZE`.\n```",
        ),
        (
            "code",
            "# YOUR CODE HERE\n"
            + raise_line.format("99.2")
            + "\n\ndef clip(x):\n    if x > SIZE:\n"
            "        # YOUR CODE HERE\n        "
            + raise_line.format("99.2")
            + "\n    return x",
        ),
        (
            "markdown",
            "```{exercise} 99.3 · A prose exercise\n:label: ex-99-3\n:nonumber:\n\nWhy?\n```",
        ),
        (
            "markdown",
            f"**Your answer to exercise 99.3.** {markup.ANSWER_PLACEHOLDER}",
        ),
        (
            "markdown",
            ":::{exercise} 99.4 · Colon fences\n:label: ex-99-4\n:nonumber:\n\nWrite `square(x)`.\n:::",
        ),
        (
            "code",
            "def square(x):\n    # YOUR CODE HERE\n    " + raise_line.format("99.4"),
        ),
        ("markdown", "## Summary\n\nThe end."),
    ]
    assert [(c.cell_type, c.source) for c in student.cells] == expected
    stubs = [
        c
        for c in student.cells
        if c.cell_type == "code" and "NotImplementedError" in c.source
    ]
    answers = [c for c in student.cells if markup.ANSWER_KEY in c.metadata]
    assert [c.metadata[markup.ANSWER_KEY] for c in answers] == ["99.3"]
    assert answers[0].metadata["nbgrader"]["grade"] is True
    assert answers[0].metadata["nbgrader"]["points"] > 0
    assert all(
        c.metadata["nbgrader"]["solution"] and not c.metadata["nbgrader"]["grade"]
        for c in stubs
    )
    assert [c.metadata[markup.EXERCISE_KEY] for c in stubs] == [
        "99.1",
        "99.2",
        "99.4",
    ]
    assert all(
        c.metadata["tags"] == ["raises-exception", "remove-output"] for c in stubs
    )
    assert student.cells[1].metadata == {}  # ordinary cells are untouched
    assert student.metadata["rnnlib_edition"] == "student"
    # the student edition of a student edition is itself (stubs are recognised, nothing else to strip)
    assert [c.source for c in markup.student_notebook(student).cells] == [
        c.source for c in student.cells
    ]


def test_find_exercises_of_the_fixture():
    found = markup.find_exercises(FIXTURES / "markup.ipynb")
    assert [
        (
            e.number,
            e.kind,
            e.solution_blocks,
            e.code_cells,
            e.gated,
        )
        for e in found
    ] == [
        ("99.1", "code", 1, [3], True),
        ("99.2", "code", 2, [7], True),
        ("99.3", "prose", 0, [], True),
        ("99.4", "code", 1, [13], True),
    ]
    student = markup.find_exercises(markup.student_notebook(FIXTURES / "markup.ipynb"))
    assert [(e.number, e.solution_blocks) for e in student] == [
        (e.number, e.solution_blocks) for e in found
    ]


# --------------------------------------------------------------------------- every chapter


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_student_edition_has_a_stub_for_every_solution_block(path):
    instructor = markup.find_exercises(path)
    student_nb = markup.student_notebook(path)
    student = markup.find_exercises(student_nb)
    assert [e.number for e in student] == [e.number for e in instructor]
    for ins, stu in zip(instructor, student):
        assert stu.solution_blocks == ins.solution_blocks, (
            f"exercise {ins.number}: stubs and solution blocks differ"
        )
        # the stubs follow their statement directly (the gate and its prose are gone)
        assert stu.code_cells == list(
            range(
                stu.statement_cell + 1,
                stu.statement_cell + 1 + len(stu.code_cells),
            )
        )
    text = "\n".join(c.source for c in student_nb.cells)
    for marker in (
        markup.BEGIN,
        markup.END,
        "{solution-start}",
        "{solution-end}",
    ):
        assert marker not in text, (
            f"{marker!r} left in the student edition of {path.name}"
        )
    nb = nbformat.read(path, as_version=4)
    solution_lines = set()
    for ex in instructor:
        for index in ex.code_cells:
            inside = False
            for line in nb.cells[index].source.split("\n"):
                if markup.END in line:
                    inside = False
                if (
                    inside
                    and len(line.strip()) > 15
                    and not line.strip().startswith("#")
                ):
                    solution_lines.add(line.strip())
                if markup.BEGIN in line:
                    inside = True
    for ex in student:
        for index in ex.code_cells:
            leaked = [
                line
                for line in student_nb.cells[index].source.split("\n")
                if line.strip() in solution_lines
            ]
            assert not leaked, (
                f"exercise {ex.number}: solution lines left in the stub: {leaked}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_exercises_follow_the_convention(path):
    for ex in markup.find_exercises(path):
        assert ex.number.split(".")[0] == str(_chapter_of(path)), (
            f"{path.name}: exercise {ex.number} in another chapter"
        )
        assert re.match(rf"{re.escape(ex.number)} · \S", ex.title), (
            f"exercise {ex.number}: title {ex.title!r} is not 'N.M · ...'"
        )
        assert ex.gated, f"exercise {ex.number} has no {{solution-start}} gate"
        if ex.kind == "code":
            assert ex.number in ex.checkers, (
                f"exercise {ex.number}: its code cells never call check_exercise_{ex.number.replace('.', '_')}"
            )


def _checker_calls_by_chapter() -> dict[str, set[str]]:
    calls = {}
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        calls[path.name] = {
            n
            for c in nb.cells
            if c.cell_type == "code"
            for n in markup.checker_calls(c.source)
        }
    return calls


def test_every_checker_call_in_a_chapter_is_registered():
    for name, numbers in _checker_calls_by_chapter().items():
        unknown = numbers - set(homework.CHECKERS)
        assert not unknown, f"{name} calls unregistered checkers {sorted(unknown)}"


@pytest.mark.parametrize(
    "number",
    sorted(
        homework.CHECKERS,
        key=lambda n: tuple(map(int, n.split("."))),
    ),
)
def test_every_registered_checker_is_called_in_its_chapter(number):
    chapter = int(number.split(".")[0])
    notebooks = [p for p in CHAPTERS if _chapter_of(p) == chapter]
    if not notebooks:
        pytest.skip(
            f"checker {number} is registered but chapter {chapter}'s notebook is not written yet"
        )
    calls = _checker_calls_by_chapter()
    assert any(number in calls[p.name] for p in notebooks), (
        f"check_exercise_{number.replace('.', '_')} is never called in {notebooks[0].name}"
    )


# --------------------------------------------------------------------------- the student edition as a book


def test_build_student_edition_writes_a_book(tmp_path):
    out = tmp_path / "student"
    written = se.build_student_edition(ROOT, out)
    assert sorted(p.name for p in written) == [p.name for p in CHAPTERS]
    toc = yaml.safe_load((out / "_toc.yml").read_text())
    toc_text = yaml.safe_dump(toc)
    for path in CHAPTERS:
        if f"chapters/{path.stem}" in (ROOT / "_toc.yml").read_text():
            assert f"chapters/{path.stem}" in toc_text
    assert "instructor_guide" not in toc_text
    assert not (out / "chapters" / "instructor_guide.md").exists()
    assert (out / "chapters" / "preface.md").exists() and (
        out / "references.bib"
    ).exists()
    cfg = yaml.safe_load((out / "_config.yml").read_text())
    assert cfg["title"].endswith("(student edition)")
    assert cfg["launch_buttons"]["colab_url"] == "" and "repository" not in cfg
    assert "student" not in cfg["exclude_patterns"]
    for path in written:
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["rnnlib_edition"] == "student"
        assert all(
            c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code"
        )


def test_student_config_keeps_launch_buttons_for_a_student_repository():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    student = se.student_config(cfg, "https://example.org/course/student-edition")
    assert student["repository"]["url"] == "https://example.org/course/student-edition"
    # off in the book (solutions), on in a hosted student edition
    assert cfg["launch_buttons"]["colab_url"] == ""
    assert student["launch_buttons"]["colab_url"].startswith("https://")
    assert student["launch_buttons"]["binderhub_url"].startswith("https://")
    assert (
        cfg["title"] in student["title"]
        and cfg["repository"]["url"] != student["repository"]["url"]
    )


def test_one_setting_turns_on_the_student_editions_launch_buttons(
    tmp_path,
):
    """``student_edition.repository_url`` in ``_config.yml``, and nothing else (README, "Launch buttons")."""
    root = tmp_path / "book"
    shutil.copytree(
        ROOT,
        root,
        ignore=shutil.ignore_patterns(
            ".*",
            "_build",
            "student",
            "lab",
            "node_modules",
            "_extra",
        ),
    )
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert cfg["student_edition"]["repository_url"] == "", (
        "no student repository yet: the buttons are off"
    )
    se.build_student_edition(root, tmp_path / "off")
    off = yaml.safe_load((tmp_path / "off" / "_config.yml").read_text())
    assert off["launch_buttons"]["colab_url"] == ""
    assert not (tmp_path / "off" / "environment.yml").exists()
    url = "https://example.org/course/student-edition"
    cfg["student_edition"]["repository_url"] = url
    (root / "_config.yml").write_text(yaml.safe_dump(cfg))
    se.build_student_edition(root, tmp_path / "on")
    on = yaml.safe_load((tmp_path / "on" / "_config.yml").read_text())
    assert on["repository"]["url"] == url
    assert on["launch_buttons"]["colab_url"].startswith("https://")
    assert on["launch_buttons"]["binderhub_url"].startswith("https://")
    assert "student_edition" not in on
    assert (tmp_path / "on" / "environment.yml").exists()
    cfg["student_edition"]["repository_url"] = "github.com/x"
    (root / "_config.yml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError, match="must be an http"):
        se.build_student_edition(root, tmp_path / "bad")


# --------------------------------------------------------------------------- grading (executes notebooks)


def _fill(nb, number, source):
    cell = next(c for c in nb.cells if c.metadata.get(markup.EXERCISE_KEY) == number)
    cell.source = source


def test_grade_a_completed_assignment(tmp_path):
    """Instructor fixture -> student edition -> a student's answers -> one grade per exercise."""
    nb = markup.student_notebook(FIXTURES / "assignment.ipynb")
    _fill(
        nb,
        "1.1",
        "def my_normalize(x_bar, eps_x):\n"
        "    start = torch.zeros(x_bar.shape[0], 1, x_bar.shape[2] + 1)\n"
        "    start[..., -1] = 1.0\n"
        "    middle = torch.cat([eps_x * x_bar, torch.zeros_like(x_bar[..., :1])], dim=2)\n"
        "    return torch.cat([start, middle, start], dim=1)\n\n"
        "rnnlib.homework.check_exercise_1_1(my_normalize)",
    )
    _fill(
        nb,
        "1.2",
        "def my_hidden_states(W, A, x):\n    return torch.tanh(elman_hidden_states(W, A, x))\n\n"
        "rnnlib.homework.check_exercise_1_2(my_hidden_states)",
    )
    # 8.1: the student deleted the exercise cell; 8.2: prints a fake pass line instead of calling the checker
    nb.cells = [c for c in nb.cells if c.metadata.get(markup.EXERCISE_KEY) != "8.1"]
    _fill(
        nb,
        "8.2",
        "def my_project_rows(W, radius):\n    return W\n\nprint('Exercise 8.2: all 4 checks passed.')",
    )
    path = tmp_path / "submission.ipynb"
    nbformat.write(nb, path)
    report = grade.grade_notebook(
        path, reference=FIXTURES / "assignment.ipynb", timeout=120
    )
    got = {e.number: (e.status, e.detail) for e in report.exercises}
    assert list(got) == ["1.1", "1.2", "8.1", "8.2", "8.3"]
    assert got["1.1"] == (
        "pass",
        "all 3 checks passed on fresh inputs",
    )
    assert got["1.2"][0] == "FAIL" and got["1.2"][1].startswith(
        "0 of 3 checks passed on fresh inputs; Exercise 1.2: your function calls "
        "rnnlib.elman.elman_hidden_states"
    )
    assert got["8.1"][0] == "missing"
    assert got["8.2"][0] == "FAIL" and got["8.2"][1].startswith(
        "0 of 4 checks passed on fresh inputs; Exercise 8.2: wrong values"
    )
    assert got["8.3"][0] == "by hand"
    assert (report.passed, report.graded) == (
        1,
        4,
    ) and report.other_errors == []
    table = report.table()
    assert (
        "Total: 1/4 automatically graded exercises passed; 1 prose exercise to grade by hand"
        in table
    )
    assert grade.student_edition_problems(
        report
    )  # a completed notebook is not an untouched student edition


def test_grading_an_execution_made_elsewhere(tmp_path):
    """``--executed``: the student edition is graded from the execution its HTML shows, not run again."""
    path = tmp_path / "assignment.ipynb"
    nbformat.write(markup.student_notebook(FIXTURES / "assignment.ipynb"), path)
    from booktools.execute import Job, run_job

    result = run_job(Job("student", path, True, 120, 1, 1))
    assert result.error is None and result.seconds > 0
    report = grade.grade_notebook(
        path,
        reference=FIXTURES / "assignment.ipynb",
        executed=result.nb,
    )
    assert [(e.number, e.status) for e in report.exercises] == [
        ("1.1", "not done"),
        ("1.2", "not done"),
        ("8.1", "not done"),
        ("8.2", "not done"),
        ("8.3", "by hand"),
    ]
    assert grade.student_edition_problems(report) == []
    stale = nbformat.read(path, as_version=4)
    stale.cells[1].source += "\n# edited after the execution"
    nbformat.write(stale, path)
    with pytest.raises(ValueError, match="executed: its cells are not those of"):
        grade.grade_notebook(
            path,
            reference=FIXTURES / "assignment.ipynb",
            executed=result.nb,
        )


def test_executed_in_build_names_what_is_missing(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]),
        path,
    )
    with pytest.raises(FileNotFoundError, match="build: no execution cache at"):
        executed_in_build(path, tmp_path / "_build")
    (tmp_path / "_build" / ".jupyter_cache").mkdir(parents=True)
    with pytest.raises(LookupError, match="no execution in .* matches its code"):
        executed_in_build(path, tmp_path / "_build")
    assert (
        grade.main(
            [
                "--expect-stubs",
                "--executed",
                str(tmp_path / "_build"),
                str(path),
            ]
        )
        == 2
    )
    with pytest.raises(
        SystemExit
    ):  # without --expect-stubs the checkers would not be re-run
        grade.main(["--executed", str(tmp_path / "_build"), str(path)])


# --------------------------------------------------------------------------- instructor guide, Makefile, launch links


def _guide_rows() -> dict[str, list[str]]:
    rows = {}
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.fullmatch(r"\d+\.\d+", cells[0]):
            assert cells[0] not in rows, (
                f"instructor_guide.md lists exercise {cells[0]} twice"
            )
            rows[cells[0]] = cells
    return rows


def test_instructor_guide_lists_exactly_the_exercises_of_the_chapters():
    rows = _guide_rows()
    found = {
        e.number: (path, e) for path in CHAPTERS for e in markup.find_exercises(path)
    }
    missing = [
        row for row in se.exercise_rows(ROOT) if row.split("|")[1].strip() not in rows
    ]
    assert not missing, (
        "chapters/instructor_guide.md misses exercises; add these rows (estimate the time):\n"
        + "\n".join(missing)
    )
    extra = sorted(set(rows) - set(found))
    assert not extra, (
        f"chapters/instructor_guide.md lists exercises that no chapter has: {extra}"
    )
    for number, (path, ex) in found.items():
        row = rows[number]
        assert row[1] == path.stem, (
            f"exercise {number}: the guide says chapter {row[1]}, it is in {path.stem}"
        )
        assert row[3] == ex.kind, (
            f"exercise {number}: the guide says {row[3]}, the chapter has a {ex.kind} exercise"
        )
        assert re.fullmatch(r"\d+(–\d+)? min", row[5]), (
            f"exercise {number}: time {row[5]!r} is not like '20 min'"
        )


def test_instructor_guide_is_in_the_toc_before_the_bibliography():
    toc = (ROOT / "_toc.yml").read_text()
    assert toc.index("chapters/instructor_guide") < toc.index("chapters/bibliography")


BUILT = ROOT / "_build" / "html" / "chapters"


def _require_built(page: Path, command: str) -> None:
    """Skip when ``page`` is not built, unless RNNLIB_REQUIRE_BUILD is set (``make built-checks``,
    part of ``make test``, runs these tests after the builds, where a missing page is a failure)."""
    if page.exists():
        return
    message = f"{page.relative_to(ROOT)} is not built (run `{command}`)"
    if os.environ.get("RNNLIB_REQUIRE_BUILD"):
        pytest.fail(message)
    pytest.skip(message + "; `make test` runs this check after the build")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_built_pages_of_the_instructor_edition_launch_nothing(
    path,
):
    """The instructor edition's chapters hold the solutions: no Binder or Colab button opens them.

    (The student edition gets launch buttons when ``student_edition.repository_url`` of
    ``_config.yml`` names the repository hosting it; README, "Launch buttons".)
    """
    page = BUILT / f"{path.stem}.html"
    _require_built(page, "make book")
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert not cfg["launch_buttons"].get("binderhub_url")
    assert not cfg["launch_buttons"].get("colab_url")
    html = page.read_text(encoding="utf-8")
    for host in ("mybinder.org", "colab.research.google.com"):
        assert host not in html, (
            f"{page.name}: a launch link to {host} opens the instructor notebook"
        )


def test_grader_reports_errors_outside_exercises_and_inside_explorers(
    tmp_path,
):
    """An explorer whose figure fails shows the error in its widget while its cell succeeds (nbval
    passes it); the grader, and so ``make student-check``, reports it."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# 97. Explorers"),
            nbformat.v4.new_code_cell(
                "from rnnlib import widgets\n\ndef figure(n):\n    raise ValueError(f'no figure for n = {n}')\n\n"
                "widgets.explore(figure, n=widgets.int_slider(3, 1, 5))"
            ),
            nbformat.v4.new_code_cell("1 / 0"),
            nbformat.v4.new_code_cell(
                "import matplotlib.pyplot as plt\n\ndef no_figure(n):\n    return None\n\n"
                "widgets.explore(no_figure, n=widgets.int_slider(3, 1, 5))"
            ),
            nbformat.v4.new_code_cell(
                "def a_figure(n):\n    fig, ax = plt.subplots()\n    ax.plot(range(n))\n    return fig\n\n"
                "widgets.explore(a_figure, n=widgets.int_slider(3, 1, 5))"
            ),
        ]
    )
    path = tmp_path / "explorers.ipynb"
    nbformat.write(nb, path)
    # fast grading runs no cell here (no exercise needs one): the whole notebook is run
    assert grade.cells_to_run(nb, set()) == set()
    report = grade.grade_notebook(path, timeout=60, fast=False)
    assert report.exercises == []
    assert report.other_errors == [
        (1, "ValueError (inside a widget)", "no figure for n = 3"),
        (2, "ZeroDivisionError", "division by zero"),
        (
            3,
            "NoFigure (inside a widget)",
            "the explorer shows no figure at its default values",
        ),
    ]
    problems = grade.student_edition_problems(report)
    assert problems == [
        "cell 1 is not an exercise cell but raised ValueError (inside a widget): no figure for n = 3",
        "cell 2 is not an exercise cell but raised ZeroDivisionError: division by zero",
        "cell 3 is not an exercise cell but raised NoFigure (inside a widget): the explorer shows no figure at its default values",
    ]
    assert (
        "warning: cell 1 (not an exercise cell) raised ValueError (inside a widget)"
        in report.table()
    )


STUDENT_HTML = ROOT / "student" / "_build" / "html" / "chapters"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_built_student_pages_have_stubs_and_no_solutions(path):
    page = STUDENT_HTML / f"{path.stem}.html"
    _require_built(page, "make student")
    html = page.read_text(encoding="utf-8")
    assert 'class="solution' not in html, f"{page.name} shows a solution"
    assert "BEGIN SOLUTION" not in html
    for ex in markup.find_exercises(path):
        if ex.kind == "code":
            assert f"Exercise {ex.number}: replace this line by your solution" in html


# --------------------------------------------------------------------------- answer cells, points, fast grading


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_prose_exercise_of_the_student_edition_has_an_answer_cell(
    path,
):
    student = markup.student_notebook(path)
    prose = [e.number for e in markup.find_exercises(path) if e.kind == "prose"]
    for number in prose:
        at = [
            i
            for i, c in enumerate(student.cells)
            if c.metadata.get(markup.ANSWER_KEY) == number
        ]
        assert len(at) == 1, f"exercise {number}: {len(at)} answer cells"
        statement = student.cells[at[0] - 1]
        assert statement.cell_type == "markdown" and (
            f":label: ex-{number.replace('.', '-')}" in statement.source
        ), f"exercise {number}: its answer cell does not follow its statement"
    assert grade.collect_answers(student) == {n: "" for n in prose}
    ids = [c.get("id") for c in student.cells]
    assert len(ids) == len(set(ids)), "cell ids are unique"


def test_every_exercise_has_points_in_the_grading_config():
    points = markup.exercise_points()
    numbers = {e.number for path in CHAPTERS for e in markup.find_exercises(path)}
    assert not numbers - set(points), (
        f"booktools/grading.yml has no points for {sorted(numbers - set(points))}"
    )
    assert not set(points) - numbers, (
        f"booktools/grading.yml lists exercises no chapter has: {sorted(set(points) - numbers)}"
    )
    assert all(p > 0 for p in points.values())
    assert "booktools/grading.yml" in GUIDE.read_text(encoding="utf-8")


def test_fast_grading_runs_what_the_exercise_cells_need():
    cells = [
        "import torch\nimport rnnlib",  # 0: needed (torch, rnnlib)
        "SCALE = 2.0",  # 1: needed by the helper
        "results = [train(m) for m in range(100)]",  # 2: an experiment: skipped
        "def helper(x):\n    return SCALE * x",  # 3: needed by the exercise
        "fig = plot(results)",  # 4: skipped
        "table = {}\ntable['a'] = 1",  # 5: binds table
        "table.update(b=2)",  # 6: changes table: needed
        "def f(x, results=None):\n    y = helper(x) + table['a']\n    return [results for results in y]\n\n"
        "rnnlib.homework.check_exercise_8_1(f)\nprint(results)",  # 7: the exercise
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    assert 2 in grade.cells_to_run(nb, {7})  # print(results)
    nb.cells[7].source = cut_after_checker(cells[7])
    assert nb.cells[7].source.endswith("rnnlib.homework.check_exercise_8_1(f)")
    assert grade.cells_to_run(nb, {7}) == {0, 1, 3, 5, 6, 7}
    # what the grader runs: the definitions, not the student's own check
    assert drop_checker_calls(cells[7]) == (
        "def f(x, results=None):\n    y = helper(x) + table['a']\n"
        "    return [results for results in y]\n"
    )
    assert drop_checker_calls("x = 1") == "x = 1"
    assert (
        drop_checker_calls(
            "a = 1\ncheck_exercise_1_1(\n    f,\n)\nb = 2\ncheck_exercise_1_2(g)\nc = 3"
        )
        == "a = 1\nb = 2"
    )


def test_chapter_5_is_graded_in_seconds_from_its_exercise_cells(
    tmp_path,
):
    """The instructor's chapter 5 (its solutions in place) graded as a submission: the
    exercise passes without running the chapter's experiments."""
    path = tmp_path / "05_sgd.ipynb"
    nbformat.write(
        nbformat.read(ROOT / "chapters" / "05_sgd.ipynb", as_version=4),
        path,
    )
    report = grade.grade_notebook(path, timeout=120)
    got = {e.number: e.status for e in report.exercises}
    assert got == {"5.1": "by hand", "5.2": "pass"}, report.table()
    # only the exercise cells and what they read ran: the chapter's experiments did not
    assert report.skipped >= 10 and report.other_errors == []


STUDENT_SITE = ROOT / "student" / "_build" / "html"


def test_built_student_site_has_no_solution_in_any_page_or_download():
    """Every file of the student site (pages, the notebooks of its download button, search
    index) is free of solution lines and markers."""
    _require_built(STUDENT_SITE / "index.html", "make student")
    solution_lines = set()
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            inside = False
            for line in cell.source.split("\n"):
                if markup.END in line:
                    inside = False
                if inside and len(line.strip()) > 25:
                    solution_lines.add(line.strip())
                if markup.BEGIN in line:
                    inside = True
        # a line the student edition itself shows (outside its stubs) is no leak
        shown = "\n".join(c.source for c in markup.student_notebook(path).cells)
        solution_lines = {line for line in solution_lines if line not in shown}
    leaks = []
    for file in STUDENT_SITE.rglob("*"):
        if not file.is_file() or file.suffix not in (
            ".html",
            ".ipynb",
            ".md",
            ".txt",
            ".js",
            ".json",
        ):
            continue
        if "_vendor" in file.parts or "_static" in file.parts:
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        for marker in (
            markup.BEGIN,
            "{solution-start}",
            'class="solution',
        ):
            if marker in text:
                leaks.append(f"{file.relative_to(STUDENT_SITE)}: {marker}")
        leaks += [
            f"{file.relative_to(STUDENT_SITE)}: {line}"
            for line in solution_lines
            if line in text
        ][:3]
    assert not leaks, "\n".join(leaks[:20])
    downloads = list((STUDENT_SITE / "_sources").rglob("*.ipynb"))
    assert downloads, "the student site offers its notebooks for download"
