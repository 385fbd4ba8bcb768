"""The claims ledger: the registry (chapters/claims.yml), claims.check, the ledger page, the chapter lint.

Fixture notebooks with stored outputs (tests/fixtures/ledger/) stand in for executed
chapters, so nothing here starts a kernel. A small Sphinx build of a fixture book, with its
own registry, checks booktools.ledger end to end: records read back from the rendered
outputs, one row per claim, the summary, the roles, and the warning that fails the strict
build when a chapter ran without checking a claim registered for it.
"""

import json
import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
import yaml

from booktools import chapter_lint, ledger
from rnnlib import claims

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "ledger"
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
REGISTRY = ROOT / "chapters" / "claims.yml"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def _nb(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _code(path: Path) -> str:
    return "\n".join(
        "".join(c["source"])
        for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "code"
    )


# --- the registry --------------------------------------------------------------------------------


def test_the_registry_file_validates():
    """Required fields, known fields only, unique ids, papers and kinds from the allowed sets."""
    entries = yaml.safe_load(REGISTRY.read_text())
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), "an id is registered twice"
    for e in entries:
        assert {"id", "paper", "statement", "kind", "text"} <= set(e)
        assert set(e) <= {
            "id",
            "paper",
            "statement",
            "kind",
            "chapter",
            "text",
            "untestable",
            "closed_form",
            "evidence",
        }, e["id"]
        assert e["kind"] in claims.KINDS and e["paper"] in claims.PAPERS
        assert ("chapter" in e) != ("untestable" in e), e["id"]
    registered = claims.registry(REGISTRY)
    assert list(registered) == ids
    assert claims.registry() == registered  # check() finds this file
    assert claims.registry_path() == REGISTRY.resolve()
    untestable = [c for c in registered.values() if c.untestable]
    # the two papers the book follows each have claims it cannot test
    assert {"P&G 2021", "M&H 2019"} <= {c.paper for c in untestable}
    assert all(len(c.untestable) > 20 for c in untestable)
    assert any(c.closed_form for c in registered.values())
    # the chapters with a committed record (chapters/records/chNN.json)
    # are those with verdicts resting on it (chapters 6 and 11)
    recorded = {c.chapter for c in registered.values() if c.evidence == "recorded"}
    from rnnlib.records import RECORDS_DIR

    committed = {int(p.stem[2:]) for p in RECORDS_DIR.glob("ch[0-9][0-9].json")}
    assert recorded == committed == {5, 6, 7, 11}


@pytest.mark.parametrize(
    "entry, message",
    [
        (
            "- {id: a, paper: P&G 2021, kind: paper, chapter: 3, text: t}",
            "no \\['statement'\\]",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, chapter: 3, text: t, page: 4}",
            "unknown fields \\['page'\\]",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: guess, chapter: 3, text: t}",
            "kind must be one of",
        ),
        (
            "- {id: a, paper: P&G, statement: S, kind: paper, chapter: 3, text: t}",
            "paper must be one of",
        ),
        (
            "- {id: a b, paper: P&G 2021, statement: S, kind: paper, chapter: 3, text: t}",
            "id must be",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, chapter: 12, text: t}",
            "chapter must be",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, text: t}",
            "untestable .* exactly when",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, chapter: 3, text: t, untestable: why}",
            "exactly when",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, chapter: 3, text: t, closed_form: 1}",
            "closed_form must be a bool",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, chapter: 3, text: t, evidence: pilot}",
            "evidence must be one of",
        ),
        (
            "- {id: a, paper: P&G 2021, statement: S, kind: paper, chapter: 3, text: t}\n"
            * 2,
            "registered twice",
        ),
        ("id: a", "a list of claims"),
    ],
)
def test_the_registry_refuses_a_bad_entry(tmp_path, entry, message):
    path = tmp_path / "claims.yml"
    path.write_text(entry)
    with pytest.raises(ValueError, match=message):
        claims.registry(path)


def test_each_chapter_checks_exactly_the_claims_registered_for_it():
    """The static half of "registered but never checked" (the build finds the rest: a check
    that does not run): every id a chapter passes to claims.check is registered for it, and
    every claim registered for a chapter is checked in its code."""
    registered = claims.registry()
    problems = []
    for path in CHAPTERS:
        chapter = int(path.name[:2])
        checked = set(re.findall(r"claims\.check\(\s*\"([^\"]+)\"", _code(path)))
        mine = {c.id for c in registered.values() if c.chapter == chapter}
        problems += [
            f"{path.name} checks unregistered {i}" for i in checked - set(registered)
        ]
        problems += [
            f"{path.name} checks {i}, registered for chapter {registered[i].chapter}"
            for i in checked & set(registered) - mine
        ]
        problems += [f"{path.name} never checks {i}" for i in mine - checked]
    assert not problems, "\n".join(problems)


# --- claims.check --------------------------------------------------------------------------------


def test_check_asserts_and_displays_its_record_line(capsys, monkeypatch):
    assert claims.check("mh-word-level-lm", True, "ppl 1.0") is None
    assert capsys.readouterr().out == "claim mh-word-level-lm (reproduced): ppl 1.0\n"
    with pytest.raises(AssertionError, match="mh-word-level-lm.*ppl 9"):
        claims.check("mh-word-level-lm", False, "ppl 9")
    with pytest.raises(KeyError, match="not registered"):
        claims.check("no-such-claim", True, "1")
    # in a notebook the line is the cell's text/plain result, displayed once
    import IPython

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(
        "IPython.display.display",
        lambda obj, raw=False: shown.append(obj),
    )
    claims.check("mh-word-level-lm", True, "ppl 1.0")
    assert shown == [{"text/plain": "claim mh-word-level-lm (reproduced): ppl 1.0"}]


def test_check_is_lenient_off_the_piloted_sizes_unless_strict(
    monkeypatch,
):
    monkeypatch.delenv(claims.STRICT_ENV, raising=False)
    assert not claims.strict()
    with pytest.warns(UserWarning, match="NOT SUPPORTED at these"):
        claims.check("mh-word-level-lm", False, "ppl 9", piloted=False)
    with pytest.raises(AssertionError, match="ppl 9"):
        claims.check("mh-word-level-lm", False, "ppl 9")
    monkeypatch.setenv(claims.STRICT_ENV, "1")
    assert claims.strict()
    with pytest.raises(AssertionError, match="ppl 9"):
        claims.check("mh-word-level-lm", False, "ppl 9", piloted=False)


def test_a_claim_that_holds_off_the_piloted_sizes_says_so(capsys, monkeypatch):
    """A reader's run at other sizes is not the book's record: its line says where it holds,
    and the ledger, which reads only record lines, does not take it for one."""
    monkeypatch.setattr(claims, "registry_path", lambda: None)
    monkeypatch.delenv(claims.STRICT_ENV, raising=False)
    claims.check(
        "pg-anything",
        True,
        "slope -0.5",
        verdict="reproduced",
        piloted=False,
    )
    line = capsys.readouterr().out.strip()
    assert line.startswith("claim pg-anything (holds at these parameters;")
    assert "slope -0.5" in line
    assert not ledger._RECORD_LINE.match(line)
    claims.check("pg-anything", True, "slope -0.5", verdict="reproduced")
    assert ledger._RECORD_LINE.match(capsys.readouterr().out.strip())


def test_check_without_a_registry_prints_its_line_unless_strict(capsys, monkeypatch):
    """A pip-installed rnnlib (Colab) has no chapters/claims.yml: the check still asserts and
    says what it measured; the book's build (strict) refuses to run without the registry."""
    monkeypatch.setattr(claims, "registry_path", lambda: None)
    monkeypatch.delenv(claims.STRICT_ENV, raising=False)
    claims.check("pg-anything", True, "slope -0.5")
    claims.check("pg-other", True, "0.3", verdict="reproduced in trend only")
    assert capsys.readouterr().out.splitlines() == [
        "claim pg-anything (holds): slope -0.5",
        "claim pg-other (reproduced in trend only): 0.3",
    ]
    with pytest.raises(AssertionError):
        claims.check("pg-anything", False, "slope 0.1")
    with pytest.raises(ValueError, match="verdict must be one of"):
        claims.check("pg-anything", True, "1", verdict="fine")
    monkeypatch.setenv(claims.STRICT_ENV, "1")
    with pytest.raises(KeyError, match="no registry"):
        claims.check("pg-anything", True, "slope -0.5")


def test_the_registry_is_found_from_the_environment(tmp_path, monkeypatch, capsys):
    shutil.copy(FIXTURES / "claims.yml", tmp_path / "mine.yml")
    monkeypatch.setenv(claims.REGISTRY_ENV, str(tmp_path / "mine.yml"))
    assert claims.registry_path() == (tmp_path / "mine.yml").resolve()
    claims.check("fx-rate", True, "slope -0.5")
    assert "claim fx-rate (reproduced)" in capsys.readouterr().out
    with pytest.raises(KeyError):
        claims.check("mh-word-level-lm", True, "ppl 1.0")


def test_closed_form_claims_get_their_own_verdict_and_count(
    capsys,
):
    """A claim registered closed_form: true is checked as "checked (closed form)" only,
    and the summary counts it apart from the reproductions."""
    claim = next(c for c in claims.registry().values() if c.closed_form)
    claims.check(claim.id, True, "1 = 1")
    assert f"({claims.CLOSED_FORM})" in capsys.readouterr().out
    with pytest.raises(ValueError, match="closed_form=True"):
        claims.check(claim.id, True, "1", verdict="reproduced")
    rows = ledger.ledger_rows(
        {claim.id: claim},
        {
            "chapters/x": [
                {
                    "id": claim.id,
                    "verdict": claims.CLOSED_FORM,
                    "figure": "f",
                }
            ]
        },
        {claim.chapter: "chapters/x"},
        executed=["chapters/x"],
    )
    counts = ledger.verdict_counts(rows)
    assert counts[claims.CLOSED_FORM]["all"] == 1
    assert counts["reproduced"]["all"] == 0


def test_the_summary_splits_not_reproduced_by_kind():
    """The count of "not reproduced" is split into the papers' claims, our reconstructions and
    our heuristics, per paper; the split adds up to the verdict's count."""
    fixture = claims.registry(FIXTURES / "claims.yml")
    records = {
        "chapters/03_checked": [
            {
                "id": "fx-rate",
                "verdict": "not reproduced",
                "figure": "a",
            },
            {
                "id": "fx-trend",
                "verdict": "not reproduced",
                "figure": "b",
            },
        ],
    }
    chapters = {3: "chapters/03_checked"}
    rows = ledger.ledger_rows(fixture, records, chapters)
    split = ledger.kind_counts(rows, "not reproduced")
    assert list(split) == list(claims.KINDS)
    assert split["paper"] == {
        "P&G 2021": 1,
        "M&H 2019": 0,
        "HMR 2018": 0,
        "all": 1,
    }
    assert split["reconstruction"]["all"] == 1
    assert split["heuristic"]["all"] == 0
    counts = ledger.verdict_counts(rows)
    assert sum(k["all"] for k in split.values()) == counts["not reproduced"]["all"]
    assert ledger.kind_counts(rows, "reproduced")["paper"]["all"] == 0
    with pytest.raises(ValueError, match="verdict"):
        ledger.kind_counts(rows, "mostly")
    # on the book's own registry, the split adds up too
    book = ledger.ledger_rows(
        claims.registry(),
        {},
        ledger.chapter_docnames(f"chapters/{p.stem}" for p in CHAPTERS),
    )
    assert (
        sum(k["all"] for k in ledger.kind_counts(book, ledger.NOT_YET_TESTED).values())
        == ledger.verdict_counts(book)[ledger.NOT_YET_TESTED]["all"]
    )


def _line(*args, **kwargs) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        claims.check(*args, **kwargs)
    return out.getvalue().rstrip("\n")


def test_long_record_lines_are_folded_and_read_back_whole():
    """A long claim line is folded at spaces to fit the page's output box; the ledger joins it back."""
    from docutils import nodes

    figure = "slopes in m at tau = 1: " + ", ".join(
        f"kind{i} -0.{i}{i}" for i in range(12)
    )
    text = _line("mh-word-level-lm", True, figure)
    assert len(text.splitlines()) > 1
    assert all(len(line) <= claims.LINE_CHARS for line in text.splitlines())
    cell = nodes.container(nb_element="cell_code", cell_index=3)
    bundle = nodes.container(nb_element="mime_bundle")
    out = nodes.container(mime_type="text/plain")
    out += nodes.literal_block(text, text)
    bundle += out
    cell += bundle
    (record,) = ledger.records_from_doctree(cell)
    assert (
        record["id"],
        record["verdict"],
        record["figure"],
        record["cell"],
    ) == (
        "mh-word-level-lm",
        "reproduced",
        figure,
        3,
    )
    # a head too long for its first word: the head gets a line of its own
    long_word = "x" * 40
    text = _line(
        "mh-word-level-lm",
        True,
        f"{long_word} 1.0",
        verdict="reproduced in trend only",
    )
    assert all(len(line) <= claims.LINE_CHARS for line in text.splitlines())
    out.children[0].replace_self(nodes.literal_block(text, text))
    (record,) = ledger.records_from_doctree(cell)
    assert record["figure"] == f"{long_word} 1.0"


# --- rows ----------------------------------------------------------------------------------------


def test_chapter_docnames():
    docs = [
        "chapters/preface",
        "chapters/03_pseudo_network",
        "chapters/10_truncation_training",
        "chapters/ledger",
    ]
    assert ledger.chapter_docnames(docs) == {
        3: "chapters/03_pseudo_network",
        10: "chapters/10_truncation_training",
    }


def test_rows_give_each_claim_its_verdict_and_problems():
    fixture = claims.registry(FIXTURES / "claims.yml")
    records = {
        "chapters/03_checked": [
            {
                "id": "fx-rate",
                "verdict": "reproduced",
                "figure": "slope -0.51",
            },
            {
                "id": "fx-trend",
                "verdict": "reproduced in trend only",
                "figure": "error 0.1",
            },
        ],
        "chapters/04_typed": [],
    }
    chapters = {3: "chapters/03_checked", 4: "chapters/04_typed"}
    rows = {
        r.claim.id: r
        for r in ledger.ledger_rows(
            fixture, records, chapters, executed=chapters.values()
        )
    }
    assert set(rows) == set(fixture)
    assert rows["fx-rate"].verdict == "reproduced" and rows["fx-rate"].figures == [
        "slope -0.51"
    ]
    assert rows["fx-trend"].verdict == "reproduced in trend only"
    assert (
        rows["fx-offline"].verdict == ledger.CANNOT_TEST
        and "offline" in rows["fx-offline"].figures[0]
    )
    assert (
        rows["fx-later"].verdict == ledger.NOT_YET_TESTED
        and not rows["fx-later"].problems
    )  # chapter 5 not in the book
    assert rows["fx-unchecked"].verdict == ledger.NOT_YET_TESTED
    assert "ran without checking it" in rows["fx-unchecked"].problems[0]
    assert not any(rows[i].problems for i in ("fx-rate", "fx-trend", "fx-offline"))
    # a claim checked twice with different verdicts gets the more cautious one, and a problem
    twice = {
        "chapters/03_checked": [
            {"id": "fx-rate", "verdict": v, "figure": f}
            for v, f in (
                ("reproduced", "a"),
                ("not reproduced", "b"),
            )
        ]
    }
    (row,) = [
        r
        for r in ledger.ledger_rows(fixture, twice, chapters)
        if r.claim.id == "fx-rate"
    ]
    assert (
        row.verdict == "not reproduced"
        and row.figures == ["a", "b"]
        and "different verdicts" in row.problems[0]
    )
    # checked in a chapter other than its own; an untestable claim checked
    elsewhere = {
        "chapters/04_typed": [
            {"id": i, "verdict": "reproduced", "figure": "a"}
            for i in ("fx-rate", "fx-offline")
        ]
    }
    rows = {r.claim.id: r for r in ledger.ledger_rows(fixture, elsewhere, chapters)}
    assert "checked in chapters/04_typed" in rows["fx-rate"].problems[0]
    assert "registered as untestable" in rows["fx-offline"].problems[0]


def test_every_registered_claim_gets_one_row():
    registered = claims.registry()
    rows = ledger.ledger_rows(
        registered,
        {},
        ledger.chapter_docnames(f"chapters/{p.stem}" for p in CHAPTERS),
    )
    assert sorted(r.claim.id for r in rows) == sorted(registered)
    counts = ledger.verdict_counts(rows)
    assert list(counts) == list(ledger.ORDER)
    assert sum(c["all"] for c in counts.values()) == len(registered)
    for row in rows:
        assert row.verdict in ledger.ORDER
        if row.claim.untestable:
            assert row.verdict == ledger.CANNOT_TEST and row.figures == [
                row.claim.untestable
            ]


# --- the chapter lint: typed numbers in prose, unmarked asserts ----------------------------------


def test_unmarked_asserts_are_found():
    assert (
        chapter_lint.unmarked_asserts(_nb("03_checked.ipynb")) == []
    )  # one-line and multi-line marks
    (found,) = chapter_lint.unmarked_asserts(_nb("04_typed.ipynb"))
    assert found[:4] == (
        2,
        2,
        "AS",
        'assert x == 2, "a claim asserted without claims.check"',
    )
    magic = {
        "cells": [
            {
                "cell_type": "code",
                "source": "%time y = 1\nassert y  # implementation check\nassert y",
            }
        ]
    }
    assert [f.line for f in chapter_lint.unmarked_asserts(magic)] == [3]


def test_a_planted_typed_number_fails_and_glued_text_passes():
    (typed,) = chapter_lint.typed_numbers(_nb("04_typed.ipynb"))
    assert (typed.cell, typed.what) == (
        0,
        "15",
    ) and "about 15%" in typed.message
    # glued number, a code block, inline code and a declared typed number all pass
    assert chapter_lint.typed_numbers(_nb("03_checked.ipynb")) == []


@pytest.mark.parametrize(
    "text, flagged",
    [
        (
            "The slope is {glue:text}`ch04_slope:.2f`, about {glue:text}`x`.",
            [],
        ),
        (
            "The slope is -0.27 (bare decimals are not flagged).",
            [],
        ),
        (
            "Training is about 40 times slower, $\\approx 12$ s.",
            ["40", "12"],
        ),
        (
            "It is roughly 1.5e-3, $\\approx 10^{10}$ or nearly 3.",
            ["1.5e-3", "10^{10}", "3"],
        ),
        (
            "The norm is about 1, $\\approx 2 + (L-2)\\epsx^2$, around 0.",
            [],
        ),
        (
            "within 15% of it, or 2.5 percent, or 3\\%; about 1%",
            ["15", "2.5", "3", "1"],
        ),
        (
            "```{exercise} 9.1 · Title\n:label: ex-9-1\n:width: 80%\n\nAbout 42 steps.\n```",
            ["42"],
        ),
        (
            "```{note}\nA note.\n```\n\nabout 7 here\n\n```{note}\nB\n```",
            ["7"],
        ),
        (
            "```python\nx = 0.37  # about 5%\n```\n\n````md\n```\nabout 9\n```\n````",
            [],
        ),
        (
            "A link [here](https://example.org/about-5%) and `about 5%`, <span a='5%'>.",
            [],
        ),
        (
            "% typed numbers (thresholds of exercise 3.1): 0.75, 10^{-3}\nabout 0.75, ≈ 10^{-3}",
            [],
        ),
    ],
)
def test_typed_number_rules(text, flagged):
    nb = {"cells": [{"cell_type": "markdown", "source": text}]}
    assert [t.what for t in chapter_lint.typed_numbers(nb)] == flagged


def test_a_declaration_needs_its_reason_and_numbers():
    for comment in (
        "% typed numbers (): 0.3",
        "% typed numbers (why): 0.3, x",
    ):
        nb = {
            "cells": [
                {
                    "cell_type": "markdown",
                    "source": comment + "\nabout 0.3",
                }
            ]
        }
        (finding,) = chapter_lint.typed_numbers(nb)
        assert finding.what == comment and "reason" in str(finding)


def test_the_lint_runs_from_the_command_line(tmp_path, capsys):
    assert chapter_lint.main([str(FIXTURES / "03_checked.ipynb")]) == 0
    assert chapter_lint.main([str(FIXTURES / "04_typed.ipynb")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1].split()[0] for line in out] == [
        "TN",
        "AS",
    ]
    assert out[0].startswith(f"{FIXTURES / '04_typed.ipynb'}:cell 0:line 3:")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_prose_glues_its_numbers_and_asserts_are_claims(
    path,
):
    nb = json.loads(path.read_text())
    findings = chapter_lint.typed_numbers(nb) + chapter_lint.unmarked_asserts(nb)
    assert not findings, "\n".join(map(str, findings))


# --- the book's ledger page ----------------------------------------------------------------------


def test_the_book_has_the_ledger_and_the_epilogue():
    toc = (ROOT / "_toc.yml").read_text()
    assert (
        toc.index("chapters/10_truncation_training")
        < toc.index("chapters/epilogue")
        < toc.index('"Appendices"')
    )
    assert toc.index('"Appendices"') < toc.index("chapters/ledger")
    assert "booktools.ledger" in CONFIG["sphinx"]["extra_extensions"]
    assert "{claims-ledger}" in (ROOT / "chapters" / "ledger.md").read_text()
    registered = claims.registry()
    for page in ("epilogue.md", "ledger.md"):
        for claim_id in re.findall(
            r"\{claim\}`([^`<]+)`",
            (ROOT / "chapters" / page).read_text(),
        ):
            assert claim_id in registered, (
                f"{page} links to {claim_id}, which is not registered"
            )


@pytest.fixture(scope="module")
def fixture_book(tmp_path_factory):
    from sphinx.application import Sphinx

    src = tmp_path_factory.mktemp("book")
    (src / "chapters").mkdir()
    for name in (
        "03_checked.ipynb",
        "04_typed.ipynb",
        "claims.yml",
    ):
        shutil.copy(FIXTURES / name, src / "chapters" / name)
    (src / "conf.py").write_text(
        "extensions = ['myst_nb', 'sphinx_exercise', 'booktools.ledger']\n"
        "nb_execution_mode = 'off'\n"
        "ledger_registry = 'chapters/claims.yml'\n"
        "exclude_patterns = ['_build']\n"
    )
    (src / "index.md").write_text(
        "# Fixture book\n\n```{toctree}\nchapters/03_checked\nchapters/04_typed\nledger\nepilogue\n```\n"
    )
    (src / "ledger.md").write_text(
        "# What the book verifies\n\n```{claims-ledger}\n```\n"
    )
    (src / "epilogue.md").write_text(
        "# Epilogue\n\nSee {claim}`fx-rate`, {claim}`fx-offline`, {chapter}`3` and {chapter}`7`; "
        "and {ref}`claim-fx-trend`.\n"
    )
    warnings = StringIO()
    out = src / "_build"
    app = Sphinx(
        str(src),
        str(src),
        str(out / "html"),
        str(out / "doctrees"),
        "html",
        status=StringIO(),
        warning=warnings,
        freshenv=True,
    )
    app.build()
    return out / "html", warnings.getvalue()


def test_fixture_book_ledger_has_one_row_per_claim(fixture_book):
    html_dir, _ = fixture_book
    html = (html_dir / "ledger.html").read_text()
    for claim_id in claims.registry(FIXTURES / "claims.yml"):
        assert f'id="claim-{claim_id}"' in html
    assert "slope -0.51" in html and "error 0.1 at L = 4, 0.3 at L = 8" in html
    assert "needs data that is not available offline" in html
    assert (
        'href="chapters/03_checked.html"' in html
        and "chapter 5 (not in this build)" in html
    )
    assert html.count("not yet tested") >= 3  # two rows and the summary
    assert "all claims" in html
    # "not reproduced" is split by kind in the summary
    for words in (
        "the papers",
        "our reconstructions",
        "our heuristics",
    ):
        assert f"of which {words}" in html
    assert "evidence: live" in html
    assert "evidence: recorded run (chapters/records/ch03.json" in html


def test_fixture_book_chapters_open_with_their_results(
    fixture_book,
):
    """Each chapter page opens with its claims, verdicts and links to the check and the ledger."""
    import html as html_lib

    html_dir, _ = fixture_book
    page = (html_dir / "chapters" / "03_checked.html").read_text()
    assert "chapter-results" in page and "What this chapter checks" in page
    box = page[page.index("chapter-results") :]
    box = box[: box.index("</ul>")]
    registered = claims.registry(FIXTURES / "claims.yml")
    mine = [c for c in registered.values() if c.chapter == 3]
    assert mine
    for claim in mine:
        assert f"#claim-{claim.id}".lower() in box, claim.id
    checked = re.findall(r'href="#check-([^"]+)"', box)
    assert checked, "no link to a check cell"
    for claim_id in checked:
        assert f'id="check-{claim_id}"' in page, claim_id
    # the box comes before the page's first code cell
    assert page.index("chapter-results") < page.index('class="cell')
    assert html_lib.unescape(box).count("<li>") == len(mine)


def test_fixture_book_roles_link_to_rows_and_chapters(
    fixture_book,
):
    html_dir, _ = fixture_book
    html = (html_dir / "epilogue.html").read_text()
    assert (
        'href="ledger.html#claim-fx-rate"' in html
        and 'sd-bg-text-success">reproduced</span>' in html
    )
    assert ">cannot be tested here</span>" in html
    assert 'href="chapters/03_checked.html"' in html and "chapter 7" in html
    assert 'href="ledger.html#claim-fx-trend"' in html


def test_fixture_book_fails_on_a_claim_registered_but_never_checked(
    fixture_book,
):
    _, warnings = fixture_book
    lines = [line for line in warnings.splitlines() if "WARNING" in line]
    assert (
        len(lines) == 1
        and "fx-unchecked" in lines[0]
        and "04_typed ran without checking it" in lines[0]
    ), warnings


def test_the_ledger_refuses_to_build_without_a_registry(
    monkeypatch,
):
    from types import SimpleNamespace

    from sphinx.errors import ConfigError

    env = SimpleNamespace(
        config=SimpleNamespace(ledger_registry=""),
        srcdir=str(ROOT),
    )
    assert ledger._registry(env) == claims.registry()
    monkeypatch.setattr(ledger, "registry_path", lambda: None)
    with pytest.raises(ConfigError, match="no claims registry"):
        ledger._registry(env)
    env.config.ledger_registry = "chapters/no-such.yml"
    with pytest.raises(FileNotFoundError):
        ledger._registry(env)


def test_the_page_shows_every_verdicts_claim_line_as_a_sentence():
    from booktools.sphinx_ext.static_page import CLAIM_LINE

    for verdict in claims.VERDICTS:
        line = f"claim pg-x-1 ({verdict}): rel gap 0.01 (< 0.1)"
        match = CLAIM_LINE.match(line)
        assert match, verdict
        assert match.groups() == (
            "pg-x-1",
            verdict,
            "rel gap 0.01 (< 0.1)",
        )
