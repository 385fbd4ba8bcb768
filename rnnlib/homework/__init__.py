"""Checkers that students call from the exercises (every chapter).

A checker ``check_exercise_N_M(student_fn)`` runs the student's function and
rnnlib's reference on seeded random inputs and either prints a pass, or raises
:class:`ExerciseCheckFailed` with a message that says which input went wrong
and what was expected (shapes, the largest difference), never the reference's
code. Checkers work offline and in Colab: they only need rnnlib and torch.

Each chapter's checkers live in ``rnnlib/homework/chapterNN.py`` and register
themselves with :func:`register`; this package imports every such module, so
``rnnlib.homework.check_exercise_N_M`` and :data:`CHECKERS` list them all.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._core import (
    CHECKERS,
    Case,
    ExerciseCheckFailed,
    compare_with_reference,
    register,
)

__all__ = [
    "CHECKERS",
    "Case",
    "ExerciseCheckFailed",
    "compare_with_reference",
    "register",
]

for _info in sorted(
    pkgutil.iter_modules(__path__), key=lambda i: i.name
):
    if _info.name.startswith("chapter"):
        _module = importlib.import_module(
            f"{__name__}.{_info.name}"
        )
        for _name in getattr(_module, "__all__", []):
            globals()[_name] = getattr(_module, _name)
            __all__.append(_name)
