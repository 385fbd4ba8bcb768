"""How the machinery is wired: the table of contents, the package, the Makefile and CI."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib

import pytest
import yaml

import booktools
from booktools import toc
from booktools.toc import ROOT

MODULES = sorted(
    p
    for p in (ROOT / "booktools").rglob("*.py")
    if "tests" not in p.relative_to(ROOT).parts
)
TOOLS = sorted(
    p.stem
    for p in (ROOT / "booktools").glob("*.py")
    if "__main__" in p.read_text() and p.stem != "__init__"
)


# --------------------------------------------------------------------------- the table of contents


def test_toc_lists_existing_pages_and_every_chapter():
    assert toc.missing_pages() == [], (
        f"_toc.yml lists pages that do not exist: {toc.missing_pages()}"
    )
    listed = {p.resolve() for p in toc.chapter_notebooks()}
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        assert nb.resolve() in listed, f"{nb.name} is not in _toc.yml"


def test_toc_helper_keeps_the_order_and_the_root(tmp_path):
    (tmp_path / "chapters").mkdir()
    for name in (
        "preface.md",
        "02_b.ipynb",
        "01_a.ipynb",
        "notes.md",
    ):
        (tmp_path / "chapters" / name).write_text("{}")
    (tmp_path / "_toc.yml").write_text(
        yaml.safe_dump(
            {
                "format": "jb-book",
                "root": "chapters/preface",
                "parts": [
                    {
                        "caption": "P",
                        "chapters": [
                            {"file": "chapters/02_b"},
                            {"file": "chapters/01_a"},
                            {"file": "chapters/missing"},
                            {"file": "chapters/notes.md"},
                        ],
                    }
                ],
            }
        )
    )
    assert toc.toc_entries(tmp_path) == [
        "chapters/preface",
        "chapters/02_b",
        "chapters/01_a",
        "chapters/missing",
        "chapters/notes.md",
    ]
    assert [p.name for p in toc.pages(tmp_path)] == [
        "preface.md",
        "02_b.ipynb",
        "01_a.ipynb",
        "notes.md",
    ]
    assert [p.name for p in toc.chapter_notebooks(tmp_path)] == [
        "02_b.ipynb",
        "01_a.ipynb",
    ]
    assert toc.missing_pages(tmp_path) == ["chapters/missing"]
    pruned = toc.without(toc.read_toc(tmp_path), ("chapters/01_a",))
    assert "chapters/01_a" not in yaml.safe_dump(
        pruned
    ) and "chapters/02_b" in yaml.safe_dump(pruned)
    with pytest.raises(FileNotFoundError, match="has no _toc.yml"):
        toc.read_toc(tmp_path / "chapters")


def test_no_other_module_walks_the_toc():
    """One helper lists the chapters: no other module of the machinery reads _toc.yml itself."""
    for path in MODULES:
        if path.name != "toc.py":
            text = path.read_text()
            assert not re.search(
                r"""["']_toc\.yml["']\)?\.read_text|glob\(["']\*\.ipynb""",
                text,
            ), f"{path.relative_to(ROOT)} walks the chapters itself; use booktools.toc"


# --------------------------------------------------------------------------- the package


def test_package_init_is_a_docstring():
    tree = ast.parse((ROOT / "booktools" / "__init__.py").read_text())
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr), (
        "booktools/__init__.py holds only its docstring"
    )
    assert booktools.__doc__


@pytest.mark.parametrize(
    "path",
    MODULES,
    ids=lambda p: str(p.relative_to(ROOT / "booktools")),
)
def test_modules_import_as_a_package(path):
    text = path.read_text()
    assert "sys.path" not in text, (
        f"{path.name} edits sys.path; import booktools.<module> instead"
    )
    assert "spec_from_file_location" not in text


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_runs_as_a_module(tool):
    result = subprocess.run(
        [sys.executable, "-m", f"booktools.{tool}", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        # as a reader would run it: not the variables of a `make test` that runs this test
        env={
            k: v
            for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "IN_TEST")
        },
    )
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def test_pyproject_installs_both_packages_and_configures_ruff():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["packages"]["find"]["include"] == [
        "rnnlib*",
        "booktools*",
    ]
    ruff = config["tool"]["ruff"]
    assert "*.ipynb" in ruff["extend-include"] and isinstance(ruff["line-length"], int)


def test_sphinx_extensions_are_installed_modules():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "local_extensions" not in config["sphinx"]
    ours = [
        e for e in config["sphinx"]["extra_extensions"] if e.startswith("booktools.")
    ]
    assert ours == [
        "booktools.sphinx_ext.plaintext_docstrings",
        "booktools.sphinx_ext.offline_fixes",
        "booktools.sphinx_ext.layout",
        "booktools.sphinx_ext.static_page",
        "booktools.sphinx_ext.latex_macros",
        "booktools.ledger",
        "booktools.exec_times",
    ]
    for name in ours:
        module = __import__(name, fromlist=["setup"])
        assert callable(module.setup)


# --------------------------------------------------------------------------- Makefile and CI


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "set -euo pipefail" in ci
    assert re.search(r"^make test$", ci, re.M)
    assert "make test" in readme and "make book" in readme


def test_book_build_fails_on_errors():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert cfg["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    assert cfg["execute"]["execute_notebooks"] == "cache"
    assert "-W -n --keep-going" in (ROOT / "Makefile").read_text()


def _dry_run(target: str) -> list[str]:
    result = subprocess.run(
        [
            "make",
            "-n",
            "--no-print-directory",
            *target.split(),
            "PYTHON=" + sys.executable,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        # as a reader would run it: not the variables of a `make test` that runs this test
        env={
            k: v
            for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "IN_TEST")
        },
    )
    assert result.returncode == 0, result.stderr
    # a recipe line continued with a backslash is one command
    return [
        " ".join(line.split())
        for line in result.stdout.replace("\\\n", " ").splitlines()
    ]


def test_make_test_executes_each_chapter_twice_and_each_student_notebook_once():
    """The commands of `make test` (make -n): one pool executes the book and the student
    edition (booktools.execute book student), nbval executes each chapter once more and
    compares it with the build's execution; the builds, the checks and the grader only read."""
    commands = _dry_run("test")
    executions = [c for c in commands if "booktools.execute" in c]
    assert [
        c for c in executions if re.search(r"booktools\.execute .*\bbook\b", c)
    ] == [
        c for c in executions if re.search(r"booktools\.execute .*\bbook student$", c)
    ] and len(executions) == 1, executions
    assert not any("nbconvert" in c or "repro_check" in c for c in commands)
    nbval = [c for c in commands if "--nbval" in c]
    assert len(nbval) == 1, nbval
    assert (
        "--nbval " in nbval[0] + " "
        and "--nbval-lax" not in nbval[0]
        and "--nbval-sanitize-with booktools/nbval_sanitize.cfg" in nbval[0]
        and nbval[0].rstrip().endswith("_build/nbval")
    ), nbval
    assert any("booktools.nbval_notebooks --out _build/nbval" in c for c in commands)
    assert commands.index(executions[0]) < commands.index(nbval[0])
    assert any(
        "booktools.grade --expect-stubs --executed student/_build" in c
        for c in commands
    )
    assert any("booktools.exec_times" in c for c in commands)
    assert any("ruff format --check" in c for c in commands) and any(
        "ruff check" in c for c in commands
    )
    unit = [c for c in commands if re.search(r"-m pytest tests\b", c)]
    assert unit and not any("booktools" in c for c in unit), (
        "make unit runs the library's tests only"
    )


def test_make_nbval_checks_one_chapter():
    commands = _dry_run("nbval NB=chapters/05_sgd.ipynb")
    text = "\n".join(commands)
    assert "booktools.execute --jobs 2 book --only chapters/05_sgd.ipynb" in text
    assert "booktools.nbval_notebooks --out _build/nbval chapters/05_sgd.ipynb" in text
    assert "--nbval " in text and " -n " not in text


def test_make_book_needs_no_browser():
    """`make book` asks for neither Chromium nor root (README, "What you need")."""
    commands = "\n".join(_dry_run("book"))
    assert "chromium" not in commands and "id -u" not in commands
    assert "jupyter-book build" in commands


def test_makefile_has_the_homework_targets():
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = makefile[makefile.index("\ntest:") :].split("\n\n")[0]
    assert re.search(r"\bstudent-check\b", test_recipe), "make test runs student-check"
    for target in (
        "student:",
        "student-check:",
        "grade:",
        "unit:",
        "tools-test:",
        "lint:",
        "executions:",
    ):
        assert re.search(rf"^{target}", makefile, re.M), (
            f"Makefile has no {target} target"
        )


def test_the_library_tests_start_no_kernel_and_no_browser():
    """`make unit` (pytest tests) stays fast: nothing in tests/ drives Jupyter kernels or Chromium."""
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text()
        for name in (
            "nbclient",
            "jupyter_client",
            "selenium",
            "booktools.grade",
            "booktools.execute",
        ):
            assert name not in text, (
                f"{path.relative_to(ROOT)} uses {name}; put it in booktools/tests"
            )
