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
tests). :func:`linearization_gap` and :func:`gap_sweep` measure how far the
RNN is from its pseudo-network for random perturbations of spectral norm
``tau / sqrt(m)``; :func:`direction_gap_sweep` compares them with directions
aligned with ``B`` (:func:`aligned_perturbation`), the kind the proof uses.

The scale ``tau / sqrt(m)`` is our choice, the usual scale of lazy-training
analyses: the paper's own radius and error bound for the approximation are
in its Lemma G.3, in an appendix that was not available.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._rng import as_generator, derive, derive_seed
from ._validation import (
    POSITIVE,
    Choice,
    check_int,
    check_model,
    check_real,
    check_sequence,
    check_tensor,
    validate_params,
)
from .elman import (
    ElmanRNN,
    elman_hidden_states,
    sample_normalized_sequence,
)

__all__ = [
    "pseudo_network",
    "pseudo_network_sum",
    "back_matrices",
    "random_perturbation",
    "DIRECTION_KINDS",
    "aligned_perturbation",
    "GapMeasurement",
    "linearization_gap",
    "GapSweep",
    "gap_sweep",
    "DirectionGapSweep",
    "direction_gap_sweep",
    "LinearizationSample",
    "linearization_sample",
]


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
        h_prev = torch.cat(
            [torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1
        )
        return h_prev, (h > 0).to(x.dtype), h


def _tangent(
    W: torch.Tensor, B: torch.Tensor, h_prev, D, x, dW, dA
) -> torch.Tensor:
    """B g^(L) with g^(l) = D^(l) (W g^(l-1) + dW h^(l-1) + dA x^(l)); no validation."""
    drive = h_prev @ dW.transpose(0, 1) + x @ dA.transpose(
        0, 1
    )  # dW h^(l-1) + dA x^(l), (batch, L, m)
    Wt = W.transpose(0, 1)
    g = D[:, 0] * drive[:, 0]
    for step in range(1, x.shape[1]):
        g = D[:, step] * torch.addmm(drive[:, step], g, Wt)
    return g @ B.transpose(0, 1)


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
    model = check_model(model, ElmanRNN)
    x = model._check_input(x)
    dW, dA = _check_perturbation(model, dW, dA)
    h_prev, D, _ = _states_and_patterns(model, x)
    with torch.no_grad():
        return _tangent(
            model.W.detach(), model.B, h_prev, D, x, dW, dA
        )


def back_matrices(
    model: ElmanRNN, x: torch.Tensor
) -> torch.Tensor:
    """``Back_{l->L} = B D^(L) W ... D^(l+1) W`` for l = 1..L; returns (batch, L, d_out, m) (chapter 3).

    ``Back_{L->L} = B``. Costs L matrix products of size (d_out, m) x (m, m) per sequence.
    """
    model = check_model(model, ElmanRNN)
    x = model._check_input(x)
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
    model = check_model(model, ElmanRNN)
    x = model._check_input(x)
    dW, dA = _check_perturbation(model, dW, dA)
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
            t.transpose(0, 1) @ t
            if t.shape[0] >= t.shape[1]
            else t @ t.transpose(0, 1)
        )
        norm = float(
            torch.linalg.eigvalsh(gram.double())[-1]
            .clamp_min(0)
            .sqrt()
        )
    else:
        v = torch.randn(t.shape[1], generator=gen, dtype=t.dtype)
        for _ in range(50):
            v = t.transpose(0, 1) @ (t @ v)
            v = v / v.norm()
        norm = float((t @ v).norm())
    return t * (radius / norm)


@validate_params("input_dim", "width", "tau", "dtype")
def random_perturbation(
    input_dim: int,
    width: int,
    tau: float,
    *,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
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
    return _scale_to_spectral_norm(
        dW, radius, gen
    ), _scale_to_spectral_norm(dA, radius, gen)


DIRECTION_KINDS = ("random", "gradient", "construction")


@validate_params("tau", kind=Choice("gradient", "construction"))
def aligned_perturbation(
    model: ElmanRNN,
    x: torch.Tensor,
    tau: float,
    *,
    kind: str = "gradient",
    generator: torch.Generator | int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
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
    model = check_model(model, ElmanRNN)
    x = model._check_input(x)
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
            out = elman_hidden_states(Wg, Ag, x)[
                :, -1
            ] @ B.transpose(0, 1)
            dW, dA = torch.autograd.grad((out @ c).sum(), (Wg, Ag))
    else:
        dW = torch.zeros_like(W)
        dA = torch.zeros_like(A)
        dA[:, -1] = B.transpose(0, 1) @ c
    return _scale_to_spectral_norm(
        dW.detach(), radius, gen
    ), _scale_to_spectral_norm(dA.detach(), radius, gen)


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


def _gap_measurements(
    model: ElmanRNN,
    x: torch.Tensor,
    taus: Sequence[float],
    n_perturbations: int,
    gen: torch.Generator,
) -> list[GapMeasurement]:
    """One GapMeasurement per tau; the same random directions are used for every tau (scaled by tau)."""
    W, A, B = model.W.detach(), model.A.detach(), model.B
    h_prev, D, h0 = _states_and_patterns(model, x)
    f0 = h0[:, -1] @ B.transpose(0, 1)
    active0 = h0 > 0
    sums = torch.zeros(
        len(taus), 3, dtype=torch.float64
    )  # gap, |pseudo|, flips
    with torch.no_grad():
        for _ in range(n_perturbations):
            dW1, dA1 = random_perturbation(
                model.input_dim,
                model.width,
                1.0,
                generator=gen,
                dtype=W.dtype,
            )
            fp1 = _tangent(
                W, B, h_prev, D, x, dW1, dA1
            )  # the pseudo-network is linear: F(tau d) = tau F(d)
            for i, tau in enumerate(taus):
                h1 = elman_hidden_states(
                    W + tau * dW1, A + tau * dA1, x
                )
                fp = tau * fp1
                sums[i, 0] += float(
                    (h1[:, -1] @ B.transpose(0, 1) - f0 - fp)
                    .abs()
                    .mean()
                )
                sums[i, 1] += float(fp.abs().mean())
                sums[i, 2] += float(
                    ((h1 > 0) != active0).double().mean()
                )
    sums /= n_perturbations
    return [
        GapMeasurement(float(g / p), float(g), float(p), float(f))
        for g, p, f in sums
    ]


@validate_params("n_perturbations", tau=POSITIVE)
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
    weights are not modified. Returns a :class:`GapMeasurement`.
    """
    model = check_model(model, ElmanRNN)
    x = model._check_input(x)
    return _gap_measurements(
        model, x, [tau], n_perturbations, as_generator(generator)
    )[0]


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
    output at every width the chapter uses. See :func:`linearization_gap`.
    """
    check_sequence(widths, "widths", "integers")
    check_sequence(taus, "taus", "positive numbers")
    widths = [check_int(m, "widths[i]", minimum=1) for m in widths]
    taus = [
        check_real(t, "taus[i]", low=0.0, low_open=True)
        for t in taus
    ]
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
    iterator = list(enumerate(widths))
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="widths")
    for j, m in iterator:
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
            results = _gap_measurements(
                model, x, taus, n_perturbations, directions
            )
            gaps[k] = [
                (r.gap, r.pseudo, r.flip_fraction) for r in results
            ]
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
    """

    widths: np.ndarray
    taus: np.ndarray
    kinds: tuple[str, ...]
    relative_gap: np.ndarray
    gap: np.ndarray
    pseudo: np.ndarray
    flip_fraction: np.ndarray

    def select(self, kind: str) -> GapSweep:
        """The (taus, widths) tables of one kind of direction, as a :class:`GapSweep`."""
        if kind not in self.kinds:
            raise ValueError(
                f"kind must be one of {self.kinds}, got {kind!r}"
            )
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
    return aligned_perturbation(
        model, x, 1.0, kind=kind, generator=gen
    )


@validate_params(
    "L",
    "d",
    "eps_x",
    "output_dim",
    "batch_size",
    "n_networks",
    "n_perturbations",
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
    (``"random"``: :func:`random_perturbation`; ``"gradient"``,
    ``"construction"``: :func:`aligned_perturbation`), ``n_perturbations``
    directions, each scaled to spectral norm ``tau / sqrt(m)`` for every tau
    (the same directions for every tau). The same networks and sequences
    serve every kind, so the kinds differ only in the direction. Streams are
    derived from ``generator`` (:func:`rnnlib._rng.derive`): one for the
    sequences, one per network, one per direction. Float32 suffices: the
    smallest relative gap the chapter meets is a few percent. Returns a
    :class:`DirectionGapSweep`.
    """
    check_sequence(widths, "widths", "integers")
    check_sequence(taus, "taus", "positive numbers")
    widths = [check_int(m, "widths[i]", minimum=1) for m in widths]
    taus = [
        check_real(t, "taus[i]", low=0.0, low_open=True)
        for t in taus
    ]
    check_sequence(kinds, "kinds", f"names from {DIRECTION_KINDS}")
    for kind in kinds:
        if kind not in DIRECTION_KINDS:
            raise ValueError(
                f"kinds: unknown kind {kind!r}; known kinds are {DIRECTION_KINDS}"
            )
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
        (3, len(kinds), len(taus), len(widths))
    )  # gap, |pseudo|, flips
    iterator = list(enumerate(widths))
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="widths")
    for j, m in iterator:
        for k in range(n_networks):
            model = ElmanRNN(
                d,
                m,
                output_dim,
                generator=derive(base, "network", m, k),
                dtype=dtype,
            )
            W, A, B = model.W.detach(), model.A.detach(), model.B
            h_prev, D, h0 = _states_and_patterns(model, x)
            f0 = h0[:, -1] @ B.transpose(0, 1)
            for i, kind in enumerate(kinds):
                for q in range(n_perturbations):
                    dW1, dA1 = _unit_direction(
                        model,
                        x,
                        kind,
                        derive(base, "direction", kind, m, k, q),
                    )
                    with torch.no_grad():
                        fp1 = _tangent(
                            W, B, h_prev, D, x, dW1, dA1
                        )  # linear: F(tau d) = tau F(d)
                        for t, tau in enumerate(taus):
                            h1 = elman_hidden_states(
                                W + tau * dW1, A + tau * dA1, x
                            )
                            fp = tau * fp1
                            sums[0, i, t, j] += float(
                                (
                                    h1[:, -1] @ B.transpose(0, 1)
                                    - f0
                                    - fp
                                )
                                .abs()
                                .mean()
                            )
                            sums[1, i, t, j] += float(
                                fp.abs().mean()
                            )
                            sums[2, i, t, j] += float(
                                ((h1 > 0) != (h0 > 0))
                                .double()
                                .mean()
                            )
    sums /= n_networks * n_perturbations
    gap, pseudo, flips = sums
    return DirectionGapSweep(
        np.asarray(widths),
        np.asarray(taus, dtype=float),
        tuple(kinds),
        gap / pseudo,
        gap,
        pseudo,
        flips,
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
    W, A, B = model.W.detach(), model.A.detach(), model.B
    h_prev, D, h0 = _states_and_patterns(model, x)
    f0 = h0[:, -1] @ B.transpose(0, 1)
    true, pseudo, flips = [], [], []
    with torch.no_grad():
        for _ in range(n_perturbations):
            dW, dA = random_perturbation(
                d, m, tau, generator=gen, dtype=torch.float64
            )
            h1 = elman_hidden_states(W + dW, A + dA, x)
            true.append(
                (h1[:, -1] @ B.transpose(0, 1) - f0).flatten()
            )
            pseudo.append(
                _tangent(W, B, h_prev, D, x, dW, dA).flatten()
            )
            flips.append(((h1 > 0) != (h0 > 0)).double().mean())
    return LinearizationSample(
        m,
        tau,
        L,
        torch.cat(true).numpy(),
        torch.cat(pseudo).numpy(),
        float(torch.stack(flips).mean()),
    )
