"""Tables of measured numbers for the page: HTML (a table that fits the column) and text.

A chapter that prints a table with ``print`` gets lines that wrap in the column of the
book; :func:`html_table` returns an object that Jupyter and the book show as an HTML
table (its ``_repr_html_``) and a console as aligned text.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from numbers import Integral, Real

from .._validation import Int, Seq, Str, validate_params

__all__ = ["Table", "html_table"]


#: a cell that is one number (as :func:`_cell` writes it): the book's CSS never breaks it
_NUMBER = re.compile(r"[+\-\u2212]?(\d+(\.\d*)?([eE][+\-]?\d+)?|\u221e)")


class Table:
    """A table shown as HTML in a notebook and as aligned text elsewhere (see :func:`html_table`)."""

    @validate_params(caption=Str())
    def __init__(
        self,
        header: list[str],
        rows: list[list[str]],
        caption: str | None,
    ):
        self.header, self.rows, self.caption = (
            header,
            rows,
            caption,
        )

    def _repr_html_(self) -> str:
        esc = html.escape
        out = ['<table class="rnnlib-table">']
        if self.caption:
            out.append(f"<caption>{esc(self.caption)}</caption>")
        out.append(
            "<thead><tr>"
            + "".join(f"<th>{esc(h)}</th>" for h in self.header)
            + "</tr></thead><tbody>"
        )
        for row in self.rows:
            out.append(
                "<tr>"
                + "".join(
                    f'<td class="num">{esc(c)}</td>'
                    if _NUMBER.fullmatch(c)
                    else f"<td>{esc(c)}</td>"
                    for c in row
                )
                + "</tr>"
            )
        out.append("</tbody></table>")
        return "\n".join(out)

    def __repr__(self) -> str:
        cols = [self.header, *self.rows]
        widths = [max(len(r[j]) for r in cols) for j in range(len(self.header))]
        lines = [self.caption] if self.caption else []
        for r in cols:
            lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths)))
        return "\n".join(lines)


def _cell(value: object, digits: int, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, Real):
        item = getattr(value, "item", None)
        try:
            # numpy and torch scalars, integers kept as integers
            value = item() if callable(item) else float(value)
            if isinstance(value, bool) or not isinstance(value, Real):
                raise TypeError
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be a number or a string, got {type(value).__name__}"
            ) from None
    if isinstance(value, Integral):
        return str(int(value))
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} contains NaN entries")
    if math.isinf(value):
        return "\u221e" if value > 0 else "\u2212\u221e"
    return f"{value:.{digits}f}"


@validate_params(digits=Int(0), caption=Str(), header=Seq(Str(), "column titles"))
def html_table(
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    digits: int = 3,
    caption: str | None = None,
) -> Table:
    """A table of ``rows`` under ``header``: numbers with ``digits`` decimals, inf as ``∞``.

    Display it as the last expression of a cell (or with ``display``); every row
    has one cell per header entry, a string or a number (NaN is refused).
    """
    if isinstance(header, str) or not isinstance(header, Sequence):
        raise TypeError(
            f"header must be a sequence of strings, got {type(header).__name__}"
        )
    if not header or not all(isinstance(h, str) for h in header):
        raise ValueError("header must be a non-empty sequence of strings")
    if isinstance(rows, str) or not isinstance(rows, Sequence):
        raise TypeError(f"rows must be a sequence of rows, got {type(rows).__name__}")
    if caption is not None and not isinstance(caption, str):
        raise TypeError(
            f"caption must be a string or None, got {type(caption).__name__}"
        )
    cells = []
    for i, row in enumerate(rows):
        if isinstance(row, str) or not isinstance(row, Sequence):
            raise TypeError(
                f"rows[{i}] must be a sequence of cells, got {type(row).__name__}"
            )
        if len(row) != len(header):
            raise ValueError(
                f"rows[{i}] must have one entry per column ({len(header)}), got {len(row)}"
            )
        cells.append([_cell(v, digits, f"rows[{i}]") for v in row])
    return Table(list(header), cells, caption)
