"""Sphinx extension ``booktools.sphinx_ext.plaintext_docstrings``: rnnlib's docstrings verbatim on the API page.

rnnlib's docstrings are written for ``help()`` and for readers of the source:
plain text with formulas such as ``|h^(l)|`` and ``N(0, 2/m)``, which reST
would misread (``|...|`` is a substitution). This hook turns every docstring
that autodoc collects into a literal block, so the API page shows exactly the
text a reader sees in Jupyter, next to the signature autodoc renders. The block has
the class ``rnnlib-docstring``, which ``booktools.sphinx_ext.layout`` wraps at the column.
"""

from __future__ import annotations


def _literal(
    app, what, name, obj, options, lines: list[str]
) -> None:
    if not lines:
        return
    body = [
        ("    " + line) if line.strip() else "" for line in lines
    ]
    lines[:] = (
        [
            ".. code-block:: text",
            "    :class: rnnlib-docstring",
            "",
        ]
        + body
        + [""]
    )


def setup(app):
    app.setup_extension(
        "sphinx.ext.autodoc"
    )  # whatever the order of extra_extensions
    app.connect("autodoc-process-docstring", _literal)
    return {
        "version": "1.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
