"""Figures of chapter 10 (truncation for training); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from .._validation import Instance, Ints, check_int, validate_params
from ._style import (
    _same_length,
    _table,
    _values,
    legend_outside,
    new_figure,
)

__all__ = [
    "plot_gradient_difference",
    "plot_weight_distance",
    "plot_k_star",
    "plot_scalar_smoothness",
]


@validate_params(gaps=Instance(Mapping), lams=Instance(Mapping), ks=Ints(1))
def plot_gradient_difference(
    ks: Sequence[int],
    gaps: dict[str, np.ndarray],
    lams: dict[str, float],
) -> Figure:
    """Chapter 10: ``||grad p_T - grad p^k_T||`` against k, with the envelope ``c k lambda^k`` (dashed)."""
    ks = _values(ks, "ks", ndim=1)
    _table(gaps, "gaps")
    for label, gap in gaps.items():
        _same_length(
            _values(gap, f"gaps[{label!r}]", ndim=1),
            ks.size,
            f"gaps[{label!r}]",
            "k",
        )
        if label not in lams:
            raise ValueError(f"lams has no contraction constant for {label!r}")
    fig, (ax,) = new_figure(1, width=5.8)
    for label, gap in gaps.items():
        gap = np.asarray(gap, dtype=float)
        line = ax.semilogy(ks, np.maximum(gap, 1e-300), "o-", ms=3, label=label)[0]
        envelope = ks * lams[label] ** ks
        ax.semilogy(
            ks,
            envelope * np.max(gap / envelope),
            "--",
            lw=1.0,
            color=line.get_color(),
        )
    ax.set_xlabel("truncation length $k$")
    ax.set_ylabel(r"$\|\nabla p_T - \nabla p^k_T\|_2$")
    legend_outside(ax, fontsize=8)
    return fig


@validate_params(
    distances=Instance(Mapping), step_lengths=Instance(Mapping), ks=Ints(1)
)
def plot_weight_distance(
    ks: Sequence[int],
    distances: dict[str, np.ndarray],
    *,
    k_index: int = 0,
    step_lengths: dict[str, np.ndarray] | None = None,
) -> Figure:
    """Chapter 10: ``||w_N - w^k_N||`` against k at the last step (left) and against N for one k (right).

    ``distances`` maps a schedule label to an array (len(ks), N + 1). With
    ``step_lengths`` (label -> the N partial sums ``sum_{i<=N} alpha_i``), the right
    panel is drawn against the total step length instead of N, so that schedules
    are compared at equal ``sum alpha_i``.
    """
    ks = np.asarray(_values(ks, "ks", ndim=1), dtype=np.asarray(ks).dtype)
    k_index = check_int(k_index, "k_index", minimum=-ks.size, maximum=ks.size - 1)
    _table(distances, "distances")
    for label, dist in distances.items():
        _same_length(
            _values(dist, f"distances[{label!r}]", ndim=2),
            ks.size,
            f"distances[{label!r}]",
            "k",
        )
    if step_lengths is not None:
        _table(step_lengths, "step_lengths")
        for label, dist in distances.items():
            if label not in step_lengths:
                raise ValueError(f"step_lengths has no entry for {label!r}")
            n_steps = np.asarray(dist).shape[1] - 1
            _same_length(
                _values(
                    step_lengths[label],
                    f"step_lengths[{label!r}]",
                    ndim=1,
                ),
                n_steps,
                f"step_lengths[{label!r}]",
                "step",
            )
    fig, (ax0, ax1) = new_figure(2)
    for label, dist in distances.items():
        dist = np.asarray(dist, dtype=float)
        ax0.semilogy(ks, dist[:, -1], "o-", ms=3, label=label)
        steps = np.arange(1, dist.shape[1])
        x = (
            steps
            if step_lengths is None
            else np.asarray(step_lengths[label], dtype=float)
        )
        ax1.loglog(x, dist[k_index, 1:], label=label)
    ax0.set_xlabel("truncation length $k$")
    ax0.set_ylabel(r"$\|w_N - w^k_N\|_2$ at the last step $N$")
    legend_outside(ax0)
    ax1.set_xlabel(
        "gradient step $N$"
        if step_lengths is None
        else r"total step length $\sum_{i\leq N}\alpha_i$"
    )
    ax1.set_ylabel(rf"$\|w_N - w^k_N\|_2$, $k = {ks[k_index]}$")
    legend_outside(ax1)
    return fig


def _seed_rows(table: dict[str, np.ndarray], name: str, n_cols: int, what: str) -> None:
    _table(table, name)
    for label, rows in table.items():
        rows = _values(rows, f"{name}[{label!r}]", ndim=2)
        _same_length(rows.T, n_cols, f"{name}[{label!r}]", what)


@validate_params(k_star=Instance(Mapping), Ns=Ints(1))
def plot_k_star(Ns: Sequence[int], k_star: dict[str, np.ndarray]) -> Figure:
    """Chapter 10: the smallest k with ``||w_N - w^k_N|| <= eps`` against N (log axis), per schedule.

    ``k_star`` maps a schedule label to an array (seeds, len(Ns)); each seed is a thin
    line, the mean over seeds a thick one. A straight line on this plot is ``k* = a + b ln N``.
    """
    Ns = _values(Ns, "Ns", ndim=1)
    _seed_rows(k_star, "k_star", Ns.size, "N")
    fig, (ax,) = new_figure(1, width=5.8)
    for label, rows in k_star.items():
        rows = np.asarray(rows, dtype=float)
        line = ax.semilogx(Ns, rows.mean(axis=0), "o-", ms=3, lw=1.8, label=label)[0]
        for r in rows:
            ax.semilogx(
                Ns,
                r,
                "-",
                lw=0.6,
                alpha=0.5,
                color=line.get_color(),
            )
    ax.set_xticks(Ns, [f"{v:g}" for v in Ns])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("gradient steps $N$ (log scale)")
    ax.set_ylabel(r"smallest $k$ with $\|w_N - w^k_N\|_2 \leq \varepsilon$")
    legend_outside(ax, fontsize=8)
    return fig


@validate_params(curvature=Instance(Mapping), Ts=Ints(1))
def plot_scalar_smoothness(
    Ts: Sequence[int], curvature: dict[str, np.ndarray]
) -> Figure:
    """Chapter 10: ``|p_T''(w)|`` of the scalar linear RNN against T (log axis), one line per seed.

    ``curvature`` maps a label (the value of w) to an array (seeds, len(Ts)).
    """
    Ts = _values(Ts, "Ts", ndim=1)
    _seed_rows(curvature, "curvature", Ts.size, "T")
    fig, (ax,) = new_figure(1, width=5.8)
    for label, rows in curvature.items():
        rows = np.asarray(rows, dtype=float)
        line = ax.semilogy(Ts, rows[0], "o-", ms=3, label=label)[0]
        for r in rows[1:]:
            ax.semilogy(Ts, r, "o-", ms=2, lw=0.6, color=line.get_color())
    ax.set_xlabel("sequence length $T$")
    ax.set_ylabel(r"smoothness $|p_T''(w)|$")
    legend_outside(ax, fontsize=8)
    return fig
