"""Figures of chapter 6 (generalization); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .._validation import Instance, Seq, validate_params
from ..experiments.ch06 import GeneralizationRun, LimitRun, TheoremTerms
from ._style import (
    _values,
    legend_outside,
    new_figure,
    seeds_and_mean,
    width_ticks,
)

__all__ = [
    "plot_gap_vs_n",
    "plot_complexity_vs_width",
    "plot_gap_vs_width_record",
    "plot_limit_bound",
    "plot_theorem_terms",
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
    return _values([getattr(r, name) for r in runs], f"runs[i].{name}", ndim=1)


def _by(runs, key: str, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct values of ``key``, the mean of ``name`` at each, and every point."""
    keys, vals = _field(runs, key), _field(runs, name)
    xs = np.unique(keys)
    return (
        xs,
        np.array([vals[keys == x].mean() for x in xs]),
        np.stack([keys, vals]),
    )


@validate_params(runs=Seq(Instance(GeneralizationRun), "runs"))
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
    ax.axhline(math.log(2), color="k", ls=":", lw=1.2, label=r"$\log 2$")
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
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("width $m$")
        legend_outside(ax, fontsize=8, ncols=1)
    ax0.set_ylabel("logistic loss")
    ax1.set_ylabel("norm of the weight change")
    return fig


@validate_params(
    passes=Seq(Instance(LimitRun), "runs"), fixed=Seq(Instance(LimitRun), "runs")
)
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
            if not all(hasattr(r, f) for f in ("n", "bound", "gap")):
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
    ax.axhline(math.log(2), color="k", ls=":", lw=1.2, label=r"$\log 2$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training sequences $N$")
    ax.set_ylabel("logistic loss")
    legend_outside(ax, fontsize=8)
    return fig


#: Labels of the terms of :class:`rnnlib.experiments.ch06.TheoremTerms`, in its order.
_TERM_LABELS = {
    "comparator_loss": r"comparator's loss $\bar\ell(\theta^*)$",
    "regret_distance": r"regret $\|\theta^*\|^2/(2\eta T)$",
    "regret_gradient": r"regret $\eta\Gamma^2/2$",
    "error_product": r"error $|G'|\,\delta_t$",
    "coupling": "coupling (measured)",
    "complexity": r"complexity $2(M+Y)\hat{R}_B$",
    "confidence": r"confidence $4b\sqrt{2\log(4/\delta)/N}$",
}


@validate_params(runs=Seq(Instance(TheoremTerms), "runs"))
def plot_theorem_terms(runs) -> Figure:
    """Chapter 6: Theorem 3.1's assembly term by term, a stacked bar per width beside the measured loss.

    ``runs``: :class:`rnnlib.experiments.ch06.TheoremTerms` records (several widths,
    seeds averaged). Left: for each width a bar of the terms stacked in the order of
    the assembly (log axis: a segment's length is not its size, its top is the
    running sum), and beside it the measured population loss. Right: each term's
    mean against the width, log-log, beside the measured loss and the bound. The
    dotted line is the loss of the predictor 0: a bound above it says nothing.
    """
    if not isinstance(runs, (list, tuple)) or not runs:
        raise ValueError(
            "runs must be a non-empty list of rnnlib.experiments.ch06.TheoremTerms"
        )
    names = list(_TERM_LABELS)
    for r in runs:
        if not all(hasattr(r, k) for k in [*names, "width"]):
            raise TypeError(
                f"runs must hold rnnlib.experiments.ch06.TheoremTerms records, got {type(r).__name__}"
            )
    ws = np.unique(_field(runs, "width"))
    mean = {
        k: np.array(
            [np.mean([getattr(r, k) for r in runs if r.width == w]) for w in ws]
        )
        for k in [*names, "population_loss", "zero_loss"]
    }
    fig, (ax0, ax1) = new_figure(2, height=4.4)
    pop = mean["population_loss"]
    floor = 10 ** math.floor(math.log10(max(pop.min() / 3, 1e-12)))
    pos = np.arange(len(ws))
    below = np.full(len(ws), floor)
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, k in enumerate(names):
        top = below + mean[k]
        ax0.bar(
            pos - 0.2,
            top - below,
            bottom=below,
            width=0.38,
            color=colors[i % len(colors)],
            label=_TERM_LABELS[k],
        )
        below = top
    ax0.bar(
        pos + 0.2,
        pop - floor,
        bottom=floor,
        width=0.38,
        color="k",
        label="measured population loss",
    )
    ax0.set_yscale("log")
    ax0.set_ylim(bottom=floor)
    ax0.set_xticks(pos, labels=[f"{int(w)}" for w in ws])
    ax0.set_xlabel("width $m$")
    ax0.set_ylabel("squared loss (log axis)")
    for i, k in enumerate(names):
        ax1.plot(
            ws,
            np.where(mean[k] > 0, mean[k], np.nan),
            "o-",
            ms=4,
            color=colors[i % len(colors)],
        )
    ax1.plot(ws, pop, "s--", ms=4, color="k")
    ax1.plot(
        ws,
        sum(mean[k] for k in names),
        "^:",
        ms=4,
        color="0.4",
        label="the bound (sum of the terms)",
    )
    for ax in (ax0, ax1):
        ax.axhline(
            float(mean["zero_loss"].mean()),
            color="k",
            ls=":",
            lw=1.2,
            label="loss of the predictor 0" if ax is ax0 else None,
        )
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xticks(ws, labels=[f"{int(w)}" for w in ws])
    ax1.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax1.set_xlabel("width $m$")
    ax1.set_ylabel("each term (log axis)")
    handles, labels = ax0.get_legend_handles_labels()
    more = ax1.get_legend_handles_labels()
    handles, labels = handles + more[0], labels + more[1]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=2,
        fontsize=8,
    )
    return fig


def plot_gap_vs_width_record(
    widths, gaps, errors, limit_gap: float | None = None
) -> Figure:
    """Chapter 6: the recorded width sweep, the train/test gap and the test error against m per initialization.

    ``widths`` (W,); ``gaps`` and ``errors``: mappings from an initialization's label to
    a (seeds, W) array (chapter 6's record, ``rnnlib.experiments.ch06.RECORD``). Left,
    log-log: the gap of each seed (points) and the mean (line), and ``limit_gap`` (the
    infinite-width lazy learner's gap on the same tasks) as a dashed line if given;
    right: the 0-1 test error on the same runs. The per-seed slopes are in the
    chapter's table, not in the legend.
    """
    widths = _values(widths, "widths", ndim=1)
    if not isinstance(gaps, dict) or not isinstance(errors, dict):
        raise TypeError(
            "gaps and errors must be dicts from a label to a (seeds, widths) array, "
            f"got {type(gaps).__name__} and {type(errors).__name__}"
        )
    if set(gaps) != set(errors) or not gaps:
        raise ValueError(
            "gaps and errors must have the same non-empty labels, "
            f"got {sorted(gaps)} and {sorted(errors)}"
        )
    if limit_gap is not None and not (
        isinstance(limit_gap, (int, float))
        and math.isfinite(limit_gap)
        and limit_gap > 0
    ):
        raise ValueError(f"limit_gap must be a positive number, got {limit_gap!r}")
    fig, (ax0, ax1) = new_figure(2, width=9.5)
    for (label, gap), marker in zip(gaps.items(), "osD^v"):
        gap = _values(gap, f"gaps[{label!r}]", ndim=2)
        err = _values(errors[label], f"errors[{label!r}]", ndim=2)
        seeds_and_mean(ax0, widths, gap, label, marker)
        seeds_and_mean(ax1, widths, err, label, marker, logy=False)
    if limit_gap is not None:
        ax0.axhline(
            float(limit_gap),
            color="k",
            ls="--",
            lw=1,
            label="infinite-width limit learner",
        )
    for ax in (ax0, ax1):
        width_ticks(ax, widths)
        ax.set_xlabel("width $m$")
        legend_outside(ax, fontsize=8, ncols=1)
    ax0.set_ylabel("train/test gap (logistic loss)")
    ax1.set_ylabel("0-1 test error")
    return fig
