"""Open every page of the built book in headless Chromium with no network, check it, screenshot it.

The book is served from ``127.0.0.1`` by a local HTTP server (as a web host would
serve it; ``file://`` pages cannot load fonts or modules the same way), and every
other host is unreachable: Chromium resolves no host name
(``--host-resolver-rules``), and any request that leaves ``127.0.0.1`` is
reported from the browser's network log as a failure. For each page it checks:

* the page has a ``<title>`` and shows the headings of its source (chapter
  notebook or markdown page): the ``#`` headings of the source appear, in order
  of their words, among the rendered ``h1``-``h6``;
* math is typeset: MathJax's startup promise resolved, no ``mjx-merror``
  element (a TeX error), and no raw ``$...$``, ``$$``, ``\\(`` or ``\\[`` left in
  the text outside code; on the API pages, no inline code span holds a formula in ASCII
  (:func:`ascii_formula_problems`: the docstring hook typesets every one it recognizes);
* every ``<img>`` loaded (``complete`` and ``naturalWidth > 0``);
* pages that embed widget state render widgets (the vendored
  ``@jupyter-widgets/html-manager`` ran);
* no ``<script src>`` or ``<link href>`` of the page's HTML points at another host;
* nothing is wider than its place at 1280 pixels: no code cell (``div.highlight pre``, a
  cell's input or output) and no display formula (``mjx-container[display]``) has a
  horizontal scroll bar or overflow (``scrollWidth > clientWidth + 1``) or reaches out
  of the article's column (folded solutions are unfolded first, so they are measured
  too); and the chapters' ruff ``line-length`` (``chapters/ruff.toml``) fits the narrowest code cell of
  the page (how many characters of the code font it holds);
* no text output wraps (a line wider than its box once wrapping is off: show it as a
  table); no rendered matplotlib figure has text smaller than ``MIN_FIGURE_TEXT_PX``
  on the page (its smallest font in points, recorded in the PNG by
  ``rnnlib.plotting``, x its dpi / 72 x the scale it is shown at); no table, cell,
  inline formula, image or figure is clipped by its box (reaches past the nearest
  ancestor that clips or scrolls, or the column); no output box taller than a line
  shows nothing (a hidden widget's empty gap);
* the browser console holds no error (level ``SEVERE``; a 404 of ``/favicon.ico``,
  which the browser asks of every host, is not the page's).

A full-page screenshot of each page is written to ``<html>/_screenshots/<page>.png``,
with an ``index.html`` listing them, so a person can look at the pages.

Usage: ``python -m booktools.browser_check [--workers N] [_build/html]`` (``make
browser-check``, two workers: N pages at once, each worker with its own Chromium; the
report is in the order of the pages whatever the order they finish in).
Needs ``chromium`` and ``chromedriver`` (Debian: ``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import argparse
import html
import io
import json
import re
import shutil
import sys
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from booktools import toc
from booktools.markup import is_formula
from booktools.records import WAITS, make_driver, serve
from booktools.toc import ROOT

PAGE_TIMEOUT_S = WAITS.page_load
MAX_SCREENSHOT_HEIGHT = 20000

# Runs in the page: waits for MathJax and for images, then reports what the checks need.
PAGE_PROBE_JS = r"""
const CODE_SELECTOR = "div.highlight pre, .cell_input pre, .cell_output pre, .output pre";
const OUTPUT_SELECTOR = ".cell_output, .output";
const done = arguments[arguments.length - 1];
(async () => {
  const out = {title: document.title, mathjax: "absent", errors: []};
  try {
    if (window.MathJax) {
      out.mathjax = "loading";
      for (let i = 0; i < 200 && !(MathJax.startup && MathJax.startup.promise); i++) {
        await new Promise(r => setTimeout(r, 50));
      }
      await MathJax.startup.promise;
      if (MathJax.typesetPromise) { await MathJax.typesetPromise(); }
      out.mathjax = "done";
    }
  } catch (e) { out.mathjax = "error: " + e; }
  const imgs = Array.from(document.images);
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.all(imgs.map(img => img.complete ? null :
      new Promise(r => { img.addEventListener("load", r); img.addEventListener("error", r); })));
  out.images = imgs.map(img => ({src: img.getAttribute("src"), ok: img.complete && img.naturalWidth > 0}));
  out.merrors = Array.from(document.querySelectorAll("mjx-merror, .mjx-merror"))
      .map(e => e.getAttribute("data-mjx-error") || e.textContent);
  out.mathCount = document.querySelectorAll("mjx-container").length;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const skip = new Set(["SCRIPT", "STYLE", "PRE", "CODE", "TEXTAREA", "MJX-CONTAINER", "NOSCRIPT"]);
  const texts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let p = n.parentElement, inCode = false;
    while (p) {
      if (skip.has(p.tagName) || p.classList.contains("highlight") || p.classList.contains("output")) {
        inCode = true; break;
      }
      p = p.parentElement;
    }
    if (!inCode) { texts.push(n.textContent); }
  }
  out.text = texts.join(" ");
  // inline code spans of the prose (an ASCII formula left in one: ascii_formula_problems)
  out.literals = Array.from(document.querySelectorAll("code.literal, code.docutils"))
      .filter(c => !c.closest("pre, .highlight, a")).map(c => c.textContent);
  // the cells' outputs as shown (object reprs, frozen progress bars: text_problems)
  out.outputText = Array.from(document.querySelectorAll(".cell_output"))
      .map(e => e.innerText).join("\n");
  out.headings = Array.from(document.querySelectorAll("article h1, article h2, article h3, article h4, article h5, article h6, main h1, main h2, main h3, main h4"))
      .map(h => h.textContent);
  out.widgetState = document.querySelectorAll('script[type="application/vnd.jupyter.widget-state+json"]').length;
  out.widgetViews = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
  // horizontal overflow: code cells (input and output) and display formulas wider than their box or the column.
  // Folded content (solutions in dropdowns, <details>) is unfolded first, so it is measured too.
  document.querySelectorAll(".toggle-hidden").forEach(el => el.classList.remove("toggle-hidden"));
  document.querySelectorAll("details").forEach(el => { el.open = true; });
  const column = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const col = column.getBoundingClientRect();
  out.columnWidth = Math.round(col.width);
  out.overflows = [];
  const seen = new Set();
  const longestLine = el => (el.textContent || "").split("\n").reduce((a, b) => (b.length > a.length ? b : a), "");
  const check = (el, kind) => {
    if (seen.has(el)) { return; }
    seen.add(el);
    const box = el.getBoundingClientRect();
    if (box.width === 0) { return; }  // hidden (e.g. a folded solution)
    const inner = el.scrollWidth > el.clientWidth + 1;
    const outside = box.left < col.left - 1 || box.right > col.right + 1;
    if (inner || outside) {
      const longest = longestLine(el);
      out.overflows.push({kind, scrollWidth: el.scrollWidth, clientWidth: el.clientWidth,
                          width: Math.round(box.width), longest: longest.trim().slice(0, 80), chars: longest.length});
    }
  };
  document.querySelectorAll(CODE_SELECTOR).forEach(el => check(el, el.closest(OUTPUT_SELECTOR) ? "output" : "code"));
  document.querySelectorAll("mjx-container[display]").forEach(el => check(el, "display formula"));
  // how many characters of the code font the narrowest code cell of the page holds
  out.codeColumnChars = null;
  document.querySelectorAll(".cell_input div.highlight pre").forEach(pre => {
    if (pre.getBoundingClientRect().width === 0) { return; }
    const style = getComputedStyle(pre);
    const probe = document.createElement("span");
    probe.style.whiteSpace = "pre";
    probe.textContent = "0".repeat(100);
    pre.appendChild(probe);
    const charWidth = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const inside = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const chars = Math.floor(inside / charWidth);
    if (out.codeColumnChars === null || chars < out.codeColumnChars) { out.codeColumnChars = chars; }
  });
  // text outputs whose lines wrap: a line wider than its box once wrapping is switched off
  out.wrapped = [];
  document.querySelectorAll(".cell_output pre, .output pre").forEach(pre => {
    const box = pre.getBoundingClientRect();
    if (box.width === 0) { return; }
    const ws = pre.style.whiteSpace, ow = pre.style.overflowWrap;
    pre.style.whiteSpace = "pre"; pre.style.overflowWrap = "normal";
    const wide = pre.scrollWidth > pre.clientWidth + 1;
    const scrollWidth = pre.scrollWidth;
    pre.style.whiteSpace = ws; pre.style.overflowWrap = ow;
    if (wide) {
      const longest = longestLine(pre);
      out.wrapped.push({scrollWidth, clientWidth: pre.clientWidth,
                        longest: longest.trim().slice(0, 80), chars: longest.length});
    }
  });
  // rendered figures: natural and shown width (the Python side reads dpi and font size from the PNG)
  out.figures = Array.from(column.querySelectorAll("img")).map(img => {
    const box = img.getBoundingClientRect();
    return {src: img.getAttribute("src"), natural: img.naturalWidth, shown: box.width};
  }).filter(f => f.shown > 0 && f.natural > 0);
  // elements clipped by their box: reaching past the nearest ancestor that clips or scrolls, or the column
  out.clipped = [];
  const clippedEls = [];
  const clipper = el => {
    for (let p = el.parentElement; p && p !== column; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if (ox !== "visible") { return p; }
    }
    return column;
  };
  const describe = el => el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
      ? "." + el.className.trim().split(/\s+/).slice(0, 2).join(".") : "");
  column.querySelectorAll("table, th, td, mjx-container:not([display]), img, figure").forEach(el => {
    const box = el.getBoundingClientRect();
    if (box.width === 0) { return; }
    if (clippedEls.some(c => c.contains(el))) { return; }  // inside an element already named
    const limit = clipper(el).getBoundingClientRect();
    const cut = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === "hidden";
    if (box.right > limit.right + 1 || box.left < limit.left - 1 || cut) {
      clippedEls.push(el);
      out.clipped.push({what: describe(el), width: Math.round(box.width), box: Math.round(limit.width),
                        past: Math.round(Math.max(box.right - limit.right, limit.left - box.left, cut ? el.scrollWidth - el.clientWidth : 0)),
                        text: (el.textContent || "").trim().slice(0, 60)});
    }
  });
  // empty gaps: an output box taller than a line that shows nothing
  out.gaps = [];
  const shows = el => Array.from(el.querySelectorAll("img, svg, canvas, input, iframe, video, mjx-container, .jupyter-widgets, .lm-Widget"))
      .some(c => { const b = c.getBoundingClientRect(); return b.width > 0 && b.height > 0 && getComputedStyle(c).visibility !== "hidden"; });
  column.querySelectorAll(".cell_output, .cell_output > .output, .cell_output > div").forEach(el => {
    const box = el.getBoundingClientRect();
    if (out.gaps.some(g => g.el.contains(el))) { return; }  // inside a gap already named
    if (box.height > 16 && !(el.innerText || "").trim() && !shows(el)) {
      out.gaps.push({el, what: describe(el), height: Math.round(box.height)});
    }
  });
  out.gaps = out.gaps.map(g => ({what: g.what, height: g.height}));
  out.height = Math.max(document.body.scrollHeight, document.documentElement.scrollHeight);
  done(out);
})();
"""

#: a <script src> or <link href> (stylesheet, preload, font, icon) that points at the network
EXTERNAL_ASSET = re.compile(
    r"<(?:script|link)\b[^>]*\b(?:src|href)=[\"'](?:https?:)?//[^\"']+",
    re.IGNORECASE,
)
RAW_MATH = re.compile(
    r"\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*?\\[A-Za-z]+[^$]*\$|\$[^$\s]{1,40}\$"
)

#: a Python object's default repr (``<torch._C.Generator object at 0x7f...>``): a cell's
#: stray last expression, not something written for the reader
OBJECT_REPR = re.compile(r"<[A-Za-z_][\w.]*(?: object)? at 0x[0-9a-fA-F]+>")
#: a tqdm bar's text frame (``0%|          | 0/5 [00:00<?, ?it/s]``): a live bar frozen on
#: the static page (rnnlib's bars are off in the build: rnnlib._progress)
FROZEN_BAR = re.compile(r"\d{1,3}%\|[^|\n]{0,60}\| *\d+/\d+ \[")

#: the theme's search field (a button that opens the search dialog)
SEARCH_FIELD = re.compile(r"<button[^>]*\bsearch-button-field\b")


def text_problems(text: str) -> list[str]:
    """What the page's visible text shows that a reader should never see: object reprs, frozen progress bars."""
    problems = []
    reprs = sorted(set(OBJECT_REPR.findall(text)))
    if reprs:
        problems.append(
            f"a Python object's repr in the page (a cell's stray last expression): {reprs[:3]}"
        )
    bars = sorted(set(m.group(0) for m in FROZEN_BAR.finditer(text)))
    if bars:
        problems.append(f"a progress bar frozen on the static page: {bars[:3]}")
    return problems


def ascii_formula_problems(literals: list[str]) -> list[str]:
    """Inline code spans that hold a formula in ASCII (``E[w w^T 1[w^T x >= 0]] = I/2``).

    A formula is what ``booktools.markup.is_formula`` calls one:
    the docstring hook typesets every such literal, so one left as code is a defect.
    """

    left = sorted({t for t in literals if is_formula(t)})
    if not left:
        return []
    return [f"{len(left)} formula(s) in ASCII in a code span, not typeset: {left[:3]}"]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def source_headings(source: Path) -> list[str]:
    """The ``#`` headings of a chapter notebook's markdown cells or of a markdown page, math removed."""
    if source.suffix == ".ipynb":
        cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
        blocks = [
            "".join(c["source"]).splitlines()
            for c in cells
            if c["cell_type"] == "markdown"
        ]
    else:
        blocks = [source.read_text(encoding="utf-8").splitlines()]
    headings = []
    for lines in blocks:
        headings += _headings_of(lines)
    return headings


def _headings_of(lines: list[str]) -> list[str]:
    # fences: the stack of open code fences / directives
    headings, fences = [], []
    for line in lines:
        marker = re.match(r"^\s*(`{3,}|~{3,}|:{3,})(.*)$", line)
        if marker:
            char, count, rest = (
                marker.group(1)[0],
                len(marker.group(1)),
                marker.group(2).strip(),
            )
            if fences and fences[-1][0] == char and count >= fences[-1][1] and not rest:
                fences.pop()
            else:
                fences.append((char, count))
            continue
        if not fences and re.match(r"^#{1,6}\s+\S", line):
            # math is rendered, not compared; roles and links: their text
            text = re.sub(r"^#{1,6}\s+", "", line)
            text = re.sub(r"\$[^$]*\$", " ", text)
            text = re.sub(r"\{[a-z:-]+\}`([^`<]*)(<[^>]*>)?`", r"\1", text)
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            headings.append(text)
    return headings


def _contains_in_order(haystack: list[str], needle: list[str]) -> bool:
    it = iter(haystack)
    return all(word in it for word in needle)


def pages_and_sources(
    html_dir: Path, root: Path = ROOT
) -> list[tuple[Path, Path | None]]:
    """Every built page (except the search page) with its source in the book's ``_toc.yml``, if any."""
    sources = {}
    if (Path(root) / "_toc.yml").is_file():
        sources = {p.relative_to(root).with_suffix(".html"): p for p in toc.pages(root)}
    pages = []
    for page in sorted(html_dir.rglob("*.html")):
        rel = page.relative_to(html_dir)
        if rel.parts[0].startswith("_") or rel.name == "search.html":
            continue
        pages.append((rel, sources.get(rel)))
    return pages


def ruff_line_length(root: Path = ROOT) -> int | None:
    """The chapters' ruff ``line-length`` (``chapters/ruff.toml``; None if unset)."""
    path = Path(root) / "chapters" / "ruff.toml"
    if not path.is_file():
        return None
    return tomllib.loads(path.read_text(encoding="utf-8")).get("line-length")


def overflow_problems(probe: dict, line_length: int | None) -> list[str]:
    """The problems of a page's horizontal-overflow probe (see the module docstring)."""
    problems = []
    for o in probe.get("overflows", []):
        problems.append(
            f"{o['kind']} wider than its place ({o['scrollWidth']} px of content in {o['clientWidth']} px, "
            f"column {probe['columnWidth']} px); longest line ({o['chars']} characters): {o['longest']!r}"
        )
    chars = probe.get("codeColumnChars")
    if chars and line_length and line_length > chars:
        problems.append(
            f"the chapters' ruff line-length {line_length} (chapters/ruff.toml) is wider than the code column: "
            f"{chars} characters at 1280 px"
        )
    return problems


#: smallest type of a figure on the page (pixels); rnnlib.plotting._style.MIN_TEXT_PX
MIN_FIGURE_TEXT_PX = 11.0
#: the PNG text chunk where the book's figures record their smallest font (rnnlib.plotting._style)
SMALLEST_FONT_KEY = "rnnlib:smallest-font-pt"
#: a matplotlib PNG without that chunk: matplotlib's default font size (points)
DEFAULT_FONT_PT = 10.0


def png_text_and_dpi(
    data: bytes,
) -> tuple[dict[str, str], float | None]:
    """The text chunks of a PNG and its resolution (dots per inch, from ``pHYs``), if any (Pillow)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "PNG":
                return {}, None
            dpi = image.info.get("dpi")
            return dict(image.text), dpi[0] if dpi else None
    except (OSError, SyntaxError):  # not an image, or a broken one
        return {}, None


def _image_bytes(html_dir: Path, page: Path, src: str) -> bytes | None:
    if src.startswith("data:image/png;base64,"):
        import base64

        return base64.b64decode(src.split(",", 1)[1])
    if re.match(r"^[a-z]+:", src) or src.startswith("//"):
        return None
    path = (html_dir / page).parent / src.split("#")[0].split("?")[0]
    try:
        return path.resolve().read_bytes()
    except OSError:
        return None


def figure_text_px(data: bytes, natural: float, shown: float) -> float | None:
    """Size on the page (pixels) of a matplotlib figure's smallest text: points x dpi / 72 x scale.

    None for an image that is not a matplotlib figure.
    """
    text, dpi = png_text_and_dpi(data)
    if SMALLEST_FONT_KEY in text:
        pt = float(text[SMALLEST_FONT_KEY])
    elif "matplotlib" in text.get("Software", "").lower():
        pt = DEFAULT_FONT_PT
    else:
        return None
    dpi = dpi or 100.0  # matplotlib's default
    return pt * dpi / 72 * (shown / natural)


def layout_problems(
    probe: dict,
    html_dir: Path | None = None,
    page: Path | None = None,
) -> list[str]:
    """Wrapped text outputs, small figure text, clipped elements and empty gaps (module docstring)."""
    problems = []
    for w in probe.get("wrapped", []):
        problems.append(
            f"text output wraps: a line of {w['chars']} characters needs {w['scrollWidth']} px "
            f"in {w['clientWidth']} px (show it as a table or shorten it): {w['longest']!r}"
        )
    for f in probe.get("figures", []):
        data = (
            _image_bytes(html_dir, page, f["src"] or "")
            if html_dir is not None and page is not None
            else f.get("data")
        )
        if not data:
            continue
        px = figure_text_px(data, f["natural"], f["shown"])
        if px is not None and px < MIN_FIGURE_TEXT_PX - 0.05:
            problems.append(
                f"figure text too small: {px:.1f} px on the page (< {MIN_FIGURE_TEXT_PX:g} px; "
                f"{f['natural']} px wide image shown at {round(f['shown'])} px): {f['src'][:80]}"
            )
    for c in probe.get("clipped", []):
        problems.append(
            f"{c['what']} clipped by its box: {c['width']} px in {c['box']} px, "
            f"{c['past']} px cut off: {c['text']!r}"
        )
    for g in probe.get("gaps", []):
        problems.append(
            f"empty gap: {g['what']} is {g['height']} px tall and shows nothing (a hidden widget?)"
        )
    return problems


def external_requests(driver, base: str) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if not url.startswith((base, "data:", "blob:", "about:", "chrome")):
                urls.append(url)
    return urls


#: Attempts at a screenshot: chromedriver gives the renderer 10 s to answer, which a tall
#: page on a busy machine (two workers, other jobs) can miss once.
SCREENSHOT_ATTEMPTS = 3


def _screenshot(driver, shot: Path) -> None:
    from selenium.common.exceptions import TimeoutException

    for attempt in range(SCREENSHOT_ATTEMPTS):
        try:
            driver.save_screenshot(str(shot))
            return
        except TimeoutException:
            if attempt == SCREENSHOT_ATTEMPTS - 1:
                raise
            time.sleep(1)


def check_page(
    driver,
    base: str,
    html_dir: Path,
    rel: Path,
    source: Path | None,
    shots: Path,
) -> tuple[list[str], dict]:
    problems: list[str] = []
    page_html = (html_dir / rel).read_text(encoding="utf-8", errors="replace")
    for tag in EXTERNAL_ASSET.findall(page_html):
        problems.append(f"the page loads an asset from the network: {tag[:200]}")
    # drop what earlier pages left in the logs
    driver.get_log("browser"), driver.get_log("performance")
    driver.get(f"{base}/{rel.as_posix()}")
    probe = driver.execute_async_script(PAGE_PROBE_JS)
    if probe["widgetState"]:
        # the embed manager renders the widget views after load
        deadline = time.monotonic() + WAITS.page_load
        while time.monotonic() < deadline and not driver.execute_script(
            "return document.querySelectorAll('.jupyter-widgets, .widget-inline-hbox, .lm-Widget').length"
        ):
            time.sleep(0.2)
        if probe["widgetViews"] and not driver.execute_script(
            "return document.querySelectorAll('.jupyter-widgets, .lm-Widget').length"
        ):
            problems.append(
                "the page embeds widgets but none was rendered (ipywidgets embed manager)"
            )
    if not probe["title"].strip():
        problems.append("the page has no <title>")
    if probe["mathjax"] not in ("done", "absent"):
        problems.append(f"MathJax did not finish: {probe['mathjax']}")
    problems += overflow_problems(probe, ruff_line_length())
    problems += layout_problems(probe, html_dir, rel)
    for err in probe["merrors"]:
        problems.append(f"MathJax error in a formula: {err}")
    problems += text_problems(probe["text"] + "\n" + probe.get("outputText", ""))
    if rel.parts[:2] == ("chapters", "api"):
        # the API pages: rnnlib's docstrings, whose formulas the docstring hook typesets
        problems += ascii_formula_problems(probe.get("literals", []))
    boxes = len(SEARCH_FIELD.findall(page_html))
    if boxes > 1:
        problems.append(
            f"{boxes} search boxes on the page (one is enough: booktools.sphinx_ext.layout)"
        )
    raw = sorted(set(RAW_MATH.findall(probe["text"])))
    if raw:
        problems.append(f"raw (untypeset) math left in the text: {raw[:5]}")
    for img in probe["images"]:
        if not img["ok"]:
            problems.append(f"image did not load: {img['src']}")
    rendered = [_words(h) for h in probe["headings"]]
    if source is not None:
        for heading in source_headings(source):
            words = _words(heading)
            if words and not any(_contains_in_order(r, words) for r in rendered):
                problems.append(f"heading missing from the page: {heading!r}")
        if not rendered:
            problems.append("the page shows no heading")
    for entry in driver.get_log("browser"):
        # the browser asks every host for /favicon.ico; the book has none (not a page's error)
        if entry["level"] == "SEVERE" and "/favicon.ico " not in entry["message"]:
            problems.append(f"console error: {entry['message'][:300]}")
    for url in external_requests(driver, base):
        problems.append(f"request to the network: {url}")
    # full-page screenshot
    height = min(int(probe["height"]), MAX_SCREENSHOT_HEIGHT)
    driver.set_window_size(1280, max(height, 600))
    shot = shots / (rel.with_suffix("").as_posix().replace("/", "__") + ".png")
    _screenshot(driver, shot)
    driver.set_window_size(1280, 1000)
    info = {
        "page": rel.as_posix(),
        "title": probe["title"],
        "math": probe["mathCount"],
        "images": len(probe["images"]),
        "widgets": probe["widgetViews"],
        "screenshot": shot.name,
        "code_chars": probe.get("codeColumnChars"),
    }
    return problems, info


def check_pages(
    pages: list[tuple[Path, Path | None]],
    base: str,
    html_dir: Path,
    shots: Path,
    workers: int = 1,
):
    """Check ``pages`` (:func:`check_page`), ``workers`` at a time, each worker with its own Chromium.

    Yields ``(page, (problems, info))`` in the order of ``pages``, each as soon as it
    and the pages before it are checked; an error in a worker is raised here (the
    pages not yet started are then cancelled).
    """
    local, drivers, lock = threading.local(), [], threading.Lock()

    def check(page: tuple[Path, Path | None]):
        if not hasattr(local, "driver"):
            local.driver = make_driver()
            with lock:
                drivers.append(local.driver)
        rel, source = page
        return rel, check_page(local.driver, base, html_dir, rel, source, shots)

    try:
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(pages)))) as pool:
            yield from pool.map(check, pages)
    finally:
        for driver in drivers:
            driver.quit()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "html_dir",
        nargs="?",
        default=str(ROOT / "_build" / "html"),
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="pages checked at once, each in its own Chromium (default 1)",
    )
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers: expected an integer >= 1, got {args.workers}")
    html_dir = Path(args.html_dir).resolve()
    if not (html_dir / "index.html").exists():
        print(
            f"{html_dir} holds no built book (run `make book` first)",
            file=sys.stderr,
        )
        return 1
    shots = html_dir / "_screenshots"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir()
    server, base = serve(html_dir)
    failures, rows = {}, []
    try:
        for rel, (problems, info) in check_pages(
            pages_and_sources(html_dir),
            base,
            html_dir,
            shots,
            args.workers,
        ):
            rows.append(info)
            status = "ok" if not problems else f"{len(problems)} problem(s)"
            print(
                f"{rel.as_posix():45s} {info['math']:5d} formulas {info['images']:3d} images "
                f"{info['widgets']:3d} widgets  {status}"
            )
            if problems:
                failures[rel.as_posix()] = problems
    finally:
        server.shutdown()
    index = [
        "<!doctype html><meta charset='utf-8'><title>Screenshots of the built book</title>",
        "<h1>Screenshots of the built book (headless Chromium, no network)</h1>",
    ]
    for info in rows:
        flag = "FAILED" if info["page"] in failures else "ok"
        index.append(
            f"<h2>{html.escape(info['page'])} ({flag})</h2><p>{html.escape(info['title'])}</p>"
            f"<img src='{info['screenshot']}' style='max-width:100%;border:1px solid #ccc'>"
        )
    (shots / "index.html").write_text("\n".join(index), encoding="utf-8")
    columns = sorted({r["code_chars"] for r in rows if r.get("code_chars")})
    if columns:
        print(
            f"code column at 1280 px: {', '.join(map(str, columns))} characters (ruff line-length: {ruff_line_length()})"
        )
    print(f"screenshots: {shots}/index.html")
    if failures:
        for page, problems in failures.items():
            print(f"\n{page}:", file=sys.stderr)
            for problem in problems:
                print(f"  - {problem}", file=sys.stderr)
        print(
            f"\nbrowser check FAILED on {len(failures)} of {len(rows)} pages",
            file=sys.stderr,
        )
        return 1
    print(f"browser check passed: {len(rows)} pages, offline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
