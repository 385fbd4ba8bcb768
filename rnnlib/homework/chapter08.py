"""Checkers for the exercises of chapter 8 (stability)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..stability import project_l1_rows, project_spectral
from ._core import Case, compare_with_reference, register

__all__ = ["check_exercise_8_1", "check_exercise_8_2"]


@register("8.1")
def check_exercise_8_1(
    student_project: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """Exercise 8.1: ``student_project(W, radius)`` must clip the singular values of ``W`` at ``radius``."""
    gen = torch.Generator().manual_seed(81)
    cases = []
    for m, scale, radius in [
        (3, 0.1, 1.0),
        (5, 1.0, 0.9),
        (8, 3.0, 0.5),
        (16, 1.0, 1.0),
        (32, 0.5, 0.95),
    ]:
        W = (
            torch.randn(m, m, generator=gen, dtype=torch.float64)
            * scale
        )
        norm = float(torch.linalg.matrix_norm(W, ord=2))
        cases.append(
            Case(
                f"W of shape {(m, m)} with ||W||_2 = {norm:.3g}, radius = {radius}",
                (W, radius),
            )
        )
    compare_with_reference(
        "8.1",
        student_project,
        project_spectral,
        cases,
        atol=1e-8,
        rtol=1e-6,
    )


@register("8.2")
def check_exercise_8_2(
    student_project_rows: Callable[
        [torch.Tensor, float], torch.Tensor
    ],
) -> None:
    """Exercise 8.2: ``student_project_rows(W, radius)`` must project every row of ``W`` onto the l1-ball."""
    gen = torch.Generator().manual_seed(82)
    cases = []
    for rows, cols, scale, radius in [
        (1, 4, 1.0, 0.5),
        (4, 4, 0.05, 1.0),
        (6, 10, 1.0, 0.395),
        (16, 16, 0.3, 0.155),
    ]:
        W = (
            torch.randn(
                rows, cols, generator=gen, dtype=torch.float64
            )
            * scale
        )
        if rows > 1:
            W[0] = (
                W[0] * (0.5 * radius / W[0].abs().sum())
            )  # one row already inside the ball: must stay unchanged
        sums = W.abs().sum(1)
        cases.append(
            Case(
                f"W of shape {(rows, cols)} with row l1-norms in [{float(sums.min()):.3g}, {float(sums.max()):.3g}], "
                f"radius = {radius}",
                (W, radius),
            )
        )
    compare_with_reference(
        "8.2",
        student_project_rows,
        project_l1_rows,
        cases,
        atol=1e-8,
        rtol=1e-6,
    )
