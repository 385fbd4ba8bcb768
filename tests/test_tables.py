"""rnnlib.plotting.html_table: the book's tables of measured numbers."""

from __future__ import annotations

import numpy as np

from rnnlib import plotting


def test_html_table_formats_numbers_and_escapes_text():
    t = plotting.html_table(
        ["phi", "value", "n"],
        [
            ["a<b", np.float64(0.123456), 3],
            ["tanh", float("inf"), 4],
        ],
        digits=2,
        caption="x & y",
    )
    html = t._repr_html_()
    assert "<caption>x &amp; y</caption>" in html
    assert "<td>a&lt;b</td><td>0.12</td><td>3</td>" in html
    assert "<td>\u221e</td>" in html
    lines = repr(t).splitlines()
    assert lines[0] == "x & y"
    assert lines[1].split() == ["phi", "value", "n"]
    assert lines[2].split() == ["a<b", "0.12", "3"]
    # aligned columns: every line of the table has the same width
    assert len({len(line) for line in lines[1:]}) == 1
