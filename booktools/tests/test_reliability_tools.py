"""Tests of the reliability checks (booktools.browser_check, the Makefile's vendor recipe; nbval: test_nbval.py)."""

from __future__ import annotations

import shutil

import pytest
import yaml

from booktools import browser_check as browser
from booktools.toc import ROOT

CHROMIUM = shutil.which("chromium") and shutil.which("chromedriver")


def test_source_headings_skip_code_and_directives(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# 1. Title with $x^2$ math\n\ntext\n\n```python\n# a comment, not a heading\n```\n\n"
        "````{prf:proof}\n```{math}\nx\n```\n# not a heading either\n````\n\n## A [link](x.md) and {ref}`a role <r>`\n"
    )
    assert browser.source_headings(page) == [
        "1. Title with   math",
        "A link and a role ",
    ]


def test_raw_math_pattern():
    for raw in (
        "the norm $\\|x\\|$ here",
        "inline \\(x\\)",
        "display $$x$$",
        "a $x$ b",
    ):
        assert browser.RAW_MATH.search(raw), raw
    for typeset in ("costs 5 dollars", "h(l) = relu(W h + A x)"):
        assert not browser.RAW_MATH.search(typeset), typeset


def test_config_loads_only_vendored_scripts():
    """mathjax_path and nb_ipywidgets_js name files the Makefile's vendor recipe wrote (served as _vendor/)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert config["html_extra_path"] == ["_extra"]
    urls = [config["mathjax_path"], *config["nb_ipywidgets_js"]]
    assert urls
    for url in urls:
        assert "://" not in url, f"{url} is loaded from the network"
        path = ROOT / "_extra" / url.removeprefix("../")
        assert url.removeprefix("../").startswith("_vendor/"), url
        assert path.is_file(), f"{url}: {path} is missing (make vendor)"
    assert (
        "html_static_path" not in config or "_extra" not in config["html_static_path"]
    )


def test_external_asset_pattern():
    assert browser.EXTERNAL_ASSET.search(
        '<script src="https://cdn.jsdelivr.net/npm/x.js"></script>'
    )
    assert browser.EXTERNAL_ASSET.search(
        "<link rel='stylesheet' href='//fonts.googleapis.com/css'>"
    )
    assert not browser.EXTERNAL_ASSET.search(
        '<script src="../_vendor/requirejs/require.js"></script>'
    )
    assert not browser.EXTERNAL_ASSET.search(
        '<a href="https://github.com/rnnlib/rnn-theory-book">repository</a>'
    )


@pytest.mark.skipif(not CHROMIUM, reason="needs chromium and chromedriver")
def test_browser_check_fails_a_broken_page(tmp_path, capsys):
    """A page with raw math, a missing image, a script error and a CDN script fails, with each reason named."""
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<!doctype html><title>ok</title><h1>Fine</h1>")
    (html / "broken.html").write_text(
        "<!doctype html><title>broken</title><h1>Broken</h1><p>raw $x^2$ here</p>"
        "<img src='missing.png'><script>undefined_function()</script>"
        "<script src='https://cdn.example.org/lib.js'></script>"
    )
    # two workers, as make browser-check runs it: the report keeps the pages' order
    assert browser.main(["--workers", "2", str(html)]) == 1
    out, err = capsys.readouterr()
    assert out.index("broken.html ") < out.index("index.html ")
    assert "raw (untypeset) math" in err
    assert "image did not load: missing.png" in err
    assert "undefined_function" in err
    assert "loads an asset from the network" in err
    assert "request to the network" in err or "ERR_NAME_NOT_RESOLVED" in err
    assert "broken.html" in err and "index.html:" not in err
    assert (html / "_screenshots" / "broken.png").exists()


def test_overflow_problems_name_the_kind_the_widths_and_the_line():
    probe = {
        "columnWidth": 700,
        "codeColumnChars": 80,
        "overflows": [
            {
                "kind": "code",
                "scrollWidth": 1500,
                "clientWidth": 680,
                "width": 680,
                "chars": 180,
                "longest": "x" * 80,
            }
        ],
    }
    problems = browser.overflow_problems(probe, 88)
    assert problems[0].startswith(
        "code wider than its place (1500 px of content in 680 px, column 700 px)"
    )
    assert "longest line (180 characters)" in problems[0]
    assert problems[1] == (
        "the chapters' ruff line-length 88 (chapters/ruff.toml) is wider than the code column: "
        "80 characters at 1280 px"
    )
    assert browser.overflow_problems({**probe, "overflows": []}, 80) == []


def test_ruff_line_length_fits_the_measured_code_column():
    """The number measured by the browser check on the built book (see ARCHITECTURE.md, "Line length")."""
    assert browser.ruff_line_length() is not None, (
        "chapters/ruff.toml sets no line-length"
    )


WIDE = "w = " + " + ".join(f"value_{i}" for i in range(40))
MATHJAX = ROOT / "_extra" / "_vendor" / "mathjax"


@pytest.mark.skipif(not CHROMIUM, reason="needs chromium and chromedriver")
def test_browser_check_fails_a_planted_wide_page(tmp_path, capsys, monkeypatch):
    """A code cell, an output and a display formula wider than the column each fail, named; a narrow page passes."""
    monkeypatch.setattr(browser, "ruff_line_length", lambda root=None: None)
    html = tmp_path / "html"
    html.mkdir()
    style = (
        "<style>article.bd-article{width:700px} pre{overflow:auto;font-family:monospace}"
        "mjx-container[display]{display:block}</style>"
    )
    code = "<div class='cell'><div class='cell_input'><div class='highlight'><pre>{}</pre></div></div></div>"
    (html / "index.html").write_text(
        f"<!doctype html><title>ok</title>{style}<article class='bd-article'>"
        f"<h1>Narrow</h1>{code.format('x = 1')}</article>"
    )
    mathjax = ""
    if MATHJAX.is_dir():  # a real formula typeset by the vendored MathJax
        (html / "_vendor").mkdir()
        (html / "_vendor" / "mathjax").symlink_to(MATHJAX)
        mathjax = (
            "<script src='_vendor/mathjax/tex-chtml.js'></script><p>$$"
            + " + ".join(f"a_{{{i}}}" for i in range(80))
            + "$$</p>"
        )
    else:  # a stand-in with MathJax's element name
        mathjax = "<mjx-container display='true'><span style='display:inline-block;width:3000px'>x</span></mjx-container>"
    (html / "wide.html").write_text(
        f"<!doctype html><title>wide</title>{style}<article class='bd-article'><h1>Wide</h1>"
        f"{code.format(WIDE)}<div class='cell_output'><pre>{'z' * 200}</pre></div>{mathjax}</article>"
    )
    assert browser.main([str(html)]) == 1
    err = capsys.readouterr().err
    assert "wide.html" in err and "index.html:" not in err
    assert (
        "code wider than its place" in err
        and f"longest line ({len(WIDE)} characters)" in err
    )
    assert (
        "output wider than its place" in err and "longest line (200 characters)" in err
    )
    assert "display formula wider than its place" in err
