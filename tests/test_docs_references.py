"""The names, paths, make targets and sections that ARCHITECTURE.md and CONTRIBUTING.md cite exist.

The convention. A span in backticks in either file is a *reference*, and must
resolve, when it has one of these forms (any other span, a code example, an
option, a third-party name such as ``torch.nn``, is not checked):

* **a dotted name** whose first part is ``rnnlib`` or ``booktools``
  (``rnnlib.ntk.tangent_kernel``, ``booktools.records.WAITS``), alone or at the
  start of the span before a call or a command's arguments
  (``rnnlib._rng.derive(generator, "weights", k)``, ``booktools.cache_key _build``):
  its longest prefix that is a module is found with ``importlib.util.find_spec``
  (not imported), and what follows is looked up with ``getattr`` on that module,
  imported;
* **a short dotted name** whose first part is a module of ``rnnlib``,
  ``rnnlib.experiments``, ``rnnlib.plotting``, ``rnnlib.homework``,
  ``booktools`` or ``booktools.sphinx_ext`` (``ch05.rnn_sweep``,
  ``claims.check``, ``_style.COLUMN_WIDTH``, ``sphinx_ext.layout``): resolved as
  above under the first of those packages where it resolves;
* **a path**: no spaces, a ``/`` in it or a file suffix (``rnnlib/ntk.py``,
  ``chapters/records/``, ``pyproject.toml``), relative to the repository root, or
  to ``rnnlib/`` or ``booktools/`` (``plotting/chapterNN.py``); paths in the
  folders a build writes (``_build/``, ``student/``, ...) are not checked;
* **a make command** (``make record CH=11``): each goal is a target of the Makefile;
  ``python -m MODULE`` inside a span: MODULE is found.

A single bare name (``elman``, ``PARAMS``) is not checked: the module tables'
first columns are ``tests/test_architecture.py``'s to check, and elsewhere a
reference is written qualified.

Placeholders make a span a template, which must match at least one name or
file: ``NN`` (after a lower-case letter, an underscore or a slash: ``chNN``,
``chapterNN``, ``NN_<name>``) is two digits, ``N`` and ``M`` between underscores
(``check_exercise_N_M``) a number, ``<word>`` and ``*`` anything.

Sections: a citation ``ARCHITECTURE.md, "Heading"`` (also ``CONTRIBUTING.md``,
``README.md``, with or without ``.md``, the comma or a parenthesis) anywhere in
the repository's code and docs, and ``section "Heading"`` inside the two files,
names a heading of the file cited: its text, without ``#``, backticks and
emphasis, begins with the cited words.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("ARCHITECTURE.md", "CONTRIBUTING.md")
PACKAGES = ("rnnlib", "booktools")
#: where a short dotted name (its first part a module of one of these) is looked up
SHORT_NAME_PACKAGES = (
    "rnnlib",
    "rnnlib.experiments",
    "rnnlib.plotting",
    "rnnlib.homework",
    "booktools",
    "booktools.sphinx_ext",
)
#: folders a build or a make target writes: not in a checkout
GENERATED = {
    "_build",
    "student",
    "portable",
    "lab",
    "_extra",
    "node_modules",
    ".venv",
}
SUFFIXES = {
    ".py",
    ".md",
    ".yml",
    ".yaml",
    ".json",
    ".cfg",
    ".toml",
    ".ipynb",
    ".txt",
    ".bib",
    ".css",
    ".js",
}
#: the files whose section citations are checked
CITING = (
    "Makefile",
    "*.md",
    "*.toml",
    "*.yml",
    "docs/*.md",
    "chapters/*.md",
    "rnnlib/**/*.py",
    "booktools/**/*.py",
    "tests/*.py",
    "benchmarks/*.py",
)

IDENT = r"[A-Za-z_]\w*"
#: a dotted name at the start of a span, alone or before a call or a command's arguments
LEADING_NAME = re.compile(rf"@?({IDENT}(?:\.{IDENT})+)(?=\(|\s|$)")
PATH = re.compile(r"[A-Za-z_.<*][\w.<>*-]*(?:/[\w.<>*-]*)*")
PYTHON_M = re.compile(r"python -m ([\w.]+)")


# --- extraction ------------------------------------------------------------------------------


def spans(text: str) -> list[str]:
    """The spans of ``text`` in single backticks (fenced blocks and double backticks left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"``.*?``", "", text, flags=re.S)
    return re.findall(r"`([^`\n]+)`", text)


def _template(part: str) -> str | None:
    """The regular expression of a name or path part with placeholders, or None."""
    if not re.search(
        r"(?<![A-Z])NN(?![A-Za-z])|(?<=_)[NM](?=_|$)|<\w+>|\*",
        part,
    ):
        return None
    out = re.escape(part)
    out = re.sub(r"(?<![A-Z])NN(?![A-Za-z])", r"\\d\\d", out)
    out = re.sub(r"(?<=_)[NM](?=_|$)", r"\\d+", out)
    out = re.sub(r"<\w+>", r"\\w+", out)
    return out.replace(r"\*", ".*")


# --- resolution ------------------------------------------------------------------------------


def _spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, AttributeError, ValueError):
        return None


def _submodules(module: str) -> list[str]:
    spec = _spec(module)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [m.name for m in pkgutil.iter_modules(spec.submodule_search_locations)]


def _resolves(module: str, parts: list[str]) -> bool:
    """Whether ``parts`` name submodules and then attributes below the module ``module``."""
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    pattern = _template(head)
    if pattern is None:
        if _spec(f"{module}.{head}") is not None:
            return _resolves(f"{module}.{head}", rest)
        heads = [head]
    else:
        subs = [m for m in _submodules(module) if re.fullmatch(pattern, m)]
        if any(_resolves(f"{module}.{m}", rest) for m in subs):
            return True
        heads = None
    try:
        obj = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module that does not import is reported
        return False
    if heads is None:
        heads = [n for n in dir(obj) if re.fullmatch(pattern, n)]
    for name in heads:
        if not hasattr(obj, name):
            continue
        value = getattr(obj, name)
        for attr in rest:
            if not hasattr(value, attr):
                break
            value = getattr(value, attr)
        else:
            return True
    return False


def resolve_name(name: str) -> str | None:
    """None when the dotted name ``name`` resolves; else what is wrong with it."""
    parts = name.split(".")
    if parts[0] in PACKAGES:
        if _spec(parts[0]) is None:
            return f"`{name}`: no package {parts[0]}"
        return None if _resolves(parts[0], parts[1:]) else f"`{name}` does not resolve"
    for package in SHORT_NAME_PACKAGES:
        if _resolves(package, parts):
            return None
    return f"`{name}` resolves under none of {', '.join(SHORT_NAME_PACKAGES)}"


def _is_short_name(name: str) -> bool:
    head = name.split(".")[0]
    pattern = _template(head) or re.escape(head)
    return any(
        re.fullmatch(pattern, m) for p in SHORT_NAME_PACKAGES for m in _submodules(p)
    )


def _glob(rel: str) -> str:
    out = re.sub(r"(?<![A-Z])NN(?![A-Za-z])", "[0-9][0-9]", rel)
    return re.sub(r"<\w+>", "*", out)


def resolve_path(rel: str) -> str | None:
    """None when the path ``rel`` (a glob where it has placeholders) exists; else the problem."""
    for base in (ROOT, ROOT / "rnnlib", ROOT / "booktools"):
        pattern = _glob(rel.rstrip("/"))
        found = (
            list(base.glob(pattern)) if pattern != rel.rstrip("/") else [base / pattern]
        )
        if any(p.exists() and (p.is_dir() or not rel.endswith("/")) for p in found):
            return None
    return f"`{rel}`: no such file or folder"


def make_targets() -> set[str]:
    targets = set()
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(
            r"([A-Za-z0-9_.%-]+(?:[ \t]+[A-Za-z0-9_.%-]+)*)[ \t]*:(?!=)",
            line,
        )
        if m:
            targets |= set(m.group(1).split())
    return targets


def resolve_make(command: str) -> str | None:
    goals = [w for w in command.split()[1:] if "=" not in w and not w.startswith("-")]
    missing = [g for g in goals if g not in make_targets()]
    return f"`{command}`: no make target {missing}" if missing else None


def kind(span: str) -> str | None:
    """Which kind of reference ``span`` is (``name``, ``path``, ``make``, ``module``), or None."""
    m = LEADING_NAME.match(span)
    if m and (m.group(1).split(".")[0] in PACKAGES or _is_short_name(m.group(1))):
        return "name"
    if span.startswith("make "):
        return "make"
    if PYTHON_M.search(span):
        return "module"
    if " " in span:
        return None
    if PATH.fullmatch(span) and (
        "/" in span or Path(span).suffix in SUFFIXES or (ROOT / span).is_file()
    ):
        if span.split("/")[0] in GENERATED or span.startswith(("./", "../")):
            return None
        if "/" in span or Path(span).suffix in SUFFIXES or span == "Makefile":
            return "path"
    return None


def problem(span: str) -> str | None:
    """None when the reference ``span`` resolves; else a sentence saying what is wrong."""
    k = kind(span)
    if k == "make":
        return resolve_make(span)
    if k == "module":
        missing = [
            m for m in PYTHON_M.findall(span) if "<" not in m and _spec(m) is None
        ]
        return f"`{span}`: no module {missing}" if missing else None
    if k == "path":
        return resolve_path(span)
    if k == "name":
        return resolve_name(LEADING_NAME.match(span).group(1))
    return None


def references() -> list[tuple[str, str]]:
    """(file, span) for each reference of ARCHITECTURE.md and CONTRIBUTING.md."""
    out = []
    for doc in DOCS:
        for span in spans((ROOT / doc).read_text()):
            if kind(span) is not None and (doc, span) not in out:
                out.append((doc, span))
    return out


# --- sections --------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[`*_]", "", text)).strip().lower()


def headings(doc: str) -> list[str]:
    text = re.sub(r"```.*?```", "", (ROOT / doc).read_text(), flags=re.S)
    return [_normal(h) for h in re.findall(r"^#+\s+(.*)$", text, flags=re.M)]


#: ``DOC.md, "Heading"``, ``DOC "Heading"``, ``DOC.md ("Heading")``; not a string literal
#: such as ``"README.md"`` nor a span in backticks
CITATION = re.compile(
    r"(?<![\"'`/\w])(ARCHITECTURE|CONTRIBUTING|README)(?:\.md)?"
    r"(?:,\s*|\s+\(?|\s*\()[\"“]([^\"”()=]{1,60})[\"”]"
)


def _joined(path: Path) -> str:
    """The file's text with line breaks and comment markers between lines folded to spaces."""
    lines = path.read_text(errors="replace").splitlines()
    return " ".join(re.sub(r"^\s*(#+|//|\*)?\s*", "", line) for line in lines)


def section_problem(doc: str, section: str) -> str | None:
    """None when ``doc`` has a heading that begins with ``section``; else the problem."""
    cited = _normal(section)
    if any(h.startswith(cited) for h in headings(doc)):
        return None
    return f'{doc} has no section "{section}"'


def section_citations() -> list[tuple[str, str, str]]:
    """(citing file, cited file, section) for each citation of a section of the three docs."""
    out = []
    files = sorted({p for g in CITING for p in ROOT.glob(g) if p.is_file()})
    for path in files:
        rel = str(path.relative_to(ROOT))
        text = _joined(path)
        for m in CITATION.finditer(text):
            out.append((rel, f"{m.group(1)}.md", m.group(2)))
        if rel in DOCS:
            for m in re.finditer(r"section [\"“]([^\"”]+)[\"”]", text):
                out.append((rel, rel, m.group(1)))
    return out


# --- the tests -------------------------------------------------------------------------------


def test_the_docs_have_references_to_check():
    """The extraction finds the references (a test of nothing would pass)."""
    refs = references()
    kinds = {kind(span) for _, span in refs}
    assert len(refs) >= 100 and kinds == {
        "name",
        "path",
        "make",
        "module",
    }, (
        len(refs),
        kinds,
    )


def test_every_reference_resolves():
    problems = [f"{doc}: {p}" for doc, span in references() if (p := problem(span))]
    assert not problems, "\n".join(problems)


def test_every_cited_section_exists():
    cites = section_citations()
    assert len(cites) >= 10
    problems = [
        f"{src} cites {p}"
        for src, doc, sec in cites
        if (p := section_problem(doc, sec))
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "span",
    [
        "rnnlib.ntk.no_such_kernel",
        "rnnlib.no_such_module",
        "booktools.records.NO_SUCH_WAIT",
        "ch05.no_such_sweep",
        "rnnlib.experiments.chNN.no_such_sweep",
        "rnnlib/no_such_module.py",
        "chapters/records/ch99.json",
        "make no-such-target",
        "python -m booktools.no_such_tool",
    ],
)
def test_a_bogus_reference_is_reported(span):
    assert kind(span) is not None, span
    assert problem(span) is not None, span


def test_a_bogus_section_is_reported():
    assert section_problem("CONTRIBUTING.md", "No such section") is not None
    assert section_problem("CONTRIBUTING.md", "Claims and numbers") is None
