"""Open notebooks in a real JupyterLab (with jupyterlab-myst) in headless Chromium, run them, report.

What a student sees in JupyterLab is checked by the page JupyterLab renders, not by a
parser of ours: :func:`lab_server` starts ``jupyter lab`` on 127.0.0.1 (a free port, a
random token, no browser, the notebooks copied into a scratch folder so JupyterLab never
writes into the repository), and :func:`open_and_run` opens one notebook, runs all its
cells (``notebook:run-all-cells``), waits for the kernel, and returns a :class:`LabReport`:

* math errors (KaTeX's ``.katex-error`` in MyST cells, MathJax's ``merror`` elsewhere);
* raw MyST left in the rendered markdown: a directive fence (```` ```{name} ````,
  ``:::{name}``), a role (``{name}`...` ``) or a ``{glue`` placeholder;
* a build-only comment (``% typed numbers``) that shows;
* cells whose outputs hold an error.

``booktools/tests/test_jupyterlab_client.py`` runs it on a Part I and a Part II chapter
and on one student notebook; screenshots go to ``_build/html/_screenshots/jupyterlab/``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from booktools.records import WAITS, make_driver

#: The text a rendered markdown cell must not contain: MyST that did not render, a glued
#: value that was never computed, a comment meant for the build.
RAW_MYST = (
    r"(```|~~~|:::)\{[a-z][\w:-]*\}|\{[a-z][\w:-]*\}`|\{glue|\{eval"
    r"|\(computed when the chapter runs\)|^% typed numbers|\bch\d\d_\w+:"
)

_REPORT_JS = r"""
const done = arguments[arguments.length - 1];
const app = window.jupyterapp;
const panel = app.shell.currentWidget;
const nb = panel.content;
const out = {cells: nb.widgets.length, raw: [], math: [], errors: [], unresolved: [], unrendered: 0};
const raw = new RegExp(arguments[0], 'm');
nb.widgets.forEach((cell, i) => {
  const type = cell.model.type;
  if (type === 'markdown') {
    if (!cell.rendered) { out.unrendered += 1; }
    const node = cell.node.querySelector('.jp-MarkdownOutput, .jp-RenderedMarkdown, .myst') || cell.node;
    const text = node.innerText || '';
    const m = text.match(raw);
    if (m) { out.raw.push([i, text.substr(Math.max(0, m.index - 60), 160)]); }
    // jupyterlab-myst marks a KaTeX error by a yellow span whose title is the message
    node.querySelectorAll('.katex-error, merror, mjx-merror, .MathJax_Error, .text-yellow-600[title]').forEach(e => {
      const msg = (e.getAttribute('title') || e.textContent || '').substr(0, 200);
      // a citation or a reference to another chapter cannot resolve inside one notebook
      if (/^(Citation|Cross Reference) Not Found/.test(msg)) { out.unresolved.push([i, msg]); }
      else { out.math.push([i, msg]); }
    });
  } else if (type === 'code') {
    const outputs = cell.model.outputs;
    for (let k = 0; k < outputs.length; k++) {
      const o = outputs.get(k).toJSON();
      if (o.output_type === 'error') {
        out.errors.push([i, o.ename + ': ' + o.evalue]);
      }
    }
  }
});
done(out);
"""


@dataclass
class LabReport:
    """What one notebook looked like in JupyterLab after running all its cells."""

    notebook: str
    cells: int = 0
    raw: list = field(default_factory=list)  #: (cell, excerpt) of MyST left as source
    math: list = field(default_factory=list)  #: (cell, message) of math errors
    errors: list = field(
        default_factory=list
    )  #: (cell, "Name: message") of cell errors
    unresolved: list = field(
        default_factory=list
    )  #: (cell, message): citations, other chapters
    seconds: float = 0.0  #: wall time from opening to the kernel's last idle
    screenshot: Path | None = None

    def problems(self, allow_errors: tuple[str, ...] = ()) -> list[str]:
        """Every finding as a line; errors whose text contains one of ``allow_errors`` are excused."""
        lines = [f"{self.notebook}: cell {i}: raw MyST: {t!r}" for i, t in self.raw]
        lines += [f"{self.notebook}: cell {i}: math error: {t}" for i, t in self.math]
        lines += [
            f"{self.notebook}: cell {i}: {t}"
            for i, t in self.errors
            if not any(a in t for a in allow_errors)
        ]
        return lines


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def lab_server(
    notebooks: list[Path], timeout_s: float = WAITS.lab_server
) -> Iterator[tuple[str, str, Path]]:
    """A JupyterLab serving copies of ``notebooks``: yields ``(base_url, token, folder)``."""
    folder = Path(tempfile.mkdtemp(prefix="rnnlib-lab-"))
    for path in notebooks:
        shutil.copy2(path, folder / Path(path).name)
    port, token = free_port(), secrets.token_hex(16)
    jupyter = Path(sys.executable).with_name("jupyter")
    log = open(folder / "lab.log", "w")
    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # one thread per kernel, as booktools.lab gives them
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    proc = subprocess.Popen(
        [
            str(jupyter),
            "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={folder}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=",
            "--LabServerApp.extra_labextensions_path=[]",
            "--ServerApp.disable_check_xsrf=False",
            "--LabApp.extension_manager=readonly",
            # the server's kernels over IPC too (booktools.records: no port race with other kernels)
            "--KernelManager.transport=ipc",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=folder,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                urllib.request.urlopen(
                    f"{base}/api/status?token={token}", timeout=5
                ).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError(
                        "jupyter lab did not start:\n"
                        + (folder / "lab.log").read_text()[-3000:]
                    ) from None
                time.sleep(0.5)
        yield base, token, folder
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait(driver, script: str, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(f"JupyterLab: {what} after {timeout_s:.0f} s")


def open_and_run(
    driver,
    base: str,
    token: str,
    name: str,
    timeout_s: float = WAITS.cell,
    screenshot: Path | None = None,
) -> LabReport:
    """Open ``name`` (in the server's folder), run all cells, and report what the page shows."""
    start = time.monotonic()
    driver.get(f"{base}/lab/tree/{name}?token={token}&reset")
    _wait(
        driver,
        "const a = window.jupyterapp; const w = a && a.shell.currentWidget;"
        " return !!(w && w.context && w.context.isReady && w.sessionContext"
        " && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.connectionStatus === 'connected'"
        " && w.sessionContext.session.kernel.status === 'idle');",
        WAITS.kernel_start,
        f"{name} did not open with an idle kernel",
    )
    driver.execute_script(
        "window.__rnnlib_ran = false;"
        " window.jupyterapp.commands.execute('notebook:run-all-cells')"
        ".then(ok => { window.__rnnlib_ran = true; });"
    )
    _wait(
        driver,
        "const w = window.jupyterapp.shell.currentWidget;"
        " const k = w.sessionContext.session.kernel;"
        " const busy = w.content.widgets.some(c => c.model.type === 'code'"
        "   && c.promptNode && /\\[\\*\\]/.test(c.promptNode.textContent));"
        " return window.__rnnlib_ran && k.status === 'idle' && !busy;",
        timeout_s,
        f"{name} did not finish running",
    )
    seconds = time.monotonic() - start
    # every markdown cell rendered (JupyterLab renders lazily while scrolling)
    driver.execute_script(
        "const nb = window.jupyterapp.shell.currentWidget.content;"
        " nb.widgets.forEach(c => { if (c.model.type === 'markdown') c.rendered = true; });"
        " if (nb.notebookConfig) nb.notebookConfig.windowingMode = 'none';"
    )
    for index in range(
        driver.execute_script(
            "return window.jupyterapp.shell.currentWidget.content.widgets.length;"
        )
    ):
        driver.execute_script(
            "const nb = window.jupyterapp.shell.currentWidget.content;"
            " nb.scrollToItem(arguments[0], 'start');",
            index,
        )
    time.sleep(2.0)
    data = driver.execute_async_script(_REPORT_JS, RAW_MYST)
    report = LabReport(
        name,
        data["cells"],
        data["raw"],
        data["math"],
        data["errors"],
        data["unresolved"],
        seconds,
    )
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        driver.execute_script(
            "window.jupyterapp.shell.currentWidget.content.scrollToItem(0, 'start');"
        )
        time.sleep(1.0)
        driver.save_screenshot(str(screenshot))
        report.screenshot = screenshot
    return report


def lab_driver():
    """Headless Chromium as booktools.browser_check drives it, at a laptop's window size."""
    driver = make_driver()
    driver.set_window_size(1280, 1000)
    return driver
