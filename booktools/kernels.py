"""How the book's tools start Jupyter kernels and wait for them, and every wait they allow.

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
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

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
    #: A JupyterLab server's start (the real-client test of ``booktools.lab_client``).
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
