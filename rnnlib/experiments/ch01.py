"""Chapter 1's sweeps: the Elman RNN at random initialization, over widths and token scales.

The measurements of one network are in :mod:`rnnlib.initialization` (the
predicted norms, the active fraction, the flipped patterns); here they are
repeated over networks and sizes: :func:`norm_profile` (hidden-state norms
against the width), :func:`flip_fraction_vs_eps` (flipped patterns against
eps_x) and :func:`sequence_norms` (the norms behind the chapter's explorer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._rng import derive, derive_seed
from .._validation import PARAMS, Int, Ints, Model, Seq, validate_params
from ..elman import (
    ElmanRNN,
    sample_normalized_sequence,
    sample_true_sequence,
)
from ..initialization import (
    pattern_flip_fraction,
    predicted_sq_norms,
)

__all__ = [
    "NormProfile",
    "norm_profile",
    "flip_fraction_vs_eps",
    "sequence_norms",
]


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


@validate_params(
    "L", "d", "eps_x", "batch_size", "generator", n_nets=Int(2), widths=Ints(1)
)
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
    means, stds = [], []
    x = None
    for m in widths:
        norms = []
        for k in range(n_nets):
            net = ElmanRNN(d, m, generator=derive(generator, "network", m, k))
            x = sample_normalized_sequence(
                batch_size,
                L,
                d,
                eps_x,
                generator=derive(generator, "data", m, k),
            )
            with torch.no_grad():
                norms.append(net.hidden_states(x).norm(dim=2).mean(dim=0).numpy())
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


@validate_params(
    "L",
    "batch_size",
    "generator",
    model=Model(ElmanRNN, finite=False),
    eps_values=Seq(PARAMS["eps_x"], "values of eps_x"),
    position=Int(0),
)
def flip_fraction_vs_eps(
    model: ElmanRNN,
    eps_values: Sequence[float],
    *,
    L: int,
    batch_size: int = 64,
    position: int = 0,
    generator: torch.Generator | int | None = None,
) -> np.ndarray:
    """:func:`rnnlib.initialization.pattern_flip_fraction` for each eps_x in ``eps_values``, on the same sequences and replacements.

    The sequences come from ``derive(generator, "sequences")``, the replacement
    tokens from ``derive(generator, "replacements")`` (the same for every eps_x).
    """
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
            pattern_flip_fraction(model, x_bar, eps, position, generator=seed)
            for eps in eps_values
        ]
    )


@validate_params("width", "L", "d", "eps_x", "batch_size", "generator")
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
    net = ElmanRNN(d, width, generator=derive(generator, "network"))
    x = sample_normalized_sequence(
        batch_size,
        L,
        d,
        eps_x,
        generator=derive(generator, "data"),
    )
    with torch.no_grad():
        return net.hidden_states(x).norm(dim=2).numpy()
