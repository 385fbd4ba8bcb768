"""Checkers for the exercises of chapter 1 (RNNs as functions of sequences)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._rng import derive
from ..elman import (
    _elman_scan,
    elman_hidden_states,
    normalize_sequence,
    sample_true_sequence,
)
from ._core import Case, compare_with_reference, register

__all__ = ["check_exercise_1_1", "check_exercise_1_2"]


def _true_sequences(
    generator: int,
) -> list[tuple[torch.Tensor, float, str]]:
    out = []
    for k, (batch, L, d, eps) in enumerate(
        [(1, 3, 3, 1.0), (4, 6, 5, 0.1), (7, 10, 8, 0.01)]
    ):
        x_bar = sample_true_sequence(
            batch, L, d, generator=derive(generator, "case", k)
        )
        out.append(
            (
                x_bar,
                eps,
                f"x_bar of shape {tuple(x_bar.shape)} (batch, L-2, d-1), eps_x = {eps}",
            )
        )
    return out


@register("1.1")
def check_exercise_1_1(
    student_normalize: Callable[
        [torch.Tensor, float], torch.Tensor
    ],
) -> None:
    """Exercise 1.1: ``student_normalize(x_bar, eps_x)`` must build the normalized sequence (Definition 3.1)."""
    cases = [
        Case(desc, (x_bar, eps))
        for x_bar, eps, desc in _true_sequences(generator=11)
    ]
    compare_with_reference(
        "1.1",
        student_normalize,
        normalize_sequence,
        cases,
    )


@register("1.2")
def check_exercise_1_2(
    student_hidden_states: Callable[
        [torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor
    ],
) -> None:
    """Exercise 1.2: ``student_hidden_states(W, A, x)`` must return h^(1..L), shape (batch, L, m)."""
    cases = []
    gen = torch.Generator().manual_seed(12)
    for batch, L, d, m in [
        (1, 3, 3, 4),
        (3, 7, 5, 16),
        (8, 12, 6, 64),
    ]:
        W = torch.randn(m, m, generator=gen) * (2 / m) ** 0.5
        A = torch.randn(m, d, generator=gen) * (2 / m) ** 0.5
        x = normalize_sequence(
            sample_true_sequence(batch, L, d, generator=gen), 0.5
        )
        cases.append(
            Case(
                f"W {tuple(W.shape)}, A {tuple(A.shape)}, x {tuple(x.shape)} (batch, L, d)",
                (W, A, x),
            )
        )
    compare_with_reference(
        "1.2",
        student_hidden_states,
        elman_hidden_states,
        cases,
        forbidden=(_elman_scan,),
    )
