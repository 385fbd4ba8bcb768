"""Chapter 5's sweeps: laziness against width and output scale, and the tangent kernel at infinite width.

* :func:`regression_task`: the chapter's regression task (a random concept-class
  target, standardized labels), and :func:`lazy_grid`: the RNN and its
  linearization trained by the same SGD (:func:`rnnlib.train.train_pair`) for every
  seed, output scale and width, beside the kernel ridge reference
  (:func:`rnnlib.ntk.kernel_reference`); its record is a :class:`LazyGrid`.
* :func:`kernel_convergence`: the finite-width kernel ``tangent_kernel(model_m, x) / m``
  of independent networks against its limit :func:`rnnlib.ntk.limit_tangent_kernel`,
  as the width m grows: the relative (Frobenius) error of one draw, averaged over
  draws, should fall like ``m^(-1/2)`` (a sum over m neurons fluctuates like
  ``sqrt(m)`` around its mean ``m K``); beside it the share of the cross-time terms
  (:func:`rnnlib.ntk.cross_time_fraction`), which the limit drops.
* :func:`limit_kernel_reference`: chapter 5's kernel reference
  (:func:`rnnlib.ntk.kernel_reference`) at infinite width. That reference is
  kernel ridge regression with the kernel ``out_scale^2 K_m`` and the ridge
  ``out_scale^2 Kbar_m r`` (``Kbar_m`` the mean of ``K_m(x_n, x_n)``), i.e. with
  the normalized kernel ``K_m / Kbar_m`` and the ridge ``r``; its limit is the
  same regression with ``K / Kbar``, free of the width and of ``out_scale``.
* :func:`limit_convergence`: the trained RNN itself against the infinite-width
  learner, prediction by prediction: networks of the doubled initialization
  (``ElmanRNN(..., doubled=True)``, zero initial output) trained by chapter 5's SGD,
  beside :func:`rnnlib.ntk.kernel_sgd` with the normalized limit kernel on the same
  samples in the same order, its exact m -> inf limit; the paper's i.i.d.
  initialization (``doubled=False``) for comparison.
* The record (``make record CH=05``, :data:`RECORD`): :func:`rnn_sweep` and both
  initializations of :func:`limit_convergence` over ten seeds, from which the
  chapter reads the trends in m (:func:`run_lazy_record`, :func:`lazy_fingerprint`,
  :func:`make_lazy_record`, :func:`check_lazy_record`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from .. import records
from .._progress import progress_bar
from .._rng import as_seed, derive
from .._validation import (
    POSITIVE,
    Bool,
    Choice,
    Instance,
    Int,
    Ints,
    PathLike,
    Relation,
    Seq,
    Str,
    Tensor,
    check_ints,
    check_tensor,
    validate_params,
)
from ..concepts import sample_task
from ..elman import ElmanRNN, elman_last_state
from ..ntk import (
    cross_time_fraction,
    kernel_reference,
    kernel_ridge,
    kernel_sgd,
    limit_tangent_kernel,
    tangent_kernel,
    tangent_kernel_diag,
)
from ..train import (
    DivergenceError,
    objective,
    predict,
    sgd_order,
    train_pair,
    train_rnn,
)

__all__ = [
    "RegressionTask",
    "regression_task",
    "LazyGrid",
    "lazy_grid",
    "RnnSweep",
    "rnn_sweep",
    "KernelConvergence",
    "kernel_convergence",
    "LimitKernelReference",
    "limit_kernel_reference",
    "LimitReference",
    "limit_reference_sweep",
    "LimitConvergence",
    "limit_convergence",
    "AgainstLimit",
    "against_limit",
    "CHAPTER",
    "RECORD",
    "SMOKE",
    "run_lazy_record",
    "lazy_fingerprint",
    "make_lazy_record",
    "check_lazy_record",
    "recorded_sweep",
    "recorded_limit",
]


class RegressionTask(NamedTuple):
    """:func:`regression_task` results: training and evaluation inputs and labels."""

    #: training inputs (n_train, L, d)
    x: torch.Tensor
    #: training labels (n_train, 1)
    y: torch.Tensor
    #: evaluation inputs (n_eval, L, d)
    x_eval: torch.Tensor
    #: evaluation labels (n_eval, 1)
    y_eval: torch.Tensor


@validate_params(
    "L", "d", "eps_x", "n_eval", "dtype", "generator", n_train=Int(2), p=Int(1)
)
def regression_task(
    L: int,
    d: int,
    eps_x: float,
    n_train: int,
    n_eval: int,
    *,
    p: int = 4,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> RegressionTask:
    """A regression task of chapter 5: ``y = F*(x_bar)``, standardized, for a random concept-class target.

    ``F*`` is :func:`rnnlib.concepts.sample_target` (``p`` neurons); the labels are
    centred and scaled to unit variance over train and eval together; the inputs are
    the normalized sequences of Definition 3.1. Returns ``(x, y, x_eval, y_eval)``.
    """
    x, y = sample_task(
        L,
        d,
        eps_x,
        n_train + n_eval,
        p=p,
        generator=generator,
        dtype=dtype,
    )
    y = (y - y.mean()) / y.std()
    return RegressionTask(x[:n_train], y[:n_train], x[n_train:], y[n_train:])


@dataclass
class LazyGrid:
    """:func:`lazy_grid` results (chapter 5). Arrays have shape (seeds, out_scales, widths).

    ``rel_move``: ``||W_T - W_0||_F / ||W_0||_F``; ``spec_move``: ``sqrt(m) ||W_T - W_0||_2``;
    ``flip_fraction``, ``coupling_relative``: the RNN's final history entries (activation
    flips, and the gap to its own pseudo-network at its final weights, relative);
    ``pair_relative``: ``mean |z_rnn - z_pseudo| / mean |z_pseudo - z_0|`` between the RNN and
    its linearization trained on the same samples (held-out inputs); ``train_*``, ``eval_*``:
    final losses of the RNN, of the linearized RNN and of the kernel ridge reference;
    ``init_eval``: the held-out loss at initialization; ``lr``: the learning rates used;
    ``star_norm``: ``||theta*||`` of the kernel ridge solution ``theta*`` (:func:`rnnlib.ntk.kernel_reference`);
    ``train_star_rnn``: the RNN's training loss at ``theta*`` (the comparator's loss in the
    regret bound); ``convexity_mean``, ``convexity_max``: the approximate-convexity gap
    ``delta_t`` towards ``theta*`` along the RNN's iterates (:class:`rnnlib.train.PairResult`), its mean over
    the training set and the logged steps, and its largest value;
    ``diverged``: runs stopped by :class:`DivergenceError` (their entries are NaN).
    ``pairs[s][k][j]``: the :class:`rnnlib.train.PairResult` of each run (None if it diverged).
    """

    widths: np.ndarray
    out_scales: np.ndarray
    seeds: np.ndarray
    rel_move: np.ndarray
    spec_move: np.ndarray
    flip_fraction: np.ndarray
    coupling_relative: np.ndarray
    pair_relative: np.ndarray
    train_rnn: np.ndarray
    train_pseudo: np.ndarray
    train_kernel: np.ndarray
    eval_rnn: np.ndarray
    eval_pseudo: np.ndarray
    eval_kernel: np.ndarray
    init_eval: np.ndarray
    lr: np.ndarray
    star_norm: np.ndarray
    train_star_rnn: np.ndarray
    convexity_mean: np.ndarray
    convexity_max: np.ndarray
    diverged: np.ndarray
    pairs: list = field(default_factory=list, repr=False)


class RnnSweep(NamedTuple):
    """:func:`rnn_sweep`: the RNN-only measurements of :func:`lazy_grid`, each (seeds, widths) (chapter 5).

    ``coupling_relative``, ``flip_fraction``, ``convexity_mean``, ``rel_move``,
    ``spec_move``: the entries of the same names in :class:`LazyGrid` (at one output
    scale), equal to them on the same seeds.
    """

    coupling_relative: np.ndarray
    flip_fraction: np.ndarray
    convexity_mean: np.ndarray
    rel_move: np.ndarray
    spec_move: np.ndarray


@validate_params(
    "L",
    "d",
    "eps_x",
    "n_eval",
    "steps",
    "lr_scale",
    "dtype",
    "out_scale",
    "log_every",
    n_train=Int(2),
    widths=Ints(1),
    seeds=Ints(0),
)
def rnn_sweep(
    widths,
    seeds,
    *,
    out_scale: float,
    L: int,
    d: int,
    eps_x: float,
    n_train: int,
    n_eval: int,
    steps: int,
    lr_scale: float = 0.3,
    log_every: int | None = None,
    dtype: torch.dtype = torch.float32,
) -> RnnSweep:
    """What :func:`lazy_grid` measures on the RNN's own run, at half its cost: for the trends' extra seeds (chapter 5).

    The coupling gap, the flip fraction, the weight movement and the
    approximate-convexity gap ``delta_t`` towards the kernel ridge solution
    ``theta*`` need only the RNN's run
    (:func:`rnnlib.train.train_rnn` with ``comparator=theta*``): the same task,
    network, learning rate, sample order and comparator as :func:`lazy_grid` (so the
    same numbers), without the separately trained linearization. ``dtype``: of the
    task and the networks (float64 for chapter 5's record fingerprint). Returns a
    :class:`RnnSweep`.
    """
    lam = out_scale
    out = [np.full((len(seeds), len(widths)), np.nan) for _ in RnnSweep._fields]
    for i, seed in enumerate(seeds):
        x, y, xe, ye = regression_task(
            L,
            d,
            eps_x,
            n_train,
            n_eval,
            generator=seed,
            dtype=dtype,
        )
        for j, m in enumerate(widths):
            model = ElmanRNN(
                d,
                m,
                generator=derive(seed, "weights", m),
                dtype=dtype,
            )
            kbar = float(tangent_kernel_diag(model, x).mean())
            *_, star = kernel_reference(
                model,
                x,
                y,
                xe,
                out_scale=lam,
                ridge=lam**2 * kbar / (lr_scale * steps),
                return_weights=True,
            )
            h = train_rnn(
                model,
                x,
                y,
                out_scale=lam,
                lr=lr_scale / (lam**2 * kbar),
                steps=steps,
                generator=derive(seed, "order", m),
                x_eval=xe,
                y_eval=ye,
                log_every=log_every,
                comparator=star,
            ).history
            out[0][i, j] = h.coupling_relative[-1]
            out[1][i, j] = h.flip_fraction[-1]
            out[2][i, j] = float(h.convexity_mean.mean())
            out[3][i, j] = h.dist_W_fro[-1] / h.W0_fro
            out[4][i, j] = math.sqrt(m) * h.dist_W_spec[-1]
    return RnnSweep(*out)


@validate_params(
    "L",
    "d",
    "eps_x",
    "n_train",
    "n_eval",
    "steps",
    "lr_scale",
    "log_every",
    "progress",
    widths=Ints(1),
    out_scales=Seq(POSITIVE, "positive reals"),
    seeds=Ints(0),
)
def lazy_grid(
    widths,
    out_scales,
    seeds,
    *,
    L: int,
    d: int,
    eps_x: float,
    n_train: int,
    n_eval: int,
    steps: int,
    lr_scale: float = 0.3,
    log_every: int | None = None,
    progress: bool = False,
) -> LazyGrid:
    """Train the RNN and its linearization (:func:`rnnlib.train.train_pair`) for every seed, output scale and width (chapter 5).

    Per seed, one regression task (:func:`regression_task`, streams derived from the
    seed); per (seed, width) one network (``derive(seed, "weights", m)``). The
    learning rate is ``lr = lr_scale / (out_scale^2 mean_n K(x_n, x_n))`` with ``K`` the
    tangent kernel at initialization: the step in *function space* is then the same
    for every width and output scale (P&G's ``eta`` is also ``~ 1/m``, since
    ``K ~ m``). The kernel reference is :func:`rnnlib.ntk.kernel_reference` with the
    early-stopping ridge ``mean(out_scale^2 K(x_n, x_n)) / (lr_scale * steps)`` (our
    heuristic: ``steps`` SGD steps filter the kernel's eigenvalues like this ridge).
    Returns a :class:`LazyGrid`.
    """
    shape = (len(seeds), len(out_scales), len(widths))
    names = (
        "rel_move",
        "spec_move",
        "flip_fraction",
        "coupling_relative",
        "pair_relative",
        "train_rnn",
        "train_pseudo",
        "train_kernel",
        "eval_rnn",
        "eval_pseudo",
        "eval_kernel",
        "init_eval",
        "lr",
        "star_norm",
        "train_star_rnn",
        "convexity_mean",
        "convexity_max",
    )
    out = {k: np.full(shape, np.nan) for k in names}
    diverged = np.zeros(shape, dtype=bool)
    pairs = [[[None] * len(widths) for _ in out_scales] for _ in seeds]
    cells = [
        (i, k, j)
        for i in range(len(seeds))
        for k in range(len(out_scales))
        for j in range(len(widths))
    ]
    for i, k, j in progress_bar(cells, enabled=progress, desc="runs"):
        seed, lam, m = seeds[i], out_scales[k], widths[j]
        x, y, xe, ye = regression_task(L, d, eps_x, n_train, n_eval, generator=seed)
        model = ElmanRNN(d, m, generator=derive(seed, "weights", m))
        kbar = float(tangent_kernel_diag(model, x).mean())
        lr = lr_scale / (lam**2 * kbar)
        out["lr"][i, k, j] = lr
        out["init_eval"][i, k, j] = float(
            objective(predict(model, xe, lam), ye, "squared").mean()
        )
        ridge = lam**2 * kbar / (lr_scale * steps)
        ftr, fev, star_norm, star = kernel_reference(
            model,
            x,
            y,
            xe,
            out_scale=lam,
            ridge=ridge,
            return_weights=True,
        )
        try:
            pair = train_pair(
                model,
                x,
                y,
                out_scale=lam,
                lr=lr,
                steps=steps,
                generator=derive(seed, "order", m),
                x_eval=xe,
                y_eval=ye,
                log_every=log_every,
                comparator=star,
            )
        except DivergenceError:
            diverged[i, k, j] = True
            continue
        pairs[i][k][j] = pair
        h, hp = pair.rnn.history, pair.pseudo.history
        with torch.no_grad():
            z_star = lam * (
                elman_last_state(model.W + star[0], model.A + star[1], x)
                @ model.B.transpose(0, 1)
            )
        vals = dict(
            rel_move=h.dist_W_fro[-1] / h.W0_fro,
            spec_move=math.sqrt(m) * h.dist_W_spec[-1],
            flip_fraction=h.flip_fraction[-1],
            coupling_relative=h.coupling_relative[-1],
            pair_relative=pair.relative_gap[-1],
            train_rnn=h.train_loss[-1],
            train_pseudo=hp.train_loss[-1],
            train_kernel=float(objective(ftr, y, "squared").mean()),
            eval_rnn=h.eval_loss[-1],
            eval_pseudo=hp.eval_loss[-1],
            eval_kernel=float(objective(fev, ye, "squared").mean()),
            star_norm=star_norm,
            train_star_rnn=float(objective(z_star, y, "squared").mean()),
            convexity_mean=float(pair.convexity_mean.mean()),
            convexity_max=float(pair.convexity_max.max()),
        )
        for key, v in vals.items():
            out[key][i, k, j] = v
    return LazyGrid(
        np.asarray(widths),
        np.asarray(out_scales, dtype=float),
        np.asarray(seeds),
        **out,
        diverged=diverged,
        pairs=pairs,
    )


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


@validate_params(
    Relation("len(draws) == len(widths)", "one number of draws per width"),
    "generator",
    x=Tensor(ndim=3),
    widths=Ints(2),
    draws=Ints(1),
)
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


class LimitKernelReference(NamedTuple):
    """:func:`limit_kernel_reference` results: the predictions on ``x`` and ``x_eval``."""

    #: predictions on ``x`` (N, 1), float64
    f: torch.Tensor
    #: predictions on ``x_eval`` (N_eval, 1), float64
    f_eval: torch.Tensor


@validate_params("ridge", x=Tensor(ndim=3), x_eval=Tensor(ndim=3))
def limit_kernel_reference(
    x: torch.Tensor,
    y: torch.Tensor,
    x_eval: torch.Tensor,
    *,
    ridge: float,
    offset: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> LimitKernelReference:
    """Kernel ridge regression with the normalized limit kernel ``K / Kbar``; predictions on ``x`` and ``x_eval`` (chapter 5).

    ``alpha = (K/Kbar + ridge N I)^{-1} (y - f0)`` (:func:`rnnlib.ntk.kernel_ridge`),
    predictions ``f0 + (K(., x) / Kbar) alpha``, with ``K`` :func:`rnnlib.ntk.limit_tangent_kernel`
    and ``Kbar`` the mean of ``K(x_n, x_n)`` over ``x``: the limit m -> inf of
    :func:`rnnlib.ntk.kernel_reference` with the ridge ``out_scale^2 Kbar_m ridge``
    (module docstring). ``offset = (f0, f0_eval)`` is an initial output (N, 1) and
    (N_eval, 1) to fit around, e.g. a finite network's ``out_scale F_rnn(x; W_0, A_0)``;
    without it the initial output is 0 (the centred learner). ``x`` (N, L, d),
    ``y`` (N, 1), ``x_eval`` (N_eval, L, d); results float64.
    """
    n = x.shape[0]
    y = check_tensor(y, "y", shape=(n, 1))
    if offset is None:
        f0 = torch.zeros(n, 1, dtype=torch.float64)
        f0e = torch.zeros(x_eval.shape[0], 1, dtype=torch.float64)
    else:
        if not isinstance(offset, tuple) or len(offset) != 2:
            raise TypeError(
                f"offset must be a pair (f0, f0_eval) of tensors or None, got {type(offset).__name__}"
            )
        f0 = check_tensor(offset[0], "offset[0]", shape=(n, 1))
        f0e = check_tensor(offset[1], "offset[1]", shape=(x_eval.shape[0], 1))
        f0, f0e = f0.double(), f0e.double()
    K = limit_tangent_kernel(x)
    kbar = float(K.diagonal().mean())
    Ke = limit_tangent_kernel(x_eval, x) / kbar
    alpha, _ = kernel_ridge(K / kbar, y.double() - f0, ridge)
    return LimitKernelReference(f0 + (K / kbar) @ alpha, f0e + Ke @ alpha)


@dataclass(frozen=True)
class LimitReference:
    """:func:`limit_reference_sweep` results (chapter 5); arrays (seeds,) or (seeds, widths).

    ``eval_centred``: held-out squared loss of the centred limit predictor
    (initial output 0); ``eval_offset``: of the limit predictor fitted around each
    network's own initial output; ``eval_finite``: of the finite-kernel reference
    :func:`rnnlib.ntk.kernel_reference` of that network; ``rms_gap``: the RMS
    difference of the last two predictions on the held-out inputs.
    """

    widths: np.ndarray
    seeds: np.ndarray
    eval_centred: np.ndarray
    eval_offset: np.ndarray
    eval_finite: np.ndarray
    rms_gap: np.ndarray


@validate_params(
    "out_scale",
    "steps",
    "lr_scale",
    "L",
    "d",
    "eps_x",
    "n_train",
    "n_eval",
    widths=Ints(2),
    seeds=Ints(0),
)
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

    The tasks and networks are :func:`lazy_grid`'s
    (:func:`regression_task` with generator ``seed``, network
    ``derive(seed, "weights", m)``) and so is the early-stopping ridge
    ``out_scale^2 Kbar_m / (lr_scale steps)`` of the finite reference, which is the
    ridge ``1 / (lr_scale steps)`` of :func:`limit_kernel_reference`. Returns a
    :class:`LimitReference`.
    """
    ridge = 1.0 / (lr_scale * steps)
    shape = (len(seeds), len(widths))
    centred = np.zeros(len(seeds))
    offset, finite, gap = (np.zeros(shape) for _ in range(3))
    for i, seed in enumerate(seeds):
        x, y, xe, ye = regression_task(L, d, eps_x, n_train, n_eval, generator=seed)
        yd = ye.double()
        _, ze = limit_kernel_reference(x, y, xe, ridge=ridge)
        centred[i] = float(objective(ze, yd, "squared").mean())
        for j, m in enumerate(widths):
            model = ElmanRNN(d, m, generator=derive(seed, "weights", m))
            kbar = float(tangent_kernel_diag(model, x).mean())
            fe = kernel_reference(
                model,
                x,
                y,
                xe,
                out_scale=out_scale,
                ridge=out_scale**2 * kbar * ridge,
            ).f_eval
            f0 = (
                predict(model, x, out_scale),
                predict(model, xe, out_scale),
            )
            _, le = limit_kernel_reference(x, y, xe, ridge=ridge, offset=f0)
            offset[i, j] = float(objective(le, yd, "squared").mean())
            finite[i, j] = float(objective(fe.double(), yd, "squared").mean())
            gap[i, j] = float((fe.double() - le).square().mean().sqrt())
    return LimitReference(
        np.array(widths),
        np.array(seeds),
        centred,
        offset,
        finite,
        gap,
    )


class AgainstLimit(NamedTuple):
    """:func:`against_limit`: trained RNNs of several widths beside the limit learner, on one task (chapter 5).

    ``distance``, ``initial``, ``eval_loss`` (widths,): as in
    :class:`LimitConvergence`; ``limit_eval_loss``: the limit learner's held-out
    squared loss; ``predictions`` (widths, n_eval) and ``limit_predictions``
    (n_eval,): the held-out predictions themselves (float64).
    """

    distance: np.ndarray
    initial: np.ndarray
    eval_loss: np.ndarray
    limit_eval_loss: float
    predictions: np.ndarray
    limit_predictions: np.ndarray


def _against_limit(
    task: RegressionTask,
    widths: Sequence[int],
    generator: int,
    *,
    out_scale: float,
    steps: int,
    lr_scale: float,
    doubled: bool,
    dtype: torch.dtype,
) -> AgainstLimit:
    x, y, xe, ye = task
    d = x.shape[-1]
    n_train = x.shape[0]
    order = sgd_order(n_train, steps, 1, derive(generator, "order"))
    xd = x.double()
    K = limit_tangent_kernel(xd)
    kbar = float(K.diagonal().mean())
    f_inf = kernel_sgd(
        K / kbar,
        y,
        order,
        lr=lr_scale,
        K_eval=limit_tangent_kernel(xe.double(), xd) / kbar,
    ).f_eval
    scale = float(f_inf.square().mean().sqrt())
    limit_loss = float(objective(f_inf, ye.double(), "squared").mean())
    distance, initial, loss = (np.zeros(len(widths)) for _ in range(3))
    preds = np.zeros((len(widths), xe.shape[0]))
    for j, m in enumerate(widths):
        model = ElmanRNN(
            d,
            m,
            generator=derive(generator, "weights", m),
            doubled=doubled,
            dtype=dtype,
        )
        kbar_m = float(tangent_kernel_diag(model, x).mean())
        run = train_rnn(
            model,
            x,
            y,
            out_scale=out_scale,
            lr=lr_scale / (out_scale**2 * kbar_m),
            steps=steps,
            generator=derive(generator, "order"),
            log_every=steps,
        )
        f_m = run.predict(xe).double()
        f_0 = predict(model, xe, out_scale).double()
        distance[j] = float((f_m - f_inf).square().mean().sqrt()) / scale
        initial[j] = float(f_0.square().mean().sqrt()) / scale
        loss[j] = float(objective(f_m, ye.double(), "squared").mean())
        preds[j] = f_m[:, 0].numpy()
    return AgainstLimit(
        distance,
        initial,
        loss,
        limit_loss,
        preds,
        f_inf[:, 0].numpy(),
    )


@validate_params(
    "out_scale",
    "steps",
    "lr_scale",
    doubled=Bool(),
    widths=Ints(2),
    generator=Int(0),  # an int seed: each width's run derives its own,
    task=Instance(RegressionTask),
)
def against_limit(
    task: RegressionTask,
    widths: Sequence[int],
    generator: int,
    *,
    out_scale: float,
    steps: int,
    lr_scale: float = 0.3,
    doubled: bool = True,
) -> AgainstLimit:
    """Trained RNNs of each width in ``widths`` against the limit-kernel learner on one given task (chapters 5 and 7).

    :func:`limit_convergence`'s comparison for one seed, on any task ``(x, y,
    x_eval, y_eval)`` (a :class:`RegressionTask`; labels (n, 1)): the sample order
    ``sgd_order(n, steps, 1, derive(generator, "order"))``, the networks
    ``ElmanRNN(d, m, generator=derive(generator, "weights", m), doubled=doubled)``
    trained by :func:`rnnlib.train.train_rnn` with chapter 5's lazy step, and
    :func:`rnnlib.ntk.kernel_sgd` with the normalized limit kernel on the same order
    from a zero output. Returns an :class:`AgainstLimit`.
    """
    if not isinstance(task, tuple) or len(task) != 4:
        raise TypeError(
            "task must be a RegressionTask (x, y, x_eval, y_eval), got "
            f"{type(task).__name__}"
        )
    x, y, xe, ye = (
        check_tensor(t, name, ndim=n)
        for t, name, n in (
            (task[0], "task.x", 3),
            (task[1], "task.y", 2),
            (task[2], "task.x_eval", 3),
            (task[3], "task.y_eval", 2),
        )
    )
    if y.shape[0] != x.shape[0] or ye.shape[0] != xe.shape[0]:
        raise ValueError(
            "task.y and task.y_eval must have as many rows as sequences in"
            f" task.x and task.x_eval, got {tuple(y.shape)} for"
            f" {tuple(x.shape)} and {tuple(ye.shape)} for {tuple(xe.shape)}"
        )
    if doubled and any(m % 2 for m in widths):
        raise ValueError(f"widths must be even with doubled=True, got {list(widths)}")
    return _against_limit(
        RegressionTask(x, y, xe, ye),
        widths,
        generator,
        out_scale=out_scale,
        steps=steps,
        lr_scale=lr_scale,
        doubled=doubled,
        dtype=x.dtype,
    )


@dataclass(frozen=True)
class LimitConvergence:
    """:func:`limit_convergence` results (chapter 5); arrays (seeds, widths) unless noted.

    ``distance``: the relative RMS difference ``||f_m - f_inf|| / ||f_inf||`` of the
    trained network's and the limit learner's predictions on the held-out inputs;
    ``initial``: the same norm ratio for the network's initial output,
    ``||out_scale F_rnn(x; W_0, A_0)|| / ||f_inf||`` (0 up to rounding when doubled);
    ``eval_loss``: the network's held-out squared loss; ``limit_eval_loss`` (seeds,):
    the limit learner's.
    """

    widths: np.ndarray
    seeds: np.ndarray
    doubled: bool
    distance: np.ndarray
    initial: np.ndarray
    eval_loss: np.ndarray
    limit_eval_loss: np.ndarray


@validate_params(
    "L",
    "d",
    "eps_x",
    "n_eval",
    "out_scale",
    "steps",
    "lr_scale",
    "progress",
    "dtype",
    n_train=Int(2),
    doubled=Bool(),
    widths=Ints(2),
    seeds=Ints(0),
)
def limit_convergence(
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
    doubled: bool = True,
    progress: bool = False,
    dtype: torch.dtype = torch.float32,
) -> LimitConvergence:
    """Trained RNNs of growing width against the limit-kernel learner, prediction by prediction (chapter 5).

    Seed ``s``: the task :func:`regression_task` with generator ``s`` (float32, as
    :func:`lazy_grid`), one sample order ``sgd_order(n_train, steps, 1,
    derive(s, "order"))`` shared by every width and by the limit, the network
    ``ElmanRNN(d, m, generator=derive(s, "weights", m), doubled=doubled)`` trained by
    :func:`rnnlib.train.train_rnn` with ``lr = lr_scale / (out_scale^2 Kbar_m)``, and
    the limit learner :func:`rnnlib.ntk.kernel_sgd` with ``K / Kbar``
    (:func:`rnnlib.ntk.limit_tangent_kernel`, float64), ``lr = lr_scale`` and a zero
    initial output. With ``doubled=True`` the network's initial output is zero, and the
    limit learner is the network's limit as m -> inf (the kernel ``K_m / Kbar_m``
    converges, and the RNN approaches its linearization); with the i.i.d.
    initialization it starts from a random function of order ``out_scale`` that
    training does not remove. ``dtype``: of the task and the networks (float64 for
    chapter 5's record fingerprint). Returns a :class:`LimitConvergence`.
    """
    if doubled and any(m % 2 for m in widths):
        raise ValueError(f"widths must be even with doubled=True, got {list(widths)}")
    shape = (len(seeds), len(widths))
    distance, initial, loss = (np.zeros(shape) for _ in range(3))
    limit_loss = np.zeros(len(seeds))
    for i, seed in enumerate(
        progress_bar(seeds, enabled=progress, desc="RNN against its limit")
    ):
        task = regression_task(
            L,
            d,
            eps_x,
            n_train,
            n_eval,
            generator=seed,
            dtype=dtype,
        )
        r = _against_limit(
            task,
            widths,
            seed,
            out_scale=out_scale,
            steps=steps,
            lr_scale=lr_scale,
            doubled=doubled,
            dtype=dtype,
        )
        distance[i], initial[i], loss[i] = (
            r.distance,
            r.initial,
            r.eval_loss,
        )
        limit_loss[i] = r.limit_eval_loss
    return LimitConvergence(
        np.array(widths),
        np.array(seeds),
        doubled,
        distance,
        initial,
        loss,
        limit_loss,
    )


# ---------------------------------------------------------------------------
# The recorded runs of chapter 5 (make record CH=05)

CHAPTER = 5
#: The recorded runs: the chapter's settings, ten seeds for the trends in m.
RECORD: dict = {
    "widths": [128, 256, 512, 1024],
    "seeds": list(range(10)),
    "out_scale": 0.5,
    "L": 6,
    "d": 6,
    "eps_x": 0.5,
    "n_train": 128,
    "n_eval": 128,
    "steps": 300,
    "lr_scale": 0.3,
    "log_every": 150,
    "limit_widths": [128, 256, 512],
    "limit_seeds": list(range(10)),
}
#: The record at a size that takes seconds (CI runs it; never written over the record).
SMOKE: dict = {
    **RECORD,
    "widths": [8, 16],
    "seeds": [0, 1],
    "n_train": 12,
    "n_eval": 12,
    "steps": 20,
    "log_every": 10,
    "limit_widths": [8, 16],
    "limit_seeds": [0, 1],
}
# the short float64 run whose outputs fingerprint the code path
_FP = {
    "widths": [8, 16],
    "seeds": [0, 1],
    "n_train": 12,
    "n_eval": 12,
    "steps": 20,
    "log_every": 10,
}
_LIMIT_FIELDS = ("distance", "initial", "eval_loss")


def _check_lazy_config(config: object) -> dict:
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a mapping like RECORD, got {type(config).__name__}"
        )
    missing = sorted(set(RECORD) - set(config))
    if missing:
        raise ValueError(f"config must have the keys of RECORD; missing {missing}")
    for key in ("widths", "seeds", "limit_widths", "limit_seeds"):
        check_ints(config[key], f"config[{key!r}]", minimum=0)
    return dict(config)


def _sweep_kw(cfg: Mapping) -> dict:
    return {
        k: cfg[k]
        for k in (
            "out_scale",
            "L",
            "d",
            "eps_x",
            "n_train",
            "n_eval",
            "steps",
            "lr_scale",
        )
    }


def _record_runs(
    cfg: Mapping,
    *,
    dtype: torch.dtype = torch.float32,
    progress: bool = False,
) -> dict:
    kw = _sweep_kw(cfg)
    tasks = [("sweep", s) for s in cfg["seeds"]] + [
        (init, s) for init in ("doubled", "iid") for s in cfg["limit_seeds"]
    ]
    sweep: dict = {k: [] for k in RnnSweep._fields}
    limit: dict = {
        init: {k: [] for k in (*_LIMIT_FIELDS, "limit_eval_loss")}
        for init in ("doubled", "iid")
    }
    for kind, seed in progress_bar(tasks, enabled=progress, desc="record runs"):
        if kind == "sweep":
            r = rnn_sweep(
                cfg["widths"],
                [seed],
                log_every=cfg["log_every"],
                dtype=dtype,
                **kw,
            )
            for k in RnnSweep._fields:
                sweep[k].append([float(v) for v in getattr(r, k)[0]])
        else:
            c = limit_convergence(
                cfg["limit_widths"],
                [seed],
                doubled=kind == "doubled",
                dtype=dtype,
                **kw,
            )
            for k in _LIMIT_FIELDS:
                limit[kind][k].append([float(v) for v in getattr(c, k)[0]])
            limit[kind]["limit_eval_loss"].append(float(c.limit_eval_loss[0]))
    return {"sweep": sweep, "limit": limit}


@validate_params("progress", config=Instance(Mapping))
def run_lazy_record(config: Mapping | None = None, *, progress: bool = False) -> dict:
    """The recorded runs of chapter 5 (``make record CH=05``): the laziness sweep and the RNN against its limit.

    For each seed of ``config["seeds"]`` (:data:`RECORD` by default),
    :func:`rnn_sweep` at ``widths``: under ``"sweep"``, ``{field: [[value per
    width] per seed]}`` for the fields of :class:`RnnSweep`. For each seed of
    ``limit_seeds``, :func:`limit_convergence` at ``limit_widths`` from both
    initializations: under ``"limit"``, ``{"doubled" | "iid": {field: [[value per
    width] per seed]}}`` for ``distance``, ``initial`` and ``eval_loss``, and
    ``limit_eval_loss`` (one value per seed). Each seed is its own task and
    networks with the chapter's streams, so the chapter's live runs at its own
    seeds are rows of the record, which it checks.
    """
    cfg = _check_lazy_config(RECORD if config is None else config)
    return _record_runs(cfg, progress=progress)


@validate_params(config=Instance(Mapping))
def lazy_fingerprint(config: Mapping | None = None) -> dict:
    """A short deterministic CPU run of the record's code path, in float64 (chapter 5).

    :func:`rnn_sweep` and :func:`limit_convergence` (both initializations) at two
    seeds, widths 8 and 16, 12 sequences and 20 steps, with ``config``'s other
    settings; returns their numbers and ``config`` itself. Any change to the
    training code, its constants or the config changes it
    (:func:`check_lazy_record`). Takes a second.
    """
    cfg = _check_lazy_config(RECORD if config is None else config)
    small = {
        **cfg,
        **_FP,
        "limit_widths": _FP["widths"],
        "limit_seeds": _FP["seeds"],
    }
    return {
        "config": copy.deepcopy(cfg),
        **_record_runs(small, dtype=torch.float64),
    }


@validate_params("progress", smoke=Bool(), path=PathLike(), command=Str(), jobs=Int(1))
def make_lazy_record(
    path: str | Path | None = None,
    *,
    smoke: bool = False,
    progress: bool = False,
    command: str | None = None,
    jobs: int = 1,
) -> Path:
    """Run the record (:data:`RECORD`, or :data:`SMOKE` with ``smoke``) and write it (``rnnlib.records.build_record``).

    ``path`` defaults to ``chapters/records/ch05.json`` for the full record; a smoke
    record must be given a path (it never overwrites the committed one). ``jobs``
    is accepted for ``make record`` and ignored (one process, about 3 CPU-minutes).
    Returns the path written.
    """
    return records.build_record(
        CHAPTER,
        path,
        config=SMOKE if smoke else RECORD,
        run=lambda cfg: run_lazy_record(cfg, progress=progress),
        fingerprint=lazy_fingerprint,
        smoke=smoke,
        command=command,
    )


@validate_params(record=Instance(Mapping))
def check_lazy_record(record: Mapping) -> float:
    """Re-run :func:`lazy_fingerprint` at the record's config and compare (``rnnlib.records.check_live_fingerprint``).

    Raises :class:`rnnlib.records.StaleRecordError` ("the recorded runs of chapter 5
    are stale: run `make record CH=05`") if the code path gives other numbers than
    when the record was made, or if the config was edited after it. Returns the
    largest relative difference.
    """
    return records.check_live_fingerprint(record, CHAPTER, lazy_fingerprint)


def _record_results(record: object, part: str) -> dict:
    if (
        not isinstance(record, Mapping)
        or "config" not in record
        or part not in record.get("results", {})
    ):
        raise ValueError(
            f"record must be chapter 5's record (rnnlib.records.read_record) with results[{part!r}]"
        )
    return record["results"][part]


@validate_params(record=Instance(Mapping))
def recorded_sweep(record: Mapping) -> RnnSweep:
    """The record's laziness sweep as an :class:`RnnSweep` (arrays (seeds, widths) of ``record["config"]``), chapter 5."""
    sweep = _record_results(record, "sweep")
    return RnnSweep(*(np.asarray(sweep[k], dtype=float) for k in RnnSweep._fields))


@validate_params(init=Choice("doubled", "iid"), record=Instance(Mapping))
def recorded_limit(record: Mapping, init: str) -> LimitConvergence:
    """The record's :func:`limit_convergence` from one initialization, ``"doubled"`` or ``"iid"`` (chapter 5)."""
    limit = _record_results(record, "limit")
    cfg, res = record["config"], limit[init]
    return LimitConvergence(
        np.array(cfg["limit_widths"]),
        np.array(cfg["limit_seeds"]),
        init == "doubled",
        *(np.asarray(res[k], dtype=float) for k in _LIMIT_FIELDS),
        np.asarray(res["limit_eval_loss"], dtype=float),
    )


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m rnnlib.experiments.ch05 --record | --smoke [--out PATH]``."""
    records.record_cli(
        argv,
        chapter=CHAPTER,
        make=lambda out, smoke, **kw: make_lazy_record(
            out, smoke=smoke, progress=not smoke, **kw
        ),
        cost="about 3 CPU-minutes",
    )


if __name__ == "__main__":
    main()
