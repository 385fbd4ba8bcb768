"""Figures of chapter 1 (RNNs as functions of sequences); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from .._validation import ANY_REAL, Instance, Seq, Str, validate_params
from ..experiments.ch01 import NormProfile
from ._style import (
    _record,
    _same_length,
    _values,
    legend_outside,
    loglog_slope,
    new_figure,
)

__all__ = [
    "plot_norm_profile",
    "plot_sequence_norms",
    "plot_flip_fraction",
]


@validate_params(profile=Instance(NormProfile))
def plot_norm_profile(profile, *, step_for_spread: int | None = None) -> Figure:
    """Chapter 1: mean |h^(l)| along the sequence per width, and the spread against width.

    ``profile`` is an :class:`rnnlib.experiments.ch01.NormProfile`. The right
    panel shows the standard deviation over networks at step ``step_for_spread``
    (default: the last step before the end token) against m, on log-log axes.
    """
    _record(
        profile,
        "profile",
        ("widths", "mean", "std", "predicted"),
        "an rnnlib.experiments.ch01.NormProfile",
    )
    widths, predicted = profile.widths, profile.predicted
    mean = _values(profile.mean, "profile.mean", ndim=2)
    std = _values(profile.std, "profile.std", ndim=2)
    L = mean.shape[1]
    step = L - 2 if step_for_spread is None else step_for_spread
    fig, (ax0, ax1) = new_figure(2)
    steps = np.arange(1, L + 1)
    for i, m in enumerate(widths):
        ax0.plot(steps, mean[i], marker="o", ms=3, label=f"m = {m}")
        ax0.fill_between(steps, mean[i] - std[i], mean[i] + std[i], alpha=0.12)
    ax0.plot(
        steps,
        predicted,
        "k--",
        lw=1.2,
        label=r"$\sqrt{\sum_{j\leq l}\|x^{(j)}\|^2}$",
    )
    ax0.set_xlabel("step $l$")
    ax0.set_ylabel(r"$\|h^{(l)}\|$ (mean $\pm$ sd over networks)")
    legend_outside(ax0, fontsize=8)
    spread = std[:, step]
    ax1.loglog(widths, spread, "o-", label=f"step $l = {step + 1}$")
    slope = loglog_slope(widths, spread)
    ax1.loglog(
        widths,
        spread[0] * (widths / widths[0]) ** -0.5,
        "k:",
        lw=1.2,
        label=r"$\propto m^{-1/2}$",
    )
    ax1.set_xticks(widths, [str(m) for m in widths], minor=False)
    ax1.set_xticks([], minor=True)
    ax1.set_xlabel("width $m$")
    ax1.set_ylabel(r"sd of $\|h^{(l)}\|$ over networks")
    ax1.set_title(f"fitted slope {slope:.2f}")
    legend_outside(ax1)
    return fig


@validate_params(title=Str())
def plot_sequence_norms(norms: np.ndarray, *, title: str = "") -> Figure:
    """Chapter 1 explorer: |h^(l)| against l, one thin line per sequence, with the mean in black.

    ``norms`` has shape (batch, L), e.g. from ``rnnlib.experiments.ch01.sequence_norms``.
    """
    norms = _values(norms, "norms")
    if norms.ndim != 2:
        raise ValueError(f"norms must have shape (batch, L), got {norms.shape}")
    fig, (ax,) = new_figure(1, width=6.0)
    steps = np.arange(1, norms.shape[1] + 1)
    ax.plot(steps, norms.T, color="tab:blue", alpha=0.25, lw=0.8)
    ax.plot(
        steps,
        norms.mean(axis=0),
        "k-",
        lw=2,
        label="mean over sequences",
    )
    ax.axhline(1.0, color="gray", ls=":", lw=1)
    ax.set_xlabel("step $l$")
    ax.set_ylabel(r"$\|h^{(l)}\|$")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    legend_outside(ax)
    return fig


@validate_params(
    label=Str(),
    eps_values=Seq(ANY_REAL, "input scales"),
    flips=Seq(ANY_REAL, "fractions"),
)
def plot_flip_fraction(
    eps_values: Sequence[float],
    flips: Sequence[float],
    *,
    label: str | None = None,
) -> Figure:
    """Chapter 1: fraction of flipped activation patterns against eps_x (log-log)."""
    eps_values = _values(eps_values, "eps_values", ndim=1)
    flips = _values(flips, "flips", ndim=1)
    _same_length(flips, eps_values.size, "flips", "eps value")
    fig, (ax,) = new_figure(1, width=5.0)
    ax.loglog(eps_values, flips, "o-", label=label or "measured")
    ax.loglog(
        eps_values,
        flips[0] * eps_values / eps_values[0],
        "k:",
        lw=1.2,
        label=r"$\propto \varepsilon_x$",
    )
    ax.set_xlabel(r"$\varepsilon_x$")
    ax.set_ylabel("fraction of flipped $D^{(l)}$ entries")
    legend_outside(ax)
    return fig
