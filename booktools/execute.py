"""Execute the book's notebooks, ``--jobs`` at a time: every execution that ``make test`` needs, once.

Three sets of executions, given as arguments (``make test`` asks for all three, in one
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
``repro``
    each chapter once more, in a fresh kernel, into ``_build/repro/`` (the
    independent execution that ``booktools.repro_check`` compares with the
    build's). A copy that is up to date with the chapter's code and with the
    library (``booktools.cache_key``) is kept.

Timing. Each record holds ``execution_seconds``, the wall time of the execution
(kernel start to kernel shutdown, as myst-nb measures its own), ``cpu_seconds``, the CPU
time of the kernel process, and ``jobs``, how many notebooks ran at once. While ``jobs``
notebooks run at once, each kernel is limited to ``--threads`` threads (default:
the machine's cores divided by ``jobs``; ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` of the
kernel), so two chapters on two cores do not fight over threads. The budget
(``booktools.exec_times``) is checked on the CPU time: with one thread, the chapter's
time alone on one core, whatever else runs on the machine; ``--jobs 1`` runs each chapter
alone (with all the cores' threads).

Usage: ``python -m booktools.execute [--jobs N] {book,student,repro} ...``
"""

from __future__ import annotations

import argparse
import hashlib
import json
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

TARGETS = ("book", "student", "repro")
#: cell metadata / notebook metadata key under which a repro copy records what it executed
STAMP_KEY = "booktools_repro"


@dataclass
class Job:
    """One notebook to execute."""

    target: str  #: "book", "student" or "repro"
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


def code_hash(nb: nbformat.NotebookNode) -> str:
    """SHA-256 of a notebook's code cells and kernel: what its outputs depend on, besides the library."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    kernel = nb.metadata.get("kernelspec", {}).get("name", "")
    return hashlib.sha256(
        json.dumps([kernel, code]).encode()
    ).hexdigest()


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
    if job.target in ("book", "student"):
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
    target = repro_path(job.path, root, build)
    target.parent.mkdir(parents=True, exist_ok=True)
    result.nb.metadata[STAMP_KEY] = {
        **data,
        **_repro_stamp(
            nbformat.read(job.path, as_version=4), root
        ),
    }
    nbformat.write(result.nb, target)
    return str(target)


def repro_path(
    chapter: Path, root: Path = ROOT, build: Path | None = None
) -> Path:
    """Where the independent execution of ``chapter`` is kept: ``_build/repro/<path in the book>``."""
    build = build if build is not None else Path(root) / "_build"
    return (
        build
        / "repro"
        / Path(chapter).resolve().relative_to(Path(root).resolve())
    )


def _repro_stamp(nb: nbformat.NotebookNode, root: Path) -> dict:
    from booktools.cache_key import source_hash

    return {
        "code_hash": code_hash(nb),
        "source_hash": source_hash(root),
    }


def repro_is_current(
    chapter: Path, root: Path = ROOT, build: Path | None = None
) -> bool:
    """Whether the kept independent execution of ``chapter`` ran its current code with the current library."""
    path = repro_path(chapter, root, build)
    if not path.is_file():
        return False
    stamp = nbformat.read(path, as_version=4).metadata.get(
        STAMP_KEY, {}
    )
    current = _repro_stamp(
        nbformat.read(chapter, as_version=4), root
    )
    return all(stamp.get(k) == v for k, v in current.items())


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
) -> tuple[list[Job], list[str]]:
    """The jobs to run, and a line for each notebook skipped because its execution is up to date."""
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
        else:
            paths, cache_dir = chapter_notebooks(root), None
        for path in paths:
            current = (
                repro_is_current(path, root, build)
                if cache_dir is None
                else _is_cached(path, cache_dir)
            )
            if current:
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
) -> list[Result]:
    """Run the executions of ``targets`` (see the module docstring), ``jobs`` at a time; print a line each."""
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
    args = parser.parse_args(argv)
    try:
        results = execute(
            args.targets,
            jobs=args.jobs,
            threads=args.threads,
            timeout=args.timeout,
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
