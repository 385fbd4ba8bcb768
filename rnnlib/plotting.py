"""One figure style for the whole book, and the figures of each chapter.

Every function takes numbers (the result of an rnnlib measurement) and returns
a ``matplotlib.figure.Figure``; none of them computes anything of its own, so
the figures in the book and in the explorers (:mod:`rnnlib.widgets`) are the
same pictures of the same measurements.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

__all__ = [
    "STYLE",
    "use_book_style",
    "new_figure",
    "loglog_slope",
    "plot_norm_profile",
    "plot_sequence_norms",
    "plot_flip_fraction",
]

#: rcParams of the book: white background (readable in dark mode), readable fonts.
STYLE: dict[str, object] = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 110,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "axes.titlesize": 11,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}


def use_book_style() -> None:
    """Apply :data:`STYLE` to matplotlib's global rcParams."""
    matplotlib.rcParams.update(STYLE)


def new_figure(ncols: int = 1, *, width: float | None = None, height: float = 3.6) -> tuple[Figure, np.ndarray]:
    """A figure with ``ncols`` side-by-side axes in the book's style; returns ``(fig, axes)``."""
    if not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    use_book_style()
    width = 4.2 * ncols if width is None else width
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False, layout="constrained")
    return fig, axes[0]


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (the exponent of a power law y ~ x^slope)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"x and y must be 1-d of equal length >= 2, got shapes {x.shape} and {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0) or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be positive and finite for a log-log fit")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def plot_norm_profile(profile, *, step_for_spread: int | None = None) -> Figure:
    """Chapter 1: mean |h^(l)| along the sequence per width, and the spread against width.

    ``profile`` is an :class:`rnnlib.initialization.NormProfile`. The right
    panel shows the standard deviation over networks at step ``step_for_spread``
    (default: the last step before the end token) against m, on log-log axes.
    """
    widths, mean, std, predicted = profile.widths, profile.mean, profile.std, profile.predicted
    L = mean.shape[1]
    step = L - 2 if step_for_spread is None else step_for_spread
    fig, (ax0, ax1) = new_figure(2)
    steps = np.arange(1, L + 1)
    for i, m in enumerate(widths):
        ax0.plot(steps, mean[i], marker="o", ms=3, label=f"m = {m}")
        ax0.fill_between(steps, mean[i] - std[i], mean[i] + std[i], alpha=0.12)
    ax0.plot(steps, predicted, "k--", lw=1.2, label=r"$\sqrt{\sum_{j\leq l}\|x^{(j)}\|^2}$")
    ax0.set_xlabel("step $l$")
    ax0.set_ylabel(r"$\|h^{(l)}\|$ (mean $\pm$ sd over networks)")
    ax0.legend(fontsize=8)
    spread = std[:, step]
    ax1.loglog(widths, spread, "o-", label=f"step $l = {step + 1}$")
    slope = loglog_slope(widths, spread)
    ax1.loglog(widths, spread[0] * (widths / widths[0]) ** -0.5, "k:", lw=1.2, label=r"$\propto m^{-1/2}$")
    ax1.set_xticks(widths, [str(m) for m in widths], minor=False)
    ax1.set_xticks([], minor=True)
    ax1.set_xlabel("width $m$")
    ax1.set_ylabel(r"sd of $\|h^{(l)}\|$ over networks")
    ax1.set_title(f"fitted slope {slope:.2f}")
    ax1.legend()
    return fig


def plot_sequence_norms(norms: np.ndarray, *, title: str = "") -> Figure:
    """Chapter 1 explorer: |h^(l)| against l, one thin line per sequence, with the mean in black.

    ``norms`` has shape (batch, L), e.g. from :func:`rnnlib.initialization.sequence_norms`.
    """
    norms = np.asarray(norms, dtype=float)
    if norms.ndim != 2:
        raise ValueError(f"norms must have shape (batch, L), got {norms.shape}")
    fig, (ax,) = new_figure(1, width=6.0)
    steps = np.arange(1, norms.shape[1] + 1)
    ax.plot(steps, norms.T, color="tab:blue", alpha=0.25, lw=0.8)
    ax.plot(steps, norms.mean(axis=0), "k-", lw=2, label="mean over sequences")
    ax.axhline(1.0, color="gray", ls=":", lw=1)
    ax.set_xlabel("step $l$")
    ax.set_ylabel(r"$\|h^{(l)}\|$")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend()
    return fig


def plot_flip_fraction(eps_values: Sequence[float], flips: Sequence[float], *, label: str | None = None) -> Figure:
    """Chapter 1: fraction of flipped activation patterns against eps_x (log-log)."""
    eps_values = np.asarray(eps_values, dtype=float)
    flips = np.asarray(flips, dtype=float)
    fig, (ax,) = new_figure(1, width=5.0)
    ax.loglog(eps_values, flips, "o-", label=label or "measured")
    ax.loglog(eps_values, flips[0] * eps_values / eps_values[0], "k:", lw=1.2, label=r"$\propto \varepsilon_x$")
    ax.set_xlabel(r"$\varepsilon_x$")
    ax.set_ylabel("fraction of flipped $D^{(l)}$ entries")
    ax.legend()
    return fig
