"""Execute the book's notebooks, ``--jobs`` at a time, into the caches the builds render from.

Two sets of executions, given as arguments (``make test`` asks for both, in one
pool, so both cores stay busy until the last notebook ends):

``book``
    each chapter of ``_toc.yml`` into the book's execution cache
    (``_build/.jupyter_cache``), where ``jupyter-book build`` finds it (with
    ``execute_notebooks: cache`` it renders without executing). A chapter whose
    code already has a record is skipped. A cell error fails the chapter (it is not
    cached, so the strict build executes it again and shows the traceback).
``student``
    each chapter of the student edition (``student/``, written by
    ``booktools.student_edition``) into ``student/_build/.jupyter_cache``, errors
    allowed (the stubs raise ``NotImplementedError``); the student edition's HTML and
    ``booktools.grade --expect-stubs --executed student/_build`` read that execution.
    A student notebook that is its chapter's code cells followed by stubs
    (:func:`reusable_prefix`) reuses the chapter's execution and runs only its install
    cell, its stubs and what they need (ARCHITECTURE.md, "What make test runs").
    Any other is executed in full.

The second, independent execution of each chapter is nbval's (``make nbval``).

Timing. Each record holds ``execution_seconds``, the wall time of the execution
(kernel start to kernel shutdown, as myst-nb measures its own), ``cpu_seconds``, the CPU
time of the kernel process, ``jobs``, how many notebooks ran at once, ``phases``, where
the wall time went (:func:`run_job`), and ``reference_cpu_seconds``, the budget's unit
measured in the same run (``booktools.records``). Each kernel gets ``--threads`` threads
(default 1, whatever ``jobs``: ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` of the
kernel). One thread is the chapters' fastest setting, not only the fair one: their
tensors are small, and with two threads torch's workers spin on them (chapter 10's
training took 7 to 30 times the CPU time of one thread, chapter 7 over 700 s instead of
68 s, on two cores). An execution whose wall time is far above its CPU time is reported
as a stall (:func:`booktools.records.is_stall`), a warning. Kernels talk over IPC sockets
(``booktools.records``: why).

Usage: ``python -m booktools.execute [--jobs N] [--only NOTEBOOK ...] {book,student} ...``
"""

from __future__ import annotations

import argparse
import atexit
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import (
    FIRST_COMPLETED,
    ProcessPoolExecutor,
    wait,
)
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from booktools.markup import EXERCISE_KEY, INSTALL_KEY
from booktools.records import (
    Client,
    executed_in_build,
    expected_cost,
    is_stall,
    reference_workload,
    start_error,
)
from booktools.toc import ROOT, chapter_notebooks

TARGETS = ("book", "student")


@dataclass
class Job:
    """One notebook to execute."""

    target: str  #: "book" or "student"
    path: Path  #: the notebook (executed in its own folder)
    allow_errors: bool
    timeout: int
    threads: int
    jobs: int  #: how many notebooks run at once (recorded with the timing)
    #: the chapter whose execution supplies the unchanged cells' outputs (student target), or None
    reuse: Path | None = None
    build: Path | None = None  #: the book build whose cache holds that execution


@dataclass
class Result:
    job: Job
    nb: nbformat.NotebookNode | None
    seconds: float
    cpu_seconds: float | None
    error: str | None
    #: seconds spent in each of :data:`PHASES` (see :func:`run_job`)
    phases: dict[str, float] = field(default_factory=dict)
    #: one-second polls for a cell's reply that found none yet (booktools.records.Client)
    empty_polls: int = 0


#: An execution's phases, in order (:func:`run_job`).
PHASES = ("kernel_start", "kernel_info", "cells", "shutdown")


def _phase_line(phases: dict[str, float]) -> str:
    return "phases: " + ", ".join(
        f"{name.replace('_', ' ')} {phases[name]:.1f} s"
        for name in PHASES
        if name in phases
    )


def default_timeout(root: Path = ROOT) -> int:
    """Seconds per cell: ``execute.timeout`` of ``_config.yml`` (as the build uses), else 300."""
    config = (
        yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf-8")) or {}
    )
    return int((config.get("execute") or {}).get("timeout", 300))


def _kernel_cpu_seconds(client) -> float | None:
    """CPU seconds used so far by the kernel process of an nbclient client (and its children)."""
    try:
        import psutil

        times = psutil.Process(client.km.provisioner.process.pid).cpu_times()
        return times.user + times.system + times.children_user + times.children_system
    except Exception:  # noqa: BLE001 - a missing psutil or an exotic provisioner: no CPU time
        return None


def reusable_prefix(
    student: nbformat.NotebookNode, chapter: nbformat.NotebookNode
) -> int | None:
    """How many of ``chapter``'s first code cells ``student`` holds unchanged; None when it is not reusable.

    Reusable: the student notebook's code cells are its install cells
    (``metadata.rnnlib_install``), then the chapter's first ``k`` code cells with
    the same source, then only stubs (``metadata.rnnlib_exercise``), if any.
    """

    code = [c for c in student.cells if c.cell_type == "code"]
    while code and code[0].metadata.get(INSTALL_KEY):
        code = code[1:]
    stubs = [i for i, c in enumerate(code) if c.metadata.get(EXERCISE_KEY)]
    k = stubs[0] if stubs else len(code)
    if stubs != list(range(k, len(code))):
        return None
    ours = [c.source for c in chapter.cells if c.cell_type == "code"]
    if len(ours) < k or [c.source for c in code[:k]] != ours[:k]:
        return None
    return k


def _compose(job: Job, nb: nbformat.NotebookNode):
    """Execute the cells of a reusable student notebook that the chapter's execution lacks.

    Returns the notebook to execute (the install cells, the stubs and what the
    stubs need) and a function that, once it is executed, fills ``nb``: every
    unchanged cell with the chapter's outputs, the others with their own, the
    execution counts numbered top to bottom as in one run.
    """
    import copy

    from booktools.cell_deps import cells_to_run, cut_after_checker

    executed = executed_in_build(job.reuse, job.build)
    k = reusable_prefix(nb, executed)
    if k is None:
        raise ValueError(f"{job.path}: not its chapter's cells followed by stubs")
    own = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        and (c.metadata.get(INSTALL_KEY) or c.metadata.get(EXERCISE_KEY))
    ]
    stubs = [i for i in own if nb.cells[i].metadata.get(EXERCISE_KEY)]
    cut = copy.deepcopy(nb)
    for i in stubs:  # a stub stops at its checker call: what comes after never runs
        cut.cells[i].source = cut_after_checker(cut.cells[i].source)
    run = sorted(cells_to_run(cut, set(stubs)) | set(own))
    small = copy.deepcopy(nb)
    small.cells = [copy.deepcopy(nb.cells[i]) for i in run]
    theirs = [c for c in executed.cells if c.cell_type == "code"][:k]

    def fill(done: nbformat.NotebookNode) -> nbformat.NotebookNode:
        outputs = dict(zip(run, (c.outputs for c in done.cells)))
        unchanged = iter(theirs)
        count = 0
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if i in own:
                cell.outputs = outputs[i]
            else:
                cell.outputs = copy.deepcopy(next(unchanged).outputs)
            count += 1
            cell.execution_count = count
            for out in cell.outputs:
                if out.get("output_type") == "execute_result":
                    out["execution_count"] = count
        # what the kernel said of itself (highlighting)
        if "language_info" in done.metadata:
            nb.metadata["language_info"] = done.metadata["language_info"]
        widgets = executed.metadata.get("widgets")
        if widgets:
            nb.metadata["widgets"] = copy.deepcopy(widgets)
        return nb

    return small, fill


def run_job(job: Job) -> Result:
    """Execute one notebook in a fresh kernel (in a worker process); never raises.

    The result's ``phases`` are the seconds from the request to the kernel's first
    answer (``kernel_start``), to its first cell (``kernel_info``), to its last cell's end
    (``cells``) and to the kernel's shutdown (``shutdown``): where a stall was spent.
    """
    # the kernel inherits the worker's environment
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(job.threads)
    # the build is strict: rnnlib.claims.strict()
    os.environ["RNNLIB_STRICT_CLAIMS"] = "1"
    # a rendered page has no live progress bar: rnnlib's bars are off (rnnlib._progress)
    os.environ["RNNLIB_PROGRESS"] = "0"
    nb = nbformat.read(job.path, as_version=4)
    fill = None
    if job.reuse is not None:
        try:
            nb, fill = _compose(job, nb)
        except Exception as exc:  # noqa: BLE001 - reported as the job's failure
            return Result(
                job,
                None,
                0.0,
                None,
                f"{type(exc).__name__}: {exc}",
            )
    cpu: list[float | None] = [None]
    client = Client(  # IPC kernels, the reply polled in slices (booktools.records)
        nb,
        timeout=job.timeout,
        kernel_name="python3",
        allow_errors=job.allow_errors,
        record_timing=False,  # per-cell timings in the cell metadata would change jupyter-cache's hash of it
        resources={"metadata": {"path": str(job.path.parent)}},
    )
    start = time.perf_counter()
    marks: dict[str, float] = {}

    def mark(name: str) -> None:
        marks.setdefault(name, time.perf_counter() - start)

    client.on_notebook_start = lambda **_: mark("kernel_start")
    client.on_cell_start = lambda **_: mark("kernel_info")

    # after each cell, the kernel's CPU time so far (the last one stays; the kernel is gone after the last cell)
    def executed(**_) -> None:
        cpu[0] = _kernel_cpu_seconds(client)
        marks["cells"] = time.perf_counter() - start  # the last cell's end

    client.on_cell_executed = executed
    error = None
    with tempfile.NamedTemporaryFile(
        "w+", prefix="kernel-stderr-", suffix=".log"
    ) as stderr:
        try:
            client.execute(stderr=stderr)
        except Exception as exc:  # noqa: BLE001 - a cell error, a timeout, a dead kernel: reported, not raised
            stderr.flush()
            error = start_error(exc, stderr.name)
        finally:
            # nbclient's exit hook would clean up a kernel that is already gone
            atexit.unregister(client._cleanup_kernel)
    seconds = time.perf_counter() - start
    mark("shutdown")
    phases, before = {}, 0.0
    for name in PHASES:
        if name in marks:
            phases[name] = round(marks[name] - before, 2)
            before = marks[name]
    if fill is not None and error is None:
        nb = fill(nb)
    # with allow_errors, cell errors are outputs; what still raises (a timeout, a dead kernel) fails the job
    return Result(
        job,
        nb if error is None else None,
        seconds,
        cpu[0],
        error,
        phases,
        client.empty_polls,
    )


def _store(
    result: Result,
    root: Path,
    build: Path,
    student_build: Path,
    reference_cpu: float | None = None,
) -> str:
    """Put a successful execution where the later steps read it; return where.

    ``reference_cpu``: the CPU seconds of ``booktools.records.reference_workload``
    measured in the same run (the budget's unit).
    """
    job = result.job
    data = {
        "execution_seconds": result.seconds,
        "cpu_seconds": result.cpu_seconds,
        "jobs": job.jobs,
        "phases": result.phases,
        "empty_polls": result.empty_polls,
        "reference_cpu_seconds": reference_cpu,
    }
    if job.reuse is not None:
        # the unchanged cells' outputs are the chapter's execution's; the times are the stubs' run
        data["outputs_of"] = str(job.reuse.relative_to(root))
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache_dir = (build if job.target == "book" else student_build) / ".jupyter_cache"
    get_cache(str(cache_dir)).cache_notebook_bundle(
        CacheBundleIn(result.nb, str(job.path), data=data),
        check_validity=False,
        overwrite=True,
    )
    return str(cache_dir)


def _is_cached(path: Path, cache_dir: Path) -> bool:
    if not cache_dir.is_dir():
        return False
    from jupyter_cache import get_cache

    try:
        get_cache(str(cache_dir)).match_cache_notebook(
            nbformat.read(path, as_version=4)
        )
    except KeyError:
        return False
    return True


def plan(
    targets: list[str],
    root: Path,
    build: Path,
    student_root: Path,
    timeout: int,
    threads: int,
    jobs: int,
    only: list[str] | None = None,
) -> tuple[list[Job], list[str]]:
    """The jobs to run, and a line for each notebook skipped because its execution is up to date.

    ``only``: notebook paths or names; then only the notebooks of those file names
    (``chapters/05_sgd.ipynb`` selects the chapter and its student notebook).
    """
    names = None if only is None else {Path(o).name for o in only}
    todo, skipped = [], []
    for target in targets:
        if target == "book":
            paths, cache_dir = (
                chapter_notebooks(root),
                build / ".jupyter_cache",
            )
        elif target == "student":
            if not (student_root / "_toc.yml").is_file():
                raise FileNotFoundError(
                    f"no student edition in {student_root} (run python -m booktools.student_edition)"
                )
            paths, cache_dir = (
                chapter_notebooks(student_root),
                student_root / "_build" / ".jupyter_cache",
            )
        if names is not None:
            paths = [p for p in paths if p.name in names]
        for path in paths:
            if _is_cached(path, cache_dir):
                skipped.append(f"{target:8s} {path.relative_to(root)}: up to date")
            else:
                todo.append(
                    Job(
                        target,
                        path,
                        target == "student",
                        timeout,
                        threads,
                        jobs,
                    )
                )
    # longest first, so that no long chapter starts last while the other worker idles
    todo.sort(key=lambda j: (j.target != "book", -expected_cost(j.path)))
    # a student notebook reuses its chapter's execution when that is cached or made in this run
    chapters = {p.relative_to(root): p for p in chapter_notebooks(root)}
    pending = {j.path for j in todo if j.target == "book"}
    for job in todo:
        if job.target != "student":
            continue
        chapter = chapters.get(job.path.relative_to(student_root))
        if (
            chapter is None
            or reusable_prefix(
                nbformat.read(job.path, as_version=4),
                nbformat.read(chapter, as_version=4),
            )
            is None
        ):
            continue
        if chapter in pending or _is_cached(chapter, build / ".jupyter_cache"):
            job.reuse, job.build = chapter, build
    return todo, skipped


def execute(
    targets: list[str],
    *,
    root: Path = ROOT,
    jobs: int = 2,
    threads: int | None = None,
    timeout: int | None = None,
    only: list[str] | None = None,
) -> list[Result]:
    """Run the executions of ``targets`` (see the module docstring), ``jobs`` at a time; print a line each.

    ``only``: restrict to the notebooks of these file names (see ``plan``).
    """
    unknown = [t for t in targets if t not in TARGETS]
    if unknown or not targets:
        raise ValueError(f"targets: expected some of {list(TARGETS)}, got {targets}")
    if jobs < 1:
        raise ValueError(f"jobs: expected an integer >= 1, got {jobs}")
    root = Path(root)
    build, student_root = root / "_build", root / "student"
    threads = threads or 1
    todo, skipped = plan(
        targets,
        root,
        build,
        student_root,
        timeout or default_timeout(root),
        threads,
        jobs,
        only,
    )
    for line in skipped:
        print(line)
    results: list[Result] = []
    if not todo:
        return results
    print(
        f"executing {len(todo)} notebooks, {jobs} at a time, {threads} thread(s) each"
    )
    start = time.perf_counter()
    # a clean interpreter per worker
    context = multiprocessing.get_context("spawn")
    # a student notebook that reuses a chapter executed in this run waits for that execution
    waiting = {
        j.reuse: j
        for j in todo
        if j.reuse is not None
        and any(b.target == "book" and b.path == j.reuse for b in todo)
    }
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        # the budget's unit, measured in this run beside the chapters (booktools.records)
        reference = pool.submit(reference_workload)
        futures = {
            pool.submit(run_job, job) for job in todo if job not in waiting.values()
        }
        while futures:
            done, futures = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                result = future.result()
                results.append(result)
                job = result.job
                rel = job.path.relative_to(root)
                cpu = (
                    ""
                    if result.cpu_seconds is None
                    else f", {result.cpu_seconds:5.1f} s CPU"
                )
                if result.nb is not None:
                    where = _store(
                        result,
                        root,
                        build,
                        student_root / "_build",
                        reference.result(),
                    )
                    reused = (
                        ""
                        if job.reuse is None
                        else f" (the stubs; the rest from {job.reuse.name})"
                    )
                    print(
                        f"{job.target:8s} {str(rel):45s} {result.seconds:6.1f} s{cpu} -> {Path(where).relative_to(root)}{reused}"
                    )
                    print(f"{'':9s}{_phase_line(result.phases)}")
                    if is_stall(result.seconds, result.cpu_seconds):
                        print(
                            f"WARNING: {rel} waited: {result.seconds:.1f} s of wall time for "
                            f"{result.cpu_seconds:.1f} s of CPU (more than 3 x CPU + 10 s; phases above)"
                        )
                else:
                    print(
                        f"{job.target:8s} {str(rel):45s} FAILED after {result.seconds:.1f} s:\n{result.error}",
                        file=sys.stderr,
                    )
                follower = waiting.pop(job.path, None) if job.target == "book" else None
                if follower is not None:
                    if result.nb is None:  # nothing to reuse: executed in full
                        follower.reuse = follower.build = None
                    futures.add(pool.submit(run_job, follower))
    print(f"{len(todo)} executions in {time.perf_counter() - start:.1f} s wall time")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="+", choices=TARGETS)
    parser.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="notebooks executed at once (default 2)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads per kernel (default 1)",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=None,
        help="seconds per cell (default: _config.yml's)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        metavar="NOTEBOOK",
        help="only these notebooks (by file name), e.g. chapters/05_sgd.ipynb",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the book's folder (default: this repository)",
    )
    args = parser.parse_args(argv)
    try:
        results = execute(
            args.targets,
            root=args.root,
            jobs=args.jobs,
            threads=args.threads,
            timeout=args.timeout,
            only=args.only,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"execute: {exc}", file=sys.stderr)
        return 2
    failed = [r for r in results if r.nb is None]
    if failed:
        print(
            f"execution FAILED for {len(failed)} notebook(s): "
            + ", ".join(f"{r.job.target} {r.job.path.name}" for r in failed),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
