"""Figures of chapter 3 (the pseudo-network); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .._validation import Instance, validate_params
from ..experiments.ch03 import DirectionGapSweep, GapSweep, LinearizationSample
from ._style import (
    _record,
    _values,
    legend_outside,
    loglog_slope,
    new_figure,
)

__all__ = [
    "plot_pseudo_gap",
    "plot_direction_gap",
    "plot_linearization",
]


@validate_params(sweep=Instance(GapSweep))
def plot_pseudo_gap(sweep) -> Figure:
    """Chapter 3: relative RNN / pseudo-network gap (left) and flipped patterns (right) against m, per tau.

    ``sweep`` is an :class:`rnnlib.experiments.ch03.GapSweep`; log-log axes, fitted slopes in the legend.
    """
    _record(
        sweep,
        "sweep",
        ("widths", "taus", "relative_gap", "flip_fraction"),
        "an rnnlib.experiments.ch03.GapSweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    _values(sweep.relative_gap, "sweep.relative_gap", ndim=2)
    _values(sweep.flip_fraction, "sweep.flip_fraction", ndim=2)
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for i, tau in enumerate(sweep.taus):
        rel, flips = sweep.relative_gap[i], sweep.flip_fraction[i]
        ax0.loglog(
            widths,
            rel,
            "o-",
            ms=4,
            label=rf"$\tau = {tau:g}$: slope {loglog_slope(widths, rel):.2f}",
        )
        ax1.loglog(
            widths,
            flips,
            "o-",
            ms=4,
            label=rf"$\tau = {tau:g}$: slope {loglog_slope(widths, flips):.2f}",
        )
    ref = sweep.relative_gap[0, 0] * (widths / widths[0]) ** -0.25
    ax0.loglog(widths, ref, "k:", lw=1.2, label=r"$\propto m^{-1/4}$")
    ax1.loglog(
        widths,
        sweep.flip_fraction[0, 0] * (widths / widths[0]) ** -0.5,
        "k:",
        lw=1.2,
        label=r"$\propto m^{-1/2}$",
    )
    for ax in (ax0, ax1):
        ax.set_xticks(widths, labels=[f"{int(w)}" for w in widths])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax0.set_xlabel("width $m$")
    ax0.set_ylabel("relative gap RNN vs pseudo-network")
    ax1.set_xlabel("width $m$")
    ax1.set_ylabel("fraction of flipped $D^{(l)}$ entries")
    legend_outside(ax0, fontsize=8)
    legend_outside(ax1, fontsize=8)
    return fig


@validate_params("tau", sweep=Instance(DirectionGapSweep))
def plot_direction_gap(sweep, tau: float = 1.0) -> Figure:
    """Chapter 3: random vs ``B``-aligned directions at one tau, against m.

    Left: the relative RNN / pseudo-network gap per kind of direction (fitted
    slopes in the legend). Right: its two parts, the pseudo-network's output
    ``mean |F|`` (solid) and the gap ``mean |F_rnn change - F|`` (dashed).
    ``sweep`` is an :class:`rnnlib.experiments.ch03.DirectionGapSweep`; ``tau`` one of its taus.
    """
    _record(
        sweep,
        "sweep",
        (
            "widths",
            "taus",
            "kinds",
            "relative_gap",
            "gap",
            "pseudo",
        ),
        "an rnnlib.experiments.ch03.DirectionGapSweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    taus = [float(t) for t in sweep.taus]
    if tau not in taus:
        raise ValueError(f"tau must be one of the sweep's taus {taus}, got {tau!r}")
    t = taus.index(tau)
    rel = _values(sweep.relative_gap, "sweep.relative_gap", ndim=3)[:, t]
    gap = _values(sweep.gap, "sweep.gap", ndim=3)[:, t]
    pseudo = _values(sweep.pseudo, "sweep.pseudo", ndim=3)[:, t]
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for i, kind in enumerate(sweep.kinds):
        color = f"C{i}"
        ax0.loglog(
            widths,
            rel[i],
            "o-",
            ms=4,
            color=color,
            label=f"{kind}: slope {loglog_slope(widths, rel[i]):.2f}",
        )
        ax1.loglog(widths, pseudo[i], "o-", ms=4, color=color)
        ax1.loglog(widths, gap[i], "s--", ms=3, color=color)
    ax1.plot([], [], "k-", label=r"pseudo-network output $|F|$")
    ax1.plot([], [], "k--", label="gap (colours as on the left)")
    ax0.loglog(
        widths,
        rel[0, 0] * (widths / widths[0]) ** -0.25,
        "k:",
        lw=1.2,
        label=r"$\propto m^{-1/4}$",
    )
    ax0.loglog(
        widths,
        rel[-1, 0] * (widths / widths[0]) ** -0.75,
        "k-.",
        lw=1.2,
        label=r"$\propto m^{-3/4}$",
    )
    for ax in (ax0, ax1):
        ax.set_xticks(widths, labels=[f"{int(w)}" for w in widths])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("width $m$")
    ax0.set_ylabel(rf"relative gap at $\tau = {tau:g}$")
    ax1.set_ylabel("mean absolute value")
    legend_outside(ax0, fontsize=8)
    legend_outside(ax1, fontsize=8)
    return fig


@validate_params(sample=Instance(LinearizationSample))
def plot_linearization(sample) -> Figure:
    """Chapter 3 explorer: the true change of the RNN output against the pseudo-network output.

    ``sample`` is an :class:`rnnlib.experiments.ch03.LinearizationSample`; the diagonal is exact agreement.
    """
    _record(
        sample,
        "sample",
        (
            "width",
            "tau",
            "L",
            "true_change",
            "pseudo",
            "flip_fraction",
        ),
        "an rnnlib.experiments.ch03.LinearizationSample",
    )
    true, pseudo = (
        _values(sample.true_change, "sample.true_change"),
        _values(sample.pseudo, "sample.pseudo"),
    )
    rel = np.mean(np.abs(true - pseudo)) / np.mean(np.abs(pseudo))
    fig, (ax,) = new_figure(1, width=5.0, height=4.2)
    lim = 1.05 * float(max(np.abs(true).max(), np.abs(pseudo).max()))
    ax.plot([-lim, lim], [-lim, lim], "k:", lw=1.2)
    ax.scatter(pseudo, true, s=10, alpha=0.6)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_xlabel(r"pseudo-network $F(\mathbf{x}; \Delta W, \Delta A)$")
    ax.set_ylabel(
        r"$F_{\mathrm{rnn}}(W + \Delta W, A + \Delta A) - F_{\mathrm{rnn}}(W, A)$"
    )
    ax.set_title(
        rf"$m = {sample.width}$, $\tau = {sample.tau:g}$, $L = {sample.L}$: relative gap {rel:.2f}, "
        f"flips {100 * sample.flip_fraction:.2f}%",
        fontsize=9,
    )
    return fig
