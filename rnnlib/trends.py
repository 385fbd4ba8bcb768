"""Trends over seeds: a slope fitted per seed and the interval of their mean (chapters 4-6, 10).

A "reproduced in trend only" verdict rests on a slope, not on the end points of one
series: :func:`seed_slopes` fits the least-squares slope of each seed's series against
the swept size, :func:`mean_interval` gives the Student-t interval of the mean slope over
seeds, and :func:`loglog_trend` does both on log-log axes (the slope of ``log y`` against
``log x``, one fit per seed), returning a :class:`SeedTrend` whose interval a chapter prints
in a claim's figure and asserts to exclude the null rate. Where each size has its own
independent draws (a fresh network or matrix per width, no seed series to follow across
sizes), :func:`bootstrap_loglog_trend` gives the slope of the means and a bootstrap interval
over the draws (:class:`DrawTrend`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._rng import as_seed
from ._validation import ANY_REAL, OPEN_UNIT, POSITIVE, Int, Seq, validate_params

__all__ = [
    "seed_slopes",
    "MeanInterval",
    "mean_interval",
    "SeedTrend",
    "loglog_trend",
    "DrawTrend",
    "bootstrap_loglog_trend",
]


@validate_params(x=Seq(ANY_REAL, "abscissae"))
def seed_slopes(x: Sequence[float], y: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of ``y`` (seeds, len(x)) against ``x`` (chapters 4-6, 10).

    For row ``y_s``: ``sum_j (x_j - mean x)(y_sj - mean y_s) / sum_j (x_j - mean x)^2``, the
    slope of ``numpy.polyfit(x, y_s, 1)``. ``x`` needs at least 2 distinct finite values and
    ``y`` (a 1-d series is one seed) ``len(x)`` columns; a row with a NaN (a seed whose
    series is undefined somewhere, as :func:`rnnlib.experiments.ch10.smallest_k` may give)
    gets a NaN slope, which :func:`mean_interval` refuses. Returns the slopes, shape (seeds,).
    """
    xs = np.asarray(x, dtype=float)
    ys = np.atleast_2d(np.asarray(y, dtype=float))
    if xs.ndim != 1 or ys.ndim != 2:
        raise ValueError(
            f"x must be 1-d and y of shape (seeds, len(x)), got shapes {xs.shape} and {ys.shape}"
        )
    if ys.shape[-1] != xs.size or xs.size < 2:
        raise ValueError(
            f"y must have len(x) = {xs.size} >= 2 columns, got shape {ys.shape}"
        )
    if not np.all(np.isfinite(xs)) or np.ptp(xs) == 0:
        raise ValueError(f"x must be finite with at least 2 distinct values, got {x!r}")
    xc = xs - xs.mean()
    return (ys - ys.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


class MeanInterval(NamedTuple):
    """:func:`mean_interval` results: the mean and its Student-t interval."""

    #: the mean of the values
    mean: float
    #: the interval's lower end
    low: float
    #: the interval's upper end
    high: float


@validate_params(level=OPEN_UNIT, values=Seq(ANY_REAL, "values"))
def mean_interval(values: Sequence[float], level: float = 0.95) -> MeanInterval:
    """The mean of ``values`` (one per seed) and its two-sided Student-t interval at ``level`` (chapters 4-6, 10).

    ``mean +- t_{n-1, (1+level)/2} s / sqrt(n)``, with ``s`` the sample standard deviation;
    needs at least 2 finite values. Returns ``(mean, low, high)``.
    """
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)):
        raise ValueError(f"values must be at least 2 finite numbers, got {values!r}")
    mean = float(v.mean())
    half = float(
        student_t.ppf((1 + level) / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    )
    return MeanInterval(mean, mean - half, mean + half)


@dataclass(frozen=True)
class SeedTrend:
    """:func:`loglog_trend`'s result: the per-seed slopes, their mean and its t-interval.

    ``slopes`` (seeds,); ``mean``, ``low``, ``high``: :func:`mean_interval` of the slopes
    at ``level``; ``str()`` is :meth:`text`, the form a claim's figure prints.
    """

    slopes: np.ndarray
    mean: float
    low: float
    high: float
    level: float

    def text(self, unit: str = "seeds") -> str:
        """``"slope -0.49 [-0.62, -0.35] (95 % t-interval, 6 seeds)"``: the form a claim's figure prints."""
        return (
            f"slope {self.mean:.2f} [{self.low:.2f}, {self.high:.2f}] "
            f"({100 * self.level:.0f} % t-interval, "
            f"{self.slopes.size} {unit})"
        )

    def __str__(self) -> str:
        return self.text()


@validate_params(level=OPEN_UNIT, x=Seq(POSITIVE, "sizes"))
def loglog_trend(x: Sequence[float], y: np.ndarray, level: float = 0.95) -> SeedTrend:
    """The log-log slope of each seed's series ``y[s]`` against ``x``, and the t-interval of their mean (chapters 4-6).

    One least-squares fit of ``log y[s]`` against ``log x`` per seed (:func:`seed_slopes`),
    then :func:`mean_interval` over the seeds. ``x`` and ``y`` (seeds >= 2, len(x)) must be
    positive. Returns a :class:`SeedTrend`.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if ys.ndim != 2 or ys.shape[0] < 2:
        raise ValueError(
            f"y must have shape (seeds >= 2, len(x)), got shape {ys.shape}"
        )
    if not np.all(xs > 0) or not np.all(ys > 0):
        raise ValueError(
            "x and y must be positive (their logarithms are fitted), "
            f"got min x {np.min(xs)!r}, min y {np.min(ys)!r}"
        )
    slopes = seed_slopes(np.log(xs), np.log(ys))
    mean, low, high = mean_interval(slopes, level)
    return SeedTrend(slopes, mean, low, high, float(level))


@dataclass(frozen=True)
class DrawTrend:
    """:func:`bootstrap_loglog_trend`'s result: the slope of the means and its bootstrap interval.

    ``slope``: the log-log slope of the mean over the draws at each size; ``low``,
    ``high``: the percentile bootstrap interval at ``level``; ``draws``: the number of
    draws at each size; ``str()`` is :meth:`text`.
    """

    slope: float
    low: float
    high: float
    level: float
    draws: tuple[int, ...]

    def text(self) -> str:
        """``"slope -0.49 [-0.62, -0.35] (95 % bootstrap, 40 draws each)"``."""
        n = (
            f"{self.draws[0]} draws each"
            if len(set(self.draws)) == 1
            else "draws " + ", ".join(map(str, self.draws))
        )
        return (
            f"slope {self.slope:.2f} [{self.low:.2f}, {self.high:.2f}] "
            f"({100 * self.level:.0f} % bootstrap, {n})"
        )

    def __str__(self) -> str:
        return self.text()


@validate_params(
    "generator", level=OPEN_UNIT, n_boot=Int(100), x=Seq(POSITIVE, "sizes")
)
def bootstrap_loglog_trend(
    x: Sequence[float],
    samples: Sequence[Sequence[float]],
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    generator: int | None = 0,
) -> DrawTrend:
    """The log-log slope of the mean of independent draws against ``x``, with a bootstrap interval (chapters 4, 5).

    ``samples[j]`` holds the draws at size ``x[j]`` (at least 2 each, positive). The slope
    is the least-squares slope of ``log mean(samples[j])`` against ``log x[j]``; its
    interval is the percentile interval of ``scipy.stats.bootstrap``, which resamples the
    draws of each size independently ``n_boot`` times (seeded by ``generator``). Returns a
    :class:`DrawTrend`.
    """
    from scipy.stats import bootstrap

    xs = np.asarray(x, dtype=float)
    if xs.ndim != 1 or xs.size < 2 or not np.all(xs > 0):
        raise ValueError(f"x must be at least 2 positive sizes, got {x!r}")
    if len(samples) != xs.size:
        raise ValueError(
            f"samples must have one sequence of draws per size, len(x) = {xs.size}, "
            f"got {len(samples)}"
        )
    draws = [np.asarray(s, dtype=float).ravel() for s in samples]
    for j, s in enumerate(draws):
        if s.size < 2 or not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise ValueError(
                f"samples[{j}] must be at least 2 positive finite draws, got {samples[j]!r}"
            )
    lx = np.log(xs)

    point = float(seed_slopes(lx, np.log([s.mean() for s in draws]))[0])
    res = bootstrap(
        draws,
        lambda *ss, axis: seed_slopes(
            lx,
            np.log(np.stack([s.mean(axis=axis) for s in ss], axis=-1)).reshape(
                -1, lx.size
            ),
        ),
        n_resamples=n_boot,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(as_seed(generator)),
    )
    ci = res.confidence_interval
    return DrawTrend(
        point,
        float(ci.low),
        float(ci.high),
        float(level),
        tuple(int(s.size) for s in draws),
    )
