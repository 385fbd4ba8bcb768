"""Sphinx extension ``booktools.sphinx_ext.plaintext_docstrings``: rnnlib's docstrings on the API page.

rnnlib's docstrings are written for ``help()`` and for readers of the source: reST
with roles (``:func:``), inline literals and formulas in ASCII inside double
back-quotes (````E|h^(l)|^2 = sum_{j <= l} |x^(j)|^2````). This hook renders them:

* an inline literal that is a formula (:func:`is_formula`: it has ``^``, ``||``,
  ``<=``, ``sum_``, ``sqrt(`` ... and no code punctuation) becomes ``:math:``, its
  ASCII translated to TeX by :func:`ascii_to_tex` (``^(l)`` -> ``^{(l)}``,
  ``||W||_2`` -> ``\\|W\\|_2``, ``<=`` -> ``\\le``, ``lambda`` -> ``\\lambda``);
* a bare ``|`` (a norm in prose, which reST would read as a substitution) is escaped;
* the result is parsed by docutils first (Sphinx's roles stood in for by literals); a
  docstring that still makes docutils warn is shown verbatim, in a literal block with
  the class ``rnnlib-docstring`` (which ``booktools.sphinx_ext.layout`` wraps at the
  column), as the whole API page was before.
"""

from __future__ import annotations

import io
import re

LITERAL = re.compile(r"``(.+?)``")
#: signs that an inline literal is a formula
FORMULA_SIGNS = re.compile(
    r"\^|\|\||<=|>=|\bsum_|\bsqrt\(|\bprod_|\bexp\(|_\{|\|[^|]+\|"
)
#: signs that it is code
CODE_SIGNS = re.compile(
    r"[\"'`\[\]:@#$\\]|\b(torch|np|numpy|self|None|True|False|def|return|import)\b"
    r"|[A-Za-z_]\w*\.[A-Za-z_]|\w=\w|, *\w+=|^\s*\w+\(\s*\w*\s*\)\s*$"
)
GREEK = (
    "alpha beta gamma delta theta lambda mu nu rho sigma tau phi psi omega "
    "Gamma Delta Theta Lambda Phi Psi Omega pi"
).split()
FUNCTIONS = (
    "exp",
    "log",
    "sin",
    "cos",
    "tanh",
    "max",
    "min",
    "sup",
    "inf",
)
OPERATORS = (
    "relu",
    "diag",
    "mean",
    "Var",
    "sign",
    "ceil",
    "floor",
    "sqrt",
    "argmax",
)


def _braces(text: str) -> str:
    """Braces after ``_`` or ``^`` group (TeX); others are a set's braces, escaped."""
    out, stack = [], []
    for i, ch in enumerate(text):
        if ch == "{":
            group = i > 0 and text[i - 1] in "_^"
            stack.append(group)
            out.append("{" if group else r"\{")
        elif ch == "}":
            group = stack.pop() if stack else False
            out.append("}" if group else r"\}")
        else:
            out.append(ch)
    return "".join(out)


def is_formula(text: str) -> bool:
    """Whether an inline literal holds a formula (math signs, no code punctuation)."""
    return bool(
        FORMULA_SIGNS.search(text)
    ) and not CODE_SIGNS.search(text)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def ascii_to_tex(text: str) -> str:
    """The TeX of an ASCII formula of a docstring (see the module docstring)."""
    t = _braces(text)
    t = re.sub(r"%", r"\\%", t)
    t = re.sub(r"&", r"\\&", t)
    t = t.replace("||", r"\|")
    t = t.replace("<=", r" \le ").replace(">=", r" \ge ")
    t = t.replace("!=", r" \ne ").replace("->", r" \to ")
    t = re.sub(r"\bsqrt\(([^()]*)\)", r"\\sqrt{\1}", t)
    t = re.sub(r"\b(sum|prod)_", r"\\\1_", t)
    t = re.sub(r"\b(sum|prod)\b(?!_)", r"\\\1", t)
    t = re.sub(r"\^\(([^()]*)\)", r"^{(\1)}", t)
    t = re.sub(r"\^(-?[A-Za-z0-9]+(?:\.\d+)?)", r"^{\1}", t)
    t = re.sub(r"_([A-Za-z]{2,}\w*|\d{2,})", r"_{\1}", t)
    t = re.sub(r"\beps\b|\beps(?=_)", r"\\varepsilon", t)
    for g in GREEK:
        t = re.sub(
            rf"(?<![\\A-Za-z]){g}(?![A-Za-z])", rf"\\{g} ", t
        )
    for f in FUNCTIONS:
        t = re.sub(rf"(?<![\\A-Za-z]){f}(?=\s*\()", rf"\\{f}", t)
    t = re.sub(r"\{inf\}|(?<=_)inf\b", r"{\\infty}", t)
    t = re.sub(r"(?<![\\\w])inf\b", r"\\infty ", t)
    for f in OPERATORS:
        t = re.sub(
            rf"(?<![\\A-Za-z]){f}(?=\s*\()",
            rf"\\operatorname{{{f}}}",
            t,
        )
    t = re.sub(r"\s+in\s+", r" \\in ", t)
    t = t.replace("...", r"\dots ").replace("~", r"\sim ")
    t = re.sub(r"\s+\.\s+", r" \\cdot ", t)
    t = t.replace(" * ", r" \cdot ")
    t = re.sub(r"\s+", " ", t).strip()
    return t


#: a word of prose that carries a formula sign (``h^(l)``, ``||W||_2``, ``m^(-1/2)``)
_MATH_WORD = re.compile(
    r"\S*(?:\^|\|\||<=|>=|_\{|\bsqrt\(|\bsum_)\S*"
)
#: what may join two such words into one formula
_JOIN = re.compile(
    r"^(?:\s*(?:[=<>+*/~-]|<=|>=|\b[A-Za-z]\b|\b\d+(?:\.\d+)?\b)\s*)*$"
)


def formula_spans(text: str) -> list[tuple[int, int, str]]:
    """The ASCII formulas of a sentence: ``(start, end, tex)``, for :func:`ascii_to_tex`.

    A formula is a run of words with formula signs (:data:`_MATH_WORD`) joined by
    operators and short symbols; punctuation that closes the sentence is left out.
    A run whose TeX would not balance its braces, or that holds code, is left as text.
    """
    words = [
        (m.start(), m.end()) for m in _MATH_WORD.finditer(text)
    ]
    runs: list[list[int]] = []
    for start, end in words:
        if runs and _JOIN.match(text[runs[-1][1] : start]):
            runs[-1][1] = end
        else:
            runs.append([start, end])
    spans = []
    for start, end in runs:
        while end > start and text[end - 1] in ".,;:":
            end -= 1
        body = text[start:end]
        # unmatched closing parenthesis: a sentence's, not the formula's
        while body.endswith(")") and body.count(")") > body.count(
            "("
        ):
            body, end = body[:-1], end - 1
        while body.startswith("(") and body.count(
            "("
        ) > body.count(")"):
            body, start = body[1:], start + 1
        if (
            not body
            or body.count("(") != body.count(")")
            or CODE_SIGNS.search(body.replace("'", ""))
        ):
            continue
        tex = ascii_to_tex(body)
        if not _safe_tex(tex):
            continue
        spans.append((start, end, tex))
    return spans


_SCRIPT = r"(?:\{[^{}]*\}|\\?\w+)"
#: ``x_t_1`` or ``a^2^3``: TeX refuses a double subscript or superscript
_DOUBLE_SCRIPT = re.compile(rf"_{_SCRIPT}_|\^{_SCRIPT}\^")


def _safe_tex(tex: str) -> bool:
    """Whether MathJax will typeset ``tex``: balanced braces, no double sub/superscript."""
    return (
        "`" not in tex
        and _balanced(tex)
        and not _DOUBLE_SCRIPT.search(tex)
    )


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
    if not _safe_tex(tex):
        return m.group(0)
    return f":math:`{tex}`"


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
                prose.append(
                    head + (":" if not head.endswith(":") else "")
                )
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
        m["level"] >= 2
        for m in doctree.findall(nodes.system_message)
    )


def _literal_block(lines: list[str]) -> list[str]:
    body = [
        ("    " + line) if line.strip() else "" for line in lines
    ]
    return (
        [
            ".. code-block:: text",
            "    :class: rnnlib-docstring",
            "",
        ]
        + body
        + [""]
    )


def _docstring(
    app, what, name, obj, options, lines: list[str]
) -> None:
    if not lines:
        return
    rendered = render(lines)
    lines[:] = (
        rendered + [""]
        if parses_cleanly(rendered)
        else _literal_block(lines)
    )


def setup(app):
    app.setup_extension(
        "sphinx.ext.autodoc"
    )  # whatever the order of extra_extensions
    app.connect("autodoc-process-docstring", _docstring)
    return {
        "version": "2.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
