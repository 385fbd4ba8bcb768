"""Checkers that students call from the exercises (every chapter).

A checker ``check_exercise_N_M(student_fn)`` runs the student's function and
rnnlib's reference on seeded random inputs and either prints a pass, or raises
:class:`ExerciseCheckFailed` with a message that says which input went wrong
and how (shape, dtype, how many entries, the order of the largest difference),
never the expected values or the reference's code. Checkers work offline and in
Colab: they only need rnnlib and torch. Each checker is an :class:`Exercise`
(:data:`EXERCISES`), whose inputs the grader draws afresh at grading time
(``rnnlib/homework/_core.py`` says how).

Each chapter's checkers live in ``rnnlib/homework/chapterNN.py`` and register
themselves with :func:`register`; this package imports every such module, so
``rnnlib.homework.check_exercise_N_M`` and :data:`CHECKERS` list them all.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._core import (
    CHECKERS,
    EXERCISES,
    Case,
    Exercise,
    ExerciseCheckFailed,
    compare_with_reference,
    mismatch,
    read_results,
    register,
    run_cases,
)

__all__ = [
    "CHECKERS",
    "EXERCISES",
    "Case",
    "Exercise",
    "ExerciseCheckFailed",
    "compare_with_reference",
    "mismatch",
    "read_results",
    "register",
    "run_cases",
]

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if _info.name.startswith("chapter"):
        _module = importlib.import_module(f"{__name__}.{_info.name}")
        for _name in getattr(_module, "__all__", []):
            globals()[_name] = getattr(_module, _name)
            __all__.append(_name)
