"""How the book's tools start Jupyter kernels, and every wait they allow.

**Kernels over IPC.** Every kernel the machinery starts (the executions, nbval's,
the grader's) talks to its client over Unix-domain sockets in a private folder
(``transport="ipc"``), not over TCP on 127.0.0.1. With TCP, a kernel's five ports are
picked by its *manager* (it binds port 0, reads the number and closes the socket)
and written to the connection file; the kernel binds them a second or two later,
once Python has started. Managers in different processes know nothing of each other,
so two kernels started side by side (``make test`` starts them in four processes at
once: the two executions, the machinery's tests, and later nbval's two workers) can
be handed the same free port in that window. What follows depends on which socket
collides: the kernel dies at start, or a client talks to another process's kernel, or
a request's reply never comes and nbclient waits out its whole time-out (it waits
``timeout`` seconds for the reply to its first ``kernel_info`` request and then goes on
without an error, which is how one chapter's execution took 320 s of wall time for 14 s
of CPU). An IPC socket's name is a path inside a folder this process created, so no
other process can be handed it. (jupyter-client's own IPC default names the sockets
``kernel-ipc-N`` in the current folder, relative, which a kernel started in another
folder resolves elsewhere: hence the explicit connection file.)

**Waits.** Every wait of the machinery is :data:`WAITS`, sized for a two-core
machine that is busy with other work (a test command must pass there: DESIGN.md,
"Checks"). A kernel that *dies* is not waited for: jupyter-client checks every second
that the kernel process is alive, and :func:`start_error` reports its last lines of
standard error.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import (
    AsyncKernelManager,
    KernelManager,
)
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient


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
    folder = (
        Path(tempfile.gettempdir())
        / f"booktools-kernels-{os.getuid()}"
    )
    folder.mkdir(mode=0o700, exist_ok=True)
    # the sockets are "<stem>-ipc-<n>" beside it; a socket's path must stay under 107 bytes
    return str(folder / f"k-{uuid.uuid4().hex[:16]}.json")


class IPCKernelManager(KernelManager):
    """A kernel manager whose kernel listens on IPC sockets of its own (the module docstring)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("connection_file", _connection_file())
        super().__init__(**kwargs)


class AsyncIPCKernelManager(AsyncKernelManager):
    """The asynchronous twin of :class:`IPCKernelManager` (what nbclient drives)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("connection_file", _connection_file())
        super().__init__(**kwargs)


#: ``NotebookClient(kernel_manager_class=KERNEL_MANAGER, ...)``
KERNEL_MANAGER = AsyncIPCKernelManager

#: Seconds between two nudges of a kernel whose reply is awaited (:class:`Client`).
NUDGE_S = 10.0


class Client(NotebookClient):
    """nbclient's client with IPC kernels, that nudges a kernel it has waited on for a while.

    While it waits for a reply, nbclient checks every second that the kernel is alive;
    this client also sends a ``kernel_info`` request every :data:`NUDGE_S` seconds of the
    wait. A request that reached the kernel's shell socket while its event loop missed the
    socket's edge-triggered wake-up stays unread until the *next* message arrives there
    (ipykernel 7's shell wedge: ipykernel issues 1529 and 1554), and the client then waits
    out its whole time-out for a reply that was never computed; the nudge is that next
    message. Its reply and status messages carry their own parent id, which the waits for a
    cell's reply and outputs ignore, so nothing a notebook shows changes.
    """

    def __init__(self, nb, km=None, **kw):
        kw.setdefault("kernel_manager_class", KERNEL_MANAGER)
        kw.setdefault("startup_timeout", WAITS.kernel_start)
        super().__init__(nb, km=km, **kw)
        self.nudges = 0
        self._waiting_since: float | None = None

    async def _async_check_alive(self) -> None:
        await super()._async_check_alive()
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        elif (
            now - self._waiting_since >= NUDGE_S
            and self.kc is not None
        ):
            self._waiting_since = now
            self.nudges += 1
            await ensure_async(self.kc.kernel_info())

    async def async_execute_cell(self, *args, **kwargs):
        self._waiting_since = None
        try:
            return await super().async_execute_cell(
                *args, **kwargs
            )
        finally:
            self._waiting_since = None


def start_error(
    exc: BaseException, stderr: str | Path | None = None
) -> str:
    """The reason a kernel did not run: the error, and the last lines the kernel wrote to ``stderr`` (a file)."""
    message = f"{type(exc).__name__}: {exc}"
    tail: list[str] = []
    if stderr is not None:
        try:
            tail = (
                Path(stderr)
                .read_text(errors="replace")
                .strip()
                .splitlines()[-5:]
            )
        except OSError:
            pass
    if tail:
        message += (
            "\nthe kernel's last lines of standard error:\n  "
            + "\n  ".join(tail)
        )
    return message
