"""Checkers for the exercises of chapter 10 (truncation for training)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._validation import validate_params
from ..truncation import growth_recursion_bound
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_10_1"]


def _reference_10_1(gap: float, beta: float, alphas: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(
        growth_recursion_bound(gap, beta, alphas.numpy()),
        dtype=torch.float64,
    )


def _cases_10_1(generator: int) -> list[Case]:
    """The inputs of exercise 10.1 for the seed ``generator``: a constant, a decaying and a random step schedule, and beta = 0."""
    gen = torch.Generator().manual_seed(generator)
    gap, beta = [
        round(float(v), 4)
        for v in 0.01 + torch.rand(2, generator=gen) * torch.tensor([0.2, 3.0])
    ]
    n = int(torch.randint(20, 101, (1,), generator=gen))
    step = round(float(0.05 + 0.5 * torch.rand(1, generator=gen)), 3)
    return [
        Case(
            f"gap = {gap}, beta = {beta}, constant step {step}, N = 5",
            (
                gap,
                beta,
                torch.full((5,), step, dtype=torch.float64),
            ),
        ),
        Case(
            f"gap = {gap / 100:g}, beta = {2 * beta:g}, decaying step {step} / i, N = {n}",
            (
                gap / 100,
                2 * beta,
                step / torch.arange(1, n + 1, dtype=torch.float64),
            ),
        ),
        Case(
            f"gap = {gap}, beta = {beta}, random steps in [0, {step}), N = {n}",
            (
                gap,
                beta,
                step * torch.rand(n, generator=gen, dtype=torch.float64),
            ),
        ),
        Case(
            f"gap = {gap}, beta = 0.0, constant step {step}, N = 7 (no growth: delta_N = N step gap)",
            (
                gap,
                0.0,
                torch.full((7,), step, dtype=torch.float64),
            ),
        ),
    ]


EXERCISE_10_1 = Exercise(
    "10.1",
    _cases_10_1,
    _reference_10_1,
    seed=101,
    atol=1e-10,
    rtol=1e-8,
    forbidden=(growth_recursion_bound,),
)


@register(EXERCISE_10_1)
@validate_params(student_recursion=student_function("10.1"))
def check_exercise_10_1(
    student_recursion: Callable[[float, float, torch.Tensor], torch.Tensor],
) -> None:
    """Exercise 10.1: ``student_recursion(gap, beta, alphas)`` must return delta_0..delta_N of the growth recursion."""
    EXERCISE_10_1.check(student_recursion)
