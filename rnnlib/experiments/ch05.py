"""Chapter 5's measurements of the infinite-width tangent kernel.

* :func:`kernel_convergence`: the finite-width kernel ``tangent_kernel(model_m, x) / m``
  of independent networks against its limit :func:`rnnlib.ntk.limit_tangent_kernel`,
  as the width m grows: the relative (Frobenius) error of one draw, averaged over
  draws, should fall like ``m^(-1/2)`` (a sum over m neurons fluctuates like
  ``sqrt(m)`` around its mean ``m K``); beside it the share of the cross-time terms
  (:func:`rnnlib.ntk.cross_time_fraction`), which the limit drops.
* :func:`limit_kernel_reference`: chapter 5's kernel reference
  (:func:`rnnlib.train.kernel_reference`) at infinite width. That reference is
  kernel ridge regression with the kernel ``out_scale^2 K_m`` and the ridge
  ``out_scale^2 Kbar_m r`` (``Kbar_m`` the mean of ``K_m(x_n, x_n)``), i.e. with
  the normalized kernel ``K_m / Kbar_m`` and the ridge ``r``; its limit is the
  same regression with ``K / Kbar``, free of the width and of ``out_scale``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._rng import as_seed, derive
from .._validation import (
    check_int,
    check_ints,
    check_real,
    check_tensor,
)
from ..elman import ElmanRNN
from ..ntk import cross_time_fraction, limit_tangent_kernel
from ..train import (
    kernel_reference,
    kernel_ridge,
    objective,
    predict,
    regression_task,
    tangent_kernel,
    tangent_kernel_diag,
)

__all__ = [
    "KernelConvergence",
    "kernel_convergence",
    "limit_kernel_reference",
    "LimitReference",
    "limit_reference_sweep",
]


@dataclass(frozen=True)
class KernelConvergence:
    """:func:`kernel_convergence` results (chapter 5).

    ``errors[j]``: the relative errors ``||K_m / m - K||_F / ||K||_F`` of the
    ``draws[j]`` networks of width ``widths[j]``; ``mean_error`` their means;
    ``cross_time``: the mean share of the cross-time terms in ``K_m(x, x)`` over
    the draws and sequences; ``slope``: the least-squares slope of
    ``log mean_error`` against ``log m``.
    """

    widths: np.ndarray
    draws: np.ndarray
    errors: list
    mean_error: np.ndarray
    cross_time: np.ndarray
    slope: float


def kernel_convergence(
    x: torch.Tensor,
    widths: Sequence[int],
    draws: Sequence[int],
    *,
    generator: int = 0,
) -> KernelConvergence:
    """The empirical tangent kernel / m of ``draws[j]`` networks per width against the limit (chapter 5).

    ``x`` is (N, L, d) (chapter 5's inputs); network ``s`` of width m is
    ``ElmanRNN(d, m, generator=derive(seed, "kernel", m, s))`` in ``x``'s dtype.
    Relative error of one draw: ``||tangent_kernel(model, x) / m - K||_F / ||K||_F``
    with ``K = limit_tangent_kernel(x)``. More draws at small widths (cheap) and few
    at large ones keep the mean's noise about even. Returns a :class:`KernelConvergence`.
    """
    x = check_tensor(x, "x", ndim=3)
    widths = check_ints(widths, "widths", minimum=2)
    draws = check_ints(draws, "draws", minimum=1)
    if len(draws) != len(widths):
        raise ValueError(
            f"draws must have one entry per width ({len(widths)}), got {len(draws)}"
        )
    seed = as_seed(generator)
    K = limit_tangent_kernel(x)
    errors, cross = [], []
    for m, k in zip(widths, draws):
        e, c = [], []
        for s in range(k):
            model = ElmanRNN(
                x.shape[2],
                m,
                generator=derive(seed, "kernel", m, s),
                dtype=x.dtype,
            )
            Km = tangent_kernel(model, x).double() / m
            e.append(float((Km - K).norm() / K.norm()))
            c.append(float(cross_time_fraction(model, x).mean()))
        errors.append(np.array(e))
        cross.append(float(np.mean(c)))
    mean = np.array([e.mean() for e in errors])
    slope = float(np.polyfit(np.log(widths), np.log(mean), 1)[0])
    return KernelConvergence(
        np.array(widths),
        np.array(draws),
        errors,
        mean,
        np.array(cross),
        slope,
    )


def limit_kernel_reference(
    x: torch.Tensor,
    y: torch.Tensor,
    x_eval: torch.Tensor,
    *,
    ridge: float,
    offset: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Kernel ridge regression with the normalized limit kernel ``K / Kbar``; predictions on ``x`` and ``x_eval`` (chapter 5).

    ``alpha = (K/Kbar + ridge N I)^{-1} (y - f0)`` (:func:`rnnlib.train.kernel_ridge`),
    predictions ``f0 + (K(., x) / Kbar) alpha``, with ``K`` :func:`rnnlib.ntk.limit_tangent_kernel`
    and ``Kbar`` the mean of ``K(x_n, x_n)`` over ``x``: the limit m -> inf of
    :func:`rnnlib.train.kernel_reference` with the ridge ``out_scale^2 Kbar_m ridge``
    (module docstring). ``offset = (f0, f0_eval)`` is an initial output (N, 1) and
    (N_eval, 1) to fit around, e.g. a finite network's ``out_scale F_rnn(x; W_0, A_0)``;
    without it the initial output is 0 (the centred learner). ``x`` (N, L, d),
    ``y`` (N, 1), ``x_eval`` (N_eval, L, d); results float64.
    """
    x = check_tensor(x, "x", ndim=3)
    n = x.shape[0]
    y = check_tensor(y, "y", shape=(n, 1))
    x_eval = check_tensor(x_eval, "x_eval", ndim=3)
    ridge = check_real(ridge, "ridge", low=0.0, low_open=True)
    if offset is None:
        f0 = torch.zeros(n, 1, dtype=torch.float64)
        f0e = torch.zeros(x_eval.shape[0], 1, dtype=torch.float64)
    else:
        if not isinstance(offset, tuple) or len(offset) != 2:
            raise TypeError(
                f"offset must be a pair (f0, f0_eval) of tensors or None, got {type(offset).__name__}"
            )
        f0 = check_tensor(offset[0], "offset[0]", shape=(n, 1))
        f0e = check_tensor(
            offset[1], "offset[1]", shape=(x_eval.shape[0], 1)
        )
        f0, f0e = f0.double(), f0e.double()
    K = limit_tangent_kernel(x)
    kbar = float(K.diagonal().mean())
    Ke = limit_tangent_kernel(x_eval, x) / kbar
    alpha, _ = kernel_ridge(K / kbar, y.double() - f0, ridge)
    return f0 + (K / kbar) @ alpha, f0e + Ke @ alpha


@dataclass(frozen=True)
class LimitReference:
    """:func:`limit_reference_sweep` results (chapter 5); arrays (seeds,) or (seeds, widths).

    ``eval_centred``: held-out squared loss of the centred limit predictor
    (initial output 0); ``eval_offset``: of the limit predictor fitted around each
    network's own initial output; ``eval_finite``: of the finite-kernel reference
    :func:`rnnlib.train.kernel_reference` of that network; ``rms_gap``: the RMS
    difference of the last two predictions on the held-out inputs.
    """

    widths: np.ndarray
    seeds: np.ndarray
    eval_centred: np.ndarray
    eval_offset: np.ndarray
    eval_finite: np.ndarray
    rms_gap: np.ndarray


def limit_reference_sweep(
    widths: Sequence[int],
    seeds: Sequence[int],
    *,
    L: int,
    d: int,
    eps_x: float,
    n_train: int,
    n_eval: int,
    out_scale: float,
    steps: int,
    lr_scale: float = 0.3,
) -> LimitReference:
    """The limit-kernel predictor beside chapter 5's finite-kernel reference, per seed and width (chapter 5).

    The tasks and networks are :func:`rnnlib.train.lazy_grid`'s
    (:func:`rnnlib.train.regression_task` with generator ``seed``, network
    ``derive(seed, "weights", m)``) and so is the early-stopping ridge
    ``out_scale^2 Kbar_m / (lr_scale steps)`` of the finite reference, which is the
    ridge ``1 / (lr_scale steps)`` of :func:`limit_kernel_reference`. Returns a
    :class:`LimitReference`.
    """
    widths = check_ints(widths, "widths", minimum=2)
    seeds = check_ints(seeds, "seeds", minimum=0)
    out_scale = check_real(
        out_scale, "out_scale", low=0.0, low_open=True
    )
    steps = check_int(steps, "steps", minimum=1)
    lr_scale = check_real(
        lr_scale, "lr_scale", low=0.0, low_open=True
    )
    ridge = 1.0 / (lr_scale * steps)
    shape = (len(seeds), len(widths))
    centred = np.zeros(len(seeds))
    offset, finite, gap = (np.zeros(shape) for _ in range(3))
    for i, seed in enumerate(seeds):
        x, y, xe, ye = regression_task(
            L, d, eps_x, n_train, n_eval, generator=seed
        )
        yd = ye.double()
        _, ze = limit_kernel_reference(x, y, xe, ridge=ridge)
        centred[i] = float(objective(ze, yd, "squared").mean())
        for j, m in enumerate(widths):
            model = ElmanRNN(
                d, m, generator=derive(seed, "weights", m)
            )
            kbar = float(tangent_kernel_diag(model, x).mean())
            _, fe, _ = kernel_reference(
                model,
                x,
                y,
                xe,
                out_scale=out_scale,
                ridge=out_scale**2 * kbar * ridge,
            )
            f0 = (
                predict(model, x, out_scale),
                predict(model, xe, out_scale),
            )
            _, le = limit_kernel_reference(
                x, y, xe, ridge=ridge, offset=f0
            )
            offset[i, j] = float(
                objective(le, yd, "squared").mean()
            )
            finite[i, j] = float(
                objective(fe.double(), yd, "squared").mean()
            )
            gap[i, j] = float(
                (fe.double() - le).square().mean().sqrt()
            )
    return LimitReference(
        np.array(widths),
        np.array(seeds),
        centred,
        offset,
        finite,
        gap,
    )
