"""Measurements of the Elman RNN at random initialization (chapter 1).

Three facts about the network of :mod:`rnnlib.elman` at initialization, each
measured by one function here:

* **Norms.** Conditionally on ``h^(l-1)``, each pre-activation
  ``w_r . h^(l-1) + a_r . x^(l)`` is N(0, 2/m (|h^(l-1)|^2 + |x^(l)|^2)) when the
  row ``(w_r, a_r)`` is fresh, and ``E relu(g)^2 = Var(g) / 2``; summing over
  the m neurons gives ``E|h^(l)|^2 = |h^(l-1)|^2 + |x^(l)|^2``, hence
  ``E|h^(l)|^2 = sum_{j <= l} |x^(j)|^2 = 1 + (l-1) eps_x^2`` for l < L
  (:func:`predicted_sq_norms`). The rows are *not* fresh across time (W is
  reused), so this is a heuristic; chapter 1 measures how well it holds, and
  how the spread around it shrinks with the width m (its sweeps are in
  ``rnnlib.experiments.ch01``).
* **Half the neurons are active** at every step (:func:`active_fraction`).
* **Small tokens flip few activation patterns**: changing one true token
  changes a fraction of the D^(l) that shrinks with eps_x
  (:func:`pattern_flip_fraction`).
"""

from __future__ import annotations

import torch

from ._rng import as_generator
from ._validation import (
    Model,
    Tensor,
    check_int,
    validate_params,
)
from .elman import (
    INPUTS,
    ElmanRNN,
    normalize_sequence,
    sample_true_sequence,
)

__all__ = [
    "predicted_sq_norms",
    "active_fraction",
    "pattern_flip_fraction",
]


@validate_params(x=Tensor(ndim=3))
def predicted_sq_norms(x: torch.Tensor) -> torch.Tensor:
    """The heuristic ``E|h^(l)|^2 = sum_{j<=l} |x^(j)|^2`` for inputs ``x`` (batch, L, d); returns (batch, L)."""
    return torch.cumsum((x**2).sum(dim=2), dim=1)


@validate_params(model=Model(ElmanRNN, finite=False), x=INPUTS)
def active_fraction(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    """Fraction of neurons with ``D^(l)_rr = 1`` at each step, averaged over the batch; returns (L,)."""
    return model.activation_patterns(x).float().mean(dim=(0, 2))


@validate_params("eps_x", "generator", model=Model(ElmanRNN, finite=False))
def pattern_flip_fraction(
    model: ElmanRNN,
    x_bar: torch.Tensor,
    eps_x: float,
    position: int,
    *,
    generator: torch.Generator | int | None = None,
) -> float:
    """Fraction of activation patterns that flip when one true token is replaced (chapter 1).

    Replaces the true token at index ``position`` (0-based among the L-2 true
    tokens, i.e. input step ``position + 2`` of the paper) by a fresh random
    true token, and compares ``D^(l)`` before and after at the steps
    ``l >= position + 2`` (earlier steps cannot change). Returns the fraction
    of flipped entries over batch, those steps and the m neurons.
    """
    x = normalize_sequence(x_bar, eps_x)
    position = check_int(position, "position", minimum=0, maximum=x_bar.shape[1] - 1)
    L, d = x.shape[1], x.shape[2]
    fresh = sample_true_sequence(
        x_bar.shape[0],
        L,
        d,
        generator=as_generator(generator),
        dtype=x_bar.dtype,
    )
    x_bar2 = x_bar.clone()
    x_bar2[:, position] = fresh[:, position]
    before = model.activation_patterns(x)[:, position + 1 :]
    after = model.activation_patterns(normalize_sequence(x_bar2, eps_x))[
        :, position + 1 :
    ]
    return float((before != after).float().mean())
