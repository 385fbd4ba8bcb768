"""Figures of chapter 5 (SGD in the lazy regime); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .._validation import NONNEGATIVE, Instance, validate_params
from ..experiments.ch05 import KernelConvergence, LazyGrid, LimitConvergence
from ..train import PairResult
from ._style import (
    _record,
    _values,
    legend_outside,
    loglog_slope,
    new_figure,
    seeds_and_mean,
    width_ticks,
)

__all__ = [
    "plot_laziness",
    "plot_out_scale",
    "plot_pair",
    "plot_kernel_convergence",
    "plot_limit_convergence",
]

_GRID = (
    "widths",
    "out_scales",
    "seeds",
    "rel_move",
    "spec_move",
    "flip_fraction",
    "coupling_relative",
    "pair_relative",
    "eval_rnn",
    "init_eval",
)


@validate_params(grid=Instance(LazyGrid))
def plot_laziness(grid) -> Figure:
    """Chapter 5: weight movement, flips and RNN / pseudo-network gaps against the width m.

    ``grid`` is an :class:`rnnlib.experiments.ch05.LazyGrid` with one output scale; points are
    seeds, lines their means; fitted log-log slopes in the legends.
    """
    _record(grid, "grid", _GRID, "an rnnlib.experiments.ch05.LazyGrid")
    widths = _values(grid.widths, "grid.widths", ndim=1)
    rel = _values(grid.rel_move[:, 0], "grid.rel_move", ndim=2)
    spec = _values(grid.spec_move[:, 0], "grid.spec_move", ndim=2)
    flips = _values(grid.flip_fraction[:, 0], "grid.flip_fraction", ndim=2)
    coup = _values(
        grid.coupling_relative[:, 0],
        "grid.coupling_relative",
        ndim=2,
    )
    pair = _values(grid.pair_relative[:, 0], "grid.pair_relative", ndim=2)
    fig, (ax0, ax1, ax2) = new_figure(3, width=12.0)
    m_rel = rel.mean(axis=0)
    seeds_and_mean(
        ax0,
        widths,
        rel,
        rf"$\|W_T-W_0\|_F/\|W_0\|_F$: slope {loglog_slope(widths, m_rel):.2f}",
    )
    ax0.plot(
        widths,
        m_rel[0] * widths[0] / widths,
        "k:",
        lw=1.2,
        label=r"$\propto 1/m$",
    )
    ax0.set_ylabel("relative movement")
    ax0b = ax0.twinx()
    m_spec = spec.mean(axis=0)
    ax0b.plot(widths, m_spec, "s--", ms=4, color="C1")
    ax0b.set_ylim(0, 1.6 * float(spec.max()))
    ax0b.set_ylabel(r"$\sqrt{m}\,\|W_T-W_0\|_2$ (dashed)", color="C1")
    ax0b.grid(False)
    m_flip = seeds_and_mean(ax1, widths, flips, "flip fraction")
    ax1.plot(
        widths,
        m_flip[0] * (widths / widths[0]) ** -0.5,
        "k:",
        lw=1.2,
        label=r"$\propto m^{-1/2}$",
    )
    ax1.set_ylabel(r"fraction of flipped $D^{(\ell)}$ entries")
    m_c = seeds_and_mean(
        ax2,
        widths,
        coup,
        f"RNN vs its own linearization: slope {loglog_slope(widths, coup.mean(0)):.2f}",
    )
    seeds_and_mean(
        ax2,
        widths,
        pair,
        f"RNN vs linearized RNN trained alike: slope {loglog_slope(widths, pair.mean(0)):.2f}",
        marker="s",
    )
    ax2.plot(
        widths,
        m_c[0] * (widths / widths[0]) ** -0.25,
        "k:",
        lw=1.2,
        label=r"$\propto m^{-1/4}$",
    )
    ax2.set_ylabel("relative gap on held-out inputs")
    for ax in (ax0, ax1, ax2):
        width_ticks(ax, widths)
        ax.set_xlabel("width $m$")
        legend_outside(ax, fontsize=8, ncols=1)
    return fig


def plot_out_scale(grid) -> Figure:
    """Chapter 5: the lambda_out trade-off at one width, against the output scale.

    Left: held-out loss at initialization and after training (RNN), mean over seeds.
    Right: flip fraction and relative coupling gap (how far the RNN left its pseudo-network).
    """
    _record(grid, "grid", _GRID, "an rnnlib.experiments.ch05.LazyGrid")
    lam = _values(grid.out_scales, "grid.out_scales", ndim=1)
    init = _values(grid.init_eval[:, :, 0], "grid.init_eval", ndim=2)
    final = _values(grid.eval_rnn[:, :, 0], "grid.eval_rnn", ndim=2)
    flips = _values(grid.flip_fraction[:, :, 0], "grid.flip_fraction", ndim=2)
    coup = _values(
        grid.coupling_relative[:, :, 0],
        "grid.coupling_relative",
        ndim=2,
    )
    fig, (ax0, ax1) = new_figure(2, width=9.5)
    seeds_and_mean(ax0, lam, init, "at initialization")
    seeds_and_mean(ax0, lam, final, "after training (RNN)", marker="s")
    ax0.axhline(0.5, color="k", ls=":", lw=1.2, label="predicting 0")
    ax0.set_ylabel("held-out squared loss")
    seeds_and_mean(ax1, lam, flips, "flip fraction")
    seeds_and_mean(
        ax1,
        lam,
        coup,
        "relative gap RNN vs its linearization",
        marker="s",
    )
    ax1.set_ylabel("non-laziness")
    for ax in (ax0, ax1):
        ax.set_xlabel(r"output scale $\lambda_{\mathrm{out}}$")
        legend_outside(ax, fontsize=8, ncols=1)
    return fig


@validate_params(kernel_loss=NONNEGATIVE, pair=Instance(PairResult))
def plot_pair(pair, kernel_loss: float | None = None) -> Figure:
    """Chapter 5: the RNN and its linearization under identical SGD (a :class:`rnnlib.train.PairResult`).

    Left: training-set loss at the logged steps for both, and the kernel-ridge
    reference (dotted) if given. Right: the gap between the two predictors on
    held-out inputs, relative to how much the training changed them.
    """
    _record(
        pair,
        "pair",
        (
            "rnn",
            "pseudo",
            "steps_logged",
            "output_gap",
            "output_change",
        ),
        "an rnnlib.train.PairResult",
    )
    steps = _values(pair.steps_logged, "pair.steps_logged", ndim=1)
    rnn = _values(
        pair.rnn.history.train_loss,
        "pair.rnn.history.train_loss",
        ndim=1,
    )
    lin = _values(
        pair.pseudo.history.train_loss,
        "pair.pseudo.history.train_loss",
        ndim=1,
    )
    rel = _values(pair.relative_gap[1:], "pair.relative_gap", ndim=1)
    fig, (ax0, ax1) = new_figure(2, width=9.5)
    ax0.plot(steps, rnn, "o-", ms=4, label="RNN")
    ax0.plot(
        steps,
        lin,
        "s--",
        ms=4,
        label="linearized RNN (pseudo-network)",
    )
    if kernel_loss is not None:
        ax0.axhline(
            _values(kernel_loss, "kernel_loss"),
            color="k",
            ls=":",
            lw=1.2,
            label="kernel ridge reference",
        )
    ax0.set_yscale("log")
    ax0.set_xlabel("SGD step $t$")
    ax0.set_ylabel("training loss")
    legend_outside(ax0, fontsize=8, ncols=1)
    ax1.plot(steps[1:], rel, "o-", ms=4)
    ax1.set_ylim(0, 1.15 * float(np.max(rel)))
    ax1.set_xlabel("SGD step $t$")
    ax1.set_ylabel(
        r"$|z_{\mathrm{rnn}} - z_{\mathrm{lin}}| \,/\, |z_{\mathrm{lin}} - z_0|$"
    )
    ax1.set_title(f"m = {pair.rnn.model.width}", fontsize=10)
    return fig


@validate_params(conv=Instance(KernelConvergence))
def plot_kernel_convergence(conv) -> Figure:
    """Chapter 5: the empirical tangent kernel / m against its infinite-width limit, as m grows.

    ``conv`` is a :class:`rnnlib.experiments.ch05.KernelConvergence`. Log-log axes:
    the relative error of each draw (points) and their mean (line, fitted slope in
    the legend), the reference slope ``-1/2`` through the first mean, and the share
    of the cross-time terms in ``K_m(x, x)``. Legend below the axes.
    """
    _record(
        conv,
        "conv",
        ("widths", "errors", "mean_error", "cross_time", "slope"),
        "an rnnlib.experiments.ch05.KernelConvergence",
    )
    widths = _values(conv.widths, "conv.widths", ndim=1)
    mean = _values(conv.mean_error, "conv.mean_error", ndim=1)
    cross = _values(conv.cross_time, "conv.cross_time", ndim=1)
    fig, (ax,) = new_figure(1, height=3.6)
    line = ax.plot(
        widths,
        mean,
        "o-",
        ms=4,
        label=rf"$\|K_m/m-K\|_F/\|K\|_F$ (slope {conv.slope:.2f})",
    )[0]
    for m, e in zip(widths, conv.errors):
        ax.plot(
            np.full(len(e), m),
            e,
            "o",
            ms=3,
            alpha=0.3,
            color=line.get_color(),
        )
    ax.plot(
        widths,
        mean[0] * np.sqrt(widths[0] / widths),
        "k--",
        lw=1,
        label=r"$\propto m^{-1/2}$",
    )
    ax.plot(
        widths,
        cross,
        "s-",
        ms=4,
        label="cross-time share of $K_m(x,x)$",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    width_ticks(ax, widths)
    ax.set_xlabel("width $m$")
    ax.set_ylabel("relative size")
    legend_outside(ax, fontsize=8)
    return fig


@validate_params(doubled=Instance(LimitConvergence), iid=Instance(LimitConvergence))
def plot_limit_convergence(doubled, iid) -> Figure:
    """Chapter 5: trained RNNs against the limit-kernel learner, for the two initializations.

    ``doubled`` and ``iid`` are :class:`rnnlib.experiments.ch05.LimitConvergence`
    records (``doubled=True`` and ``False``). Log-log axes: the relative RMS distance
    of each seed's held-out predictions from the limit learner's (points) and their
    mean (line) against the width, and for the i.i.d. networks the size of their
    initial output on the same scale (dashed). Legend below the axes.
    """
    fields = ("widths", "seeds", "distance", "initial")
    what = "an rnnlib.experiments.ch05.LimitConvergence"
    _record(doubled, "doubled", fields, what)
    _record(iid, "iid", fields, what)
    fig, (ax,) = new_figure(1, height=3.6)
    for rec, name, label, marker in (
        (doubled, "doubled", "doubled initialization", "o"),
        (iid, "iid", "i.i.d. initialization (the paper's)", "s"),
    ):
        widths = _values(rec.widths, f"{name}.widths", ndim=1)
        dist = _values(rec.distance, f"{name}.distance", ndim=2)
        slope = loglog_slope(widths, dist.mean(axis=0))
        seeds_and_mean(
            ax,
            widths,
            dist,
            f"{label} (slope {slope:.2f})",
            marker,
        )
    widths = _values(iid.widths, "iid.widths", ndim=1)
    initial = _values(iid.initial, "iid.initial", ndim=2)
    ax.plot(
        widths,
        initial.mean(axis=0),
        "k--",
        lw=1,
        label="i.i.d. initial output (relative RMS)",
    )
    width_ticks(ax, widths)
    ax.set_xlabel("width $m$")
    ax.set_ylabel(r"$\|f_m-f_\infty\|\,/\,\|f_\infty\|$ (held out)")
    legend_outside(ax, fontsize=8)
    return fig
