"""Figures of chapter 8 (stability); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from .._validation import Instance, Ints, validate_params
from ._style import (
    _record,
    _same_length,
    _table,
    _values,
    legend_outside,
    new_figure,
)

__all__ = [
    "plot_state_distance",
    "plot_init_norms",
    "plot_jacobian_hist",
    "plot_lds_fit",
]


@validate_params(distances=Instance(Mapping), lams=Instance(Mapping))
def plot_state_distance(
    distances: dict[str, np.ndarray],
    lams: dict[str, float] | None = None,
) -> Figure:
    """Chapter 8: ``||s_t - s'_t||`` of two trajectories under the same inputs, per model (log scale).

    ``distances`` maps a label to an array (T,); ``lams`` optionally maps the same
    labels to a contraction constant, drawn as the dashed envelope ``d_0 lambda^t``.
    """
    _table(distances, "distances")
    fig, (ax,) = new_figure(1, width=5.6)
    for i, (label, dist) in enumerate(distances.items()):
        dist = _values(dist, f"distances[{label!r}]", ndim=1)
        t = np.arange(1, dist.size + 1)
        line = ax.semilogy(t, np.maximum(dist, 1e-300), label=label)[0]
        if lams and label in lams and lams[label] < 1:
            ax.semilogy(
                t,
                dist[0] * lams[label] ** (t - 1),
                "--",
                color=line.get_color(),
                lw=1.0,
            )
    ax.set_xlabel("step $t$")
    ax.set_ylabel(r"$\|s_t - s'_t\|_2$")
    legend_outside(ax)
    return fig


@validate_params(norms=Instance(Mapping), widths=Ints(1))
def plot_init_norms(widths: Sequence[int], norms: dict[str, np.ndarray]) -> Figure:
    """Chapter 8: ``||W||_2`` of standard initializations against the width, with the stability line 1."""
    widths = _values(widths, "widths", ndim=1)
    _table(norms, "norms")
    fig, (ax,) = new_figure(1, width=5.6)
    for scheme, values in norms.items():
        values = _values(values, f"norms[{scheme!r}]", ndim=2)
        _same_length(values, widths.size, f"norms[{scheme!r}]", "width")
        ax.errorbar(
            widths,
            values.mean(axis=1),
            yerr=values.std(axis=1),
            marker="o",
            ms=4,
            capsize=2,
            label=scheme,
        )
    ax.axhline(1.0, color="k", ls=":", lw=1.2, label=r"$\|W\|_2 = 1$")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("width $m$")
    ax.set_ylabel(r"$\|W\|_2$ at initialization")
    legend_outside(ax)
    return fig


@validate_params(norms=Instance(Mapping), global_bounds=Instance(Mapping))
def plot_jacobian_hist(
    norms: dict[str, np.ndarray],
    global_bounds: dict[str, float] | None = None,
) -> Figure:
    """Chapter 8: histograms of the measured ``||d s_t / d s_{t-1}||_2`` along data, one per model.

    ``global_bounds`` optionally maps labels to the data-free bound ``L_rho ||W||_2`` (drawn dashed).
    """
    _table(norms, "norms")
    fig, (ax,) = new_figure(1, width=5.6)
    for label, values in norms.items():
        line = ax.hist(
            _values(values, f"norms[{label!r}]").ravel(),
            bins=40,
            alpha=0.5,
            label=label,
        )[2][0]
        if global_bounds and label in global_bounds:
            ax.axvline(
                global_bounds[label],
                ls="--",
                lw=1.2,
                color=line.get_facecolor()[:3],
            )
    ax.axvline(1.0, color="k", ls=":", lw=1.2)
    ax.set_xlabel(r"$\|\partial s_t/\partial s_{t-1}\|_2$ along the data")
    ax.set_ylabel("count")
    legend_outside(ax)
    return fig


def plot_lds_fit(fit) -> Figure:
    """Chapter 8 sidebar: risk of projected GD on a stable linear system, and the student's spectral radius."""
    _record(
        fit,
        "fit",
        ("risk", "spectral_radius"),
        "an rnnlib.stability.LDSFit",
    )
    _values(fit.risk, "fit.risk", ndim=1)
    _values(fit.spectral_radius, "fit.spectral_radius", ndim=1)
    fig, (ax0, ax1) = new_figure(2)
    steps = np.arange(1, fit.risk.size + 1)
    ax0.loglog(steps, fit.risk)
    ax0.set_xlabel("gradient step")
    ax0.set_ylabel("idealized risk")
    ax1.plot(steps, fit.spectral_radius)
    ax1.axhline(1.0, color="k", ls=":", lw=1.2)
    ax1.set_xscale("log")
    ax1.set_ylim(0, 1.1)
    ax1.set_xlabel("gradient step")
    ax1.set_ylabel(r"spectral radius of $\hat A$")
    return fig
