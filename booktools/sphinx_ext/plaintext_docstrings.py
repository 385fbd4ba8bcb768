"""Sphinx extension ``booktools.sphinx_ext.plaintext_docstrings``: rnnlib's docstrings on the API page.

rnnlib's docstrings are written for ``help()`` and for readers of the source: reST
with roles (``:func:``), inline literals and formulas in ASCII inside double
back-quotes (````E|h^(l)|^2 = sum_{j <= l} |x^(j)|^2````). This hook renders them:

* an inline literal that is a formula (:func:`is_formula`: it has ``^``, ``||``,
  ``<=``, ``sum_``, ``sqrt(`` ... and no code punctuation) becomes ``:math:``, its
  ASCII translated to TeX by :func:`ascii_to_tex` (``^(l)`` -> ``^{(l)}``,
  ``||W||_2`` -> ``\\|W\\|_2``, ``<=`` -> ``\\le``, ``lambda`` -> ``\\lambda``,
  ``E[..]`` and ``1[..]`` -> expectation and indicator, ``<u, v>`` -> an inner product,
  ``xbar`` -> ``\\bar{x}``, ``sqrt(..)`` to its matching parenthesis, ``h^(l-1)^T`` -> a
  transpose; the code's identifiers (``out_scale``) upright, prose inside a formula as
  text);
* a bare ``|`` (a norm in prose, which reST would read as a substitution) is escaped;
* the result is parsed by docutils first (Sphinx's roles stood in for by literals); a
  docstring that still makes docutils warn is shown verbatim, in a literal block with
  the class ``rnnlib-docstring`` (which ``booktools.sphinx_ext.layout`` wraps at the
  column), as the whole API page was before.
"""

from __future__ import annotations

import io
import re

from booktools.markup import ascii_to_tex, is_formula, safe_tex

LITERAL = re.compile(r"``(.+?)``", re.DOTALL)


def _escape_bars(text: str) -> str:
    """``|`` outside inline literals and roles escaped (a norm in prose, not a substitution)."""
    out, pos = [], 0
    for m in re.finditer(r"``.+?``|:[\w:]+:`[^`]*`|`[^`]*`", text):
        out.append(text[pos : m.start()].replace("|", r"\|"))
        out.append(m.group(0))
        pos = m.end()
    out.append(text[pos:].replace("|", r"\|"))
    return "".join(out)


def _math_literal(m: re.Match) -> str:
    body = m.group(1)
    if not is_formula(body):
        return m.group(0)
    tex = ascii_to_tex(body)
    if not safe_tex(tex):
        return m.group(0)
    return " ".join(f":math:`{piece}`" for piece in _breakable(tex))


#: where a long inline formula may break: before a relation or a binary + or -
_BREAK = re.compile(r" (?==|\\le |\\ge |\\to |\+ |- )")


def _breakable(tex: str, width: int = 48) -> list[str]:
    """``tex`` cut, where longer than ``width``, before its top-level relations and binary
    signs: pieces of inline math the browser may wrap between (one piece cannot wrap)."""
    if len(tex) <= width:
        return [tex]
    cuts, depth = [0], 0
    for i, ch in enumerate(tex):
        depth += {
            "{": 1,
            "(": 1,
            "[": 1,
            "}": -1,
            ")": -1,
            "]": -1,
        }.get(ch, 0)
        depth += tex.startswith("\\langle", i) - tex.startswith("\\rangle", i)
        if depth == 0 and _BREAK.match(tex, i) and i - cuts[-1] > 12:
            cuts.append(i + 1)
    pieces = [tex[a:b].strip() for a, b in zip(cuts, cuts[1:] + [len(tex)])]
    if not all(safe_tex(p) for p in pieces):
        return [tex]
    return [p for p in pieces if p]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def render(lines: list[str]) -> list[str]:
    """The reST of a docstring: formulas as math, bare bars escaped (literal blocks as they are)."""
    out, block_indent, prose = [], None, []

    def flush():
        if prose:
            text = LITERAL.sub(_math_literal, "\n".join(prose))
            out.extend(_escape_bars(text).split("\n"))
            prose.clear()

    for line in lines:
        if block_indent is not None:
            if not line.strip() or _indent(line) > block_indent:
                out.append(line)
                continue
            block_indent = None
        if line.rstrip().endswith("::"):
            # a literal block: shown as a block that wraps at the column (rnnlib-docstring)
            head = line.rstrip()[:-2].rstrip()
            if head.strip():
                prose.append(head + (":" if not head.endswith(":") else ""))
            flush()
            block_indent = _indent(line)
            pad = " " * block_indent
            out.extend(
                [
                    "",
                    f"{pad}.. code-block:: text",
                    f"{pad}   :class: rnnlib-docstring",
                ]
            )
            continue
        prose.append(line)
    flush()
    return _displays(out)


def _displays(lines: list[str]) -> list[str]:
    """A formula alone on a line that opens a paragraph becomes a display (it would not wrap)."""
    out = []
    for i, line in enumerate(lines):
        m = re.fullmatch(r"(\s*):math:`([^`]*)`(\s*)", line)
        starts = i == 0 or not lines[i - 1].strip()
        if m and starts and len(m.group(2)) > 40:
            ind = m.group(1)
            out += [
                f"{ind}.. math::",
                "",
                f"{ind}   {m.group(2)}",
                "",
            ]
        else:
            out.append(line)
    return out


def parses_cleanly(lines: list[str]) -> bool:
    """Whether docutils parses ``lines`` without a warning (Sphinx's roles replaced by literals)."""
    from docutils.core import publish_doctree
    from docutils.utils import SystemMessage

    text = "\n".join(lines)
    text = re.sub(r":(?!math:)[\w:.-]+:`([^`]*)`", r"``\1``", text)
    text = re.sub(r":math:`[^`]*`", "x", text)
    stream = io.StringIO()
    try:
        doctree = publish_doctree(
            text,
            settings_overrides={
                "report_level": 2,
                "halt_level": 5,
                "warning_stream": stream,
                "file_insertion_enabled": False,
                "raw_enabled": False,
            },
        )
    except (SystemMessage, Exception):
        return False
    from docutils import nodes

    return not stream.getvalue().strip() and not any(
        m["level"] >= 2 for m in doctree.findall(nodes.system_message)
    )


def _literal_block(lines: list[str]) -> list[str]:
    body = [("    " + line) if line.strip() else "" for line in lines]
    return (
        [
            ".. code-block:: text",
            "    :class: rnnlib-docstring",
            "",
        ]
        + body
        + [""]
    )


def _docstring(app, what, name, obj, options, lines: list[str]) -> None:
    if not lines:
        return
    rendered = render(lines)
    lines[:] = rendered + [""] if parses_cleanly(rendered) else _literal_block(lines)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")  # whatever the order of extra_extensions
    app.connect("autodoc-process-docstring", _docstring)
    return {
        "version": "2.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
