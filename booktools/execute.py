"""Execute the book's notebooks, ``--jobs`` at a time, into the caches the builds render from.

Two sets of executions, given as arguments (``make test`` asks for both, in one
pool, so both cores stay busy until the last notebook ends):

``book``
    each chapter of ``_toc.yml`` into the book's execution cache
    (``_build/.jupyter_cache``), where ``jupyter-book build`` finds it: with
    ``execute_notebooks: cache`` the build then renders without executing. A chapter
    whose code already has a record is skipped. A cell error fails the chapter (it is
    not cached, so the strict build executes it again and shows the traceback).
``student``
    each chapter of the student edition (``student/``, written by
    ``booktools.student_edition``) into ``student/_build/.jupyter_cache``, errors
    allowed (the stubs raise ``NotImplementedError``). The student edition's HTML is
    built from this execution, and ``booktools.grade --expect-stubs --executed
    student/_build`` grades the same execution.

The second, independent execution of each chapter is nbval's (``make nbval``):
``booktools.nbval_notebooks`` exports the ``book`` records from the cache and nbval
executes them again, comparing every text output cell by cell.

Timing. Each record holds ``execution_seconds``, the wall time of the execution
(kernel start to kernel shutdown, as myst-nb measures its own), ``cpu_seconds``, the CPU
time of the kernel process, and ``jobs``, how many notebooks ran at once. While ``jobs``
notebooks run at once, each kernel is limited to ``--threads`` threads (default:
the machine's cores divided by ``jobs``; ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` of the
kernel), so two chapters on two cores do not fight over threads. The budget
(``booktools.exec_times``) is checked on the CPU time: with one thread, the chapter's
time alone on one core, whatever else runs on the machine; ``--jobs 1`` runs each chapter
alone (with all the cores' threads).

Usage: ``python -m booktools.execute [--jobs N] [--only NOTEBOOK ...] {book,student} ...``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

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


@dataclass
class Result:
    job: Job
    nb: nbformat.NotebookNode | None
    seconds: float
    cpu_seconds: float | None
    error: str | None


def default_timeout(root: Path = ROOT) -> int:
    """Seconds per cell: ``execute.timeout`` of ``_config.yml`` (as the build uses), else 300."""
    config = (
        yaml.safe_load(
            (Path(root) / "_config.yml").read_text(
                encoding="utf-8"
            )
        )
        or {}
    )
    return int((config.get("execute") or {}).get("timeout", 300))


def _kernel_cpu_seconds(client) -> float | None:
    """CPU seconds used so far by the kernel process of an nbclient client (and its children)."""
    try:
        import psutil

        times = psutil.Process(
            client.km.provisioner.process.pid
        ).cpu_times()
        return (
            times.user
            + times.system
            + times.children_user
            + times.children_system
        )
    except Exception:  # noqa: BLE001 - a missing psutil or an exotic provisioner: no CPU time
        return None


def run_job(job: Job) -> Result:
    """Execute one notebook in a fresh kernel (in a worker process); never raises."""
    from nbclient import NotebookClient

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(
            job.threads
        )  # the kernel inherits the worker's environment
    os.environ["RNNLIB_STRICT_CLAIMS"] = (
        "1"  # the build is strict: rnnlib.claims.strict()
    )
    nb = nbformat.read(job.path, as_version=4)
    cpu: list[float | None] = [None]
    client = NotebookClient(
        nb,
        timeout=job.timeout,
        kernel_name="python3",
        allow_errors=job.allow_errors,
        record_timing=False,  # per-cell timings in the cell metadata would change jupyter-cache's hash of it
        resources={"metadata": {"path": str(job.path.parent)}},
    )
    # after each cell, the kernel's CPU time so far (the last one stays; the kernel is gone after the last cell)
    client.on_cell_executed = lambda **_: cpu.__setitem__(
        0, _kernel_cpu_seconds(client)
    )
    start = time.perf_counter()
    error = None
    try:
        client.execute()
    except Exception as exc:  # noqa: BLE001 - a cell error, a timeout, a dead kernel: reported, not raised
        error = f"{type(exc).__name__}: {exc}"
    # with allow_errors, cell errors are outputs; what still raises (a timeout, a dead kernel) fails the job
    return Result(
        job,
        nb if error is None else None,
        time.perf_counter() - start,
        cpu[0],
        error,
    )


def _store(
    result: Result, root: Path, build: Path, student_build: Path
) -> str:
    """Put a successful execution where the later steps read it; return where."""
    job = result.job
    data = {
        "execution_seconds": result.seconds,
        "cpu_seconds": result.cpu_seconds,
        "jobs": job.jobs,
    }
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache_dir = (
        build if job.target == "book" else student_build
    ) / ".jupyter_cache"
    get_cache(str(cache_dir)).cache_notebook_bundle(
        CacheBundleIn(result.nb, str(job.path), data=data),
        check_validity=False,
        overwrite=True,
    )
    return str(cache_dir)


def executed_in_build(
    notebook: str | Path, build: str | Path
) -> nbformat.NotebookNode:
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
        _, merged = get_cache(
            str(cache_dir)
        ).merge_match_into_notebook(nb)
    except KeyError:
        raise LookupError(
            f"{notebook}: no execution in {cache_dir} matches its code (build the book first)"
        ) from None
    return merged


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
                skipped.append(
                    f"{target:8s} {path.relative_to(root)}: up to date"
                )
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
        raise ValueError(
            f"targets: expected some of {list(TARGETS)}, got {targets}"
        )
    if jobs < 1:
        raise ValueError(
            f"jobs: expected an integer >= 1, got {jobs}"
        )
    root = Path(root)
    build, student_root = root / "_build", root / "student"
    threads = threads or max(1, (os.cpu_count() or 1) // jobs)
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
    context = multiprocessing.get_context(
        "spawn"
    )  # a clean interpreter per worker
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context
    ) as pool:
        futures = [pool.submit(run_job, job) for job in todo]
        for future in as_completed(futures):
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
                    result, root, build, student_root / "_build"
                )
                print(
                    f"{job.target:8s} {str(rel):45s} {result.seconds:6.1f} s{cpu} -> {Path(where).relative_to(root)}"
                )
            else:
                print(
                    f"{job.target:8s} {str(rel):45s} FAILED after {result.seconds:.1f} s:\n{result.error}",
                    file=sys.stderr,
                )
    print(
        f"{len(todo)} executions in {time.perf_counter() - start:.1f} s wall time"
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0]
    )
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
        help="threads per kernel (default: cores / jobs)",
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
    args = parser.parse_args(argv)
    try:
        results = execute(
            args.targets,
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
            + ", ".join(
                f"{r.job.target} {r.job.path.name}" for r in failed
            ),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
