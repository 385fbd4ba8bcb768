"""rnnlib.plotting.html_table: the book's tables of measured numbers."""

from __future__ import annotations

import numpy as np
import torch

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
    assert '<td>a&lt;b</td><td class="num">0.12</td><td class="num">3</td>' in html
    assert '<td class="num">\u221e</td>' in html
    lines = repr(t).splitlines()
    assert lines[0] == "x & y"
    assert lines[1].split() == ["phi", "value", "n"]
    assert lines[2].split() == ["a<b", "0.12", "3"]
    # aligned columns: every line of the table has the same width
    assert len({len(line) for line in lines[1:]}) == 1


def test_integers_of_every_type_print_without_decimals():
    t = plotting.html_table(
        ["a", "b", "c", "d"],
        [[1181, np.int64(613), torch.tensor(7), 2.5]],
        digits=4,
    )
    assert t.rows[0] == ["1181", "613", "7", "2.5000"]
    # floats stay floats, even when integral
    assert plotting.html_table(["x"], [[16.0]], digits=2).rows[0] == ["16.00"]


def test_number_cells_are_marked_so_the_page_never_breaks_them():
    t = plotting.html_table(
        ["language", "n = 12", "what"],
        [
            ["dl1", 2048, "at most one 1"],
            ["x", -0.5, "∞ and more"],
        ],
    )
    html = t._repr_html_()
    assert '<td class="num">2048</td>' in html
    assert '<td class="num">-0.500</td>' in html
    assert "<td>at most one 1</td>" in html
    assert "<td>∞ and more</td>" in html
