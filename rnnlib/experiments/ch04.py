"""Chapter 4's sweeps: the tools of the existence construction measured over widths, lengths and scales.

The objects are in :mod:`rnnlib.inversion` (Lemma 4.4's identity, the decoders
of Theorem 4.5, Lemma 4.1's step features, Lemma F.11's correlations, the
construction of Lemma 4.2 / Theorem 4.3); each sweep here draws the networks,
vectors and sequences for every width and averages one of them:
:func:`lemma44_sweep`, :func:`decoding_sweep` (naive, fitted and analytic
inverses), :func:`step_feature_sweep`, :func:`correlation_sweep` and
:func:`construction_sweep`; :func:`growth_fit` compares exponential and
linear growth of the naive error with the depth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._progress import progress_bar
from .._rng import as_seed, derive
from .._validation import (
    POSITIVE,
    Instance,
    Int,
    Ints,
    Real,
    Seq,
    validate_params,
)
from ..concepts import ConceptTarget, SmoothFunction, get_function
from ..elman import (
    ElmanRNN,
    normalize_sequence,
    sample_true_sequence,
)
from ..inversion import (
    ConstructionErrors,
    backprop_correlations,
    check_target,
    construct_existence,
    decoding_errors,
    evaluate_construction,
    fit_step_features,
    step_feature_average,
)

__all__ = [
    "Lemma44Sweep",
    "lemma44_sweep",
    "DecodingSweep",
    "decoding_sweep",
    "GrowthFit",
    "growth_fit",
    "StepFeatureSweep",
    "step_feature_sweep",
    "CorrelationSweep",
    "correlation_sweep",
    "ConstructionSweep",
    "construction_sweep",
]


@dataclass(frozen=True)
class Lemma44Sweep:
    """:func:`lemma44_sweep` results, one entry per width (chapter 4).

    ``corrected`` and ``printed``: mean ``|v^T x - p^T relu(T x)|`` over trials
    with ``p = (2/m) T v`` and ``p = 2 T v``; ``predicted``: the mean of
    ``sqrt(2/pi)`` times :func:`rnnlib.inversion.relu_identity_std` (the mean absolute value of
    a centred Gaussian); ``bound``: the mean of ``|v| |x| / sqrt(m)``;
    ``exceed``: the fraction of trials whose corrected error exceeds it;
    ``corrected_trials`` (widths, n_trials): each trial's corrected error, the
    draws a bootstrap interval of the rate resamples.
    """

    widths: np.ndarray
    corrected: np.ndarray
    printed: np.ndarray
    predicted: np.ndarray
    bound: np.ndarray
    exceed: np.ndarray
    corrected_trials: np.ndarray


@validate_params("n_trials", "generator", d=Int(1), widths=Ints(1))
def lemma44_sweep(
    widths: Sequence[int],
    *,
    d: int = 20,
    n_trials: int = 40,
    generator: torch.Generator | int | None = None,
) -> Lemma44Sweep:
    """Error of Lemma 4.4's estimate against the width, both scalings (chapter 4).

    For each width and each of ``n_trials`` trials: fresh unit vectors ``v``,
    ``x`` in R^d and a fresh ``T`` (m x d), i.i.d. N(0, 1). Float64.
    """
    out = np.zeros((5, len(widths)))
    trials = np.zeros((len(widths), n_trials))
    for j, m in enumerate(widths):
        gen = derive(generator, "lemma44", m)
        v = torch.randn(n_trials, d, generator=gen, dtype=torch.float64)
        x = torch.randn(n_trials, d, generator=gen, dtype=torch.float64)
        v, x = (
            v / v.norm(dim=1, keepdim=True),
            x / x.norm(dim=1, keepdim=True),
        )
        T = torch.randn(n_trials, m, d, generator=gen, dtype=torch.float64)
        s = torch.einsum("tmd,td->tm", T, v) * torch.relu(
            torch.einsum("tmd,td->tm", T, x)
        )
        s = s.sum(dim=1)
        vx = (v * x).sum(dim=1)
        corrected = (vx - 2.0 / m * s).abs()
        printed = (vx - 2.0 * s).abs()
        std = torch.sqrt((2.0 + 3.0 * vx**2) / m)
        bound = 1.0 / math.sqrt(m)
        out[:, j] = [
            corrected.mean(),
            printed.mean(),
            math.sqrt(2 / math.pi) * std.mean(),
            bound,
            (corrected > bound).double().mean(),
        ]
        trials[j] = corrected.numpy()
    return Lemma44Sweep(np.asarray(widths), *out, trials)


@dataclass(frozen=True)
class DecodingSweep:
    """:func:`decoding_sweep` results (chapter 4).

    ``naive``, ``fitted`` and ``analytic`` (:func:`rnnlib.inversion.analytic_inverse`):
    arrays (len(widths), len(lengths), len(eps_values)) of the error averaged
    over the true-token positions and the networks; ``naive_nets``,
    ``fitted_nets``, ``analytic_nets``: the same per network, (n_networks,
    widths, lengths, eps_values), the series a per-network trend is fitted to;
    ``profiles[(m, L, eps_x)] = (naive, fitted)`` and
    ``analytic_profiles[(m, L, eps_x)]``: per-position errors (positions
    2..L-1) averaged over the networks; ``naive_profile_nets[(m, L, eps_x)]``
    (n_networks, L-2): the naive profile of each network; ``n_train[i]``: the
    fitted decoder's training sequences at width ``widths[i]``.
    """

    widths: np.ndarray
    lengths: np.ndarray
    eps_values: np.ndarray
    naive: np.ndarray
    fitted: np.ndarray
    profiles: dict
    analytic: np.ndarray
    naive_nets: np.ndarray
    fitted_nets: np.ndarray
    analytic_nets: np.ndarray
    analytic_profiles: dict
    naive_profile_nets: dict
    n_train: np.ndarray


@validate_params(
    "d",
    "n_networks",
    "n_test",
    "ridge",
    "generator",
    "dtype",
    "progress",
    n_train=Int(0),
    n_train_per_m=Int(0),
    widths=Ints(1),
    lengths=Ints(3),
    eps_values=Seq(Real(0.0, 1.0, low_open=True), "numbers in (0, 1]"),
)
def decoding_sweep(
    widths: Sequence[int],
    lengths: Sequence[int],
    eps_values: Sequence[float],
    *,
    d: int = 6,
    n_networks: int = 2,
    n_train: int = 512,
    n_train_per_m: int = 0,
    n_test: int = 128,
    ridge: float = 1e-3,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
    progress: bool = False,
) -> DecodingSweep:
    """:func:`rnnlib.inversion.decoding_errors` for every (m, L, eps_x), ``n_networks`` networks each (chapter 4).

    Network k of width m is ``ElmanRNN(d, m, generator=derive(as_seed(generator), "net", m, k))``.
    The fitted decoder is trained on ``max(n_train, n_train_per_m * m)``
    sequences (``n_train_per_m = 4``: 4m, enough that the fit is not
    sample-limited; both 0: no fitted decoder, its errors NaN).
    The hidden states are computed in ``dtype`` (float32 by default: the
    tokens' effect on ``h`` is far above float32 rounding for eps_x >= 0.01);
    the decoder is fitted in float64.
    """
    seed = as_seed(generator)
    shape = (len(widths), len(lengths), len(eps_values))
    nets = np.zeros((3, n_networks, *shape))  # naive, fitted, analytic
    profiles, a_profiles, n_profiles = {}, {}, {}
    n_trains = [max(n_train, n_train_per_m * m) for m in widths]
    for i, m in enumerate(
        progress_bar(widths, enabled=progress, desc="widths", leave=True)
    ):
        for j, L in enumerate(lengths):
            for k, eps in enumerate(eps_values):
                runs = []
                for net in range(n_networks):
                    model = ElmanRNN(
                        d,
                        m,
                        generator=derive(seed, "net", m, net),
                        dtype=dtype,
                    )
                    runs.append(
                        decoding_errors(
                            model,
                            L,
                            eps,
                            n_train=n_trains[i],
                            n_test=n_test,
                            ridge=ridge,
                            generator=derive(seed, "data", m, L, net),
                        )
                    )
                key = (m, L, eps)
                for q, name in enumerate(("naive", "fitted", "analytic")):
                    nets[q, :, i, j, k] = [getattr(r, name).mean() for r in runs]
                profiles[key] = (
                    np.mean([r.naive for r in runs], axis=0),
                    np.mean([r.fitted for r in runs], axis=0),
                )
                a_profiles[key] = np.mean([r.analytic for r in runs], axis=0)
                n_profiles[key] = np.stack([r.naive for r in runs])
    naive, fitted, analytic = nets.mean(axis=1)
    return DecodingSweep(
        np.asarray(widths),
        np.asarray(lengths),
        np.asarray(eps_values, dtype=float),
        naive,
        fitted,
        profiles,
        analytic,
        *nets,
        a_profiles,
        n_profiles,
        np.asarray(n_trains),
    )


@dataclass(frozen=True)
class GrowthFit:
    """:func:`growth_fit` results: exponential against linear growth of an error with the depth (chapter 4).

    Per network (rows of ``errors``, (networks, depths)): ``rate`` is the
    exponential model's growth factor per step, ``exp(b)`` of
    ``log e = a + b k``; ``slope`` the linear model's ``b`` of ``e = a + b k``;
    ``exp_rss`` and ``lin_rss`` the relative residual sums
    ``sum_k ((e_k - f(k)) / e_k)^2`` of the two two-parameter models (the
    errors span more than a decade and their spread grows with their size,
    so residuals are compared relative to the value); ``prefers_exp``: the
    networks for which the exponential model's residual is the smaller.
    """

    depths: np.ndarray
    errors: np.ndarray
    rate: np.ndarray
    slope: np.ndarray
    exp_rss: np.ndarray
    lin_rss: np.ndarray

    @property
    def prefers_exp(self) -> np.ndarray:
        """Boolean (networks,): exponential residual below linear."""
        return self.exp_rss < self.lin_rss


@validate_params(depths=Seq(POSITIVE, "depths"))
def growth_fit(depths: Sequence[float], errors: np.ndarray) -> GrowthFit:
    """Fit ``e = exp(a + b k)`` and ``e = a + b k`` to each row of ``errors`` against ``depths`` (chapter 4).

    The exponential model is fitted by least squares on ``log e``, the
    linear one by least squares weighted by ``1 / e^2``; both are then scored
    by the relative residual sum of :class:`GrowthFit` (each model is, to
    first order, the least-squares fit for that score). ``errors``
    (networks, len(depths)) must be positive; ``depths`` needs at least 3
    distinct values (2 parameters, one residual).
    """
    k = np.asarray(depths, dtype=float)
    e = np.atleast_2d(np.asarray(errors, dtype=float))
    if k.ndim != 1 or len(np.unique(k)) < 3 or not np.all(np.isfinite(k)):
        raise ValueError(
            f"depths must be at least 3 distinct finite numbers, got {depths!r}"
        )
    if e.ndim != 2 or e.shape[1] != k.size:
        raise ValueError(
            f"errors must have shape (networks, {k.size}), got shape {e.shape}"
        )
    if not np.all(np.isfinite(e)) or not np.all(e > 0):
        raise ValueError("errors must be finite and positive")
    X = np.stack([np.ones_like(k), k], axis=1)
    rate, slope, exp_rss, lin_rss = [], [], [], []
    for row in e:
        ab = np.linalg.lstsq(X, np.log(row), rcond=None)[0]
        fit_exp = np.exp(X @ ab)
        w = 1.0 / row
        cd = np.linalg.lstsq(X * w[:, None], row * w, rcond=None)[0]
        fit_lin = X @ cd
        rate.append(math.exp(ab[1]))
        slope.append(cd[1])
        exp_rss.append(float(np.sum(((row - fit_exp) / row) ** 2)))
        lin_rss.append(float(np.sum(((row - fit_lin) / row) ** 2)))
    return GrowthFit(
        k,
        e,
        np.asarray(rate),
        np.asarray(slope),
        np.asarray(exp_rss),
        np.asarray(lin_rss),
    )


@dataclass(frozen=True)
class StepFeatureSweep:
    """:func:`step_feature_sweep` results (chapter 4).

    ``errors[f, j]``: mean over draws of ``max_u |average - phi(u)|`` for
    function ``names[f]`` and width ``widths[j]``; ``norms[f]``:
    ``sqrt(E[H^2])`` of its fitted ``H``; ``fit_errors[f]``: the bias of the
    fit (the error as m -> infinity); ``draw_errors[f, j]``: the ``n_draws`` errors
    behind ``errors[f, j]``, the draws a bootstrap interval of the rate resamples.
    """

    widths: np.ndarray
    names: list
    errors: np.ndarray
    norms: np.ndarray
    fit_errors: np.ndarray
    draw_errors: np.ndarray


@validate_params(
    "n_draws",
    "ridge",
    "generator",
    n_points=Int(2),
    widths=Ints(1),
    functions=Instance(Mapping),
)
def step_feature_sweep(
    functions: dict,
    widths: Sequence[int],
    *,
    n_draws: int = 10,
    n_points: int = 101,
    degree: tuple[int, int] = (10, 6),
    ridge: float = 1e-6,
    generator: torch.Generator | int | None = None,
) -> StepFeatureSweep:
    """Lemma 4.1 in numbers: fit ``H`` for each ``phi`` on [-1, 1], then average m random step features (chapter 4).

    ``functions`` maps names to functions of a tensor. The error of one
    draw is the largest ``|average - phi(u)|`` over ``n_points`` values of u
    in [-1, 1]; it is averaged over ``n_draws`` draws per width.
    """
    if not isinstance(functions, dict) or not functions:
        raise ValueError("functions must be a non-empty dict {name: function}")
    u = torch.linspace(-1.0, 1.0, n_points, dtype=torch.float64)
    names = list(functions)
    errors = np.zeros((len(names), len(widths)))
    draw_errors = np.zeros((len(names), len(widths), n_draws))
    norms, fit_errors = np.zeros(len(names)), np.zeros(len(names))
    for f, name in enumerate(names):
        phi = functions[name]
        fit = fit_step_features(
            phi, degree=degree, ridge=ridge
        )  # refuses a phi that is not a function
        if isinstance(phi, (str, SmoothFunction)):
            phi = get_function(phi)
        norms[f], fit_errors[f] = fit.norm, fit.fit_error
        target = phi(u).double()
        for j, m in enumerate(widths):
            errs = [
                float(
                    (
                        step_feature_average(
                            fit,
                            u,
                            m,
                            generator=derive(generator, "features", f, m, k),
                        )
                        - target
                    )
                    .abs()
                    .max()
                )
                for k in range(n_draws)
            ]
            errors[f, j] = np.mean(errs)
            draw_errors[f, j] = errs
    return StepFeatureSweep(
        np.asarray(widths),
        names,
        errors,
        norms,
        fit_errors,
        draw_errors,
    )


@dataclass(frozen=True)
class CorrelationSweep:
    """:func:`correlation_sweep` results (chapter 4): per width, means over networks and sequences.

    ``last``: ``c_L``; ``max_earlier``: ``max_{i<L} |c_i|``; ``profile[j]``:
    the mean of ``|c_i|`` for i = 1..L at width ``widths[j]``.
    """

    widths: np.ndarray
    last: np.ndarray
    max_earlier: np.ndarray
    profile: np.ndarray


@validate_params(
    "L", "d", "eps_x", "batch_size", "n_networks", "generator", "dtype", widths=Ints(1)
)
def correlation_sweep(
    widths: Sequence[int],
    *,
    L: int = 8,
    d: int = 6,
    eps_x: float = 0.1,
    batch_size: int = 16,
    n_networks: int = 3,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> CorrelationSweep:
    """:func:`rnnlib.inversion.backprop_correlations` (d_out = 1) for ``n_networks`` networks per width (chapter 4)."""
    seed = as_seed(generator)
    last, max_earlier, profile = [], [], []
    for m in widths:
        cs = []
        for k in range(n_networks):
            model = ElmanRNN(
                d,
                m,
                generator=derive(seed, "net", m, k),
                dtype=dtype,
            )
            x_bar = sample_true_sequence(
                batch_size,
                L,
                d,
                generator=derive(seed, "data", m, k),
                dtype=dtype,
            )
            cs.append(
                backprop_correlations(model, normalize_sequence(x_bar, eps_x))[
                    ..., 0
                ].double()
            )
        c = torch.cat(cs)  # (n_networks * batch, L)
        last.append(float(c[:, -1].mean()))
        max_earlier.append(float(c[:, :-1].abs().amax(dim=1).mean()))
        profile.append(c.abs().mean(dim=0).numpy())
    return CorrelationSweep(
        np.asarray(widths),
        np.asarray(last),
        np.asarray(max_earlier),
        np.stack(profile),
    )


@dataclass(frozen=True)
class ConstructionSweep:
    """:func:`construction_sweep` results, per width: means over networks (chapter 4).

    ``error``, ``centred``, ``start``, ``end``, ``decoding``, ``norm_A``, ``R``,
    ``H_norm``: the fields of :class:`rnnlib.inversion.ConstructionErrors` and
    :class:`rnnlib.inversion.Construction` (``start``/``end``: the mean ``|term|`` of steps 1 and L);
    ``target_std``: of ``F*`` on the test sequences; ``sample``: the
    :class:`rnnlib.inversion.ConstructionErrors` of the first network at the largest width;
    ``error_nets``, ``centred_nets``, ``start_nets`` (networks, widths): ``error``,
    ``centred`` and ``start`` of each network k, the series whose slope in ``m`` is
    fitted once per network (:func:`rnnlib.trends.loglog_trend`).
    """

    widths: np.ndarray
    eps_x: float
    error: np.ndarray
    centred: np.ndarray
    start: np.ndarray
    end: np.ndarray
    decoding: np.ndarray
    norm_A: np.ndarray
    R: np.ndarray
    H_norm: np.ndarray
    target_std: float
    sample: ConstructionErrors
    error_nets: np.ndarray
    centred_nets: np.ndarray
    start_nets: np.ndarray


@validate_params(
    "eps_x",
    "n_networks",
    "n_test",
    "generator",
    "dtype",
    "progress",
    widths=Ints(1),
    target=Instance(ConceptTarget),
    n_fit=Int(2),
)
def construction_sweep(
    widths: Sequence[int],
    target: ConceptTarget,
    *,
    eps_x: float = 0.1,
    n_networks: int = 2,
    n_fit: int = 256,
    n_test: int = 128,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
    progress: bool = False,
    **construct_kwargs,
) -> ConstructionSweep:
    """:func:`rnnlib.inversion.construct_existence` then :func:`rnnlib.inversion.evaluate_construction`, per width and network (chapter 4).

    Network k of width m is ``ElmanRNN(d, m, generator=derive(as_seed(generator), "net", m, k))``
    with ``d = target.token_dim + 1``; the test sequences are the same for every network.
    """
    seed = as_seed(generator)
    if not isinstance(target, ConceptTarget):
        raise TypeError(
            f"target must be an rnnlib.concepts.ConceptTarget, got {type(target).__name__}"
        )
    L, d = target.n_tokens + 2, target.token_dim + 1
    check_target(target, L, d)
    x_bar = sample_true_sequence(
        n_test, L, d, generator=derive(seed, "test"), dtype=dtype
    )
    rows, nets, sample = [], [], None
    for m in progress_bar(widths, enabled=progress, desc="widths", leave=True):
        per_net = []
        for k in range(n_networks):
            model = ElmanRNN(
                d,
                m,
                generator=derive(seed, "net", m, k),
                dtype=dtype,
            )
            c = construct_existence(
                model,
                target,
                eps_x,
                n_fit=n_fit,
                generator=derive(seed, "fit", m, k),
                **construct_kwargs,
            )
            e = evaluate_construction(model, c, target, x_bar, eps_x)
            per_net.append(
                [
                    e.error,
                    e.centred,
                    e.terms[0],
                    e.terms[-1],
                    e.decoding,
                    e.norm_A,
                    c.R,
                    c.fit.norm,
                ]
            )
            if k == 0:
                sample = e
        rows.append(np.mean(per_net, axis=0))
        nets.append(np.asarray(per_net)[:, :3])
    cols = np.asarray(rows).T
    per = np.asarray(nets)  # (widths, networks, 3)
    return ConstructionSweep(
        np.asarray(widths),
        eps_x,
        *cols,
        float(sample.target_std),
        sample,
        per[:, :, 0].T.copy(),
        per[:, :, 1].T.copy(),
        per[:, :, 2].T.copy(),
    )
