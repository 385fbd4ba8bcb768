"""A class graded at once: 9 planted submissions -> one command -> a CSV gradebook.

The submissions are made here from the student edition of the fixture chapter
(fixtures/homework/assignment.ipynb: exercises 1.1, 1.2, 8.1, 8.2 with checkers and
the prose exercise 8.3), each with the answers a student might hand in: right,
wrong, rounded to low precision, calling the library function the exercise
re-implements, an untouched stub, a crashing kernel, an endless loop, a faked pass
line, a replaced checker, and so on: twenty-three planted answers, up to one per exercise
in each notebook (each exercise is graded on its own, and nine kernels cost less than
twenty-three). ``PLANTED`` holds the row a human grader gives each notebook; the gradebook
must say exactly that.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import nbformat

from booktools import grade, markup

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "homework"
REFERENCE = FIXTURES / "assignment.ipynb"

RIGHT = {
    "1.1": """def my_normalize(x_bar, eps_x):
    batch, n, k = x_bar.shape
    start = torch.zeros(batch, 1, k + 1, dtype=x_bar.dtype)
    start[..., -1] = 1.0
    zeros = torch.zeros(batch, n, 1, dtype=x_bar.dtype)
    middle = torch.cat([eps_x * x_bar, zeros], dim=2)
    return torch.cat([start, middle, start], dim=1)

rnnlib.homework.check_exercise_1_1(my_normalize)""",
    "1.2": """def my_hidden_states(W, A, x):
    h = torch.zeros(x.shape[0], W.shape[0], dtype=x.dtype)
    states = []
    for step in range(x.shape[1]):
        h = torch.relu(h @ W.T + x[:, step] @ A.T)
        states.append(h)
    return torch.stack(states, dim=1)

rnnlib.homework.check_exercise_1_2(my_hidden_states)""",
    "8.1": """def my_project_spectral(W, radius):
    U, s, Vh = torch.linalg.svd(W)
    return U @ torch.diag(s.clamp(max=radius)) @ Vh

rnnlib.homework.check_exercise_8_1(my_project_spectral)""",
    "8.2": """def my_project_rows(W, radius):
    out = W.clone()
    for i, v in enumerate(W):
        if v.abs().sum() <= radius:
            continue
        u = v.abs().sort(descending=True).values
        css = u.cumsum(0)
        j = torch.arange(1, len(u) + 1, dtype=W.dtype)
        rho = int(torch.nonzero(u * j > css - radius).max())
        theta = (css[rho] - radius) / (rho + 1)
        out[i] = torch.sign(v) * (v.abs() - theta).clamp(min=0)
    return out

rnnlib.homework.check_exercise_8_2(my_project_rows)""",
}
ANSWER = "Row sums are not column sums: take W = [[r, r], [0, 0]] ..."


def _swap(number: str, old: str, new: str) -> dict[str, str]:
    assert old in RIGHT[number]
    return {number: RIGHT[number].replace(old, new)}


#: name -> (changes to the right answers, the gradebook row a human grader gives:
#: 1.1, 1.2, 8.1, 8.2, auto points, auto max, by hand). Each submission carries up
#: to one planted answer per exercise, as a student's notebook would (each exercise
#: is graded on its own), so that the twenty-three planted answers take nine kernels.
#: Partial credit: the share of an exercise's checks passed on the fresh inputs.
PLANTED: dict[str, tuple[dict, list[str]]] = {
    "right": ({}, ["2", "2", "2", "2", "8", "8", "8.3"]),
    # right, no prose answer, a helper cell of its own, a slow and broken extra cell
    "right_helper_slow_no_answer": (
        {
            "answer": None,
            "helper": "def clip_values(s, radius):\n    return s.clamp(max=radius)",
            **_swap(
                "8.1",
                "s.clamp(max=radius)",
                "clip_values(s, radius)",
            ),
            "extra": "import time\ntime.sleep(120)\n1 / 0",
        },
        ["2", "2", "2", "2", "8", "8", "8.3"],
    ),
    "stub": (
        {"stub": True},
        ["0", "0", "0", "0", "0", "8", "8.3"],
    ),
    # no end token, tanh for relu, a rescaling for each projection
    "wrong_each": (
        {
            **_swap(
                "1.1",
                "[start, middle, start]",
                "[start, middle, 0 * start]",
            ),
            **_swap("1.2", "torch.relu(", "torch.tanh("),
            "8.1": "def my_project_spectral(W, radius):\n"
            "    return W * min(1.0, radius / float(torch.linalg.matrix_norm(W, ord=2)))\n\n"
            "rnnlib.homework.check_exercise_8_1(my_project_spectral)",
            # rows rescaled onto the sphere instead of projected onto the ball
            "8.2": "def my_project_rows(W, radius):\n"
            "    return W * (radius / W.abs().sum(1, keepdim=True))\n\n"
            "rnnlib.homework.check_exercise_8_2(my_project_rows)",
        },
        ["0", "0", "0", "0", "0", "8", "8.3"],
    ),
    # the library's function under another name, an error, the library called (twice)
    "library_and_raises": (
        {
            "1.1": "from rnnlib.elman import normalize_sequence as my_normalize\n\n"
            "rnnlib.homework.check_exercise_1_1(my_normalize)",
            **_swap("1.2", "x[:, step]", "x[step]"),
            "8.1": "def my_project_spectral(W, radius):\n"
            "    return project_spectral(W, radius)\n\n"
            "rnnlib.homework.check_exercise_8_1(my_project_spectral)",
            "8.2": "def my_project_rows(W, radius):\n    try:\n"
            "        return project_l1_rows(W, radius)\n    except BaseException:\n"
            "        return W\n\nrnnlib.homework.check_exercise_8_2(my_project_rows)",
        },
        ["0", "0", "0", "0", "0", "8", "8.3"],
    ),
    # a syntax error, a result rounded to bfloat16 (a float32 SVD passes a fresh case now
    # and then: tests/test_homework_checkers.py tests the float32 hint), a printed pass
    # line without the checker
    "syntax_lowprecision_fake_pass": (
        {
            **_swap("1.2", "states = []", "states = ["),
            **_swap(
                "8.1",
                "return U @ torch.diag(s.clamp(max=radius)) @ Vh",
                "return (U @ torch.diag(s.clamp(max=radius)) @ Vh).bfloat16().double()",
            ),
            "8.2": "def my_project_rows(W, radius):\n    return W\n\n"
            "print('Exercise 8.2: all 4 checks passed.')",
        },
        ["2", "0", "0", "0", "2", "8", "8.3"],
    ),
    # a replaced checker, then an endless loop
    "replaced_checker_endless_loop": (
        {
            "8.1": "def my_project_spectral(W, radius):\n    return W\n\n"
            "def fake(f):\n    print('Exercise 8.1: all 5 checks passed.')\n\n"
            "rnnlib.homework.CHECKERS['8.1'] = fake\n"
            "rnnlib.homework.check_exercise_8_1 = fake\n"
            "rnnlib.homework.check_exercise_8_1(my_project_spectral)",
            **_swap(
                "8.2",
                "    out = W.clone()",
                "    while True:\n        pass",
            ),
        },
        ["2", "2", "0", "0", "4", "8", "8.3"],
    ),
    # partial credit (eps_x forgotten: right only where eps_x = 1), and two attempts to
    # game the grader: torch's and numpy's comparisons patched to say "close" before a
    # wrong answer, and a table of the answers to the installed checker's fixed inputs
    "partial_and_gaming": (
        {
            **_swap("1.1", "[eps_x * x_bar, zeros]", "[x_bar, zeros]"),
            "1.2": "import numpy as np\n"
            "torch.allclose = lambda *a, **k: True\n"
            "torch.isclose = lambda a, b, **k: torch.ones_like(a, dtype=torch.bool)\n"
            "np.allclose = lambda *a, **k: True\n"
            "np.isclose = lambda a, b, **k: np.ones(np.shape(a), dtype=bool)\n\n"
            "def my_hidden_states(W, A, x):\n    return torch.zeros(x.shape[0], x.shape[1], W.shape[0])\n\n"
            "rnnlib.homework.check_exercise_1_2(my_hidden_states)",
            "8.1": "from rnnlib.homework.chapter08 import _cases_8_1\n"
            "from rnnlib.stability import project_spectral\n"
            "_table = [(c.args[0].clone(), project_spectral(*c.args)) for c in _cases_8_1(81)]\n\n"
            "def my_project_spectral(W, radius):\n"
            "    for key, value in _table:\n"
            "        if key.shape == W.shape and torch.equal(key, W):\n"
            "            return value.clone()\n"
            "    return W\n\n"
            "rnnlib.homework.check_exercise_8_1(my_project_spectral)",
        },
        ["0.67", "0", "0", "2", "2.67", "8", "8.3"],
    ),
    # a deleted exercise cell, then a kernel that dies
    "deleted_cell_crash": (
        {
            "8.1": None,
            **_swap(
                "8.2",
                "    out = W.clone()",
                "    import os\n    os._exit(1)",
            ),
        },
        ["2", "2", "0", "0", "4", "8", "8.3"],
    ),
}


def _submission(changes: dict) -> nbformat.NotebookNode:
    nb = markup.student_notebook(REFERENCE)
    if changes.get("stub"):
        return nb
    cells = []
    for cell in nb.cells:
        number = cell.metadata.get(markup.EXERCISE_KEY)
        if number:
            if "helper" in changes and number == "8.1":
                cells.append(nbformat.v4.new_code_cell(changes["helper"]))
            source = changes.get(number, RIGHT[number])
            if source is None:
                continue
            cell.source = source
        if cell.metadata.get(markup.ANSWER_KEY) and changes.get("answer", ANSWER):
            cell.source = f"**Your answer to exercise 8.3.** {ANSWER}"
        cells.append(cell)
        if cell.cell_type == "code" and not number and "extra" in changes:
            cells.append(nbformat.v4.new_code_cell(changes.pop("extra")))
    nb.cells = cells
    return nb


def test_a_class_of_planted_submissions_is_graded_in_parallel_into_a_gradebook(
    tmp_path,
):
    folder = tmp_path / "submissions"
    for name, (changes, _) in PLANTED.items():
        (folder / name).mkdir(parents=True)
        nbformat.write(
            _submission(dict(changes)),
            folder / name / "assignment.ipynb",
        )
    assert len(PLANTED) == 9
    out = tmp_path / "grades"
    started = time.monotonic()
    assert (
        grade.main(
            [
                "--class",
                str(folder),
                "--out",
                str(out),
                "--reference",
                str(REFERENCE),
                "--timeout",
                "15",
            ]
        )
        == 0
    )
    seconds = time.monotonic() - started
    with open(out / "gradebook.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == [
        "student",
        "notebook",
        "1.1",
        "1.2",
        "8.1",
        "8.2",
        "8.3",
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
    got = {
        r[0]: r[2:6] + r[7:10] for r in rows[1:]
    }  # the prose column 8.3 is left empty for the instructor
    assert all(r[6] == "" for r in rows[1:])
    detail = json.loads((out / "grades.json").read_text())
    messages = {
        g["student"]: {e["number"]: e["detail"] for e in g["exercises"]}
        for g in detail["grades"]
    }
    wrong = {
        name: (got.get(name), expected, messages.get(name))
        for name, (_, expected) in PLANTED.items()
        if got.get(name) != expected
    }
    assert not wrong, wrong
    print(
        f"\n{len(PLANTED)} submissions graded in {seconds:.1f} s ({detail['jobs']} at a time, "
        f"{detail['cpu_seconds']} s of CPU)"
    )
    assert detail["cpu_seconds"] > 0
    # the messages say why
    assert (
        "0 of 5 checks passed on fresh inputs; Exercise 8.1: wrong values"
        in messages["syntax_lowprecision_fake_pass"]["8.1"]
    )
    assert "wrong values" in messages["wrong_each"]["8.2"]
    assert (
        "your function calls rnnlib.elman.normalize_sequence"
        in messages["library_and_raises"]["1.1"]
    )
    assert "rnnlib.stability.project_spectral" in messages["library_and_raises"]["8.1"]
    assert "rnnlib.stability.project_l1_rows" in messages["library_and_raises"]["8.2"]
    assert "time limit of 15 s" in messages["replaced_checker_endless_loop"]["8.2"]
    assert "kernel died" in messages["deleted_cell_crash"]["8.2"]
    # partial credit names the share; the attacks fail on the fresh inputs
    assert messages["partial_and_gaming"]["1.1"].startswith(
        "1 of 3 checks passed on fresh inputs"
    )
    assert messages["partial_and_gaming"]["1.2"].startswith("0 of 3 checks passed")
    assert messages["partial_and_gaming"]["8.1"].startswith("0 of 5 checks passed")
    # no message shows an expected value: "got ..., expected ..." is gone
    assert not any(
        "expected " in m and "got " in m for g in messages.values() for m in g.values()
    )
    assert "Exercise 8.1" in messages["stub"]["8.1"]
    assert "no code cell" in messages["deleted_cell_crash"]["8.1"]
    assert "wrong values" in messages["replaced_checker_endless_loop"]["8.1"]
    # the answers to the prose exercise, beside the statement and the model answer
    answers = (out / "answers" / "right__assignment.md").read_text()
    assert (
        ANSWER in answers and "### Model answer" in answers and "An answer." in answers
    )
    assert (
        "*(not answered)*"
        in (out / "answers" / "right_helper_slow_no_answer__assignment.md").read_text()
    )
    # fast mode did not run the unrelated slow cell (it sleeps 120 s and raises: run, it
    # would be an error outside the exercises); no clock decides it
    slow = next(
        g for g in detail["grades"] if g["student"] == "right_helper_slow_no_answer"
    )
    assert slow["skipped"] >= 1 and slow["other_errors"] == []
    # the exports and the feedback files
    with open(out / "canvas.csv", encoding="utf-8") as f:
        canvas = list(csv.reader(f))
    assert canvas[0][:5] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
    ] and canvas[0][5:] == ["assignment"]
    assert {r[0]: r[5] for r in canvas[1:]}["partial_and_gaming"] == "2.67"
    feedback = (out / "feedback" / "partial_and_gaming__assignment.md").read_text()
    assert "| 1.1 | FAIL | 0.67 / 2 |" in feedback
    assert "1 of 3 checks passed on fresh inputs" in feedback

    # a prose grade typed in, then one student regraded: the same inputs (the class's
    # secret), the same points, the typed grade kept, the other rows untouched
    with open(out / "gradebook.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    for r in table:
        if r["student"] in ("right", "partial_and_gaming"):
            r["8.3"] = "2.5"
    with open(out / "gradebook.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    seeds = {
        e["number"]: e["seed"]
        for g in detail["grades"]
        if g["student"] == "partial_and_gaming"
        for e in g["exercises"]
        if e["seed"] is not None
    }
    assert (
        grade.main(
            [
                "--class",
                str(folder),
                "--out",
                str(out),
                "--reference",
                str(REFERENCE),
                "--student",
                "partial_and_gaming",
            ]
        )
        == 0
    )
    with open(out / "gradebook.csv", encoding="utf-8") as f:
        again = {r["student"]: r for r in csv.DictReader(f)}
    assert len(again) == len(PLANTED)
    assert again["partial_and_gaming"]["1.1"] == "0.67"
    assert again["partial_and_gaming"]["8.3"] == "2.5"
    assert again["partial_and_gaming"]["total"] == "5.17"
    assert again["right"]["8.3"] == "2.5" and again["right"]["total"] == "10.5"
    regraded = json.loads((out / "grades.json").read_text())
    assert regraded["graded_now"] == 1 and regraded["submissions"] == 9
    assert seeds == {
        e["number"]: e["seed"]
        for g in regraded["grades"]
        if g["student"] == "partial_and_gaming"
        for e in g["exercises"]
        if e["seed"] is not None
    }


def test_the_gradebook_note_lists_every_error_and_answers_are_per_notebook():
    """Pure helpers of grade_class: no kernel."""
    record = {
        "failure": "",
        "other_errors": [
            [3, "NameError", "name 'x' is not defined\nmore"],
            [7, "ValueError", "bad"],
        ],
    }
    note = grade.note(record)
    assert note == (
        "cell 3 (not an exercise cell) raised NameError: name 'x' is not defined; "
        "cell 7 (not an exercise cell) raised ValueError: bad"
    )
    assert grade.note({"failure": "kernel died"}) == "kernel died"
    assert grade.answers_name(
        "alice", Path("s/alice/05_sgd.ipynb")
    ) != grade.answers_name("alice", Path("s/alice/08_stability.ipynb"))
    assert (
        grade.answers_name("group/bob", Path("x/08_stability.ipynb"))
        == "group_bob__08_stability.md"
    )


def test_late_policy_and_exports_from_records(tmp_path):
    """booktools.grade's gradebook on records made by hand: no kernel."""
    config = tmp_path / "grading.yml"
    config.write_text(
        "points:\n  '8.1': 2\n  '8.2': 2\n  '8.3': 3\n"
        "late:\n  deadline: '2027-01-15T23:59:00+00:00'\n"
        "  penalty_per_day: 0.1\n  max_days: 3\n"
    )

    def record(student, submitted, passed):
        return {
            "student": student,
            "notebook": f"subs/{student}/08_stability.ipynb",
            "submitted": submitted,
            "exercises": [
                {
                    "number": "8.1",
                    "status": "pass",
                    "detail": "all 5 checks passed",
                    "cases_passed": 5,
                    "cases_total": 5,
                },
                {
                    "number": "8.2",
                    "status": "FAIL",
                    "detail": "Exercise 8.2: wrong values",
                    "cases_passed": passed,
                    "cases_total": 4,
                },
                {
                    "number": "8.3",
                    "status": "by hand",
                    "detail": "",
                },
            ],
            "other_errors": [],
        }

    records = [
        record("ada", "2027-01-15T23:00:00+00:00", 4),
        record("bo", "2027-01-16T01:00:00+00:00", 2),  # 1 started day late
        record("cy", "2027-01-19T01:00:00+00:00", 1),  # 4 days: past max_days
    ]
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student,name,email,sis_id,section\nada,Ada L.,ada@uni.edu,1001,A\n"
    )
    rows = grade.write_gradebook(records, tmp_path, config=config, roster=roster)
    by = {r.student: r for r in rows}
    assert (
        by["ada"].days_late,
        by["ada"].factor,
        by["ada"].total,
    ) == (0, 1.0, 4.0)
    assert (
        by["bo"].days_late,
        by["bo"].factor,
        by["bo"].total,
    ) == (1, 0.9, 2.7)
    assert (
        by["cy"].days_late,
        by["cy"].factor,
        by["cy"].total,
    ) == (4, 0.0, 0.0)
    with open(tmp_path / "gradescope.csv", encoding="utf-8") as f:
        scope = list(csv.reader(f))
    assert scope[0] == ["Name", "SID", "Email", "08_stability"]
    assert scope[1] == ["Ada L.", "1001", "ada@uni.edu", "4"]
    assert scope[2][:2] == ["bo", "bo"]
    text = (tmp_path / "feedback" / "bo__08_stability.md").read_text()
    assert "1 day late (the points are multiplied by 0.9)" in text
    assert "| 8.2 | FAIL | 1 / 2 |" in text and "Exercise 8.2: wrong values" in text
    # a prose grade typed into the gradebook survives a rewrite; a bad one is named
    path = tmp_path / "gradebook.csv"
    path.write_text(
        path.read_text().replace(
            "ada,08_stability.ipynb,2,2,",
            "ada,08_stability.ipynb,2,2,3",
        )
    )
    rows = grade.write_gradebook(records, tmp_path, config=config)
    assert {r.student: r.total for r in rows}["ada"] == 7.0
    path.write_text(
        path.read_text().replace(
            "ada,08_stability.ipynb,2,2,3",
            "ada,08_stability.ipynb,2,2,9",
        )
    )
    import pytest

    with pytest.raises(
        ValueError,
        match=r"ada, 08_stability.ipynb, exercise 8.3: 9 points is outside \[0, 3\]",
    ):
        grade.write_gradebook(records, tmp_path, config=config)
    config.write_text("late:\n  deadline: '2027-01-15'\n")
    with pytest.raises(ValueError, match="has no time zone"):
        grade.read_config(config)
