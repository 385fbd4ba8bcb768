"""The chapters as notebooks: what a front end (JupyterLab, Colab, Binder) needs from the repository.

* the math macros: one source (``_config.yml``), copied into a hidden cell of each
  chapter by ``booktools.macros``;
* ``rnnlib.notebook.glue``: the chapters' ``glue`` without MyST-NB;
* the Binder / conda environment: ``environment.yml`` parses, installs the package and
  the JupyterLab with MyST rendering, and nothing in ``binder/`` shadows it;
* the package declares what the chapters import at run time.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

from booktools import macros as book_macros
from booktools.toc import chapter_notebooks
from rnnlib import notebook

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = chapter_notebooks(ROOT)


def test_config_macros_are_well_formed():
    macros = book_macros.book_macros(ROOT)
    assert {"vx", "mW", "norm", "ip", "Back", "Frnn"} <= set(macros)
    lines = book_macros.definitions(macros)
    assert lines[list(macros).index("norm")] == (
        r"\def\norm#1{\left\lVert #1 \right\rVert}"
    )
    # the front matter of the macro cell is YAML that gives back every macro body
    source = book_macros.macro_source(macros)
    front = yaml.safe_load(source.split("---")[1])
    assert front["math"] == {
        "\\" + k: (v[0] if isinstance(v, list) else v) for k, v in macros.items()
    }


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_carries_the_current_macro_cell(path):
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if book_macros.is_macro_cell(c)]
    assert len(cells) == 1, f"{path.name}: run python -m booktools.macros"
    cell = cells[0]
    assert cell.source == book_macros.macro_source(book_macros.book_macros(ROOT)), (
        f"{path.name}: stale macro cell: run python -m booktools.macros"
    )
    assert "remove-cell" in cell.metadata.get("tags", [])
    # before the first use of a macro
    names = "|".join(book_macros.book_macros(ROOT))
    uses = re.compile(rf"\\(?:{names})(?![A-Za-z])")
    first_use = next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown"
        and not book_macros.is_macro_cell(c)
        and uses.search(c.source)
    )
    assert nb.cells.index(cell) < first_use


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_take_glue_from_rnnlib(path):
    """A bare ``pip install`` of the package (Colab) has no myst_nb."""
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "myst_nb" not in code, f"{path.name}: import glue from rnnlib.notebook"


def test_sync_inserts_first_and_is_idempotent():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 1. Title"),
        nbformat.v4.new_code_cell("x = 1"),
    ]
    macros = {"vx": r"\mathbf{x}", "ip": ["<#1, #2>", 2]}
    assert book_macros.sync(nb, macros)
    assert book_macros.is_macro_cell(nb.cells[0])
    assert nb.cells[0].source.endswith(r"$\def\vx{\mathbf{x}} \def\ip#1#2{<#1, #2>}$")
    assert not book_macros.sync(nb, macros)
    assert book_macros.sync(nb, {"vx": r"\mathbf{v}"})
    assert "mathbf{v}" in nb.cells[0].source
    nbformat.validate(nb)


def test_glue_is_a_no_op_without_myst_nb(monkeypatch):
    monkeypatch.setattr(notebook, "_myst_glue", None)
    assert notebook.glue("ch00_x", 1.5, display=False) is None


def test_glue_forwards_to_myst_nb(monkeypatch):
    seen = []
    monkeypatch.setattr(
        notebook,
        "_myst_glue",
        lambda name, value, display: seen.append((name, value, display)),
    )
    notebook.glue("ch00_x", 2.0, display=False)
    assert seen == [("ch00_x", 2.0, False)]


def test_glued_formats_as_the_role_would(monkeypatch):
    monkeypatch.setattr(notebook, "_GLUED", {})
    assert repr(notebook.glued("ch00_y", ".2f")) == "(computed when the chapter runs)"
    notebook.glue("ch00_y", 0.12345, display=False)
    assert repr(notebook.glued("ch00_y", ".2f")) == "0.12"
    assert repr(notebook.glued("ch00_y")) == "0.12345"
    notebook.glue("ch00_s", "text", display=False)
    assert repr(notebook.glued("ch00_s", ".2f")) == "text"


def _third_party_imports(source: str) -> set[str]:
    tops = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            tops |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            tops.add(node.module.split(".")[0])
    return tops


def test_the_package_declares_what_the_chapters_import():
    """What a chapter imports is installed by ``pip install`` of the package (Colab)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = {
        re.split(r"[<>=!~ \[;]", d)[0].lower().replace("-", "_")
        for d in project["project"]["dependencies"]
    }
    provided_by = {"IPython": "ipywidgets"}  # ipywidgets requires IPython
    stdlib = set(__import__("sys").stdlib_module_names)
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code" or cell.source.lstrip().startswith(("%", "!")):
                continue
            for top in _third_party_imports(cell.source):
                if top in stdlib or top in ("rnnlib", "booktools"):
                    continue
                need = provided_by.get(top, top).lower()
                assert need in declared, (
                    f"{path.name} imports {top}: declare {need} in pyproject.toml"
                )


def test_environment_yml_is_usable_by_binder():
    """Binder (repo2docker) reads environment.yml at the root unless binder/ exists."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert not (ROOT / "binder").exists() and not (ROOT / ".binder").exists(), (
        "a binder/ folder would shadow environment.yml"
    )
    deps = env["dependencies"]
    assert any(isinstance(d, str) and d.startswith("python=3.11") for d in deps)
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert "-e ." in pip, "Binder must install the package"
    names = {p.split("==")[0] for p in pip if "==" in p}
    assert {"jupyterlab", "jupyterlab-myst", "ipykernel"} <= names


def test_student_notebooks_start_with_the_install_cell(tmp_path):
    """With the one launch setting, every student notebook installs the package from the
    student repository (which write_student_repository fills); without it, no install cell."""
    from booktools import student_edition as se

    url = "https://example.org/course/student-edition"
    written = se.build_student_edition(ROOT, tmp_path / "student", repository_url=url)
    for path in written:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code[0].metadata.get(se.INSTALL_KEY), path.name
        assert f"git+{url}@main" in code[0].source
        ast.parse(code[0].source)  # plain Python: no magics to transform
    env = yaml.safe_load((tmp_path / "student" / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip, (
        "Binder installs the package from the student repository itself"
    )
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    if not cfg["student_edition"]["repository_url"]:
        for path in se.build_student_edition(ROOT, tmp_path / "off"):
            nb = nbformat.read(path, as_version=4)
            assert not any(c.metadata.get(se.INSTALL_KEY) for c in nb.cells), (
                f"{path.name}: an install cell from a repository that is not set"
            )
    with pytest.raises(ValueError, match="^url: "):
        se.install_source("git@github.com:x/y")


def test_the_student_repository_holds_what_the_launch_buttons_open(
    tmp_path,
):
    from booktools import student_edition as se

    portable = tmp_path / "portable"
    portable.mkdir()
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("**Exercise 8.1 · x.** text")]
    )
    from booktools.toc import chapter_notebooks

    for path in chapter_notebooks(ROOT):
        nbformat.write(nb, portable / path.name)
    files = se.write_student_repository(tmp_path / "repo", ROOT, portable)
    repo = tmp_path / "repo"
    assert (repo / "chapters" / "08_stability.ipynb") in files
    assert (repo / "rnnlib" / "__init__.py").is_file()
    assert (repo / "pyproject.toml").is_file() and (repo / "environment.yml").is_file()
    assert not list(repo.rglob("__pycache__"))
    with pytest.raises(FileNotFoundError, match="make portable"):
        se.write_student_repository(tmp_path / "r2", ROOT, tmp_path / "none")
    with pytest.raises(ValueError, match="overwrite the book"):
        se.write_student_repository(ROOT, ROOT, portable)


def test_the_install_cell_installs_from_a_published_student_repository(
    tmp_path,
):
    """The launch path end to end, offline: the folder ``make student-repository`` writes,
    published as a git repository over HTTP (git's dumb protocol, from 127.0.0.1), is what
    the install cell's pip command installs rnnlib from, and it holds every notebook a
    launch link opens."""
    import functools
    import http.server
    import shlex
    import shutil
    import subprocess
    import sys
    import threading

    from booktools import student_edition as se

    if shutil.which("git") is None:
        pytest.skip("needs git")
    portable = tmp_path / "portable"
    portable.mkdir()
    for path in chapter_notebooks(ROOT):
        nbformat.write(nbformat.v4.new_notebook(), portable / path.name)
    repo = tmp_path / "repo"
    se.write_student_repository(repo, ROOT, portable)

    def git(*args, cwd=repo):
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                *args,
            ],
            cwd=cwd,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "student edition")
    served = tmp_path / "served"
    served.mkdir()
    git(
        "clone",
        "-q",
        "--bare",
        str(repo),
        str(served / "course.git"),
    )
    git("update-server-info", cwd=served / "course.git")
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(served)
    )
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/course.git"
        source = se.install_source(url)
        spec = re.search(r"install --quiet (.+)\"", source)[1]
        target = tmp_path / "site"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet"]
            + ["--no-deps", "--no-build-isolation", "--no-index"]
            + ["--target", str(target), *shlex.split(spec)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (target / "rnnlib" / "homework" / "__init__.py").is_file()
    for path in chapter_notebooks(ROOT):
        assert (repo / "chapters" / path.name).is_file(), path.name


def test_explorer_reports_busy_and_its_redraw_time(monkeypatch):
    import matplotlib.pyplot as plt

    from rnnlib import widgets

    seen = []

    def figure(a=1):
        seen.append(ui_status[0].value if ui_status else None)
        fig, ax = plt.subplots()
        ax.plot([0, a])
        return fig

    ui_status: list = []
    ui = widgets.explore(figure, a=widgets.int_slider(1, 0, 3))
    ui_status.append(ui.status)
    assert ui.status in ui.children and len(ui.timings) == 1
    assert ui.status.value == ""  # fast: nothing to say
    monkeypatch.setattr(widgets, "SLOW_S", -1.0)
    ui.children[0].value = 2  # a slider change redraws
    assert seen[-1] == "<i>computing…</i>"  # shown while it computes
    assert len(ui.timings) == 2
    assert ui.status.value.startswith("<i>redrawn in ")


def test_glue_stores_a_numpy_scalar_as_a_python_number():
    """MyST-NB formats a glued number from its text: ``np.float64(0.05)`` would not parse."""
    import numpy as np

    from rnnlib import notebook

    notebook.glue("t_numpy_scalar", np.float64(0.05), display=False)
    value = notebook._GLUED["t_numpy_scalar"]
    assert type(value) is float and repr(value) == "0.05"


def test_lab_gives_each_kernel_one_thread(monkeypatch):
    """``make lab``'s server (and so its kernels) runs one thread unless the caller sets one."""
    from booktools import lab

    seen: dict[str, str] = {}
    monkeypatch.setattr(lab, "prepare", lambda source, target: [])
    monkeypatch.setattr(lab.os, "execve", lambda path, argv, env: seen.update(env))
    for name in lab.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert lab.main([]) == 0
    assert {name: seen[name] for name in lab.THREAD_VARIABLES} == {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    monkeypatch.setenv("OMP_NUM_THREADS", "4")  # the caller's choice
    assert lab.main([]) == 0
    assert seen["OMP_NUM_THREADS"] == "4"
