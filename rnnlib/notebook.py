"""What a chapter notebook needs from its front end, with nothing required beyond rnnlib.

The chapters glue their measured numbers into the prose with MyST-NB's ``glue``
(``{glue:text}`` roles, rendered by the book's build). A reader who installs only
the package (``pip install git+<repository>``, as in Colab) has no MyST-NB, and
a notebook front end does not render the roles anyway: there :func:`glue` is a
no-op, and the number is the one the cell printed just above the sentence.
"""

from __future__ import annotations

__all__ = ["glue", "HAS_MYST_NB"]

try:  # MyST-NB is installed with the book's environment (requirements.txt), not with rnnlib
    from myst_nb import glue as _myst_glue
except (
    ImportError
):  # pragma: no cover - exercised where myst_nb is absent
    _myst_glue = None

#: Whether MyST-NB (hence a real ``glue``) is available in this environment.
HAS_MYST_NB = _myst_glue is not None


def glue(
    name: str, variable: object, display: bool = True
) -> None:
    """Record ``variable`` under ``name`` for the book's ``{glue:text}`name` `` roles.

    Calls :func:`myst_nb.glue` where MyST-NB is installed (the book's build); without
    it (a bare ``pip install`` of the package, e.g. in Colab) it does nothing, so a
    chapter runs anywhere. ``name`` is a non-empty string of letters, digits and
    underscores, as the roles spell it.
    """
    if not isinstance(name, str):
        raise TypeError(
            f"name must be a str, got {type(name).__name__}"
        )
    if not name or not name.replace("_", "a").isalnum():
        raise ValueError(
            f"name must be a non-empty identifier of letters, digits and underscores, got {name!r}"
        )
    if not isinstance(display, bool):
        raise TypeError(
            f"display must be a bool, got {type(display).__name__}"
        )
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)
