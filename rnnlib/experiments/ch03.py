"""Chapter 3's sweeps: how far the RNN is from its pseudo-network, over widths and scales.

The pseudo-network of eq. (4) and the directions it is compared along are in
:mod:`rnnlib.pseudo`; :func:`rnnlib.pseudo.linearization_changes` sets the RNN's
change beside it along given directions. The sweeps here draw the networks,
the sequences and the directions, for every width m and radius tau (spectral
norm ``tau / sqrt(m)``): :func:`gap_sweep` along random directions,
:func:`direction_gap_sweep` along random and ``B``-aligned ones on the same
networks, and :func:`linearization_sample` the pairs behind the chapter's
explorer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._progress import progress_bar
from .._rng import derive, derive_seed
from .._validation import (
    POSITIVE,
    Choice,
    Ints,
    Seq,
    validate_params,
)
from ..elman import ElmanRNN, sample_normalized_sequence
from ..pseudo import (
    DIRECTION_KINDS,
    aligned_perturbation,
    linearization_changes,
    linearization_gaps,
    random_perturbation,
)

__all__ = [
    "GapSweep",
    "gap_sweep",
    "DirectionGapSweep",
    "direction_gap_sweep",
    "LinearizationSample",
    "linearization_sample",
]


@dataclass(frozen=True)
class GapSweep:
    """:func:`gap_sweep` results: arrays of shape (len(taus), len(widths)) (chapter 3)."""

    widths: np.ndarray
    taus: np.ndarray
    relative_gap: np.ndarray
    flip_fraction: np.ndarray


@validate_params(
    "L",
    "d",
    "eps_x",
    "batch_size",
    "output_dim",
    "n_networks",
    "n_perturbations",
    "generator",
    "dtype",
    "progress",
    widths=Ints(1),
    taus=Seq(POSITIVE, "positive numbers"),
)
def gap_sweep(
    widths: Sequence[int],
    taus: Sequence[float],
    *,
    L: int,
    d: int,
    eps_x: float,
    output_dim: int = 32,
    batch_size: int = 32,
    n_networks: int = 2,
    n_perturbations: int = 2,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
    progress: bool = False,
) -> GapSweep:
    """Relative RNN / pseudo-network gap and pattern flips for every (tau, m) (chapter 3).

    For each width, ``n_networks`` networks (streams ``derive(generator, "network", m, k)``), run
    on the same ``batch_size`` normalized sequences of length ``L`` and
    dimension ``d``, and ``n_perturbations`` random directions per network,
    each scaled to spectral norm ``tau / sqrt(m)`` for every tau (the same
    directions for every tau, so the trend in tau is not blurred by fresh
    noise). The relative gap is the mean gap over networks divided by the
    mean ``|F(dW, dA)|``. With a single output (``d_out = 1``) it varies by a
    factor of about two from one network to the next, because it depends on
    how ``B`` happens to align with the perturbation; ``output_dim = 32``
    random read-outs average that away at almost no cost. Float32
    is enough: the gap is at least a few percent of the pseudo-network's
    output at every width the chapter uses. See
    :func:`rnnlib.pseudo.linearization_gap`.
    """
    x = sample_normalized_sequence(
        batch_size,
        L,
        d,
        eps_x,
        generator=derive(generator, "data"),
        dtype=dtype,
    )
    rel = np.zeros((len(taus), len(widths)))
    flips = np.zeros_like(rel)
    for j, m in progress_bar(
        list(enumerate(widths)),
        enabled=progress,
        desc="widths",
        leave=True,
    ):
        gaps = np.zeros((n_networks, len(taus), 3))
        for k in range(n_networks):
            model = ElmanRNN(
                d,
                m,
                output_dim,
                generator=derive(generator, "network", m, k),
                dtype=dtype,
            )
            directions = derive(generator, "directions", m, k)
            results = linearization_gaps(
                model,
                x,
                taus,
                n_perturbations=n_perturbations,
                generator=directions,
            )
            gaps[k] = [(r.gap, r.pseudo, r.flip_fraction) for r in results]
        mean = gaps.mean(axis=0)
        rel[:, j] = mean[:, 0] / mean[:, 1]
        flips[:, j] = mean[:, 2]
    return GapSweep(
        np.asarray(widths),
        np.asarray(taus, dtype=float),
        rel,
        flips,
    )


@dataclass(frozen=True)
class DirectionGapSweep:
    """:func:`direction_gap_sweep` results: arrays of shape (len(kinds), len(taus), len(widths)) (chapter 3).

    ``gap`` is the mean ``|F_rnn(W+dW, A+dA) - F_rnn(W, A) - F(dW, dA)|``,
    ``pseudo`` the mean ``|F(dW, dA)|``, ``relative_gap = gap / pseudo`` and
    ``flip_fraction`` the fraction of flipped entries of ``D^(1..L)``, each
    averaged over networks, directions, sequences and output coordinates.
    ``network_relative_gap`` and ``network_flip_fraction``, shape (len(kinds),
    len(taus), len(widths), n_networks), are the same per network (averaged over
    its directions): network ``k`` at every width is one "seed" of the per-seed
    slopes of :func:`rnnlib.trends.loglog_trend`, and the kinds share networks,
    so a difference of slopes between kinds is paired.
    """

    widths: np.ndarray
    taus: np.ndarray
    kinds: tuple[str, ...]
    relative_gap: np.ndarray
    gap: np.ndarray
    pseudo: np.ndarray
    flip_fraction: np.ndarray
    network_relative_gap: np.ndarray
    network_flip_fraction: np.ndarray

    def select(self, kind: str) -> GapSweep:
        """The (taus, widths) tables of one kind of direction, as a :class:`GapSweep`."""
        if kind not in self.kinds:
            raise ValueError(f"kind must be one of {self.kinds}, got {kind!r}")
        i = self.kinds.index(kind)
        return GapSweep(
            self.widths,
            self.taus,
            self.relative_gap[i],
            self.flip_fraction[i],
        )


def _unit_direction(
    model: ElmanRNN,
    x: torch.Tensor,
    kind: str,
    gen: torch.Generator,
):
    if kind == "random":
        return random_perturbation(
            model.input_dim,
            model.width,
            1.0,
            generator=gen,
            dtype=model.W.dtype,
        )
    return aligned_perturbation(model, x, 1.0, kind=kind, generator=gen)


@validate_params(
    "L",
    "d",
    "eps_x",
    "output_dim",
    "batch_size",
    "n_networks",
    "n_perturbations",
    "generator",
    "dtype",
    "progress",
    widths=Ints(1),
    taus=Seq(POSITIVE, "positive numbers"),
    kinds=Seq(Choice(*DIRECTION_KINDS), "direction kinds"),
)
def direction_gap_sweep(
    widths: Sequence[int],
    taus: Sequence[float],
    *,
    kinds: Sequence[str] = DIRECTION_KINDS,
    L: int,
    d: int,
    eps_x: float,
    output_dim: int = 32,
    batch_size: int = 32,
    n_networks: int = 2,
    n_perturbations: int = 2,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
    progress: bool = False,
) -> DirectionGapSweep:
    """RNN vs pseudo-network along random and ``B``-aligned directions, for every (kind, tau, m) (chapter 3).

    For each width, ``n_networks`` networks run on the same ``batch_size``
    normalized sequences; for each network and each kind of direction
    (``"random"``: :func:`rnnlib.pseudo.random_perturbation`; ``"gradient"``,
    ``"construction"``: :func:`rnnlib.pseudo.aligned_perturbation`),
    ``n_perturbations`` directions, each scaled to spectral norm
    ``tau / sqrt(m)`` for every tau (the same directions for every tau). The
    same networks and sequences serve every kind, so the kinds differ only in
    the direction. Streams are derived from ``generator``
    (:func:`rnnlib._rng.derive`): one for the sequences, one per network, one
    per direction. Float32 suffices: the smallest relative gap the chapter
    meets is a few percent. Returns a :class:`DirectionGapSweep`.
    """
    base = derive_seed(generator, "direction_gap_sweep")
    x = sample_normalized_sequence(
        batch_size,
        L,
        d,
        eps_x,
        generator=derive(base, "data"),
        dtype=dtype,
    )
    sums = np.zeros(
        (3, len(kinds), len(taus), len(widths), n_networks)
    )  # gap, |pseudo|, flips, per network
    for j, m in progress_bar(
        list(enumerate(widths)),
        enabled=progress,
        desc="widths",
        leave=True,
    ):
        for k in range(n_networks):
            model = ElmanRNN(
                d,
                m,
                output_dim,
                generator=derive(base, "network", m, k),
                dtype=dtype,
            )
            change, pseudo, flips = linearization_changes(
                model,
                x,
                (
                    _unit_direction(
                        model,
                        x,
                        kind,
                        derive(base, "direction", kind, m, k, q),
                    )
                    for kind in kinds
                    for q in range(n_perturbations)
                ),
                taus,
            )  # row i * n_perturbations + q: direction q of kind i
            for i in range(len(kinds)):
                for q in range(n_perturbations):
                    r = i * n_perturbations + q
                    for t in range(len(taus)):
                        sums[0, i, t, j, k] += float(
                            (change[r, t] - pseudo[r, t]).abs().mean()
                        )
                        sums[1, i, t, j, k] += float(pseudo[r, t].abs().mean())
                        sums[2, i, t, j, k] += float(flips[r, t])
    sums /= n_perturbations
    gap, pseudo, flips = sums.mean(axis=-1)
    return DirectionGapSweep(
        np.asarray(widths),
        np.asarray(taus, dtype=float),
        tuple(kinds),
        gap / pseudo,
        gap,
        pseudo,
        flips,
        sums[0] / sums[1],
        sums[2],
    )


@dataclass(frozen=True)
class LinearizationSample:
    """Pairs (true change of the RNN output, pseudo-network output) for one (m, tau, L) (chapter 3)."""

    width: int
    tau: float
    L: int
    true_change: np.ndarray
    pseudo: np.ndarray
    flip_fraction: float


@validate_params(
    "width",
    "L",
    "d",
    "batch_size",
    "n_perturbations",
    "eps_x",
    "generator",
    tau=POSITIVE,
)
def linearization_sample(
    width: int,
    tau: float,
    L: int,
    *,
    d: int = 8,
    eps_x: float = 0.1,
    batch_size: int = 32,
    n_perturbations: int = 4,
    generator: torch.Generator | int | None = None,
) -> LinearizationSample:
    """``F_rnn(W+dW, A+dA) - F_rnn(W, A)`` beside ``F(dW, dA)`` for random perturbations (chapter 3 explorer).

    Draws one network of width ``width``, ``batch_size`` normalized sequences
    of length ``L``, and ``n_perturbations`` directions of spectral norm
    ``tau / sqrt(m)``; returns all the (true change, pseudo-network) pairs.
    """
    m = width
    model = ElmanRNN(
        d,
        m,
        generator=derive(generator, "network"),
        dtype=torch.float64,
    )
    x = sample_normalized_sequence(
        batch_size,
        L,
        d,
        eps_x,
        generator=derive(generator, "data"),
        dtype=torch.float64,
    )
    gen = derive(generator, "directions")
    change, pseudo, flips = linearization_changes(
        model,
        x,
        (
            random_perturbation(d, m, tau, generator=gen, dtype=torch.float64)
            for _ in range(n_perturbations)
        ),
        [1.0],
    )
    return LinearizationSample(
        m,
        tau,
        L,
        change[:, 0].flatten().numpy(),
        pseudo[:, 0].flatten().numpy(),
        float(flips[:, 0].mean()),
    )
