"""Figures of chapter 4 (RNN inversion and the existence construction); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .._validation import Instance, Str, validate_params
from ..experiments.ch04 import (
    ConstructionSweep,
    CorrelationSweep,
    DecodingSweep,
    GrowthFit,
    Lemma44Sweep,
    StepFeatureSweep,
)
from ..inversion import DecodingErrors
from ._style import (
    _record,
    _values,
    legend_outside,
    loglog_slope,
    new_figure,
    width_ticks,
)

__all__ = [
    "plot_relu_identity",
    "plot_decoding",
    "plot_decoding_profile",
    "plot_inversion",
    "plot_step_features",
    "plot_correlations",
    "plot_construction",
]


def _reference(ax, x, y0, slope, label) -> None:
    x = np.asarray(x, dtype=float)
    ax.loglog(x, y0 * (x / x[0]) ** slope, "k:", lw=1.2, label=label)


@validate_params(sweep=Instance(Lemma44Sweep))
def plot_relu_identity(sweep) -> Figure:
    """Chapter 4: Lemma 4.4's error against m, with the corrected scaling (left) and as printed (right).

    ``sweep`` is an :class:`rnnlib.experiments.ch04.Lemma44Sweep`; log-log axes, slopes in the legends.
    """
    _record(
        sweep,
        "sweep",
        ("widths", "corrected", "printed", "predicted", "bound"),
        "an rnnlib.experiments.ch04.Lemma44Sweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    corrected, printed = (
        _values(sweep.corrected, "sweep.corrected"),
        _values(sweep.printed, "sweep.printed"),
    )
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    ax0.loglog(
        widths,
        corrected,
        "o-",
        ms=4,
        label=f"measured, slope {loglog_slope(widths, corrected):.2f}",
    )
    ax0.loglog(
        widths,
        _values(sweep.predicted, "sweep.predicted"),
        "s--",
        ms=3,
        label="predicted (variance)",
    )
    ax0.loglog(
        widths,
        _values(sweep.bound, "sweep.bound"),
        "k:",
        lw=1.2,
        label=r"printed bound $|v||x|/\sqrt{m}$",
    )
    ax0.set_title(r"$p = \frac{2}{m} T v$ (corrected)")
    ax1.loglog(
        widths,
        printed,
        "o-",
        ms=4,
        color="C3",
        label=f"measured, slope {loglog_slope(widths, printed):.2f}",
    )
    _reference(ax1, widths, printed[0], 1.0, r"$\propto m$")
    ax1.set_title(r"$p = 2 T v$ (as printed)")
    for ax in (ax0, ax1):
        width_ticks(ax, widths)
        ax.set_xlabel("width $m$")
        legend_outside(ax, fontsize=8)
    ax0.set_ylabel(r"mean $|v^\top x - p^\top \sigma(Tx)|$")
    return fig


@validate_params("L", "eps_x", sweep=Instance(DecodingSweep))
def plot_decoding(sweep, L: int, eps_x: float) -> Figure:
    """Chapter 4, in the spirit of the paper's Fig. 4: decoding error per token and against m and L.

    Left: the naive inverse's error on each true token against its depth
    ``k = L - l`` (one line per width); middle: the fitted decoder's; right:
    the fitted decoder's mean error against m, one line per length.
    ``sweep`` is an :class:`rnnlib.experiments.ch04.DecodingSweep` that contains
    length ``L`` and ``eps_x``.
    """
    _record(
        sweep,
        "sweep",
        ("widths", "lengths", "eps_values", "fitted", "profiles"),
        "an rnnlib.experiments.ch04.DecodingSweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    lengths = [int(v) for v in sweep.lengths]
    if L not in lengths:
        raise ValueError(f"L must be one of the sweep's lengths {lengths}, got {L}")
    eps_list = [float(e) for e in sweep.eps_values]
    if eps_x not in eps_list:
        raise ValueError(
            f"eps_x must be one of the sweep's values {eps_list}, got {eps_x}"
        )
    k_eps = eps_list.index(eps_x)
    fig, (ax0, ax1, ax2) = new_figure(3, width=12.0, height=3.8)
    depth = L - np.arange(2, L)
    for m in widths:
        naive, fitted = sweep.profiles[(int(m), L, eps_x)]
        ax0.semilogy(
            depth,
            _values(naive, "profile"),
            "o-",
            ms=3,
            label=f"m = {int(m)}",
        )
        ax1.semilogy(
            depth,
            _values(fitted, "profile"),
            "o-",
            ms=3,
            label=f"m = {int(m)}",
        )
    ax0.axhline(1.0, color="k", ls=":", lw=1.2)
    ax0.set_title(r"naive: $A^\top (W^\top)^k h^{(L)}$")
    ax1.set_title("fitted linear decoder (least squares)")
    for ax in (ax0, ax1):
        ax.set_xlabel(r"depth $k = L - \ell$ of the token")
        legend_outside(ax, fontsize=8)
    ax0.set_ylabel(r"error on $\bar x^{(\ell)}$ (max-abs, per $\varepsilon_x$)")
    fitted = _values(sweep.fitted, "sweep.fitted", ndim=3)
    for j, length in enumerate(lengths):
        row = fitted[:, j, k_eps]
        ax2.loglog(
            widths,
            row,
            "o-",
            ms=4,
            label=f"L = {length}: slope {loglog_slope(widths, row):.2f}",
        )
    width_ticks(ax2, widths)
    ax2.set_xlabel("width $m$")
    ax2.set_title(r"fitted decoder, mean over tokens")
    legend_outside(ax2, fontsize=8)
    return fig


_INVERSES = (
    ("analytic", "analytic inverse $J^+$ (ours)", "o-", "C0"),
    ("fitted", "fitted decoder", "s-", "C1"),
    ("naive", "naive inverse", "^--", "C3"),
)


def _check_decoding_sweep(sweep, name: str) -> None:
    _record(
        sweep,
        name,
        (
            "widths",
            "lengths",
            "eps_values",
            "naive",
            "fitted",
            "analytic",
        ),
        "an rnnlib.experiments.ch04.DecodingSweep",
    )


@validate_params(
    growth_title=Str(),
    by_width=Instance(DecodingSweep),
    by_length=Instance(DecodingSweep),
    by_eps=Instance(DecodingSweep),
    growth=Instance(GrowthFit),
)
def plot_inversion(
    by_width, by_length, by_eps, growth, *, growth_title: str = ""
) -> Figure:
    """Chapter 4, Theorem 4.5: analytic inverse vs fitted decoder vs naive inverse, and the naive error's growth.

    ``by_width`` (widths at one L and eps_x), ``by_length`` (one width, lengths
    at one eps_x) and ``by_eps`` (one width and L, values of eps_x) are
    :class:`rnnlib.experiments.ch04.DecodingSweep` s; their error averaged over
    the tokens is drawn against m (log-log, slopes in the legend), L and
    eps_x. ``growth`` is a :class:`rnnlib.experiments.ch04.GrowthFit` of the
    naive error against the depth: its network-mean profile with the
    exponential and linear fits to it (fourth panel, titled
    ``growth_title``, e.g. its width and length).
    """
    for sweep, name in (
        (by_width, "by_width"),
        (by_length, "by_length"),
        (by_eps, "by_eps"),
    ):
        _check_decoding_sweep(sweep, name)
    _record(
        growth,
        "growth",
        ("depths", "errors", "rate", "slope"),
        "an rnnlib.experiments.ch04.GrowthFit",
    )
    fig, axes = new_figure(4, height=3.6)
    widths = _values(by_width.widths, "by_width.widths", ndim=1)
    lengths = _values(by_length.lengths, "by_length.lengths", ndim=1)
    eps = _values(by_eps.eps_values, "by_eps.eps_values", ndim=1)
    for field, label, style, color in _INVERSES:
        y = _values(getattr(by_width, field), f"by_width.{field}")
        y = y[:, 0, 0]
        axes[0].loglog(
            widths,
            y,
            style,
            ms=4,
            color=color,
            label=f"{label}: slope {loglog_slope(widths, y):.2f}",
        )
        yl = _values(getattr(by_length, field), f"by_length.{field}")
        axes[1].semilogy(
            lengths,
            yl[0, :, 0],
            style,
            ms=4,
            color=color,
            label=label,
        )
        ye = _values(getattr(by_eps, field), f"by_eps.{field}")
        axes[2].loglog(eps, ye[0, 0, :], style, ms=4, color=color, label=label)
    width_ticks(axes[0], widths)
    axes[0].set_xlabel("width $m$")
    axes[0].set_title(
        rf"$L = {int(by_width.lengths[0])}$, "
        rf"$\varepsilon_x = {float(by_width.eps_values[0]):g}$"
    )
    axes[1].set_xticks(lengths, labels=[f"{int(v)}" for v in lengths])
    axes[1].set_xlabel("length $L$")
    axes[1].set_title(
        rf"$m = {int(by_length.widths[0])}$, "
        rf"$\varepsilon_x = {float(by_length.eps_values[0]):g}$"
    )
    axes[2].set_xticks(eps, labels=[f"{v:g}" for v in eps])
    axes[2].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[2].set_xlabel(r"token scale $\varepsilon_x$")
    axes[2].set_title(rf"$m = {int(by_eps.widths[0])}$, $L = {int(by_eps.lengths[0])}$")
    axes[0].set_ylabel(r"mean error on $\bar x^{(\ell)}$")
    axes[2].set_ylabel(r"mean error on $\bar x^{(\ell)}$")
    for ax in axes[:3]:
        ax.axhline(1.0, color="k", ls=":", lw=1.0)
    legend_outside(axes[0], fontsize=8, ncols=1)
    k = _values(growth.depths, "growth.depths", ndim=1)
    mean = _values(growth.errors, "growth.errors", ndim=2).mean(axis=0)
    X = np.stack([np.ones_like(k), k], axis=1)
    ab = np.linalg.lstsq(X, np.log(mean), rcond=None)[0]
    w = 1.0 / mean
    cd = np.linalg.lstsq(X * w[:, None], mean * w, rcond=None)[0]
    ax = axes[3]
    ax.semilogy(k, mean, "^", ms=5, color="C3", label="naive, mean")
    ax.semilogy(
        k,
        np.exp(X @ ab),
        "k-",
        lw=1.2,
        label=f"exponential, x{np.exp(ab[1]):.2f} per step",
    )
    ax.semilogy(
        k,
        np.clip(X @ cd, 1e-3, None),
        "k--",
        lw=1.2,
        label=f"linear, +{cd[1]:.1f} per step",
    )
    ax.set_xlabel(r"depth $k = L - \ell$ of the token")
    ax.set_title(growth_title or "naive inverse against depth")
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    legend_outside(ax, fontsize=8, ncols=1)
    return fig


@validate_params(errors=Instance(DecodingErrors))
def plot_decoding_profile(errors) -> Figure:
    """Chapter 4 explorer: per-token decoding error of one network, naive inverse vs fitted decoder vs analytic inverse.

    ``errors`` is an :class:`rnnlib.inversion.DecodingErrors`; its
    ``analytic`` errors are drawn when it has them.
    """
    _record(
        errors,
        "errors",
        ("width", "L", "eps_x", "positions", "naive", "fitted"),
        "an rnnlib.inversion.DecodingErrors",
    )
    pos = _values(errors.positions, "errors.positions", ndim=1)
    fig, (ax,) = new_figure(1, width=6.0, height=3.8)
    ax.semilogy(
        pos,
        _values(errors.naive, "errors.naive"),
        "o-",
        ms=4,
        label="naive inverse",
    )
    ax.semilogy(
        pos,
        _values(errors.fitted, "errors.fitted"),
        "s-",
        ms=4,
        label="fitted decoder",
    )
    analytic = getattr(errors, "analytic", None)
    if analytic is not None:
        ax.semilogy(
            pos,
            _values(analytic, "errors.analytic"),
            "d-",
            ms=4,
            label="analytic inverse (ours)",
        )
    ax.axhline(1.0, color="k", ls=":", lw=1.2, label="no information")
    ax.set_xlabel(r"position $\ell$ of the token")
    ax.set_ylabel(r"error on $\bar x^{(\ell)}$")
    ax.set_title(
        rf"$m = {errors.width}$, $L = {errors.L}$, $\varepsilon_x = {errors.eps_x:g}$"
    )
    legend_outside(ax, fontsize=8)
    return fig


@validate_params(complexities=Instance(Mapping), sweep=Instance(StepFeatureSweep))
def plot_step_features(sweep, complexities: dict | None = None) -> Figure:
    """Chapter 4: Lemma 4.1's error against the number m of random step features, per function.

    ``sweep`` is an :class:`rnnlib.experiments.ch04.StepFeatureSweep`; the legend gives
    each fitted ``sqrt(E[H^2])`` and, if given, ``complexities[name]`` (a string).
    """
    _record(
        sweep,
        "sweep",
        ("widths", "names", "errors", "norms"),
        "an rnnlib.experiments.ch04.StepFeatureSweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    errors = _values(sweep.errors, "sweep.errors", ndim=2)
    fig, (ax,) = new_figure(1, width=6.4, height=4.0)
    for f, name in enumerate(sweep.names):
        extra = (
            f", {complexities[name]}" if complexities and name in complexities else ""
        )
        ax.loglog(
            widths,
            errors[f],
            "o-",
            ms=4,
            label=rf"{name}: $\sqrt{{E H^2}}$ = {sweep.norms[f]:.3g}{extra}, slope {loglog_slope(widths, errors[f]):.2f}",
        )
    _reference(ax, widths, errors[0, 0], -0.5, r"$\propto m^{-1/2}$")
    width_ticks(ax, widths)
    ax.set_xlabel("number of features $m$")
    ax.set_ylabel(r"mean of $\max_u |\mathrm{average} - \phi(u)|$")
    legend_outside(ax, fontsize=8)
    return fig


@validate_params(sweep=Instance(CorrelationSweep))
def plot_correlations(sweep) -> Figure:
    """Chapter 4, Lemma F.11: ``|c_i|`` against the step i (left) and ``c_L``, ``max_{i<L} |c_i|`` against m (right).

    ``sweep`` is an :class:`rnnlib.experiments.ch04.CorrelationSweep`.
    """
    _record(
        sweep,
        "sweep",
        ("widths", "last", "max_earlier", "profile"),
        "an rnnlib.experiments.ch04.CorrelationSweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    profile = _values(sweep.profile, "sweep.profile", ndim=2)
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    steps = np.arange(1, profile.shape[1] + 1)
    for j, m in enumerate(widths):
        ax0.semilogy(steps, profile[j], "o-", ms=3, label=f"m = {int(m)}")
    ax0.set_xlabel("step $i$")
    ax0.set_ylabel(r"mean $|c_i|$")
    legend_outside(ax0, fontsize=8)
    last, earlier = (
        _values(sweep.last, "sweep.last"),
        _values(sweep.max_earlier, "sweep.max_earlier"),
    )
    ax1.loglog(widths, last, "o-", ms=4, label=r"$c_L$")
    ax1.loglog(
        widths,
        earlier,
        "s-",
        ms=4,
        label=rf"$\max_{{i<L}}|c_i|$, slope {loglog_slope(widths, earlier):.2f}",
    )
    ax1.axhline(2.0, color="k", ls=":", lw=1.2, label=r"Var$(b) = 2$")
    width_ticks(ax1, widths)
    ax1.set_xlabel("width $m$")
    legend_outside(ax1, fontsize=8)
    return fig


@validate_params(sweep=Instance(ConstructionSweep))
def plot_construction(sweep) -> Figure:
    """Chapter 4, Theorem 4.3: the constructed pseudo-network's error against m (left), and F vs F* (right).

    ``sweep`` is an :class:`rnnlib.experiments.ch04.ConstructionSweep`; the scatter is
    its ``sample`` (first network, largest width).
    """
    _record(
        sweep,
        "sweep",
        (
            "widths",
            "error",
            "centred",
            "start",
            "norm_A",
            "sample",
        ),
        "an rnnlib.experiments.ch04.ConstructionSweep",
    )
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    fig, (ax0, ax1) = new_figure(2, width=10.0, height=4.0)
    for name, label, style in (
        ("error", r"$|F - F^*|$", "o-"),
        ("centred", "the same, centred", "o--"),
        ("start", "start-token term", "s-"),
        ("norm_A", r"$\|A^*\|_F$", "^-"),
    ):
        y = _values(getattr(sweep, name), f"sweep.{name}")
        ax0.loglog(
            widths,
            y,
            style,
            ms=4,
            label=f"{label}: slope {loglog_slope(widths, y):.2f}",
        )
    ax0.axhline(
        sweep.target_std,
        color="k",
        ls=":",
        lw=1.2,
        label=r"std of $F^*$",
    )
    width_ticks(ax0, widths)
    ax0.set_xlabel("width $m$")
    legend_outside(ax0, fontsize=8)
    F, F_star = (
        _values(sweep.sample.F, "sample.F"),
        _values(sweep.sample.F_star, "sample.F_star"),
    )
    lim = 1.05 * float(max(np.abs(F).max(), np.abs(F_star).max()))
    ax1.plot([-lim, lim], [-lim, lim], "k:", lw=1.2)
    ax1.scatter(F_star, F, s=10, alpha=0.6)
    ax1.set_xlim(-lim, lim)
    ax1.set_ylim(-lim, lim)
    ax1.set_xlabel(r"target $F^*(\bar x)$")
    ax1.set_ylabel(r"pseudo-network $F(x; 0, A^*)$")
    ax1.set_title(rf"$m = {int(widths[-1])}$, $\varepsilon_x = {sweep.eps_x:g}$")
    return fig
