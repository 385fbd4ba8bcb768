"""A planted class graded by one command: how long, and whether the gradebook says what a grader would.

    python benchmarks/grade_class.py [--students 60] [--jobs 2] [--out DIR]

Builds a class of ``--students`` students, each handing in two notebooks (the student
editions of chapters 8 and 9 with answers filled in), among them: right answers, wrong
ones, a partial one, ``torch.allclose``/``numpy.isclose`` patched before a wrong answer, a
table of the answers to the installed checker's fixed inputs, three endless loops, a
kernel that dies, untouched stubs and a late submission. Grades the class with
``booktools.grade --class`` and prints the wall time, the CPU time and the seconds per
submission; then checks every row of the gradebook against the points a human grader
gives each planted answer (``PLANTS``) and exits 1 on a difference. A benchmark, not a
test: the time depends on the machine (the target is 10 minutes on two cores).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from booktools import grade  # noqa: E402
from booktools import student_edition as se  # noqa: E402

RIGHT = {
    "8.1": "def my_project_spectral(W, radius):\n"
    "    U, s, Vh = torch.linalg.svd(W)\n"
    "    return U @ torch.diag(s.clamp(max=radius)) @ Vh\n",
    "8.2": "def my_project_rows(W, radius):\n"
    "    out = W.clone()\n"
    "    for i, v in enumerate(W):\n"
    "        if v.abs().sum() <= radius:\n"
    "            continue\n"
    "        u = v.abs().sort(descending=True).values\n"
    "        css = u.cumsum(0)\n"
    "        j = torch.arange(1, len(u) + 1, dtype=W.dtype)\n"
    "        rho = int(torch.nonzero(u * j > css - radius).max())\n"
    "        theta = (css[rho] - radius) / (rho + 1)\n"
    "        out[i] = torch.sign(v) * (v.abs() - theta).clamp(min=0)\n"
    "    return out\n",
    "9.1": "def my_truncated_states(W, U, x, k):\n"
    "    batch, T, _ = x.shape\n"
    "    out = []\n"
    "    for t in range(T):\n"
    "        h = torch.zeros(batch, W.shape[0], dtype=x.dtype)\n"
    "        for r in range(max(0, t - k + 1), t + 1):\n"
    "            h = torch.tanh(h @ W.T + x[:, r] @ U.T)\n"
    "        out.append(h)\n"
    "    return torch.stack(out, dim=1)\n",
}
CALL = {
    "8.1": "rnnlib.homework.check_exercise_8_1(my_project_spectral)",
    "8.2": "rnnlib.homework.check_exercise_8_2(my_project_rows)",
    "9.1": "rnnlib.homework.check_exercise_9_1(my_truncated_states)",
}
PATCH = (
    "import numpy as np\n"
    "torch.allclose = lambda *a, **k: True\n"
    "torch.isclose = lambda a, b, **k: torch.ones_like(a, dtype=torch.bool)\n"
    "np.allclose = lambda *a, **k: True\n"
    "np.isclose = lambda a, b, **k: np.ones(np.shape(a), dtype=bool)\n\n"
)
LOOKUP = (
    "from rnnlib.homework.chapter08 import _cases_8_1\n"
    "from rnnlib.stability import project_spectral\n"
    "_table = [(c.args[0].clone(), project_spectral(*c.args)) for c in _cases_8_1(81)]\n\n"
    "def my_project_spectral(W, radius):\n"
    "    for key, value in _table:\n"
    "        if key.shape == W.shape and torch.equal(key, W):\n"
    "            return value.clone()\n"
    "    return W\n"
)

#: name -> ({exercise: source or None (the stub stays)}, {exercise: points a grader gives}).
PLANTS: dict[str, tuple[dict, dict]] = {
    "right": ({**RIGHT}, {"8.1": "2", "8.2": "2", "9.1": "2"}),
    "stub": ({}, {"8.1": "0", "8.2": "0", "9.1": "0"}),
    "wrong": (
        {
            "8.1": "def my_project_spectral(W, radius):\n"
            "    return W * min(1.0, radius / float(torch.linalg.matrix_norm(W, ord=2)))\n",
            "8.2": "def my_project_rows(W, radius):\n    return W\n",
            "9.1": RIGHT["9.1"].replace("torch.tanh(", "torch.relu("),
        },
        {"8.1": "0", "8.2": "0", "9.1": "0"},
    ),
    # rows already inside the ball projected anyway (right on the one-row case only);
    # no truncation (right where k >= T: one of the five cases)
    "partial": (
        {
            "8.1": RIGHT["8.1"],
            "8.2": RIGHT["8.2"].replace(
                "        if v.abs().sum() <= radius:\n            continue\n",
                "",
            ),
            "9.1": RIGHT["9.1"].replace(
                "range(max(0, t - k + 1), t + 1)",
                "range(0, t + 1)",
            ),
        },
        {"8.1": "2", "8.2": "0.5", "9.1": "0.4"},
    ),
    "torch_patch": (
        {
            "8.1": PATCH + "def my_project_spectral(W, radius):\n    return W\n",
            "8.2": RIGHT["8.2"],
            "9.1": RIGHT["9.1"],
        },
        {"8.1": "0", "8.2": "2", "9.1": "2"},
    ),
    "lookup_table": (
        {"8.1": LOOKUP, "8.2": RIGHT["8.2"], "9.1": RIGHT["9.1"]},
        {"8.1": "0", "8.2": "2", "9.1": "2"},
    ),
    "endless_loop": (
        {
            "8.1": RIGHT["8.1"],
            "8.2": "def my_project_rows(W, radius):\n    while True:\n        pass\n",
            "9.1": RIGHT["9.1"],
        },
        {"8.1": "2", "8.2": "0", "9.1": "2"},
    ),
    "dying_kernel": (
        {
            "8.1": "def my_project_spectral(W, radius):\n"
            "    import os\n    os._exit(1)\n",
            "8.2": RIGHT["8.2"],
            "9.1": RIGHT["9.1"],
        },
        {"8.1": "0", "8.2": "2", "9.1": "2"},
    ),
}


def plant_of(index: int) -> str:
    """The plant of student ``index``: three endless loops in the class, one of each other kind, the rest right."""
    special = [p for p in PLANTS if p not in ("right", "endless_loop")]
    if index in (7, 27, 47):
        return "endless_loop"
    if index < len(special):
        return special[index]
    return "right"


def submission(chapter: str, answers: dict) -> nbformat.NotebookNode:
    nb = se.student_notebook(ROOT / "chapters" / f"{chapter}.ipynb")
    for cell in nb.cells:
        number = cell.metadata.get(se.EXERCISE_KEY)
        if number in answers:
            cell.source = answers[number] + "\n\n" + CALL[number]
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--out",
        help="where to leave the submissions and grades (default: a temporary folder)",
    )
    args = parser.parse_args(argv)
    base = Path(args.out or tempfile.mkdtemp(prefix="grade-class-"))
    folder, out = base / "submissions", base / "grades"
    deadline = datetime(2027, 1, 15, 23, 59, tzinfo=UTC)
    expected: dict[tuple[str, str], dict] = {}
    times = []
    for i in range(args.students):
        name = f"s{i:02d}_{plant_of(i)}"
        answers, points = PLANTS[plant_of(i)]
        (folder / name).mkdir(parents=True, exist_ok=True)
        late = i == 10  # one late submission: 2 started days late
        for chapter in ("08_stability", "09_truncation_inference"):
            nbformat.write(
                submission(chapter, answers),
                folder / name / f"{chapter}.ipynb",
            )
            when = deadline + (
                timedelta(days=1, hours=2) if late else -timedelta(hours=1)
            )
            times.append((name, f"{chapter}.ipynb", when.isoformat()))
            keys = [
                n for n in points if n.startswith(chapter.split("_")[0].lstrip("0"))
            ]
            expected[name, f"{chapter}.ipynb"] = {
                **{n: points[n] for n in keys},
                "late_factor": "0.8" if late else "1",
            }
    with open(folder / "submitted.csv", "w", newline="") as f:
        csv.writer(f).writerows([("student", "notebook", "submitted"), *times])
    config = base / "grading.yml"
    config.write_text(
        (ROOT / "booktools" / "grading.yml")
        .read_text()
        .replace("deadline: null", f"deadline: '{deadline.isoformat()}'")
    )
    started = time.monotonic()
    cpu = os.times()
    status = grade.main(
        [
            "--class",
            str(folder),
            "--out",
            str(out),
            "--jobs",
            str(args.jobs),
            "--config",
            str(config),
        ]
    )
    wall = time.monotonic() - started
    after = os.times()
    used = (
        after.children_user
        + after.children_system
        - cpu.children_user
        - cpu.children_system
    )
    n = len(expected)
    print(
        f"{args.students} students, {n} submissions on {args.jobs} jobs: {wall:.0f} s wall "
        f"({wall / 60:.1f} min; target 10 min), {used:.0f} s CPU, {wall * args.jobs / n:.1f} s per submission"
    )
    with open(out / "gradebook.csv", newline="") as f:
        rows = {(r["student"], r["notebook"]): r for r in csv.DictReader(f)}
    wrong = {
        key: {
            c: (rows.get(key, {}).get(c), v)
            for c, v in want.items()
            if rows.get(key, {}).get(c) != v
        }
        for key, want in expected.items()
    }
    wrong = {k: v for k, v in wrong.items() if v}
    for key, diff in sorted(wrong.items()):
        print(f"  {key}: (got, expected) {diff}")
    print(
        "gradebook: every row as planted"
        if not wrong
        else f"gradebook: {len(wrong)} rows differ"
    )
    return 1 if status or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
