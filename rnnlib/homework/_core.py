"""The machinery shared by the exercise checkers of every chapter.

A checker ``check_exercise_N_M(student_fn)`` runs the student's function and
rnnlib's reference on seeded random inputs and either prints a pass, or raises
:class:`ExerciseCheckFailed` with a message that says which input went wrong
and what was expected (shapes, the largest difference), never the reference's
code. Checkers work offline and in Colab: they only need rnnlib and torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch

__all__ = [
    "ExerciseCheckFailed",
    "Case",
    "compare_with_reference",
    "register",
    "CHECKERS",
]

#: Every checker by exercise number ("N.M"), filled by :func:`register`.
CHECKERS: dict[str, Callable] = {}


def register(number: str) -> Callable[[Callable], Callable]:
    """Decorator: record a checker under its exercise number ``"N.M"`` in :data:`CHECKERS`."""

    def wrap(fn: Callable) -> Callable:
        if number in CHECKERS:
            raise ValueError(
                f"exercise {number} already has a checker ({CHECKERS[number].__name__})"
            )
        CHECKERS[number] = fn
        return fn

    return wrap


class ExerciseCheckFailed(AssertionError):
    """A student's answer disagrees with the reference on some input."""


@dataclass
class Case:
    """One test input: positional ``args`` and a human description of them."""

    description: str
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.description, str):
            raise TypeError(
                f"description must be a string, got {type(self.description).__name__}"
            )
        if not isinstance(self.args, tuple):
            raise TypeError(
                f"args must be a tuple of positional arguments, got {type(self.args).__name__}"
            )
        if not isinstance(self.kwargs, dict):
            raise TypeError(
                f"kwargs must be a dict of keyword arguments, got {type(self.kwargs).__name__}"
            )


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"


def compare_with_reference(
    exercise: str,
    student_fn: Callable,
    reference_fn: Callable,
    cases: Iterable[Case],
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """Run ``student_fn`` and ``reference_fn`` on each case and compare the tensors they return.

    Prints a one-line pass with the number of cases checked; raises
    :class:`ExerciseCheckFailed` on the first disagreement.
    """
    if not callable(student_fn):
        raise TypeError(
            f"Exercise {exercise}: pass your function itself, got {_describe(student_fn)}"
        )
    n = 0
    for case in cases:
        expected = reference_fn(*case.args, **case.kwargs)
        try:
            got = student_fn(
                *(
                    a.clone() if isinstance(a, torch.Tensor) else a
                    for a in case.args
                ),
                **case.kwargs,
            )
        except NotImplementedError:
            raise
        except Exception as exc:  # report the student's error with the input that caused it
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: your function raised {type(exc).__name__}: {exc}\n"
                f"  on input: {case.description}"
            ) from exc
        if not isinstance(got, torch.Tensor):
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: expected a torch.Tensor, got {_describe(got)}\n  on input: {case.description}"
            )
        if got.shape != expected.shape:
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: wrong output shape {tuple(got.shape)}, expected {tuple(expected.shape)}\n"
                f"  on input: {case.description}"
            )
        got = got.to(expected.dtype)
        if not torch.allclose(got, expected, atol=atol, rtol=rtol):
            diff = (got - expected).abs()
            where = tuple(
                int(i)
                for i in torch.nonzero(diff == diff.max())[0]
            )
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: wrong values on input: {case.description}\n"
                f"  largest difference {float(diff.max()):.3g} at index {where}: "
                f"got {float(got[where]):.6g}, expected {float(expected[where]):.6g}"
            )
        n += 1
    if n == 0:
        raise ValueError(
            f"Exercise {exercise}: the checker has no test cases"
        )
    print(f"Exercise {exercise}: all {n} checks passed.")
