"""Checkers for the exercises of chapter 4 (RNN inversion and the existence construction)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._rng import derive
from .._validation import validate_params
from ..elman import (
    ElmanRNN,
    elman_hidden_states,
    sample_normalized_sequence,
)
from ..inversion import naive_decode
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_4_3"]


def _cases_4_3(generator: int) -> list[Case]:
    """The inputs of exercise 4.3 for the seed ``generator``: three networks at initialization and the last hidden states of normalized batches."""
    cases = []
    for batch, L, d, m, k in [
        (1, 3, 3, 4, 0),
        (3, 6, 5, 16, 1),
        (4, 9, 6, 64, 2),
    ]:
        model = ElmanRNN(
            d,
            m,
            generator=derive(generator, "model", k),
            dtype=torch.float64,
        )
        x = sample_normalized_sequence(
            batch,
            L,
            d,
            0.1,
            generator=derive(generator, "inputs", k),
            dtype=torch.float64,
        )
        W, A = model.W.detach().clone(), model.A.detach().clone()
        h = elman_hidden_states(W, A, x)[:, -1]
        cases.append(
            Case(
                f"m = {m}, d = {d}, L = {L}, h of shape {tuple(h.shape)} (batch, m)",
                (W, A, h, L),
            )
        )
    return cases


EXERCISE_4_3 = Exercise("4.3", _cases_4_3, naive_decode, seed=4_3, atol=1e-9, rtol=1e-7)


@register(EXERCISE_4_3)
@validate_params(student_decode=student_function("4.3"))
def check_exercise_4_3(
    student_decode: Callable[..., torch.Tensor],
) -> None:
    """Exercise 4.3: ``student_decode(W, A, h, L)`` must return the naive inverse, shape (batch, L, d).

    Position l = 1..L (dimension 1) holds ``A^T (W^T)^(L-l) h``, for weights
    ``W`` (m, m), ``A`` (m, d) and last hidden states ``h`` (batch, m); float64.
    """
    EXERCISE_4_3.check(student_decode)
