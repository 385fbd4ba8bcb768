"""Figures of chapter 6 (generalization); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ._style import _values, legend_outside, new_figure

__all__ = [
    "plot_gap_vs_n",
    "plot_complexity_vs_width",
    "plot_limit_bound",
]


def _field(runs, name: str) -> np.ndarray:
    if not isinstance(runs, (list, tuple)) or not runs:
        raise ValueError(
            "runs must be a non-empty list of rnnlib.experiments.ch06.GeneralizationRun"
        )
    for r in runs:
        if not hasattr(r, name):
            raise TypeError(
                f"runs must hold rnnlib.experiments.ch06.GeneralizationRun records, got {type(r).__name__}"
            )
    return _values(
        [getattr(r, name) for r in runs], f"runs[i].{name}", ndim=1
    )


def _by(
    runs, key: str, name: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct values of ``key``, the mean of ``name`` at each, and every point."""
    keys, vals = _field(runs, key), _field(runs, name)
    xs = np.unique(keys)
    return (
        xs,
        np.array([vals[keys == x].mean() for x in xs]),
        np.stack([keys, vals]),
    )


def plot_gap_vs_n(runs) -> Figure:
    """Chapter 6: measured train/test gap against N beside the Rademacher bound and its complexity term.

    ``runs``: :class:`rnnlib.experiments.ch06.GeneralizationRun` records (several N, seeds).
    Log-log axes; the dotted line is log 2, the loss of the predictor 0: a bound on the
    gap above it says nothing.
    """
    fig, (ax,) = new_figure(1, width=6.4, height=4.0)
    for name, label, style in (
        (
            "bound",
            "bound $2R + b\\sqrt{2\\log(2/\\delta)/N}$",
            "s-",
        ),
        ("rademacher", "complexity term $R$ (closed form)", "^-"),
        ("gap", "measured gap (test - train)", "o-"),
    ):
        xs, mean, pts = _by(runs, "n", name)
        line = ax.plot(xs, mean, style, ms=4, label=label)[0]
        ax.plot(
            pts[0],
            pts[1],
            style[0],
            ms=3,
            alpha=0.35,
            color=line.get_color(),
        )
    ax.axhline(
        math.log(2), color="k", ls=":", lw=1.2, label=r"$\log 2$"
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(xs, labels=[f"{int(x)}" for x in xs])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("training sequences $N$")
    ax.set_ylabel("logistic loss")
    legend_outside(ax, fontsize=8)
    return fig


def plot_complexity_vs_width(runs) -> Figure:
    """Chapter 6: the complexity term, the gap and the weight-change norm against the width m."""
    fig, (ax0, ax1) = new_figure(2, width=9.5)
    for ax, names in (
        (
            ax0,
            (
                ("rademacher", "complexity term $R$", "^-"),
                ("gap", "measured gap", "o-"),
            ),
        ),
        (ax1, (("norm", r"$\|\theta_T\|_F$", "s-"),)),
    ):
        for name, label, style in names:
            xs, mean, pts = _by(runs, "width", name)
            line = ax.plot(xs, mean, style, ms=4, label=label)[0]
            ax.plot(
                pts[0],
                pts[1],
                style[0],
                ms=3,
                alpha=0.35,
                color=line.get_color(),
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(xs, labels=[f"{int(x)}" for x in xs])
        ax.xaxis.set_minor_formatter(
            matplotlib.ticker.NullFormatter()
        )
        ax.set_xlabel("width $m$")
        legend_outside(ax, fontsize=8, ncols=1)
    ax0.set_ylabel("logistic loss")
    ax1.set_ylabel("norm of the weight change")
    return fig


def plot_limit_bound(passes, fixed) -> Figure:
    """Chapter 6: the bound and the gap of the infinite-width lazy learner against N.

    ``passes`` and ``fixed`` are lists of :class:`rnnlib.experiments.ch06.LimitRun`
    (a fixed number of passes, T = epochs N; a fixed T). Log-log axes; the dotted
    line is log 2: a bound above it is vacuous. Legend below the axes.
    """
    for name, runs in (("passes", passes), ("fixed", fixed)):
        if not isinstance(runs, (list, tuple)) or not runs:
            raise ValueError(
                f"{name} must be a non-empty list of rnnlib.experiments.ch06.LimitRun, got {runs!r}"
            )
        for r in runs:
            if not all(
                hasattr(r, f) for f in ("n", "bound", "gap")
            ):
                raise TypeError(
                    f"{name} must be a list of rnnlib.experiments.ch06.LimitRun records, got {type(r).__name__}"
                )
    fig, (ax,) = new_figure(1, height=3.8)
    for runs, what, mk in (
        (passes, "4 passes", "o"),
        (fixed, "fixed $T$", "s"),
    ):
        n = _field(runs, "n")
        b = ax.plot(
            n,
            _field(runs, "bound"),
            mk + "-",
            ms=4,
            label=f"bound, {what}",
        )[0]
        gap = np.abs(_field(runs, "gap"))
        ax.plot(
            n,
            gap,
            mk + ":",
            ms=4,
            color=b.get_color(),
            alpha=0.6,
            label=f"|measured gap|, {what}",
        )
    ax.axhline(
        math.log(2), color="k", ls=":", lw=1.2, label=r"$\log 2$"
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training sequences $N$")
    ax.set_ylabel("logistic loss")
    legend_outside(ax, fontsize=8)
    return fig
