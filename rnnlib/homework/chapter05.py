"""Checkers for the exercises of chapter 5 (SGD in the lazy regime)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._rng import derive
from .._validation import validate_params
from ..elman import ElmanRNN, sample_normalized_sequence
from ..ntk import tangent_kernel
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_5_2"]


def _reference_kernel(W, A, B, x) -> torch.Tensor:
    model = ElmanRNN(A.shape[1], W.shape[0], 1, dtype=W.dtype)
    with torch.no_grad():
        model.W.copy_(W)
        model.A.copy_(A)
        model.B.copy_(B)
    return tangent_kernel(model, x)


def _cases_5_2(generator: int) -> list[Case]:
    """The inputs of exercise 5.2 for the seed ``generator``: three networks at initialization (d_out = 1) and batches of normalized sequences."""
    cases = []
    for n, L, d, m, k in [
        (2, 3, 3, 4, 0),
        (4, 5, 4, 12, 1),
        (6, 6, 5, 32, 2),
    ]:
        model = ElmanRNN(
            d,
            m,
            1,
            generator=derive(generator, "model", k),
            dtype=torch.float64,
        )
        x = sample_normalized_sequence(
            n,
            L,
            d,
            0.5,
            generator=derive(generator, "inputs", k),
            dtype=torch.float64,
        )
        args = (
            model.W.detach().clone(),
            model.A.detach().clone(),
            model.B.clone(),
            x,
        )
        cases.append(
            Case(
                f"m = {m}, d = {d}, x of shape {tuple(x.shape)} (N, L, d)",
                args,
            )
        )
    return cases


EXERCISE_5_2 = Exercise(
    "5.2",
    _cases_5_2,
    _reference_kernel,
    seed=5_2,
    atol=1e-9,
    rtol=1e-7,
    forbidden=(tangent_kernel,),
)


@register(EXERCISE_5_2)
@validate_params(student_kernel=student_function("5.2"))
def check_exercise_5_2(
    student_kernel: Callable[..., torch.Tensor],
) -> None:
    """Exercise 5.2: ``student_kernel(W, A, B, x)`` must return the tangent kernel (N, N).

    ``K[n, n'] = <grad_{W,A} F(x_n), grad_{W,A} F(x_n')>`` with ``F = B h^(L)``
    (``d_out = 1``) at the weights ``W, A, B``; ``x`` is (N, L, d); all float64.
    """
    EXERCISE_5_2.check(student_kernel)
