"""Recorded runs: experiments at the scale a verdict needs, kept honest by a fingerprint (chapter 11).

A chapter executes in about a minute of CPU, but some verdicts need more compute
(seeds, training to convergence). A *record command* (``make record CH=NN``, i.e.
``python -m rnnlib.experiments.chNN --record``) runs the full experiment and
writes a JSON file beside the chapters, ``chapters/records/chNN.json``, holding

* ``config``: the sizes the experiment ran at;
* ``results``: every number the chapter shows;
* ``provenance`` (:func:`provenance`): the command, the commit, the date, the
  torch version, the device and CPU model, wall and CPU seconds;
* ``fingerprint``: the outputs of a short deterministic CPU run of the same code
  path (float64 where the model allows).

The chapter re-runs the fingerprint and compares it with the stored one
(:func:`check_fingerprint`): any change to the code that changes its numbers
fails the chapter with :func:`stale_message`, until the record is re-made. The
comparison allows a relative difference of :data:`FINGERPRINT_RTOL` (float64
rounding differs between machines and BLAS builds in the last few bits, and a
few dozen training steps amplify it; a changed constant moves the numbers by
many orders of magnitude more).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from ._validation import (
    NONNEGATIVE,
    Bool,
    Choice,
    Either,
    Function,
    Instance,
    Int,
    PathLike,
    Str,
    validate_params,
)

__all__ = [
    "RECORDS_DIR",
    "FINGERPRINT_RTOL",
    "FINGERPRINT_ATOL",
    "StaleRecordError",
    "record_path",
    "stale_message",
    "provenance",
    "git_commit",
    "write_record",
    "read_record",
    "fingerprint_difference",
    "check_fingerprint",
    "check_live_fingerprint",
    "output_path",
    "provenance_line",
    "record_cli",
    "build_record",
]

#: A device to train on: a name (``"cpu"``, ``"cuda"``) or a ``torch.device``.
DEVICE = Either(Instance(torch.device), Str())

#: Where the records live: ``chapters/records/`` of the book's repository.
RECORDS_DIR = Path(__file__).resolve().parent.parent / "chapters" / "records"
#: Relative tolerance of the fingerprint comparison (cross-machine float64 rounding).
FINGERPRINT_RTOL = 1e-9
#: Absolute tolerance of the fingerprint comparison, for values near 0.
FINGERPRINT_ATOL = 1e-12


class StaleRecordError(AssertionError):
    """The live fingerprint differs from the record's: the code changed since the record was made."""


@validate_params(chapter=Int(1, 99))
def record_path(chapter: int) -> Path:
    """The committed record of ``chapter``: ``chapters/records/chNN.json``."""
    return RECORDS_DIR / f"ch{chapter:02d}.json"


@validate_params(chapter=Int(1, 99))
def stale_message(chapter: int) -> str:
    """The message a stale record fails with: "the recorded runs of chapter N are stale: run `make record CH=NN`"."""
    n = chapter
    return f"the recorded runs of chapter {n} are stale: run `make record CH={n:02d}`"


def git_commit() -> str:
    """The book repository's ``HEAD`` commit, with " (with uncommitted changes)" if tracked files differ; "unknown" outside git."""
    root = RECORDS_DIR.parent.parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha + (" (with uncommitted changes)" if dirty else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@validate_params(
    command=Str(),
    device=DEVICE,
    wall_seconds=NONNEGATIVE,
    cpu_seconds=NONNEGATIVE,
    commit=Str(),
)
def provenance(
    command: str,
    *,
    device: str,
    wall_seconds: float,
    cpu_seconds: float,
    commit: str | None = None,
) -> dict[str, Any]:
    """Where a record came from: command, commit, date, versions, device, CPU model, wall and CPU seconds.

    ``cpu_seconds`` is the process's CPU time (``time.process_time``), summed over
    its threads; ``device`` the torch device the experiment ran on (the
    fingerprint always runs on CPU); ``commit`` the code's commit when the run
    started (:func:`git_commit`; default: now), marked when tracked files had
    uncommitted changes.
    """
    if not isinstance(command, str) or not command:
        raise ValueError("command must be a non-empty string")
    if not isinstance(device, str) or not device:
        raise ValueError("device must be a non-empty string")
    for name, value in (
        ("wall_seconds", wall_seconds),
        ("cpu_seconds", cpu_seconds),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return {
        "command": command,
        "commit": git_commit() if commit is None else str(commit),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": device,
        "cpu": _cpu_model(),
        "threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", ""),
        "wall_seconds": round(float(wall_seconds), 1),
        "cpu_seconds": round(float(cpu_seconds), 1),
        "argv": " ".join(sys.argv),
    }


@validate_params(
    path=PathLike(),
    config=Instance(Mapping),
    results=Instance(Mapping),
    fingerprint=Instance(Mapping),
    provenance=Instance(Mapping),
    scale=Choice("full", "smoke"),
)
def write_record(
    path: str | Path,
    *,
    config: Mapping[str, Any],
    results: Mapping[str, Any],
    fingerprint: Mapping[str, Any],
    provenance: Mapping[str, Any],
    scale: str = "full",
) -> Path:
    """Write a record (JSON, sorted keys, one line per value at the top) and return its path.

    ``scale`` says what size it was made at (``"full"``, or ``"smoke"`` for CI's
    seconds-long run); the chapter refuses to show a smoke record as evidence.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(
            f"path must be a str or pathlib.Path, got {type(path).__name__}"
        )
    for name, value in (
        ("config", config),
        ("results", results),
        ("fingerprint", fingerprint),
        ("provenance", provenance),
    ):
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a mapping, got {type(value).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "scale": scale,
        "provenance": dict(provenance),
        "config": dict(config),
        "fingerprint": dict(fingerprint),
        "results": dict(results),
    }
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


@validate_params(path=PathLike())
def read_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`write_record`; a missing or malformed file is a clear error."""
    if not isinstance(path, (str, Path)):
        raise TypeError(
            f"path must be a str or pathlib.Path, got {type(path).__name__}"
        )
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"path {path}: no record; run its record command (make record CH=NN)"
        )
    record = json.loads(path.read_text())
    missing = {
        "scale",
        "provenance",
        "config",
        "fingerprint",
        "results",
    } - set(record)
    if missing:
        raise ValueError(f"path {path}: not a record (missing {sorted(missing)})")
    return record


def _flatten(value: Any, prefix: str, out: dict) -> None:
    if isinstance(value, Mapping):
        for k in value:
            _flatten(
                value[k],
                f"{prefix}/{k}" if prefix else str(k),
                out,
            )
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value


@validate_params(
    stored=Instance(Mapping), live=Instance(Mapping), rtol=NONNEGATIVE, atol=NONNEGATIVE
)
def fingerprint_difference(
    stored: Mapping[str, Any],
    live: Mapping[str, Any],
    *,
    rtol: float = FINGERPRINT_RTOL,
    atol: float = FINGERPRINT_ATOL,
) -> list[str]:
    """The entries where two fingerprints differ (empty if they agree).

    Both are nested dicts / lists of numbers (and strings). Numbers agree when
    ``|a - b| <= atol + rtol |b|`` (NaNs agree with NaNs, infinities with equal
    infinities), other values when equal; a key present in one only differs.
    """
    for name, value in (("stored", stored), ("live", live)):
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a mapping, got {type(value).__name__}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(value, (int, float)) and value >= 0):
            raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    a, b = {}, {}
    _flatten(stored, "", a)
    _flatten(live, "", b)
    out = [f"{k}: only in one of them" for k in sorted(set(a) ^ set(b))]
    for k in sorted(set(a) & set(b)):
        x, y = a[k], b[k]
        numeric = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)
        )
        if numeric:
            x, y = float(x), float(y)
            if math.isnan(x) and math.isnan(y):
                continue
            if x == y or abs(x - y) <= atol + rtol * abs(y):
                continue
            out.append(f"{k}: recorded {x!r}, live {y!r}")
        elif x != y:
            out.append(f"{k}: recorded {x!r}, live {y!r}")
    return out


@validate_params(
    record=Instance(Mapping),
    live=Instance(Mapping),
    rtol=NONNEGATIVE,
    atol=NONNEGATIVE,
    chapter=Int(1, 99),
)
def check_fingerprint(
    record: Mapping[str, Any],
    live: Mapping[str, Any],
    chapter: int,
    *,
    rtol: float = FINGERPRINT_RTOL,
    atol: float = FINGERPRINT_ATOL,
) -> float:
    """Compare a live fingerprint with a record's; raise :class:`StaleRecordError` if they differ.

    The error's message is :func:`stale_message` (``chapter``), followed by the
    first differing entries. Returns the largest relative difference found
    among the entries that differ by more than ``atol`` (0 when none does), which
    the chapter prints.
    """
    if not isinstance(record, Mapping) or "fingerprint" not in record:
        raise ValueError("record must be a record (read_record) with a fingerprint")
    diffs = fingerprint_difference(record["fingerprint"], live, rtol=rtol, atol=atol)
    if diffs:
        raise StaleRecordError(
            stale_message(chapter)
            + " ("
            + "; ".join(diffs[:3])
            + (f"; {len(diffs) - 3} more" if len(diffs) > 3 else "")
            + ")"
        )
    a, b = {}, {}
    _flatten(record["fingerprint"], "", a)
    _flatten(live, "", b)
    worst = 0.0
    for k, x in a.items():
        y = b[k]
        if (
            isinstance(x, (int, float))
            and not isinstance(x, bool)
            and math.isfinite(float(x))
            and abs(x - y) > atol  # below atol the absolute tolerance decides
        ):
            worst = max(worst, abs(x - y) / max(abs(y), 1e-300))
    return worst


@validate_params(record=Instance(Mapping), chapter=Int(1, 99))
def provenance_line(record: Mapping[str, Any], chapter: int) -> str:
    """The page's provenance line: "recorded … at commit … on …, … CPU-minutes; `make record CH=N` re-runs it"."""
    n = chapter
    if not isinstance(record, Mapping) or "provenance" not in record:
        raise ValueError("record must be a record (read_record)")
    p = record["provenance"]
    commit = str(p.get("commit", "unknown"))
    short = commit[:10] + (
        " (+ uncommitted changes)" if "uncommitted" in commit else ""
    )
    scale = "" if record.get("scale") == "full" else f" at {record.get('scale')} size"
    return (
        f"recorded{scale} {p['date']} at commit {short} on {p['device']} "
        f"({p['cpu']}, torch {p['torch']}), "
        f"{p['cpu_seconds'] / 60:.0f} CPU-minutes ({p['wall_seconds'] / 60:.0f} min wall); "
        f"`make record CH={n:02d}` re-runs it"
    )


@validate_params(record=Instance(Mapping), live=Function(), chapter=Int(1, 99))
def check_live_fingerprint(
    record: Mapping[str, Any],
    chapter: int,
    live: Callable[[Mapping[str, Any]], Mapping[str, Any]],
) -> float:
    """What a chapter checks on its record: the config is the fingerprint's, and a live fingerprint agrees.

    ``live(config)`` re-runs the chapter's fingerprint at the record's config. A
    config edited after the record was made, a config the code no longer accepts
    (``ValueError``, ``KeyError``, ``TypeError``) or other numbers
    (:func:`check_fingerprint`) raise :class:`StaleRecordError` with
    :func:`stale_message`. Returns the largest relative difference.
    """
    if not isinstance(record, Mapping) or "config" not in record:
        raise ValueError("record must be a record (read_record)")
    stored = record.get("fingerprint")
    if isinstance(stored, Mapping) and "config" in stored:
        if json.dumps(stored["config"], sort_keys=True) != json.dumps(
            record["config"], sort_keys=True
        ):
            raise StaleRecordError(
                stale_message(chapter)
                + " (its config is not the one its fingerprint was made at)"
            )
    try:
        fresh = live(record["config"])
    except (ValueError, KeyError, TypeError) as err:
        raise StaleRecordError(stale_message(chapter) + f" ({err})") from err
    return check_fingerprint(record, fresh, chapter)


@validate_params(smoke=Bool(), path=PathLike(), chapter=Int(1, 99))
def output_path(path: str | Path | None, chapter: int, *, smoke: bool) -> Path:
    """Where a record command writes: the committed record by default; a smoke record only elsewhere."""
    committed = record_path(chapter)
    if smoke and (path is None or Path(path).resolve() == committed.resolve()):
        raise ValueError(
            "path must be given for a smoke record, and it must not be the committed record"
            f" {committed}"
        )
    return committed if path is None else Path(path)


@validate_params(device=Bool(), make=Function(), cost=Str(), chapter=Int(1, 99))
def record_cli(
    argv: Sequence[str] | None,
    *,
    chapter: int,
    make: Callable[..., Path],
    cost: str,
    device: bool = False,
) -> Path:
    """The command line of a chapter's record command: ``--record | --smoke [--out PATH] [--jobs J] [--device D]``.

    Calls ``make(out, smoke=..., command=..., jobs=..., [device=...])`` (the chapter's
    ``make_*record``), prints :func:`provenance_line` and returns the path written.
    ``cost`` describes the full record's size in the help ("about 5 CPU-minutes");
    ``device`` adds ``--device`` (default ``$DEVICE`` or cpu).
    """
    n = chapter
    parser = argparse.ArgumentParser(
        description=f"Chapter {n}'s recorded runs (make record CH={n:02d})."
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--record",
        action="store_true",
        help=f"the full record ({cost}), written to {record_path(n)}",
    )
    mode.add_argument(
        "--smoke",
        action="store_true",
        help="the record at a size of seconds, to --out (default: a temporary file)",
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes, one thread each (the result does not depend on it)",
    )
    if device:
        parser.add_argument("--device", default=os.environ.get("DEVICE") or "cpu")
    args = parser.parse_args(argv)
    out = args.out
    if args.smoke and out is None:
        out = Path(tempfile.mkdtemp(prefix=f"ch{n:02d}-smoke-")) / f"ch{n:02d}.json"
    dev = getattr(args, "device", "cpu")
    command = (
        f"python -m rnnlib.experiments.ch{n:02d} --smoke"
        if args.smoke
        else f"make record CH={n:02d}" + (f" DEVICE={dev}" if dev != "cpu" else "")
    )
    kw = {"device": dev} if device else {}
    path = make(
        out,
        smoke=args.smoke,
        command=command,
        jobs=args.jobs,
        **kw,
    )
    rec = read_record(path)
    print(provenance_line(rec, n))
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return path


@validate_params(
    smoke=Bool(),
    path=PathLike(),
    config=Instance(Mapping),
    run=Function(),
    fingerprint=Function(),
    command=Str(),
    device=DEVICE,
    worker_cpu=Function(),
    chapter=Int(1, 99),
)
def build_record(
    chapter: int,
    path: str | Path | None,
    *,
    config: Mapping[str, Any],
    run: Callable[[Mapping[str, Any]], Mapping[str, Any]],
    fingerprint: Callable[[Mapping[str, Any]], Mapping[str, Any]],
    smoke: bool,
    command: str | None = None,
    device: str = "cpu",
    worker_cpu: Callable[[Mapping[str, Any]], float] | None = None,
) -> Path:
    """Make one chapter's record: where it goes, the commit, the timed run, the fingerprint, the provenance, the file.

    ``run(config)`` returns the results and ``fingerprint(config)`` the live
    fingerprint (on the CPU); ``path`` is as in :func:`output_path`, ``command``
    defaults to ``make record CH=NN`` (plus ``DEVICE=`` off the CPU).
    ``worker_cpu(results)``, when given, is the CPU seconds spent in worker
    processes, which the provenance adds to this process's. Each chapter's
    ``make_*record`` is this call with its own ``run`` and ``fingerprint``.
    Returns the path written.
    """
    n = chapter
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping, got {type(config).__name__}")
    for name, fn in (("run", run), ("fingerprint", fingerprint)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {fn!r}")
    if worker_cpu is not None and not callable(worker_cpu):
        raise TypeError(f"worker_cpu must be callable or None, got {worker_cpu!r}")
    if not isinstance(device, str) or not device:
        raise ValueError(f"device must be a non-empty string, got {device!r}")
    out = output_path(path, n, smoke=bool(smoke))
    commit = git_commit()
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    results = run(config)
    extra = 0.0 if worker_cpu is None else float(worker_cpu(results))
    fp = fingerprint(config)
    prov = provenance(
        command
        or (
            f"make record CH={n:02d}" + (f" DEVICE={device}" if device != "cpu" else "")
        ),
        device=device,
        wall_seconds=time.perf_counter() - t_wall,
        cpu_seconds=time.process_time() - t_cpu + extra,
        commit=commit,
    )
    return write_record(
        out,
        config=config,
        results=results,
        fingerprint=fp,
        provenance=prov,
        scale="smoke" if smoke else "full",
    )
