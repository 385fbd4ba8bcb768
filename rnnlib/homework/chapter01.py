"""Checkers for the exercises of chapter 1 (RNNs as functions of sequences)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._rng import derive
from .._validation import validate_params
from ..elman import (
    _elman_scan,
    elman_hidden_states,
    normalize_sequence,
    sample_true_sequence,
)
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_1_1", "check_exercise_1_2"]


def _cases_1_1(generator: int) -> list[Case]:
    """The inputs of exercise 1.1 for the seed ``generator``: three batches of true sequences, eps_x from 1 to 0.01."""
    out = []
    for k, (batch, L, d, eps) in enumerate(
        [(1, 3, 3, 1.0), (4, 6, 5, 0.1), (7, 10, 8, 0.01)]
    ):
        x_bar = sample_true_sequence(
            batch, L, d, generator=derive(generator, "case", k)
        )
        out.append(
            Case(
                f"x_bar of shape {tuple(x_bar.shape)} (batch, L-2, d-1), eps_x = {eps}",
                (x_bar, eps),
            )
        )
    return out


def _cases_1_2(generator: int) -> list[Case]:
    """The inputs of exercise 1.2 for the seed ``generator``: three Elman networks at He scale and normalized batches."""
    cases = []
    gen = torch.Generator().manual_seed(generator)
    for batch, L, d, m in [
        (1, 3, 3, 4),
        (3, 7, 5, 16),
        (8, 12, 6, 64),
    ]:
        W = torch.randn(m, m, generator=gen) * (2 / m) ** 0.5
        A = torch.randn(m, d, generator=gen) * (2 / m) ** 0.5
        x = normalize_sequence(sample_true_sequence(batch, L, d, generator=gen), 0.5)
        cases.append(
            Case(
                f"W {tuple(W.shape)}, A {tuple(A.shape)}, x {tuple(x.shape)} (batch, L, d)",
                (W, A, x),
            )
        )
    return cases


EXERCISE_1_1 = Exercise("1.1", _cases_1_1, normalize_sequence, seed=11)
EXERCISE_1_2 = Exercise(
    "1.2",
    _cases_1_2,
    elman_hidden_states,
    seed=12,
    forbidden=(_elman_scan,),
)


@register(EXERCISE_1_1)
@validate_params(student_normalize=student_function("1.1"))
def check_exercise_1_1(
    student_normalize: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """Exercise 1.1: ``student_normalize(x_bar, eps_x)`` must build the normalized sequence (Definition 3.1)."""
    EXERCISE_1_1.check(student_normalize)


@register(EXERCISE_1_2)
@validate_params(student_hidden_states=student_function("1.2"))
def check_exercise_1_2(
    student_hidden_states: Callable[
        [torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor
    ],
) -> None:
    """Exercise 1.2: ``student_hidden_states(W, A, x)`` must return h^(1..L), shape (batch, L, m)."""
    EXERCISE_1_2.check(student_hidden_states)
