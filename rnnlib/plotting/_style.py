"""The book's one figure style and the helpers every chapter's figures share.

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

__all__ = ["STYLE", "use_book_style", "new_figure", "loglog_slope"]

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


def new_figure(
    ncols: int = 1,
    *,
    width: float | None = None,
    height: float = 3.6,
) -> tuple[Figure, np.ndarray]:
    """A figure with ``ncols`` side-by-side axes in the book's style; returns ``(fig, axes)``."""
    if isinstance(ncols, bool) or not isinstance(ncols, int):
        raise TypeError(
            f"ncols must be a positive integer, got {ncols!r}"
        )
    if ncols < 1:
        raise ValueError(
            f"ncols must be a positive integer, got {ncols!r}"
        )
    use_book_style()
    width = 4.2 * ncols if width is None else width
    fig, axes = plt.subplots(
        1,
        ncols,
        figsize=(width, height),
        squeeze=False,
        layout="constrained",
    )
    return fig, axes[0]


def _values(
    values: object,
    name: str,
    *,
    ndim: int | None = None,
    allow_inf: bool = False,
) -> np.ndarray:
    """Numbers to draw, as a float array; refuses non-numbers, empty arrays and NaN.

    A NaN (or an inf, unless ``allow_inf``) is silently left out of a matplotlib line,
    so a figure would hide a failed measurement: refuse it instead.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be numbers, got {type(values).__name__}"
        ) from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(
            f"{name} must be {ndim}-dimensional, got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if (np.isnan(arr) if allow_inf else ~np.isfinite(arr)).any():
        kind = "NaN" if allow_inf else "NaN or infinite"
        raise ValueError(
            f"{name} contains {kind} entries: refusing to draw a figure with missing values"
        )
    return arr


def _same_length(
    values: np.ndarray, n: int, name: str, other: str
) -> None:
    if values.shape[0] != n:
        raise ValueError(
            f"{name} must have one entry per {other} ({n}), got shape {values.shape}"
        )


def _table(table: object, name: str) -> dict:
    """A non-empty mapping label -> values (one line per label)."""
    if not isinstance(table, dict):
        raise TypeError(
            f"{name} must be a dict label -> values, got {type(table).__name__}"
        )
    if not table:
        raise ValueError(f"{name} must contain at least one entry")
    return table


def _record(
    obj: object, name: str, fields: tuple[str, ...], kind: str
) -> None:
    missing = [f for f in fields if not hasattr(obj, f)]
    if missing:
        raise TypeError(
            f"{name} must be {kind} (fields {', '.join(fields)}), got {type(obj).__name__}"
        )


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (the exponent of a power law y ~ x^slope)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(
            f"x and y must be 1-d of equal length >= 2, got shapes {x.shape} and {y.shape}"
        )
    if (
        np.any(x <= 0)
        or np.any(y <= 0)
        or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)))
    ):
        raise ValueError(
            "x and y must be positive and finite for a log-log fit"
        )
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
