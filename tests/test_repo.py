"""Checks of the repository itself: pins, notebooks, table of contents, CI wiring."""

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def _pins_from_requirements() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.txt: {line!r} is not pinned with =="
            pins[name.lower()] = version
    return pins


def test_requirements_are_pinned_and_torch_is_the_cpu_build():
    pins = _pins_from_requirements()
    assert pins["torch"] == "2.13.0"
    for name in ("jupyter-book", "nbval", "ipywidgets", "matplotlib", "numpy", "sphinx-proof", "sphinx-exercise"):
        assert name in pins, f"{name} missing from requirements.txt"
    assert pins["jupyter-book"].startswith("1."), "the course is built with Jupyter Book 1.x"


def test_environment_yml_mirrors_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(dep["pip"] for dep in env["dependencies"] if isinstance(dep, dict))
    env_pins = {}
    for item in pip_section:
        if item.startswith("-e"):
            continue
        name, _, version = item.partition("==")
        env_pins[name.lower()] = version
    assert env_pins == _pins_from_requirements()
    assert "python=3.11" in env["dependencies"]


def test_there_are_chapter_notebooks():
    assert NOTEBOOKS, "no chapter notebooks found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_stored_without_outputs(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name}: cell {i} has outputs (strip them before committing)"
            assert cell.get("execution_count") is None, f"{path.name}: cell {i} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_conventions(path):
    nb = json.loads(path.read_text())
    cells = nb["cells"]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# ")
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "seed_everything" in "".join(code[0]["source"]), "the first code cell imports and seeds"
    assert any("parameters" in c["metadata"].get("tags", []) for c in code), "a cell tagged `parameters` holds sizes"
    assert any(re.search(r"^\s*assert ", "".join(c["source"]), re.M) for c in code), "claims are checked by asserts"


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if "file" in node:
            files.append(node["file"])
        for value in node.values():
            files += _toc_files(value)
    elif isinstance(node, list):
        for value in node:
            files += _toc_files(value)
    return files


def test_toc_lists_existing_pages_and_every_chapter():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + _toc_files(toc)
    for f in files:
        assert any((ROOT / (f + ext)).exists() for ext in (".ipynb", ".md")), f"_toc.yml lists {f}, which does not exist"
    for nb in NOTEBOOKS:
        assert f"chapters/{nb.stem}" in files, f"{nb.name} is not in _toc.yml"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "set -euo pipefail" in ci
    assert re.search(r"^make test$", ci, re.M)
    assert "make test" in readme and "make book" in readme


def test_book_build_fails_on_errors():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert cfg["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    makefile = (ROOT / "Makefile").read_text()
    assert "-W -n --keep-going" in makefile
    assert "--nbval-lax" in makefile


def test_package_docstring_names_only_existing_modules():
    """rnnlib/__init__.py's module list names only modules that exist, and every module is importable lazily."""
    import importlib.util
    import re

    import rnnlib

    named = set(re.findall(r":mod:`rnnlib\.(\w+)`", rnnlib.__doc__))
    assert named, "the package docstring lists its modules"
    for name in named:
        assert importlib.util.find_spec(f"rnnlib.{name}") is not None, f"rnnlib.{name} is listed but does not exist"
    for name in rnnlib._SUBMODULES:
        assert getattr(rnnlib, name).__name__ == f"rnnlib.{name}"
    assert named == rnnlib._SUBMODULES, f"modules not in the docstring: {sorted(rnnlib._SUBMODULES - named)}"
