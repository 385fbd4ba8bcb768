"""Checkers for the exercises of chapter 2 (the concept class)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..concepts import complexity_s, polynomial
from ._core import Case, compare_with_reference, register

__all__ = ["check_exercise_2_1"]


def _reference_complexity_s(
    coefficients: torch.Tensor, R: float
) -> torch.Tensor:
    return torch.tensor(
        complexity_s(polynomial(coefficients.tolist()), R),
        dtype=torch.float64,
    )


@register("2.1")
def check_exercise_2_1(
    student_complexity_s: Callable[
        [torch.Tensor, float], torch.Tensor
    ],
) -> None:
    """Exercise 2.1: ``student_complexity_s(c, R)`` must return C_s(phi, R) for ``phi(z) = sum_i c[i] z^i``.

    ``c`` is a float64 tensor of Taylor coefficients (c_0, c_1, ...); the answer is a
    0-dimensional tensor ``C* sum_i (i+1)^1.75 R^i |c_i|`` with ``C* = 10^4``.
    """
    cases = []
    for coefs, R in [
        ([0.0, 1.0], 1.0),
        ([0.0, 0.0, 1.0], 2.0),
        ([0.0, 2.0, -1.0], 0.5),
        ([0.0, 1.0, 0.0, -1 / 6], 3.0),
        ([0.5, -1.0, 0.25, 0.0, 2.0], 0.1),
    ]:
        c = torch.tensor(coefs, dtype=torch.float64)
        cases.append(
            Case(f"coefficients {coefs}, R = {R}", (c, R))
        )
    compare_with_reference(
        "2.1",
        student_complexity_s,
        _reference_complexity_s,
        cases,
        atol=1e-6,
        rtol=1e-8,
        forbidden=(complexity_s,),
    )
