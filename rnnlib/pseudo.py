"""The pseudo-network of Panigrahi & Goyal (2021), eq. (4) (chapters 3 and 5).

At the random initialization ``(W, A, B)`` of :class:`rnnlib.elman.ElmanRNN`,
with hidden states ``h^(l)`` and activation patterns
``D^(l) = diag(1[W h^(l-1) + A x^(l) >= 0])``, the pseudo-network is the map,
linear in the perturbation ``(dW, dA)``::

    F(x; dW, dA) = sum_{l=1}^{L} Back_{l->L} D^(l) (dW h^(l-1) + dA x^(l)),
    Back_{l->L} = B D^(L) W D^(L-1) W ... D^(l+1) W,     Back_{L->L} = B.

``Back_{l->L}`` is the Jacobian ``dy^(L)/dh^(l)`` of the output with respect
to the hidden state at step l; ``Back_{l->L} D^(l)`` is the Jacobian with
respect to the pre-activations at step l.

It is the first-order Taylor expansion of ``F_rnn(x; W + dW, A + dA)`` in the
perturbation, i.e. the Jacobian-vector product of the RNN output at ``(W, A)``
in direction ``(dW, dA)``. Unrolling the sum gives a forward recursion
(tangent propagation) that costs about one forward pass::

    g^(0) = 0,   g^(l) = D^(l) (W g^(l-1) + dW h^(l-1) + dA x^(l)),   F = B g^(L).

:func:`pseudo_network` uses the recursion; :func:`pseudo_network_sum` writes
out the sum with the matrices ``Back_{l->L}`` (slow, for the chapter and the
tests). :func:`linearization_changes` sets the RNN's change beside the
pseudo-network along given directions, and :func:`linearization_gap`
measures how far the RNN is from its pseudo-network for random perturbations
of spectral norm ``tau / sqrt(m)`` (:func:`random_perturbation`); directions
aligned with ``B`` (:func:`aligned_perturbation`) are the kind the proof
uses. Chapter 3's sweeps over widths and scales are in
``rnnlib.experiments.ch03``.

The scale ``tau / sqrt(m)`` is our choice, the usual scale of lazy-training
analyses: the paper's own radius and error bound for the approximation are
in its Lemma G.3, in an appendix that was not available.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch

from ._recurrence import previous_states, tangent
from ._rng import as_generator
from ._validation import (
    POSITIVE,
    Choice,
    Model,
    Seq,
    Tensor,
    check_tensor,
    validate_params,
)
from .elman import (
    INPUTS,
    ElmanRNN,
    elman_hidden_states,
)

__all__ = [
    "pseudo_network",
    "pseudo_network_sum",
    "back_matrices",
    "Direction",
    "random_perturbation",
    "DIRECTION_KINDS",
    "aligned_perturbation",
    "LinearizationChanges",
    "linearization_changes",
    "GapMeasurement",
    "linearization_gap",
    "linearization_gaps",
]


#: A direction of the weights of the model of the call: dW (m, m), dA (m, d), in its dtype.
DW = Tensor(shape=("model.width", "model.width"), dtype_of="model")
DA = Tensor(shape=("model.width", "model.input_dim"), dtype_of="model")


def _check_perturbation(
    model: ElmanRNN, dW: object, dA: object
) -> tuple[torch.Tensor, torch.Tensor]:
    m, d = model.width, model.input_dim
    dW = check_tensor(dW, "dW", shape=(m, m))
    dA = check_tensor(dA, "dA", shape=(m, d))
    for name, t in (("dW", dW), ("dA", dA)):
        if t.dtype != model.W.dtype:
            raise TypeError(
                f"{name} has dtype {t.dtype} but the model's weights are {model.W.dtype}"
            )
    return dW, dA


def _states_and_patterns(
    model: ElmanRNN, x: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """h^(0..L-1) (batch, L, m), D^(1..L) as floats (batch, L, m), h^(1..L) (batch, L, m), all at initialization.

    ``D^(l)`` is read off the states as ``1[h^(l) > 0]``: this is ``1[pre-activation >= 0]``
    except where a pre-activation is exactly 0 (probability zero), and it is the derivative
    that autograd uses for ReLU there, so the recursion matches ``torch.func.jvp`` exactly.
    It saves recomputing the pre-activations (one m x m product per step).
    """
    with torch.no_grad():
        h = elman_hidden_states(model.W, model.A, x)
        h_prev = previous_states(h)
        return h_prev, (h > 0).to(x.dtype), h


@validate_params(model=Model(ElmanRNN, finite=False), x=INPUTS, dW=DW, dA=DA)
def pseudo_network(
    model: ElmanRNN,
    dW: torch.Tensor,
    dA: torch.Tensor,
    x: torch.Tensor,
) -> torch.Tensor:
    """The pseudo-network of eq. (4), by tangent propagation (chapter 3); returns (batch, d_out).

    ``F(x; dW, dA) = sum_l Back_{l->L} D^(l) (dW h^(l-1) + dA x^(l))`` with ``D``
    and ``h`` taken at the model's current weights (its initialization),
    computed by the recursion ``g^(l) = D^(l) (W g^(l-1) + dW h^(l-1) + dA x^(l))``,
    ``g^(0) = 0``, ``F = B g^(L)``. The recursion costs about one forward pass,
    plus one product ``dW h^(l-1)`` for all steps at once, on top of the forward
    pass that gives ``h`` and ``D``: about three forward passes in all, like
    ``torch.func.jvp`` (``benchmarks/bench_pseudo.py`` prints the ratios).
    ``dW`` is (m, m), ``dA`` is (m, d), ``x`` is a batch of inputs (batch, L, d).
    """
    h_prev, D, _ = _states_and_patterns(model, x)
    with torch.no_grad():
        return tangent(model.W.detach(), model.B, h_prev, D, x, dW, dA)


@validate_params(model=Model(ElmanRNN, finite=False), x=INPUTS)
def back_matrices(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    """``Back_{l->L} = B D^(L) W ... D^(l+1) W`` for l = 1..L; returns (batch, L, d_out, m) (chapter 3).

    ``Back_{L->L} = B``. Costs L matrix products of size (d_out, m) x (m, m) per sequence.
    """
    _, D, _ = _states_and_patterns(model, x)
    batch, L = x.shape[0], x.shape[1]
    W = model.W.detach()
    back = model.B.expand(batch, -1, -1)  # Back_{L->L}
    out = [back]
    for step in range(
        L - 1, 0, -1
    ):  # Back_{step -> L} = Back_{step+1 -> L} D^(step+1) W  (0-based: D[:, step])
        back = (back * D[:, step, None, :]) @ W
        out.append(back)
    return torch.stack(out[::-1], dim=1)


@validate_params(model=Model(ElmanRNN, finite=False), x=INPUTS, dW=DW, dA=DA)
def pseudo_network_sum(
    model: ElmanRNN,
    dW: torch.Tensor,
    dA: torch.Tensor,
    x: torch.Tensor,
) -> torch.Tensor:
    """Eq. (4) written as the sum ``sum_l Back_{l->L} D^(l) (dW h^(l-1) + dA x^(l))`` (chapter 3).

    Same value as :func:`pseudo_network`, but builds every ``Back_{l->L}``
    explicitly (:func:`back_matrices`); for exposition and tests. Returns (batch, d_out).
    """
    h_prev, D, _ = _states_and_patterns(model, x)
    back = back_matrices(model, x)  # (batch, L, d_out, m)
    drive = D * (
        h_prev @ dW.transpose(0, 1) + x @ dA.transpose(0, 1)
    )  # D^(l)(dW h^(l-1) + dA x^(l))
    return torch.einsum("blom,blm->bo", back, drive)


def _scale_to_spectral_norm(
    t: torch.Tensor, radius: float, gen: torch.Generator
) -> torch.Tensor:
    """``t`` rescaled so that ``||t||_2 = radius`` (a zero matrix is returned as is).

    The size of a *direction* needs no certificate, only a good estimate, and
    it must stay cheap at every width: exact through the small Gram matrix
    when one side is at most 64, otherwise 50 steps of power iteration on
    ``t^T t`` (within about 1% of ``||t||_2``, from below, for the Gaussian and
    the low-rank matrices of this module), never an m x m SVD.
    """
    if not bool(t.any()):
        return t
    if min(t.shape) <= 64:
        gram = (
            t.transpose(0, 1) @ t if t.shape[0] >= t.shape[1] else t @ t.transpose(0, 1)
        )
        norm = float(torch.linalg.eigvalsh(gram.double())[-1].clamp_min(0).sqrt())
    else:
        v = torch.randn(t.shape[1], generator=gen, dtype=t.dtype)
        for _ in range(50):
            v = t.transpose(0, 1) @ (t @ v)
            v = v / v.norm()
        norm = float((t @ v).norm())
    return t * (radius / norm)


class Direction(NamedTuple):
    """A weight direction ``(dW, dA)`` (:func:`random_perturbation`, :func:`aligned_perturbation`)."""

    #: the change of ``W`` (m, m)
    dW: torch.Tensor
    #: the change of ``A`` (m, d)
    dA: torch.Tensor


@validate_params("input_dim", "width", "tau", "dtype", "generator")
def random_perturbation(
    input_dim: int,
    width: int,
    tau: float,
    *,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> Direction:
    """A random direction ``(dW, dA)`` with ``||dW||_2 = ||dA||_2 = tau / sqrt(m)`` (chapter 3).

    Both matrices have i.i.d. Gaussian entries and are rescaled to spectral
    norm ``tau / sqrt(m)`` (our choice of scale: the paper's radius, in its
    Lemma G.3, is not available). The spectral norm is exact for the thin
    ``dA`` (and for m <= 64), and within about 1% (from below) by power
    iteration for larger ``dW``: the size of a direction needs an estimate,
    not a certificate. For a Gaussian direction this is a Frobenius norm of
    about ``tau / 2`` for ``dW``: a change of every entry by ``O(tau / m)``.
    """
    d = input_dim
    m = width
    gen = as_generator(generator)
    radius = tau / math.sqrt(m)
    dW = torch.randn(m, m, generator=gen, dtype=dtype)
    dA = torch.randn(m, d, generator=gen, dtype=dtype)
    return Direction(
        _scale_to_spectral_norm(dW, radius, gen),
        _scale_to_spectral_norm(dA, radius, gen),
    )


DIRECTION_KINDS = ("random", "gradient", "construction")


@validate_params(
    "tau",
    "generator",
    kind=Choice("gradient", "construction"),
    model=Model(ElmanRNN, finite=False),
    x=INPUTS,
)
def aligned_perturbation(
    model: ElmanRNN,
    x: torch.Tensor,
    tau: float,
    *,
    kind: str = "gradient",
    generator: torch.Generator | int | None = None,
) -> Direction:
    """A direction ``(dW, dA)`` aligned with the read-out ``B``, scaled like :func:`random_perturbation` (chapter 3).

    A random direction ignores ``B``, so the pseudo-network's output along it
    is small, ``O(tau / sqrt(m))``. The directions the proof of Panigrahi &
    Goyal moves along are aligned with ``B``; two of them:

    * ``kind="gradient"``: the gradient at ``(W, A)`` of ``sum_x <c, F_rnn(x)>``
      over the batch ``x``, for a random unit ``c`` in R^(d_out): the direction
      of SGD's first step on a linear loss (its rows are
      ``sum_l D^(l) Back_{l->L}^T c`` times ``h^(l-1)`` or ``x^(l)``).
    * ``kind="construction"``: the shape of the weights built for Lemma 4.2
      (chapter 4), ``dW = 0`` and ``dA = s * (B^T c) e_d^T`` on the bias column
      only, with ``s_r = sqrt(m/2) <[w_r, a_{r,:d-1}], wbar>`` for a random unit
      ``wbar`` in R^(m+d-1) (the construction's ``H(alpha, b_0)`` replaced by
      ``alpha``; our simplification).

    Each nonzero matrix is rescaled to spectral norm ``tau / sqrt(m)``, the
    scale of :func:`random_perturbation`, so the two kinds of direction are
    compared at the same size. ``x`` is a batch (batch, L, d) of inputs; the
    model is not modified. Returns ``(dW, dA)`` in the model's dtype.
    """
    gen = as_generator(generator)
    m = model.width
    W, A, B = model.W.detach(), model.A.detach(), model.B
    c = torch.randn(model.output_dim, generator=gen, dtype=W.dtype)
    c = c / c.norm()
    radius = tau / math.sqrt(m)
    if kind == "gradient":
        Wg, Ag = (
            W.clone().requires_grad_(True),
            A.clone().requires_grad_(True),
        )
        with torch.enable_grad():
            out = elman_hidden_states(Wg, Ag, x)[:, -1] @ B.transpose(0, 1)
            dW, dA = torch.autograd.grad((out @ c).sum(), (Wg, Ag))
    else:
        dW = torch.zeros_like(W)
        dA = torch.zeros_like(A)
        dA[:, -1] = B.transpose(0, 1) @ c
    return Direction(
        _scale_to_spectral_norm(dW.detach(), radius, gen),
        _scale_to_spectral_norm(dA.detach(), radius, gen),
    )


@dataclass(frozen=True)
class GapMeasurement:
    """RNN vs pseudo-network for random perturbations at one (m, tau) (chapter 3).

    ``relative_gap`` is ``mean |F_rnn(W+dW, A+dA) - F_rnn(W, A) - F(dW, dA)|``
    divided by ``mean |F(dW, dA)|`` (means over sequences, output coordinates
    and perturbations); ``gap`` and ``pseudo`` are those two means;
    ``flip_fraction`` is the fraction of entries of ``D^(1..L)`` that differ
    between the perturbed and the initial network.
    """

    relative_gap: float
    gap: float
    pseudo: float
    flip_fraction: float


class LinearizationChanges(NamedTuple):
    """:func:`linearization_changes` results, per direction and scale."""

    #: the RNN's true change (n_dir, n_tau, batch, d_out)
    change: torch.Tensor
    #: the pseudo-network's output (n_dir, n_tau, batch, d_out)
    pseudo: torch.Tensor
    #: the fraction of activation patterns that differ (n_dir, n_tau), float64
    flips: torch.Tensor


@validate_params(
    model=Model(ElmanRNN, finite=False),
    taus=Seq(POSITIVE, "positive numbers"),
    x=INPUTS,
)
def linearization_changes(
    model: ElmanRNN,
    x: torch.Tensor,
    directions: Iterable[tuple[torch.Tensor, torch.Tensor]],
    taus: Sequence[float],
) -> LinearizationChanges:
    """The RNN's change beside its pseudo-network along each direction, at each scale (chapter 3).

    For each ``(dW, dA)`` of ``directions`` and each ``tau`` of ``taus``: the
    true change ``F_rnn(x; W + tau dW, A + tau dA) - F_rnn(x; W, A)``, the
    pseudo-network ``F(x; tau dW, tau dA) = tau F(x; dW, dA)`` (it is linear,
    so it is computed once per direction) and the fraction of entries of
    ``D^(1..L)`` (read as ``1[h^(l) > 0]``) that differ between the perturbed
    and the initial network. The states at initialization are computed once
    for all directions; ``directions`` may be a generator, consumed one
    direction at a time. The model's weights are not modified. Returns
    ``(change, pseudo, flips)`` of shapes (n_dir, n_tau, batch, d_out) twice
    (the model's dtype) and (n_dir, n_tau) (float64).
    """
    W, A, B = model.W.detach(), model.A.detach(), model.B
    h_prev, D, h0 = _states_and_patterns(model, x)
    f0 = h0[:, -1] @ B.transpose(0, 1)
    active0 = h0 > 0
    changes, pseudos, flips = [], [], []
    with torch.no_grad():
        for dW1, dA1 in directions:
            dW1, dA1 = _check_perturbation(model, dW1, dA1)
            fp1 = tangent(W, B, h_prev, D, x, dW1, dA1)
            for tau in taus:
                h1 = elman_hidden_states(W + tau * dW1, A + tau * dA1, x)
                changes.append(h1[:, -1] @ B.transpose(0, 1) - f0)
                pseudos.append(tau * fp1)
                flips.append(((h1 > 0) != active0).double().mean())
    if not flips:
        raise ValueError("directions must hold at least one (dW, dA)")
    shape = (len(flips) // len(taus), len(taus))
    return LinearizationChanges(
        torch.stack(changes).reshape(*shape, *f0.shape),
        torch.stack(pseudos).reshape(*shape, *f0.shape),
        torch.stack(flips).reshape(shape),
    )


@validate_params(
    "n_perturbations", "generator", tau=POSITIVE, model=Model(ElmanRNN), x=INPUTS
)
def linearization_gap(
    model: ElmanRNN,
    x: torch.Tensor,
    tau: float,
    *,
    n_perturbations: int = 4,
    generator: torch.Generator | int | None = None,
) -> GapMeasurement:
    """Measure ``|F_rnn(W + dW, A + dA) - F_rnn(W, A) - F(dW, dA)|`` for random (dW, dA) (chapter 3).

    Each of the ``n_perturbations`` directions comes from
    :func:`random_perturbation`, with spectral norms ``tau / sqrt(m)``. An
    activation pattern ``D^(l)_rr`` counts as flipped when ``1[h^(l)_r > 0]``
    differs between the perturbed and the initial network. The model's
    weights are not modified. Returns a :class:`GapMeasurement`; several scales
    along the same directions: :func:`linearization_gaps`.
    """
    return linearization_gaps(
        model,
        x,
        [tau],
        n_perturbations=n_perturbations,
        generator=generator,
    )[0]


@validate_params(
    "n_perturbations",
    "generator",
    model=Model(ElmanRNN, finite=False),
    taus=Seq(POSITIVE, "radii"),
    x=INPUTS,
)
def linearization_gaps(
    model: ElmanRNN,
    x: torch.Tensor,
    taus: Sequence[float],
    *,
    n_perturbations: int = 4,
    generator: torch.Generator | int | None = None,
) -> list[GapMeasurement]:
    """:func:`linearization_gap` at every scale of ``taus``, along the same random directions (chapter 3).

    The ``n_perturbations`` directions are drawn once and scaled to spectral
    norm ``tau / sqrt(m)`` for each tau, so a trend in tau is not blurred by
    fresh draws. One :class:`GapMeasurement` per tau, in order.
    """
    gen = as_generator(generator)
    change, pseudo, flips = linearization_changes(
        model,
        x,
        (
            random_perturbation(
                model.input_dim,
                model.width,
                1.0,
                generator=gen,
                dtype=model.W.dtype,
            )
            for _ in range(n_perturbations)
        ),
        taus,
    )
    sums = torch.zeros(
        len(change[0]), 3, dtype=torch.float64
    )  # per tau: gap, |pseudo|, flips
    for q in range(n_perturbations):
        for i in range(len(sums)):
            sums[i, 0] += float((change[q, i] - pseudo[q, i]).abs().mean())
            sums[i, 1] += float(pseudo[q, i].abs().mean())
            sums[i, 2] += float(flips[q, i])
    sums /= n_perturbations
    return [
        GapMeasurement(float(g / p), float(g), float(p), float(f)) for g, p, f in sums
    ]
