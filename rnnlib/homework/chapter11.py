"""Checkers for the exercises of chapter 11 (stable and unstable models on real data)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._validation import validate_params
from ..next_step import frame_nll
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_11_1", "check_exercise_11_3"]


def _reference_11_1(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    return frame_nll(logits, targets, mask)


def _cases_11_1(generator: int) -> list[Case]:
    """The inputs of exercise 11.1 for the seed ``generator``: random logits and piano-roll targets with ragged lengths, and confident wrong logits."""
    gen = torch.Generator().manual_seed(generator)
    cases = []
    for batch, T, K in [
        (1, 1, 3),
        (2, 5, 88),
        (3, 4, 7),
        (4, 9, 88),
    ]:
        logits = 4 * torch.randn(batch, T, K, generator=gen, dtype=torch.float64)
        targets = (torch.rand(batch, T, K, generator=gen) < 0.1).double()
        lengths = torch.randint(1, T + 1, (batch,), generator=gen)
        mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
        cases.append(
            Case(
                f"logits {(batch, T, K)}, sequence lengths {lengths.tolist()}",
                (logits, targets, mask),
            )
        )
    big = torch.full(
        (1, 2, 3), 60.0, dtype=torch.float64
    )  # confident and wrong: needs a stable log-sigmoid
    cases.append(
        Case(
            "logits of +60 for keys that are off",
            (
                big,
                torch.zeros_like(big),
                torch.ones(1, 2, dtype=torch.bool),
            ),
        )
    )
    return cases


EXERCISE_11_1 = Exercise(
    "11.1",
    _cases_11_1,
    _reference_11_1,
    seed=111,
    atol=1e-8,
    rtol=1e-8,
    forbidden=(frame_nll,),
)


@register(EXERCISE_11_1)
@validate_params(student_nll=student_function("11.1"))
def check_exercise_11_1(
    student_nll: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
) -> None:
    """Exercise 11.1: ``student_nll(logits, targets, mask)`` must return the mean NLL per predicted frame (nats).

    ``logits``, ``targets`` (batch, T, K); ``mask`` (batch, T) bool, true on the frames that count.
    """
    EXERCISE_11_1.check(student_nll)


def _reference_11_3(W: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    return torch.linalg.matrix_norm((1 - h**2).unsqueeze(-1) * W, ord=2)


def _cases_11_3(generator: int) -> list[Case]:
    """The inputs of exercise 11.3 for the seed ``generator``: weights and hidden states of tanh units, sizes 1 to 16."""
    gen = torch.Generator().manual_seed(generator)
    cases = []
    for m, N in [(1, 1), (3, 4), (8, 10), (16, 5)]:
        W = 2 * torch.randn(m, m, generator=gen, dtype=torch.float64) / m**0.5
        h = torch.tanh(3 * torch.randn(N, m, generator=gen, dtype=torch.float64))
        cases.append(Case(f"W {(m, m)}, h {(N, m)}", (W, h)))
    return cases


EXERCISE_11_3 = Exercise(
    "11.3",
    _cases_11_3,
    _reference_11_3,
    seed=113,
    atol=1e-8,
    rtol=1e-6,
)


@register(EXERCISE_11_3)
@validate_params(student_norms=student_function("11.3"))
def check_exercise_11_3(
    student_norms: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> None:
    """Exercise 11.3: ``student_norms(W, h)`` must return ``||diag(1 - h_t^2) W||_2`` for each row h_t of h (N, m)."""
    EXERCISE_11_3.check(student_norms)
