"""booktools.portable: the portable copies of the chapters, and the check of them.

A small planted edition (a ``_toc.yml``, a ``references.bib`` and one chapter that holds
every kind of MyST the chapters use, with the outputs of an "execution" of its glue cell)
is converted; the unit tests read the conversion, and the browser test renders the
planted chapter and its copy with nbconvert and headless Chromium: the check must name
every planted defect in the chapter (one Markdown cell each) and none in the copy. No
chapter is executed; the browser test takes a few seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from booktools import portable
from booktools.macros import macro_source
from booktools.markup import book_macros

MACROS = {
    "R": "\\mathbb{R}",
    "vw": "\\mathbf{w}",
    "epsx": "\\varepsilon_x",
    "norm": ["\\left\\lVert #1 \\right\\rVert", 1],
}

BIB = """@inproceedings{panigrahi2021learning,
  title = {Learning and Generalization in {RNNs}},
  author = {Panigrahi, Abhishek and Goyal, Navin},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2021}
}
@inproceedings{miller2019stable,
  title = {Stable Recurrent Models},
  author = {Miller, John and Hardt, Moritz},
  booktitle = {International Conference on Learning Representations},
  year = {2019}
}
"""

TOC = """format: jb-book
root: chapters/01_demo
chapters:
  - file: chapters/02_more
"""

#: One Markdown cell per kind of MyST (and of defect outside the book), in order.
PLANTED = {
    "theorem": (
        "```{prf:theorem} Main\n:label: thm-main\n\n"
        "Let $\\vw\\in\\R^d$ and $\\bar\\vw$ be given. Then\n\n$$\n\\norm{\\vw} \\ge 0 .\n$$\n```"
    ),
    "proof": "```{prf:proof}\nObvious from $\\norm\\vw^2 \\ge 0$.\n```",
    "note": ":::{note}\nA note with $\\epsx$.\n:::",
    "glue": "The slope is {glue:text}`ch01_slope:.2f`, the count {glue:text}`ch01_n`.",
    "eval": 'In a reader copy: {eval}`rnnlib.notebook.glued("ch01_slope", ".1f")`.',
    "cite": "As {cite:t}`panigrahi2021learning` show (and {cite:p}`miller2019stable`).",
    "ref": "By {prf:ref}`thm-main` and {ref}`the other page <sec-more>`, see {doc}`02_more`.",
    "comment": "% typed numbers: 1.5\nA sentence after a comment.",
    "target": "(sec-here)=\n## A section",
    "amsmath": "\\begin{align}\na &= \\epsx \\\\\nb &= 1\n\\end{align}",
    "exercise": "```{exercise} 1.1 · Try it\n:label: ex-1-1\n:nonumber:\n\nShow $x\\ge 0$.\n```",
    "solution": "```{solution-start} ex-1-1\n:class: dropdown\n```",
    "figure": "```{figure} img/plot.png\n:name: fig-plot\n:alt: A plot\n\nThe plot with $\\epsx$.\n```",
    "numref": "See {numref}`fig-plot`, or {numref}`Fig. %s <fig-plot>`.",
}

#: What the check must report for the planted chapter's cell of each kind.
EXPECTED = {
    "theorem": "directive fence",
    "proof": "directive fence",
    "note": "directive fence",
    "glue": "raw role",
    "eval": "raw role",
    "cite": "raw role",
    "ref": "raw role",
    "comment": "MyST comment",
    "target": "MyST target",
    "exercise": "directive fence",
    "solution": "directive fence",
    "figure": "directive fence",
    "numref": "raw role",
}


def _glue_cell() -> nbformat.NotebookNode:
    """A code cell as myst_nb.glue(..., display=False) leaves it after execution."""
    cell = nbformat.v4.new_code_cell("glue('ch01_slope', 0.123, display=False)")
    for name, text in (("ch01_slope", "0.123"), ("ch01_n", "12")):
        cell.outputs.append(
            nbformat.v4.new_output(
                "display_data",
                data={portable_prefix() + "text/plain": text},
                metadata={
                    "scrapbook": {
                        "name": name,
                        "mime_prefix": portable_prefix(),
                    }
                },
            )
        )
    cell.outputs.append(
        nbformat.v4.new_output("stream", name="stdout", text="visible\n")
    )
    return cell


def portable_prefix() -> str:
    from myst_nb.ext.glue import GLUE_PREFIX

    return GLUE_PREFIX


def _planted_chapter(
    macro_cell: bool = True,
) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    if macro_cell:
        cell = nbformat.v4.new_markdown_cell(macro_source(MACROS))
        cell.metadata["rnnlib_macros"] = True
        cell.metadata["tags"] = ["remove-cell"]
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_markdown_cell("# 1. A planted chapter"))
    nb.cells.append(_glue_cell())
    for kind, text in PLANTED.items():
        nb.cells.append(nbformat.v4.new_markdown_cell(text))
        nb.cells[-1].metadata["planted"] = kind
    stub = nbformat.v4.new_code_cell('raise NotImplementedError("Exercise 1.1")')
    stub.metadata["tags"] = ["raises-exception", "remove-output"]
    stub.outputs.append(
        nbformat.v4.new_output(
            "error",
            ename="NotImplementedError",
            evalue="Exercise 1.1",
            traceback=[],
        )
    )
    nb.cells.append(stub)
    return nb


@pytest.fixture
def edition(tmp_path: Path) -> Path:
    """A planted edition: _toc.yml, references.bib, _config.yml's macros, two chapters."""
    (tmp_path / "_toc.yml").write_text(TOC)
    (tmp_path / "references.bib").write_text(BIB)
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nbformat.write(_planted_chapter(), chapters / "01_demo.ipynb")
    more = nbformat.v4.new_notebook()
    more.cells.append(
        nbformat.v4.new_markdown_cell(
            "# 2. More\n\n(sec-more)=\n## Other\n\n```{prf:theorem} Second\n:label: thm-2\nx\n```"
        )
    )
    nbformat.write(more, chapters / "02_more.ipynb")
    return tmp_path


def _context(edition: Path, base: str = "https://book.example") -> portable.Context:
    return portable.Context(
        docname="chapters/01_demo",
        index=portable.book_index(edition),
        bibliography=portable.Bibliography(edition / "references.bib"),
        macros=MACROS,
        values={},
        link_base=base,
    )


def _converted(
    edition: Path,
) -> tuple[nbformat.NotebookNode, portable.Context]:
    nb = nbformat.read(edition / "chapters" / "01_demo.ipynb", as_version=4)
    ctx = _context(edition)
    return portable.portable_notebook(nb, ctx, executed=nb), ctx


def _markdown(nb) -> str:
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_macros_expand_as_tex_would():
    out = portable.expand_macros(
        "\\bar\\vw + \\norm{\\vw}^2 + \\norm\\vw + \\epsx x + x^\\vw, \\Rx",
        MACROS,
    )
    assert out == (
        "\\bar{\\mathbf{w}} + \\left\\lVert {\\mathbf{w}} \\right\\rVert^2 + "
        "\\left\\lVert {\\mathbf{w}} \\right\\rVert + \\varepsilon_x x + x^{\\mathbf{w}}, \\Rx"
    )
    with pytest.raises(TypeError, match="tex"):
        portable.expand_macros(1, MACROS)
    with pytest.raises(TypeError, match="macros"):
        portable.expand_macros("x", [])


def test_the_book_macros_expand_to_no_book_macro():
    macros = book_macros()
    for name in macros:
        args = "{a}" * (macros[name][1] if isinstance(macros[name], list) else 0)
        out = portable.expand_macros(f"\\{name}{args}", macros)
        assert not any(
            f"\\{m}" in out.replace("\\mathbf", "") for m in macros if len(m) > 2
        ), (name, out)


def test_directive_options_are_read_as_myst_reads_them():
    assert portable.split_directive(
        "{prf:lemma} A $x$", ":label: l\n:nonumber:\n\nBody"
    ) == (
        "prf:lemma",
        "A $x$",
        {"label": "l", "nonumber": ""},
        "Body",
    )
    assert portable.split_directive("{note}", "---\nclass: x\n---\nHi")[2:] == (
        {"class": "x"},
        "Hi",
    )
    assert portable.split_directive("python", "x = 1") is None


def test_the_index_numbers_statements_through_the_book(edition):
    index = portable.book_index(edition)
    assert index.targets["thm-main"].text() == "Theorem 1"
    assert index.targets["thm-2"].text() == "Theorem 2"
    assert index.targets["ex-1-1"].text() == "Exercise 1.1 · Try it"
    assert index.targets["sec-more"].title == "Other"
    assert index.titles["chapters/02_more"] == "2. More"
    with pytest.raises(FileNotFoundError, match="edition_root"):
        portable.book_index(edition / "chapters")


def test_the_conversion_leaves_no_myst(edition):
    nb, ctx = _converted(edition)
    text = _markdown(nb)
    assert ctx.warnings == []
    assert portable.count_myst(text) == 0
    assert "{" + "glue" not in text and "```{" not in text and ":::{" not in text
    assert "**Theorem 1 (Main).** Let $\\mathbf{w}\\in{\\mathbb{R}}^d$" in text
    assert "*Proof.* Obvious" in text and text.count("∎") == 1
    assert "> **Note.** A note with $\\varepsilon_x$." in text
    assert "The slope is 0.12, the count 12." in text
    assert "In a reader copy: 0.1." in text
    assert "As Panigrahi and Goyal (2021) show (and (Miller and Hardt, 2019))." in text
    assert "[Theorem 1](https://book.example/chapters/01_demo.html#thm-main)" in text
    assert (
        "[the other page](https://book.example/chapters/02_more.html#sec-more)" in text
    )
    assert "[2. More](https://book.example/chapters/02_more.html)" in text
    assert "% typed" not in text and "(sec-here)=" not in text
    assert "$$\n\\begin{align}\na &= \\varepsilon_x" in text
    assert "**Exercise 1.1 · Try it.** Show $x\\ge 0$." in text
    assert "**Solution to Exercise 1.1 · Try it.**" in text
    assert (
        "![A plot](img/plot.png)\n\n*Figure 1.* The plot with $\\varepsilon_x$." in text
    )
    assert (
        "See [Figure 1](https://book.example/chapters/01_demo.html#fig-plot), or [Fig. 1]("
        in text
    )
    assert nb.cells[-1].source.startswith(portable.REFERENCES_HEADING)
    assert "Stable recurrent models" in nb.cells[-1].source
    # the macro cell is gone, the code cell keeps its visible output, not the glue records
    assert not any(c.metadata.get("rnnlib_macros") for c in nb.cells)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [o.output_type for o in code[0].outputs] == ["stream"]
    # a stub's error, hidden by the book (remove-output), is not shown either; its code is
    assert code[1].outputs == [] and "NotImplementedError" in code[1].source


def test_relative_links_without_a_base_url(edition):
    ctx = _context(edition, base="../../_build/html")
    assert portable.convert_role("prf:ref", "thm-2", ctx) == (
        "[Theorem 2](../../_build/html/chapters/02_more.html#thm-2)"
    )


def test_a_missing_value_is_reported(edition):
    ctx = _context(edition)
    assert portable.convert_role("glue:text", "nope:.2f", ctx) == portable.MISSING_VALUE
    assert "nope" in ctx.warnings[0]
    assert portable.text_defects(portable.MISSING_VALUE)[0].startswith(
        "glued value missing"
    )


def test_text_defects_name_each_kind():
    assert portable.text_defects("all fine, x = 1") == []
    for text, kind in [
        ("{cite:t}panigrahi", "raw role"),
        ("```{prf:theorem}", "directive fence"),
        (
            "math: '\\R': '\\mathbb{R}' '\\E': 'x'",
            "macro cell (YAML)",
        ),
        ("% typed numbers", "MyST comment"),
        ("(sec-x)=", "MyST target"),
        ("a $ left", "untypeset math"),
    ]:
        found = portable.text_defects(text)
        assert any(f.startswith(kind) for f in found), (
            text,
            found,
        )
    with pytest.raises(TypeError, match="text"):
        portable.text_defects(None)


def test_arguments_are_validated(edition):
    ctx = _context(edition)
    with pytest.raises(TypeError, match="ctx"):
        portable.convert_markdown("x", None)
    with pytest.raises(TypeError, match="nb"):
        portable.portable_notebook([], ctx)
    with pytest.raises(ValueError, match="edition"):
        portable.edition_root("teacher")
    with pytest.raises(ValueError, match="jobs"):
        portable.executions_of([], "book", jobs=0)
    with pytest.raises(ValueError, match="notebooks"):
        portable.check_notebooks([])
    with pytest.raises(TypeError, match="report"):
        portable.report_defects([])


def _can_check() -> bool:
    try:
        portable.mathjax_dir()
    except FileNotFoundError:
        return False
    return bool(shutil.which("chromium") and shutil.which("chromedriver"))


@pytest.mark.skipif(
    not _can_check(),
    reason="needs chromium, chromedriver and the vendored MathJax",
)
def test_the_check_fails_on_every_planted_defect_and_passes_the_copy(edition, tmp_path):
    source = edition / "chapters" / "01_demo.ipynb"
    # the source as a front end without MyST shows it
    bare = _planted_chapter()
    # an authoring slip no conversion mends: a formula MathJax cannot close
    bare.cells.append(
        nbformat.v4.new_markdown_cell("An unclosed formula $x + 1 and a dollar.")
    )
    raw = tmp_path / "raw.ipynb"
    nbformat.write(bare, raw)
    copy, _ = _converted(edition)
    converted = tmp_path / "copy.ipynb"
    nbformat.write(copy, converted)
    results = portable.check_notebooks([raw, converted])
    assert results[converted] == []
    problems = results[raw]
    # the rendered Markdown cells: the macro cell, the title, then one per planted kind
    assert any(p.startswith("markdown cell 1: macro cell (YAML)") for p in problems), (
        problems
    )
    for i, kind in enumerate(PLANTED, start=3):
        if kind in EXPECTED:
            assert any(
                p.startswith(f"markdown cell {i}: {EXPECTED[kind]}") for p in problems
            ), (
                kind,
                problems,
            )
    last = len(PLANTED) + 3
    assert any(
        p.startswith(f"markdown cell {last}: untypeset math") for p in problems
    ), problems
    assert source.exists()
    # without the macro cell, the same formula is a MathJax error
    nbformat.write(_planted_chapter(macro_cell=False), raw)
    problems = portable.check_notebooks([raw])[raw]
    assert any("MathJax error" in p and "epsx" in p for p in problems), problems


def test_broken_links_are_found_in_the_local_build(tmp_path):
    html = tmp_path / "_build" / "html" / "chapters"
    html.mkdir(parents=True)
    (html / "01_demo.html").write_text('<p id="thm-main">x</p>')
    out = tmp_path / "portable" / "book"
    out.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells.append(
        nbformat.v4.new_markdown_cell(
            "[ok](../../_build/html/chapters/01_demo.html#thm-main), "
            "[no anchor](../../_build/html/chapters/01_demo.html#nope), "
            "[no page](../../_build/html/chapters/02_x.html), "
            "[not built](../../student/_build/html/x.html), [web](https://x.org/a)"
        )
    )
    nbformat.write(nb, out / "01_demo.ipynb")
    problems = portable.broken_links(out / "01_demo.ipynb")
    assert len(problems) == 2, problems
    assert "#nope (no such anchor)" in problems[0] and "02_x.html" in problems[1]
    with pytest.raises(FileNotFoundError, match="notebook"):
        portable.broken_links(tmp_path / "missing.ipynb")


def test_make_lab_portable_opens_the_portable_copies(monkeypatch, tmp_path):
    """``make lab PORTABLE=1``: the copies are (re)made by ``booktools.portable --keep-newer``
    (a command: no tool imports another), and JupyterLab opens them."""
    from booktools import lab

    commands, calls, opened = [], [], []

    def fake_convert(edition, out, **kw):
        calls.append((edition, kw))
        return []

    monkeypatch.setattr(portable, "convert_edition", fake_convert)
    # the command lab runs, run here in this process
    monkeypatch.setattr(
        lab.subprocess,
        "run",
        lambda command, check: subprocess.CompletedProcess(
            command, commands.append(command) or portable.main(command[3:])
        ),
    )
    monkeypatch.setattr(lab.os, "execve", lambda path, argv, env: opened.append(argv))
    monkeypatch.setattr(lab, "chapter_notebooks", lambda root: [Path("c/01_x.ipynb")])
    assert lab.main(["--portable", "--student"]) == 0
    assert commands[0][1:3] == ["-m", "booktools.portable"]
    assert calls == [
        (
            "student",
            {
                "base_url": "",
                "execute_missing": True,
                "only": None,
                "jobs": 2,
                "keep_newer": True,
            },
        )
    ]
    assert opened[0][1:3] == ["lab", str(portable.DEFAULT_OUT / "student")]


@pytest.mark.parametrize("edition", ["book", "student"])
def test_built_download_buttons_serve_the_portable_copies(edition):
    """After ``make test``'s portable step (``--install``), "download .ipynb" gives plain Markdown."""
    sources = (
        portable.edition_root(edition) / "_build" / "html" / "_sources" / "chapters"
    )
    if not sources.is_dir():
        message = f"{sources} is not built (run `make test`)"
        if os.environ.get("RNNLIB_REQUIRE_BUILD"):
            pytest.fail(message)
        pytest.skip(message)
    notebooks = sorted(sources.glob("[01]*.ipynb"))
    assert len(notebooks) == 11, notebooks
    raw = {
        nb.name: n
        for nb in notebooks
        if (
            n := sum(
                portable.count_myst(c.source)
                for c in nbformat.read(nb, as_version=4).cells
                if c.cell_type == "markdown"
            )
        )
    }
    assert not raw, f"downloads with MyST left (constructs per notebook): {raw}"


def test_the_copy_opens_with_the_chapters_results(edition):
    """The execution's claim records become the HTML page's results box, with links."""
    from rnnlib.claims import registry

    claims = registry()
    paper = next(c for c in claims.values() if c.kind == "paper")
    ours = next(c for c in claims.values() if c.kind != "paper")
    nb = nbformat.read(edition / "chapters" / "01_demo.ipynb", as_version=4)
    check = nbformat.v4.new_code_cell("claims.check(...)")
    check.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/plain": f"claim {paper.id} (reproduced): slope -0.5"},
        ),
        nbformat.v4.new_output(
            "stream",
            name="stdout",
            text=f"claim {ours.id} (not reproduced):\n  0.72 vs 0.68\n",
        ),
    ]
    nb.cells.append(check)
    out = portable.portable_notebook(nb, _context(edition), executed=nb)
    titles = [i for i, c in enumerate(out.cells) if c.source.startswith("# 1.")]
    box = out.cells[titles[0] + 1].source
    assert box.startswith(
        "**What this chapter checks: 2 claims (1 reproduced, 1 not reproduced)**"
    )
    assert "- **reproduced**: " in box and "- **not reproduced**: " in box
    ours_line = next(line for line in box.splitlines() if f"#check-{ours.id}" in line)
    # said once, whether the registered text says it already or not
    assert ours_line.count(f"our {ours.kind}") == 1, ours_line
    said = next(
        c for c in claims.values() if c.kind != "paper" and f"(our {c.kind})" in c.text
    )
    check.outputs[1]["text"] = f"claim {said.id} (reproduced): 1\n"
    again = portable.portable_notebook(nb, _context(edition), executed=nb)
    line = next(
        line
        for c in again.cells
        for line in c.source.splitlines()
        if f"#check-{said.id}" in line
    )
    assert line.count(f"our {said.kind}") == 1, line
    assert f"https://book.example/chapters/01_demo.html#check-{paper.id}" in box
    assert f"https://book.example/chapters/ledger.html#claim-{ours.id}" in box
    # a chapter that checks no claim gets no box
    plain, _ = _converted(edition)
    assert not any(
        c.source.startswith("**What this chapter checks") for c in plain.cells
    )


def test_only_names_a_chapter_by_path_file_or_stem(edition, tmp_path):
    """``--only`` takes chapters/01_demo.ipynb, 01_demo.ipynb or 01_demo; a name that matches
    no notebook is refused with the edition's names (it used to convert nothing, silently)."""
    (edition / "_config.yml").write_text(
        "sphinx:\n  config:\n    mathjax3_config:\n      tex:\n"
        "        macros: {R: '\\\\mathbb{R}'}\n"
    )
    for name in (
        "chapters/01_demo.ipynb",
        "01_demo.ipynb",
        "01_demo",
    ):
        done = portable.convert_edition(
            "book",
            tmp_path / "out",
            root=edition,
            execute_missing=False,
            only=[name],
        )
        assert [c.target.name for c in done] == ["01_demo.ipynb"], name
    with pytest.raises(ValueError, match="no notebook.*03_x.*01_demo"):
        portable.convert_edition(
            "book",
            tmp_path / "out",
            root=edition,
            execute_missing=False,
            only=["03_x"],
        )
