"""Figures of chapter 11 (stable and unstable models on real data); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from .._validation import (
    ANY_REAL,
    NONNEGATIVE,
    PARAMS,
    Instance,
    Ints,
    Seq,
    Str,
    check_real,
    validate_params,
)
from ._style import _same_length, _table, _values, new_figure

__all__ = [
    "plot_truncated_nll",
    "plot_local_contraction",
    "plot_validation_curves",
    "plot_price_of_stability",
]


@validate_params(
    ylabel=Str(),
    curves=Instance(Mapping),
    full=Instance(Mapping),
    baselines=Instance(Mapping),
    ks=Ints(1),
)
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


@validate_params(norms=Instance(Mapping), worst_case=Instance(Mapping))
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
    fig, first = new_figure(1, width=3.4 * cols + 0.4, height=2.9 * rows)
    for ax in np.atleast_1d(first):
        ax.remove()
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.remove()
    for ax, (label, values) in zip(axes, norms.items()):
        values = _values(values, f"norms[{label!r}]", ndim=1)
        ax.hist(values, bins=40, color="C0", alpha=0.75)
        ax.axvline(1.0, color="k", ls=":", lw=1.2)
        title = f"{label}\n{np.mean(values < 1):.0%} of steps contract"
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


@validate_params(ylabel=Str(), curves=Instance(Mapping), best=Instance(Mapping))
def plot_validation_curves(
    curves: dict[str, tuple[Sequence[int], Sequence[float]]],
    best: dict[str, int],
    *,
    ylabel: str = "validation NLL per frame (nats)",
) -> Figure:
    """Chapter 11: validation metric against the training step, one line per model, its best step marked.

    ``curves`` maps a label to ``(steps, values)``; ``best`` the same labels to
    the step kept (the validation optimum), drawn as a dot. Patience-based
    stopping shows as each line ending some evaluations after its dot.
    """
    _table(curves, "curves")
    fig, (ax,) = new_figure(1, width=6.2)
    for label, pair in curves.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"curves[{label!r}] must be a pair (steps, values)")
        steps = _values(pair[0], f"curves[{label!r}] steps", ndim=1)
        values = _values(pair[1], f"curves[{label!r}] values", ndim=1)
        _same_length(values, steps.size, f"curves[{label!r}]", "steps")
        line = ax.plot(steps, values, "-", lw=1.2, label=label)[0]
        if label in best:
            at = int(np.argmin(np.abs(steps - best[label])))
            ax.plot(
                steps[at],
                values[at],
                "o",
                ms=5,
                color=line.get_color(),
            )
    ax.set_xlabel("Adam step")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig


@validate_params(
    f_max=Seq(PARAMS["f_max"]),
    lam=Seq(PARAMS["lam"]),
    reference=Instance(Mapping),
    test=Seq(ANY_REAL, "losses"),
    spread=Seq(NONNEGATIVE, "spreads"),
)
def plot_price_of_stability(
    f_max: Sequence[float],
    test: Sequence[float],
    spread: Sequence[float],
    lam: Sequence[float],
    reference: dict[str, float] | None = None,
) -> Figure:
    """Chapter 11: test NLL of the certified LSTM against its forget-gate bound, two panels.

    Left: against the certified ``lambda_inf`` (``lam``); right: against the
    memory time constant ``1 / (1 - f_max)`` (log scale). ``test`` and ``spread``
    are the mean and the standard deviation over seeds (error bars);
    ``reference`` maps names (e.g. the unconstrained LSTM) to horizontal lines.
    """
    f = _values(f_max, "f_max", ndim=1)
    y = _values(test, "test", ndim=1)
    e = _values(spread, "spread", ndim=1)
    lam = _values(lam, "lam", ndim=1)
    for name, v in (("test", y), ("spread", e), ("lam", lam)):
        _same_length(v, f.size, name, "f_max")
    fig, (left, right) = new_figure(2, width=6.6)
    for ax, x, xlabel in (
        (left, lam, r"certified $\lambda_\infty$"),
        (
            right,
            1 / (1 - f),
            r"memory time $1/(1-\bar f)$ (steps)",
        ),
    ):
        ax.errorbar(
            x,
            y,
            yerr=e,
            fmt="o-",
            ms=4,
            capsize=3,
            label="certified LSTM",
        )
        for i, (name, value) in enumerate((reference or {}).items()):
            ax.axhline(
                check_real(value, f"reference[{name!r}]"),
                color="0.5",
                ls=("--", "-.")[i % 2],
                lw=1.0,
                label=name,
            )
        ax.set_xlabel(xlabel)
    right.set_xscale("log")
    left.set_ylabel("test NLL per frame (nats)")
    right.legend(fontsize=7)
    return fig
