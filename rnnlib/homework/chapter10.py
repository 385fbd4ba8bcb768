"""Checkers for the exercises of chapter 10 (truncation for training)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..truncation import growth_recursion_bound
from ._core import Case, compare_with_reference, register

__all__ = ["check_exercise_10_1"]


def _reference_10_1(
    gap: float, beta: float, alphas: torch.Tensor
) -> torch.Tensor:
    return torch.as_tensor(
        growth_recursion_bound(gap, beta, alphas.numpy()),
        dtype=torch.float64,
    )


@register("10.1")
def check_exercise_10_1(
    student_recursion: Callable[
        [float, float, torch.Tensor], torch.Tensor
    ],
) -> None:
    """Exercise 10.1: ``student_recursion(gap, beta, alphas)`` must return delta_0..delta_N of the growth recursion."""
    cases = []
    for gap, beta, alphas, what in [
        (
            0.1,
            1.0,
            torch.full((5,), 0.5, dtype=torch.float64),
            "constant step 0.5, N = 5",
        ),
        (
            1e-3,
            2.0,
            0.5 / torch.arange(1, 101, dtype=torch.float64),
            "decaying step 0.5 / i, N = 100",
        ),
        (
            0.0,
            3.0,
            torch.full((3,), 0.1, dtype=torch.float64),
            "no gradient gap",
        ),
    ]:
        cases.append(
            Case(
                f"gap = {gap}, beta = {beta}, {what}",
                (gap, beta, alphas),
            )
        )
    compare_with_reference(
        "10.1",
        student_recursion,
        _reference_10_1,
        cases,
        atol=1e-10,
        rtol=1e-8,
        forbidden=(growth_recursion_bound,),
    )
