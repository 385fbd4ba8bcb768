"""Timing helpers shared by the benchmark scripts (they print ratios; nothing here is a test).

``interleaved_times`` runs the functions being compared in turn in every round,
so that a machine shared with other jobs slows them alike and their per-round
ratio stays meaningful.
"""

from __future__ import annotations

import statistics
import time

__all__ = ["median_time", "interleaved_times"]


def median_time(fn, repeats: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_times(fns, repeats: int, warmup: int = 2) -> list[list[float]]:
    """Times of each function, run in turn in every round (load on a shared machine hits them alike)."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return times
