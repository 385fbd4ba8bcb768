"""What a chapter notebook needs from its front end, with nothing required beyond rnnlib.

The chapters glue their measured numbers into the prose with MyST-NB's ``glue``
(``{glue:text}`` roles, rendered by the book's build). A reader who installs only
the package (``pip install git+<repository>``, as in Colab) has no MyST-NB, and
a notebook front end does not render the roles anyway: there :func:`glue` only
records the value, and the number is the one the cell printed just above the sentence.

For JupyterLab (``make lab``, ``booktools.lab``) the roles are rewritten into MyST
inline expressions, which jupyterlab-myst evaluates in the kernel once the gluing cell
has run::

    {eval}`rnnlib.notebook.glued("key", ".2f")`

:func:`glued` returns the recorded value formatted as the role would format it.
"""

from __future__ import annotations

import numpy as np

from ._validation import Bool, Str, validate_params

__all__ = ["glue", "glued", "HAS_MYST_NB"]

try:  # MyST-NB is installed with the book's environment (requirements.txt), not with rnnlib
    from myst_nb import glue as _myst_glue
except ImportError:  # pragma: no cover - exercised where myst_nb is absent
    _myst_glue = None

#: Whether MyST-NB (hence a real ``glue``) is available in this environment.
HAS_MYST_NB = _myst_glue is not None
#: The values glued so far in this kernel, by name.
_GLUED: dict[str, object] = {}


@validate_params(name=Str(), display=Bool())
def glue(name: str, variable: object, display: bool = True) -> None:
    """Record ``variable`` under ``name`` for the book's ``{glue:text}`name` `` roles.

    Calls :func:`myst_nb.glue` where MyST-NB is installed (the book's build); without
    it (a bare ``pip install`` of the package, e.g. in Colab) it does nothing, so a
    chapter runs anywhere. ``name`` is a non-empty string of letters, digits and
    underscores, as the roles spell it.
    """
    if not name or not name.replace("_", "a").isalnum():
        raise ValueError(
            f"name must be a non-empty identifier of letters, digits and underscores, got {name!r}"
        )
    if isinstance(variable, np.generic):
        # a NumPy scalar as the Python number it holds: its text is then "0.05",
        # not "np.float64(0.05)", which MyST-NB's format specs cannot read
        variable = variable.item()
    _GLUED[name] = variable
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)


class _Text:
    """What an inline expression shows: its text, as its plain-text representation."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


@validate_params(name=Str(), format_spec=Str())
def glued(name: str, format_spec: str = ""):
    """The value glued under ``name``, formatted as ``{glue:text}`name:format_spec` `` shows it.

    Before the cell that glues it has run, the text is "(computed when the chapter
    runs)": a sentence may name a number computed a few cells further down, and
    jupyterlab-myst evaluates the expression again when the cell is shown. Returns an object whose plain-text representation is
    that text, which is what a front end shows for an inline expression.
    """
    if name not in _GLUED:
        return _Text("(computed when the chapter runs)")
    value = _GLUED[name]
    try:
        return _Text(format(value, format_spec))
    except (TypeError, ValueError):
        return _Text(str(value))
