"""The claims the book tests, and the one call that asserts and records each of them.

Every claim of the two papers that a chapter measures is registered here, in
``rnnlib/claims/chapterNN.py`` (one module per chapter, discovered like the
homework checkers), with the paper's statement number and its *kind*: the
paper's own claim, our reconstruction, or our heuristic. Claims the book cannot
test are registered too, with the reason, so that the ledger covers both papers.

A chapter's assert cell calls :func:`check` instead of a bare ``assert``::

    claims.check("pg-lemma-4.4-rate", slope < -0.35, f"error slope in m: {slope:.2f}")

which raises ``AssertionError`` when the measurement disagrees with the claim,
and otherwise displays one line and a machine-readable record (MIME type
:data:`MIME`) that the book's ledger page collects from the executed chapters.
So the ledger's figure and verdict cannot disagree with the assert.

Used by every chapter; the ledger page ("What the book verifies") is built from it.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
from dataclasses import asdict, dataclass

__all__ = [
    "Claim",
    "CLAIMS",
    "KINDS",
    "VERDICTS",
    "CLOSED_FORM",
    "MIME",
    "register",
    "check",
    "untestable",
    "STRICT_ENV",
    "strict",
]

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
#: MIME type of the record :func:`check` displays.
MIME = "application/vnd.rnnlib.claim+json"
#: Environment variable that makes every :func:`check` strict (the book's build sets it to ``1``).
STRICT_ENV = "RNNLIB_STRICT_CLAIMS"


def strict() -> bool:
    """Whether a failed :func:`check` must raise even where the chapter runs off its piloted sizes.

    True when the environment variable :data:`STRICT_ENV` (``RNNLIB_STRICT_CLAIMS``)
    is set to ``1``, ``true`` or ``yes`` (any case); ``booktools.execute`` sets it for
    every chapter the build executes, so the book's build is always strict. Unset (a
    reader's own Jupyter session), a check whose chapter says it runs at parameters
    other than the piloted ones (``check(..., piloted=False)``) reports a failure as a
    clearly marked line and lets the notebook continue; a check at the piloted
    parameters raises in every mode.

    Used by :func:`check`; chapters 8-11 pass ``piloted=`` from their parameters cell.
    """
    return os.environ.get(STRICT_ENV, "").strip().lower() in (
        "1",
        "true",
        "yes",
    )


@dataclass(frozen=True)
class Claim:
    """One claim the book tests (or cannot test).

    ``id``: short stable name, e.g. ``"pg-lemma-4.4-rate"``; ``paper``: ``"P&G 2021"``
    or ``"M&H 2019"``; ``statement``: its number there (``"Lemma 4.4"``, ``"Prop. 2"``,
    ``"Sec. 5"``); ``kind``: one of :data:`KINDS`; ``chapter``: the chapter that tests
    it (0 if none); ``text``: the claim in one sentence; ``untestable``: if non-empty,
    why the book cannot test it; ``closed_form``: the chapter's assert re-evaluates a
    closed form (so its only verdict is ``"checked (closed form)"``, see :func:`check`).
    """

    id: str
    paper: str
    statement: str
    kind: str
    chapter: int
    text: str
    untestable: str = ""
    closed_form: bool = False

    def __post_init__(self) -> None:
        if (
            not isinstance(self.id, str)
            or not self.id
            or " " in self.id
        ):
            raise ValueError(
                f"id must be a non-empty string without spaces, got {self.id!r}"
            )
        if self.paper not in ("P&G 2021", "M&H 2019"):
            raise ValueError(
                f"paper must be 'P&G 2021' or 'M&H 2019', got {self.paper!r}"
            )
        if self.kind not in KINDS:
            raise ValueError(
                f"kind must be one of {KINDS}, got {self.kind!r}"
            )
        if (
            isinstance(self.chapter, bool)
            or not isinstance(self.chapter, int)
            or not 0 <= self.chapter <= 11
        ):
            raise ValueError(
                f"chapter must be an int in [0, 11], got {self.chapter!r}"
            )
        if not isinstance(self.closed_form, bool):
            raise TypeError(
                f"closed_form must be a bool, got {type(self.closed_form).__name__}"
            )
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(
                f"text must be a non-empty sentence, got {self.text!r}"
            )


#: Every registered claim, by id.
CLAIMS: dict[str, Claim] = {}


def register(*claims: Claim) -> None:
    """Add claims to :data:`CLAIMS` (called by each ``chapterNN`` module); ids must be unique."""
    for claim in claims:
        if not isinstance(claim, Claim):
            raise TypeError(
                f"claims must be Claim records, got {type(claim).__name__}"
            )
        if claim.id in CLAIMS and CLAIMS[claim.id] != claim:
            raise ValueError(
                f"claim id {claim.id!r} is registered twice"
            )
        CLAIMS[claim.id] = claim


def untestable(
    id: str,
    paper: str,
    statement: str,
    kind: str,
    text: str,
    reason: str,
) -> Claim:
    """A claim the book cannot test, with the reason (it still gets a ledger row)."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(
            "reason must say why the claim cannot be tested"
        )
    return Claim(
        id, paper, statement, kind, 0, text, untestable=reason
    )


#: Characters of a displayed claim line: longer ones are folded at spaces (the book's
#: output boxes hold the code column's 67 characters; a longer line would wrap mid-word).
LINE_CHARS = 66


def _fold(head: str, text: str) -> str:
    """``head + text`` folded at spaces into lines of at most :data:`LINE_CHARS` characters.

    The first line keeps ``head`` whole (the ledger reads ``claim <id> (<verdict>): `` off
    it); continuation lines are indented by two spaces.
    """
    import textwrap

    lines = textwrap.wrap(
        text,
        width=LINE_CHARS,
        initial_indent=head,
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    if lines and len(lines[0]) > LINE_CHARS:
        # the first word does not fit after the head: the head gets a line of its own
        lines = [
            head,
            *textwrap.wrap(
                text,
                width=LINE_CHARS,
                initial_indent="  ",
                subsequent_indent="  ",
                break_long_words=False,
                break_on_hyphens=False,
            ),
        ]
    return "\n".join(lines) if lines else head.rstrip()


class _Record:
    """What :func:`check` displays: one text line, and the record under :data:`MIME`.

    In a notebook the record is displayed exactly once, whether or not ``check`` is the
    last expression of its cell (several checks in one cell each leave their record).
    """

    def __init__(self, record: dict) -> None:
        self.record = record
        self._shown = False

    def _repr_mimebundle_(self, include=None, exclude=None):
        r = self.record
        return {
            MIME: json.dumps(r),
            "text/plain": _fold(
                f"claim {r['id']} ({r['verdict']}): ", r["figure"]
            ),
        }

    def _ipython_display_(self) -> None:
        if self._shown:
            return
        from IPython.display import display

        self._shown = True
        display(self._repr_mimebundle_(), raw=True)


def _display_in_notebook(record: _Record) -> None:
    """Display ``record`` now when running under IPython (a notebook kernel), else do nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book, not of rnnlib
        return
    if get_ipython() is not None:
        record._ipython_display_()


def check(
    claim_id: str,
    holds: bool,
    figure: str,
    *,
    verdict: str | None = None,
    piloted: bool = True,
):
    """Assert that a measurement supports claim ``claim_id``, and record it for the ledger.

    ``holds`` is the assert's condition (a ``bool``, e.g. ``slope < -0.35``);
    ``figure`` the key measured number(s) as a short string; ``verdict`` one of
    :data:`VERDICTS`: what the measurement says about the paper's claim when
    ``holds`` is true (a chapter that measures a disagreement asserts the
    disagreement and says ``"not reproduced"``). The default is
    ``"checked (closed form)"`` for a claim registered with ``closed_form=True``
    (the only verdict such a claim accepts) and ``"reproduced"`` otherwise; the
    closed-form verdict is refused for any other claim.

    ``piloted``: whether the chapter runs at the parameters the check was
    piloted at (a chapter passes ``piloted=(its parameters == the defaults)``).

    Raises ``AssertionError`` naming the claim and the figure when ``holds`` is
    false, unless ``piloted`` is false and :func:`strict` is false (a reader's
    run at other sizes): then it displays one line marked ``NOT SUPPORTED at
    these parameters`` (no ledger record), warns, and returns ``None``.
    Otherwise displays (in a notebook) one line plus the record (ids,
    verdict, figure), once, and returns it.
    """
    if claim_id not in CLAIMS:
        raise KeyError(
            f"claim_id {claim_id!r} is not registered (add it to rnnlib/claims/chapterNN.py)"
        )
    closed = CLAIMS[claim_id].closed_form
    if verdict is None:
        verdict = CLOSED_FORM if closed else "reproduced"
    if verdict not in VERDICTS:
        raise ValueError(
            f"verdict must be one of {VERDICTS}, got {verdict!r}"
        )
    if closed != (verdict == CLOSED_FORM):
        raise ValueError(
            f"claim {claim_id!r} is registered with closed_form={closed}: its verdict "
            f"must {'' if closed else 'not '}be {CLOSED_FORM!r}, got {verdict!r}"
        )
    if not isinstance(figure, str) or not figure.strip():
        raise ValueError(
            "figure must be a non-empty string with the measured number(s)"
        )
    if not isinstance(piloted, bool):
        raise TypeError(
            f"piloted must be a bool, got {type(piloted).__name__}"
        )
    if not isinstance(holds, bool):
        holds = bool(holds)  # numpy/torch booleans
    if not holds and not piloted and not strict():
        import warnings

        line = _fold(
            f"claim {claim_id} NOT SUPPORTED at these parameters "
            "(piloted at the chapter's defaults only): ",
            figure,
        )
        warnings.warn(line, stacklevel=2)
        try:
            from IPython import get_ipython
            from IPython.display import display

            if get_ipython() is not None:
                display({"text/plain": line}, raw=True)
        except ImportError:  # pragma: no cover
            pass
        return None
    if not holds:
        raise AssertionError(
            f"claim {claim_id} not supported by the measurement: {figure}"
        )
    record = _Record(
        {
            **asdict(CLAIMS[claim_id]),
            "verdict": verdict,
            "figure": figure,
        }
    )
    _display_in_notebook(record)
    return record


for _info in sorted(
    pkgutil.iter_modules(__path__), key=lambda i: i.name
):
    if _info.name.startswith("chapter"):
        importlib.import_module(f"{__name__}.{_info.name}")
