"""The browser check's layout checks, each shown failing on a planted page.

Wrapped text outputs, figure text too small to read, elements clipped by their
box and empty gaps left by hidden widgets (``booktools.browser_check``); and the
figure style of ``rnnlib.plotting`` that the figure check measures.
"""

from __future__ import annotations

import shutil

import matplotlib
import pytest

from booktools import browser_check as browser
from rnnlib.plotting import _style

matplotlib.use("Agg")

CHROMIUM = shutil.which("chromium") and shutil.which("chromedriver")
STYLE = (
    "<style>body{margin:0} article.bd-article{width:676px;font:16px sans-serif}"
    " div.cell_output pre{white-space:pre-wrap;overflow-wrap:anywhere}"
    " img{max-width:100%} figure{margin:0}</style>"
)


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><title>{title}</title>{STYLE}"
        f"<article class='bd-article'><h1>{title}</h1>{body}</article>"
    )


def _small_figure_png() -> bytes:
    """A figure drawn 12 inches wide (three panels side by side): shown at 676 px."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), dpi=110)
    for ax in axes:
        ax.plot([1, 2, 3], label="a line")
        ax.legend(fontsize=8)
    data = _style.figure_png(fig)
    plt.close(fig)
    return data


def _book_figure_png() -> bytes:
    import matplotlib.pyplot as plt

    fig, axes = _style.new_figure(3)
    for ax in axes:
        ax.plot([1, 2, 3], label="a line")
        ax.legend(fontsize=7)  # raised to the style's smallest size
    data = _style.figure_png(fig)
    plt.close(fig)
    return data


def test_constants_agree_with_the_figure_style():
    assert browser.MIN_FIGURE_TEXT_PX == _style.MIN_TEXT_PX
    assert browser.SMALLEST_FONT_KEY == _style.SMALLEST_FONT_KEY
    # the style's smallest font at natural size is above the check's threshold
    assert _style.MIN_FONT_PT * _style.DPI / 72 >= _style.MIN_TEXT_PX


def test_book_figures_fit_the_column_and_record_their_font():
    data = _book_figure_png()
    text, dpi = browser.png_text_and_dpi(data)
    assert abs(dpi - _style.DPI) < 0.5
    assert float(text[_style.SMALLEST_FONT_KEY]) >= _style.MIN_FONT_PT
    import io

    from PIL import Image

    width = Image.open(io.BytesIO(data)).width
    assert width <= _style.COLUMN_PX + 2
    shown = min(width, _style.COLUMN_PX)
    assert browser.figure_text_px(data, width, shown) >= browser.MIN_FIGURE_TEXT_PX


def test_figure_text_px_is_points_times_dpi_times_scale():
    data = _small_figure_png()
    import io

    from PIL import Image

    width = Image.open(io.BytesIO(data)).width
    px = browser.figure_text_px(data, width, 676)
    assert px == pytest.approx(8 * 110 / 72 * 676 / width, rel=0.01)
    assert px < browser.MIN_FIGURE_TEXT_PX
    # not a matplotlib figure: not measured
    assert browser.figure_text_px(b"\x89PNG\r\n\x1a\n", 10, 10) is None


def test_layout_problems_name_each_defect():
    probe = {
        "wrapped": [
            {
                "scrollWidth": 900,
                "clientWidth": 676,
                "chars": 120,
                "longest": "n  m  loss",
            }
        ],
        "figures": [
            {
                "src": "fig.png",
                "natural": 1320,
                "shown": 676,
                "data": _small_figure_png(),
            }
        ],
        "clipped": [
            {
                "what": "table",
                "width": 839,
                "box": 676,
                "past": 163,
                "text": "ElmanRNN",
            }
        ],
        "gaps": [{"what": "div.cell_output", "height": 256}],
    }
    problems = browser.layout_problems(probe)
    assert problems[0].startswith("text output wraps")
    assert problems[1].startswith("figure text too small")
    assert problems[2].startswith("table clipped by its box: 839 px in 676 px")
    assert problems[3].startswith("empty gap: div.cell_output is 256 px tall")
    assert browser.layout_problems({}) == []


def test_text_problems_name_object_reprs_and_frozen_bars():
    text = (
        "Chapter 1\n<torch._C.Generator object at 0x7f3a2c1d9e10>\n"
        "widths:   0%|          | 0/5 [00:00<?, ?it/s]\n"
        "loss 0.5 | 3/4 of the seeds | 100% agree"
    )
    problems = browser.text_problems(text)
    assert len(problems) == 2
    assert "torch._C.Generator" in problems[0]
    assert "frozen" in problems[1] and "0/5" in problems[1]
    # ordinary prose with percentages, bars and fractions passes
    assert (
        browser.text_problems("loss 0.5 | 3/4 of the seeds | 100% agree; see <a> at 0x")
        == []
    )


@pytest.mark.skipif(not CHROMIUM, reason="needs chromium and chromedriver")
def test_browser_check_fails_a_planted_layout_page(tmp_path, capsys, monkeypatch):
    """Each planted defect fails, named; the page with the book's figure and a table that fits passes."""
    monkeypatch.setattr(browser, "ruff_line_length", lambda root=None: None)
    html = tmp_path / "html"
    html.mkdir()
    (html / "small.png").write_bytes(_small_figure_png())
    (html / "book.png").write_bytes(_book_figure_png())
    table = "<table><tr>{}</tr></table>".format(
        "".join(f"<td>ElmanRNN.width_{i}</td>" for i in range(3))
    )
    (html / "index.html").write_text(
        _page(
            "Good",
            "<div class='cell_output'><pre>n = 64  loss = 0.5</pre></div>"
            "<figure><img src='book.png'></figure>" + table,
        )
    )
    wide_row = "  ".join(f"col{i:02d}=0.123" for i in range(20))
    wide_table = (
        "<div style='overflow:hidden;width:676px'><table style='width:839px'><tr>"
        "<td>symbol</td><td>ElmanRNN.width</td></tr></table></div>"
    )
    (html / "broken.html").write_text(
        _page(
            "Broken",
            f"<div class='cell_output'><pre>{wide_row}</pre></div>"
            "<div class='cell_output'><img src='small.png'></div>"
            + wide_table
            + "<div class='cell_output'><div class='output'>"
            "<div style='height:256px'><div style='visibility:hidden'>bar</div></div>"
            "</div></div>"
            "<div class='cell_output'><pre>&lt;torch._C.Generator object at 0x7f3a2c1d9e10&gt;</pre></div>"
            "<div class='cell_output'><pre>runs:   0%|          | 0/12 [00:00&lt;?, ?it/s]</pre></div>"
            "<button class='btn search-button-field'>Search</button>"
            "<button class='btn search-button-field'>Search</button>",
        )
    )
    api = html / "chapters" / "api"
    api.mkdir(parents=True)
    literal = (
        "<code class='docutils literal notranslate'><span class='pre'>{}</span></code>"
    )
    (api / "ascii.html").write_text(
        _page(
            "ASCII",
            "<p>The identity "
            + literal.format("E[w w^T 1[w^T x &gt;= 0]] = I/2")
            + " holds; call "
            + literal.format("relu_identity(generator=0)")
            + ".</p>",
        )
    )
    (api / "typeset.html").write_text(
        _page(
            "Typeset",
            "<p>Call " + literal.format("relu_identity(generator=0)") + ".</p>",
        )
    )
    assert browser.main([str(html)]) == 1
    err = capsys.readouterr().err
    assert "ascii.html" in err and "typeset.html" not in err
    assert "1 formula(s) in ASCII in a code span" in err
    assert "E[w w^T 1[w^T x >= 0]] = I/2" in err
    assert "broken.html" in err and "index.html:" not in err
    assert "text output wraps: a line of" in err
    assert "figure text too small" in err and "small.png" in err
    assert "table clipped by its box" in err
    assert "empty gap:" in err and "256 px tall" in err
    assert "torch._C.Generator" in err
    assert "progress bar frozen" in err and "0/12" in err
    assert "2 search boxes on the page" in err
