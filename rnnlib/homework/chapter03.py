"""Checkers for the exercises of chapter 3 (the pseudo-network)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._rng import derive
from .._validation import validate_params
from ..elman import ElmanRNN, sample_normalized_sequence
from ..pseudo import pseudo_network
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_3_1"]


def _reference_pseudo(W, A, B, dW, dA, x) -> torch.Tensor:
    model = ElmanRNN(A.shape[1], W.shape[0], B.shape[0], dtype=W.dtype)
    with torch.no_grad():
        model.W.copy_(W)
        model.A.copy_(A)
        model.B.copy_(B)
    return pseudo_network(model, dW, dA, x)


def _cases_3_1(generator: int) -> list[Case]:
    """The inputs of exercise 3.1 for the seed ``generator``: three networks at initialization, perturbations of order 1/m, normalized batches."""
    cases = []
    for k, (batch, L, d, m, d_out) in enumerate(
        [(1, 3, 3, 4, 1), (3, 6, 5, 16, 2), (8, 10, 6, 64, 1)]
    ):
        model = ElmanRNN(
            d,
            m,
            d_out,
            generator=derive(generator, "model", k),
            dtype=torch.float64,
        )
        gen = derive(generator, "perturbation", k)
        dW = torch.randn(m, m, generator=gen, dtype=torch.float64) / m
        dA = torch.randn(m, d, generator=gen, dtype=torch.float64) / m
        x = sample_normalized_sequence(
            batch,
            L,
            d,
            0.1,
            generator=derive(generator, "data", k),
            dtype=torch.float64,
        )
        args = (
            model.W.detach().clone(),
            model.A.detach().clone(),
            model.B.clone(),
            dW,
            dA,
            x,
        )
        cases.append(
            Case(
                f"m = {m}, d = {d}, d_out = {d_out}, x of shape {tuple(x.shape)} (batch, L, d)",
                args,
            )
        )
    return cases


EXERCISE_3_1 = Exercise(
    "3.1",
    _cases_3_1,
    _reference_pseudo,
    seed=31,
    atol=1e-9,
    rtol=1e-7,
    forbidden=(pseudo_network,),
)


@register(EXERCISE_3_1)
@validate_params(student_pseudo=student_function("3.1"))
def check_exercise_3_1(
    student_pseudo: Callable[..., torch.Tensor],
) -> None:
    """Exercise 3.1: ``student_pseudo(W, A, B, dW, dA, x)`` must return eq. (4), shape (batch, d_out).

    ``W, A, B`` are the weights at initialization, ``(dW, dA)`` the perturbation and
    ``x`` a batch of normalized sequences (batch, L, d); all float64.
    """
    EXERCISE_3_1.check(student_pseudo)
