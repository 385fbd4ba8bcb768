"""nbval, the book's notebook check (make nbval): planted faults on small fixture notebooks.

The pipeline is the one of ``make test``: ``booktools.execute book`` executes the
chapters into the build's cache, ``booktools.nbval_notebooks`` exports those executions,
and nbval, with the Makefile's options and the repository's sanitizer file, executes
each one again and compares every text output. A printed number that changes between
the two executions fails its cell with both outputs shown; a cell that raises fails;
a timing line, an address, a print split over two stream messages and an explorer
(whose print its Output widget holds) do not.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import nbformat
import pytest
import yaml

from booktools import execute as ex
from booktools import nbval_notebooks
from booktools.toc import ROOT

FIXTURES = ROOT / "booktools" / "tests" / "fixtures" / "nbval"
CHAPTERS = ("stable", "drifting", "raising")


def _nbval_options() -> list[str]:
    """The options the Makefile's nbval step passes to pytest (read from its recipe)."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nnbval:") :].split("\n\n")[0]
    command = re.search(
        r"-m pytest (.*?)\$\(if", recipe.replace("\\\n", " "), re.S
    ).group(1)
    return shlex.split(command.replace("$(NBVAL_CELL_TIMEOUT)", "60"))


@pytest.fixture(scope="module")
def nbval_run(tmp_path_factory):
    """The three fixture chapters executed for the book, then checked by nbval: (result, exported paths)."""
    root = tmp_path_factory.mktemp("book")
    (root / "chapters").mkdir()
    for name in CHAPTERS:
        shutil.copy(
            FIXTURES / f"{name}.ipynb",
            root / "chapters" / f"{name}.ipynb",
        )
    (root / "_config.yml").write_text(yaml.safe_dump({"execute": {"timeout": 60}}))
    (root / "_toc.yml").write_text(
        yaml.safe_dump(
            {
                "format": "jb-book",
                "root": "chapters/stable",
                "chapters": [{"file": f"chapters/{n}"} for n in CHAPTERS[1:]],
            }
        )
    )
    results = ex.execute(["book"], root=root, jobs=2, threads=1)
    assert all(r.error is None for r in results), [r.error for r in results]
    written = nbval_notebooks.export(
        [root / "chapters" / f"{n}.ipynb" for n in CHAPTERS],
        root / "_build",
        root / "_build" / "nbval",
        root,
    )
    env = {
        **os.environ,
        "PLANTED_FAULT": "1",
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *_nbval_options(),
            "-rA",
            "--color=no",
            str(root / "_build" / "nbval"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    return result, written


def _outcomes(output: str) -> dict[str, str]:
    """``{"stable.ipynb::Cell 0": "PASSED", ...}`` from pytest's -rA summary."""
    return {
        m.group(2): m.group(1)
        for m in re.finditer(
            r"^(PASSED|FAILED) \S*?(\w+\.ipynb::Cell \d+)",
            output,
            re.M,
        )
    }


def test_the_exported_notebooks_hold_the_builds_outputs(nbval_run):
    _, written = nbval_run
    assert [p.name for p in written] == [f"{n}.ipynb" for n in CHAPTERS]
    assert all(p.parent.name == "chapters" for p in written)
    stable = nbformat.read(written[0], as_version=4)
    code = [c for c in stable.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    assert code[0].outputs[0]["text"].startswith("loss 0.844422")
    # the explorer's print, held by its Output widget, is put before the widget's view
    explorer = code[-1].outputs
    assert [o.output_type for o in explorer] == [
        "stream",
        "execute_result",
    ]
    assert explorer[0].text == "a = 1\n"
    assert nbval_notebooks.WIDGET_VIEW in explorer[1].data


def test_a_chapter_that_reproduces_passes_despite_timings_and_addresses(
    nbval_run,
):
    result, _ = nbval_run
    outcomes = _outcomes(result.stdout)
    stable = {k: v for k, v in outcomes.items() if "stable" in k}
    assert stable and set(stable.values()) == {"PASSED"}, result.stdout
    assert len(stable) == 5  # one pytest item per code cell


def test_a_printed_number_that_changes_fails_with_the_cell_and_the_diff(
    nbval_run,
):
    result, _ = nbval_run
    outcomes = _outcomes(result.stdout)
    assert outcomes["drifting.ipynb::Cell 0"] == "PASSED"
    assert outcomes["drifting.ipynb::Cell 1"] == "FAILED"
    assert result.returncode == 1
    report = result.stdout
    assert "Cell outputs differ" in report
    # the cell's code and both outputs are shown, with their diff
    assert 'print(f"loss {random.random():.6f}")' in report
    assert "mismatch 'stdout'" in report
    assert re.search(r"^ *- loss 0\.\d{6}$", report, re.M) and re.search(
        r"^ *\+ loss 0\.\d{6}$", report, re.M
    ), report


def test_a_chapter_that_raises_fails(nbval_run):
    result, _ = nbval_run
    outcomes = _outcomes(result.stdout)
    assert outcomes["raising.ipynb::Cell 0"] == "PASSED"
    assert outcomes["raising.ipynb::Cell 1"] == "FAILED"
    assert "Cell execution caused an exception" in result.stdout
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    assert "ValueError: planted fault" in traceback


def test_nbval_waits_a_minute_for_outputs_of_a_finished_cell(
    nbval_run,
):
    # the Makefile's run loads the plugin (its header line) ...
    result, _ = nbval_run
    assert f"nbval waits up to {nbval_notebooks.OUTPUT_TIMEOUT} s" in result.stdout
    # ... whose hook lifts nbval's fixed 5 s on every cell item, and only there
    from nbval.plugin import IPyNbCell

    cell = object.__new__(IPyNbCell)
    cell.output_timeout = 5
    other = type("Other", (), {"output_timeout": 5})()
    nbval_notebooks.pytest_collection_modifyitems([cell, other])
    assert cell.output_timeout == nbval_notebooks.OUTPUT_TIMEOUT == 60
    assert other.output_timeout == 5


def test_the_sanitizer_file_masks_timings_addresses_and_ids_only():
    from nbval.plugin import get_sanitize_patterns

    text = nbval_notebooks.SANITIZER.read_text(encoding="utf-8")
    patterns = get_sanitize_patterns(text)
    # every "regex:" line has its "replace:" line (a lone one would be ignored silently)
    assert len(patterns) == text.count("\nregex: ")

    def clean(s: str) -> str:
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    for timing in (
        "100%|##########| 50/50 [00:01<00:00, 30.2it/s]",
        "trained in 1.25 s",
        "forward: 35 ms per batch",
        "3.2s/it",
        "elapsed 00:12",
        "Wall time: 2.1 s",
    ):
        assert clean(f"loss 0.5\n{timing}\nL = 4\n") == (
            "loss 0.5\n<a timing line>\nL = 4\n"
        ), timing
    for kept in (
        "loss 0.1234",
        "m = 512, L = 50",
        "relative gap 3.1e-03",
        "seconds per chapter: see the appendix",
        "5 steps of 10 seeds",
    ):
        assert clean(kept) == kept
    assert clean("<Foo at 0x7f3a2b4c5d60>") == "<Foo at 0x<address>>"
    assert clean("/tmp/ipykernel_4242/1234567.py:3: UserWarning") == (
        "/tmp/ipykernel_<pid>/<cell>.py:3: UserWarning"
    )
    assert clean("model 0123456789abcdef0123456789abcdef") == "model <model id>"
    assert clean("\x1b[31mred\x1b[0m") == "red"


def test_one_widget_walk_serves_the_export_and_the_grader():
    from booktools.grade import widget_errors
    from booktools.nbval_notebooks import lift_widget_outputs

    view = "application/vnd.jupyter.widget-view+json"
    cell = nbformat.v4.new_code_cell("explore()")
    cell.outputs = [
        nbformat.from_dict(
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {view: {"model_id": "box"}},
            }
        )
    ]
    nb = nbformat.v4.new_notebook(cells=[cell])
    error = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": "bad",
        "traceback": [],
    }
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "state": {
                "box": {
                    "model_name": "VBoxModel",
                    "state": {
                        "children": [
                            "IPY_MODEL_out",
                            "IPY_MODEL_box",
                        ]
                    },
                },
                "out": {
                    "model_name": "OutputModel",
                    "state": {"outputs": [error]},
                },
            }
        }
    }
    assert widget_errors(nb) == [(0, "ValueError (inside a widget)", "bad")]
    lifted = lift_widget_outputs(nb).cells[0].outputs
    assert [o["output_type"] for o in lifted] == [
        "error",
        "display_data",
    ]
