"""The figure helpers of rnnlib.plotting._style: legends off the data."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from rnnlib.plotting._style import (  # noqa: E402
    _legend_overlaps,
    legend_outside,
    new_figure,
)


def _lines(ax):
    x = np.linspace(1, 10, 50)
    for k in range(4):
        ax.plot(x, x + k, label=f"a line with a long label {k}")
    ax.set_xlabel("width $m$")


def test_a_legend_over_the_lines_is_found():
    fig, (ax,) = new_figure(1)
    _lines(ax)
    ax.legend(loc="center")
    assert _legend_overlaps(fig)


def test_legend_outside_clears_the_data_and_the_x_label():
    for ncols in (1, 2, 3):
        fig, axes = new_figure(ncols)
        for ax in axes:
            _lines(ax)
            legend_outside(ax, fontsize=8)
        assert _legend_overlaps(fig) == []
        for ax in axes:
            # the columns fit the width of the axes
            fig.canvas.draw()
            width = ax.get_legend().get_window_extent().width
            assert width <= 1.05 * ax.get_window_extent().width


def test_legend_outside_without_labels_draws_no_legend():
    fig, (ax,) = new_figure(1)
    ax.plot([0, 1], [0, 1])
    legend_outside(ax)
    assert ax.get_legend() is None
