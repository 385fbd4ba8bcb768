"""Sphinx extension ``booktools.sphinx_ext.latex_macros``: the book's math macros in its PDF.

The chapters' macros (``\\vx``, ``\\epsx``, ``\\norm{...}``, ...) are defined once, for
MathJax, in ``_config.yml`` (``mathjax3_config.tex.macros``). For the LaTeX builder
(``make pdf``, ``make student-pdf``) this adds the same definitions to the LaTeX
preamble (``latex_elements["preamble"]``), so the PDF and the HTML typeset the same
formulas from the same source. The HTML builders are not affected.
"""

from __future__ import annotations

from typing import Any


def latex_preamble(macros: dict[str, Any]) -> str:
    """``\\providecommand`` + ``\\renewcommand`` lines for MathJax macros (``name: body`` or ``name: [body, n]``)."""
    lines = []
    for name, body in macros.items():
        args = ""
        if isinstance(body, (list, tuple)):
            body, n = body[0], int(body[1])
            args = f"[{n}]"
        lines.append(
            f"\\providecommand{{\\{name}}}{{}}\\renewcommand{{\\{name}}}{args}{{{body}}}"
        )
    return "\n".join(lines)


def _add_macros(app, config) -> None:
    macros = (
        (getattr(config, "mathjax3_config", None) or {})
        .get("tex", {})
        .get("macros", {})
    )
    if not macros:
        return
    elements = dict(config.latex_elements or {})
    elements["preamble"] = elements.get("preamble", "") + "\n" + latex_preamble(macros)
    config.latex_elements = elements


def setup(app) -> dict[str, Any]:
    app.connect("config-inited", _add_macros)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
