"""booktools.execute: every execution once, two at a time, recorded where the build and the checks read it."""

from __future__ import annotations

import json
import shutil
import subprocess

import nbformat
import pytest
import yaml
from jupyter_cache import get_cache

from booktools import execute as ex
from booktools import nbval_notebooks
from booktools.toc import ROOT


def _book(tmp_path):
    """A two-chapter book, with the files the cache key hashes."""
    (tmp_path / "chapters").mkdir()
    (tmp_path / "rnnlib").mkdir()
    (tmp_path / "rnnlib" / "a.py").write_text("A = 1\n")
    for name in ("requirements.txt", "Makefile"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "_config.yml").write_text(yaml.safe_dump({"execute": {"timeout": 60}}))
    (tmp_path / "_toc.yml").write_text(
        yaml.safe_dump(
            {
                "format": "jb-book",
                "root": "chapters/one",
                "chapters": [{"file": "chapters/two"}],
            }
        )
    )
    sources = {
        "one": "import os\nprint('threads', os.environ['OMP_NUM_THREADS'])",
        "two": "import os\nprint('cwd', os.path.basename(os.getcwd()))\n1 + 1",
    }
    for name, code in sources.items():
        nb = nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_markdown_cell(f"# {name}"),
                nbformat.v4.new_code_cell(code),
            ]
        )
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nbformat.write(nb, tmp_path / "chapters" / f"{name}.ipynb")
    return tmp_path


def test_book_executions_are_recorded_once(tmp_path, capsys):
    root = _book(tmp_path)
    results = ex.execute(["book"], root=root, jobs=2, threads=1)
    assert sorted((r.job.target, r.job.path.name) for r in results) == [
        ("book", "one.ipynb"),
        ("book", "two.ipynb"),
    ]
    assert all(r.error is None and r.seconds > 0 for r in results)
    cache = get_cache(str(root / "_build" / ".jupyter_cache"))
    for name, printed in (
        ("one", "threads 1\n"),
        ("two", "cwd chapters\n"),
    ):
        nb = nbformat.read(root / "chapters" / f"{name}.ipynb", as_version=4)
        record = cache.match_cache_notebook(
            nb
        )  # what jupyter-book's cache mode looks up
        assert record.data["execution_seconds"] > 0 and record.data["jobs"] == 2
        assert record.data["cpu_seconds"] is None or record.data["cpu_seconds"] >= 0
        # where the wall time went, and the budget's unit measured in the same run
        assert list(record.data["phases"]) == list(ex.PHASES)
        assert record.data["reference_cpu_seconds"] > 0
        _, merged = cache.merge_match_into_notebook(nb)
        assert (
            merged.cells[1].outputs[0]["text"] == printed
        )  # the kernel's threads, run in the chapter's folder
    out = capsys.readouterr().out
    assert "executing 2 notebooks, 2 at a time, 1 thread(s) each" in out
    # nothing is executed twice
    assert ex.execute(["book"], root=root, jobs=2, threads=1) == []
    # an edited chapter is executed again; the other is not
    nb = nbformat.read(root / "chapters" / "two.ipynb", as_version=4)
    nb.cells[1].source += "\n2 + 2"
    nbformat.write(nb, root / "chapters" / "two.ipynb")
    again = ex.execute(["book"], root=root, jobs=1)
    assert [(r.job.target, r.job.path.name) for r in again] == [("book", "two.ipynb")]


def test_only_executes_the_notebooks_named(tmp_path):
    root = _book(tmp_path)
    results = ex.execute(["book"], root=root, jobs=1, only=["chapters/two.ipynb"])
    assert [r.job.path.name for r in results] == ["two.ipynb"]
    assert ex.execute(["book"], root=root, only=["two.ipynb"]) == []


def test_a_failing_chapter_is_reported_and_not_cached(tmp_path):
    root = _book(tmp_path)
    nb = nbformat.read(root / "chapters" / "two.ipynb", as_version=4)
    nb.cells[1].source = "raise ValueError('broken chapter')"
    nbformat.write(nb, root / "chapters" / "two.ipynb")
    results = {r.job.path.name: r for r in ex.execute(["book"], root=root, jobs=2)}
    assert results["one.ipynb"].error is None
    assert (
        results["two.ipynb"].nb is None
        and "broken chapter" in results["two.ipynb"].error
    )
    with pytest.raises(KeyError):
        get_cache(str(root / "_build" / ".jupyter_cache")).match_cache_notebook(nb)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"targets: expected some of \['book', 'student'\], got \['all'\]",
    ):
        ex.execute(["all"], root=_book(tmp_path))
    with pytest.raises(ValueError, match="jobs: expected an integer >= 1, got 0"):
        ex.execute(["book"], root=tmp_path, jobs=0)
    with pytest.raises(FileNotFoundError, match="no student edition in"):
        ex.execute(["student"], root=tmp_path)


def test_nbval_notebooks_export_the_cache_and_name_what_is_missing(
    tmp_path,
):
    root = _book(tmp_path)
    chapters = [root / "chapters" / "two.ipynb"]
    out = root / "_build" / "nbval"
    with pytest.raises(FileNotFoundError, match="build: no execution cache at"):
        nbval_notebooks.export(chapters, root / "_build", out, root)
    ex.execute(["book"], root=root, jobs=1, only=["one.ipynb"])
    with pytest.raises(LookupError, match="two.ipynb: no execution in"):
        nbval_notebooks.export(chapters, root / "_build", out, root)
    ex.execute(["book"], root=root, jobs=1)
    (out / "stale.ipynb").parent.mkdir(parents=True)
    (out / "stale.ipynb").write_text("{}")
    written = nbval_notebooks.export(chapters, root / "_build", out, root)
    assert written == [out / "chapters" / "two.ipynb"]
    assert not (out / "stale.ipynb").exists()  # only what was asked
    nb = nbformat.read(written[0], as_version=4)
    assert nb.cells[1].outputs[0]["text"] == "cwd chapters\n"
    assert nb.cells[1].execution_count == 1
    assert nb.metadata["kernelspec"]["name"] == "python3"


def test_make_strip_empties_outputs_and_keeps_cell_ids(tmp_path):
    """``make strip NB=...`` (nbstripout --keep-id) on an executed notebook."""
    root = _book(tmp_path)
    ex.execute(["book"], root=root, jobs=1)
    (executed,) = nbval_notebooks.export(
        [root / "chapters" / "one.ipynb"],
        root / "_build",
        root / "_build" / "nbval",
        root,
    )
    before = nbformat.read(executed, as_version=4)
    assert any(c.get("outputs") for c in before.cells)
    make = ["make", "--no-print-directory", "-C", str(ROOT), "strip", f"NB={executed}"]
    subprocess.run(make, check=True, capture_output=True)
    nb = nbformat.read(executed, as_version=4)
    assert all(
        c.outputs == [] and c.execution_count is None and "execution" not in c.metadata
        for c in nb.cells
        if c.cell_type == "code"
    )
    assert [c.id for c in nb.cells] == [c.id for c in before.cells]  # --keep-id


def test_execution_times_are_reported_in_reference_units_and_never_fail_on_a_time(
    capsys,
):
    from booktools import exec_times
    from booktools import records as budget

    records = {
        "chapters/a.ipynb": {  # 40 s of CPU in a run whose reference workload took 2 s: 20 units
            "execution_seconds": 100.0,
            "cpu_seconds": 40.0,
            "jobs": 2,
            "reference_cpu_seconds": 2.0,
            "phases": {
                "kernel_start": 2.0,
                "kernel_info": 0.1,
                "cells": 97.0,
                "shutdown": 0.9,
            },
        },
        "chapters/b.ipynb": {  # 200 units: over the budget, and a stall (wall > 3 CPU + 10)
            "execution_seconds": 900.0,
            "cpu_seconds": 200.0,
            "jobs": 2,
            "reference_cpu_seconds": 1.0,
        },
        "chapters/c.ipynb": {
            "execution_seconds": 95.0
        },  # no CPU, no reference: wall time
    }
    lines, missing, warnings = exec_times.check(records)
    assert lines[2].startswith("| chapters/a.ipynb") and "|  20.0 |" in lines[2]
    assert "2.0, 0.1, 97.0, 0.9" in lines[2]
    assert missing == []
    assert warnings == [
        f"chapters/b.ipynb: 200.0 x the reference workload >= the budget of {budget.limit_units(90):.1f} (90 s on the reference machine)",
        "chapters/b.ipynb: a stall? 900.0 s of wall time for 200.0 s of CPU (more than 3 x CPU + 10 s; the phases column says where)",
        "chapters/c.ipynb: 95.0 s >= 90 s per chapter (no reference measured)",
    ]
    missing = exec_times.check({"chapters/d.ipynb": None})[1]
    assert missing == [
        "chapters/d.ipynb: no execution record matches the notebook (was the book built?)"
    ]


def test_exec_times_reports_in_make_test_and_enforces_only_in_bench(
    tmp_path, monkeypatch
):
    from booktools import exec_times

    (tmp_path / ".jupyter_cache").mkdir()
    over = {"chapters/b.ipynb": {"execution_seconds": 95.0}}
    monkeypatch.setattr(exec_times, "execution_records", lambda build: over)
    assert exec_times.main([str(tmp_path)]) == 0
    assert exec_times.main(["--enforce", str(tmp_path)]) == 1
    monkeypatch.setattr(
        exec_times,
        "execution_records",
        lambda build: {"chapters/b.ipynb": None},
    )
    assert exec_times.main([str(tmp_path)]) == 1


def _with_exercise(root):
    """Chapter two gets a setup cell, an exercise with its solution, and a student edition.

    The setup cell appends to ``runs.txt`` each time it runs; the solution prints
    ``SOLUTION``, which no student output may show.
    """
    from booktools import markup
    from booktools import student_edition as se

    path = root / "chapters" / "two.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells += [
        nbformat.v4.new_code_cell(
            "with open('runs.txt', 'a') as f:\n    f.write('x')\n"
            "def check_exercise_9_9(f):\n    print('checked', f())\n"
            "print('setup done')"
        ),
        nbformat.v4.new_markdown_cell(
            "```{exercise} 9.9 · An answer\n:label: ex-9-9\n:nonumber:\n\n"
            "Write `answer()`.\n```\n\n"
            "```{solution-start} ex-9-9\n:class: dropdown\n```"
        ),
        nbformat.v4.new_code_cell(
            "def answer():\n    ### BEGIN SOLUTION\n"
            "    print('SOLUTION')\n    return 42\n    ### END SOLUTION\n\n"
            "check_exercise_9_9(answer)"
        ),
        nbformat.v4.new_markdown_cell("```{solution-end}\n```"),
    ]
    nbformat.write(nb, path)
    (root / "student" / "chapters").mkdir(parents=True)
    shutil.copy(root / "_toc.yml", root / "student" / "_toc.yml")
    for name in ("one", "two"):
        student = markup.student_notebook(root / "chapters" / f"{name}.ipynb")
        se.add_install_cell(student, "https://example.org/book")
        for cell in student.cells:  # its import of rnnlib (torch) only costs time here
            if cell.metadata.get(markup.INSTALL_KEY):
                cell.source = "import os  # the install cell"
        nbformat.write(
            student,
            root / "student" / "chapters" / f"{name}.ipynb",
        )
    return root


def _outputs(nb):
    return [(c.execution_count, c.outputs) for c in nb.cells if c.cell_type == "code"]


def test_student_notebooks_reuse_the_chapters_execution_and_run_only_the_stubs(
    tmp_path,
):
    root = _with_exercise(_book(tmp_path))
    results = {
        (r.job.target, r.job.path.name): r
        for r in ex.execute(["book", "student"], root=root, jobs=2)
    }
    assert all(r.error is None for r in results.values())
    for name in ("one", "two"):
        job = results["student", f"{name}.ipynb"].job
        assert job.reuse == root / "chapters" / f"{name}.ipynb"
    # the setup cell ran once, in the book's execution: the stubs' run did not need it
    runs = root / "chapters" / "runs.txt"
    assert runs.read_text() == "x"
    book = ex.executed_in_build(root / "chapters" / "two.ipynb", root / "_build")
    student = ex.executed_in_build(
        root / "student" / "chapters" / "two.ipynb",
        root / "student" / "_build",
    )
    got = _outputs(student)
    # the install cell first, then the chapter's outputs, numbered as one run
    assert [n for n, _ in got] == [1, 2, 3, 4]
    assert got[0][1] == []
    assert [[o.get("text") or o.get("data") for o in outs] for _, outs in got[1:3]] == [
        [o.get("text") or o.get("data") for o in outs] for _, outs in _outputs(book)[:2]
    ]
    assert got[1][1][1]["execution_count"] == 2
    assert "setup done" in got[2][1][0]["text"]
    # the stub: its own NotImplementedError; the solution's output nowhere
    (error,) = got[3][1]
    assert error["ename"] == "NotImplementedError"
    assert student.metadata["language_info"] == book.metadata["language_info"]
    assert "SOLUTION" not in json.dumps(student)
    assert "SOLUTION" in json.dumps(book)
    from jupyter_cache import get_cache

    record = get_cache(
        str(root / "student" / "_build" / ".jupyter_cache")
    ).match_cache_notebook(
        nbformat.read(
            root / "student" / "chapters" / "two.ipynb",
            as_version=4,
        )
    )
    assert record.data["outputs_of"] == "chapters/two.ipynb"
    # the grader's check of the student edition accepts that execution
    from booktools import grade

    report = grade.grade_notebook(
        root / "student" / "chapters" / "two.ipynb",
        reference=root / "chapters" / "two.ipynb",
        executed=student,
    )
    assert grade.student_edition_problems(report) == []


def test_a_student_notebook_that_differs_from_its_chapter_is_executed_in_full(
    tmp_path,
):
    root = _with_exercise(_book(tmp_path))
    path = root / "student" / "chapters" / "two.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[1].source += "\nprint('changed')"
    nbformat.write(nb, path)
    results = {
        (r.job.target, r.job.path.name): r
        for r in ex.execute(
            ["book", "student"],
            root=root,
            jobs=2,
            only=["two.ipynb"],
        )
    }
    assert results["student", "two.ipynb"].job.reuse is None
    # its setup cell ran in its own folder, in the book's execution and in its own
    assert (root / "chapters" / "runs.txt").read_text() == "x"
    assert (root / "student" / "chapters" / "runs.txt").read_text() == "x"
    student = ex.executed_in_build(path, root / "student" / "_build")
    assert "changed" in json.dumps(student)
    # and so is one whose chapter has no execution yet (the student edition alone)
    shutil.rmtree(root / "student" / "_build")
    shutil.rmtree(root / "_build")
    alone = ex.execute(["student"], root=root, jobs=1, only=["two.ipynb"])
    assert all(r.job.reuse is None for r in alone)
    assert (root / "student" / "chapters" / "runs.txt").read_text() == "xx"


def test_every_student_notebook_of_the_book_reuses_its_chapters_execution():
    """Each chapter puts its exercises last, so its student notebook runs only its stubs.

    A chapter with a cell after its exercises still works (its student notebook is then
    executed in full), but costs `make test` a whole execution more: this names it.
    """
    from booktools import markup
    from booktools.toc import chapter_notebooks

    full = [
        path.name
        for path in chapter_notebooks(ROOT)
        if ex.reusable_prefix(
            markup.student_notebook(path),
            nbformat.read(path, as_version=4),
        )
        is None
    ]
    assert not full, (
        f"executed in full in the student edition (a code cell after an exercise?): {full}"
    )
