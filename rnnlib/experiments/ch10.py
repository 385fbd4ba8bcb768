"""Chapter 10's sweeps: how long a truncation training needs as N grows, and an unstable scalar model.

* :func:`k_star_sweep`: the training theorem's "k >> log(N / eps)" measured directly. For
  several seeds (a teacher, a student start and a data set each) and several numbers of steps
  N, projected gradient descent runs on the full tanh RNN and on its k-step truncations
  (:func:`rnnlib.truncation.batched_gd_weights`: the runs of
  :func:`rnnlib.truncation.train_full_and_truncated`, batched, so that every seed, every k and
  the full model advance together as one tensor of weights), and the smallest k with
  ``||w_N - w^k_N|| <= eps`` is read off (:func:`smallest_k`). Two schedules: ``alpha / i``,
  and for each N the constant step ``S_N / N`` that walks the same total length
  ``S_N = sum_{i <= N} alpha / i`` (matched sum of step sizes). The reconstruction of
  chapter 10 bounds the distance by ``gamma k lambda^k e^(beta S_N)``, so
  ``k*(N) <= (beta S_N + ln(gamma / eps) + ln k) / ln(1 / lambda)``: linear in ``ln N``
  (``S_N ~ ln N``) for both schedules. :func:`seed_slopes` fits ``k*`` against ``ln N`` per
  seed, :func:`mean_interval` gives the t-interval of the mean over seeds (both defined in
  :mod:`rnnlib.trends`, shared with chapters 4-6, and re-exported here for chapter 10).
* :func:`scalar_smoothness`: the "very simple unstable model" of the necessity remark, in our
  choice, the scalar linear RNN ``h_t = w h_(t-1) + x_t``, ``h_0 = 0``, with the loss
  ``p_T(w) = mean_b 1/2 (h_T - y)^2``. Since ``h_T = sum_s w^(T-s) x_s``,
  ``d h_T / d w = sum_s (T-s) w^(T-s-1) x_s`` and ``p_T''(w) = mean (d h_T/dw)^2 + (h_T - y) d^2 h_T/dw^2``,
  of order ``T^2 w^(2T)`` for ``|w| > 1`` (the terms with small s dominate) and bounded in T for
  ``|w| < 1``: the smoothness constant a gradient-descent analysis needs grows exponentially
  with the sequence length outside the stable regime. Computed in closed form (the sums above)
  and checked against autograd in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._rng import as_generator
from .._validation import (
    ANY_REAL,
    OPEN_UNIT,
    PARAMS,
    POSITIVE,
    Bool,
    Int,
    Ints,
    validate_params,
)
from ..dynamical import SimpleRNN
from ..trends import mean_interval, seed_slopes
from ..truncation import batched_gd_weights

__all__ = [
    "smallest_k",
    "seed_slopes",
    "mean_interval",
    "KStarSweep",
    "k_star_sweep",
    "scalar_smoothness",
]


@validate_params(eps=POSITIVE, ks=Ints(1))
def smallest_k(distances: np.ndarray, ks: Sequence[int], eps: float) -> np.ndarray:
    """The smallest truncation length with distance <= ``eps``, interpolated between the ks (chapter 10).

    ``distances[..., j]`` is ``||w_N - w^k_N||`` at ``k = ks[j]`` (ks increasing). The
    answer is the first k of the grid from which on every distance is <= ``eps`` (so a
    late bump above ``eps`` counts), refined by interpolating ``log distance`` linearly
    in k between that grid point and the one before it (the distance falls about
    geometrically in k): a continuous ``k*``. ``ks[0]`` where even ``k = ks[0]`` is within
    ``eps``; ``nan`` where the last k is not.
    """
    d = np.asarray(distances, dtype=float)
    ks_arr = np.asarray(ks, dtype=float)
    if d.shape[-1] != ks_arr.size or ks_arr.size == 0:
        raise ValueError(
            f"distances must have len(ks) = {ks_arr.size} entries in its last dimension, got shape {d.shape}"
        )
    if np.any(np.diff(ks_arr) <= 0):
        raise ValueError(f"ks must be increasing, got {list(ks)}")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError("distances must be finite and non-negative")
    flat = d.reshape(-1, ks_arr.size)
    out = np.full(flat.shape[0], np.nan)
    for r, row in enumerate(flat):
        above = np.nonzero(row > eps)[0]
        if above.size == 0:
            out[r] = ks_arr[0]
            continue
        j = above[-1]  # last grid point above eps
        if j == ks_arr.size - 1:
            continue
        lo, hi = np.log(row[j]), np.log(max(row[j + 1], 1e-300))
        frac = (lo - math.log(eps)) / (lo - hi)
        out[r] = ks_arr[j] + frac * (ks_arr[j + 1] - ks_arr[j])
    return out.reshape(d.shape[:-1])


@dataclass(frozen=True)
class KStarSweep:
    """The record of :func:`k_star_sweep` (chapter 10).

    ``distances[schedule]`` (seeds, len(Ns), len(ks)): ``||w_N - w^k_N||``;
    ``k_star[schedule]`` (seeds, len(Ns)): :func:`smallest_k` at ``eps``;
    ``slopes[schedule]`` (seeds,): the fitted slope of ``k*`` against ``ln N``;
    ``step_length`` (len(Ns),): ``S_N = sum_{i <= N} alpha / i``, shared by both schedules.
    """

    Ns: list[int]
    ks: list[int]
    eps: float
    distances: dict[str, np.ndarray]
    k_star: dict[str, np.ndarray]
    slopes: dict[str, np.ndarray]
    step_length: np.ndarray


#: The two schedules of :func:`k_star_sweep`.
SCHEDULE_LABELS = ("alpha/i", "constant, matched sum")


@validate_params(
    "n",
    "lr",
    "dtype",
    m=Int(1),
    T=Int(2),
    batch=Int(1),
    Ns=Ints(1),
    ks=Ints(1),
    seeds=Ints(0),
    eps=POSITIVE,
    constant_lr=POSITIVE,
    last_only=Bool(),
    lam_teacher=OPEN_UNIT,
    project=PARAMS["lam"],
)
def k_star_sweep(
    Ns: Sequence[int],
    ks: Sequence[int],
    seeds: Sequence[int],
    *,
    eps: float,
    n: int = 2,
    m: int = 6,
    T: int = 16,
    batch: int = 4,
    lr: float = 1.0,
    lam_teacher: float = 0.8,
    project: float = 0.9,
    constant_lr: float | None = None,
    last_only: bool = False,
    dtype: torch.dtype = torch.float64,
) -> KStarSweep:
    """The smallest k with ``||w_N - w^k_N|| <= eps`` for each N, per seed and schedule (chapter 10).

    Per seed s: inputs ``x`` (batch, T, n), normalized to ``||x_t|| <= 1``, a teacher tanh RNN
    with ``||W||_2 = lam_teacher`` makes the targets at every step, and the student starts from
    its own random stable weights with the teacher's read-out (chapter 10's setup, smaller).
    Projected GD (``||W||_2 <= project``) runs on the full model and on each k-step truncation,
    with ``alpha_i = lr / i`` (one run to ``max(Ns)``, read at every N) and, for each N, with the
    constant step ``S_N / N``, ``S_N = sum_{i<=N} lr / i``; with ``constant_lr``, also the fixed
    constant step ``constant_lr`` (one run to ``max(Ns)``; its total length ``constant_lr N`` is
    not matched). The loss is the mean over all steps (``last_only``: the last step only), as in
    the chapter's runs. ``Ns`` and ``ks`` increasing, ``ks`` below T (``k >= T`` is the full model).
    """
    Ns = [int(v) for v in Ns]
    ks = [int(v) for v in ks]
    if any(np.diff(Ns) <= 0) or any(np.diff(ks) <= 0):
        raise ValueError("Ns and ks must be increasing")
    if ks[-1] >= T:
        raise ValueError(f"ks must be < T = {T} (k >= T is the full model), got {ks}")
    if len(seeds) < 2:
        raise ValueError(f"seeds must hold at least 2 seeds, got {list(seeds)}")
    starts = []
    for s in seeds:
        gen = as_generator(int(s))
        x = torch.randn(batch, T, n, generator=gen, dtype=dtype)
        x = x / x.norm(dim=2, keepdim=True).clamp(min=1.0)
        teacher = SimpleRNN(
            n,
            m,
            init="orthogonal",
            spectral_norm=lam_teacher,
            generator=gen,
            dtype=dtype,
        )
        student = SimpleRNN(
            n,
            m,
            init="orthogonal",
            spectral_norm=lam_teacher,
            generator=gen,
            dtype=dtype,
        )
        with torch.no_grad():
            y = teacher.output(teacher(x))
        starts.append(
            (
                student.W.detach(),
                student.U.detach(),
                teacher.C,
                x,
                y,
            )
        )
    N_max = max(Ns)
    S = np.cumsum(lr / np.arange(1, N_max + 1))
    runs = [T, *ks]  # per seed and schedule: the full model first

    def run(schedules: list[np.ndarray], steps: int) -> np.ndarray:
        """Distances (steps + 1, seeds, len(schedules), len(ks)); all runs advance together."""
        order = [
            (si, ci, k)
            for si in range(len(starts))
            for ci in range(len(schedules))
            for k in runs
        ]
        parts = [torch.stack([starts[si][j] for si, _, _ in order]) for j in range(5)]
        alphas = torch.tensor(
            np.stack([schedules[ci] for _, ci, _ in order]),
            dtype=dtype,
        )
        w = batched_gd_weights(
            *parts,
            [k for _, _, k in order],
            alphas,
            steps=steps,
            project=project,
            last_only=last_only,
        ).numpy()  # (steps + 1, R, P)
        w = w.reshape(steps + 1, len(starts), len(schedules), len(runs), -1)
        return np.linalg.norm(w[..., 1:, :] - w[..., :1, :], axis=-1)

    # alpha/i and the fixed constant step: one run to N_max, read at every N
    long = [lr / np.arange(1, N_max + 1)]
    if constant_lr is not None:
        long.append(np.full(N_max, constant_lr))
    d = run(long, N_max)
    at = np.array(Ns)
    dist = {SCHEDULE_LABELS[0]: d[at, :, 0].transpose(1, 0, 2)}
    # the constant step S_N / N of matched total length: one run per N
    dist[SCHEDULE_LABELS[1]] = np.stack(
        [run([np.full(N, S[N - 1] / N)], N)[N, :, 0] for N in Ns],
        axis=1,
    )
    if constant_lr is not None:
        dist[f"constant {constant_lr:g}"] = d[at, :, 1].transpose(1, 0, 2)
    k_star = {lab: smallest_k(d, ks, eps) for lab, d in dist.items()}
    slopes = {lab: seed_slopes(np.log(Ns), v) for lab, v in k_star.items()}
    return KStarSweep(
        Ns,
        ks,
        float(eps),
        dist,
        k_star,
        slopes,
        S[np.array(Ns) - 1],
    )


@validate_params(
    "generator",
    w=ANY_REAL,
    Ts=Ints(2),
    batch=Int(1),
)
def scalar_smoothness(
    w: float,
    Ts: Sequence[int],
    *,
    batch: int = 64,
    generator: torch.Generator | int | None = None,
) -> np.ndarray:
    """``|p_T''(w)|`` and ``|p_T'(w)|`` of the scalar linear RNN ``h_t = w h_(t-1) + x_t``, for each T (chapter 10).

    ``x_t ~ N(0, 1)`` and targets ``y ~ N(0, 1)`` (batch each, drawn from ``generator``);
    ``p_T(w) = mean_b 1/2 (h_T - y)^2`` with ``h_T = sum_{s=1}^T w^(T-s) x_s``, so
    ``p' = mean (h_T - y) h_T'`` and ``p'' = mean (h_T'^2 + (h_T - y) h_T'')`` with
    ``h_T' = sum_s (T-s) w^(T-s-1) x_s`` and ``h_T'' = sum_s (T-s)(T-s-1) w^(T-s-2) x_s``,
    evaluated in float64. Returns an array (2, len(Ts)): row 0 ``|p''|``, row 1 ``|p'|``.
    """
    gen = as_generator(generator)
    T_max = max(Ts)
    x = torch.randn(batch, T_max, generator=gen, dtype=torch.float64).numpy()
    y = torch.randn(batch, generator=gen, dtype=torch.float64).numpy()
    out = np.empty((2, len(Ts)))
    for j, T in enumerate(Ts):
        e = np.arange(T - 1, -1, -1, dtype=float)  # T - s for s = 1..T
        xs = x[:, :T]
        h = xs @ w**e
        h1 = xs @ (e * np.where(e >= 1, w ** np.maximum(e - 1, 0), 0.0))
        h2 = xs @ (e * (e - 1) * np.where(e >= 2, w ** np.maximum(e - 2, 0), 0.0))
        out[0, j] = abs(np.mean(h1**2 + (h - y) * h2))
        out[1, j] = abs(np.mean((h - y) * h1))
    return out
