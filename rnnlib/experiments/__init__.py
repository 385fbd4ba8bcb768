"""The chapters' experiments: sweeps over widths, lengths and seeds, and the records they return.

One module per chapter (``chNN.py``), beside that chapter's figures (:mod:`rnnlib.plotting`)
and checkers (:mod:`rnnlib.homework`). The theory modules (``elman``, ``pseudo``, ``ntk``, ...)
hold the objects of the papers; a module here only combines them into the measurement a
chapter reports, so a chapter writes ``from rnnlib.experiments import ch07`` and calls
``ch07.some_sweep(...)``. Nothing here is re-exported: import the chapter's module.
"""

from __future__ import annotations

__all__: list[str] = []
