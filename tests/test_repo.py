"""Checks of the repository itself: pins and stored notebooks (the machinery's wiring: booktools/tests)."""

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


def test_requirements_are_pinned():
    """The pins themselves; that the installed torch is the pinned CPU build is checked by
    `make env` right after it installs them (the Makefile's environment step)."""
    pins = _pins_from_requirements()
    for name in (
        "torch",
        "jupyter-book",
        "ruff",
        "ipywidgets",
        "matplotlib",
        "numpy",
        "sphinx-proof",
        "sphinx-exercise",
    ):
        assert name in pins, f"{name} missing from requirements.txt"
    assert pins["jupyter-book"].startswith("1."), (
        "the course is built with Jupyter Book 1.x"
    )


def test_environment_yml_mirrors_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(
        dep["pip"] for dep in env["dependencies"] if isinstance(dep, dict)
    )
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
            assert cell.get("outputs") == [], (
                f"{path.name}: cell {i} has outputs (strip them: make strip)"
            )
            assert cell.get("execution_count") is None, (
                f"{path.name}: cell {i} has an execution count"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_conventions(path):
    nb = json.loads(path.read_text())
    # the generated macro cell (booktools.macros) comes first, then the title
    cells = [c for c in nb["cells"] if not c["metadata"].get("rnnlib_macros")]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert cells[0]["cell_type"] == "markdown" and "".join(
        cells[0]["source"]
    ).startswith("# ")
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "seed_everything" in "".join(code[0]["source"]), (
        "the first code cell imports and seeds"
    )
    assert any("parameters" in c["metadata"].get("tags", []) for c in code), (
        "a cell tagged `parameters` holds sizes"
    )
    assert any(re.search(r"^\s*assert ", "".join(c["source"]), re.M) for c in code), (
        "claims are checked by asserts"
    )


def test_every_public_rnnlib_module_has_an_api_page():
    """Each public module of rnnlib has an automodule on a page under chapters/api/.

    A module of a package whose ``__init__`` re-exports it (``plotting``,
    ``homework``) is covered by the package's page; ``rnnlib.experiments``
    re-exports nothing, so each chapter's module needs its own entry.
    """
    pages = "".join(p.read_text() for p in (ROOT / "chapters" / "api").glob("*.md"))
    documented = set(re.findall(r"automodule:: (rnnlib[\w.]*)", pages))
    missing = []
    for path in (ROOT / "rnnlib").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(part.startswith("_") for part in parts):
            continue
        name, parent = ".".join(parts), ".".join(parts[:-1])
        covered = name in documented or (
            parent in documented and parent not in ("rnnlib", "rnnlib.experiments")
        )
        if name != "rnnlib" and not covered:
            missing.append(name)
    assert not missing, missing
