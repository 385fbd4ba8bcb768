"""Thin ``ipywidgets.interact`` wrappers over pure rnnlib functions.

An explorer is a pure function that returns a figure, wrapped here with
sliders that recompute on release (``continuous_update=False``, which spares
the CPU). A line under the sliders says "computing…" while a figure is being
redrawn and, after a redraw slower than :data:`SLOW_S`, how long it took (so a
reader knows a slow setting from a stuck kernel). In the static book the explorer
cell is followed by a plain call at the default values, so the page and the PDF
show a figure.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import matplotlib.pyplot as plt

from ._validation import (
    ANY_INT,
    ANY_REAL,
    POSITIVE,
    Function,
    Int,
    Str,
    validate_params,
)

__all__ = [
    "explore",
    "int_slider",
    "float_slider",
    "log_slider",
    "SLOW_S",
]

#: A redraw slower than this (seconds) reports its time under the sliders.
SLOW_S = 1.0


def _check_range(
    value: float,
    low: float,
    high: float,
    names: tuple[str, str, str],
) -> None:
    """ipywidgets would clamp a value outside [min, max] silently: refuse it instead."""
    if not low < high:
        raise ValueError(f"{names[1]} must be < {names[2]}, got {low} and {high}")
    if not low <= value <= high:
        raise ValueError(
            f"{names[0]} must lie in [{names[1]}, {names[2]}] = [{low}, {high}], got {value}"
        )


@validate_params(
    value=ANY_INT, min=ANY_INT, max=ANY_INT, step=Int(1), description=Str()
)
def int_slider(
    value: int,
    min: int,
    max: int,
    step: int = 1,
    description: str = "",
):
    """An ``IntSlider`` that updates on release."""
    import ipywidgets as w

    _check_range(value, min, max, ("value", "min", "max"))

    return w.IntSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=description,
        continuous_update=False,
    )


@validate_params(
    value=ANY_REAL, min=ANY_REAL, max=ANY_REAL, step=POSITIVE, description=Str()
)
def float_slider(
    value: float,
    min: float,
    max: float,
    step: float,
    description: str = "",
):
    """A ``FloatSlider`` that updates on release."""
    import ipywidgets as w

    _check_range(value, min, max, ("value", "min", "max"))

    return w.FloatSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=description,
        continuous_update=False,
    )


@validate_params(
    value=POSITIVE,
    min_exp=ANY_REAL,
    max_exp=ANY_REAL,
    step=POSITIVE,
    description=Str(),
)
def log_slider(
    value: float,
    min_exp: float,
    max_exp: float,
    step: float = 0.25,
    description: str = "",
):
    """A ``FloatLogSlider`` (base 10) that updates on release."""
    import ipywidgets as w

    _check_range(
        value,
        10.0**min_exp,
        10.0**max_exp,
        ("value", "10**min_exp", "10**max_exp"),
    )

    return w.FloatLogSlider(
        value=value,
        base=10,
        min=min_exp,
        max=max_exp,
        step=step,
        description=description,
        continuous_update=False,
    )


@validate_params(figure_fn=Function())
def explore(figure_fn: Callable[..., object], **sliders):
    """Wrap ``figure_fn(**values)`` (which returns a matplotlib figure) in sliders.

    Each keyword is a slider built with :func:`int_slider`, :func:`float_slider`
    or :func:`log_slider`. Returns the ``ipywidgets.interactive`` container (display
    it as the last expression of a cell), with a status line ("computing…" during a
    redraw) and ``.timings``, the seconds of each redraw (the first at the defaults).
    """
    import ipywidgets as w

    if not callable(figure_fn):
        raise TypeError(f"figure_fn must be callable, got {type(figure_fn).__name__}")
    if not sliders:
        raise ValueError("sliders: explore needs at least one slider keyword argument")

    status = w.HTML(value="")
    timings: list[float] = []

    def show(**values):
        status.value = "<i>computing…</i>"
        start = time.perf_counter()
        try:
            fig = figure_fn(**values)
            plt.show()
            plt.close(fig)
        finally:
            elapsed = time.perf_counter() - start
            timings.append(elapsed)
            status.value = (
                f"<i>redrawn in {elapsed:.1f} s</i>" if elapsed > SLOW_S else ""
            )

    ui = w.interactive(show, **sliders)
    # the status line sits between the sliders and the figure
    ui.children = (*ui.children[:-1], status, ui.children[-1])
    ui.status = status
    ui.timings = timings  # seconds of each redraw, the first at the defaults
    return ui
