"""A class's gradebook from the grader's records: the CSV, the late policy, LMS exports, feedback files.

    python -m booktools.gradebook GRADES_DIR [--config booktools/grading.yml] [--roster roster.csv]

``booktools.grade --class`` grades the submissions and calls :func:`write_gradebook`;
this command rewrites the same files from ``GRADES_DIR/grades.json`` without grading
again: after you have typed the points of the prose exercises into the gradebook's
columns (they are kept), changed the late policy or the points in the grading file, or
added a roster. Pure file work: no kernel, no rnnlib.

What it writes in ``GRADES_DIR`` (chapters/instructor_guide.md, "Grading", shows each):

- ``gradebook.csv``: a row per submission: the points of each exercise (partial credit:
  the share of an exercise's checks passed), the automatic total and maximum, the prose
  exercises to grade by hand (their columns are yours to fill), the submission time, the
  days late, the late factor, the total after it and its maximum, and a note listing
  every error;
- ``canvas.csv`` and ``gradescope.csv``: one row per student, one column per notebook
  (the total after the late factor), in the columns Canvas's gradebook import and
  Gradescope's score import read (``Student, ID, SIS User ID, SIS Login ID, Section`` and
  ``Name, SID, Email``); a roster (``student,name,email,sis_id,section``) fills the
  identities, otherwise the submission folder's name stands in;
- ``feedback/<student>__<notebook>.md``: the file to hand back: each exercise's result,
  points and message (the messages never show an expected value).

Hand-written because the job is small and specific: a gradebook of this grader's
records (nbgrader's exporters need its database, which this book's grader does not use).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

PASS, BY_HAND = "pass", "by hand"
GRADING_CONFIG = Path(__file__).resolve().parent / "grading.yml"
#: Optional file in the submissions folder: ``student,notebook,submitted`` (ISO 8601 times,
#: as an LMS download lists them); without it, a notebook's modification time counts.
SUBMITTED_FILE = "submitted.csv"


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


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


def _first_line(text: str) -> str:
    return next(iter((text or "").strip().splitlines()), "")


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
    parser.add_argument(
        "grades",
        help="the folder of a class's grades (with grades.json)",
    )
    parser.add_argument(
        "--config",
        default=str(GRADING_CONFIG),
        help="the grading file (points, late policy)",
    )
    parser.add_argument(
        "--roster",
        help="roster.csv: student,name,email,sis_id,section",
    )
    args = parser.parse_args(argv)
    folder = Path(args.grades)
    try:
        records = json.loads((folder / "grades.json").read_text(encoding="utf-8"))[
            "grades"
        ]
        rows = write_gradebook(records, folder, config=args.config, roster=args.roster)
    except (OSError, ValueError, KeyError) as exc:
        print(f"gradebook: {exc}", file=sys.stderr)
        return 2
    print(
        f"{len(rows)} rows: {folder / 'gradebook.csv'}, canvas.csv, gradescope.csv, feedback/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
