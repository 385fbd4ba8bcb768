"""A class graded at once: 8 planted submissions -> one command -> a CSV gradebook.

The submissions are made here from the student edition of the fixture chapter
(fixtures/homework/assignment.ipynb: exercises 1.1, 1.2, 8.1, 8.2 with checkers and
the prose exercise 8.3), each with the answers a student might hand in: right,
wrong, right only to float32, calling the library function the exercise
re-implements, an untouched stub, a crashing kernel, an endless loop, a faked pass
line, a replaced checker, and so on: twenty planted answers, up to one per exercise
in each notebook (each exercise is graded on its own, and eight kernels cost less than
twenty). ``PLANTED`` holds the row a human grader gives each notebook; the gradebook
must say exactly that.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import nbformat

from booktools import grade
from booktools import student_edition as se

FIXTURES = (
    Path(__file__).resolve().parent / "fixtures" / "homework"
)
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
ANSWER = (
    "Row sums are not column sums: take W = [[r, r], [0, 0]] ..."
)


def _swap(number: str, old: str, new: str) -> dict[str, str]:
    assert old in RIGHT[number]
    return {number: RIGHT[number].replace(old, new)}


#: name -> (changes to the right answers, the gradebook row a human grader gives:
#: 1.1, 1.2, 8.1, 8.2, auto points, auto max, by hand). Each submission carries up
#: to one planted answer per exercise, as a student's notebook would (each exercise
#: is graded on its own), so that the twenty planted answers take eight kernels.
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
    # no end token, tanh for relu, a rescaling for the projection, float32 rows
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
            **_swap(
                "8.2",
                "out = W.clone()",
                "W = W.float()\n    out = W.clone()",
            ),
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
    # a syntax error, a float32 SVD, a printed pass line without the checker
    "syntax_float32_fake_pass": (
        {
            **_swap("1.2", "states = []", "states = ["),
            **_swap(
                "8.1",
                "torch.linalg.svd(W)",
                "torch.linalg.svd(W.float())",
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
    nb = se.student_notebook(REFERENCE)
    if changes.get("stub"):
        return nb
    cells = []
    for cell in nb.cells:
        number = cell.metadata.get(se.EXERCISE_KEY)
        if number:
            if "helper" in changes and number == "8.1":
                cells.append(
                    nbformat.v4.new_code_cell(changes["helper"])
                )
            source = changes.get(number, RIGHT[number])
            if source is None:
                continue
            cell.source = source
        if cell.metadata.get(se.ANSWER_KEY) and changes.get(
            "answer", ANSWER
        ):
            cell.source = (
                f"**Your answer to exercise 8.3.** {ANSWER}"
            )
        cells.append(cell)
        if (
            cell.cell_type == "code"
            and not number
            and "extra" in changes
        ):
            cells.append(
                nbformat.v4.new_code_cell(changes.pop("extra"))
            )
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
    assert len(PLANTED) == 8
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
        "note",
    ]
    got = {
        r[0]: r[2:6] + r[7:10] for r in rows[1:]
    }  # the prose column 8.3 is left empty for the instructor
    assert all(r[6] == "" for r in rows[1:])
    detail = json.loads((out / "grades.json").read_text())
    messages = {
        g["student"]: {
            e["number"]: e["detail"] for e in g["exercises"]
        }
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
        "float32 precision; compute in float64"
        in messages["syntax_float32_fake_pass"]["8.1"]
    )
    assert "float32 precision" in messages["wrong_each"]["8.2"]
    assert (
        "your function calls rnnlib.elman.normalize_sequence"
        in messages["library_and_raises"]["1.1"]
    )
    assert (
        "rnnlib.stability.project_spectral"
        in messages["library_and_raises"]["8.1"]
    )
    assert (
        "rnnlib.stability.project_l1_rows"
        in messages["library_and_raises"]["8.2"]
    )
    assert (
        "time limit of 15 s"
        in messages["replaced_checker_endless_loop"]["8.2"]
    )
    assert "kernel died" in messages["deleted_cell_crash"]["8.2"]
    assert "Exercise 8.1" in messages["stub"]["8.1"]
    assert "no code cell" in messages["deleted_cell_crash"]["8.1"]
    assert (
        "wrong values"
        in messages["replaced_checker_endless_loop"]["8.1"]
    )
    # the answers to the prose exercise, beside the statement and the model answer
    answers = (
        out / "answers" / "right__assignment.md"
    ).read_text()
    assert (
        ANSWER in answers
        and "### Model answer" in answers
        and "An answer." in answers
    )
    assert (
        "*(not answered)*"
        in (
            out
            / "answers"
            / "right_helper_slow_no_answer__assignment.md"
        ).read_text()
    )
    # fast mode did not run the unrelated slow cell (it sleeps 120 s and raises: run, it
    # would be an error outside the exercises); no clock decides it
    slow = next(
        g
        for g in detail["grades"]
        if g["student"] == "right_helper_slow_no_answer"
    )
    assert slow["skipped"] >= 1 and slow["other_errors"] == []


def test_the_gradebook_note_lists_every_error_and_answers_are_per_notebook():
    """Pure helpers of grade_class: no kernel."""
    record = {
        "failure": "",
        "other_errors": [
            [3, "NameError", "name 'x' is not defined\nmore"],
            [7, "ValueError", "bad"],
        ],
    }
    note = grade._note(record)
    assert note == (
        "cell 3 (not an exercise cell) raised NameError: name 'x' is not defined; "
        "cell 7 (not an exercise cell) raised ValueError: bad"
    )
    assert grade._note({"failure": "kernel died"}) == "kernel died"
    assert grade.answers_name(
        "alice", Path("s/alice/05_sgd.ipynb")
    ) != grade.answers_name(
        "alice", Path("s/alice/08_stability.ipynb")
    )
    assert (
        grade.answers_name(
            "group/bob", Path("x/08_stability.ipynb")
        )
        == "group_bob__08_stability.md"
    )
