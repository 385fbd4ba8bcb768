"""booktools.execute: every execution once, two at a time, recorded where the build and the checks read it."""

from __future__ import annotations

import shutil

import nbformat
import pytest
import yaml
from jupyter_cache import get_cache

from booktools import execute as ex
from booktools import nbval_notebooks, strip_notebooks
from booktools.toc import ROOT


def _book(tmp_path):
    """A two-chapter book, with the files the cache key hashes."""
    (tmp_path / "chapters").mkdir()
    (tmp_path / "rnnlib").mkdir()
    (tmp_path / "rnnlib" / "a.py").write_text("A = 1\n")
    for name in ("requirements.txt", "Makefile"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "_config.yml").write_text(
        yaml.safe_dump({"execute": {"timeout": 60}})
    )
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
    assert sorted(
        (r.job.target, r.job.path.name) for r in results
    ) == [
        ("book", "one.ipynb"),
        ("book", "two.ipynb"),
    ]
    assert all(r.error is None and r.seconds > 0 for r in results)
    cache = get_cache(str(root / "_build" / ".jupyter_cache"))
    for name, printed in (
        ("one", "threads 1\n"),
        ("two", "cwd chapters\n"),
    ):
        nb = nbformat.read(
            root / "chapters" / f"{name}.ipynb", as_version=4
        )
        record = cache.match_cache_notebook(
            nb
        )  # what jupyter-book's cache mode looks up
        assert (
            record.data["execution_seconds"] > 0
            and record.data["jobs"] == 2
        )
        assert (
            record.data["cpu_seconds"] is None
            or record.data["cpu_seconds"] >= 0
        )
        _, merged = cache.merge_match_into_notebook(nb)
        assert (
            merged.cells[1].outputs[0]["text"] == printed
        )  # the kernel's threads, run in the chapter's folder
    out = capsys.readouterr().out
    assert (
        "executing 2 notebooks, 2 at a time, 1 thread(s) each"
        in out
    )
    # nothing is executed twice
    assert ex.execute(["book"], root=root, jobs=2, threads=1) == []
    # an edited chapter is executed again; the other is not
    nb = nbformat.read(
        root / "chapters" / "two.ipynb", as_version=4
    )
    nb.cells[1].source += "\n2 + 2"
    nbformat.write(nb, root / "chapters" / "two.ipynb")
    again = ex.execute(["book"], root=root, jobs=1)
    assert [(r.job.target, r.job.path.name) for r in again] == [
        ("book", "two.ipynb")
    ]


def test_only_executes_the_notebooks_named(tmp_path):
    root = _book(tmp_path)
    results = ex.execute(
        ["book"], root=root, jobs=1, only=["chapters/two.ipynb"]
    )
    assert [r.job.path.name for r in results] == ["two.ipynb"]
    assert (
        ex.execute(["book"], root=root, only=["two.ipynb"]) == []
    )


def test_a_failing_chapter_is_reported_and_not_cached(tmp_path):
    root = _book(tmp_path)
    nb = nbformat.read(
        root / "chapters" / "two.ipynb", as_version=4
    )
    nb.cells[1].source = "raise ValueError('broken chapter')"
    nbformat.write(nb, root / "chapters" / "two.ipynb")
    results = {
        r.job.path.name: r
        for r in ex.execute(["book"], root=root, jobs=2)
    }
    assert results["one.ipynb"].error is None
    assert (
        results["two.ipynb"].nb is None
        and "broken chapter" in results["two.ipynb"].error
    )
    with pytest.raises(KeyError):
        get_cache(
            str(root / "_build" / ".jupyter_cache")
        ).match_cache_notebook(nb)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"targets: expected some of \['book', 'student'\], got \['all'\]",
    ):
        ex.execute(["all"], root=_book(tmp_path))
    with pytest.raises(
        ValueError, match="jobs: expected an integer >= 1, got 0"
    ):
        ex.execute(["book"], root=tmp_path, jobs=0)
    with pytest.raises(
        FileNotFoundError, match="no student edition in"
    ):
        ex.execute(["student"], root=tmp_path)


def test_nbval_notebooks_export_the_cache_and_name_what_is_missing(
    tmp_path,
):
    root = _book(tmp_path)
    chapters = [root / "chapters" / "two.ipynb"]
    out = root / "_build" / "nbval"
    with pytest.raises(
        FileNotFoundError, match="build: no execution cache at"
    ):
        nbval_notebooks.export(
            chapters, root / "_build", out, root
        )
    ex.execute(["book"], root=root, jobs=1, only=["one.ipynb"])
    with pytest.raises(
        LookupError, match="two.ipynb: no execution in"
    ):
        nbval_notebooks.export(
            chapters, root / "_build", out, root
        )
    ex.execute(["book"], root=root, jobs=1)
    (out / "stale.ipynb").parent.mkdir(parents=True)
    (out / "stale.ipynb").write_text("{}")
    written = nbval_notebooks.export(
        chapters, root / "_build", out, root
    )
    assert written == [out / "chapters" / "two.ipynb"]
    assert not (
        out / "stale.ipynb"
    ).exists()  # only what was asked
    nb = nbformat.read(written[0], as_version=4)
    assert nb.cells[1].outputs[0]["text"] == "cwd chapters\n"
    assert nb.cells[1].execution_count == 1
    assert nb.metadata["kernelspec"]["name"] == "python3"


def test_strip_notebooks(tmp_path):
    root = _book(tmp_path)
    ex.execute(["book"], root=root, jobs=1)
    (executed,) = nbval_notebooks.export(
        [root / "chapters" / "one.ipynb"],
        root / "_build",
        root / "_build" / "nbval",
        root,
    )
    assert strip_notebooks.main(["--check", str(executed)]) == 1
    assert strip_notebooks.main([str(executed)]) == 0
    nb = nbformat.read(executed, as_version=4)
    assert all(
        c.outputs == [] and c.execution_count is None
        for c in nb.cells
        if c.cell_type == "code"
    )
    assert strip_notebooks.main(["--check", str(executed)]) == 0


def test_the_budget_is_checked_on_cpu_time_where_recorded():
    from booktools import exec_times

    records = {
        "chapters/a.ipynb": {
            "execution_seconds": 200.0,
            "cpu_seconds": 40.0,
            "jobs": 2,
        },
        "chapters/b.ipynb": {
            "execution_seconds": 95.0
        },  # executed by the build itself: wall time
        "chapters/c.ipynb": None,
    }
    lines, problems = exec_times.check(records, 90, 120)
    assert (
        lines[2]
        == "| chapters/a.ipynb                              |  200.0 |  40.0 |       2 |"
    )
    assert problems == [
        "chapters/b.ipynb: 95.0 s (wall) >= 90 s per chapter",
        "chapters/c.ipynb: no execution record matches the notebook (was the book built?)",
        "the whole book: 135.0 s >= 120 s",
    ]
