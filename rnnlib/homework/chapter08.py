"""Checkers for the exercises of chapter 8 (stability)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._validation import validate_params
from ..stability import project_l1_rows, project_spectral
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_8_1", "check_exercise_8_2"]


def _cases_8_1(generator: int) -> list[Case]:
    """The inputs of exercise 8.1 for the seed ``generator``: square matrices of sizes 3 to 32, each with
    singular values on both sides of the radius (``||W||_2`` is 1.5 to 4 times it), so that
    no case passes by returning ``W`` unchanged (partial credit counts cases)."""
    gen = torch.Generator().manual_seed(generator)
    cases = []
    for m, radius in [
        (3, 1.0),
        (5, 0.9),
        (8, 0.5),
        (16, 1.0),
        (32, 0.95),
    ]:
        W = torch.randn(m, m, generator=gen, dtype=torch.float64)
        factor = 1.5 + 2.5 * float(torch.rand(1, generator=gen))
        W = W * (factor * radius / torch.linalg.matrix_norm(W, ord=2))
        norm = float(torch.linalg.matrix_norm(W, ord=2))
        cases.append(
            Case(
                f"W of shape {(m, m)} with ||W||_2 = {norm:.3g}, radius = {radius}",
                (W, radius),
            )
        )
    return cases


EXERCISE_8_1 = Exercise(
    "8.1",
    _cases_8_1,
    project_spectral,
    seed=81,
    atol=1e-8,
    rtol=1e-6,
)


@register(EXERCISE_8_1)
@validate_params(student_project=student_function("8.1"))
def check_exercise_8_1(
    student_project: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """Exercise 8.1: ``student_project(W, radius)`` must clip the singular values of ``W`` at ``radius``."""
    EXERCISE_8_1.check(student_project)


def _cases_8_2(generator: int) -> list[Case]:
    """The inputs of exercise 8.2 for the seed ``generator``: matrices whose first row is inside the l1-ball
    (it must stay unchanged) and the others outside it, so that no case passes by returning
    ``W`` unchanged (partial credit counts cases)."""
    gen = torch.Generator().manual_seed(generator)
    cases = []
    for rows, cols, scale, radius in [
        (1, 4, 1.0, 0.5),
        (4, 4, 0.5, 1.0),
        (6, 10, 1.0, 0.395),
        (16, 16, 0.3, 0.155),
    ]:
        W = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * scale
        outside = W.abs().sum(1, keepdim=True) <= radius
        W = torch.where(
            outside,
            W * (2 * radius / W.abs().sum(1, keepdim=True)),
            W,
        )
        if rows > 1:
            W[0] = W[0] * (
                0.5 * radius / W[0].abs().sum()
            )  # one row already inside the ball: must stay unchanged
        sums = W.abs().sum(1)
        cases.append(
            Case(
                f"W of shape {(rows, cols)} with row l1-norms in [{float(sums.min()):.3g}, {float(sums.max()):.3g}], "
                f"radius = {radius}",
                (W, radius),
            )
        )
    return cases


EXERCISE_8_2 = Exercise(
    "8.2",
    _cases_8_2,
    project_l1_rows,
    seed=82,
    atol=1e-8,
    rtol=1e-6,
)


@register(EXERCISE_8_2)
@validate_params(student_project_rows=student_function("8.2"))
def check_exercise_8_2(
    student_project_rows: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """Exercise 8.2: ``student_project_rows(W, radius)`` must project every row of ``W`` onto the l1-ball."""
    EXERCISE_8_2.check(student_project_rows)
