"""The one call that asserts a claim of the papers and records it for the book's ledger.

Which claims the book tests is book content, not library code: the registry
``chapters/claims.yml`` beside the chapters holds one entry per claim of the two
papers, and of the one result of Hardt, Ma & Recht that chapter 8 tests (id, paper, statement number, kind, chapter, the claim in one sentence; or,
for a claim no chapter can test, the reason). A chapter's assert cell calls
:func:`check` instead of a bare ``assert``::

    claims.check("pg-lemma-4.4-rate", slope < -0.35, f"error slope in m: {slope:.2f}")

which raises ``AssertionError`` when the measurement disagrees with the claim, and
otherwise displays one line, ``claim <id> (<verdict>): <figure>``. That line is the
record the ledger page ("What the book verifies", ``booktools.ledger``) reads back
from the executed chapter, so the ledger's figure and verdict cannot disagree with
the assert.

Where the registry is found (:func:`registry_path`): the file named by the
environment variable ``RNNLIB_CLAIMS``; else ``chapters/claims.yml`` of the source
checkout this ``rnnlib`` is imported from (the book's build, ``pip install -e .``);
else ``claims.yml`` in the working directory (a notebook run from ``chapters/``). A
reader whose ``rnnlib`` is pip-installed (Colab) may have none: :func:`check` then
still asserts and displays its line, with the verdict the chapter passed or, if it
passed none, ``holds`` (the ledger page gives the book's verdict). Under
``RNNLIB_STRICT_CLAIMS=1`` (the book's build) a missing registry raises, and an id
the registry lacks raises in every mode.

Used by every chapter; the ledger page is built from the registry and these lines.
"""

from __future__ import annotations

import functools
import os
import textwrap
import warnings
from dataclasses import dataclass, fields
from pathlib import Path

from ._validation import Bool, Choice, Int, PathLike, Relation, Str, validate_params

__all__ = [
    "Claim",
    "PAPERS",
    "KINDS",
    "VERDICTS",
    "CLOSED_FORM",
    "EVIDENCE",
    "STRICT_ENV",
    "REGISTRY_ENV",
    "strict",
    "registry_path",
    "registry",
    "check",
]

#: The papers, as the registry names them: the two the book follows, and Hardt, Ma & Recht
#: (2018), whose result chapter 8 tests beside Part II and counts under its own name.
PAPERS = ("P&G 2021", "M&H 2019", "HMR 2018")
#: Kinds of claim: the paper's own statement, our reconstruction of a missing part, our heuristic.
KINDS = ("paper", "reconstruction", "heuristic")
#: Verdicts a measurement can give. ``"checked (closed form)"`` is for an assert that
#: re-evaluates a closed form (a formula computed and compared with itself or with its
#: limit): it checks the implementation of the statement, and cannot fail if the paper
#: were wrong, so the ledger counts it apart from the reproductions.
VERDICTS = (
    "reproduced",
    "reproduced in trend only",
    "checked (closed form)",
    "not reproduced",
    "not testable at this scale",
)
#: The verdict of an assert that re-evaluates a closed form.
CLOSED_FORM = "checked (closed form)"
#: Where a claim's evidence comes from: the chapter's live execution, or its recorded run.
EVIDENCE = ("live", "recorded")
#: Environment variable that makes every :func:`check` strict (the book's build sets it to ``1``).
STRICT_ENV = "RNNLIB_STRICT_CLAIMS"
#: Environment variable naming the registry file (default: see :func:`registry_path`).
REGISTRY_ENV = "RNNLIB_CLAIMS"
#: Characters of a displayed claim line: longer ones are folded at spaces (the book's
#: output boxes hold the code column's 67 characters; a longer line would wrap mid-word).
LINE_CHARS = 66


def strict() -> bool:
    """Whether a failed :func:`check` must raise even where the chapter runs off its piloted sizes.

    True when the environment variable :data:`STRICT_ENV` (``RNNLIB_STRICT_CLAIMS``)
    is ``1``, ``true`` or ``yes`` (any case); ``booktools.execute`` sets it for every
    chapter the build executes. Unset (a reader's own session), a check whose chapter
    runs at parameters other than the piloted ones (``check(..., piloted=False)``)
    reports a failure as a marked line and lets the notebook continue, and a missing
    registry is allowed; a check at the piloted parameters raises in every mode.
    """
    return os.environ.get(STRICT_ENV, "").strip().lower() in (
        "1",
        "true",
        "yes",
    )


@dataclass(frozen=True)
class Claim:
    """One entry of the registry: a claim the book tests (or cannot test).

    ``id``: short stable name, e.g. ``"pg-lemma-4.4-rate"``; ``paper``: one of
    :data:`PAPERS`; ``statement``: its number there (``"Lemma 4.4"``, ``"Sec. 5"``);
    ``kind``: one of :data:`KINDS`; ``chapter``: the chapter that tests it (1-11),
    0 for a claim no chapter can test, which gives the reason in ``untestable``;
    ``text``: the claim in one sentence; ``closed_form``: the chapter's assert
    re-evaluates a closed form (its only verdict is :data:`CLOSED_FORM`);
    ``evidence``: one of :data:`EVIDENCE`, ``"live"`` (the chapter's own
    execution measures it, the default) or ``"recorded"`` (the check reads the
    chapter's recorded run, ``chapters/records/chNN.json`` of
    :mod:`rnnlib.records`, which the chapter keeps honest by a live fingerprint).
    """

    id: str
    paper: str
    statement: str
    kind: str
    chapter: int
    text: str
    untestable: str = ""
    closed_form: bool = False
    evidence: str = "live"

    def __post_init__(self) -> None:
        # the fields' own constraints are declared on __init__ (below the class)
        for name in ("id", "statement", "text"):
            if not getattr(self, name).strip():
                raise ValueError(
                    f"{name} must be a non-empty string, got {getattr(self, name)!r}"
                )
        if any(c.isspace() for c in self.id):
            raise ValueError(f"id must be a string without spaces, got {self.id!r}")


Claim.__init__ = validate_params(
    Relation(
        "evidence != 'recorded' or chapter != 0",
        "evidence 'recorded' names the chapter whose record it reads",
    ),
    Relation(
        "(chapter == 0) == (len(untestable.strip()) > 0)",
        "untestable is given exactly when chapter is 0: the reason no chapter tests the claim",
    ),
    id=Str(),
    paper=Choice(*PAPERS),
    statement=Str(),
    kind=Choice(*KINDS),
    chapter=Int(0, 11),
    text=Str(),
    untestable=Str(),
    closed_form=Bool(),
    evidence=Choice(*EVIDENCE),
)(Claim.__init__)


def registry_path() -> Path | None:
    """The registry file :func:`check` reads, or None where there is none (a pip-installed rnnlib).

    The first that exists of: ``$RNNLIB_CLAIMS``; ``chapters/claims.yml`` next to the
    ``rnnlib`` package (a source checkout); ``./claims.yml``.
    """
    for candidate in (
        os.environ.get(REGISTRY_ENV, ""),
        Path(__file__).resolve().parent.parent / "chapters" / "claims.yml",
        "claims.yml",
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate).resolve()
    return None


@functools.lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int) -> dict[str, Claim]:
    import yaml

    entries = yaml.safe_load(path.read_text(encoding="utf8"))
    if not isinstance(entries, list):
        raise ValueError(f"{path}: the registry must be a list of claims")
    names = {f.name for f in fields(Claim)}
    required = {"id", "paper", "statement", "kind", "text"}
    out: dict[str, Claim] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: entry {i} is not a mapping")
        where = f"{path}: entry {i} ({entry.get('id')!r})"
        if required - set(entry):
            raise ValueError(f"{where} has no {sorted(required - set(entry))}")
        if set(entry) - names:
            raise ValueError(f"{where} has unknown fields {sorted(set(entry) - names)}")
        try:
            claim = Claim(**{"chapter": 0, **entry})
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where}: {err}") from None
        if claim.id in out:
            raise ValueError(f"{where}: claim id {claim.id!r} is registered twice")
        out[claim.id] = claim
    return out


@validate_params(path=PathLike())
def registry(path: str | Path | None = None) -> dict[str, Claim]:
    """The registered claims by id, in the file's order, read from ``path`` or :func:`registry_path`.

    ``{}`` when ``path`` is None and no registry is found. Raises ``ValueError``
    naming the entry when one lacks a field (``id``, ``paper``, ``statement``,
    ``kind``, ``text``), has an unknown one, an invalid value (:class:`Claim`), or
    an id already used; ``FileNotFoundError`` when ``path`` does not exist. Read
    once per version of the file.
    """
    if path is None:
        path = registry_path()
        if path is None:
            return {}
    elif not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"path must be a path to the registry file, got {type(path).__name__}"
        )
    path = Path(path).resolve()
    return dict(_load(path, path.stat().st_mtime_ns))


def _fold(head: str, text: str) -> str:
    """``head + text`` folded at spaces into lines of at most :data:`LINE_CHARS` characters.

    The first line keeps ``head`` whole (the ledger reads ``claim <id> (<verdict>): ``
    off it), on a line of its own if the first word does not fit after it;
    continuation lines are indented by two spaces.
    """
    wrap = functools.partial(
        textwrap.wrap,
        width=LINE_CHARS,
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    lines = wrap(text, initial_indent=head)
    if lines and len(lines[0]) > LINE_CHARS:
        lines = [head, *wrap(text, initial_indent="  ")]
    return "\n".join(lines) if lines else head.rstrip()


def _show(line: str) -> None:
    """Display ``line`` as a ``text/plain`` result in a notebook, print it elsewhere."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except (
        ImportError
    ):  # pragma: no cover - IPython comes with Jupyter, not with rnnlib
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display({"text/plain": line}, raw=True)
    else:
        print(line)


@validate_params(
    claim_id=Str(), figure=Str(), verdict=Str()
)  # holds: any truth value (numpy, torch)
def check(
    claim_id: str,
    holds: bool,
    figure: str,
    *,
    verdict: str | None = None,
    piloted: bool = True,
) -> None:
    """Assert that a measurement supports claim ``claim_id``, and record it for the ledger.

    ``holds`` is the assert's condition (a ``bool``, e.g. ``slope < -0.35``);
    ``figure`` the key measured number(s) as a short string; ``verdict`` one of
    :data:`VERDICTS`: what the measurement says about the paper's claim when
    ``holds`` is true (a chapter that measures a disagreement asserts the
    disagreement and says ``"not reproduced"``). The default is
    :data:`CLOSED_FORM` for a claim registered with ``closed_form: true`` (the
    only verdict such a claim accepts) and ``"reproduced"`` otherwise; the
    closed-form verdict is refused for any other claim.

    ``piloted``: whether the chapter runs at the parameters the check was
    piloted at (a chapter passes ``piloted=(its parameters == the defaults)``).

    Raises ``AssertionError`` naming the claim and the figure when ``holds`` is
    false, unless ``piloted`` is false and :func:`strict` is false (a reader's
    run at other sizes): then it displays one line marked ``NOT SUPPORTED at
    these parameters`` (no record) and warns. Otherwise displays the record
    line ``claim <id> (<verdict>): <figure>`` (in a notebook as its result,
    elsewhere printed). ``KeyError`` for an id the registry lacks, or, under
    :func:`strict`, when no registry is found (see the module's docstring).
    """
    known = registry()
    if claim_id not in known and (known or strict()):
        where = registry_path() or f"no registry (${REGISTRY_ENV})"
        raise KeyError(
            f"claim_id {claim_id!r} is not registered in {where} "
            "(the book's registry is chapters/claims.yml)"
        )
    claim = known.get(claim_id)
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    if claim is not None:
        if verdict is None:
            verdict = CLOSED_FORM if claim.closed_form else "reproduced"
        if claim.closed_form != (verdict == CLOSED_FORM):
            raise ValueError(
                f"verdict: claim {claim_id!r} is registered with closed_form="
                f"{claim.closed_form}: its verdict must "
                f"{'' if claim.closed_form else 'not '}be {CLOSED_FORM!r}, got {verdict!r}"
            )
    if not isinstance(figure, str) or not figure.strip():
        raise ValueError(
            "figure must be a non-empty string with the measured number(s)"
        )
    if not isinstance(piloted, bool):
        raise TypeError(f"piloted must be a bool, got {type(piloted).__name__}")
    if not bool(holds):  # numpy/torch booleans too
        if piloted or strict():
            raise AssertionError(
                f"claim {claim_id} not supported by the measurement: {figure}"
            )
        line = _fold(
            f"claim {claim_id} NOT SUPPORTED at these parameters "
            "(piloted at the chapter's defaults only): ",
            figure,
        )
        warnings.warn(line, stacklevel=2)
        _show(line)
        return
    if not piloted:
        # a reader's run at other sizes: it holds there, but it is not the book's record
        _show(
            _fold(
                f"claim {claim_id} (holds at these parameters; the verdict "
                f"'{verdict or 'holds'}' is the defaults'): ",
                figure,
            )
        )
        return
    _show(_fold(f"claim {claim_id} ({verdict or 'holds'}): ", figure))
