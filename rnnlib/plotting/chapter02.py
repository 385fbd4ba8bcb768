"""Figures of chapter 2 (the concept class); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from .._validation import ANY_REAL, POSITIVE, Instance, Ints, Seq, validate_params
from ._style import (
    _same_length,
    _table,
    _values,
    legend_outside,
    new_figure,
)

__all__ = ["plot_targets", "plot_complexity", "plot_dl1"]


@validate_params(thetas=Seq(ANY_REAL, "angles"))
def plot_targets(
    thetas: Sequence[float],
    slices: np.ndarray,
    interaction: np.ndarray,
    *,
    labels=None,
) -> Figure:
    """Chapter 2: targets along a circle of one token (left); the two-token interaction of one target (right).

    ``slices`` is (n_targets, k): each target as the first token moves along a
    circle with angles ``thetas`` (k,); ``interaction`` is (k, k), the mixed
    difference ``F(t1, t2) - F(t1, 0) - F(0, t2) + F(0, 0)`` of the first and
    the last token (zero for an additive target).
    """
    thetas = _values(thetas, "thetas", ndim=1)
    slices = np.atleast_2d(_values(slices, "slices"))
    if slices.ndim != 2 or slices.shape[1] != thetas.size:
        raise ValueError(
            f"slices must have shape (n_targets, {thetas.size}), got {slices.shape}"
        )
    if _values(interaction, "interaction").shape != (
        thetas.size,
        thetas.size,
    ):
        raise ValueError(
            f"interaction must have shape ({thetas.size}, {thetas.size}), got {np.shape(interaction)}"
        )
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for i, row in enumerate(slices):
        ax0.plot(
            thetas,
            row,
            label=labels[i] if labels else f"target {i + 1}",
        )
    ax0.set_xlabel(r"angle $\theta$ of the first true token")
    ax0.set_ylabel(r"$F(\bar{\mathbf{x}})$")
    legend_outside(ax0, fontsize=8)
    lim = float(np.max(np.abs(interaction))) or 1.0
    im = ax1.imshow(
        np.asarray(interaction, dtype=float).T,
        origin="lower",
        cmap="RdBu_r",
        vmin=-lim,
        vmax=lim,
        extent=(thetas[0], thetas[-1], thetas[0], thetas[-1]),
        aspect="auto",
    )
    ax1.grid(False)
    ax1.set_xlabel(r"$\theta_1$ (first token)")
    ax1.set_ylabel(r"$\theta_2$ (last token)")
    ax1.set_title("interaction of the two tokens")
    fig.colorbar(im, ax=ax1, shrink=0.85)
    return fig


@validate_params(
    log10_cs=Instance(Mapping),
    log10_ceps=Instance(Mapping),
    radii=Seq(POSITIVE, "radii"),
)
def plot_complexity(
    radii: Sequence[float],
    log10_cs: dict[str, np.ndarray],
    log10_ceps: dict[str, np.ndarray],
) -> Figure:
    """Chapter 2: ``log10 C_s(phi, R)`` (left) and ``log10 C_eps(phi, R)`` (right) against R, one line per phi.

    Infinite values (a Taylor series that diverges at that radius) are left out of the line.
    """
    radii = _values(radii, "radii", ndim=1)
    for table, table_name in (
        (log10_cs, "log10_cs"),
        (log10_ceps, "log10_ceps"),
    ):
        for label, values in _table(table, table_name).items():
            _same_length(
                _values(
                    values,
                    f"{table_name}[{label!r}]",
                    ndim=1,
                    allow_inf=True,
                ),
                radii.size,
                f"{table_name}[{label!r}]",
                "radius",
            )
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for ax, table, name in (
        (ax0, log10_cs, r"\mathfrak{C}_{\mathfrak{s}}"),
        (ax1, log10_ceps, r"\mathfrak{C}_{\varepsilon}"),
    ):
        for label, values in table.items():
            values = np.asarray(values, dtype=float)
            ok = np.isfinite(values) & ((values > 0) if ax is ax1 else True)
            ax.plot(
                radii[ok],
                values[ok],
                "o-",
                ms=3,
                label=label if ok.any() else f"{label} (infinite)",
            )
        ax.set_xscale("log")
        ax.set_xlabel("radius $R$")
        ax.set_ylabel(rf"$\log_{{10}} {name}(\phi, R)$")
    legend_outside(ax0, fontsize=8)
    ax1.set_yscale("log")
    legend_outside(ax1, fontsize=8)
    return fig


@validate_params(
    lengths=Ints(1),
    additive_mse=Seq(ANY_REAL, "errors"),
    counts=Ints(0),
    additive_by_count=Seq(ANY_REAL, "errors"),
    neuron_by_count=Seq(ANY_REAL, "errors"),
)
def plot_dl1(
    lengths: Sequence[int],
    additive_mse: Sequence[float],
    counts: Sequence[int],
    additive_by_count: Sequence[float],
    neuron_by_count: Sequence[float],
) -> Figure:
    """Chapter 2: D_L1 against the additive class (left: best additive loss vs length) and one neuron (right).

    The right panel shows, against the number s of 1s, the label 1[s = 1], the
    mean prediction of the best additive fit, and the neuron ``s(2 - s)``.
    """
    lengths = _values(lengths, "lengths", ndim=1)
    _same_length(
        _values(additive_mse, "additive_mse", ndim=1),
        lengths.size,
        "additive_mse",
        "length",
    )
    n_counts = _values(counts, "counts", ndim=1).size
    _same_length(
        _values(additive_by_count, "additive_by_count", ndim=1),
        n_counts,
        "additive_by_count",
        "count",
    )
    _same_length(
        _values(neuron_by_count, "neuron_by_count", ndim=1),
        n_counts,
        "neuron_by_count",
        "count",
    )
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    ax0.semilogx(lengths, additive_mse, "o-", label="best additive fit")
    ax0.axhline(
        2 / 9,
        color="k",
        ls=":",
        lw=1.2,
        label="2/9 (population optimum)",
    )
    ax0.semilogx(
        lengths,
        np.zeros_like(lengths),
        "s-",
        ms=4,
        label=r"one neuron $s(2-s)$",
    )
    ax0.set_xlabel("string length $n = L - 2$")
    ax0.set_ylabel("mean squared error on $D_{L_1}$")
    ax0.set_ylim(-0.02, 0.3)
    legend_outside(ax0, fontsize=8)
    counts = np.asarray(counts)
    ax1.plot(
        counts,
        (counts == 1).astype(float),
        "ko",
        ms=7,
        label=r"$D_{L_1}$ label",
    )
    ax1.plot(counts, additive_by_count, "o--", label="best additive fit")
    ax1.plot(counts, neuron_by_count, "s-", label=r"neuron $s(2-s)$")
    ax1.axhline(0.5, color="gray", ls=":", lw=1.0)
    ax1.set_xticks(counts)
    ax1.set_xlabel("number of 1s, $s$")
    ax1.set_ylabel("value")
    legend_outside(ax1, fontsize=8)
    return fig
