"""Figures of chapter 11 (stable and unstable models on real data); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from .._validation import check_real
from ._style import _same_length, _table, _values, new_figure

__all__ = ["plot_truncated_nll", "plot_local_contraction"]


def plot_truncated_nll(
    ks: Sequence[int],
    curves: dict[str, np.ndarray],
    full: dict[str, float],
    baselines: dict[str, float] | None = None,
    *,
    ylabel: str = "test NLL per frame (nats)",
) -> Figure:
    """Chapter 11: the test metric of each model truncated to its last k inputs, against k (log scale).

    ``curves`` maps a label to values (len(ks),); ``full`` the same labels to the
    full-context value, drawn as a dotted line in the colour of the curve;
    ``baselines`` maps names to horizontal grey lines.
    """
    ks = _values(ks, "ks", ndim=1)
    _table(curves, "curves")
    _table(full, "full")
    fig, (ax,) = new_figure(1, width=6.2)
    for label, values in curves.items():
        values = _values(values, f"curves[{label!r}]", ndim=1)
        _same_length(values, ks.size, f"curves[{label!r}]", "k")
        line = ax.plot(ks, values, "o-", ms=3, label=label)[0]
        if label in full:
            ax.axhline(
                check_real(full[label], f"full[{label!r}]"),
                color=line.get_color(),
                ls=":",
                lw=1.0,
            )
    for i, (name, value) in enumerate((baselines or {}).items()):
        ax.axhline(
            check_real(value, f"baselines[{name!r}]"),
            color="0.5",
            ls=("--", "-.")[i % 2],
            lw=1.0,
            label=name,
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("context $k$ (inputs the truncated model sees)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig


def plot_local_contraction(
    norms: dict[str, np.ndarray],
    worst_case: dict[str, float] | None = None,
) -> Figure:
    """Chapter 11: histograms of ``||d s_t / d s_{t-1}||_2`` along test data, one panel per model.

    A vertical dotted line at 1 (contraction) and, from ``worst_case``, a dashed line at
    the data-free constant (``||W||_2``) when it fits on the axis (else its value is in the title).
    """
    _table(norms, "norms")
    n = len(norms)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, first = new_figure(
        1, width=3.4 * cols + 0.4, height=2.9 * rows
    )
    for ax in np.atleast_1d(first):
        ax.remove()
    axes = np.atleast_1d(
        fig.subplots(rows, cols, squeeze=False).ravel()
    )
    for ax in axes[n:]:
        ax.remove()
    for ax, (label, values) in zip(axes, norms.items()):
        values = _values(values, f"norms[{label!r}]", ndim=1)
        ax.hist(values, bins=40, color="C0", alpha=0.75)
        ax.axvline(1.0, color="k", ls=":", lw=1.2)
        title = (
            f"{label}\n{np.mean(values < 1):.0%} of steps contract"
        )
        if worst_case and label in worst_case:
            w = check_real(
                worst_case[label],
                f"worst_case[{label!r}]",
                low=0.0,
            )
            hi = max(values.max(), 1.0) * 1.15
            if w <= 3 * hi:
                ax.axvline(w, color="C3", ls="--", lw=1.2)
            title += f"; worst case {w:.3g}"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(r"$\|\partial s_t/\partial s_{t-1}\|_2$")
    for ax in axes[:n:cols]:
        ax.set_ylabel("steps")
    return fig
