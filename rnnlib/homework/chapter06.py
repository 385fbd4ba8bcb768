"""Checkers for the exercises of chapter 6 (generalization)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import torch

from .._rng import derive
from .._validation import validate_params
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_6_2"]


def _reference_rademacher(K, out_scale, norm) -> torch.Tensor:
    n = K.shape[0]
    signs = torch.tensor(
        list(itertools.product([-1.0, 1.0], repeat=n)),
        dtype=K.dtype,
    )
    quad = torch.einsum("sn,nm,sm->s", signs, K, signs).clamp_min(0)
    return out_scale * norm * quad.sqrt().mean() / n


def _cases_6_2(generator: int) -> list[Case]:
    """The inputs of exercise 6.2 for the seed ``generator``: Gram matrices of random features, N = 1 to 10."""
    cases = []
    for i, (n, k) in enumerate([(1, 2), (4, 3), (7, 5), (10, 4)]):
        gen = derive(generator, "features", i)
        phi = torch.randn(n, k, generator=gen, dtype=torch.float64)
        K = phi @ phi.T
        cases.append(
            Case(
                f"N = {n}, K of rank {min(n, k)}, out_scale = 0.5, norm = 2",
                (K, 0.5, 2.0),
            )
        )
    return cases


EXERCISE_6_2 = Exercise(
    "6.2",
    _cases_6_2,
    _reference_rademacher,
    seed=6_2,
    atol=1e-10,
    rtol=1e-8,
)


@register(EXERCISE_6_2)
@validate_params(student_rademacher=student_function("6.2"))
def check_exercise_6_2(
    student_rademacher: Callable[..., torch.Tensor],
) -> None:
    """Exercise 6.2: ``student_rademacher(K, out_scale, norm)`` must return the exact empirical
    Rademacher complexity of ``{x -> out_scale <theta, phi(x)> : ||theta|| <= norm}`` (a 0-d tensor).

    ``K`` is the (N, N) kernel ``<phi(x_n), phi(x_n')>`` of the sample (N <= 10, float64); the
    expectation is over all ``2^N`` sign vectors.
    """
    EXERCISE_6_2.check(student_rademacher)
