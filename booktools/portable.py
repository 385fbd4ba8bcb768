"""Portable copies of the chapters: notebooks that read in any Jupyter front end.

The chapters are MyST notebooks: outside the HTML book (Colab, VS Code, classic Jupyter,
JupyterLab without jupyterlab-myst) their directives show as code blocks, their glued
numbers, citations and cross-references as raw roles, and their hidden macro cell as
YAML. This module writes a *portable copy* of every chapter of both editions, in plain
Markdown that every front end renders:

    python -m booktools.portable                   # both editions: portable/book/, portable/student/
    python -m booktools.portable --edition book    # one edition (student: make student-notebooks first)
    python -m booktools.portable --base-url URL    # cross-references into the published HTML book
    python -m booktools.portable --check           # convert, then render every copy and check it

In a portable copy:

- a ``{prf:...}`` statement is a bold numbered title, **Theorem 3 (name).**, then its
  text; a proof is *Proof.* ... ∎; an exercise is **Exercise 1.1 · title.**, a solution
  **Solution to Exercise 1.1 · title.**; an admonition (``{note}``, ``{admonition}``,
  ...) a blockquote with a bold title; a ``{figure}`` the image with its caption. The
  numbers are the book's: sphinx-proof numbers each kind of statement, and ``numfig``
  the figures, consecutively through the book in the order of ``_toc.yml`` (the book's
  table of contents is not section-numbered), which :func:`book_index` replays;
- a glued number (``{glue:text}`key:fmt` ``, or the ``{eval}`` expression of a
  ``make lab`` reader copy) is the value of the chapter's execution, formatted as
  MyST-NB formats it (``myst_nb.core.variables.format_plain_text``). The execution is
  the build's (its jupyter-cache record, :func:`booktools.execute.executed_in_build`);
  a chapter the cache lacks is first executed into it by :func:`booktools.execute.execute`
  (so the copy shows the outputs the book would). The code cells are kept as they are,
  with that execution's outputs, except the invisible records of ``glue(...,
  display=False)`` (a MIME type only MyST-NB reads: VS Code would show "no renderer")
  and the outputs the book hides (tags ``remove-output``, ``remove-cell``: a stub's
  ``NotImplementedError``, the install cell's output);
- a citation is author-year text, "Panigrahi and Goyal (2021)" (``{cite:t}``) or
  "(Panigrahi and Goyal, 2021)" (``{cite:p}``), from the edition's ``references.bib``
  (read with pybtex), and a last Markdown cell "References" lists the works cited,
  formatted by pybtex's ``plain`` style and Markdown backend;
- a cross-reference (``{prf:ref}``, ``{ref}``, ``{numref}``, ``{doc}``, ``{chapter}``,
  ``{claim}``, ``{py:func}``...) is a Markdown link into the edition's HTML book:
  ``--base-url`` (the published book), else a relative link to the local build
  (``_build/html/`` or ``student/_build/html/``);
- the book's macros (``_config.yml``, :mod:`booktools.macros`) are *expanded* in every
  formula, and the macro cell is left out. Expanding is the one form every front end
  reads: a ``$\\newcommand...$`` or ``$\\def...$`` cell works in MathJax (classic
  Jupyter, Colab, nbconvert), where definitions hold for the page, but KaTeX (VS Code,
  jupyterlab-myst) typesets each formula alone, so a macro defined in one cell is
  undefined in the next. A bare ``\\begin{align}`` environment (MyST's ``amsmath``) is
  put between ``$$``, which every front end typesets; MyST comments (``% ...``),
  targets (``(label)=``) and block breaks (``+++``) are left out.

The parsing is myst-parser's own Markdown parser (markdown-it-py with the MyST plugins of
``mdit_py_plugins``, configured with the book's ``myst_enable_extensions``): it tells a
directive from a code fence, a role from a code span, a formula from prose, and gives
each block its lines. Two things are hand-written, for reasons: markdown-it gives no
character offsets inside a paragraph, so a role or formula is located by searching its
exact spelling from the end of the previous inline element, in order (a code span is
skipped the same way, so a role spelled inside one is never touched); and a
directive's option lines (``:label: x``) are read as MyST reads them (leading ``:key:
value`` lines, or a ``---`` YAML block), because myst-parser's option parser needs the
directive's Sphinx class, which sphinx-proof and sphinx-exercise register only in a
Sphinx application. The macro expander is a small TeX argument reader (a brace group, a
control sequence or one character), which is all ``\\def`` expansion needs.

The check (:func:`check_notebooks`, ``--check``) renders each copy with a front end that
knows no MyST, nbconvert's HTML exporter, with MathJax 3 served from the book's vendored
copy (``_extra/_vendor/mathjax``, else ``node_modules/mathjax/es5``; nbconvert's
template configures MathJax 2, so the page loads a small script that gives MathJax 3
nbconvert's settings: ``$`` and ``$$`` delimiters, escapes, environments), opens it in
headless Chromium (launched as :mod:`booktools.browser_check` launches it, no network)
and reports, in the rendered Markdown cells: raw roles, directive fences, a leftover
macro cell (YAML), MyST comments and targets, a glued number without a value, ``$``
left in the text after MathJax, and MathJax error nodes; and (:func:`broken_links`) a
relative link whose page or anchor the local HTML build lacks, where that build exists.
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from booktools.markup import book_macros, is_macro_cell
from booktools.records import executed_in_build
from booktools.toc import ROOT, pages

#: The two editions: the folder that holds each one's ``_toc.yml`` and chapters, relative to the root.
EDITIONS = {"book": ".", "student": "student"}
#: Where the portable copies go (gitignored), one folder per edition.
DEFAULT_OUT = ROOT / "portable"
#: What a glued number shows when the execution has no value for it (the check reports it).
MISSING_VALUE = "(value not computed)"
#: The text of the References cell's heading.
REFERENCES_HEADING = "## References"
#: Tags of a code cell whose outputs the book does not show: the copy leaves them out too
#: (the code stays: the install cell is what Colab needs).
HIDDEN_OUTPUT_TAGS = {"remove-output", "remove-cell"}
#: Cell metadata key marking the cells this module adds.
PORTABLE_KEY = "rnnlib_portable"

#: sphinx-proof's directives, and the name each shows.
PROOF_KINDS = {
    "axiom": "Axiom",
    "theorem": "Theorem",
    "lemma": "Lemma",
    "definition": "Definition",
    "remark": "Remark",
    "conjecture": "Conjecture",
    "corollary": "Corollary",
    "algorithm": "Algorithm",
    "criterion": "Criterion",
    "example": "Example",
    "property": "Property",
    "observation": "Observation",
    "proposition": "Proposition",
    "assumption": "Assumption",
    "notation": "Notation",
}
#: docutils' admonitions, and the title each shows (``admonition`` takes its title as argument).
ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "attention": "Attention",
    "caution": "Caution",
    "warning": "Warning",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "admonition": "",
    "dropdown": "",
}
#: Directives that show nothing in a notebook (a table of contents, the bibliography).
DROPPED_DIRECTIVES = {
    "toctree",
    "tableofcontents",
    "bibliography",
    "solution-end",
}


# ----------------------------------------------------------------------------- parsing


def markdown_parser():
    """myst-parser's markdown-it parser, with the book's MyST extensions (``_config.yml``)."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(
        enable_extensions={
            "amsmath",
            "dollarmath",
            "colon_fence",
            "deflist",
            "substitution",
        }
    )
    return create_md_parser(config, RendererHTML)


_PARSER = None


def _parse(text: str):
    global _PARSER
    if _PARSER is None:
        _PARSER = markdown_parser()
    return _PARSER.parse(text)


_DIRECTIVE_INFO = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


def split_directive(info: str, content: str) -> tuple[str, str, dict, str] | None:
    """``(name, argument, options, body)`` of a MyST directive fence, or None for a code fence.

    ``info`` is the fence's info string (``{prf:theorem} Title``), ``content`` its
    lines. Options are the leading ``:key: value`` lines, or a leading ``---`` YAML
    block, as MyST reads them.
    """
    if not isinstance(info, str) or not isinstance(content, str):
        raise TypeError("info and content: expected strings")
    m = _DIRECTIVE_INFO.match(info.strip())
    if m is None:
        return None
    lines = content.split("\n")
    options: dict = {}
    i = 0
    if lines and lines[0].strip() == "---":
        end = next(
            (j for j in range(1, len(lines)) if lines[j].strip() == "---"),
            None,
        )
        if end is not None:
            loaded = yaml.safe_load("\n".join(lines[1:end])) or {}
            options = dict(loaded) if isinstance(loaded, dict) else {}
            i = end + 1
    else:
        while i < len(lines):
            o = _OPTION.match(lines[i].strip())
            if o is None:
                break
            options[o["key"]] = o["value"].strip()
            i += 1
    body = "\n".join(lines[i:]).strip("\n")
    return m["name"], m["arg"].strip(), options, body


# ----------------------------------------------------------------------------- macros


def _tex_argument(tex: str, j: int) -> tuple[str, int]:
    """One TeX macro argument from position ``j``: a brace group's inside, a control sequence or a character."""
    while j < len(tex) and tex[j] in " \t\n":
        j += 1
    if j >= len(tex):
        return "", j
    if tex[j] == "{":
        depth, k = 0, j
        while k < len(tex):
            if tex[k] == "\\":
                k += 2
                continue
            if tex[k] == "{":
                depth += 1
            elif tex[k] == "}":
                depth -= 1
                if depth == 0:
                    return tex[j + 1 : k], k + 1
            k += 1
        return tex[j + 1 :], len(tex)
    if tex[j] == "\\":
        m = re.compile(r"\\([A-Za-z]+|.)").match(tex, j)
        return m[0], m.end()
    return tex[j], j + 1


_CONTROL = re.compile(r"\\([A-Za-z]+|.)", re.S)
#: what takes the next token as its argument: a control word (``\bar``) or a script mark
_TAKES_ARGUMENT = re.compile(r"(\\[A-Za-z]+|[\^_])\s*$")


def expand_macros(tex: str, macros: dict[str, str | list]) -> str:
    """``tex`` with every macro of ``macros`` expanded, as TeX's ``\\def`` would expand it.

    ``macros`` maps a name (without backslash) to its body, or to ``[body, n_args]``
    (``_config.yml``'s form, :func:`booktools.macros.book_macros`). Macros used in a
    body are expanded too (up to ten levels).
    """
    if not isinstance(tex, str):
        raise TypeError(f"tex: expected a string, got {type(tex).__name__}")
    if not isinstance(macros, dict):
        raise TypeError(f"macros: expected a dict, got {type(macros).__name__}")
    for _ in range(10):
        out, i, changed = [], 0, False
        while i < len(tex):
            m = _CONTROL.match(tex, i) if tex[i] == "\\" else None
            if m is None:
                out.append(tex[i])
                i += 1
                continue
            name, j = m[1], m.end()
            if name not in macros:
                out.append(m[0])
                i = j
                continue
            spec = macros[name]
            body, n_args = (spec[0], spec[1]) if isinstance(spec, list) else (spec, 0)
            args = []
            for _k in range(n_args):
                arg, j = _tex_argument(tex, j)
                args.append(arg)
            for k in range(n_args, 0, -1):
                body = body.replace(f"#{k}", args[k - 1])
            # a body that ends in a control word must not run into a letter after it
            if re.search(r"\\[A-Za-z]+$", body) and j < len(tex) and tex[j].isalpha():
                body += " "
            # where the macro is the argument of what precedes it (\bar\vw, x^\vx), TeX
            # takes the unexpanded macro as one token: its body must stay one group
            if _TAKES_ARGUMENT.search("".join(out[-8:])):
                body = "{" + body + "}"
            out.append(body)
            i, changed = j, True
        tex = "".join(out)
        if not changed:
            break
    return tex


def macros_of_front_matter(text: str) -> dict[str, str]:
    """The ``math:`` macros of a MyST front matter (a cell's leading ``---`` YAML block), by name without backslash."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a string, got {type(text).__name__}")
    for token in _parse(text):
        if token.type == "front_matter":
            try:
                data = yaml.safe_load(token.content) or {}
            except yaml.YAMLError:
                return {}
            math = data.get("math", {}) if isinstance(data, dict) else {}
            return {str(k).lstrip("\\"): str(v) for k, v in (math or {}).items()}
    return {}


# ----------------------------------------------------------------------------- the book's index


@dataclass
class Target:
    """What a label names: its page, kind ("Theorem", "Exercise", "Figure", "section"), number and title."""

    docname: str
    kind: str
    number: str | None = None
    title: str = ""

    def text(self) -> str:
        """How a reference to it reads: "Theorem 3", "Exercise 1.1 · title", or the section's title."""
        if self.kind == "section":
            return self.title
        if self.kind == "Exercise" and self.number is None:
            return f"Exercise {self.title}".strip()
        return (
            f"{self.kind} {self.number}"
            if self.number
            else f"{self.kind} {self.title}".strip()
        )


@dataclass
class BookIndex:
    """The labels, page titles and figure numbers of an edition, as its Sphinx build numbers them."""

    targets: dict[str, Target] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    #: ``(docname, cell index) -> figure number`` of the figure cells (MyST-NB captions)
    figure_cells: dict[tuple[str, int], str] = field(default_factory=dict)
    #: ``(docname, occurrence) -> number`` of each proof-kind directive, in page order
    statements: dict[tuple[str, int], str] = field(default_factory=dict)
    #: ``docname -> [number, ...]`` of the figure directives of a page, in order
    figures: dict[str, list[str]] = field(default_factory=dict)


def _markdown_texts(path: Path) -> list[tuple[int, str]]:
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [
            (i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
        ]
    return [(-1, path.read_text(encoding="utf-8"))]


def _figure_caption(cell) -> str | None:
    fig = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
    caption = fig.get("caption") if isinstance(fig, dict) else None
    return caption if isinstance(caption, str) and caption.strip() else None


def _image_outputs(cell) -> int:
    return sum(
        any(k.startswith("image/") for k in o.get("data", {}))
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result")
    )


def book_index(
    edition_root: Path = ROOT,
    executions: dict[str, nbformat.NotebookNode] | None = None,
) -> BookIndex:
    """Number the statements, exercises and figures of every page of ``_toc.yml`` in ``edition_root``.

    sphinx-proof numbers each kind of statement, and ``numfig`` the figures, through
    the whole book in the order of the table of contents (not per chapter: the table
    of contents is not numbered), skipping ``:nonumber:`` ones. A figure cell (MyST-NB
    caption metadata) is numbered once for each image its execution displays (the book
    drops the caption of a cell without one: ``booktools.sphinx_ext.static_page``);
    ``executions`` maps a docname to its execution, and a cell of a page without one
    counts as one figure.
    """
    if executions is not None and not isinstance(executions, dict):
        raise TypeError(f"executions: expected a dict, got {type(executions).__name__}")
    executions = executions or {}
    edition_root = Path(edition_root)
    if not (edition_root / "_toc.yml").is_file():
        raise FileNotFoundError(f"edition_root: no _toc.yml in {str(edition_root)!r}")
    index = BookIndex()
    counters: dict[str, int] = {}

    def count(kind: str) -> str:
        counters[kind] = counters.get(kind, 0) + 1
        return str(counters[kind])

    for path in pages(edition_root):
        docname = path.relative_to(edition_root).with_suffix("").as_posix()
        occurrence = 0
        index.figures[docname] = []
        cells = (
            nbformat.read(path, as_version=4).cells if path.suffix == ".ipynb" else None
        )
        texts = _markdown_texts(path)
        items: list[tuple[int, str | None]] = []
        if cells is not None:
            md = dict(texts)
            for i, cell in enumerate(cells):
                items.append((i, md.get(i)))
        else:
            items = [(-1, texts[0][1])]
        for cell_index, text in items:
            if text is None:
                ran = executions.get(docname)
                images = (
                    _image_outputs(ran.cells[cell_index])
                    if ran is not None and len(ran.cells) == len(cells)
                    else 1
                )
                if _figure_caption(cells[cell_index]) is not None and images:
                    number = count("figure")
                    for _extra in range(images - 1):
                        count("figure")
                    index.figure_cells[(docname, cell_index)] = number
                    name = cells[cell_index].metadata.get("figure_name")
                    if isinstance(name, str):
                        index.targets[name] = Target(docname, "Figure", number)
                continue
            occurrence = _index_text(text, docname, index, count, occurrence)
        # the page's title: its first level-1 heading
        for _i, text in texts:
            m = re.search(r"^# +(.+?)\s*$", text, re.M)
            if m:
                index.titles[docname] = _plain_inline(m[1])
                break
    return index


def _index_text(
    text: str,
    docname: str,
    index: BookIndex,
    count,
    occurrence: int,
) -> int:
    """Index the directives and targets of one Markdown text, depth first in document order."""
    pending_target = None
    for token in _parse(text):
        if token.type == "myst_target":
            pending_target = token.content
            continue
        if token.type == "inline" and pending_target:
            index.targets[pending_target] = Target(
                docname,
                "section",
                title=_plain_inline(token.content),
            )
            pending_target = None
        if token.type not in ("fence", "colon_fence"):
            continue
        parts = split_directive(token.info, token.content)
        if parts is None:
            continue
        name, arg, options, body = parts
        kind = name.split(":", 1)[1] if name.startswith("prf:") else None
        label = options.get("label") or options.get("name")
        if kind in PROOF_KINDS:
            number = None if "nonumber" in options else count(kind)
            index.statements[(docname, occurrence)] = number or ""
            occurrence += 1
            if label:
                index.targets[label] = Target(docname, PROOF_KINDS[kind], number, arg)
        elif name == "exercise":
            number = None if "nonumber" in options else count("exercise")
            if label:
                index.targets[label] = Target(docname, "Exercise", number, arg)
        elif name == "figure":
            number = count("figure")
            index.figures[docname].append(number)
            if label:
                index.targets[label] = Target(docname, "Figure", number, "")
        if body:
            occurrence = _index_text(body, docname, index, count, occurrence)
    return occurrence


def _plain_inline(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# ----------------------------------------------------------------------------- citations


@dataclass
class Bibliography:
    """The entries of a ``.bib`` file (pybtex), with the author-year texts of citations."""

    path: Path
    data: object = None

    def __post_init__(self) -> None:
        from pybtex.database import parse_file

        self.path = Path(self.path)
        if not self.path.is_file():
            raise FileNotFoundError(f"path: no bibliography at {str(self.path)!r}")
        self.data = parse_file(str(self.path))

    def authors(self, key: str) -> str:
        """ "Panigrahi and Goyal", "Allen-Zhu et al." for entry ``key`` (KeyError if unknown)."""
        from pybtex.richtext import Text

        entry = self.data.entries[key]
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [
            str(Text.from_latex(" ".join(p.prelast_names + p.last_names)))
            for p in persons
        ]
        if not names:
            return key
        if len(names) == 1:
            return names[0]
        if len(names) == 2:
            return f"{names[0]} and {names[1]}"
        return f"{names[0]} et al."

    def year(self, key: str) -> str:
        """The year of entry ``key`` ("n.d." when it has none)."""
        return self.data.entries[key].fields.get("year", "n.d.")

    def references_markdown(self, keys: list[str]) -> str:
        """The References cell: the entries of ``keys`` formatted by pybtex's plain style, as Markdown."""
        from pybtex.plugin import find_plugin

        known = [k for k in dict.fromkeys(keys) if k in self.data.entries]
        style = find_plugin("pybtex.style.formatting", "plain")()
        backend = find_plugin("pybtex.backends", "markdown")()
        entries = sorted(
            (self.data.entries[k] for k in known),
            key=lambda e: (
                self.authors(e.key).lower(),
                self.year(e.key),
            ),
        )
        lines = [REFERENCES_HEADING, ""]
        for formatted in style.format_entries(entries):
            text = " ".join(formatted.text.render(backend).split())
            # pybtex's Markdown backend escapes every punctuation mark; a period or a
            # hyphen needs no escape where it is not at the start of a line
            text = re.sub(r"\\([.\-])", r"\1", text)
            lines.append(f"- {text}")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- glue


def glued_values(
    executed: nbformat.NotebookNode,
) -> dict[str, str]:
    """The ``text/plain`` of every value glued (``myst_nb.glue``) in an executed notebook, by key."""
    if not isinstance(executed, dict) or "cells" not in executed:
        raise TypeError("executed: expected a notebook (nbformat.NotebookNode)")
    values: dict[str, str] = {}
    for cell in executed.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            prefix = meta.get("mime_prefix", "")
            text = output.get("data", {}).get(prefix + "text/plain")
            if text is not None:
                values[meta["name"]] = "".join(text) if isinstance(text, list) else text
    return values


def _is_glue_record(output) -> bool:
    meta = output.get("metadata", {}).get("scrapbook")
    return bool(meta and meta.get("mime_prefix"))


_GLUED_CALL = re.compile(r"glued$")


def _eval_glue_key(expression: str) -> tuple[str, str] | None:
    """``(key, format)`` of a ``make lab`` reader copy's ``rnnlib.notebook.glued("key", "fmt")``."""
    try:
        node = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if not _GLUED_CALL.search(name) or not node.args:
        return None
    values = [a.value for a in node.args if isinstance(a, ast.Constant)]
    if not values or not all(isinstance(v, str) for v in values):
        return None
    return values[0], (values[1] if len(values) > 1 else "")


# ----------------------------------------------------------------------------- conversion


@dataclass
class Context:
    """What the conversion of one notebook needs: the edition's index, bibliography, macros, values and links."""

    docname: str
    index: BookIndex
    bibliography: Bibliography | None
    macros: dict[str, str | list]
    values: dict[str, str]
    link_base: str
    cited: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    occurrence: int = 0
    figure_occurrence: int = 0
    source_dir: Path | None = None
    out_dir: Path | None = None

    def link(self, docname: str, anchor: str = "") -> str:
        """The URL of a page of the HTML book (and an anchor on it)."""
        url = (
            f"{self.link_base.rstrip('/')}/{docname}.html"
            if self.link_base
            else f"{docname}.html"
        )
        return url + (f"#{anchor}" if anchor else "")


def _role_text(content: str) -> tuple[str | None, str]:
    """``("text", "target")`` of ``text <target>``, or ``(None, content)``."""
    m = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>\s*$", content, re.S)
    if m and m["text"]:
        return m["text"], m["target"].strip()
    return None, content.strip()


def _md_link(text: str, url: str) -> str:
    return f"[{text}]({url.replace(' ', '%20').replace(')', '%29')})"


def _glue_value(ctx: Context, key: str, fmt: str) -> str:
    from myst_nb.core.variables import format_plain_text

    if key not in ctx.values:
        ctx.warnings.append(f"{ctx.docname}: glued value {key!r} not in the execution")
        return MISSING_VALUE
    try:
        return format_plain_text(ctx.values[key], fmt or "")
    except (ValueError, TypeError) as exc:
        ctx.warnings.append(f"{ctx.docname}: glued value {key!r}: {exc}")
        return ctx.values[key]


def convert_role(name: str, content: str, ctx: Context) -> str:
    """The plain Markdown of the MyST role ``{name}`content` `` (a value, a citation, a link...)."""
    if not isinstance(name, str) or not isinstance(content, str):
        raise TypeError("name and content: expected strings")
    if name in (
        "glue",
        "glue:",
        "glue:text",
        "glue:any",
        "glue:md",
    ):
        key, _, fmt = content.strip().partition(":")
        key = key.split("::")[-1]
        return _glue_value(ctx, key, fmt)
    if name == "eval":
        parsed = _eval_glue_key(content)
        if parsed is None:
            ctx.warnings.append(
                f"{ctx.docname}: {{eval}} `{content}` has no value outside a kernel"
            )
            return f"`{content}`"
        return _glue_value(ctx, *parsed)
    if name.startswith("cite"):
        keys = [k.strip() for k in content.split(",") if k.strip()]
        bib = ctx.bibliography
        parts_t, parts_p = [], []
        for key in keys:
            if bib is None or key not in bib.data.entries:
                ctx.warnings.append(
                    f"{ctx.docname}: citation {key!r} not in the bibliography"
                )
                parts_t.append(key)
                parts_p.append(key)
                continue
            ctx.cited.append(key)
            parts_t.append(f"{bib.authors(key)} ({bib.year(key)})")
            parts_p.append(f"{bib.authors(key)}, {bib.year(key)}")
        if name in ("cite:p", "cite:ps", "cite"):
            return "(" + "; ".join(parts_p) + ")"
        if name == "cite:year":
            return ", ".join(
                bib.year(k) if bib and k in bib.data.entries else k for k in keys
            )
        if name == "cite:author":
            return ", ".join(
                bib.authors(k) if bib and k in bib.data.entries else k for k in keys
            )
        return ", ".join(parts_t)
    if name in ("prf:ref", "ref", "numref", "eq", "math:numref"):
        text, label = _role_text(content)
        target = ctx.index.targets.get(label)
        if target is None:
            ctx.warnings.append(f"{ctx.docname}: reference {label!r} not found")
            return text or label
        if name == "numref" and text and ("%s" in text or "{number}" in text):
            text = text.replace("%s", target.number or "").replace(
                "{number}", target.number or ""
            )
        return _md_link(text or target.text(), ctx.link(target.docname, label))
    if name == "doc":
        text, target = _role_text(content)
        doc = (
            os.path.normpath(os.path.join(os.path.dirname(ctx.docname), target))
            if not target.startswith("/")
            else target.lstrip("/")
        )
        doc = (
            Path(doc).with_suffix("").as_posix()
            if doc.endswith((".md", ".ipynb"))
            else doc
        )
        return _md_link(text or ctx.index.titles.get(doc, doc), ctx.link(doc))
    if name == "chapter":
        text, number = _role_text(content)
        doc = next(
            (
                d
                for d in ctx.index.titles
                if re.match(rf"^chapters/0*{re.escape(number)}_", d)
            ),
            None,
        )
        label = text or f"chapter {number}"
        return _md_link(label, ctx.link(doc)) if doc else label
    if name == "claim":
        text, claim_id = _role_text(content)
        return _md_link(
            text or f"claim {claim_id}",
            ctx.link("chapters/ledger", f"claim-{claim_id}"),
        )
    if re.match(r"^(py:)?(func|meth|class|mod|attr|data|obj|exc)$", name):
        text, target = _role_text(content)
        target = target.lstrip("~")
        shown = text or (target + ("()" if name.endswith(("func", "meth")) else ""))
        parts = target.split(".")
        page = next(
            (
                f"chapters/api/{parts[i]}"
                for i in range(len(parts) - 1, 0, -1)
                if f"chapters/api/{parts[i]}" in ctx.index.titles
            ),
            None,
        )
        code = f"`{shown}`"
        return _md_link(code, ctx.link(page, target)) if page else code
    if name == "math":
        return f"${expand_macros(content, ctx.macros)}$"
    if name in ("sub", "sup"):
        return f"<{name}>{html.escape(content)}</{name}>"
    if name in (
        "abbr",
        "term",
        "kbd",
        "dfn",
        "guilabel",
        "menuselection",
        "download",
        "file",
        "samp",
        "command",
        "program",
    ):
        text, _ = _role_text(content)
        return text or content
    ctx.warnings.append(f"{ctx.docname}: unknown role {{{name}}}, shown as its text")
    return content


def _flex(text: str) -> str:
    return r"\s+".join(re.escape(part) for part in text.split())


def _inline_edits(
    token, source: str, start: int, end: int, ctx: Context
) -> list[tuple[int, int, str]]:
    """The edits of one inline token: its roles converted, its formulas' macros expanded."""
    edits = []
    cursor = start
    for child in token.children or []:
        if child.type == "myst_role":
            pattern = re.compile(
                r"\{"
                + re.escape(child.meta["name"])
                + r"\}(`+)"
                + _flex(child.content)
                + r"\1"
                if child.content.strip()
                else r"\{" + re.escape(child.meta["name"]) + r"\}(`+)\s*\1"
            )
            m = pattern.search(source, cursor, end)
            if m is None:
                ctx.warnings.append(
                    f"{ctx.docname}: role {{{child.meta['name']}}} not located"
                )
                continue
            edits.append(
                (
                    m.start(),
                    m.end(),
                    convert_role(child.meta["name"], child.content, ctx),
                )
            )
            cursor = m.end()
        elif child.type == "code_inline":
            pattern = re.compile(
                re.escape(child.markup)
                + r"\s*"
                + _flex(child.content)
                + r"\s*"
                + re.escape(child.markup)
            )
            m = pattern.search(source, cursor, end)
            if m is not None:
                cursor = m.end()
        elif child.type in ("math_inline", "math_inline_double"):
            delimiter = "$$" if child.type == "math_inline_double" else "$"
            spelled = delimiter + child.content + delimiter
            at = source.find(spelled, cursor, end)
            if at < 0:
                continue
            expanded = expand_macros(child.content, ctx.macros)
            if expanded != child.content:
                edits.append(
                    (
                        at,
                        at + len(spelled),
                        delimiter + expanded + delimiter,
                    )
                )
            cursor = at + len(spelled)
    return edits


def _starts_block(text: str) -> bool:
    first = text.lstrip("\n").split("\n", 1)[0].lstrip()
    return (
        bool(
            re.match(
                r"^(\$\$|[-*+] |\d+[.)] |#|>|\||```|~~~|:::|\\begin|<)",
                first,
            )
        )
        or not first
    )


def _titled(title: str, body: str) -> str:
    """A bold title, run into the body's first paragraph unless the body starts with a block."""
    if not body.strip():
        return title
    if _starts_block(body):
        return f"{title}\n\n{body}"
    return f"{title} {body.lstrip()}"


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))


def convert_directive(
    name: str, arg: str, options: dict, body: str, ctx: Context
) -> str:
    """The plain Markdown of one MyST directive (its body converted by :func:`convert_markdown`)."""
    if not isinstance(name, str) or not isinstance(arg, str):
        raise TypeError("name and arg: expected strings")
    if not isinstance(options, dict):
        raise TypeError(f"options: expected a dict, got {type(options).__name__}")
    if name in DROPPED_DIRECTIVES:
        return ""
    if name in ("code-block", "code", "sourcecode", "code-cell"):
        return f"```{arg}\n{body}\n```"
    if name in ("math",):
        return f"$$\n{expand_macros(body, ctx.macros)}\n$$"
    if name in (
        "glue",
        "glue:",
        "glue:any",
        "glue:text",
        "glue:md",
    ):
        key, _, fmt = arg.partition(":")
        return _glue_value(ctx, key, fmt)
    kind = name.split(":", 1)[1] if name.startswith("prf:") else None
    # this directive's number first: the ones in its body come after it
    number = None
    if kind in PROOF_KINDS:
        number = ctx.index.statements.get((ctx.docname, ctx.occurrence))
        ctx.occurrence += 1
    elif name == "figure":
        numbers = ctx.index.figures.get(ctx.docname, [])
        if ctx.figure_occurrence < len(numbers):
            number = numbers[ctx.figure_occurrence]
        ctx.figure_occurrence += 1
    inner = convert_markdown(body, ctx) if body else ""
    arg_md = convert_markdown(arg, ctx).strip() if arg else ""
    if kind in PROOF_KINDS:
        if number is None and "nonumber" not in options:
            ctx.warnings.append(f"{ctx.docname}: {name} not in the book's index")
        head = PROOF_KINDS[kind] + (f" {number}" if number else "")
        head += f" ({arg_md})" if arg_md else ""
        return _titled(f"**{head}.**", inner)
    if kind == "proof":
        head = f"*Proof ({arg_md}).*" if arg_md else "*Proof.*"
        text = _titled(head, inner)
        return text + ("\n\n∎" if _ends_in_block(text) else " ∎")
    if name == "exercise":
        label = options.get("label")
        target = ctx.index.targets.get(label) if label else None
        number = target.number if target else None
        if number:
            head = f"Exercise {number}" + (f" ({arg_md})" if arg_md else "")
        else:
            head = f"Exercise {arg_md}".strip()
        return _titled(f"**{head}.**", inner)
    if name in ("solution", "solution-start"):
        target = ctx.index.targets.get(arg.strip())
        what = target.text() if target else arg.strip()
        what = convert_markdown(what, ctx).strip() if target else what
        return _titled(f"**Solution to {what}.**", inner)
    if name in ADMONITIONS:
        title = arg_md or ADMONITIONS[name] or name.capitalize()
        return _quoted(_titled(f"**{title}.**", inner))
    if name in ("figure", "image"):
        alt = str(options.get("alt", "")) or ("figure" if name == "figure" else "image")
        path = _relocate(arg, ctx)
        image = f"![{alt}]({path})"
        if name == "image":
            return image
        caption = inner.strip()
        head = f"Figure {number}." if number else "Figure."
        return f"{image}\n\n*{head}* {caption}".rstrip()
    ctx.warnings.append(f"{ctx.docname}: directive {{{name}}} shown as a blockquote")
    title = arg_md or name
    return _quoted(_titled(f"**{title}.**", inner))


def _ends_in_block(text: str) -> bool:
    last = text.rstrip().rsplit("\n", 1)[-1].strip()
    return last in ("$$", "```") or last.startswith(("- ", "* ", "|", "\\end"))


def _relocate(path: str, ctx: Context) -> str:
    if re.match(r"^[a-z]+:", path) or ctx.source_dir is None or ctx.out_dir is None:
        return path
    return Path(os.path.relpath(ctx.source_dir / path, ctx.out_dir)).as_posix()


def convert_markdown(text: str, ctx: Context) -> str:
    """MyST Markdown ``text`` as plain Markdown: directives, roles, macros and comments converted."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a string, got {type(text).__name__}")
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx: expected a Context, got {type(ctx).__name__}")
    tokens = _parse(text)
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def span(m):
        return offsets[m[0]], min(offsets[min(m[1], len(lines))], len(text) + 1)

    edits: list[tuple[int, int, str]] = []
    for token in tokens:
        if token.map is None:
            continue
        start, end = span(token.map)
        if token.type in ("fence", "colon_fence"):
            parts = split_directive(token.info, token.content)
            if parts is None:
                continue
            indent = re.match(r"^\s*", lines[token.map[0]])[0]
            new = convert_directive(*parts, ctx)
            new = "\n".join(indent + line if line else line for line in new.split("\n"))
            edits.append((start, end, new + "\n" if new else ""))
        elif token.type in (
            "myst_line_comment",
            "myst_target",
            "myst_block_break",
            "front_matter",
        ):
            edits.append((start, end, ""))
        elif token.type == "math_block" or token.type == "math_block_label":
            segment = text[start:end]
            expanded = expand_macros(token.content, ctx.macros)
            if token.type == "math_block_label":
                # the label's "(label)" after the closing $$ is for Sphinx only
                segment = (
                    re.sub(
                        r"\$\$\s*\([^()]*\)\s*$",
                        "$$",
                        segment.rstrip("\n"),
                    )
                    + "\n"
                )
            if expanded != token.content and token.content in segment:
                segment = segment.replace(token.content, expanded, 1)
            edits.append((start, end, segment))
        elif token.type == "amsmath":
            expanded = expand_macros(token.content, ctx.macros)
            edits.append((start, end, f"$$\n{expanded}\n$$\n"))
        elif token.type == "inline":
            edits.extend(_inline_edits(token, text, start, min(end, len(text)), ctx))
    out = text
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:start] + new + out[end:]
    # the lines left out leave runs of blank lines
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip("\n")


def _is_macro_cell(cell) -> bool:
    """The macro cell (:func:`booktools.markup.is_macro_cell`), or a cell of MyST front matter with macros."""
    return is_macro_cell(cell) or (
        cell.cell_type == "markdown" and bool(re.match(r"^---\s*\nmath:", cell.source))
    )


#: a claim record as ``rnnlib.claims.check`` shows it: ``claim <id> (<verdict>): <figure>``
_RECORD = re.compile(r"^claim (?P<id>\S+) \((?P<verdict>[^()]+)\):")


def results_markdown(executed: nbformat.NotebookNode, ctx: Context) -> str | None:
    """The chapter's results box in Markdown (the HTML page's "What this chapter checks").

    One line per claim the execution checked (its records, in the order they ran): the
    verdict in bold, the claim's text with its formulas as math, "(our reconstruction)"
    or "(our heuristic)" where the claim is ours, and links to the check's cell and the
    claim's ledger row in the HTML book. ``None`` when the execution checked no claim.
    """
    from docutils.nodes import make_id

    from booktools.markup import formula_spans
    from rnnlib.claims import registry

    found: dict[str, str] = {}
    for cell in executed.get("cells", []):
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            for line in text.splitlines():
                m = _RECORD.match(line.strip())
                if m:
                    found.setdefault(m["id"], m["verdict"])
    if not found:
        return None
    claims = registry()
    counts: dict[str, int] = {}
    for verdict in found.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    lines = [
        f"**What this chapter checks: {len(found)} claim"
        f"{'s' if len(found) != 1 else ''} ({summary})**",
        "",
    ]
    for claim_id, verdict in found.items():
        claim = claims.get(claim_id)
        text = claim.text if claim else claim_id
        out, pos = [], 0
        for start, end, tex in formula_spans(text):
            out += [text[pos:start], f"${tex}$"]
            pos = end
        text = "".join([*out, text[pos:]])
        ours = (
            f" (our {claim.kind})"
            if claim and claim.kind != "paper" and f"our {claim.kind}" not in text
            else ""
        )  # once: a text that already says "(our heuristic)" keeps its own
        check = _md_link("the check", ctx.link(ctx.docname, f"check-{claim_id}"))
        row = _md_link(
            "ledger",
            ctx.link("chapters/ledger", make_id(f"claim-{claim_id}")),
        )
        lines.append(f"- **{verdict}**: {text}{ours} ({check}, {row})")
    return "\n".join(lines)


def portable_notebook(
    nb: nbformat.NotebookNode,
    ctx: Context,
    executed: nbformat.NotebookNode | None = None,
    source_url: str | None = None,
    *,
    results: bool = True,
) -> nbformat.NotebookNode:
    """The portable copy of ``nb`` (a new notebook): plain Markdown cells, code cells with ``executed``'s outputs.

    ``results``: open with the chapter's results box (:func:`results_markdown`), which
    links to the ledger's rows (the book's edition; the student edition has none).

    ``executed`` is an execution of ``nb`` with the same cells (the build's): its
    outputs are put into the copy's code cells, and its glued values into the
    prose (when ``ctx.values`` is empty). ``source_url``: the chapter's page in the
    HTML book, named in a first note cell.
    """
    if not isinstance(nb, dict) or "cells" not in nb:
        raise TypeError("nb: expected a notebook (nbformat.NotebookNode)")
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx: expected a Context, got {type(ctx).__name__}")
    if executed is not None and len(executed.get("cells", [])) != len(nb.cells):
        raise ValueError(
            f"executed: expected an execution of the same {len(nb.cells)} cells, got {len(executed.get('cells', []))}"
        )
    out = nbformat.from_dict(nb)
    if executed is not None and not ctx.values:
        ctx.values = glued_values(executed)
    macros = dict(ctx.macros)
    for cell in out.cells:
        if _is_macro_cell(cell):
            # the notebook's own macros (its front matter), where the book has none of that name
            for name, body in macros_of_front_matter(cell.source).items():
                n_args = max(
                    (int(k) for k in re.findall(r"#([1-9])", body)),
                    default=0,
                )
                macros.setdefault(name, [body, n_args] if n_args else body)
    ctx.macros = macros
    cells = []
    for i, cell in enumerate(out.cells):
        if cell.cell_type == "markdown":
            if _is_macro_cell(cell) or "remove-cell" in cell.metadata.get("tags", []):
                continue
            cell.source = convert_markdown(cell.source, ctx)
            if cell.source.strip():
                cells.append(cell)
            continue
        if cell.cell_type == "code":
            if executed is not None:
                ran = executed.cells[i]
                cell.outputs = [
                    o for o in ran.get("outputs", []) if not _is_glue_record(o)
                ]
                cell.execution_count = ran.get("execution_count")
            else:
                cell.outputs = [
                    o for o in cell.get("outputs", []) if not _is_glue_record(o)
                ]
            if HIDDEN_OUTPUT_TAGS & set(cell.metadata.get("tags", [])):
                # the book hides these outputs (a stub's NotImplementedError, the install cell's pip)
                cell.outputs = []
            cells.append(cell)
            number = ctx.index.figure_cells.get((ctx.docname, i))
            caption = _figure_caption(cell)
            if caption is not None and (executed is None or _image_outputs(cell)):
                text = convert_markdown(caption, ctx)
                note = nbformat.v4.new_markdown_cell(
                    f"*Figure {number}.* {text}" if number else f"*Figure.* {text}"
                )
                note.metadata[PORTABLE_KEY] = "caption"
                note["id"] = f"portable-caption-{i}"
                cells.append(note)
            continue
        cells.append(cell)
    box = results_markdown(executed, ctx) if executed and results else None
    if box:
        first = next(
            (k for k, c in enumerate(cells) if c.cell_type == "markdown"),
            None,
        )
        results = nbformat.v4.new_markdown_cell(box)
        results.metadata[PORTABLE_KEY] = "results"
        results["id"] = "portable-results"
        cells.insert(0 if first is None else first + 1, results)
    if ctx.cited and ctx.bibliography is not None:
        refs = nbformat.v4.new_markdown_cell(
            ctx.bibliography.references_markdown(ctx.cited)
        )
        refs.metadata[PORTABLE_KEY] = "references"
        refs["id"] = "portable-references"
        cells.append(refs)
    if source_url:
        note = nbformat.v4.new_markdown_cell(
            f"*A portable copy of a chapter of the book: it reads in any notebook front end. "
            f"Its references link into [the HTML book]({source_url}).*"
        )
        note.metadata[PORTABLE_KEY] = "note"
        note["id"] = "portable-note"
        cells.insert(0, note)
    out.cells = cells
    return out


# ----------------------------------------------------------------------------- editions


def edition_root(edition: str, root: Path = ROOT) -> Path:
    """The folder of ``edition`` ("book": the root; "student": ``student/``)."""
    if edition not in EDITIONS:
        raise ValueError(
            f"edition: expected one of {sorted(EDITIONS)}, got {edition!r}"
        )
    return (Path(root) / EDITIONS[edition]).resolve()


def executions_of(
    paths: list[Path],
    edition: str,
    root: Path = ROOT,
    execute_missing: bool = True,
    jobs: int = 2,
) -> dict[Path, nbformat.NotebookNode | None]:
    """The build's execution of each notebook of ``paths`` (chapters of ``edition``): its jupyter-cache record.

    The notebooks the cache lacks are, where ``execute_missing``, first executed into
    it by ``python -m booktools.execute`` (as ``make book`` or ``make student``
    would, ``jobs`` at a time; a failed execution is reported by that command on
    standard error); a notebook that still has no record maps to None.
    """
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs: expected an integer >= 1, got {jobs!r}")
    build = edition_root(edition, root) / "_build"

    def read(path: Path) -> nbformat.NotebookNode | None:
        try:
            return executed_in_build(path, build)
        except (FileNotFoundError, LookupError):
            return None

    found = {Path(p): read(Path(p)) for p in paths}
    missing = [str(p) for p, nb in found.items() if nb is None]
    if missing and execute_missing:
        command = [sys.executable, "-m", "booktools.execute", edition]
        command += ["--jobs", str(jobs), "--root", str(root), "--only", *missing]
        subprocess.run(command, check=False)
        found.update({Path(p): read(Path(p)) for p in missing})
    return found


@dataclass
class Converted:
    """One portable copy: its source, where it was written, and what the conversion reported."""

    source: Path
    target: Path
    executed: bool
    warnings: list[str]
    constructs: int


def count_myst(text: str) -> int:
    """How many MyST constructs a Markdown text holds: directives, roles, comments, targets, bare environments."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a string, got {type(text).__name__}")
    n = 0
    stack = [_parse(text)]
    while stack:
        for token in stack.pop():
            if token.type in ("fence", "colon_fence"):
                parts = split_directive(token.info, token.content)
                if parts is not None:
                    n += 1
                    if parts[3]:
                        stack.append(_parse(parts[3]))
            elif token.type in (
                "myst_line_comment",
                "myst_target",
                "amsmath",
                "front_matter",
                "myst_block_break",
            ):
                n += 1
            elif token.type == "inline":
                n += sum(c.type == "myst_role" for c in token.children or [])
    return n


def convert_edition(
    edition: str,
    out: Path = DEFAULT_OUT,
    *,
    root: Path = ROOT,
    base_url: str = "",
    execute_missing: bool = True,
    only: list[str] | None = None,
    jobs: int = 2,
    keep_newer: bool = False,
) -> list[Converted]:
    """Write the portable copy of every chapter of ``edition`` into ``out/<edition>/``; return what was done.

    ``base_url``: the published HTML book of the edition (links go there); empty:
    relative links to the local build (``_build/html`` of the edition). ``only``:
    notebooks by file name. ``jobs``: chapters executed at once where the cache lacks
    some. ``keep_newer``: leave a copy that is newer than its chapter as it is (a
    reader's work in it, ``make lab PORTABLE=1``).
    """

    eroot = edition_root(edition, root)
    if not (eroot / "_toc.yml").is_file():
        hint = " (make student-notebooks first)" if edition == "student" else ""
        raise FileNotFoundError(f"edition: no {edition} edition at {eroot}{hint}")
    if not isinstance(base_url, str):
        raise TypeError(f"base_url: expected a string, got {type(base_url).__name__}")
    target_dir = Path(out) / edition
    target_dir.mkdir(parents=True, exist_ok=True)
    bib_path = eroot / "references.bib"
    bibliography = Bibliography(bib_path) if bib_path.is_file() else None
    macros = book_macros(Path(root))
    notebooks = [p for p in pages(eroot) if p.suffix == ".ipynb"]
    if only:
        # a path, a file name or a stem: chapters/03_x.ipynb, 03_x.ipynb, 03_x
        wanted = {Path(o).stem for o in only}
        unknown = sorted(wanted - {p.stem for p in notebooks})
        if unknown:
            raise ValueError(
                f"only: no notebook {unknown} in the {edition} edition; "
                f"its notebooks are {[p.stem for p in notebooks]}"
            )
        notebooks = [p for p in notebooks if p.stem in wanted]
    # every chapter's execution first: the figure numbers of a page depend on the pages before it
    executions = {
        path.relative_to(eroot).with_suffix("").as_posix(): nb
        for path, nb in executions_of(
            [p for p in pages(eroot) if p.suffix == ".ipynb"],
            edition,
            root,
            execute_missing,
            jobs,
        ).items()
    }
    index = book_index(
        eroot,
        {d: e for d, e in executions.items() if e is not None},
    )
    done = []
    for path in notebooks:
        docname = path.relative_to(eroot).with_suffix("").as_posix()
        target = target_dir / path.name
        if (
            keep_newer
            and target.exists()
            and target.stat().st_mtime >= path.stat().st_mtime
        ):
            done.append(Converted(path, target, True, [], 0))
            continue
        link_base = (
            base_url
            or Path(os.path.relpath(eroot / "_build" / "html", target_dir)).as_posix()
        )
        nb = nbformat.read(path, as_version=4)
        executed = executions[docname]
        ctx = Context(
            docname=docname,
            index=index,
            bibliography=bibliography,
            macros=macros,
            values={},
            link_base=link_base,
            source_dir=path.parent,
            out_dir=target_dir,
        )
        constructs = sum(
            count_myst(c.source) for c in nb.cells if c.cell_type == "markdown"
        )
        # the results box links to the ledger's rows: the book's edition has them
        copy = portable_notebook(
            nb,
            ctx,
            executed,
            ctx.link(docname),
            results=edition == "book",
        )
        nbformat.write(copy, target)
        done.append(
            Converted(
                path,
                target,
                executed is not None,
                ctx.warnings,
                constructs,
            )
        )
    return done


# ----------------------------------------------------------------------------- the check

#: nbconvert's MathJax settings (its template configures MathJax 2), for the vendored MathJax 3,
#: without the ``noundefined`` package (which would show an undefined macro as red text).
MATHJAX_LOADER = """window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']],
        displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']],
        processEscapes: true, processEnvironments: true,
        // an undefined macro is an error, not red text (noundefined): the check must see it
        packages: {'[-]': ['noundefined']}},
  options: {ignoreHtmlClass: 'tex2jax_ignore', processHtmlClass: 'tex2jax_process'}
};
(function () {
  var s = document.createElement('script');
  s.src = document.currentScript.src.replace(/[^/]*$/, '') + 'tex-chtml.js';
  document.head.appendChild(s);
})();
"""

#: Runs in the page: waits for MathJax, then reports the rendered Markdown cells' text and problems.
PROBE_JS = r"""
const done = arguments[arguments.length - 1];
const start = Date.now();
function probe() {
  const mj = window.MathJax;
  if (!mj || !mj.startup || !mj.startup.promise) {
    if (Date.now() - start > 20000) { done({error: 'MathJax did not load'}); return; }
    setTimeout(probe, 100); return;
  }
  mj.startup.promise.then(() => {
    const found = document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownOutput');
    const cells = [];
    for (const cell of found) {
      const clone = cell.cloneNode(true);
      for (const m of clone.querySelectorAll('mjx-container, script')) m.remove();
      cells.push({
        text: clone.innerText,
        codes: Array.from(cell.querySelectorAll('pre')).map(
          (c) => ((c.querySelector('code') || c).className || '') + ' ' + c.innerText.slice(0, 80)),
        errors: Array.from(cell.querySelectorAll('mjx-merror')).map(
          (e) => e.getAttribute('data-mjx-error') || e.textContent),
      });
    }
    done({cells: cells, typeset: document.querySelectorAll('mjx-container').length});
  }).catch((e) => done({error: String(e)}));
}
probe();
"""

#: The defects the check finds in a rendered Markdown cell's text, by kind.
TEXT_DEFECTS = {
    "raw role": re.compile(
        r"\{(?:glue|eval|cite|prf:|ref\}|numref|doc\}|chapter\}|claim\}|py:|math\}|eq\})"
    ),
    "directive fence": re.compile(r"(?m)^\s*(?:`{3,}|~{3,}|:{3,})\s*\{"),
    "macro cell (YAML)": re.compile(
        r"math:\s*'?\\\\?[A-Za-z]+'?\s*:|'\\[A-Za-z]+':\s*'"
    ),
    "MyST comment": re.compile(r"(?m)^% "),
    "MyST target": re.compile(r"(?m)^\([\w.:-]+\)=\s*$"),
    "glued value missing": re.compile(
        re.escape(MISSING_VALUE) + r"|\(computed when the chapter runs\)"
    ),
    "untypeset math": re.compile(r"\$"),
}


def text_defects(text: str) -> list[str]:
    """The defects of one rendered Markdown cell's text (after MathJax), one line each: kind and excerpt."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a string, got {type(text).__name__}")
    found = []
    for kind, pattern in TEXT_DEFECTS.items():
        matches = list(pattern.finditer(text))
        # a macro cell is one defect, however many macros it lists
        for m in matches[:1] if kind == "macro cell (YAML)" else matches:
            excerpt = text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ")
            found.append(f"{kind}: ...{excerpt}...")
    return found


#: A rendered code block that is a MyST directive: its class or its first word is ``{name}``.
DIRECTIVE_CODE = re.compile(r"language-\{|^\S*\s+\{[\w:.-]+\}")


def report_defects(report: dict) -> list[str]:
    """The defects of a page from what :data:`PROBE_JS` reported: one line each, naming the Markdown cell."""
    if not isinstance(report, dict):
        raise TypeError(f"report: expected a dict, got {type(report).__name__}")
    if report.get("error"):
        return [f"page: {report['error']}"]
    problems = []
    for i, cell in enumerate(report.get("cells", []), start=1):
        problems += [f"markdown cell {i}: {p}" for p in text_defects(cell["text"])]
        problems += [
            f"markdown cell {i}: directive fence: {code.strip()[:80]}"
            for code in cell["codes"]
            if DIRECTIVE_CODE.search(code)
        ]
        problems += [f"markdown cell {i}: MathJax error: {e}" for e in cell["errors"]]
    return problems


_LINK = re.compile(r"\]\((?P<url>[^)\s]+)\)")


def broken_links(notebook: Path) -> list[str]:
    """The relative links of a portable copy's Markdown whose page or anchor the local build lacks.

    Only links into a build that exists are read (a page of a build not made yet is no
    defect of the copy: ``make book`` or ``make student`` makes it); absolute URLs are
    not followed.
    """
    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"notebook: no file {str(notebook)!r}")
    nb = nbformat.read(notebook, as_version=4)
    anchors: dict[Path, set[str]] = {}
    problems = []
    for i, cell in enumerate(
        (c for c in nb.cells if c.cell_type == "markdown"), start=1
    ):
        for m in _LINK.finditer(cell.source):
            url = m["url"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", url):
                continue
            path, _, anchor = url.partition("#")
            page = (notebook.parent / path).resolve()
            html_root = next((p for p in page.parents if p.name == "html"), None)
            if html_root is None or not html_root.is_dir():
                continue
            if not page.is_file():
                problems.append(f"markdown cell {i}: broken link: {url}")
                continue
            if anchor:
                if page not in anchors:
                    anchors[page] = set(
                        re.findall(
                            r'id="([^"]+)"',
                            page.read_text(encoding="utf-8"),
                        )
                    )
                if anchor not in anchors[page]:
                    problems.append(
                        f"markdown cell {i}: broken link: {url} (no such anchor)"
                    )
    return problems


def mathjax_dir(root: Path = ROOT) -> Path:
    """The vendored MathJax 3 (``_extra/_vendor/mathjax``, else ``node_modules/mathjax/es5``)."""
    for candidate in (
        Path(root) / "_extra" / "_vendor" / "mathjax",
        Path(root) / "node_modules" / "mathjax" / "es5",
    ):
        if (candidate / "tex-chtml.js").is_file():
            return candidate
    raise FileNotFoundError(
        f"root: no MathJax in {root}/_extra/_vendor/mathjax or node_modules/mathjax/es5 (make env, or npm ci)"
    )


def render_html(notebook: Path, site: Path) -> Path:
    """Render ``notebook`` with nbconvert's HTML exporter into ``site`` (which holds ``mathjax/``); return the page."""
    from nbconvert import HTMLExporter

    notebook, site = Path(notebook), Path(site)
    if not notebook.is_file():
        raise FileNotFoundError(f"notebook: no file {str(notebook)!r}")
    if not site.is_dir():
        raise FileNotFoundError(f"site: no folder {str(site)!r}")
    exporter = HTMLExporter(template_name="lab")
    exporter.mathjax_url = "mathjax/portable-loader.js"
    body, _ = exporter.from_notebook_node(nbformat.read(notebook, as_version=4))
    page = site / (notebook.parent.name + "-" + notebook.stem + ".html")
    page.write_text(body, encoding="utf-8")
    return page


def check_notebooks(notebooks: list[Path], root: Path = ROOT) -> dict[Path, list[str]]:
    """Render each notebook (nbconvert HTML, local MathJax), open it in headless Chromium; its defects, by notebook.

    A notebook passes when its list is empty. Raises ``FileNotFoundError`` when MathJax
    is not vendored and ``SystemExit`` when Chromium is missing (as the browser check).
    """
    import shutil

    from booktools.records import make_driver, serve

    notebooks = [Path(n) for n in notebooks]
    if not notebooks:
        raise ValueError("notebooks: expected at least one notebook")
    source = mathjax_dir(root)
    results: dict[Path, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="portable-check-") as tmp:
        site = Path(tmp)
        shutil.copytree(source, site / "mathjax", symlinks=False)
        (site / "mathjax" / "portable-loader.js").write_text(
            MATHJAX_LOADER, encoding="utf-8"
        )
        pages_ = {nb: render_html(nb, site) for nb in notebooks}
        server, base = serve(site)
        driver = make_driver()
        try:
            for nb, page in pages_.items():
                driver.get(f"{base}/{page.name}")
                report = driver.execute_async_script(PROBE_JS)
                problems = report_defects(report)
                results[nb] = problems
        finally:
            driver.quit()
            server.shutdown()
    return results


# ----------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--edition",
        choices=[*EDITIONS, "both"],
        default="both",
        help="which edition (default both; student: make student-notebooks first)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="default: portable/",
    )
    parser.add_argument(
        "--base-url",
        default="",
        help="the published HTML book of the edition (default: relative links to the local build)",
    )
    parser.add_argument(
        "--no-execute",
        action="store_true",
        help="do not execute a chapter the build's cache lacks (its numbers show as missing)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="then render and check every copy",
    )
    parser.add_argument(
        "--check-only",
        nargs="*",
        type=Path,
        metavar="NOTEBOOK",
        help="only check these notebooks (no conversion)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        metavar="NOTEBOOK",
        help="only these chapters",
    )
    parser.add_argument(
        "--install",
        action="store_true",
        help="then make each built edition's 'download .ipynb' serve its portable copies",
    )
    parser.add_argument(
        "--keep-newer",
        action="store_true",
        help="leave a copy newer than its chapter as it is (a reader's work: make lab PORTABLE=1)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="chapters executed at once where the cache lacks some",
    )
    args = parser.parse_args(argv)
    if args.check_only:
        return _report_check(args.check_only)
    editions = list(EDITIONS) if args.edition == "both" else [args.edition]
    written: list[Converted] = []
    start = time.perf_counter()
    for edition in editions:
        try:
            done = convert_edition(
                edition,
                args.out,
                base_url=args.base_url,
                execute_missing=not args.no_execute,
                only=args.only,
                jobs=args.jobs,
                keep_newer=args.keep_newer,
            )
        except (FileNotFoundError, ValueError) as exc:
            print(f"portable: {exc}", file=sys.stderr)
            return 2
        for c in done:
            print(
                f"{edition:8} {c.target.relative_to(args.out.parent) if c.target.is_relative_to(args.out.parent) else c.target}: "
                f"{c.constructs} MyST constructs converted"
                + ("" if c.executed else ", NO execution (glued values missing)")
            )
            for w in c.warnings:
                print(f"         warning: {w}")
        written += done
        if args.install:
            replaced = install_downloads(done, edition)
            print(
                f"{edition:8} downloads of the built site: {len(replaced)} of {len(done)} "
                "notebooks are now the portable copies"
            )
    print(
        f"portable: {len(written)} notebooks, {sum(c.constructs for c in written)} MyST constructs, "
        f"in {time.perf_counter() - start:.1f} s"
    )
    if args.check:
        return _report_check([c.target for c in written])
    return 0


def install_downloads(
    converted: list[Converted], edition: str, root: Path = ROOT
) -> list[Path]:
    """Make the built HTML edition's "download .ipynb" serve the portable copies; the files replaced.

    The download button of every chapter page links to the page's source notebook in
    ``_build/html/_sources/`` (the MyST source, which reads only with jupyterlab-myst);
    each copy in ``converted`` replaces its source there, where the built site has it.
    A site not built yet is left alone (nothing is replaced).
    """
    if not isinstance(converted, list) or not all(
        isinstance(c, Converted) for c in converted
    ):
        raise TypeError(
            "converted: expected a list of Converted (from convert_edition)"
        )
    base = edition_root(edition, root)
    site = base / "_build" / "html" / "_sources"
    replaced = []
    for c in converted:
        try:
            rel = Path(c.source).resolve().relative_to(base)
        except ValueError:
            continue
        target = site / rel
        if target.is_file():
            shutil.copyfile(c.target, target)
            replaced.append(target)
    return replaced


def _report_check(notebooks: list[Path]) -> int:
    start = time.perf_counter()
    results = check_notebooks(notebooks)
    for nb in results:
        results[nb] = results[nb] + broken_links(nb)
    failed = 0
    kinds: dict[str, int] = {}
    for problems in results.values():
        for p in problems:
            kind = (
                p.split(": ", 2)[1]
                if p.startswith("markdown cell")
                else p.split(":", 1)[0]
            )
            kinds[kind] = kinds.get(kind, 0) + 1
    for nb, problems in results.items():
        print(f"{nb}: {'ok' if not problems else f'{len(problems)} defect(s)'}")
        for p in problems[:20]:
            print(f"    {p}")
        failed += bool(problems)
    print(
        json.dumps(
            {
                "pages": len(results),
                "failed": failed,
                "defects": sum(len(p) for p in results.values()),
                "by_kind": kinds,
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
