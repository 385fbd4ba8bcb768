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
  how the spread around it shrinks with the width m (:func:`norm_profile`).
* **Half the neurons are active** at every step (:func:`active_fraction`).
* **Small tokens flip few activation patterns**: changing one true token
  changes a fraction of the D^(l) that shrinks with eps_x
  (:func:`pattern_flip_fraction`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._rng import as_generator, derive, derive_seed
from ._validation import (
    Int,
    check_int,
    check_model,
    check_tensor,
    validate_params,
)
from .elman import (
    ElmanRNN,
    normalize_sequence,
    sample_normalized_sequence,
    sample_true_sequence,
)

__all__ = [
    "predicted_sq_norms",
    "NormProfile",
    "norm_profile",
    "active_fraction",
    "pattern_flip_fraction",
    "flip_fraction_vs_eps",
    "sequence_norms",
]


def predicted_sq_norms(x: torch.Tensor) -> torch.Tensor:
    """The heuristic ``E|h^(l)|^2 = sum_{j<=l} |x^(j)|^2`` for inputs ``x`` (batch, L, d); returns (batch, L)."""
    x = check_tensor(x, "x", ndim=3)
    return torch.cumsum((x**2).sum(dim=2), dim=1)


@dataclass(frozen=True)
class NormProfile:
    """Hidden-state norms along the sequence for several widths (one row per width).

    ``mean[i, l]`` and ``std[i, l]`` are the mean and the standard deviation,
    over ``n_nets`` independently initialized networks of width ``widths[i]``,
    of the batch-averaged norm ``|h^(l+1)|``; ``predicted[l]`` is
    ``sqrt(1 + l eps_x^2)`` (and ``sqrt(2 + (L-2) eps_x^2)`` at the end token).
    """

    widths: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    predicted: np.ndarray


@validate_params("L", "d", "eps_x", "batch_size", n_nets=Int(2))
def norm_profile(
    widths: Sequence[int],
    L: int,
    d: int,
    eps_x: float,
    *,
    n_nets: int = 16,
    batch_size: int = 16,
    generator: torch.Generator | int | None = None,
) -> NormProfile:
    """Measure ``|h^(l)|`` at initialization for each width in ``widths`` (chapter 1).

    For every width, ``n_nets`` networks are drawn (stream
    ``derive(generator, "network", m, k)`` for the k-th network of width m)
    and each is run on its own ``batch_size`` random normalized sequences of
    length ``L`` and dimension ``d`` (stream ``derive(generator, "data", m, k)``).
    """
    if len(widths) == 0:
        raise ValueError("widths must contain at least one width")
    widths = [check_int(m, "widths[i]", minimum=1) for m in widths]
    means, stds = [], []
    x = None
    for m in widths:
        norms = []
        for k in range(n_nets):
            net = ElmanRNN(
                d, m, generator=derive(generator, "network", m, k)
            )
            x = sample_normalized_sequence(
                batch_size,
                L,
                d,
                eps_x,
                generator=derive(generator, "data", m, k),
            )
            with torch.no_grad():
                norms.append(
                    net.hidden_states(x)
                    .norm(dim=2)
                    .mean(dim=0)
                    .numpy()
                )
        norms = np.stack(norms)
        means.append(norms.mean(axis=0))
        stds.append(norms.std(axis=0, ddof=1))
    predicted = predicted_sq_norms(x)[0].sqrt().numpy()
    return NormProfile(
        np.asarray(widths),
        np.stack(means),
        np.stack(stds),
        predicted,
    )


def active_fraction(
    model: ElmanRNN, x: torch.Tensor
) -> torch.Tensor:
    """Fraction of neurons with ``D^(l)_rr = 1`` at each step, averaged over the batch; returns (L,)."""
    model = check_model(model, ElmanRNN)
    return model.activation_patterns(x).float().mean(dim=(0, 2))


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
    model = check_model(model, ElmanRNN)
    x = normalize_sequence(x_bar, eps_x)
    position = check_int(
        position, "position", minimum=0, maximum=x_bar.shape[1] - 1
    )
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
    after = model.activation_patterns(
        normalize_sequence(x_bar2, eps_x)
    )[:, position + 1 :]
    return float((before != after).float().mean())


def flip_fraction_vs_eps(
    model: ElmanRNN,
    eps_values: Sequence[float],
    *,
    L: int,
    batch_size: int = 64,
    position: int = 0,
    generator: torch.Generator | int | None = None,
) -> np.ndarray:
    """:func:`pattern_flip_fraction` for each eps_x in ``eps_values``, on the same sequences and replacements.

    The sequences come from ``derive(generator, "sequences")``, the replacement
    tokens from ``derive(generator, "replacements")`` (the same for every eps_x).
    """
    model = check_model(model, ElmanRNN)
    if len(eps_values) == 0:
        raise ValueError(
            "eps_values must contain at least one value"
        )
    x_bar = sample_true_sequence(
        batch_size,
        L,
        model.input_dim,
        generator=derive(generator, "sequences"),
        dtype=model.W.dtype,
    )
    seed = derive_seed(generator, "replacements")
    return np.array(
        [
            pattern_flip_fraction(
                model, x_bar, eps, position, generator=seed
            )
            for eps in eps_values
        ]
    )


@validate_params("width", "L", "d", "eps_x", "batch_size")
def sequence_norms(
    width: int,
    L: int,
    d: int,
    eps_x: float,
    *,
    batch_size: int = 32,
    generator: torch.Generator | int | None = None,
) -> np.ndarray:
    """``|h^(l)|`` of one network of width ``width`` along ``batch_size`` random sequences; (batch, L).

    Used by the explorer of chapter 1. The network comes from
    ``derive(generator, "network")``, the sequences from ``derive(generator, "data")``.
    """
    net = ElmanRNN(
        d, width, generator=derive(generator, "network")
    )
    x = sample_normalized_sequence(
        batch_size,
        L,
        d,
        eps_x,
        generator=derive(generator, "data"),
    )
    with torch.no_grad():
        return net.hidden_states(x).norm(dim=2).numpy()
