"""What the tools share: the executions a build left, the kernels and browser they start, the budget.

The machinery's one shared module besides :mod:`booktools.toc` (the book's sources) and
:mod:`booktools.cell_deps` (the grader's cell graph): no tool imports another tool
(``tests/test_architecture.py``). It holds

* reading what an execution left: :func:`executed_in_build` (a notebook's jupyter-cache
  record), :func:`widget_state` and :func:`outputs_below` (what its widgets hold),
  :func:`expected_cost` (the longest-first hint);
* starting what a check needs: Jupyter kernels over IPC (:class:`Client`,
  :func:`start_error`), headless Chromium (:func:`make_driver`) and a local web server
  (:func:`serve`), and every wait of the machinery (:data:`WAITS`);
* the chapters' budget in units of a reference workload (:func:`reference_workload`,
  :func:`is_stall`); ``python -m booktools.records`` measures that workload here.

Kernels
-------
How the book's tools start Jupyter kernels and wait for them, and every wait they allow.

**The stall, and its cause.** A chapter's execution that took 320 s of wall time for 14 s
of CPU, and a grading test that took 604 s instead of 4, each waited out one of their
limits (the cell limit, 300 s; the grader's limit for setup cells, 600 s) and then went
on as if nothing had happened. Traced message by message (every message the client
sent and read, with its time), the kernel had answered at once: the cell's outputs, its
``idle`` status and its ``execute_reply`` were all sent within milliseconds; the client
did not *read* the reply until the limit had passed. nbclient waits for a cell's reply
with one poll of the shell socket for the whole limit, and in a cell that displays into
an ipywidgets Output widget (every explorer) its mimic of that widget sends a
``comm_msg`` on the same asyncio ZMQ socket at the moment the cell ends; a send on a ZMQ
socket consumes its edge-triggered "readable" notification, so the poll is never told
that the reply is there. The grader interrupts a cell at its limit and records a stand-in
error, which the cell's real outputs then replace: a silent stall. Measured on the
explorer notebook of ``test_grader_reports_errors_outside_exercises_and_inside_explorers``
graded in a loop on the loaded two-core machine (setup limit lowered to 60 s): 4 of 11
gradings stalled the full limit with ipykernel 7.4.0 over TCP, 2 of 20 over IPC with a
periodic ``kernel_info`` request on the socket, 2 of 15 with ipykernel 6.31.0 (not a
kernel bug, then), and none of 80 with :class:`Client`, which polls in slices of
:data:`POLL_SLICE_S`: a fresh poll sees what is already queued.

**Kernels over IPC.** Every kernel the machinery starts (the executions, nbval's, the
grader's, the real-client test's JupyterLab) talks over Unix-domain sockets in a private
folder (``transport="ipc"``), not over TCP on 127.0.0.1, whose five ports its *manager*
picks (bind port 0, read it, close) a second or two before the kernel binds them:
managers in different processes (``make test`` starts kernels in four processes at once)
can be handed the same free port in that window. That race was not seen in 186 kernel
starts at six at a time; IPC removes it by construction, and the kernels' warning about
unencrypted TCP with it. (jupyter-client's own IPC default names the sockets
``kernel-ipc-N`` in the current folder, relative, which a kernel started in another
folder resolves elsewhere: hence the explicit connection file.)

**Waits.** Every wait of the machinery is :data:`WAITS`, sized for a two-core machine that
is busy with other work (a test command must pass there: DESIGN.md, "Checks"). A kernel
that *dies* is not waited for: jupyter-client checks every second that the kernel process
is alive, and :func:`start_error` reports its last lines of standard error.

The budget
----------
The chapters' time budget, in units of a reference workload measured beside them.

CONTRIBUTING's budget (each chapter "executes in about a minute of CPU",
at most :data:`CHAPTER_LIMIT_S` seconds; the book :data:`BOOK_LIMIT_S`) is a
*performance figure*, not a property of the code: a chapter's CPU seconds grow on a
slower machine and on a busy one (shared caches, hyper-threads; two fresh-clone runs
of one commit differed by 15-40 % per chapter). So no step of ``make test`` compares a
time with it. Instead every execution run measures :func:`reference_workload` (a fixed
single-threaded torch training loop, shaped like the chapters' work: small matrices,
autograd, Python overhead) in one of its workers, and each chapter's record keeps the
ratio *chapter CPU / reference CPU*. The limits are expressed in those units, calibrated
on the project's reference machine (an idle two-core CI machine:
:data:`REFERENCE_SECONDS_ON_REFERENCE_MACHINE`), so "90 s on the reference machine" reads
the same on a laptop twice as fast. ``make test`` reports the ratios (the "Execution
times" appendix shows them); ``make bench`` enforces them
(``python -m booktools.exec_times --enforce``).

A ratio is not immune to load either (contention slows workloads unequally), which is
why even the ratio is a benchmark's verdict and not a test's.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

import nbformat
import zmq
from jupyter_client.manager import (
    AsyncKernelManager,
    KernelManager,
)
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError


@dataclass(frozen=True)
class Waits:
    """Seconds each step of the machinery may wait, with the reason for each size."""

    #: A kernel's start, until it answers (nbclient's default is 60 s): a kernel starts in
    #: 2-4 s on an idle machine and took over 60 s beside two busy executions; a kernel
    #: that dies is reported within a second, whatever this wait.
    kernel_start: int = 300
    #: One cell of a chapter (``_config.yml``'s ``execute.timeout`` for the build, and
    #: nbval's ``--nbval-cell-timeout``): the longest cell takes about 40 s alone.
    cell: int = 300
    #: nbval's wait for each output message of a finished cell (nbval's own: 5 s, which a
    #: loaded machine exceeded once after chapter 11's long training cell).
    nbval_output: int = 60
    #: A built page's load and its in-page probe (MathJax typesetting, images) in headless
    #: Chromium: about 2 s idle, 20 s on the longest page under load; also the wait for a
    #: page's widget views to render.
    page_load: int = 60
    #: A student's exercise cell or checker when grading (``--timeout``): the reference
    #: solutions take under a second; an endless loop is stopped after this.
    grade_exercise: int = 300
    #: A chapter's own cells when the grader re-runs them before the exercises.
    grade_setup: int = 600
    #: One whole submission graded in its own process (kernel start, setup cells,
    #: exercises): a submission takes 9-15 s; this bounds a wedged grader.
    grade_submission: int = 900
    #: A JupyterLab server's start (the real-client test, ``booktools/tests/lab_client.py``).
    lab_server: int = 120


WAITS = Waits()


def _connection_file() -> str:
    """A new connection-file path in this user's private folder of kernel sockets."""
    folder = Path(tempfile.gettempdir()) / f"booktools-kernels-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    # the sockets are "<stem>-ipc-<n>" beside it; a socket's path must stay under 107 bytes
    return str(folder / f"k-{uuid.uuid4().hex[:16]}.json")


def _unbounded_queues(client):
    """``client``'s sockets keep every message they receive, however many (no high-water mark).

    ZMQ drops a PUB socket's messages once the subscriber's queue holds its high-water
    mark (1,000) and the pipe between them is full. nbval reads a cell's iopub messages only
    after the cell's reply, so a long cell that updates a progress bar thousands of times
    overflowed its queue and lost the final ``idle`` status ("Timeout of 60 seconds exceeded
    waiting for output"); over TCP the kernel's socket buffer hid this, over IPC (a much
    smaller buffer) a flood of 5,000 display updates reproduced it at once. A receive
    high-water mark of 0 (no limit), set on the client's context before its channels start,
    keeps them all.
    """
    client.context.setsockopt(zmq.RCVHWM, 0)
    return client


class _IPC:
    """What both kernel managers below add: IPC sockets of their own, unbounded client queues."""

    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("connection_file", _connection_file())
        super().__init__(**kwargs)

    def client(self, **kwargs):
        return _unbounded_queues(super().client(**kwargs))


class IPCKernelManager(_IPC, KernelManager):
    """A kernel manager whose kernel listens on IPC sockets of its own (the module docstring).

    Its clients' queues are unbounded (:func:`_unbounded_queues`).
    """


class AsyncIPCKernelManager(_IPC, AsyncKernelManager):
    """The asynchronous twin of :class:`IPCKernelManager` (what nbclient drives)."""


#: ``NotebookClient(kernel_manager_class=KERNEL_MANAGER, ...)``
KERNEL_MANAGER = AsyncIPCKernelManager

#: Seconds of one poll of the shell socket while a reply is awaited (:class:`Client`).
POLL_SLICE_S = 1.0


class Client(NotebookClient):
    """nbclient's client with IPC kernels, that polls for a cell's reply in one-second slices.

    nbclient waits for a cell's ``execute_reply`` with *one* poll of the shell socket for the
    whole time-out. That poll can miss the reply: while it waits, the client's mimic of an
    ipywidgets Output widget (``nbclient.output_widget``, used by every explorer) sends a
    ``comm_msg`` on the same asyncio ZMQ socket from the coroutine that reads the outputs,
    and a send on a socket consumes its edge-triggered "readable" notification, so a reply
    that arrived just then is never reported to the pending poll. The reply sits in the
    socket until the time-out ends; with ``interrupt_on_timeout`` (the grader) the cell
    then passes with its right outputs after the full limit (a silent stall of 300 or 600
    s), without it the cell fails. A fresh poll sees what is already queued, so polling in
    slices of :data:`POLL_SLICE_S` bounds the delay to a second. The rest of the wait is
    nbclient's own (this method follows ``NotebookClient._async_poll_for_reply`` of
    nbclient 0.11, the pinned version).
    """

    def __init__(self, nb, km=None, **kw):
        kw.setdefault("kernel_manager_class", KERNEL_MANAGER)
        kw.setdefault("startup_timeout", WAITS.kernel_start)
        # the outputs are all in when the last cell ends: no graceful shutdown (which waits
        # about 3 s a kernel for the process to exit)
        kw.setdefault("shutdown_kernel", "immediate")
        super().__init__(nb, km=km, **kw)
        #: polls that found nothing before the reply came (a measure of the wait, not an error)
        self.empty_polls = 0

    async def _async_poll_for_reply(
        self,
        msg_id,
        cell,
        timeout,
        task_poll_output_msg,
        task_poll_kernel_alive,
    ):
        assert self.kc is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = (
                POLL_SLICE_S
                if deadline is None
                else min(
                    POLL_SLICE_S,
                    max(0.0, deadline - time.monotonic()),
                )
            )
            try:
                msg = await ensure_async(
                    self.kc.shell_channel.get_msg(timeout=remaining)
                )
            except Empty:
                if deadline is None or time.monotonic() < deadline:
                    self.empty_polls += 1
                    continue
                # the whole time-out passed: nbclient's handling (interrupt, or CellTimeoutError)
                task_poll_kernel_alive.cancel()
                await self._async_check_alive()
                reply = await self._async_handle_timeout(timeout, cell)
                if reply is None:
                    # interrupted without a stand-in reply: wait for the kernel's own
                    deadline = time.monotonic() + timeout
                    continue
                reply["parent_header"] = {"msg_id": msg_id}
                msg = reply
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            try:
                await asyncio.wait_for(task_poll_output_msg, self.iopub_timeout)
            except (TimeoutError, Empty):
                if self.raise_on_iopub_timeout:
                    task_poll_kernel_alive.cancel()
                    raise CellTimeoutError.error_from_timeout_and_cell(
                        "Timeout waiting for IOPub output",
                        self.iopub_timeout,
                        cell,
                    ) from None
                self.log.warning("Timeout waiting for IOPub output")
            task_poll_kernel_alive.cancel()
            return msg


def start_error(exc: BaseException, stderr: str | Path | None = None) -> str:
    """The reason a kernel did not run: the error, and the last lines the kernel wrote to ``stderr`` (a file)."""
    message = f"{type(exc).__name__}: {exc}"
    tail: list[str] = []
    if stderr is not None:
        try:
            tail = Path(stderr).read_text(errors="replace").strip().splitlines()[-5:]
        except OSError:
            pass
    if tail:
        message += "\nthe kernel's last lines of standard error:\n  " + "\n  ".join(
            tail
        )
    return message


#: Seconds of kernel CPU per chapter, and for the book, on the reference machine.
CHAPTER_LIMIT_S = 90.0
BOOK_LIMIT_S = 600.0
#: The guide's target per chapter (reported beside the limit, not enforced).
CHAPTER_TARGET_S = 60.0
#: CPU seconds of :func:`reference_workload` on the reference machine, as the executions
#: of ``make test`` measure it there: beside the first chapters and the unit tests, on an
#: idle two-core machine (fresh clone, 2 December 2026: chapter 11's 40.5 s of CPU were
#: 17.8 references). Alone on that machine it takes about 1.3-1.8 s: the unit is the one
#: the build measures, not the machine's best.
REFERENCE_SECONDS_ON_REFERENCE_MACHINE = 2.27
#: Steps of the reference loop.
REFERENCE_STEPS = 1000


def limit_units(seconds: float) -> float:
    """A limit given in reference-machine seconds, in reference units."""
    return seconds / REFERENCE_SECONDS_ON_REFERENCE_MACHINE


def reference_workload(steps: int = REFERENCE_STEPS) -> float:
    """Run the reference workload on one thread; return its CPU seconds (this process).

    A ReLU RNN (torch.nn.RNN, 16 inputs, 128 units) over 12 steps, batch 32, with a
    linear read-out, trained by SGD for ``steps`` steps: the size and kind of the
    chapters' work (Part I's lazy training and Part II's next-step models).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        gen = torch.Generator().manual_seed(0)
        rnn = torch.nn.RNN(16, 128, nonlinearity="relu", batch_first=True)
        head = torch.nn.Linear(128, 1)
        with torch.no_grad():
            for p in [*rnn.parameters(), *head.parameters()]:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
        params = [*rnn.parameters(), *head.parameters()]
        opt = torch.optim.SGD(params, lr=1e-3)
        x = torch.randn(32, 12, 16, generator=gen)
        y = torch.randn(32, 1, generator=gen)
        start = time.process_time()
        for _ in range(steps):
            opt.zero_grad()
            out, _ = rnn(x)
            loss = ((head(out[:, -1]) - y) ** 2).mean()
            loss.backward()
            opt.step()
        return time.process_time() - start
    finally:
        torch.set_num_threads(threads)


def is_stall(wall: float, cpu: float | None) -> bool:
    """Whether an execution waited far longer than it computed: wall > 3 x CPU + 10 s.

    On an idle machine an execution's wall time is its CPU time plus a few seconds of
    kernel start; a wall time far above that is a wait (a time-out waited out), reported
    as a warning. Under load the ratio says less: a warning, never
    a failure.
    """
    return cpu is not None and wall > 3 * cpu + 10


def executed_in_build(notebook: str | Path, build: str | Path) -> nbformat.NotebookNode:
    """The execution of ``notebook`` that the book build in ``build`` shows (its jupyter-cache record).

    This is what the build rendered. (The copy myst-nb writes to
    ``<build>/jupyter_execute/`` holds no outputs when the page was rendered from the
    cache.) Raises ``FileNotFoundError`` naming ``build`` when it has no cache, and
    ``LookupError`` when no record matches the notebook's code as it is now.
    """
    from jupyter_cache import get_cache

    cache_dir = Path(build) / ".jupyter_cache"
    if not cache_dir.is_dir():
        raise FileNotFoundError(
            f"build: no execution cache at {str(cache_dir)!r} (build the book first)"
        )
    nb = nbformat.read(notebook, as_version=4)
    try:
        _, merged = get_cache(str(cache_dir)).merge_match_into_notebook(nb)
    except KeyError:
        raise LookupError(
            f"{notebook}: no execution in {cache_dir} matches its code (build the book first)"
        ) from None
    return merged


#: Chapters that take longest to execute, longest first: a scheduling hint (a wrong one makes
#: a run slower, never wrong). Measured on the fresh clones of December 2026.
SLOW_FIRST = (
    "11_real_data.ipynb",
    "07_regular_languages.ipynb",
    "05_sgd.ipynb",
    "06_generalization.ipynb",
    "10_truncation_training.ipynb",
    "04_existence.ipynb",
)


def expected_cost(path: Path) -> int:
    """A rank for longest-first scheduling: the hint of :data:`SLOW_FIRST`, else 0."""
    name = Path(path).name
    return len(SLOW_FIRST) - SLOW_FIRST.index(name) if name in SLOW_FIRST else 0


def widget_state(nb: nbformat.NotebookNode) -> dict:
    """The widget models nbclient stored in ``nb``'s metadata, by model id."""
    return (
        nb.metadata.get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )


def outputs_below(
    state: dict, model_id: str, seen: set[str] | None = None
) -> list[dict]:
    """The outputs the ``Output`` widgets at or below ``model_id`` hold (children followed, each model once)."""
    seen = set() if seen is None else seen
    if model_id in seen or model_id not in state:
        return []
    seen.add(model_id)
    model = state[model_id].get("state", {})
    found = (
        list(model.get("outputs", []))
        if state[model_id].get("model_name") == "OutputModel"
        else []
    )
    for child in model.get("children", []):
        found += outputs_below(state, str(child).removeprefix("IPY_MODEL_"), seen)
    return found


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-sync",
    "--disable-default-apps",
    "--mute-audio",
    # no DNS: every host but the local server is unreachable
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--window-size=1280,1000",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass


def serve(
    html_dir: Path,
) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def make_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        sys.exit(
            "chromium and chromedriver are needed: apt-get install -y chromium chromium-driver (make browser-check does it as root)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability(
        "goog:loggingPrefs",
        {"browser": "ALL", "performance": "ALL"},
    )
    driver = webdriver.Chrome(
        service=Service(executable_path=chromedriver),
        options=options,
    )
    driver.set_page_load_timeout(WAITS.page_load)
    driver.set_script_timeout(WAITS.page_load)
    return driver


def main(argv: list[str] | None = None) -> int:
    """Print the reference workload's CPU seconds here (five runs) beside the calibration."""
    import argparse

    parser = argparse.ArgumentParser(
        description="the reference workload of the chapters' budget, measured here"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs (default 5)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs: expected an integer >= 1, got {args.runs}")
    runs = sorted(reference_workload() for _ in range(args.runs))
    median = runs[len(runs) // 2]
    print(
        f"reference workload: {' '.join(f'{r:.3f}' for r in runs)} s CPU "
        f"(median {median:.3f}; on the reference machine "
        f"{REFERENCE_SECONDS_ON_REFERENCE_MACHINE:.3f}: this machine runs the chapters' "
        f"budget at {median / REFERENCE_SECONDS_ON_REFERENCE_MACHINE:.2f} x its time)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
