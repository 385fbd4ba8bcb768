"""Checkers for the exercises of chapter 9 (truncation for inference)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._validation import validate_params
from ..dynamical import SimpleRNN
from ..truncation import truncated_states
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_9_1"]


def _reference_9_1(
    W: torch.Tensor, U: torch.Tensor, x: torch.Tensor, k: int
) -> torch.Tensor:
    model = SimpleRNN(U.shape[1], W.shape[0], activation="tanh", dtype=W.dtype)
    with torch.no_grad():
        model.W.copy_(W)
        model.U.copy_(U)
        return truncated_states(model, x, k)


def _cases_9_1(generator: int) -> list[Case]:
    """The inputs of exercise 9.1 for the seed ``generator``: tanh-RNN weights, inputs and truncation lengths k
    from 1 to beyond T; in one case only is k >= T (where the untruncated network is right)."""
    gen = torch.Generator().manual_seed(generator)
    cases = []
    for batch, T, n, m, k in [
        (1, 4, 2, 3, 2),
        (2, 6, 3, 4, 1),
        (3, 10, 2, 8, 3),
        (2, 12, 4, 5, 4),
        (1, 5, 2, 4, 9),  # k > T: the full network
    ]:
        W = torch.randn(m, m, generator=gen, dtype=torch.float64) / m**0.5
        U = torch.randn(m, n, generator=gen, dtype=torch.float64)
        x = torch.randn(batch, T, n, generator=gen, dtype=torch.float64)
        cases.append(
            Case(
                f"W {(m, m)}, U {(m, n)}, x {(batch, T, n)} (batch, T, n), k = {k}",
                (W, U, x, k),
            )
        )
    return cases


EXERCISE_9_1 = Exercise(
    "9.1",
    _cases_9_1,
    _reference_9_1,
    seed=91,
    atol=1e-8,
    rtol=1e-6,
    forbidden=(truncated_states,),
)


@register(EXERCISE_9_1)
@validate_params(student_truncated=student_function("9.1"))
def check_exercise_9_1(
    student_truncated: Callable[
        [torch.Tensor, torch.Tensor, torch.Tensor, int],
        torch.Tensor,
    ],
) -> None:
    """Exercise 9.1: ``student_truncated(W, U, x, k)`` must return the k-step truncated tanh-RNN states (batch, T, m)."""
    EXERCISE_9_1.check(student_truncated)
