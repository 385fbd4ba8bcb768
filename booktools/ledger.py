"""The claims ledger: the appendix "What the book verifies", built from the registry and the executed chapters.

The registry ``chapters/claims.yml`` (read by ``rnnlib.claims.registry``) lists every claim
of the two papers; a chapter's assert cell calls ``claims.check(id, holds, figure, ...)``,
which asserts and displays the line ``claim <id> (<verdict>): <figure>``. This Sphinx
extension (listed in ``_config.yml`` under ``sphinx: extra_extensions``) reads those lines
back from each chapter page as MyST-NB rendered it, and turns registry and lines into tables:

* :func:`records_from_doctree` — the records of a chapter page;
* :func:`ledger_rows` — one :class:`Row` per registered claim: its verdict ("reproduced",
  ..., "cannot be tested here" for a claim registered with ``untestable``, "not yet tested"
  when its chapter left no record), the measured figures, and problems: a chapter that ran
  without checking a claim registered for it, a claim checked in another chapter or with
  contradictory verdicts, an untestable claim checked; each problem is a build warning (an
  error under ``-W``);
* :func:`verdict_counts` — the summary by verdict, and :func:`kind_counts` — one verdict's
  count split by kind (the summary splits "not reproduced" into the paper's claims, our
  reconstructions and our heuristics);
* the directive ``{claims-ledger}`` (``:part: summary`` or ``rows``) writes the rows at read
  time, each with the anchor and label ``claim-<id>``; figures, verdicts and the summary are
  filled in when the page is written, after every chapter has been read (the page is re-read
  at every build); the role ``{claim}`<id>``` links to a row and shows its verdict, and
  ``{chapter}`N``` links to chapter N, or says "chapter N" when the book does not have it.

The Sphinx option ``ledger_registry`` names the registry file, relative to the book's
source folder (default: ``rnnlib.claims.registry_path()``, the checkout's own file). The
checks of a chapter's source (typed numbers in prose, unmarked asserts) are
:mod:`booktools.chapter_lint`'s. Tested in ``tests/test_ledger.py`` on a fixture book.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ConfigError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from rnnlib.claims import (
    KINDS,
    PAPERS,
    VERDICTS,
    Claim,
    registry,
    registry_path,
)

__all__ = [
    "CANNOT_TEST",
    "NOT_YET_TESTED",
    "ORDER",
    "Row",
    "records_from_doctree",
    "chapter_docnames",
    "ledger_rows",
    "verdict_counts",
    "kind_counts",
    "SPLIT_BY_KIND",
    "setup",
]

#: Verdict of a claim registered with ``untestable`` (its row gives the reason).
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
#: The line ``claims.check`` displays (folded at spaces when long).
_RECORD_LINE = re.compile(
    r"^claim (?P<id>\S+) \((?P<verdict>"
    + "|".join(map(re.escape, VERDICTS))
    + r")\): (?P<figure>.*)$",
    re.S,
)
#: The verdicts whose count the summary splits by kind (a failed paper claim weighs more than a
#: failed heuristic of ours).
SPLIT_BY_KIND = ("not reproduced",)
#: The kinds as the summary's split names them.
KIND_PLURALS = {
    "paper": "the papers' own claims",
    "reconstruction": "our reconstructions",
    "heuristic": "our heuristics",
}
KIND_WORDS = {
    "paper": "the paper's claim",
    "reconstruction": "our reconstruction",
    "heuristic": "our heuristic",
}


def chapter_docnames(docnames: Iterable[str]) -> dict[int, str]:
    """Chapter number -> docname, for documents named ``chapters/NN_title``."""
    chapters = {}
    for doc in sorted(docnames):
        match = re.search(r"(?:^|/)(\d\d)_[^/]+$", doc)
        if match:
            chapters.setdefault(int(match.group(1)), doc)
    return chapters


# --- the ledger ----------------------------------------------------------------------------------


@dataclass
class Row:
    """One claim's row: its verdict, the measured figures (or the reason it cannot be tested)."""

    claim: Claim
    verdict: str
    figures: list[str] = field(default_factory=list)
    docname: str | None = None  # the chapter that tests it, when it is in the book
    problems: list[str] = field(default_factory=list)


def _statement_key(text: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.findall(r"\d+|\D+", text))


def _sorted(claims: Iterable[Claim]) -> list[Claim]:
    """By paper, then chapter (claims no chapter tests last, in the order registered), statement."""

    def key(item: tuple[int, Claim]) -> tuple:
        index, c = item
        statement = _statement_key(c.statement) if c.chapter else ()
        return (
            PAPERS.index(c.paper),
            not c.chapter,
            c.chapter,
            statement,
            index,
        )

    return [claim for _, claim in sorted(enumerate(claims), key=key)]


def ledger_rows(
    claims: Mapping[str, Claim],
    records: Mapping[str, list[dict]],
    chapters: Mapping[int, str],
    executed: Iterable[str] = (),
) -> list[Row]:
    """One :class:`Row` per claim of ``claims``, in the ledger's order (paper, chapter, statement).

    ``records``: docname -> the claim records of that chapter (:func:`records_from_doctree`);
    ``chapters``: chapter number -> docname of the chapters in the book; ``executed``: the
    docnames whose notebooks were executed (a claim of an executed chapter without a record
    is a problem: the chapter never checked it).
    """
    executed = set(executed)
    by_claim: dict[str, list[tuple[str, dict]]] = {}
    for docname, recs in records.items():
        for record in recs:
            by_claim.setdefault(record["id"], []).append((docname, record))
    rows = []
    for claim in _sorted(claims.values()):
        found = by_claim.get(claim.id, [])
        docname = chapters.get(claim.chapter) if claim.chapter else None
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
    counts = {v: {**{p: 0 for p in PAPERS}, "all": 0} for v in ORDER}
    for row in rows:
        counts[row.verdict][row.claim.paper] += 1
        counts[row.verdict]["all"] += 1
    return counts


def kind_counts(
    rows: Iterable[Row], verdict: str = "not reproduced"
) -> dict[str, dict[str, int]]:
    """kind -> {paper: count, ..., "all": count} of the rows with ``verdict``, for every kind of :data:`KINDS`."""
    if verdict not in ORDER:
        raise ValueError(f"verdict must be one of {ORDER}, got {verdict!r}")
    counts = {k: {**{p: 0 for p in PAPERS}, "all": 0} for k in KINDS}
    for row in rows:
        if row.verdict == verdict:
            counts[row.claim.kind][row.claim.paper] += 1
            counts[row.claim.kind]["all"] += 1
    return counts


# --- the Sphinx extension -----------------------------------------------------------------------

_BADGE = {
    "reproduced": "success",
    "reproduced in trend only": "info",
    "checked (closed form)": "primary",
    "not reproduced": "danger",
    "not testable at this scale": "warning",
    CANNOT_TEST: "secondary",
    NOT_YET_TESTED: "light",
}


class ledger_cell(nodes.General, nodes.Element):
    """Placeholder for what is known only after every chapter is read (figure, verdict, summary)."""


def _state(env) -> dict:
    if not hasattr(env, "rnnlib_ledger"):
        env.rnnlib_ledger = {
            "records": {},
            "executed": set(),
            "pages": set(),
        }
    return env.rnnlib_ledger


def _registry(env) -> dict[str, Claim]:
    name = env.config.ledger_registry
    path = Path(env.srcdir) / name if name else registry_path()
    if path is None:
        raise ConfigError(
            "booktools.ledger: no claims registry found; set ledger_registry"
        )
    return registry(path)


def _rows(env) -> list[Row]:
    state = _state(env)
    return ledger_rows(
        _registry(env),
        state["records"],
        chapter_docnames(env.found_docs),
        state["executed"],
    )


def _xref(env, reftype: str, target: str, text: str):
    ref = addnodes.pending_xref(
        "",
        refdomain="std",
        reftype=reftype,
        reftarget=target,
        refexplicit=True,
        refwarn=True,
        refdoc=env.docname,
    )
    ref += nodes.inline("", text)
    return ref


def _badge(verdict: str, *classes: str):
    colour = _BADGE[verdict]
    return nodes.inline(
        "",
        verdict,
        classes=[
            *classes,
            "sd-badge",
            f"sd-bg-{colour}",
            f"sd-bg-text-{colour}",
        ],
    )


def _table(classes, widths, header, rows) -> nodes.table:
    """A table of ``rows`` (each a list of cells, each a node or list of nodes)."""
    table = nodes.table(classes=[*classes, "colwidths-given"])
    group = nodes.tgroup(cols=len(widths))
    table += group
    group.extend(nodes.colspec(colwidth=w) for w in widths)
    group += nodes.thead()
    group += nodes.tbody()
    for part, cells in [
        (group[-2], header),
        *[(group[-1], r) for r in rows],
    ]:
        row = nodes.row()
        for content in cells:
            entry = nodes.entry()
            entry += content
            row += entry
        part += row
    return table


def _with_math(text: str) -> list:
    """``text`` with its ASCII formulas (``E||h^(l)||^2 = sum_{j<=l} ...``) as inline math."""
    from booktools.markup import formula_spans

    out, pos = [], 0
    for start, end, tex in formula_spans(text):
        out += [nodes.Text(text[pos:start]), nodes.math(tex, tex)]
        pos = end
    return [*out, nodes.Text(text[pos:])]


class ClaimsLedger(SphinxDirective):
    """``{claims-ledger}``: the summary and one folded table per chapter, one row per claim."""

    #: ``:part: summary`` or ``:part: rows`` (default: both, the summary first)
    option_spec = {"part": lambda arg: (arg or "").strip()}

    def run(self) -> list:
        _state(self.env)["pages"].add(self.env.docname)
        claims = _registry(self.env)
        part = self.options.get("part", "")
        out: list = []
        if part in ("", "summary"):
            out.append(ledger_cell("", kind="summary"))
        if part == "summary":
            return out
        # one folded table per chapter (0: the claims no chapter tests)
        for chapter in sorted({c.chapter for c in claims.values()}):
            mine = _sorted(c for c in claims.values() if c.chapter == chapter)
            title = f"Chapter {chapter}" if chapter else "Claims the book cannot test"
            papers = ", ".join(dict.fromkeys(c.paper for c in mine))
            out.append(
                nodes.raw(
                    "",
                    '<details class="claims-ledger-chapter"><summary>'
                    f"{html.escape(title)} ({papers}): {len(mine)} "
                    f"claim{'s' if len(mine) != 1 else ''}</summary>",
                    format="html",
                )
            )
            rows = [self._row(claim) for claim in mine]
            table = _table(
                ["claims-ledger"],
                (50, 33, 17),
                [nodes.paragraph("", h) for h in ("Claim", "Measured", "Verdict")],
                rows,
            )
            for claim, row in zip(mine, table[0][-1].children):
                label = f"claim-{claim.id}".lower()
                row["ids"].append(nodes.make_id(label))
                self.env.get_domain("std").note_hyperlink_target(
                    label,
                    self.env.docname,
                    row["ids"][-1],
                    f"{claim.paper} {claim.statement}",
                )
            out += [
                table,
                nodes.raw("", "</details>", format="html"),
            ]
        return out

    def _row(self, claim: Claim) -> list:
        statement = nodes.paragraph()
        statement += nodes.strong("", f"{claim.paper.split()[0]} {claim.statement}")
        statement += [nodes.Text(": "), *_with_math(claim.text)]
        about = nodes.paragraph(classes=["claims-ledger-about"])
        about += nodes.emphasis("", f"{KIND_WORDS[claim.kind]} \u00b7 ")
        if claim.untestable:
            about += nodes.emphasis("", "no chapter tests it")
            return [
                [statement, about],
                nodes.paragraph("", claim.untestable),
                nodes.paragraph("", "", _badge(CANNOT_TEST)),
            ]
        doc = chapter_docnames(self.env.found_docs).get(claim.chapter)
        if doc:
            about += nodes.emphasis("", "tested in ")
            about += _xref(
                self.env,
                "doc",
                "/" + doc,
                f"chapter {claim.chapter}",
            )
        else:
            about += nodes.emphasis("", f"chapter {claim.chapter} (not in this build)")
        about += nodes.emphasis(
            "",
            " \u00b7 evidence: "
            + (
                f"recorded run (chapters/records/ch{claim.chapter:02d}.json, "
                "checked by a live fingerprint)"
                if claim.evidence == "recorded"
                else "live"
            ),
        )
        return [
            [statement, about],
            ledger_cell("", kind="figure", claim=claim.id),
            ledger_cell("", kind="verdict", claim=claim.id),
        ]


class _Role(SphinxRole):
    """A role that can report a malformed target."""

    def _problem(self, what: str):
        msg = self.inliner.reporter.warning(
            f"{{{self.name}}} role: {self.text.strip()!r} {what}",
            line=self.lineno,
        )
        return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]


class ClaimRole(_Role):
    """``{claim}`<id>```: a link to the claim's ledger row, followed by its verdict."""

    def run(self):
        claim = _registry(self.env).get(self.text.strip())
        if claim is None:
            return self._problem("is not a registered claim")
        # its verdict changes with any chapter: the page is re-read at every build
        _state(self.env)["pages"].add(self.env.docname)
        short = f"{claim.paper.split()[0]} {claim.statement}"
        return [
            _xref(self.env, "ref", f"claim-{claim.id}".lower(), short),
            ledger_cell("", kind="inline-verdict", claim=claim.id),
        ], []


class ChapterRole(_Role):
    """``{chapter}`N```: "chapter N", a link when the book has that chapter."""

    def run(self):
        text = self.text.strip()
        if not text.isdigit():
            return self._problem("is not a chapter number")
        label = f"chapter {int(text)}"
        doc = chapter_docnames(self.env.found_docs).get(int(text))
        if doc is None:
            return [nodes.Text(label)], []
        return [_xref(self.env, "doc", "/" + doc, label)], []


def _summary_table(rows: list[Row]) -> nodes.table:
    counts = verdict_counts(rows)
    cols = (*PAPERS, "all")

    def cell(text, strong=False):
        text = str(text)
        return nodes.paragraph(
            "",
            "",
            nodes.strong("", text) if strong else nodes.Text(text),
        )

    body = []
    for verdict in ORDER:
        body.append(
            [
                nodes.paragraph("", "", _badge(verdict)),
                *(cell(counts[verdict][p]) for p in cols),
            ]
        )
        if verdict in SPLIT_BY_KIND:
            by_kind = kind_counts(rows, verdict)
            body += [
                [
                    nodes.paragraph(
                        "",
                        f"\u2003of which {KIND_PLURALS[kind]}",
                        classes=["claims-ledger-kind"],
                    ),
                    *(cell(by_kind[kind][p]) for p in cols),
                ]
                for kind in KINDS
            ]
    body.append(
        [
            cell("all claims", True),
            *(cell(sum(counts[v][p] for v in ORDER), True) for p in cols),
        ]
    )
    header = ("Verdict", *(p.split()[0] for p in PAPERS), "All")
    return _table(
        ["claims-ledger-summary"],
        (40, *[60 // len(cols)] * len(cols)),
        [nodes.paragraph("", h) for h in header],
        body,
    )


#: The id of the cell that checks claim ``<id>`` on its chapter's page (the results box links to it).
CHECK_ANCHOR = "check-{id}"


def _results_box(app, doctree, docname: str) -> None:
    """Open a chapter page with its results: each claim it checks, its verdict, links to the check and the ledger.

    Built when the page is written (the verdicts are known after every chapter is read)
    and put after the chapter's first paragraph: a bulleted box "What this chapter
    checks: N claims (k reproduced, ...)", a dropdown whose list gives one line per
    registered claim the chapter tests, in the ledger's order.
    """
    if docname not in chapter_docnames(app.env.found_docs).values():
        return
    rows = [row for row in _rows(app.env) if row.docname == docname]
    if not rows:
        return
    ledger = next(
        (d for d in app.env.found_docs if d.endswith("ledger")),
        None,
    )
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    summary = ", ".join(
        f"{n} {verdict}"
        for verdict, n in sorted(
            counts.items(),
            key=lambda item: ORDER.index(item[0]) if item[0] in ORDER else 99,
        )
    )
    # a dropdown (sphinx-togglebutton): the title line is the summary, the list opens on a click
    box = nodes.container(
        classes=[
            "admonition",
            "tip",
            "dropdown",
            "chapter-results",
        ]
    )
    box += nodes.paragraph(
        "",
        f"What this chapter checks: {len(rows)} claim{'s' if len(rows) != 1 else ''} ({summary})",
        classes=["admonition-title"],
    )
    items = nodes.bullet_list()
    records = {r["id"]: r for r in _state(app.env)["records"].get(docname, [])}
    for row in rows:
        claim = row.claim
        para = nodes.paragraph()
        para += _badge(row.verdict, "claim-verdict")
        para += nodes.Text(" ")
        para += _with_math(claim.text)
        if claim.kind != "paper":
            para += nodes.Text(f" ({KIND_WORDS.get(claim.kind, claim.kind)})")
        if claim.id in records:
            para += nodes.Text(" ")
            para += nodes.reference(
                "",
                "the check",
                refuri="#" + CHECK_ANCHOR.format(id=claim.id),
            )
        if ledger and app.builder.format == "html":
            para += nodes.Text(", " if claim.id in records else " ")
            para += nodes.reference(
                "",
                "ledger",
                refuri=app.builder.get_relative_uri(docname, ledger)
                + f"#claim-{claim.id}".lower(),
            )
        items += nodes.list_item("", para)
    box += items
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    first = next(
        (
            i
            for i, child in enumerate(section.children)
            if isinstance(child, nodes.paragraph)
        ),
        0,
    )
    section.insert(first + 1, box)


def _fill(app, doctree, docname: str) -> None:
    _results_box(app, doctree, docname)
    cells = list(doctree.findall(ledger_cell))
    if not cells:
        return
    rows = {row.claim.id: row for row in _rows(app.env)}
    for cell in cells:
        kind, row = cell["kind"], rows.get(cell.get("claim"))
        if kind == "inline-verdict":
            new = [
                nodes.Text(" "),
                _badge(row.verdict, "claim-verdict"),
            ]
        elif kind == "summary":
            new = [_summary_table(list(rows.values()))]
        elif kind == "verdict":
            new = [nodes.paragraph("", "", _badge(row.verdict))]
        else:
            new = [nodes.paragraph("", f) for f in row.figures] or [
                nodes.paragraph("", "\u2014")
            ]
        cell.replace_self(new)


def records_from_doctree(doctree) -> list[dict]:
    """The claim records of a chapter page, read from its doctree as MyST-NB rendered it.

    ``claims.check`` displays each record as one ``text/plain`` line, ``claim <id>
    (<verdict>): <figure>`` (folded at spaces when long). The page's own outputs are the
    source: they are there whether the notebook was executed now, taken from jupyter-cache,
    or stored, whereas MyST-NB 1.4 writes its executed copy (``jupyter_execute/*.ipynb``)
    *without outputs* when it takes them from the cache.
    """
    records = []
    for node in doctree.findall(nodes.container):
        if node.get("mime_type") != "text/plain" or (
            node.parent is None or node.parent.get("nb_element") != "mime_bundle"
        ):
            continue
        match = _RECORD_LINE.match(node.astext().strip())
        if not match:
            continue
        cell = node
        while cell is not None and cell.get("nb_element") != "cell_code":
            cell = cell.parent
        records.append(
            {
                **match.groupdict(),
                "figure": " ".join(match["figure"].split()),
                "cell": cell and cell.get("cell_index"),
            }
        )
    return records


def _read_chapter(app, doctree) -> None:
    from myst_nb.sphinx_ import NbMetadataCollector

    env = app.env
    if Path(env.doc2path(env.docname)).suffix != ".ipynb":
        return
    state = _state(env)
    state["records"][env.docname] = records_from_doctree(doctree)
    for node in doctree.findall(nodes.container):  # the results box links to each check
        if node.get("nb_element") == "cell_code" and node.get("cell_index") is not None:
            for record in state["records"][env.docname]:
                anchor = CHECK_ANCHOR.format(id=record["id"])
                if (
                    record["cell"] == node.get("cell_index")
                    and anchor not in node["ids"]
                ):
                    node["ids"].append(anchor)
    executed = NbMetadataCollector.get_exec_data(env, env.docname) is not None or any(
        node.get("nb_element") == "cell_code_output"
        for node in doctree.findall(nodes.container)
    )
    (state["executed"].add if executed else state["executed"].discard)(env.docname)


def _check_consistency(app, env) -> None:
    for row in _rows(env):
        for problem in row.problems:
            logging.getLogger(__name__).warning(
                problem,
                location=row.docname or next(iter(sorted(_state(env)["pages"])), None),
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
        for key in ("executed", "pages"):
            if doc in theirs[key]:
                state[key].add(doc)


def _always_reread(app, env, added, changed, removed) -> list[str]:
    # the ledger reads the registry and every chapter: re-read it at every build
    return sorted(doc for doc in _state(env)["pages"] if doc in env.found_docs)


def setup(app) -> dict[str, Any]:
    app.add_config_value("ledger_registry", "", "env")
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
        "env_version": 3,
    }
