"""The book's one figure style and the helpers every chapter's figures share.

Every function takes numbers (the result of an rnnlib measurement) and returns
a ``matplotlib.figure.Figure``; none of them computes anything of its own, so
the figures in the book and in the explorers (:mod:`rnnlib.widgets`) are the
same pictures of the same measurements.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .._validation import ANY_REAL, POSITIVE, Int, Seq, validate_params

__all__ = [
    "STYLE",
    "use_book_style",
    "BookFigure",
    "new_figure",
    "loglog_slope",
    "width_ticks",
]

#: Width of the book's text column at 1280 px (pixels); a figure is drawn for it.
COLUMN_PX = 676
#: Resolution of the book's figures (dots per inch): a figure ``COLUMN_WIDTH`` wide is
#: shown at its natural size, so one point of type is ``DPI / 72`` pixels on the page.
DPI = 110
#: The margin ``bbox_inches="tight"`` adds on each side of a saved figure (inches).
PAD_INCHES = 0.1
#: Width of a figure that fills the column, in inches: its PNG, margins included, is
#: ``COLUMN_PX`` wide.
COLUMN_WIDTH = COLUMN_PX / DPI - 2 * PAD_INCHES
#: Smallest type on the page (pixels) that ``booktools.browser_check`` accepts.
MIN_TEXT_PX = 11.0
#: Smallest font size of a figure (points): 8 pt at 110 dpi is 12.2 px at natural size.
MIN_FONT_PT = 8.0
#: Panels side by side at most; more are stacked in rows of two.
MAX_PANELS_PER_ROW = 2
#: The PNG text chunk in which a figure records its smallest font size (points), which
#: ``booktools.browser_check`` reads back to measure the type on the page.
SMALLEST_FONT_KEY = "rnnlib:smallest-font-pt"

#: rcParams of the book: white background (readable in dark mode), readable fonts.
STYLE: dict[str, object] = {
    "figure.figsize": (COLUMN_WIDTH, 3.4),
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "savefig.pad_inches": PAD_INCHES,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}


def smallest_font_pt(fig: Figure) -> float:
    """The smallest font size (points) of the visible, non-empty text of ``fig``."""
    from matplotlib.text import Text

    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
    ]
    return float(min(sizes)) if sizes else float(STYLE["font.size"])


def _raise_small_fonts(fig: Figure) -> None:
    """Fonts below :data:`MIN_FONT_PT` (a ``fontsize=7`` of a figure function) are raised to it."""
    from matplotlib.text import Text

    for t in fig.findobj(Text):
        if t.get_fontsize() < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)


def figure_png(fig: Figure) -> bytes:
    """The PNG of ``fig`` as the book shows it, its smallest font size in a text chunk.

    Registered for matplotlib figures with IPython by :func:`use_book_style`, so every
    figure of an executed chapter carries :data:`SMALLEST_FONT_KEY` for the browser check.
    """
    import io

    _raise_small_fonts(fig)
    report = os.environ.get("RNNLIB_LEGEND_REPORT")
    if report:
        with open(report, "a") as out:
            for line in _legend_overlaps(fig):
                out.write(f"{fig.number if hasattr(fig, 'number') else '?'}: {line}\n")
    buf = io.BytesIO()
    fig.savefig(
        buf,
        format="png",
        dpi=DPI,
        bbox_inches="tight",
        metadata={SMALLEST_FONT_KEY: f"{smallest_font_pt(fig):.2f}"},
    )
    return buf.getvalue()


def _register_png_formatter() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return
    shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


def use_book_style() -> None:
    """Apply :data:`STYLE` to matplotlib's global rcParams (and, in IPython, :func:`figure_png`)."""
    matplotlib.rcParams.update(STYLE)
    _register_png_formatter()


class BookFigure(NamedTuple):
    """:func:`new_figure` results: the figure and its axes."""

    #: the figure, at most the column wide
    fig: Figure
    #: a flat array of ``ncols`` axes
    axes: np.ndarray


@validate_params(ncols=Int(1), width=POSITIVE, height=POSITIVE)
def new_figure(
    ncols: int = 1,
    *,
    width: float | None = None,
    height: float = 3.4,
) -> BookFigure:
    """``ncols`` axes in the book's style, drawn for the text column; returns ``(fig, axes)``.

    The figure is never wider than :data:`COLUMN_WIDTH` (a wider ``width`` is taken
    as the column), so its type is shown at natural size: at most two panels side by
    side, more stacked in rows of two (an odd last panel spans the row). ``height``
    is the height of one row; ``axes`` is a flat array of ``ncols`` axes.
    """
    use_book_style()
    per_row = min(ncols, MAX_PANELS_PER_ROW)
    rows = -(-ncols // per_row)
    if width is None:
        width = COLUMN_WIDTH if per_row > 1 else 0.85 * COLUMN_WIDTH
    width = min(float(width), COLUMN_WIDTH)
    row_height = height if rows == 1 else 0.8 * height
    fig = plt.figure(figsize=(width, row_height * rows), layout="constrained")
    mosaic = [
        [min(r * per_row + c, ncols - 1) for c in range(per_row)] for r in range(rows)
    ]
    by_index = fig.subplot_mosaic(mosaic)
    return BookFigure(fig, np.array([by_index[i] for i in range(ncols)]))


def legend_outside(ax, **kwargs) -> None:
    """The legend of ``ax`` below its axes, under the tick labels and the x label, off the data.

    Its entries go in as many columns (at most three) as fit the width of the axes
    (or ``ncols``). It is placed a fixed distance in points below the axes, so it
    stays clear of the x label however ``constrained`` layout resizes the axes, and the
    layout makes room for it. Other keywords go to ``ax.legend``.
    """
    from matplotlib.transforms import offset_copy

    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    # depth of the tick labels and x label under the axes, in points
    axes_box = ax.get_window_extent(renderer)
    below = axes_box.y0 - ax.get_tightbbox(renderer).y0
    offset = max(below, 0.0) * 72 / fig.dpi + 2
    where = offset_copy(ax.transAxes, fig=fig, y=-offset, units="points")
    ncols = kwargs.pop("ncols", None)

    def place(n: int):
        return ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            bbox_transform=where,
            ncols=n,
            **kwargs,
        )

    if ncols is not None:
        place(ncols)
        return
    for n in range(min(len(handles), 3), 0, -1):
        legend = place(n)
        if n == 1 or (
            legend.get_window_extent(renderer).width <= 1.05 * axes_box.width
        ):
            break


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
        raise TypeError(f"{name} must be numbers, got {type(values).__name__}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if (np.isnan(arr) if allow_inf else ~np.isfinite(arr)).any():
        kind = "NaN" if allow_inf else "NaN or infinite"
        raise ValueError(
            f"{name} contains {kind} entries: refusing to draw a figure with missing values"
        )
    return arr


def _same_length(values: np.ndarray, size: int, name: str, other: str) -> None:
    """``values`` has ``size`` rows, one per ``other`` (a figure's series against its x values)."""
    if values.shape[0] != size:
        raise ValueError(
            f"{name} must have one entry per {other} ({size}), got shape {values.shape}"
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


def _record(obj: object, name: str, fields: tuple[str, ...], kind: str) -> None:
    missing = [f for f in fields if not hasattr(obj, f)]
    if missing:
        raise TypeError(
            f"{name} must be {kind} (fields {', '.join(fields)}), got {type(obj).__name__}"
        )


def seeds_and_mean(ax, x, values, label, marker="o", logx=True, logy=True):
    """One line (the mean over seeds of ``values`` (seeds, len(x))) with each seed's points, in the line's colour (chapters 5, 6); returns the mean."""
    mean = values.mean(axis=0)
    line = ax.plot(x, mean, marker + "-", ms=4, label=label)[0]
    for row in values:
        ax.plot(
            x,
            row,
            marker,
            ms=3,
            alpha=0.35,
            color=line.get_color(),
        )
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    return mean


def width_ticks(ax, widths: Sequence[float]) -> None:
    """Label a log-scaled width axis at the swept widths ``m`` only (chapters 4, 5): ticks ``128, 256, ...``, no minor labels."""
    ax.set_xticks(widths, labels=[f"{int(w)}" for w in widths])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


@validate_params(x=Seq(ANY_REAL, "values"), y=Seq(ANY_REAL, "values"))
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
        raise ValueError("x and y must be positive and finite for a log-log fit")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _inside(box, xy: np.ndarray) -> np.ndarray:
    """Which of the display points ``xy`` (n x 2) lie in the bounding box ``box``."""
    return (
        (xy[:, 0] >= box.x0)
        & (xy[:, 0] <= box.x1)
        & (xy[:, 1] >= box.y0)
        & (xy[:, 1] <= box.y1)
    )


def _legend_overlaps(fig: Figure) -> list[str]:
    """Legends of ``fig`` drawn over its data: one line per legend that covers a drawn point.

    A line is sampled densely along its segments (in display coordinates), a bar or
    histogram patch and a scatter point count by their extent. Used to find figures
    whose legend hides data (set ``RNNLIB_LEGEND_REPORT`` to a file path while a
    chapter runs: :func:`figure_png` appends each such legend to it).
    """
    from matplotlib.collections import Collection
    from matplotlib.patches import Rectangle

    fig.canvas.draw()
    found = []
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is None or not leg.get_visible():
            continue
        box = leg.get_window_extent().padded(-2)
        axbox = ax.get_window_extent()
        if not box.overlaps(axbox):
            continue
        hits = 0
        for line in ax.get_lines():
            if not line.get_visible():
                continue
            xy = line.get_transform().transform(
                np.column_stack(line.get_data()).astype(float)
            )
            xy = xy[np.all(np.isfinite(xy), axis=1)]
            if len(xy) == 0:
                continue
            pts = [xy]
            for a, b in zip(xy[:-1], xy[1:]):
                if line.get_linestyle() in ("None", ""):
                    break
                t = np.linspace(0, 1, 40)[:, None]
                pts.append(a + t * (b - a))
            pts = np.concatenate(pts)
            hits += int((_inside(box, pts) & _inside(axbox, pts)).sum())
        for patch in ax.patches:
            if isinstance(patch, Rectangle) and patch.get_visible():
                ext = patch.get_window_extent()
                if ext.width > 0 and ext.height > 0 and ext.overlaps(box):
                    hits += 1
        for coll in ax.collections:
            if not isinstance(coll, Collection):
                continue
            offs = coll.get_offsets()
            if len(offs):
                xy = coll.get_offset_transform().transform(offs)
                hits += int(_inside(box, xy).sum())
        texts = [ax.xaxis.label, *ax.get_xticklabels()]
        for t in texts:
            if t.get_visible() and t.get_text().strip():
                if t.get_window_extent().overlaps(box):
                    hits += 1
        if hits:
            name = " / ".join(
                t
                for t in (
                    ax.get_title(),
                    ax.get_xlabel(),
                    ax.get_ylabel(),
                )
                if t
            )
            found.append(f"{hits} points under the legend of '{name}'")
    return found
