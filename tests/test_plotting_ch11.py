"""Chapter 11's figures of the recorded run: validation curves and the price of stability."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from rnnlib import plotting  # noqa: E402


def test_validation_curves_mark_the_best_step():
    fig = plotting.plot_validation_curves(
        {
            "rnn unstable": ([50, 100, 150], [9.0, 8.7, 8.9]),
            "rnn stable": ([50, 100, 150], [9.1, 8.8, 8.6]),
        },
        {"rnn unstable": 100, "rnn stable": 150},
    )
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert len(lines) == 4  # two curves and two dots
    dots = [ln for ln in lines if ln.get_marker() == "o"]
    assert [tuple(d.get_xdata()) for d in dots] == [(100,), (150,)]
    assert ax.get_xlabel() == "Adam step"


def test_price_of_stability_has_both_axes():
    fig = plotting.plot_price_of_stability(
        [0.605, 0.9, 0.99],
        [8.40, 8.46, 8.48],
        [0.01, 0.01, 0.02],
        [0.996, 0.999, 0.9999],
        {"unconstrained LSTM": 8.55},
    )
    left, right = fig.axes[:2]
    assert right.get_xscale() == "log"
    assert "lambda" in left.get_xlabel()
    # the memory times 1 / (1 - f) on the right
    xs = right.lines[0].get_xdata()
    assert abs(xs[-1] - 100) < 1e-9
