"""A real client: the chapters in JupyterLab (jupyterlab-myst) in headless Chromium.

Starts JupyterLab on 127.0.0.1 (a free port, a random token) serving the reader copies
that ``make lab`` opens (:mod:`booktools.lab`) of a Part II chapter (9, instructor edition)
and a Part I chapter in its student edition (2), runs all their cells and fails on a math error,
raw MyST (a directive fence, a role, a ``{glue`` placeholder, a glued number never
computed), a build comment that shows, or a cell error (the student notebook's own
``NotImplementedError`` stubs excepted). Screenshots: ``_build/html/_screenshots/jupyterlab/``.
Short chapters are chosen to keep the test near two minutes on a free machine (opening
and running both: 8.5 minutes for three notebooks on the shared 2-core machine);
``RNNLIB_LAB_CHAPTERS="02_concept_class.ipynb 05_sgd.ipynb"`` adds instructor chapters.
Citations and references to other chapters cannot resolve inside one notebook: they are
counted, not failed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import lab_client  # this folder's harness: a JupyterLab driven by Chromium
import nbformat
import pytest

from booktools import lab
from booktools.markup import student_notebook
from booktools.toc import ROOT

CHAPTERS = [
    "09_truncation_inference.ipynb",
    *os.environ.get("RNNLIB_LAB_CHAPTERS", "").split(),
]
STUDENT = "02_concept_class.ipynb"
SHOTS = ROOT / "_build" / "html" / "_screenshots" / "jupyterlab"

pytestmark = pytest.mark.skipif(
    not (shutil.which("chromium") and shutil.which("chromedriver")),
    reason="needs chromium and chromedriver (make browser-deps)",
)


@pytest.fixture(scope="module")
def reader_copies():
    folder = Path(tempfile.mkdtemp(prefix="rnnlib-reader-"))
    sources = folder / "sources"
    sources.mkdir()
    for name in CHAPTERS:
        shutil.copy2(ROOT / "chapters" / name, sources / name)
    student = student_notebook(ROOT / "chapters" / STUDENT)
    nbformat.write(student, sources / f"student_{STUDENT}")
    copies = lab.prepare(sources, folder / "lab")
    yield copies
    shutil.rmtree(folder, ignore_errors=True)


def test_eval_roles_rewrite_glue():
    text = "slope {glue:text}`ch05_rel_slope:.2f` and {glue:text}`ch05_n`."
    assert lab.eval_roles(text) == (
        'slope {eval}`rnnlib.notebook.glued("ch05_rel_slope", ".2f")` and '
        '{eval}`rnnlib.notebook.glued("ch05_n", "")`.'
    )


def test_chapters_render_and_run_in_jupyterlab(reader_copies):
    problems, times, unresolved = [], {}, {}
    with lab_client.lab_server(reader_copies) as (base, token, _):
        driver = lab_client.lab_driver()
        try:
            for copy in reader_copies:
                report = lab_client.open_and_run(
                    driver,
                    base,
                    token,
                    copy.name,
                    screenshot=SHOTS / f"{copy.stem}.png",
                )
                times[copy.name] = round(report.seconds, 1)
                unresolved[copy.name] = len(report.unresolved)
                allow = (
                    ("NotImplementedError: Exercise",)
                    if copy.name.startswith("student_")
                    else ()
                )
                problems += report.problems(allow_errors=allow)
        finally:
            driver.quit()
    print("JupyterLab, open + run all (s):", times)
    print("unresolved citations/references:", unresolved)
    assert not problems, "\n".join(problems)
