"""The claims ledger: the appendix "What the book verifies", built from the executed chapters.

Every claim the book tests is registered in ``rnnlib.claims`` (one ``chapterNN`` module per
chapter); a chapter's assert cell calls ``claims.check(id, holds, figure, verdict=...)``,
which asserts and displays a record under the MIME type ``rnnlib.claims.MIME``. This module
reads those records back from the executed notebooks and turns them into a table.

Pure functions (tested in ``tests/test_ledger.py`` on fixture notebooks):

* :func:`claim_records` — the records a notebook's stored outputs hold;
* :func:`ledger_rows` — one :class:`Row` per registered claim: its verdict ("reproduced",
  ..., "cannot be tested here" for claims registered with ``untestable``, and "not yet
  tested" when its chapter left no record), the measured figures, and problems
  (a chapter that ran but never checked a claim registered for it, a claim checked in
  another chapter, contradictory verdicts);
* :func:`verdict_counts` — the summary by verdict;
* :func:`unmarked_asserts` — ``assert`` statements of a notebook's code cells that are
  neither a claim (``claims.check``) nor marked ``# implementation check``.

The Sphinx extension (``setup``; listed in ``_config.yml`` under ``sphinx: extra_extensions``):

* the role ``{claim}`<id>``` links to a claim's row and shows its verdict; the role
  ``{chapter}`N``` links to chapter N, or says "chapter N" when the book does not have it yet;
* the directive ``{claims-ledger}`` writes the ledger's rows at read time (each row has
  the anchor and label ``claim-<id>``, so other pages write ``{ref}`claim-<id>```);
  the measured figures, verdicts and the summary are filled in when the page is written,
  after every chapter has been executed and read; the page is re-read at every build;
* when a chapter notebook has been read, its claim records are taken from the page itself
  (:func:`records_from_doctree`: the outputs MyST-NB rendered, whether executed now, taken
  from the execution cache, or stored), and kept in the environment;
* it warns (an error under ``-W``) about typed measured numbers in a chapter's prose
  (:mod:`booktools.prose_numbers`), about unmarked asserts, and about the problems of
  :func:`ledger_rows`. Chapters listed in the Sphinx option ``ledger_unconverted_chapters``
  (docnames; chapters whose owners are still converting them) get these as notes instead.
"""

from __future__ import annotations

import ast
import html
import importlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnnlib.claims import MIME, VERDICTS, Claim

__all__ = [
    "CANNOT_TEST",
    "NOT_YET_TESTED",
    "ORDER",
    "Row",
    "claim_records",
    "records_from_doctree",
    "was_executed",
    "chapter_docnames",
    "ledger_rows",
    "verdict_counts",
    "unmarked_asserts",
    "claim_checks",
    "setup",
]

#: Verdict of a claim registered with ``rnnlib.claims.untestable`` (its row gives the reason).
CANNOT_TEST = "cannot be tested here"
#: Verdict of a testable claim for which no executed chapter left a record.
NOT_YET_TESTED = "not yet tested"
#: The verdicts in the order the ledger lists them.
ORDER = (*VERDICTS, CANNOT_TEST, NOT_YET_TESTED)
#: From the most to the least cautious: a claim checked twice with different verdicts gets the first.
_CAUTION = (
    "not reproduced",
    "not testable at this scale",
    "checked (closed form)",
    "reproduced in trend only",
    "reproduced",
)
IMPLEMENTATION_MARK = "# implementation check"
#: The text line ``claims.check`` displays beside its record.
_RECORD_LINE = re.compile(
    r"^claim (?P<id>\S+) \((?P<verdict>"
    + "|".join(map(re.escape, VERDICTS))
    + r")\): (?P<figure>.*)$",
    re.S,
)
PAPERS = {
    "P&G 2021": "Panigrahi & Goyal (2021)",
    "M&H 2019": "Miller & Hardt (2019)",
}
KIND_WORDS = {
    "paper": "the paper's claim",
    "reconstruction": "our reconstruction",
    "heuristic": "our heuristic",
}


# --- reading notebooks --------------------------------------------------------------------------


def _source(cell: Mapping) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def claim_records(nb: Mapping) -> list[dict]:
    """The claim records (dicts with at least ``id``, ``verdict``, ``figure``) in a notebook's outputs.

    ``nb`` is the notebook as a dict (``json.load``); records come in cell order, each with
    the key ``cell`` (the code cell's index) added. A record that is not valid JSON or lacks
    a key raises ``ValueError`` naming the cell.
    """
    records = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if MIME not in data:
                continue
            raw = data[MIME]
            try:
                record = (
                    json.loads(
                        "".join(raw)
                        if isinstance(raw, list)
                        else raw
                    )
                    if not isinstance(raw, dict)
                    else dict(raw)
                )
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"cell {i}: a claim record that is not JSON ({err})"
                ) from None
            missing = {"id", "verdict", "figure"} - set(record)
            if missing:
                raise ValueError(
                    f"cell {i}: a claim record without {sorted(missing)}"
                )
            records.append({**record, "cell": i})
    return records


def was_executed(nb: Mapping) -> bool:
    """Whether the notebook holds the results of an execution (some code cell has a count or outputs)."""
    return any(
        cell.get("cell_type") == "code"
        and (
            cell.get("execution_count") is not None
            or cell.get("outputs")
        )
        for cell in nb.get("cells", [])
    )


def chapter_docnames(docnames: Iterable[str]) -> dict[int, str]:
    """Chapter number -> docname, for documents named ``chapters/NN_title``."""
    chapters = {}
    for doc in sorted(docnames):
        match = re.search(r"(?:^|/)(\d\d)_[^/]+$", doc)
        if match:
            chapters.setdefault(int(match.group(1)), doc)
    return chapters


def _assert_spans(code: str) -> list[tuple[int, int]] | None:
    """(first, last) line of every ``assert`` statement, or None if the cell does not parse."""
    # IPython magics and shell escapes are not Python: blank them (same line numbers)
    lines = [
        "" if re.match(r"\s*[%!]", line) else line
        for line in code.split("\n")
    ]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return None
    return [
        (n.lineno, n.end_lineno or n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Assert)
    ]


def unmarked_asserts(nb: Mapping) -> list[tuple[int, int, str]]:
    """``assert`` statements of the code cells that do not end with ``# implementation check``.

    A chapter's claim is checked with ``claims.check`` (which asserts and records); a plain
    ``assert`` must say that it checks the implementation, with the comment
    ``# implementation check`` on one of its lines. Returns (cell index, line, first line).
    """
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        code = _source(cell)
        lines = code.split("\n")
        spans = _assert_spans(code)
        if (
            spans is None
        ):  # not Python: fall back to the lines that start with assert
            spans = [
                (k + 1, k + 1)
                for k, line in enumerate(lines)
                if re.match(r"\s*assert\b", line)
            ]
        for first, last in sorted(spans):
            if not any(
                IMPLEMENTATION_MARK in line
                for line in lines[first - 1 : last]
            ):
                found.append((i, first, lines[first - 1].strip()))
    return found


def claim_checks(nb: Mapping) -> int:
    """How many ``claims.check(`` calls the code cells hold."""
    return sum(
        len(re.findall(r"\bclaims\.check\(", _source(c)))
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code"
    )


# --- the ledger ----------------------------------------------------------------------------------


@dataclass
class Row:
    """One claim's row: its verdict, the measured figures (or the reason it cannot be tested)."""

    claim: Claim
    verdict: str
    figures: list[str] = field(default_factory=list)
    docname: str | None = (
        None  # the chapter that tests it, when it is in the book
    )
    problems: list[str] = field(default_factory=list)


def _statement_key(text: str) -> tuple:
    return tuple(
        int(x) if x.isdigit() else x
        for x in re.findall(r"\d+|\D+", text)
    )


def _sorted(claims: Iterable[Claim]) -> list[Claim]:
    """By paper, then chapter (claims no chapter tests last, in the order registered), statement."""

    def key(item: tuple[int, Claim]) -> tuple:
        index, claim = item
        paper = (
            list(PAPERS).index(claim.paper)
            if claim.paper in PAPERS
            else len(PAPERS)
        )
        if claim.chapter == 0:
            return (paper, 1, 0, (), index)
        return (
            paper,
            0,
            claim.chapter,
            _statement_key(claim.statement),
            index,
        )

    return [
        claim for _, claim in sorted(enumerate(claims), key=key)
    ]


def ledger_rows(
    claims: Mapping[str, Claim],
    records: Mapping[str, list[dict]],
    chapters: Mapping[int, str],
    executed: Iterable[str] = (),
) -> list[Row]:
    """One :class:`Row` per claim of ``claims``, in the ledger's order (paper, chapter, statement).

    ``records``: docname -> the claim records of that executed chapter (:func:`claim_records`);
    ``chapters``: chapter number -> docname of the chapters in the book; ``executed``: the
    docnames whose notebooks were executed (a claim of an executed chapter without a record
    is a problem: the chapter never checked it).
    """
    executed = set(executed)
    by_claim: dict[str, list[tuple[str, dict]]] = {}
    for docname, recs in records.items():
        for record in recs:
            by_claim.setdefault(record["id"], []).append(
                (docname, record)
            )
    rows = []
    for claim in _sorted(claims.values()):
        found = by_claim.get(claim.id, [])
        docname = (
            chapters.get(claim.chapter) if claim.chapter else None
        )
        if claim.untestable:
            row = Row(claim, CANNOT_TEST, [claim.untestable], None)
            if found:
                row.problems.append(
                    f"claim {claim.id} is registered as untestable but {found[0][0]} checks it"
                )
            rows.append(row)
            continue
        if not found:
            row = Row(claim, NOT_YET_TESTED, [], docname)
            if docname in executed:
                row.problems.append(
                    f"claim {claim.id} is registered for chapter {claim.chapter}, "
                    f"but {docname} ran without checking it (claims.check)"
                )
            rows.append(row)
            continue
        verdicts = {record["verdict"] for _, record in found}
        verdict = next(
            (v for v in _CAUTION if v in verdicts),
            sorted(verdicts)[0],
        )
        row = Row(
            claim,
            verdict,
            [record["figure"] for _, record in found],
            docname,
        )
        if len(verdicts) > 1:
            row.problems.append(
                f"claim {claim.id} is checked with different verdicts: {sorted(verdicts)}"
            )
        for doc in sorted({doc for doc, _ in found}):
            if doc != docname:
                row.problems.append(
                    f"claim {claim.id} is registered for chapter {claim.chapter} but checked in {doc}"
                )
        rows.append(row)
    return rows


def verdict_counts(
    rows: Iterable[Row],
) -> dict[str, dict[str, int]]:
    """verdict -> {paper: count, ..., "all": count}, for every verdict of :data:`ORDER`."""
    counts = {
        v: {**{p: 0 for p in PAPERS}, "all": 0} for v in ORDER
    }
    for row in rows:
        counts[row.verdict][row.claim.paper] = (
            counts[row.verdict].get(row.claim.paper, 0) + 1
        )
        counts[row.verdict]["all"] += 1
    return counts


# --- the Sphinx extension -----------------------------------------------------------------------

try:
    from docutils import nodes
    from docutils.parsers.rst import directives  # noqa: F401
    from sphinx import addnodes
    from sphinx.util import logging as sphinx_logging
    from sphinx.util.docutils import SphinxDirective, SphinxRole
except ImportError:  # pragma: no cover - the pure functions above work without Sphinx
    SphinxDirective = SphinxRole = object  # type: ignore[misc,assignment]
    nodes = None  # type: ignore[assignment]

_BADGE = {
    "reproduced": "success",
    "reproduced in trend only": "info",
    "checked (closed form)": "primary",
    "not reproduced": "danger",
    "not testable at this scale": "warning",
    CANNOT_TEST: "secondary",
    NOT_YET_TESTED: "light",
}


def _logger():
    return sphinx_logging.getLogger(__name__)


def _state(env) -> dict:
    if not hasattr(env, "rnnlib_ledger"):
        env.rnnlib_ledger = {
            "records": {},
            "executed": set(),
            "pages": set(),
        }
    return env.rnnlib_ledger


def _registry(config) -> dict[str, Claim]:
    return importlib.import_module(config.ledger_registry).CLAIMS


if nodes is not None:

    class ledger_cell(nodes.General, nodes.Element):
        """Placeholder for what is known only after every chapter is read (figure, verdict, summary)."""

    class ClaimsLedger(SphinxDirective):
        """``{claims-ledger}``: one table per paper, one row per registered claim."""

        has_content = False
        required_arguments = 0
        optional_arguments = 0
        #: ``:part: summary`` or ``:part: rows`` (default: both, the summary first)
        option_spec = {"part": lambda arg: (arg or "").strip()}

        def run(self) -> list:
            env = self.env
            _state(env)["pages"].add(env.docname)
            claims = _registry(env.config)
            chapters = chapter_docnames(env.found_docs)
            std = env.get_domain("std")
            part = self.options.get("part", "")
            out: list = []
            if part in ("", "summary"):
                out.append(ledger_cell("", kind="summary"))
            if part == "summary":
                return out
            # one folded table per chapter (0: the claims no chapter tests)
            for chapter in sorted(
                {c.chapter for c in claims.values()}
            ):
                mine = _sorted(
                    c
                    for c in claims.values()
                    if c.chapter == chapter
                )
                title = (
                    "Claims the book cannot test"
                    if chapter == 0
                    else f"Chapter {chapter}"
                )
                papers = ", ".join(
                    dict.fromkeys(c.paper for c in mine)
                )
                out.append(
                    nodes.raw(
                        "",
                        '<details class="claims-ledger-chapter"><summary>'
                        f"{html.escape(title)} ({papers}): {len(mine)} "
                        f"claim{'s' if len(mine) != 1 else ''}</summary>",
                        format="html",
                    )
                )
                out.append(self._table(mine, chapters, std))
                out.append(
                    nodes.raw("", "</details>", format="html")
                )
            return out

        def _table(
            self,
            claims: list[Claim],
            chapters: dict[int, str],
            std,
        ) -> nodes.table:
            headers = ("Claim", "Measured", "Verdict")
            widths = (50, 33, 17)
            table = nodes.table(
                classes=["claims-ledger", "colwidths-given"]
            )
            group = nodes.tgroup(cols=len(headers))
            table += group
            group.extend(nodes.colspec(colwidth=w) for w in widths)
            head = nodes.thead()
            head += self._row(
                [nodes.paragraph("", h) for h in headers]
            )
            group += head
            body = nodes.tbody()
            group += body
            for claim in claims:
                label = f"claim-{claim.id}".lower()
                node_id = nodes.make_id(label)
                statement = nodes.paragraph()
                statement += nodes.strong(
                    "",
                    f"{claim.paper.split()[0]} {claim.statement}",
                )
                statement += nodes.Text(": ")
                statement.extend(_with_math(claim.text))
                about = nodes.paragraph(
                    classes=["claims-ledger-about"]
                )
                about += nodes.emphasis(
                    "", f"{KIND_WORDS[claim.kind]} \u00b7 "
                )
                if claim.untestable:
                    about += nodes.emphasis(
                        "", "no chapter tests it"
                    )
                    measured = nodes.paragraph(
                        "", claim.untestable
                    )
                    verdict = _badge(CANNOT_TEST)
                else:
                    doc = chapters.get(claim.chapter)
                    if doc:
                        ref = addnodes.pending_xref(
                            "",
                            refdomain="std",
                            reftype="doc",
                            reftarget="/" + doc,
                            refexplicit=True,
                            refwarn=True,
                            refdoc=self.env.docname,
                        )
                        ref += nodes.inline(
                            "", f"chapter {claim.chapter}"
                        )
                        about += nodes.emphasis("", "tested in ")
                        about += ref
                    else:
                        about += nodes.emphasis(
                            "",
                            f"chapter {claim.chapter} (not in this build)",
                        )
                    measured = ledger_cell(
                        "", kind="figure", claim=claim.id
                    )
                    verdict = ledger_cell(
                        "", kind="verdict", claim=claim.id
                    )
                row = self._row(
                    [[statement, about], measured, verdict]
                )
                row["ids"].append(node_id)
                std.note_hyperlink_target(
                    label,
                    self.env.docname,
                    node_id,
                    f"{claim.paper} {claim.statement}",
                )
                body += row
            return table

        @staticmethod
        def _row(cells: list) -> nodes.row:
            row = nodes.row()
            for content in cells:
                entry = nodes.entry()
                entry += content
                row += entry
            return row

    class ClaimRole(SphinxRole):
        """``{claim}`<id>```: a link to the claim's ledger row, followed by its verdict."""

        def run(self):
            claims = _registry(self.config)
            claim_id = self.text.strip()
            if claim_id not in claims:
                msg = self.inliner.reporter.warning(
                    f"{{claim}} role: {claim_id!r} is not a registered claim (rnnlib.claims)",
                    line=self.lineno,
                )
                return [
                    self.inliner.problematic(
                        self.rawtext, self.rawtext, msg
                    )
                ], [msg]
            claim = claims[claim_id]
            _state(self.env)["pages"].add(
                self.env.docname
            )  # its verdict changes with any chapter
            ref = addnodes.pending_xref(
                "",
                refdomain="std",
                reftype="ref",
                reftarget=f"claim-{claim_id}".lower(),
                refexplicit=True,
                refwarn=True,
                refdoc=self.env.docname,
            )
            ref += nodes.inline(
                "", f"{claim.paper.split()[0]} {claim.statement}"
            )
            return [
                ref,
                ledger_cell(
                    "", kind="inline-verdict", claim=claim_id
                ),
            ], []

    class ChapterRole(SphinxRole):
        """``{chapter}`N```: "chapter N", a link when the book has that chapter."""

        def run(self):
            text = self.text.strip()
            if not text.isdigit():
                msg = self.inliner.reporter.warning(
                    f"{{chapter}} role: {text!r} is not a chapter number",
                    line=self.lineno,
                )
                return [
                    self.inliner.problematic(
                        self.rawtext, self.rawtext, msg
                    )
                ], [msg]
            doc = chapter_docnames(self.env.found_docs).get(
                int(text)
            )
            label = f"chapter {int(text)}"
            if doc is None:
                return [nodes.Text(label)], []
            ref = addnodes.pending_xref(
                "",
                refdomain="std",
                reftype="doc",
                reftarget="/" + doc,
                refexplicit=True,
                refwarn=True,
                refdoc=self.env.docname,
            )
            ref += nodes.inline("", label)
            return [ref], []


def _with_math(text: str) -> list:
    """``text`` with its ASCII formulas (``E||h^(l)||^2 = sum_{j<=l} ...``) as inline math."""
    from booktools.sphinx_ext.plaintext_docstrings import (
        formula_spans,
    )

    out, pos = [], 0
    for start, end, tex in formula_spans(text):
        if start > pos:
            out.append(nodes.Text(text[pos:start]))
        out.append(nodes.math(tex, tex))
        pos = end
    out.append(nodes.Text(text[pos:]))
    return out


def _badge(verdict: str):
    return nodes.paragraph(
        "",
        "",
        nodes.inline(
            "",
            verdict,
            classes=[
                "sd-badge",
                f"sd-bg-{_BADGE[verdict]}",
                f"sd-bg-text-{_BADGE[verdict]}",
            ],
        ),
    )


def _rows(app) -> list[Row]:
    env = app.env
    state = _state(env)
    return ledger_rows(
        _registry(app.config),
        state["records"],
        chapter_docnames(env.found_docs),
        state["executed"],
    )


def _summary_table(rows: list[Row]):
    counts = verdict_counts(rows)
    headers = ("Verdict", *(p.split()[0] for p in PAPERS), "All")
    table = nodes.table(
        classes=["claims-ledger-summary", "colwidths-given"]
    )
    group = nodes.tgroup(cols=len(headers))
    table += group
    group.extend(
        nodes.colspec(colwidth=w) for w in (40, 15, 15, 15)
    )
    head = nodes.thead()
    body = nodes.tbody()
    group += head
    group += body
    head += ClaimsLedger._row(
        [nodes.paragraph("", h) for h in headers]
    )
    for verdict in ORDER:
        c = counts[verdict]
        body += ClaimsLedger._row(
            [
                _badge(verdict),
                *(nodes.paragraph("", str(c[p])) for p in PAPERS),
                nodes.paragraph("", str(c["all"])),
            ]
        )
    total = {
        p: sum(counts[v][p] for v in ORDER)
        for p in (*PAPERS, "all")
    }
    body += ClaimsLedger._row(
        [
            nodes.paragraph(
                "", "", nodes.strong("", "all claims")
            ),
            *(
                nodes.paragraph(
                    "", "", nodes.strong("", str(total[p]))
                )
                for p in (*PAPERS, "all")
            ),
        ]
    )
    return table


def _fill(app, doctree, docname: str) -> None:
    cells = list(doctree.findall(ledger_cell))
    if not cells:
        return
    rows = {row.claim.id: row for row in _rows(app)}
    for cell in cells:
        kind = cell["kind"]
        if kind == "inline-verdict":
            verdict = rows[cell["claim"]].verdict
            badge = nodes.inline(
                "",
                verdict,
                classes=[
                    "claim-verdict",
                    "sd-badge",
                    f"sd-bg-{_BADGE[verdict]}",
                    f"sd-bg-text-{_BADGE[verdict]}",
                ],
            )
            cell.replace_self([nodes.Text(" "), badge])
            continue
        if kind == "summary":
            cell.replace_self(_summary_table(list(rows.values())))
            continue
        row = rows[cell["claim"]]
        if kind == "verdict":
            cell.replace_self(_badge(row.verdict))
        elif row.figures:
            cell.replace_self(
                [
                    nodes.paragraph("", figure)
                    for figure in row.figures
                ]
            )
        else:
            cell.replace_self(nodes.paragraph("", "\u2014"))


def _exec_data(env, docname: str):
    try:
        from myst_nb.sphinx_ import NbMetadataCollector
    except ImportError:  # pragma: no cover
        return None
    return NbMetadataCollector.get_exec_data(env, docname)


def _has_outputs(doctree) -> bool:
    return any(
        node.get("nb_element") == "cell_code_output"
        for node in doctree.findall(nodes.container)
    )


def records_from_doctree(doctree) -> list[dict]:
    """The claim records of a chapter page, read from its doctree as MyST-NB rendered it.

    ``claims.check`` displays each record as one ``text/plain`` line, ``claim <id>
    (<verdict>): <figure>`` (next to the JSON record, which MyST-NB does not render). The
    page's own outputs are the source: they are there whether the notebook was executed
    now, taken from jupyter-cache, or stored, whereas MyST-NB 1.4 writes its executed copy
    (``jupyter_execute/*.ipynb``) *without outputs* when it takes them from the cache.
    """
    records = []
    for node in doctree.findall(nodes.container):
        if (
            node.get("mime_type") != "text/plain"
            or node.parent is None
            or node.parent.get("nb_element") != "mime_bundle"
        ):
            continue
        match = _RECORD_LINE.match(node.astext().strip())
        if not match:
            continue
        cell = node
        while (
            cell is not None
            and cell.get("nb_element") != "cell_code"
        ):
            cell = cell.parent
        # a long record line is folded at spaces (claims._fold): join it back
        figure = " ".join(match["figure"].split())
        records.append(
            {
                **match.groupdict(),
                "figure": figure,
                "cell": None
                if cell is None
                else cell.get("cell_index"),
            }
        )
    return records


def _report(app, docname: str, message: str, subtype: str) -> None:
    if docname in set(app.config.ledger_unconverted_chapters):
        _logger().info(
            f"[ledger, unconverted chapter] {message}",
            location=docname,
        )
    else:
        _logger().warning(
            message,
            location=docname,
            type="rnnlib",
            subtype=subtype,
        )


def _read_chapter(app, doctree) -> None:
    from booktools.prose_numbers import typed_numbers

    env = app.env
    docname = env.docname
    source = Path(env.doc2path(docname))
    if source.suffix != ".ipynb":
        return
    state = _state(env)
    state["records"][docname] = records_from_doctree(doctree)
    state["executed"].discard(docname)
    if _exec_data(env, docname) is not None or _has_outputs(
        doctree
    ):
        state["executed"].add(docname)
    if (
        not chapter_docnames([docname])
        or not app.config.ledger_check_prose
    ):
        # the checks of prose and asserts are for the chapters of the book itself;
        # the student edition is derived from them (and checked through them)
        return
    nb = json.loads(source.read_text(encoding="utf8"))
    for number in typed_numbers(nb):
        _report(
            app,
            docname,
            f"typed number in the prose, {number}: glue it from the cell that computes it "
            "(CONTRIBUTING.md, 'Claims and numbers'), or allow it",
            "prose-number",
        )
    for cell, line, text in unmarked_asserts(nb):
        _report(
            app,
            docname,
            f"cell {cell}, line {line}: `{text}` is neither claims.check(...) nor marked "
            f"'{IMPLEMENTATION_MARK}'",
            "assert",
        )


def _check_consistency(app, env) -> None:
    for row in _rows(app):
        for problem in row.problems:
            doc = row.docname or next(
                iter(sorted(_state(env)["pages"])), None
            )
            if row.docname:
                _report(app, row.docname, problem, "ledger")
            else:
                _logger().warning(
                    problem,
                    location=doc,
                    type="rnnlib",
                    subtype="ledger",
                )


def _purge(app, env, docname: str) -> None:
    state = _state(env)
    state["records"].pop(docname, None)
    state["executed"].discard(docname)
    state["pages"].discard(docname)


def _merge(app, env, docnames, other) -> None:
    state, theirs = _state(env), _state(other)
    for doc in docnames:
        if doc in theirs["records"]:
            state["records"][doc] = theirs["records"][doc]
        if doc in theirs["executed"]:
            state["executed"].add(doc)
        if doc in theirs["pages"]:
            state["pages"].add(doc)


def _always_reread(app, env, added, changed, removed) -> list[str]:
    # the ledger reads the registry (Python) and every chapter: re-read it at every build
    return sorted(
        doc
        for doc in _state(env)["pages"]
        if doc in env.found_docs
    )


def setup(app) -> dict[str, Any]:
    app.add_config_value("ledger_registry", "rnnlib.claims", "env")
    app.add_config_value("ledger_unconverted_chapters", [], "env")
    app.add_config_value("ledger_check_prose", True, "env")
    app.add_node(ledger_cell)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.add_role("claim", ClaimRole())
    app.add_role("chapter", ChapterRole())
    app.connect("doctree-read", _read_chapter)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _always_reread)
    app.connect("env-check-consistency", _check_consistency)
    app.connect("doctree-resolved", _fill)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "env_version": 2,
    }
