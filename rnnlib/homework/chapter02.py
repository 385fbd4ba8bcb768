"""Checkers for the exercises of chapter 2 (the concept class)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._validation import validate_params
from ..concepts import complexity_s, polynomial
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_2_1"]


def _reference_complexity_s(coefficients: torch.Tensor, R: float) -> torch.Tensor:
    return torch.tensor(
        complexity_s(polynomial(coefficients.tolist()), R),
        dtype=torch.float64,
    )


def _cases_2_1(generator: int) -> list[Case]:
    """The inputs of exercise 2.1 for the seed ``generator``: u, u^2, and four random polynomials of degree 1 to 5 and radii 0.1 to 3."""
    gen = torch.Generator().manual_seed(generator)
    cases = [
        Case(
            "coefficients [0.0, 1.0] (phi(z) = z), R = 1.0",
            (torch.tensor([0.0, 1.0], dtype=torch.float64), 1.0),
        ),
        Case(
            "coefficients [0.0, 0.0, 1.0] (phi(z) = z^2), R = 2.0",
            (
                torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64),
                2.0,
            ),
        ),
    ]
    for _ in range(4):
        degree = int(torch.randint(1, 6, (1,), generator=gen))
        c = torch.randn(degree + 1, generator=gen, dtype=torch.float64)
        R = round(float(0.1 + 2.9 * torch.rand(1, generator=gen)), 3)
        cases.append(
            Case(
                f"coefficients {[round(v, 4) for v in c.tolist()]} (degree {degree}), R = {R}",
                (c, R),
            )
        )
    return cases


EXERCISE_2_1 = Exercise(
    "2.1",
    _cases_2_1,
    _reference_complexity_s,
    seed=21,
    atol=1e-6,
    rtol=1e-8,
    forbidden=(complexity_s,),
)


@register(EXERCISE_2_1)
@validate_params(student_complexity_s=student_function("2.1"))
def check_exercise_2_1(
    student_complexity_s: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """Exercise 2.1: ``student_complexity_s(c, R)`` must return C_s(phi, R) for ``phi(z) = sum_i c[i] z^i``.

    ``c`` is a float64 tensor of Taylor coefficients (c_0, c_1, ...); the answer is a
    0-dimensional tensor ``C* sum_i (i+1)^1.75 R^i |c_i|`` with ``C* = 10^4``.
    """
    EXERCISE_2_1.check(student_complexity_s)
