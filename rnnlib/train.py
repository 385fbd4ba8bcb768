"""Training loops (chapters 5-7 and 11).

Part I (chapters 5-7): stochastic gradient descent in the lazy regime of
Panigrahi & Goyal (2021), Sec. 3 and Theorem 3.1. The objective is

    Obj(W', A') = E_Z G(out_scale * F_rnn(x; W + W', A + A'), y*)

where ``out_scale`` is the paper's output scaling lambda (written
lambda_out in the book, to keep Part II's contraction constant lambda apart),
``G`` is convex and 1-Lipschitz in its first argument, and only ``W`` and ``A``
move: ``B`` stays frozen, there is no projection, regularization or clipping.
Each step draws ``batch_size`` samples uniformly (with replacement) from the
training set and takes one gradient step of size ``lr`` on their mean loss.
The paper's algorithm is ``batch_size = 1``, the default; a larger batch is
a deviation from it (labelled so in the chapters).

The API (kept stable; later additions are keyword arguments only):

* :func:`train_rnn` ``(model, x, y, *, out_scale, lr, steps, loss="squared",
  batch_size=1, generator=None, x_eval=None, y_eval=None, log_every=None,
  progress=False) -> TrainResult``. ``x`` is (N, L, d), ``y`` is (N, d_out).
  ``TrainResult.model`` is a trained *copy* (the input model is untouched, so
  ``model.W``, ``model.A`` stay the initialization W_0, A_0);
  ``TrainResult.history`` is a :class:`TrainHistory`.
* :func:`train_pseudo`: the same SGD, on the same samples in the same order
  (same ``generator``), for the *linearized* RNN
  ``out_scale * (F_rnn(x; W_0, A_0) + F(x; W', A'))`` with ``F`` the
  pseudo-network of eq. (4): linear in ``(W', A')``, so the objective is convex.
* :func:`train_pair`: both at once, plus the gap between the two trained
  predictors on held-out inputs.
* :func:`predict` ``(model, x, out_scale)``: ``out_scale * F_rnn(x)``.
* :func:`objective`: the per-sample loss ``G(z, y)``: ``"squared"``
  (``(z - y)^2 / 2`` averaged over outputs; 1-Lipschitz only where
  ``|z - y| <= 1``) or ``"logistic"`` (``log(1 + exp(-y z))`` averaged over
  outputs, labels in {-1, +1}; convex, 1-Lipschitz, ``G(0, y) = log 2``).
* :func:`tangent_kernel` and :func:`kernel_ridge`: the tangent kernel
  ``K(x, x') = <grad F(x), grad F(x')>`` built from chapter 3's pieces, and
  kernel ridge regression with it (chapter 5's "best pseudo-network" reference).

Part II (chapter 11): :func:`train_next_step` fits a next-step model
(:mod:`rnnlib.next_step`) with Adam and gradient clipping, optionally projected
onto the stable set after every step (as Miller & Hardt's code does), and
:func:`train_stable_and_unstable` trains both variants from the same start.

A loss that stops being finite raises :class:`DivergenceError` naming the
step and the learning rate. With ``batch_size <= 8`` the loops run with one
intra-op torch thread (restored afterwards): small steps are latency-bound,
and extra threads only slowed them down (30x on a shared 2-core machine).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from ._linalg import spectral_norm
from ._rng import derive
from ._validation import (
    Bool,
    Choice,
    DivergenceError,
    Int,
    Real,
    as_generator,
    check_int,
    check_real,
    check_tensor,
    validate_params,
)
from .concepts import sample_task
from .elman import ElmanRNN
from .next_step import (
    NextStepModel,
    evaluate,
    next_step_batch,
    readout_loss,
)
from .pseudo import back_matrices

__all__ = [
    "DivergenceError",
    "LOSSES",
    "objective",
    "predict",
    "TrainHistory",
    "TrainResult",
    "train_rnn",
    "train_pseudo",
    "PairResult",
    "train_pair",
    "convexity_gap",
    "worst_case_flip_fraction",
    "tangent_kernel",
    "tangent_kernel_diag",
    "kernel_ridge",
    "theorem_3_1_constants",
    "regression_task",
    "kernel_reference",
    "LazyGrid",
    "lazy_grid",
]

#: The losses G(z, y) the Part I loops know.
LOSSES = ("squared", "logistic")


# --- losses and predictions ---------------------------------------------------------------------


def _loss(
    z: torch.Tensor, y: torch.Tensor, loss: str
) -> torch.Tensor:
    """Per-sample G(z, y), (batch,), no validation."""
    if loss == "squared":
        return 0.5 * (z - y).square().mean(dim=1)
    return torch.nn.functional.softplus(-y * z).mean(dim=1)


@validate_params(loss=Choice(*LOSSES))
def objective(
    z: torch.Tensor, y: torch.Tensor, loss: str = "squared"
) -> torch.Tensor:
    """The per-sample loss G(z, y) of the objective (chapters 5-6); returns (batch,).

    ``z`` is the scaled output ``out_scale * F_rnn(x)``, (batch, d_out), and
    ``y`` the labels, same shape. ``"squared"``: ``mean_o (z_o - y_o)^2 / 2``.
    ``"logistic"``: ``mean_o log(1 + exp(-y_o z_o))`` with labels in {-1, +1};
    convex and 1-Lipschitz in ``z`` (Euclidean norm), ``G(0, y) = log 2``,
    so it satisfies the paper's assumptions on G (Sec. 3).
    """
    z = check_tensor(z, "z", ndim=2)
    y = check_tensor(y, "y", shape=tuple(z.shape))
    if loss == "logistic":
        _check_signs(y, "y")
    return _loss(z, y, loss)


def _check_signs(y: torch.Tensor, name: str) -> None:
    if not bool(((y == 1) | (y == -1)).all()):
        raise ValueError(
            f"{name} must hold labels in {{-1, +1}} for the logistic loss"
        )


def _check_model(model: object) -> ElmanRNN:
    if not isinstance(model, ElmanRNN):
        raise TypeError(
            f"model must be an rnnlib.elman.ElmanRNN, got {type(model).__name__}"
        )
    return model


def _elman_scan(
    W: torch.Tensor,
    A: torch.Tensor,
    x: torch.Tensor,
    keep_all: bool,
) -> torch.Tensor:
    """The recurrence of :func:`rnnlib.elman.elman_hidden_states`, no validation.

    Same computation as ``rnnlib.elman._elman_scan``, but with one small product
    ``x^(l) A^T`` per step instead of one product for all steps followed by a split:
    for the batch of one sample of an SGD step, the backward pass of the split
    version was several times slower on the CPU (``benchmarks/bench_train.py``).
    """
    At, Wt = A.transpose(0, 1), W.transpose(0, 1)
    h = torch.relu(x[:, 0] @ At)
    states = [h] if keep_all else None
    for step in range(1, x.shape[1]):
        h = torch.relu(torch.addmm(x[:, step] @ At, h, Wt))
        if keep_all:
            states.append(h)
    return torch.stack(states, dim=1) if keep_all else h


def _output(
    W: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    x: torch.Tensor,
) -> torch.Tensor:
    """F_rnn(x) = B h^(L), (batch, d_out), no validation."""
    return _elman_scan(W, A, x, keep_all=False) @ B.transpose(0, 1)


@validate_params("out_scale")
def predict(
    model: ElmanRNN, x: torch.Tensor, out_scale: float
) -> torch.Tensor:
    """``out_scale * F_rnn(x)`` without gradients (chapters 5-7); returns (batch, d_out)."""
    model = _check_model(model)
    x = model._check_input(x)
    with torch.no_grad():
        return out_scale * _output(model.W, model.A, model.B, x)


# --- histories ----------------------------------------------------------------------------------


@dataclass
class TrainHistory:
    """What a Part I training run records (chapters 5-7).

    Per step (arrays of length ``steps``): ``step_loss``, the mean loss of the
    samples drawn at that step, before the update.

    At the logged steps ``steps_logged`` (0, every ``log_every`` steps, and the
    last step; arrays of that length):

    * ``train_loss``, ``eval_loss``: the objective on the whole training set and
      on ``(x_eval, y_eval)`` (NaN where no evaluation set was given);
    * ``dist_W_fro``, ``dist_A_fro``: ``||W_t - W_0||_F``, ``||A_t - A_0||_F``;
    * ``dist_W_spec``, ``dist_A_spec``: the spectral norms of the same differences;
    * ``flip_fraction``: the fraction of entries of the activation patterns
      ``D^(1..L)`` (on the evaluation inputs, else the training inputs) that
      differ between ``(W_t, A_t)`` and the initialization (0 for the
      pseudo-network, whose patterns are frozen by definition);
    * ``coupling_gap``: ``mean |out_scale (F_rnn(W_t) - F_rnn(W_0) - F(W_t - W_0))|``
      on the same inputs: how far the RNN is from its own pseudo-network at
      its current weights (0 for the pseudo-network);
    * ``coupling_relative``: that gap divided by ``mean |out_scale F(W_t - W_0)|``.

    ``W0_fro`` and ``A0_fro`` are ``||W_0||_F`` and ``||A_0||_F``, for relative movements.
    """

    step_loss: np.ndarray
    steps_logged: np.ndarray
    train_loss: np.ndarray
    eval_loss: np.ndarray
    dist_W_fro: np.ndarray
    dist_A_fro: np.ndarray
    dist_W_spec: np.ndarray
    dist_A_spec: np.ndarray
    flip_fraction: np.ndarray
    coupling_gap: np.ndarray
    coupling_relative: np.ndarray
    W0_fro: float = 0.0
    A0_fro: float = 0.0


@dataclass
class TrainResult:
    """Result of :func:`train_rnn` / :func:`train_pseudo` (chapters 5-7).

    ``model``: an :class:`ElmanRNN` holding the trained weights ``(W_0 + W', A_0 + A')``
    (for :func:`train_pseudo`, the weights whose *pseudo-network* was trained; the
    RNN at those weights is not the trained predictor); ``dW``, ``dA``: the
    changes ``W' = W_t - W_0`` and ``A' = A_t - A_0``; ``history``: a
    :class:`TrainHistory`; ``out_scale``, ``lr``, ``loss``, ``kind``
    (``"rnn"`` or ``"pseudo"``) repeat the settings.
    """

    model: ElmanRNN
    dW: torch.Tensor
    dA: torch.Tensor
    history: TrainHistory
    out_scale: float
    lr: float
    loss: str
    kind: str = "rnn"
    init: ElmanRNN | None = field(default=None, repr=False)

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """The trained predictor on ``x`` (batch, L, d): the RNN's, or the linearized RNN's."""
        if self.kind == "rnn":
            return predict(self.model, x, self.out_scale)
        x = self.init._check_input(x)
        return self.out_scale * _linearized(
            self.init, self.dW, self.dA, x
        )


# --- the pieces of the linearized network ---------------------------------------------------------


def _states(W, A, x):
    """h^(0..L-1) and D^(1..L) (as floats) at weights (W, A); no grad."""
    with torch.no_grad():
        h = _elman_scan(W, A, x, keep_all=True)
        h_prev = torch.cat(
            [torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1
        )
        return h_prev, (h > 0).to(x.dtype), h


def _tangent(W, B, h_prev, D, x, dW, dA) -> torch.Tensor:
    """Pseudo-network of eq. (4) by tangent propagation, differentiable in (dW, dA)."""
    drive = h_prev @ dW.transpose(0, 1) + x @ dA.transpose(0, 1)
    Wt = W.transpose(0, 1)
    g = D[:, 0] * drive[:, 0]
    for step in range(1, x.shape[1]):
        g = D[:, step] * torch.addmm(drive[:, step], g, Wt)
    return g @ B.transpose(0, 1)


def _linearized(init: ElmanRNN, dW, dA, x) -> torch.Tensor:
    """F_rnn(x; W_0, A_0) + F(x; dW, dA): the first-order Taylor expansion, (batch, d_out)."""
    W, A, B = init.W.detach(), init.A.detach(), init.B
    h_prev, D, h = _states(W, A, x)
    with torch.no_grad():
        return h[:, -1] @ B.transpose(0, 1) + _tangent(
            W, B, h_prev, D, x, dW, dA
        )


def _convexity_gap(
    init: ElmanRNN, W, A, W_star, A_star, x, out_scale
):
    """out_scale |F(W*) - F(W) - <grad F(W), (W*, A*) - (W, A)>| per sequence, (N,); no grad."""
    B = init.B
    with torch.no_grad():
        h_prev, D, h = _states(W, A, x)
        f = h[:, -1] @ B.transpose(0, 1)
        lin = _tangent(W, B, h_prev, D, x, W_star - W, A_star - A)
        f_star = _output(W_star, A_star, B, x)
        return out_scale * (f_star - f - lin).abs().sum(dim=1)


# --- validation shared by the loops ---------------------------------------------------------------


def _check_data(
    model: ElmanRNN,
    x: object,
    y: object,
    loss: str,
    names=("x", "y"),
) -> tuple[torch.Tensor, torch.Tensor]:
    x = model._check_input(x, names[0])
    y = check_tensor(
        y, names[1], shape=(x.shape[0], model.output_dim)
    )
    if y.dtype != x.dtype:
        raise TypeError(
            f"{names[1]} has dtype {y.dtype} but {names[0]} has {x.dtype}"
        )
    if loss == "logistic":
        _check_signs(y, names[1])
    return x, y


#: The declared scalars of the three Part I SGD functions (``batch_size <= N`` is checked in the body).
_sgd_params = validate_params(
    "out_scale",
    "lr",
    "steps",
    "batch_size",
    "log_every",
    loss=Choice(*LOSSES),
)


def _check_common(
    model,
    x,
    y,
    out_scale,
    lr,
    steps,
    loss,
    batch_size,
    x_eval,
    y_eval,
    log_every,
):
    model = _check_model(model)
    x, y = _check_data(model, x, y, loss)
    if batch_size > x.shape[0]:
        raise ValueError(
            f"batch_size must be <= {x.shape[0]}, got {batch_size}"
        )
    if (x_eval is None) != (y_eval is None):
        raise ValueError(
            "x_eval and y_eval must be given together (or neither)"
        )
    if x_eval is not None:
        x_eval, y_eval = _check_data(
            model, x_eval, y_eval, loss, ("x_eval", "y_eval")
        )
    if log_every is None:
        log_every = max(1, steps // 10)
    return (
        model,
        x,
        y,
        out_scale,
        lr,
        steps,
        loss,
        batch_size,
        x_eval,
        y_eval,
        log_every,
    )


def _sample_order(
    n: int, steps: int, batch_size: int, generator
) -> torch.Tensor:
    """The indices drawn at each step, (steps, batch_size): uniform with replacement (P&G's SGD)."""
    return torch.randint(
        0,
        n,
        (steps, batch_size),
        generator=as_generator(generator),
    )


def _diverged(
    step: int, lr: float, value: float, what: str = "the loss"
) -> DivergenceError:
    return DivergenceError(
        f"training diverged at step {step}: {what} became {value} (lr = {lr:g}); "
        f"lower the learning rate lr or the output scale"
    )


def _spec(t: torch.Tensor, gen: torch.Generator) -> float:
    """Spectral norm by power iteration (the differences are close to low rank: fast convergence)."""
    if not bool(t.any()):
        return 0.0
    return spectral_norm(
        t, exact_up_to=64, n_iter=30, generator=gen
    )


class _Logger:
    """Collects the logged quantities of :class:`TrainHistory`."""

    def __init__(
        self,
        init: ElmanRNN,
        x,
        y,
        x_eval,
        y_eval,
        out_scale,
        loss,
        kind,
    ):
        (
            self.init,
            self.x,
            self.y,
            self.out_scale,
            self.loss,
            self.kind,
        ) = init, x, y, out_scale, loss, kind
        self.x_eval, self.y_eval = x_eval, y_eval
        self.xp = (
            x_eval if x_eval is not None else x
        )  # inputs for flips and coupling
        W0, A0, B = init.W.detach(), init.A.detach(), init.B
        self.h_prev_p, self.D_p, h = _states(W0, A0, self.xp)
        self.active0 = h > 0
        self.f0_p = h[:, -1] @ B.transpose(0, 1)
        self.rows: list[tuple] = []
        self.gen = torch.Generator().manual_seed(0)

    def _pred(self, W, A, dW, dA, x):
        if self.kind == "rnn":
            return self.out_scale * _output(W, A, self.init.B, x)
        return self.out_scale * _linearized(self.init, dW, dA, x)

    def log(self, step: int, W, A, lr: float) -> None:
        init = self.init
        with torch.no_grad():
            dW, dA = W - init.W, A - init.A
            train = float(
                _loss(
                    self._pred(W, A, dW, dA, self.x),
                    self.y,
                    self.loss,
                ).mean()
            )
            ev = math.nan
            if self.x_eval is not None:
                ev = float(
                    _loss(
                        self._pred(W, A, dW, dA, self.x_eval),
                        self.y_eval,
                        self.loss,
                    ).mean()
                )
            if not math.isfinite(train):
                raise _diverged(
                    step, lr, train, "the training loss"
                )
            if self.kind == "rnn":
                h = _elman_scan(W, A, self.xp, keep_all=True)
                flips = float(
                    ((h > 0) != self.active0).double().mean()
                )
                pseudo = _tangent(
                    init.W.detach(),
                    init.B,
                    self.h_prev_p,
                    self.D_p,
                    self.xp,
                    dW,
                    dA,
                )
                change = (
                    h[:, -1] @ init.B.transpose(0, 1) - self.f0_p
                )
                gap = self.out_scale * float(
                    (change - pseudo).abs().mean()
                )
                scale = self.out_scale * float(pseudo.abs().mean())
                rel = gap / scale if scale > 0 else math.nan
            else:
                flips, gap, rel = 0.0, 0.0, 0.0
            self.rows.append(
                (
                    step,
                    train,
                    ev,
                    float(dW.norm()),
                    float(dA.norm()),
                    _spec(dW, self.gen),
                    _spec(dA, self.gen),
                    flips,
                    gap,
                    rel,
                )
            )

    def history(self, step_loss: np.ndarray) -> TrainHistory:
        cols = [np.asarray(c) for c in zip(*self.rows)]
        return TrainHistory(
            step_loss,
            cols[0].astype(int),
            *cols[1:],
            W0_fro=float(self.init.W.detach().norm()),
            A0_fro=float(self.init.A.detach().norm()),
        )


def _progress(iterable, progress: bool, desc: str):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, leave=False)


# --- the loops --------------------------------------------------------------------------------------


class _Run:
    """One trained predictor (the RNN or its linearization) inside the lockstep loop."""

    def __init__(
        self, kind, init, x, y, x_eval, y_eval, out_scale, loss
    ):
        self.kind = kind
        self.W = init.W.detach().clone().requires_grad_(True)
        self.A = init.A.detach().clone().requires_grad_(True)
        self.logger = _Logger(
            init, x, y, x_eval, y_eval, out_scale, loss, kind
        )

    def result(
        self, init, step_loss, out_scale, lr, loss
    ) -> TrainResult:
        trained = copy.deepcopy(init)
        with torch.no_grad():
            trained.W.copy_(self.W)
            trained.A.copy_(self.A)
        for p in trained.parameters():
            p.requires_grad_(True)
        dW, dA = (
            (self.W - init.W).detach(),
            (self.A - init.A).detach(),
        )
        return TrainResult(
            trained,
            dW,
            dA,
            self.logger.history(step_loss),
            out_scale,
            lr,
            loss,
            self.kind,
            init,
        )


class _OneThread:
    """Run a block with one intra-op torch thread, then restore the caller's setting.

    An SGD step on a few samples is a chain of small products whose cost is latency, not
    arithmetic: splitting them over threads only adds synchronization, and on a shared
    machine, where a sibling thread may be descheduled, a step with two threads was
    measured 30x slower than with one (chapter 5's sweeps).
    """

    def __enter__(self):
        self.saved = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        torch.set_num_threads(self.saved)
        return False


def _sgd(kinds, *args, **kwargs) -> list[TrainResult]:
    """:func:`_sgd_loop` with one intra-op thread for batches of up to 8 samples (see :class:`_OneThread`)."""
    if args[7] <= 8:  # batch_size
        with _OneThread():
            return _sgd_loop(kinds, *args, **kwargs)
    return _sgd_loop(kinds, *args, **kwargs)


def _sgd_loop(
    kinds,
    model,
    x,
    y,
    out_scale,
    lr,
    steps,
    loss,
    batch_size,
    generator,
    x_eval,
    y_eval,
    log_every,
    progress,
    on_log=None,
) -> list[TrainResult]:
    """SGD for each of ``kinds`` ("rnn", "pseudo") in lockstep, on one sample order."""
    init = copy.deepcopy(model)
    for p in init.parameters():
        p.requires_grad_(False)
    B, W0, A0 = init.B, init.W, init.A
    order = _sample_order(x.shape[0], steps, batch_size, generator)
    runs = [
        _Run(k, init, x, y, x_eval, y_eval, out_scale, loss)
        for k in kinds
    ]
    if (
        "pseudo" in kinds
    ):  # h, D and F_rnn(W_0) of every training sequence, computed once
        h_prev, D, h = _states(W0, A0, x)
        f0 = h[:, -1] @ B.transpose(0, 1)
    step_loss = np.empty((len(runs), steps))

    def log(step):
        for run in runs:
            run.logger.log(
                step, run.W.detach(), run.A.detach(), lr
            )
        if on_log is not None:
            on_log(runs)

    log(0)
    for t in _progress(
        range(steps), progress, "SGD (" + ", ".join(kinds) + ")"
    ):
        idx = order[t]
        xb, yb = x[idx], y[idx]
        for i, run in enumerate(runs):
            W, A = run.W, run.A
            if run.kind == "rnn":
                z = out_scale * _output(W, A, B, xb)
            else:
                z = out_scale * (
                    f0[idx]
                    + _tangent(
                        W0,
                        B,
                        h_prev[idx],
                        D[idx],
                        xb,
                        W - W0,
                        A - A0,
                    )
                )
            value = _loss(z, yb, loss).mean()
            gW, gA = torch.autograd.grad(value, (W, A))
            step_loss[i, t] = v = value.item()
            if not math.isfinite(v):
                raise _diverged(t, lr, v)
            with torch.no_grad():
                W.sub_(gW, alpha=lr)
                A.sub_(gA, alpha=lr)
        if (t + 1) % log_every == 0 or t + 1 == steps:
            log(t + 1)
    return [
        run.result(init, step_loss[i], out_scale, lr, loss)
        for i, run in enumerate(runs)
    ]


@_sgd_params
def train_rnn(
    model: ElmanRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    out_scale: float,
    lr: float,
    steps: int,
    loss: str = "squared",
    batch_size: int = 1,
    generator: torch.Generator | int | None = None,
    x_eval: torch.Tensor | None = None,
    y_eval: torch.Tensor | None = None,
    log_every: int | None = None,
    progress: bool = False,
) -> TrainResult:
    """SGD on ``Obj(W', A') = mean G(out_scale * F_rnn(x; W + W', A + A'), y)`` (P&G Sec. 3; chapters 5-7).

    ``steps`` updates ``W <- W - lr * grad_W``, ``A <- A - lr * grad_A`` on the
    mean loss of ``batch_size`` samples drawn uniformly with replacement from
    ``(x, y)`` (``batch_size = 1`` is the paper's algorithm). ``B`` stays frozen;
    no projection. ``model`` is not modified: the trained weights are in a copy,
    ``TrainResult.model``. ``x`` is (N, L, d) (normalized sequences), ``y`` is
    (N, d_out) (labels in {-1, +1} for ``loss="logistic"``). The sample order
    depends only on ``(generator, N, steps, batch_size)``, so
    :func:`train_pseudo` with the same generator sees the same samples in the
    same order. The history (:class:`TrainHistory`) is logged every
    ``log_every`` steps (default ``steps // 10``) on the training set and on
    ``(x_eval, y_eval)`` if given. Raises :class:`DivergenceError` (naming the
    step and ``lr``) when the loss stops being finite. ``progress`` shows a
    ``tqdm.auto`` bar.
    """
    args = _check_common(
        model,
        x,
        y,
        out_scale,
        lr,
        steps,
        loss,
        batch_size,
        x_eval,
        y_eval,
        log_every,
    )
    return _sgd(
        ["rnn"], *args[:8], generator, *args[8:], progress
    )[0]


@_sgd_params
def train_pseudo(
    model: ElmanRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    out_scale: float,
    lr: float,
    steps: int,
    loss: str = "squared",
    batch_size: int = 1,
    generator: torch.Generator | int | None = None,
    x_eval: torch.Tensor | None = None,
    y_eval: torch.Tensor | None = None,
    log_every: int | None = None,
    progress: bool = False,
) -> TrainResult:
    """The same SGD as :func:`train_rnn` for the linearized RNN (P&G eq. (4); chapter 5).

    The predictor is ``out_scale * (F_rnn(x; W_0, A_0) + F(x; W', A'))``, with
    ``F`` the pseudo-network of eq. (4) at the initialization ``model``: linear
    in ``(W', A')``, so the objective is convex in them (Lemma D.3's setting).
    The activation patterns and hidden states are those of the initialization
    and never change. Same arguments, same sample order for the same
    ``generator``; the history has ``flip_fraction = coupling_gap = 0``.
    ``TrainResult.predict`` evaluates the trained linearized predictor.
    """
    args = _check_common(
        model,
        x,
        y,
        out_scale,
        lr,
        steps,
        loss,
        batch_size,
        x_eval,
        y_eval,
        log_every,
    )
    return _sgd(
        ["pseudo"], *args[:8], generator, *args[8:], progress
    )[0]


@dataclass
class PairResult:
    """:func:`train_pair`: the RNN and its linearization trained on the same samples (chapter 5).

    ``rnn``, ``pseudo``: the two :class:`TrainResult`; at the logged steps
    ``steps_logged``: ``output_gap = mean |z_rnn(x) - z_pseudo(x)|`` over the
    evaluation inputs, where ``z`` are the two predictors being trained (scaled
    outputs), and ``output_change = mean |z_pseudo(x) - z_0(x)|``, the size of
    what the training changed, for a relative gap ``output_gap / output_change``.

    With a ``comparator`` ``theta*`` (:func:`train_pair`), at the same steps on the
    *training* inputs: ``convexity_mean`` and ``convexity_max``, the mean and the
    largest over the training set of the approximate-convexity gap
    ``delta_t(x) = out_scale |F_rnn(x; theta*) - F_rnn(x; theta_t) - <grad F_rnn(x; theta_t), theta* - theta_t>|``
    (:func:`convexity_gap`) along the RNN's own iterates ``theta_t``; empty without one.
    """

    rnn: TrainResult
    pseudo: TrainResult
    steps_logged: np.ndarray
    output_gap: np.ndarray
    output_change: np.ndarray
    convexity_mean: np.ndarray = field(
        default_factory=lambda: np.zeros(0)
    )
    convexity_max: np.ndarray = field(
        default_factory=lambda: np.zeros(0)
    )

    @property
    def relative_gap(self) -> np.ndarray:
        """``output_gap / output_change`` (NaN at step 0, where nothing has changed)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                self.output_change > 0,
                self.output_gap / self.output_change,
                np.nan,
            )


@_sgd_params
def train_pair(
    model: ElmanRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    out_scale: float,
    lr: float,
    steps: int,
    loss: str = "squared",
    batch_size: int = 1,
    generator: torch.Generator | int | None = None,
    x_eval: torch.Tensor | None = None,
    y_eval: torch.Tensor | None = None,
    log_every: int | None = None,
    progress: bool = False,
    comparator: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> PairResult:
    """:func:`train_rnn` and :func:`train_pseudo` under identical SGD (same samples, same order; chapter 5).

    Both runs advance in lockstep; at each logged step the gap between the two
    predictors is measured on the evaluation inputs (``x_eval`` if given, else
    ``x``). Same arguments as :func:`train_rnn`; returns a :class:`PairResult`
    whose ``rnn`` and ``pseudo`` equal what the two functions return alone.
    ``comparator``: a weight change ``theta* = (W*, A*)`` ((m, m), (m, d)); if given,
    the approximate-convexity gap ``delta_t`` of the RNN's iterates towards it is
    logged on the training inputs (``PairResult.convexity_mean``, ``convexity_max``).
    """
    args = _check_common(
        model,
        x,
        y,
        out_scale,
        lr,
        steps,
        loss,
        batch_size,
        x_eval,
        y_eval,
        log_every,
    )
    out_scale, xp = (
        args[3],
        (args[8] if args[8] is not None else args[1]),
    )
    init = args[0]
    star = None
    if comparator is not None:
        if (
            not isinstance(comparator, (tuple, list))
            or len(comparator) != 2
        ):
            raise TypeError(
                f"comparator must be a pair (W*, A*) of tensors, got {type(comparator).__name__}"
            )
        m, dd = init.W.shape[0], init.A.shape[1]
        star = (
            init.W.detach()
            + check_tensor(
                comparator[0], "comparator[0]", shape=(m, m)
            ).to(init.W.dtype),
            init.A.detach()
            + check_tensor(
                comparator[1], "comparator[1]", shape=(m, dd)
            ).to(init.A.dtype),
        )
    with torch.no_grad():
        z0 = out_scale * _output(init.W, init.A, init.B, xp)
    gaps, changes, conv_mean, conv_max = [], [], [], []

    def on_log(runs):
        rnn, pseudo = runs
        if star is not None:
            delta = _convexity_gap(
                init,
                rnn.W.detach(),
                rnn.A.detach(),
                *star,
                args[1],
                out_scale,
            )
            conv_mean.append(float(delta.mean()))
            conv_max.append(float(delta.max()))
        with torch.no_grad():
            zr = out_scale * _output(rnn.W, rnn.A, init.B, xp)
            zp = out_scale * _linearized(
                init, pseudo.W - init.W, pseudo.A - init.A, xp
            )
        gaps.append(float((zr - zp).abs().mean()))
        changes.append(float((zp - z0).abs().mean()))

    rnn, pseudo = _sgd(
        ["rnn", "pseudo"],
        *args[:8],
        generator,
        *args[8:],
        progress,
        on_log=on_log,
    )
    return PairResult(
        rnn,
        pseudo,
        rnn.history.steps_logged,
        np.asarray(gaps),
        np.asarray(changes),
        np.asarray(conv_mean),
        np.asarray(conv_max),
    )


@validate_params("out_scale")
def convexity_gap(
    model: ElmanRNN,
    theta: tuple[torch.Tensor, torch.Tensor],
    theta_star: tuple[torch.Tensor, torch.Tensor],
    x: torch.Tensor,
    *,
    out_scale: float,
) -> torch.Tensor:
    """The approximate-convexity gap of the RNN at ``theta`` towards ``theta*`` (chapter 5).

    With ``theta = (W', A')`` and ``theta* = (W*, A*)`` weight changes from the
    initialization ``model`` (each (m, m), (m, d)) and ``F_rnn(x; theta)`` the RNN's
    output at ``(W + W', A + A')``, returns per sequence (N,)

        delta(x) = out_scale |F_rnn(x; theta*) - F_rnn(x; theta) - <grad_theta F_rnn(x; theta), theta* - theta>|,

    the error of the first-order Taylor expansion of the RNN *at theta* (not at the
    initialization), evaluated at ``theta*``. For ``G`` convex and 1-Lipschitz,
    ``G(out_scale F_rnn(x; theta*)) >= G(out_scale F_rnn(x; theta)) +
    <grad_theta G(out_scale F_rnn(x; theta)), theta* - theta> - delta(x)``, the
    inequality that the regret bound of online gradient descent needs along the
    RNN's own iterates (our form of P&G's Lemma D.3). Sum over the outputs for
    ``d_out > 1``. ``x`` is (N, L, d).
    """
    model = _check_model(model)
    x = model._check_input(x)
    m, d = model.W.shape[0], model.A.shape[1]
    pairs = []
    for name, pair in (
        ("theta", theta),
        ("theta_star", theta_star),
    ):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(
                f"{name} must be a pair (W', A') of tensors, got {type(pair).__name__}"
            )
        dW = check_tensor(pair[0], f"{name}[0]", shape=(m, m))
        dA = check_tensor(pair[1], f"{name}[1]", shape=(m, d))
        pairs.append(
            (
                model.W.detach() + dW.to(model.W.dtype),
                model.A.detach() + dA.to(model.A.dtype),
            )
        )
    return _convexity_gap(
        model, *pairs[0], *pairs[1], x, out_scale
    )


# --- Part I: the tangent kernel and its kernel regression ----------------------------------------------


def tangent_kernel(
    model: ElmanRNN,
    x: torch.Tensor,
    x2: torch.Tensor | None = None,
) -> torch.Tensor:
    """The tangent kernel ``K(x, x') = <grad_{W,A} F(x), grad_{W,A} F(x')>`` at initialization (chapters 5-6).

    Built from chapter 3's pieces: with ``u_l = D^(l) Back_{l->L}^T`` (m) and
    ``z_l = [h^(l-1), x^(l)]`` (m + d), the gradient of ``F`` (d_out = 1) is
    ``grad_W F = sum_l u_l h^(l-1)^T``, ``grad_A F = sum_l u_l x^(l)^T``, so

        K(x, x') = sum_{l, l'} <u_l, u'_l'> (<h^(l-1), h'^(l'-1)> + <x^(l), x'^(l')>).

    The pseudo-network is ``F(x; W', A') = <grad F(x), (W', A')>``, so the
    linearized RNN is a kernel model with this kernel. ``x`` is (N, L, d),
    ``x2`` (N2, L, d) (default ``x``); returns (N, N2). Needs ``d_out = 1``.
    Cost ~ N N2 L^2 m: keep N L to a few thousand.
    """
    model = _check_model(model)
    if model.output_dim != 1:
        raise ValueError(
            f"model must have output_dim 1 for tangent_kernel, got {model.output_dim}"
        )
    x = model._check_input(x)
    x2 = x if x2 is None else model._check_input(x2, "x2")
    if x2.shape[1] != x.shape[1]:
        raise ValueError(
            f"x2 must have the same length L = {x.shape[1]} as x, got shape {tuple(x2.shape)}"
        )

    def pieces(xx):
        h_prev, D, _ = _states(
            model.W.detach(), model.A.detach(), xx
        )
        with torch.no_grad():
            u = (
                back_matrices(model, xx)[:, :, 0, :] * D
            )  # (N, L, m)
        return u, h_prev

    u1, h1 = pieces(x)
    u2, h2 = (u1, h1) if x2 is x else pieces(x2)
    with torch.no_grad():
        uu = torch.einsum("alm,bkm->ablk", u1, u2)
        zz = torch.einsum("alm,bkm->ablk", h1, h2) + torch.einsum(
            "ald,bkd->ablk", x, x2
        )
        return (uu * zz).sum(dim=(2, 3))


def tangent_kernel_diag(
    model: ElmanRNN, x: torch.Tensor
) -> torch.Tensor:
    """``K(x_n, x_n) = ||grad_{W,A} F(x_n)||^2`` for each sequence, (N,) (chapters 5-6).

    The diagonal of :func:`tangent_kernel` at cost ~ N L^2 m instead of N^2 L^2 m:
    ``sum_{l, l'} <u_l, u_l'> (<h^(l-1), h^(l'-1)> + <x^(l), x^(l')>)`` per sequence.
    """
    model = _check_model(model)
    if model.output_dim != 1:
        raise ValueError(
            f"model must have output_dim 1 for tangent_kernel_diag, got {model.output_dim}"
        )
    x = model._check_input(x)
    h_prev, D, _ = _states(model.W.detach(), model.A.detach(), x)
    with torch.no_grad():
        u = back_matrices(model, x)[:, :, 0, :] * D
        uu = torch.einsum("nlm,nkm->nlk", u, u)
        zz = torch.einsum(
            "nlm,nkm->nlk", h_prev, h_prev
        ) + torch.einsum("nld,nkd->nlk", x, x)
        return (uu * zz).sum(dim=(1, 2))


@validate_params("ridge")
def kernel_ridge(
    K: torch.Tensor, y: torch.Tensor, ridge: float
) -> tuple[torch.Tensor, float]:
    """Kernel ridge regression: ``alpha = (K + ridge N I)^{-1} y`` and ``||theta|| = sqrt(alpha^T K alpha)`` (chapter 5).

    Minimizes ``(1/N) sum_n (f(x_n) - y_n)^2 / 2 + (ridge / 2) ||theta||^2`` over
    ``f = <theta, phi(x)>`` with ``K = Phi Phi^T``; the minimizer is
    ``f(.) = K(., X) alpha``. ``K`` is (N, N) symmetric positive semi-definite,
    ``y`` (N,) or (N, k), ``ridge > 0``. Returns ``(alpha, norm)`` where
    ``norm`` is the RKHS norm of the solution (for several columns, the
    Frobenius norm over them). Predictions at new points: ``K(X_new, X) @ alpha``.
    """
    K = check_tensor(K, "K", ndim=2)
    if K.shape[0] != K.shape[1]:
        raise ValueError(
            f"K must be square (N, N), got shape {tuple(K.shape)}"
        )
    y = check_tensor(y, "y")
    if y.dim() not in (1, 2) or y.shape[0] != K.shape[0]:
        raise ValueError(
            f"y must have shape ({K.shape[0]},) or ({K.shape[0]}, k), got {tuple(y.shape)}"
        )
    n = K.shape[0]
    Kd = K.to(torch.float64)
    yd = y.to(torch.float64)
    alpha = torch.linalg.solve(
        Kd + ridge * n * torch.eye(n, dtype=torch.float64), yd
    )
    a2 = alpha if alpha.dim() == 2 else alpha[:, None]
    norm = float(
        torch.einsum("nk,nm,mk->", a2, Kd, a2).clamp_min(0).sqrt()
    )
    return alpha.to(K.dtype), norm


@validate_params(
    "L",
    d_out=Int(1),
    width=Int(2),
    eps=Real(0.0, 1.0, low_open=True),
)
def theorem_3_1_constants(
    L: int, d_out: int, width: int, eps: float
) -> dict[str, float]:
    """The quantities Theorem 3.1 of P&G prescribes, with every hidden constant set to 1 (chapter 5).

    ``rho = 100 L d_out log m``; ``out_scale = eps / (10 L rho)`` (the paper's lambda);
    ``lr = 1 / (eps rho^2 m)`` (the paper's ``eta = Theta(1 / (eps rho^2 m))``);
    ``T_min = rho^2 / eps^2``, a *lower* estimate of ``T = Theta(p^2 C^2 poly(rho) / eps^2)``
    with ``p = C = 1`` and ``poly(rho) = rho^2`` (the degree is not given in the paper);
    ``failure`` ``= exp(-rho^2)``, the failure probability without its constant.
    """
    m = width
    rho = 100 * L * d_out * math.log(m)
    return dict(
        rho=rho,
        out_scale=eps / (10 * L * rho),
        lr=1 / (eps * rho**2 * m),
        T_min=rho**2 / eps**2,
        failure=math.exp(-min(rho**2, 745.0)),
    )


# --- Part I: chapter 5's experiments (laziness against width and output scale) -------------------------


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
    ``star_norm``: ``||theta*||`` of the kernel ridge solution ``theta*`` (:func:`kernel_reference`);
    ``train_star_rnn``: the RNN's training loss at ``theta*`` (the comparator's loss in the
    regret bound); ``convexity_mean``, ``convexity_max``: the approximate-convexity gap
    ``delta_t`` towards ``theta*`` along the RNN's iterates (:class:`PairResult`), its mean over
    the training set and the logged steps, and its largest value;
    ``diverged``: runs stopped by :class:`DivergenceError` (their entries are NaN).
    ``pairs[s][k][j]``: the :class:`PairResult` of each run (None if it diverged).
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


@validate_params("width", "tau", "n_draws")
def worst_case_flip_fraction(
    width: int,
    tau: float,
    *,
    n_draws: int = 20,
    generator: torch.Generator | int | None = None,
) -> float:
    """The largest fraction of one cell's activations that a change of spectral norm ``tau/sqrt(m)`` can flip (chapter 5).

    One cell's pre-activations at initialization are ``g = M u`` with ``M`` of
    i.i.d. ``N(0, 2/m)`` entries and ``|u| = 1``, so ``g_r ~ N(0, 2/m)``. A change
    ``M'`` with ``||M'||_2 <= tau/sqrt(m)`` moves ``g`` by ``M' u``, a vector of norm
    at most ``tau/sqrt(m)``, and flips neuron ``r`` iff it moves ``g_r`` across 0.
    The best a data-dependent ``M' = v u^T`` can do is to spend its budget
    ``|v|^2 <= tau^2/m`` on the neurons with the smallest ``|g_r|``: the fraction
    flipped is ``k/m`` with ``k`` the largest count whose smallest ``|g_r|`` have
    ``sum g_r^2 <= tau^2/m``. Since ``|g_r|`` has density ``~ sqrt(m/pi)`` near 0,
    the ``j``-th smallest is ``~ sqrt(pi) j / m^(3/2)``, so ``k^3 ~ 3 tau^2 m^2 / pi``
    and the fraction is ``~ (3/pi)^(1/3) tau^(2/3) m^(-1/3)`` (ours), against
    ``~ tau / sqrt(m)`` for a random direction. Returns the mean over ``n_draws``
    draws of ``g``.
    """
    gen = as_generator(generator)
    g = torch.randn(
        n_draws, width, generator=gen, dtype=torch.float64
    )
    g2 = (g.abs().sort(dim=1).values * math.sqrt(2 / width)) ** 2
    k = (g2.cumsum(dim=1) <= tau**2 / width).sum(dim=1)
    return float(k.double().mean()) / width


@validate_params(
    "L", "d", "eps_x", "n_eval", "dtype", n_train=Int(2), p=Int(1)
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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
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
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


@validate_params("out_scale", "ridge", return_weights=Bool())
def kernel_reference(
    model: ElmanRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    x_eval: torch.Tensor,
    *,
    out_scale: float,
    ridge: float,
    return_weights: bool = False,
) -> (
    tuple[torch.Tensor, torch.Tensor, float]
    | tuple[
        torch.Tensor,
        torch.Tensor,
        float,
        tuple[torch.Tensor, torch.Tensor],
    ]
):
    """Kernel ridge regression with the scaled tangent kernel ``out_scale^2 K`` (chapter 5).

    The linearized RNN is ``z(x; theta) = out_scale (F_rnn(x; W_0, A_0) + <grad F(x), theta>)``
    with ``theta = (W', A')`` the weight change. Its features are
    ``phi(x) = out_scale grad F(x)`` (kernel ``out_scale^2 K``), so fitting the residual
    ``y - out_scale F_rnn(x; W_0, A_0)`` by :func:`kernel_ridge` minimizes, over ``theta``,

        (1/N) sum_n (z(x_n; theta) - y_n)^2 / 2 + (ridge / 2) ||theta||^2,

    the penalty on the weight change itself (not on ``out_scale theta``). This is the
    penalty that early stopping mimics: gradient descent on ``theta`` with step ``lr``
    for ``T`` steps damps the directions of the empirical feature covariance whose
    eigenvalue is below about ``1 / (lr T)``, as this ridge does with ``ridge = 1/(lr T)``
    (our heuristic, used by :func:`lazy_grid`). The minimizer is
    ``theta* = out_scale sum_n alpha_n grad F(x_n)``.

    Returns the predictions ``z(.; theta*)`` on ``x`` and ``x_eval`` and the norm
    ``||theta*||`` (Frobenius, ``(W', A')`` stacked); with ``return_weights=True`` also
    ``(W*, A*)``, computed by one backward pass through ``sum_n alpha_n F(x_n)``
    (``W*`` (m, m), ``A*`` (m, d)).
    """
    model = _check_model(model)
    x, y = _check_data(model, x, y, "squared")
    x_eval = model._check_input(x_eval, "x_eval")
    with torch.no_grad():
        f0, f0e = (
            out_scale * _output(model.W, model.A, model.B, xx)
            for xx in (x, x_eval)
        )
    K = out_scale**2 * tangent_kernel(model, x)
    alpha, norm = kernel_ridge(K, y - f0, ridge)
    Ke = out_scale**2 * tangent_kernel(model, x_eval, x)
    if not return_weights:
        return f0 + K @ alpha, f0e + Ke @ alpha, norm
    W = model.W.detach().clone().requires_grad_(True)
    A = model.A.detach().clone().requires_grad_(True)
    out = (_output(W, A, model.B.detach(), x) * alpha).sum()
    gW, gA = torch.autograd.grad(out_scale * out, (W, A))
    return f0 + K @ alpha, f0e + Ke @ alpha, norm, (gW, gA)


@validate_params("steps", "lr_scale")
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
    """Train the RNN and its linearization (:func:`train_pair`) for every seed, output scale and width (chapter 5).

    Per seed, one regression task (:func:`regression_task`, streams derived from the
    seed); per (seed, width) one network (``derive(seed, "weights", m)``). The
    learning rate is ``lr = lr_scale / (out_scale^2 mean_n K(x_n, x_n))`` with ``K`` the
    tangent kernel at initialization: the step in *function space* is then the same
    for every width and output scale (P&G's ``eta`` is also ``~ 1/m``, since
    ``K ~ m``). The kernel reference is :func:`kernel_reference` with the
    early-stopping ridge ``mean(out_scale^2 K(x_n, x_n)) / (lr_scale * steps)`` (our
    heuristic: ``steps`` SGD steps filter the kernel's eigenvalues like this ridge).
    Returns a :class:`LazyGrid`.
    """
    widths = [check_int(m, "widths[i]", minimum=1) for m in widths]
    out_scales = [
        check_real(s, "out_scales[i]", low=0.0, low_open=True)
        for s in out_scales
    ]
    seeds = [check_int(s, "seeds[i]", minimum=0) for s in seeds]
    if not widths or not out_scales or not seeds:
        raise ValueError(
            "widths, out_scales and seeds must be non-empty"
        )
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
    pairs = [
        [[None] * len(widths) for _ in out_scales] for _ in seeds
    ]
    cells = [
        (i, k, j)
        for i in range(len(seeds))
        for k in range(len(out_scales))
        for j in range(len(widths))
    ]
    for i, k, j in _progress(cells, progress, "runs"):
        seed, lam, m = seeds[i], out_scales[k], widths[j]
        x, y, xe, ye = regression_task(
            L, d, eps_x, n_train, n_eval, generator=seed
        )
        model = ElmanRNN(
            d, m, generator=derive(seed, "weights", m)
        )
        kbar = float(tangent_kernel_diag(model, x).mean())
        lr = lr_scale / (lam**2 * kbar)
        out["lr"][i, k, j] = lr
        out["init_eval"][i, k, j] = float(
            _loss(predict(model, xe, lam), ye, "squared").mean()
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
            z_star = lam * _output(
                model.W + star[0], model.A + star[1], model.B, x
            )
        vals = dict(
            rel_move=h.dist_W_fro[-1] / h.W0_fro,
            spec_move=math.sqrt(m) * h.dist_W_spec[-1],
            flip_fraction=h.flip_fraction[-1],
            coupling_relative=h.coupling_relative[-1],
            pair_relative=pair.relative_gap[-1],
            train_rnn=h.train_loss[-1],
            train_pseudo=hp.train_loss[-1],
            train_kernel=float(_loss(ftr, y, "squared").mean()),
            eval_rnn=h.eval_loss[-1],
            eval_pseudo=hp.eval_loss[-1],
            eval_kernel=float(_loss(fev, ye, "squared").mean()),
            star_norm=star_norm,
            train_star_rnn=float(
                _loss(z_star, y, "squared").mean()
            ),
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


# --- Part II: next-step models (chapter 11) ---------------------------------------


__all__ += [
    "NextStepHistory",
    "train_next_step",
    "train_stable_and_unstable",
]


@dataclass(frozen=True)
class NextStepHistory:
    """What :func:`train_next_step` recorded (chapter 11).

    ``loss``: the minibatch loss before each step (steps,); ``eval_steps``: the
    steps after which the validation metric ``valid`` and the certified
    contraction constant ``lam`` (``||W||_2`` or the LSTM's ``lambda_inf``) were
    measured; ``seconds``: wall time of the run; ``best_step``: the evaluation
    step whose weights the model holds at the end (the best validation metric
    when ``keep_best`` and a validation split were given, else the last step).
    """

    loss: np.ndarray
    eval_steps: np.ndarray
    valid: np.ndarray
    lam: np.ndarray
    seconds: float
    stable: bool
    best_step: int = 0


def _minibatch(
    seqs: list,
    batch_size: int,
    window: int | None,
    gen: torch.Generator,
    state: dict,
) -> list:
    """Sequences for one step: epochs of a seeded permutation; with ``window``, a random crop of window + 1 steps."""
    if not state.get("order"):
        state["order"] = torch.randperm(
            len(seqs), generator=gen
        ).tolist()
    take, state["order"] = (
        state["order"][:batch_size],
        state["order"][batch_size:],
    )
    out = []
    for i in take:
        s = seqs[i]
        if window is not None and s.shape[0] > window + 1:
            start = int(
                torch.randint(
                    0, s.shape[0] - window, (1,), generator=gen
                )
            )
            s = s[start : start + window + 1]
        out.append(s)
    return out


@validate_params(
    "steps",
    "batch_size",
    "lr",
    "lam",
    "f_max",
    "clip",
    "window",
    "eval_every",
    optimizer=Choice("adam", "sgd"),
    stable=Bool(),
    keep_best=Bool(),
)
def train_next_step(
    model: NextStepModel,
    train: Sequence[np.ndarray],
    valid: Sequence[np.ndarray] | None = None,
    *,
    steps: int,
    batch_size: int = 16,
    lr: float = 1e-2,
    optimizer: str = "adam",
    clip: float | None = 1.0,
    stable: bool = False,
    lam: float = 0.99,
    f_max: float = 0.605,
    window: int | None = None,
    eval_every: int | None = None,
    keep_best: bool = True,
    generator: torch.Generator | int | None = None,
    progress: bool = True,
) -> NextStepHistory:
    """Train a next-step model in place, unconstrained or projected onto the stable set (chapter 11).

    Each of ``steps`` optimizer steps takes ``batch_size`` training sequences
    (epochs of a seeded permutation; with ``window``, a random crop of
    ``window + 1`` steps of each, for long texts), computes the mean loss
    (NLL per frame, or bits per character) over the predicted steps, clips the
    gradient norm at ``clip``, and steps Adam or SGD with ``lr``. With
    ``stable=True`` the model is projected (:meth:`NextStepModel.project_`: RNN
    ``||W||_2 <= lam``, LSTM row-wise projection with ``f_max``) before training
    and after every step: projected gradient descent, as Miller & Hardt's code
    (their fork of locuslab/TCN) does. Every ``eval_every`` steps (and at the end) the validation
    metric and the certified constant are recorded. With ``keep_best`` (the
    default) and a ``valid`` split, the model ends with the weights of the
    evaluation step of lowest validation metric (early stopping by model
    selection, as the TCN benchmark code and the authors' fork of it do: they
    report the test metric at the best validation epoch); its step is
    ``history.best_step``. The projected model is stable at every evaluation
    step, so the selected one is too.

    Raises :class:`DivergenceError` naming the step and ``lr`` if the loss, a
    gradient or a weight stops being finite.
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(
            f"model must be a NextStepModel, got {type(model).__name__}"
        )
    if (
        isinstance(train, (str, bytes))
        or not isinstance(train, Sequence)
        or len(train) == 0
    ):
        raise ValueError(
            "train must be a non-empty list of sequences"
        )
    eval_every = steps if eval_every is None else eval_every
    gen = derive(generator, "minibatches")
    best = {"metric": math.inf, "step": 0, "state": None}
    train = [np.asarray(s) for s in train]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = (
        torch.optim.Adam(params, lr=lr)
        if optimizer == "adam"
        else torch.optim.SGD(params, lr=lr)
    )
    if stable:
        model.project_(lam=lam, f_max=f_max)
    losses, eval_steps, valid_hist, lam_hist, state = (
        [],
        [],
        [],
        [],
        {},
    )
    t0 = time.perf_counter()
    label = f"{model.kind} ({'stable' if stable else 'unstable'})"
    for step in tqdm(
        range(1, steps + 1),
        desc=label,
        disable=not progress,
        leave=False,
    ):
        inputs, targets, mask = next_step_batch(
            _minibatch(train, batch_size, window, gen, state),
            dtype=model.dtype,
        )
        logits = model(inputs)
        if not bool(torch.isfinite(logits).all()):
            raise DivergenceError(
                f"{label}: the predictions became NaN/inf at step {step} with lr = {lr:g}; lower lr or clip the gradient"
            )
        loss = readout_loss(model, logits, targets, mask, "mean")
        opt.zero_grad()
        loss.backward()
        # one finiteness test each for the loss and the gradient (through its
        # norm), and one for the weights
        grads = [p.grad for p in params if p.grad is not None]
        grad_norm = torch.linalg.vector_norm(
            torch.stack(torch._foreach_norm(grads))
        )
        if not bool(torch.isfinite(loss + grad_norm)):
            raise DivergenceError(
                f"{label}: the loss or its gradient became NaN/inf at step {step} (loss {float(loss.detach()):.3g}) "
                f"with lr = {lr:g}; lower lr or clip the gradient"
            )
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        if stable:
            model.project_(lam=lam, f_max=f_max)
        if not bool(
            torch.isfinite(
                torch.stack(
                    torch._foreach_norm(
                        [p.detach() for p in params]
                    )
                ).sum()
            )
        ):
            raise DivergenceError(
                f"{label}: the weights became NaN/inf at step {step} with lr = {lr:g}; lower lr"
            )
        losses.append(float(loss.detach()))
        if step % eval_every == 0 or step == steps:
            eval_steps.append(step)
            valid_hist.append(
                evaluate(model, valid)
                if valid is not None
                else math.nan
            )
            lam_hist.append(model.worst_case_lambda())
            if (
                keep_best
                and valid is not None
                and valid_hist[-1] < best["metric"]
            ):
                best.update(
                    metric=valid_hist[-1],
                    step=step,
                    state={
                        k: v.detach().clone()
                        for k, v in model.state_dict().items()
                    },
                )
    if best["state"] is not None and best["step"] != steps:
        model.load_state_dict(best["state"])
    return NextStepHistory(
        np.array(losses),
        np.array(eval_steps),
        np.array(valid_hist),
        np.array(lam_hist),
        time.perf_counter() - t0,
        bool(stable),
        best_step=int(best["step"] or steps),
    )


def train_stable_and_unstable(
    kind: str,
    train: Sequence[np.ndarray],
    valid: Sequence[np.ndarray] | None = None,
    *,
    input_dim: int,
    hidden_dim: int,
    readout: str = "bernoulli",
    generator: torch.Generator | int | None = None,
    **train_kwargs,
) -> dict[str, tuple[NextStepModel, NextStepHistory]]:
    """Train the same next-step model twice, unconstrained and projected (chapter 11).

    Both runs start from the same initial weights (drawn from ``generator``'s
    stream ``"init"``, read-out bias at the training marginals), see the same
    minibatches (stream ``"data"``) and use the same optimizer and number of
    steps (``train_kwargs`` of :func:`train_next_step`); only ``stable`` differs.
    Returns ``{"unstable": (model, history), "stable": (model, history)}``.
    """
    if "stable" in train_kwargs:
        raise ValueError(
            "train_kwargs must not set stable: both variants are trained"
        )
    out = {}
    for variant in ("unstable", "stable"):
        model = NextStepModel(
            kind,
            input_dim,
            hidden_dim,
            readout=readout,
            generator=derive(generator, "init"),
        )
        model.init_output_bias_(train)
        history = train_next_step(
            model,
            train,
            valid,
            stable=variant == "stable",
            generator=derive(generator, "data"),
            **train_kwargs,
        )
        out[variant] = (model, history)
    return out
