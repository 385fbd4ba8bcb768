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

LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
#: an inner product ``<u, v>`` (not ``<=``, ``<-``, ``->``, ``>=``)
ANGLE = re.compile(r"<(?![=-])([^<>]*?,[^<>]*?)(?<![-=])>(?!=)")
#: signs that an inline literal is a formula
FORMULA_SIGNS = re.compile(
    r"\^|\|\||<=|>=|\bsum_|\bsqrt\(|\bprod_|\bexp\(|_\{|\|[^|]+\|"
    r"|(?<![\w.])[EP1]\[|" + ANGLE.pattern
)
#: signs that it is code: quotes around a string, Python's own operators and
#: keywords, attribute access, keyword arguments, an annotation
CODE_SIGNS = re.compile(
    r"[\"`@#$\\]|(?<![\w)'\]])'[^']*'|\*\*|==|\+=|//|::|\w: |:$"
    r"|\b(torch|np|numpy|self|None|True|False|def|return|import)\b"
    r"|[A-Za-z_]\w*\.[A-Za-z_]|(?<![{\w])[A-Za-z_]\w*=\w|, *\w+="
)
GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta kappa lambda mu nu xi rho "
    "sigma tau phi chi psi omega Gamma Delta Theta Lambda Xi Phi Psi Omega pi"
).split()
#: written ``\\log``, ``\\max`` ... wherever they stand (``inf`` is the infinity below)
FUNCTIONS = (
    "exp",
    "log",
    "sin",
    "cos",
    "arccos",
    "tanh",
    "max",
    "min",
    "sup",
    "lim",
    "det",
)
#: written ``\\operatorname{relu}`` ... where an argument follows
OPERATORS = (
    "relu",
    "diag",
    "mean",
    "Var",
    "sign",
    "ceil",
    "floor",
    "argmax",
    "argmin",
    "logit",
    "Bin",
)
#: the first part of a name that is a sum or a Greek letter with its index (``theta_jk``)
_SCRIPTED = {"sum", "prod", "lim", "grad", "eps", *GREEK}
#: an identifier of the code (``out_scale``, ``u_f_radius``, ``min_length``): upright, as one
#: word; ``He_j``, ``mean_n``, ``max_t`` are a name with an index, not an identifier
IDENTIFIER = re.compile(
    r"(?<![\\\w])(?:[A-Za-z]{2,}(?:_[A-Za-z0-9]+)*_[A-Za-z0-9]{2,}"
    r"|[A-Za-z]+(?:_[A-Za-z0-9]+){2,})(?!\w)"
)
#: what a subscript word is in TeX (``f_max``, ``lambda_inf``, ``C_eps``, ``L_rho``)
_SUBSCRIPT_TEX = {
    "inf": r"\infty",
    "eps": r"\varepsilon",
    **{f: "\\" + f for f in FUNCTIONS},
    **{g: "\\" + g for g in GREEK},
}
#: two-letter words that are words, not a product of two symbols
WORDS2 = {"lr", "is", "of", "or", "if", "on", "sd"}
#: a run of two or more words of prose inside a formula (``1[z has exactly one 1]``)
PROSE = re.compile(
    r"(?<![\\\w{])[A-Za-z]{2,}(?:'s)?(?:\s+[A-Za-z]{2,}(?:'s)?)+(?![\w{(])"
)
#: what begins a factor: after a name, TeX needs a thin space to keep the blank
_FACTOR = re.compile(
    r"[A-Za-z(]|\\(?:mathrm|sqrt|sum|nabla|langle|bar|hat|operatorname|"
    + "|".join(GREEK + list(FUNCTIONS))
    + r")(?![A-Za-z])"
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
    return bool(FORMULA_SIGNS.search(text)) and not CODE_SIGNS.search(text)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _sqrt(text: str) -> str:
    """``sqrt(...)`` -> ``\\sqrt{...}``, the argument to its matching parenthesis."""
    out, pos = [], 0
    opening = re.compile(r"(?<![\\A-Za-z])sqrt\(")
    while m := opening.search(text, pos):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        if depth:
            break
        inner = _sqrt(text[m.end() : j - 1])
        out.append(text[pos : m.start()] + r"\sqrt{" + inner + "}")
        pos = j
    out.append(text[pos:])
    return "".join(out)


def _identifiers(text: str) -> tuple[str, list[str]]:
    """``text`` with the code's identifiers replaced by placeholders (restored upright)."""
    names: list[str] = []

    def hold(m: re.Match) -> str:
        if m.group(0).split("_")[0] in _SCRIPTED:
            return m.group(0)
        names.append(m.group(0).replace("_", r"\_"))
        return f"\x00{len(names) - 1}\x00"

    return IDENTIFIER.sub(hold, text), names


def ascii_to_tex(text: str) -> str:
    """The TeX of an ASCII formula of a docstring (see the module docstring)."""
    t = _braces(text)
    t = re.sub(r"%", r"\\%", t)
    t = re.sub(r"&", r"\\&", t)
    t, names = _identifiers(t)

    def upright(word: str) -> str:
        names.append(word)
        return f"\x00{len(names) - 1}\x00"

    t = re.sub(
        r"(?<![\\A-Za-z])([A-Za-z])(bar|hat)(?![A-Za-z])",
        r"\\\2{\1}",
        t,
    )
    t = t.replace("||", r"\|")
    while ANGLE.search(t):
        t = ANGLE.sub(r"\\langle \1 \\rangle ", t)
    t = t.replace("<=", r" \le ").replace(">=", r" \ge ")
    t = t.replace("<-", r" \leftarrow ").replace("+-", r" \pm ")
    t = t.replace("!=", r" \ne ").replace("->", r" \to ")
    t = _sqrt(t)
    t = re.sub(r"(?<![\\A-Za-z])sqrt\s+(\w+)", r"\\sqrt{\1}", t)
    t = re.sub(r"\b(sum|prod)_", r"\\\1_", t)
    t = re.sub(r"\b(sum|prod)\b(?!_)", r"\\\1", t)
    # h^(l-1)^T: the transpose of h^(l-1), not a double superscript
    t = re.sub(r"(\w+'*)\^\(([^()]*)\)\^", r"{\1^{(\2)}}^", t)
    t = re.sub(r"\^\(([^()]*)\)", r"^{(\1)}", t)
    t = re.sub(r"\^\[([^\[\]]*)\]", r"^{[\1]}", t)
    t = re.sub(r"_\(([^()]*)\)", r"_{(\1)}", t)
    t = re.sub(r"\^(-?[A-Za-z0-9]+(?:\.\d+)?)", r"^{\1}", t)
    # b0, h0^(l), b0_r: an initial value's index
    t = re.sub(r"(?<![\\\w])([A-Za-z])0_(\w)", r"\1_{0,\2}", t)
    t = re.sub(r"(?<![\\\w])([A-Za-z])0(?!\w)", r"\1_0", t)
    t = re.sub(
        r"_([A-Za-z]{3,}\w*)",
        lambda m: (
            "_{"
            + (
                _SUBSCRIPT_TEX.get(m.group(1))
                or upright(r"\mathrm{" + m.group(1) + "}")
            )
            + "}"
        ),
        t,
    )
    t = re.sub(
        r"_([A-Za-z]{2}|[A-Za-z]?\d{2,}|[A-Za-z]\d)(?!\w)",
        r"_{\1}",
        t,
    )
    t = re.sub(r"\beps\b|\beps(?=_)", r"\\varepsilon", t)
    t = re.sub(r"(?<![\w.])E(?=\[|\|)", r"\\mathbb{E}", t)
    t = re.sub(r"(?<![\w.])E\s+(?=[a-z])", r"\\mathbb{E}\\, ", t)
    t = re.sub(r"(?<![\w.])P\[", r"\\mathbb{P}[", t)
    t = re.sub(r"(?<![\w.])1\[", r"\\mathbf{1}[", t)
    t = re.sub(r"(?<![\\A-Za-z])grad(?![A-Za-z])", r"\\nabla ", t)
    for g in GREEK:
        t = re.sub(rf"(?<![\\A-Za-z]){g}(?![A-Za-z])", rf"\\{g}", t)
    for f in FUNCTIONS:
        t = re.sub(rf"(?<![\\A-Za-z]){f}(?![A-Za-z])", rf"\\{f}", t)
    t = re.sub(r"\{inf\}", r"{\\infty}", t)
    t = re.sub(r"(?<![\\\w])inf\b", r"\\infty ", t)
    for f in OPERATORS:
        t = re.sub(
            rf"(?<![\\A-Za-z]){f}(?=\s*\(|_)",
            rf"\\operatorname{{{f}}}",
            t,
        )
    t = re.sub(r"\s+in\s+", r" \\in ", t)
    t = re.sub(r"\s+mod\s+", r" \\bmod ", t)
    t = re.sub(r"\s+o\s+", r" \\circ ", t)
    t = t.replace("...", r"\dots ").replace("~", r"\sim ")
    t = re.sub(r"\s+\.\s+", r" \\cdot ", t)
    t = re.sub(r"\(\.,", r"(\\cdot,", t)
    t = t.replace(" * ", r" \cdot ")
    # prose inside a formula (1[z has exactly one 1]) is text; other words
    # (PARITY, tokens, norm) upright, as the names they are
    t = PROSE.sub(lambda m: upright(r"\text{ " + m.group(0) + " }"), t)
    t = re.sub(
        r"(?<![\\{\w])[A-Za-z]{2,}(?![A-Za-z0-9{])",
        lambda m: (
            m.group(0)
            if len(m.group(0)) == 2 and m.group(0) not in WORDS2
            else upright(m.group(0))
        ),
        t,
    )
    # restore the names, upright; a name juxtaposed with a factor keeps its blank
    while "\x00" in t:
        t = re.sub(
            "\x00(\\d+)\x00",
            lambda m: (
                names[int(m.group(1))]
                if names[int(m.group(1))].startswith("\\")
                else r"\mathrm{" + names[int(m.group(1))] + "}"
            ),
            t,
        )
    t = re.sub(
        r"(\\mathrm\{[^{}]*\})\s+(?=" + _FACTOR.pattern + ")",
        r"\1\\, ",
        t,
    )
    t = re.sub(r"\s+", " ", t).strip()
    return t


#: a word of prose that carries a formula sign (``h^(l)``, ``||W||_2``, ``m^(-1/2)``)
_MATH_WORD = re.compile(r"\S*(?:\^|\|\||<=|>=|_\{|\bsqrt\(|\bsum_)\S*")
#: what may join two such words into one formula
_JOIN = re.compile(r"^(?:\s*(?:[=<>+*/~-]|<=|>=|\b[A-Za-z]\b|\b\d+(?:\.\d+)?\b)\s*)*$")


def formula_spans(text: str) -> list[tuple[int, int, str]]:
    """The ASCII formulas of a sentence: ``(start, end, tex)``, for :func:`ascii_to_tex`.

    A formula is a run of words with formula signs (:data:`_MATH_WORD`) joined by
    operators and short symbols; punctuation that closes the sentence is left out.
    A run whose TeX would not balance its braces, or that holds code, is left as text.
    """
    words = [(m.start(), m.end()) for m in _MATH_WORD.finditer(text)]
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
        while body.endswith(")") and body.count(")") > body.count("("):
            body, end = body[:-1], end - 1
        while body.startswith("(") and body.count("(") > body.count(")"):
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
    return "`" not in tex and _balanced(tex) and not _DOUBLE_SCRIPT.search(tex)


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
    if not all(_safe_tex(p) for p in pieces):
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
