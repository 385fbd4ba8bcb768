"""Figures of chapter 9 (truncation for inference); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from .._validation import NONNEGATIVE, Instance, Ints, Str, validate_params
from ._style import (
    _same_length,
    _table,
    _values,
    legend_outside,
    new_figure,
)

__all__ = ["plot_truncation_errors", "plot_truncation_over_time"]


@validate_params(
    title=Str(), errors=Instance(Mapping), bounds=Instance(Mapping), ks=Ints(1)
)
def plot_truncation_errors(
    ks: Sequence[int],
    errors: dict[str, np.ndarray],
    bounds: dict[str, np.ndarray] | None = None,
    *,
    title: str = "",
) -> Figure:
    """Chapter 9: measured ``max_t ||s_t - s^k_t||`` against k (log scale), with the bound dashed."""
    ks = _values(ks, "ks", ndim=1)
    _table(errors, "errors")
    for label, err in errors.items():
        _same_length(
            _values(err, f"errors[{label!r}]", ndim=1),
            ks.size,
            f"errors[{label!r}]",
            "k",
        )
    fig, (ax,) = new_figure(1, width=5.8)
    for label, err in errors.items():
        line = ax.semilogy(
            ks,
            np.maximum(np.asarray(err, dtype=float), 1e-17),
            "o-",
            ms=3,
            label=label,
        )[0]
        if bounds and label in bounds:
            ax.semilogy(
                ks,
                bounds[label],
                "--",
                lw=1.2,
                color=line.get_color(),
            )
    if bounds:
        ax.plot(
            [],
            [],
            "k--",
            lw=1.2,
            label=r"bound $\lambda^k L B/(1-\lambda)$",
        )
    ax.set_xlabel("truncation length $k$")
    ax.set_ylabel(r"$\max_t \|s_t - s^k_t\|_2$")
    if title:
        ax.set_title(title)
    legend_outside(ax, fontsize=8)
    return fig


@validate_params(title=Str(), bound=NONNEGATIVE)
def plot_truncation_over_time(
    errors: np.ndarray, bound: float | None, *, title: str = ""
) -> Figure:
    """Chapter 9 explorer: ``||s_t - s^k_t||`` along the sequence for one k, with the bound as a dashed line."""
    errors = _values(errors, "errors", ndim=1)
    fig, (ax,) = new_figure(1, width=5.8)
    t = np.arange(1, errors.size + 1)
    ax.semilogy(
        t,
        np.maximum(errors, 1e-17),
        label=r"measured $\|s_t - s^k_t\|_2$",
    )
    if bound is not None:
        ax.axhline(
            bound,
            color="k",
            ls="--",
            lw=1.2,
            label=r"bound $\lambda^k L B/(1-\lambda)$",
        )
    ax.set_xlabel("step $t$")
    ax.set_ylabel("truncation error")
    ax.set_ylim(bottom=1e-17)
    if title:
        ax.set_title(title)
    legend_outside(ax)
    return fig
