"""Part I's training: SGD on the RNN and on its linearization (chapters 5-7).

Stochastic gradient descent in the lazy regime of
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
  ``TrainResult.history`` is a :class:`TrainHistory`. The settings ``out_scale``
  to ``progress`` are the fields of :class:`SGD`, declared and validated there once,
  and shared by the three entry points.
* :func:`train_pseudo`: the same SGD, on the same samples in the same order
  (same ``generator``), for the *linearized* RNN
  ``out_scale * (F_rnn(x; W_0, A_0) + F(x; W', A'))`` with ``F`` the
  pseudo-network of eq. (4): linear in ``(W', A')``, so the objective is convex.
* :func:`train_pair`: both at once, plus the gap between the two trained
  predictors on held-out inputs; :func:`convexity_gap`, the approximate-convexity
  gap along the RNN's iterates.
* :func:`predict` ``(model, x, out_scale)``: ``out_scale * F_rnn(x)``.
* :func:`objective`: the per-sample loss ``G(z, y)``: ``"squared"``
  (``(z - y)^2 / 2`` averaged over outputs; 1-Lipschitz only where
  ``|z - y| <= 1``) or ``"logistic"`` (``log(1 + exp(-y z))`` averaged over
  outputs, labels in {-1, +1}; convex, 1-Lipschitz, ``G(0, y) = log 2``).
* :func:`theorem_3_1_constants` and :func:`worst_case_flip_fraction`: what the
  theorem prescribes, and how many activation patterns a lazy change can flip.

The tangent kernel and the kernel ridge reference live in :mod:`rnnlib.ntk`,
chapter 5's sweeps in ``rnnlib.experiments.ch05``, and Part II's next-step
training (chapter 11) in :mod:`rnnlib.next_step`. The forward pass is the Elman
scan of :mod:`rnnlib.elman` (:func:`rnnlib.elman.elman_last_state`).

A loss that stops being finite raises :class:`DivergenceError` naming the
step and the learning rate. With ``batch_size <= 8`` the loops run with one
intra-op torch thread (restored afterwards): small steps are latency-bound,
and extra threads only slowed them down (30x on a shared 2-core machine).
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
from dataclasses import MISSING, dataclass, field, fields

import numpy as np
import torch

from ._linalg import spectral_norm
from ._progress import progress_bar
from ._recurrence import previous_states, tangent
from ._validation import (
    Choice,
    DivergenceError,
    Int,
    Model,
    Real,
    Tensor,
    as_generator,
    check_model,
    check_tensor,
    validate_params,
)
from .elman import (
    INPUTS,
    ElmanRNN,
    elman_hidden_states,
    elman_last_state,
)

__all__ = [
    "DivergenceError",
    "LOSSES",
    "objective",
    "predict",
    "TrainHistory",
    "TrainResult",
    "SGD",
    "train_rnn",
    "train_pseudo",
    "PairResult",
    "train_pair",
    "convexity_gap",
    "theorem_3_1_constants",
    "worst_case_flip_fraction",
    "sgd_order",
]

#: The losses G(z, y) the Part I loops know.
LOSSES = ("squared", "logistic")


# --- losses and predictions ---------------------------------------------------------------------


def _loss(z: torch.Tensor, y: torch.Tensor, loss: str) -> torch.Tensor:
    """Per-sample G(z, y), (batch,), no validation."""
    if loss == "squared":
        return 0.5 * (z - y).square().mean(dim=1)
    return torch.nn.functional.softplus(-y * z).mean(dim=1)


@validate_params(
    loss=Choice(*LOSSES),
    z=Tensor(shape=("batch", "out")),
    y=Tensor(shape=("batch", "out")),
)
def objective(z: torch.Tensor, y: torch.Tensor, loss: str = "squared") -> torch.Tensor:
    """The per-sample loss G(z, y) of the objective (chapters 5-6); returns (batch,).

    ``z`` is the scaled output ``out_scale * F_rnn(x)``, (batch, d_out), and
    ``y`` the labels, same shape. ``"squared"``: ``mean_o (z_o - y_o)^2 / 2``.
    ``"logistic"``: ``mean_o log(1 + exp(-y_o z_o))`` with labels in {-1, +1};
    convex and 1-Lipschitz in ``z`` (Euclidean norm), ``G(0, y) = log 2``,
    so it satisfies the paper's assumptions on G (Sec. 3).
    """
    if loss == "logistic":
        _check_signs(y, "y")
    return _loss(z, y, loss)


def _check_signs(y: torch.Tensor, name: str) -> None:
    if not bool(((y == 1) | (y == -1)).all()):
        raise ValueError(f"{name} must hold labels in {{-1, +1}} for the logistic loss")


def _output(
    W: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    x: torch.Tensor,
) -> torch.Tensor:
    """F_rnn(x) = B h^(L), (batch, d_out): rnnlib.elman's scan (it checks types and shapes only)."""
    return elman_last_state(W, A, x) @ B.transpose(0, 1)


@validate_params("out_scale", model=Model(ElmanRNN, finite=False), x=INPUTS)
def predict(model: ElmanRNN, x: torch.Tensor, out_scale: float) -> torch.Tensor:
    """``out_scale * F_rnn(x)`` without gradients (chapters 5-7); returns (batch, d_out)."""
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
    * ``coupling_relative``: that gap divided by ``mean |out_scale F(W_t - W_0)|``;
    * ``convexity_mean``, ``convexity_max``: with a ``comparator`` ``theta*``
      (:func:`train_rnn`, :func:`train_pair`), the mean and the largest over the
      *training* inputs of the approximate-convexity gap ``delta_t`` of the RNN's
      iterate towards it (:func:`convexity_gap`); empty without one.

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
    convexity_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    convexity_max: np.ndarray = field(default_factory=lambda: np.zeros(0))


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
        x = self.init.check_input(x)
        return self.out_scale * _linearized(self.init, self.dW, self.dA, x)


# --- the pieces of the linearized network ---------------------------------------------------------


def _states(W, A, x):
    """h^(0..L-1) and D^(1..L) (as floats) at weights (W, A); no grad."""
    with torch.no_grad():
        h = elman_hidden_states(W, A, x)
        h_prev = previous_states(h)
        return h_prev, (h > 0).to(x.dtype), h


def _linearized(init: ElmanRNN, dW, dA, x) -> torch.Tensor:
    """F_rnn(x; W_0, A_0) + F(x; dW, dA): the first-order Taylor expansion, (batch, d_out)."""
    W, A, B = init.W.detach(), init.A.detach(), init.B
    h_prev, D, h = _states(W, A, x)
    with torch.no_grad():
        return h[:, -1] @ B.transpose(0, 1) + tangent(W, B, h_prev, D, x, dW, dA)


def _convexity_gap(init: ElmanRNN, W, A, W_star, A_star, x, out_scale):
    """out_scale |F(W*) - F(W) - <grad F(W), (W*, A*) - (W, A)>| per sequence, (N,); no grad."""
    B = init.B
    with torch.no_grad():
        h_prev, D, h = _states(W, A, x)
        f = h[:, -1] @ B.transpose(0, 1)
        lin = tangent(W, B, h_prev, D, x, W_star - W, A_star - A)
        f_star = _output(W_star, A_star, B, x)
        return out_scale * (f_star - f - lin).abs().sum(dim=1)


class _ConvexityLog:
    """The ``on_log`` hook of :func:`_sgd` that logs ``delta_t`` of the RNN's iterate towards a comparator.

    ``comparator`` is a weight change ``theta* = (W*, A*)`` ((m, m), (m, d)) from
    the initialization, checked here once; ``None`` logs nothing.
    """

    def __init__(self, cfg: _Settings, comparator):
        init = cfg.model
        self.cfg, self.star = cfg, None
        self.mean: list[float] = []
        self.max: list[float] = []
        if comparator is None:
            return
        if not isinstance(comparator, (tuple, list)) or len(comparator) != 2:
            raise TypeError(
                f"comparator must be a pair (W*, A*) of tensors, got {type(comparator).__name__}"
            )
        m, dd = init.W.shape[0], init.A.shape[1]
        self.star = (
            init.W.detach()
            + check_tensor(comparator[0], "comparator[0]", shape=(m, m)).to(
                init.W.dtype
            ),
            init.A.detach()
            + check_tensor(comparator[1], "comparator[1]", shape=(m, dd)).to(
                init.A.dtype
            ),
        )

    def __call__(self, runs) -> None:
        if self.star is None:
            return
        rnn = runs[0]
        delta = _convexity_gap(
            self.cfg.model,
            rnn.W.detach(),
            rnn.A.detach(),
            *self.star,
            self.cfg.x,
            self.cfg.sgd.out_scale,
        )
        self.mean.append(float(delta.mean()))
        self.max.append(float(delta.max()))

    def attach(self, history: TrainHistory) -> None:
        """Store the logged gaps in the RNN's history."""
        history.convexity_mean = np.asarray(self.mean)
        history.convexity_max = np.asarray(self.max)


# --- validation shared by the loops ---------------------------------------------------------------


def _check_data(
    model: ElmanRNN,
    x: object,
    y: object,
    loss: str,
    names=("x", "y"),
) -> tuple[torch.Tensor, torch.Tensor]:
    x = model.check_input(x, names[0])
    y = check_tensor(y, names[1], shape=(x.shape[0], model.output_dim))
    if y.dtype != x.dtype:
        raise TypeError(f"{names[1]} has dtype {y.dtype} but {names[0]} has {x.dtype}")
    if loss == "logistic":
        _check_signs(y, names[1])
    return x, y


@dataclass(frozen=True)
class SGD:
    """The settings of one SGD run of Part I (P&G Sec. 3; chapters 5-7), declared once.

    The keywords that :func:`train_rnn`, :func:`train_pseudo` and :func:`train_pair`
    share: the output scale ``out_scale`` (a), the step ``lr`` (eta), the number of
    updates ``steps`` (T), the loss G (``"squared"``, or ``"logistic"`` on labels in
    {-1, +1}), the minibatch size ``batch_size`` (1 is the paper's algorithm; at most
    the number of samples), the logging period ``log_every`` (default ``steps // 10``)
    and ``progress`` (a ``tqdm.auto`` bar). Each entry point takes them as keywords and
    builds this record, which validates them.
    """

    out_scale: float
    lr: float
    steps: int
    loss: str = "squared"
    batch_size: int = 1
    log_every: int | None = None
    progress: bool = False


SGD.__init__ = validate_params(
    "out_scale",
    "lr",
    "steps",
    "batch_size",
    "log_every",
    "progress",
    loss=Choice(*LOSSES),
)(SGD.__init__)


@dataclass(frozen=True)
class _Settings:
    """One validated SGD run of the Part I loops: the model, its data and its :class:`SGD`."""

    model: ElmanRNN
    x: torch.Tensor
    y: torch.Tensor
    sgd: SGD
    generator: torch.Generator | int | None
    x_eval: torch.Tensor | None
    y_eval: torch.Tensor | None
    log_every: int

    @property
    def x_probe(self) -> torch.Tensor:
        """The inputs of the flips, the coupling and the pair gap: ``x_eval`` if given, else ``x``."""
        return self.x_eval if self.x_eval is not None else self.x


def _settings(model, x, y, sgd: SGD, generator, x_eval, y_eval) -> _Settings:
    """The checks of a Part I SGD run beyond its :class:`SGD`: the model, the data, ``batch_size <= N``."""
    model = check_model(model, ElmanRNN)
    x, y = _check_data(model, x, y, sgd.loss)
    if sgd.batch_size > x.shape[0]:
        raise ValueError(f"batch_size must be <= {x.shape[0]}, got {sgd.batch_size}")
    if (x_eval is None) != (y_eval is None):
        raise ValueError("x_eval and y_eval must be given together (or neither)")
    if x_eval is not None:
        x_eval, y_eval = _check_data(
            model, x_eval, y_eval, sgd.loss, ("x_eval", "y_eval")
        )
    log_every = sgd.log_every if sgd.log_every is not None else max(1, sgd.steps // 10)
    return _Settings(model, x, y, sgd, generator, x_eval, y_eval, log_every)


_P = inspect.Parameter


def _sgd_entry(fn):
    """A Part I SGD entry point from ``fn(cfg, **own)``: its public signature, declared once.

    The signature is ``(model, x, y, *, <the fields of SGD>, generator=None,
    x_eval=None, y_eval=None, <fn's own keywords>)``; a call builds the
    :class:`SGD` (which validates the settings), then :func:`_settings`, and runs
    ``fn`` on them. The declared constraints are :class:`SGD`'s.
    """
    own = list(inspect.signature(fn).parameters.values())[1:]
    shared = [
        _P(f.name, _P.KEYWORD_ONLY, annotation=f.type)
        if f.default is MISSING
        else _P(f.name, _P.KEYWORD_ONLY, default=f.default, annotation=f.type)
        for f in fields(SGD)
    ]
    data = [
        _P(name, _P.KEYWORD_ONLY, default=None, annotation=kind)
        for name, kind in (
            ("generator", "torch.Generator | int | None"),
            ("x_eval", "torch.Tensor | None"),
            ("y_eval", "torch.Tensor | None"),
        )
    ]
    positional = [
        _P("model", _P.POSITIONAL_OR_KEYWORD, annotation="ElmanRNN"),
        _P("x", _P.POSITIONAL_OR_KEYWORD, annotation="torch.Tensor"),
        _P("y", _P.POSITIONAL_OR_KEYWORD, annotation="torch.Tensor"),
    ]
    sig = inspect.Signature(
        positional + shared + data + own,
        return_annotation=inspect.signature(fn).return_annotation,
    )

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        a = sig.bind(*args, **kwargs)
        a.apply_defaults()
        a = a.arguments
        sgd = SGD(**{f.name: a[f.name] for f in fields(SGD)})
        cfg = _settings(
            a["model"], a["x"], a["y"], sgd, a["generator"], a["x_eval"], a["y_eval"]
        )
        return fn(cfg, **{p.name: a[p.name] for p in own})

    entry.__signature__ = sig
    entry.__rnnlib_params__ = dict(SGD.__init__.__rnnlib_params__)
    return entry


@validate_params("steps", "batch_size", "generator", n=Int(1))
def sgd_order(
    n: int,
    steps: int,
    batch_size: int = 1,
    generator: torch.Generator | int | None = None,
) -> torch.Tensor:
    """The sample indices of P&G's SGD, (steps, batch_size): uniform with replacement (chapters 5-6).

    The one definition of the order: :func:`train_rnn`, :func:`train_pseudo` and
    :func:`train_pair` draw theirs with it, so :func:`rnnlib.ntk.kernel_sgd` given
    ``sgd_order(N, steps, batch_size, generator)`` sees the same samples in the same
    order as the network trained with that ``generator``. ``n``: the number of
    training samples.
    """
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
    return spectral_norm(t, exact_up_to=64, n_iter=30, generator=gen)


class _Logger:
    """Collects the logged quantities of :class:`TrainHistory`."""

    def __init__(self, init: ElmanRNN, cfg: _Settings, kind: str):
        self.init, self.kind = init, kind
        self.x, self.y = cfg.x, cfg.y
        self.x_eval, self.y_eval = cfg.x_eval, cfg.y_eval
        self.out_scale, self.loss = cfg.sgd.out_scale, cfg.sgd.loss
        self.xp = cfg.x_probe  # inputs for flips and coupling
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
                raise _diverged(step, lr, train, "the training loss")
            if self.kind == "rnn":
                h = elman_hidden_states(W, A, self.xp)
                flips = float(((h > 0) != self.active0).double().mean())
                pseudo = tangent(
                    init.W.detach(),
                    init.B,
                    self.h_prev_p,
                    self.D_p,
                    self.xp,
                    dW,
                    dA,
                )
                change = h[:, -1] @ init.B.transpose(0, 1) - self.f0_p
                gap = self.out_scale * float((change - pseudo).abs().mean())
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


# --- the loops --------------------------------------------------------------------------------------


class _Run:
    """One trained predictor (the RNN or its linearization) inside the lockstep loop."""

    def __init__(self, kind: str, init: ElmanRNN, cfg: _Settings):
        self.kind = kind
        self.W = init.W.detach().clone().requires_grad_(True)
        self.A = init.A.detach().clone().requires_grad_(True)
        self.logger = _Logger(init, cfg, kind)

    def result(self, init: ElmanRNN, step_loss, cfg: _Settings) -> TrainResult:
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
            cfg.sgd.out_scale,
            cfg.sgd.lr,
            cfg.sgd.loss,
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


def _sgd(kinds: list[str], cfg: _Settings, on_log=None) -> list[TrainResult]:
    """:func:`_sgd_loop` with one intra-op thread for batches of up to 8 samples (see :class:`_OneThread`)."""
    if cfg.sgd.batch_size <= 8:
        with _OneThread():
            return _sgd_loop(kinds, cfg, on_log)
    return _sgd_loop(kinds, cfg, on_log)


def _sgd_loop(kinds: list[str], cfg: _Settings, on_log=None) -> list[TrainResult]:
    """SGD for each of ``kinds`` ("rnn", "pseudo") in lockstep, on one sample order."""
    x, y, out_scale, lr, loss, steps = (
        cfg.x,
        cfg.y,
        cfg.sgd.out_scale,
        cfg.sgd.lr,
        cfg.sgd.loss,
        cfg.sgd.steps,
    )
    init = copy.deepcopy(cfg.model)
    for p in init.parameters():
        p.requires_grad_(False)
    B, W0, A0 = init.B, init.W, init.A
    order = sgd_order(x.shape[0], steps, cfg.sgd.batch_size, cfg.generator)
    runs = [_Run(k, init, cfg) for k in kinds]
    if (
        "pseudo" in kinds
    ):  # h, D and F_rnn(W_0) of every training sequence, computed once
        h_prev, D, h = _states(W0, A0, x)
        f0 = h[:, -1] @ B.transpose(0, 1)
    step_loss = np.empty((len(runs), steps))

    def log(step):
        for run in runs:
            run.logger.log(step, run.W.detach(), run.A.detach(), lr)
        if on_log is not None:
            on_log(runs)

    log(0)
    for t in progress_bar(
        range(steps),
        enabled=cfg.sgd.progress,
        desc="SGD (" + ", ".join(kinds) + ")",
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
                    + tangent(
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
        if (t + 1) % cfg.log_every == 0 or t + 1 == steps:
            log(t + 1)
    return [run.result(init, step_loss[i], cfg) for i, run in enumerate(runs)]


@_sgd_entry
def train_rnn(
    cfg: _Settings,
    *,
    comparator: tuple[torch.Tensor, torch.Tensor] | None = None,
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
    ``tqdm.auto`` bar. ``comparator``: a weight change ``theta* = (W*, A*)``
    ((m, m), (m, d)); if given, the approximate-convexity gap ``delta_t`` of the
    iterates towards it is logged on the training inputs
    (``TrainHistory.convexity_mean``, ``convexity_max``; :func:`convexity_gap`).
    """
    convexity = _ConvexityLog(cfg, comparator)
    run = _sgd(["rnn"], cfg, convexity)[0]
    convexity.attach(run.history)
    return run


@_sgd_entry
def train_pseudo(
    cfg: _Settings,
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
    return _sgd(["pseudo"], cfg)[0]


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
    convexity_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    convexity_max: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def relative_gap(self) -> np.ndarray:
        """``output_gap / output_change`` (NaN at step 0, where nothing has changed)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                self.output_change > 0,
                self.output_gap / self.output_change,
                np.nan,
            )


@_sgd_entry
def train_pair(
    cfg: _Settings,
    *,
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
    init, xp, out_scale = cfg.model, cfg.x_probe, cfg.sgd.out_scale
    convexity = _ConvexityLog(cfg, comparator)
    with torch.no_grad():
        z0 = out_scale * _output(init.W, init.A, init.B, xp)
    gaps, changes = [], []

    def on_log(runs):
        rnn, pseudo = runs
        convexity(runs)
        with torch.no_grad():
            zr = out_scale * _output(rnn.W, rnn.A, init.B, xp)
            zp = out_scale * _linearized(init, pseudo.W - init.W, pseudo.A - init.A, xp)
        gaps.append(float((zr - zp).abs().mean()))
        changes.append(float((zp - z0).abs().mean()))

    rnn, pseudo = _sgd(["rnn", "pseudo"], cfg, on_log)
    convexity.attach(rnn.history)
    return PairResult(
        rnn,
        pseudo,
        rnn.history.steps_logged,
        np.asarray(gaps),
        np.asarray(changes),
        rnn.history.convexity_mean,
        rnn.history.convexity_max,
    )


@validate_params("out_scale", model=Model(ElmanRNN, finite=False), x=INPUTS)
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
    return _convexity_gap(model, *pairs[0], *pairs[1], x, out_scale)


# --- Part I: what Theorem 3.1 prescribes, and how many patterns a lazy change can flip ----------------


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


@validate_params("width", "tau", "n_draws", "generator")
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
    g = torch.randn(n_draws, width, generator=gen, dtype=torch.float64)
    g2 = (g.abs().sort(dim=1).values * math.sqrt(2 / width)) ** 2
    k = (g2.cumsum(dim=1) <= tau**2 / width).sum(dim=1)
    return float(k.double().mean()) / width
