"""Truncated recurrent models, for inference and for training (chapters 9-11; Miller & Hardt 2019, Section 2).

The *k-step truncated model* of a recurrent model ``s_t = phi_w(s_{t-1}, x_t)``
restarts from the zero state k steps back::

    s^k_{t-k} = 0,   s^k_{r} = phi_w(s^k_{r-1}, x_r)  (r = t-k+1, ..., t),   y^k_t = C h^k_t

so ``y^k_t`` depends only on ``x_{t-k+1}, ..., x_t``: a feed-forward
(autoregressive) model of depth k. For ``t <= k`` it equals the full model.

* Inference (chapter 9): if ``phi_w`` is lambda-contractive in ``s``, L-Lipschitz
  in ``x``, ``phi_w(0, 0) = 0`` and ``||x_t|| <= B``, then
  ``||s_t - s^k_t|| <= lambda^k L B / (1 - lambda)`` (:func:`inference_bound`).
* Training (chapter 10): gradient descent on the full and on the truncated
  loss from the same start stays close, ``||w_N - w^k_N|| <= eps`` when
  ``k >> log(N / eps)``, with a step size ``alpha / i``
  (:func:`train_full_and_truncated`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._progress import progress_bar
from ._validation import (
    NONNEGATIVE,
    OPEN_UNIT,
    PARAMS,
    POSITIVE,
    Bool,
    Choice,
    DivergenceError,
    Ints,
    validate_params,
)
from .dynamical import (
    INPUTS,
    MODEL,
    OUTPUTS,
    LinearSystem,
    RecurrentModel,
    SimpleRNN,
)
from .stability import project_spectral_

#: The step-size schedules of :func:`train_full_and_truncated`: ``lr``, or ``lr / i`` at step i.
SCHEDULES = Choice("constant", "decay")

__all__ = [
    "DivergenceError",
    "truncated_states",
    "inference_bound",
    "k_for_epsilon",
    "truncation_errors",
    "sequence_loss",
    "gradient_difference",
    "TrainingPair",
    "train_full_and_truncated",
    "weight_distance_sweep",
    "growth_recursion_bound",
    "batched_gd_weights",
]


@validate_params("k", model=MODEL, x=INPUTS)
def truncated_states(model: RecurrentModel, x: torch.Tensor, k: int) -> torch.Tensor:
    """The states ``s^k_1, ..., s^k_T`` of the k-step truncated model, for every t at once (chapter 9).

    ``s^k_t`` is the state after running the model from ``0`` on
    ``x_{max(1, t-k+1)}, ..., x_t``. All T windows run as one batch of size
    ``batch * T`` for k steps, so the cost is O(T k) steps' work, with k
    sequential steps. Windows that would start before ``t = 1`` are masked
    (their state stays 0 until the sequence starts), so ``s^k_t = s_t`` for
    ``t <= k`` even for models with ``phi(0, 0) != 0``. Differentiable in the
    weights. Returns (batch, T, state_dim).
    """
    return _truncated_states(model, x, k)


def _truncated_states(model: RecurrentModel, x: torch.Tensor, k: int) -> torch.Tensor:
    """:func:`truncated_states` on validated arguments."""
    batch, T, n = x.shape
    k = min(k, T)
    padded = torch.cat([x.new_zeros(batch, k - 1, n), x], dim=1)  # (batch, T+k-1, n)
    windows = (
        padded.unfold(1, k, 1).permute(0, 1, 3, 2).reshape(batch * T, k, n)
    )  # window t: x_{t-k+1..t}
    t = torch.arange(T).unsqueeze(1)
    j = torch.arange(k).unsqueeze(0)
    valid = (t + j >= k - 1).repeat(
        batch, 1
    )  # (batch*T, k): absolute time t-k+1+j >= 0
    s = model.initial_state(batch * T)
    for step in range(k):
        s_new = model.step(s, windows[:, step])
        s = (
            s_new
            if step >= k - 1 or bool(valid[:, step].all())
            else torch.where(valid[:, step : step + 1], s_new, s)
        )
    return s.reshape(batch, T, model.state_dim)


@validate_params("k", lam=OPEN_UNIT, L=NONNEGATIVE, B=NONNEGATIVE)
def inference_bound(lam: float, k: int, L: float, B: float) -> float:
    """The inference truncation bound ``lambda^k L B / (1 - lambda)`` of chapter 9.

    ``lam`` in (0, 1): contraction constant in the state; ``k >= 1``; ``L >= 0``:
    Lipschitz constant in the input; ``B >= 0``: bound on ``||x_t||``. ``lam = 0`` is
    refused, though the formula would give 0 there, which is right (a 0-contractive map
    ignores its state, so every truncation with ``k >= 1`` is exact): the book's contraction
    constants are certificates such as ``||W||_2``, and a certificate of 0 means a zero
    recurrent matrix, a feed-forward model with nothing to truncate; refusing it keeps the
    domain of the theorem (``0 < lambda < 1``) and that of :func:`k_for_epsilon`, whose
    ``log(1 / lambda)`` needs ``lambda > 0``, the same.
    """
    return lam**k * L * B / (1 - lam)


@validate_params(
    eps=POSITIVE,
    lam=OPEN_UNIT,
    L=NONNEGATIVE,
    B=NONNEGATIVE,
    L_f=NONNEGATIVE,
)
def k_for_epsilon(eps: float, lam: float, L: float, B: float, L_f: float = 1.0) -> int:
    """The smallest k >= 1 with ``L_f lambda^k L B / (1 - lambda) <= eps`` (chapter 9).

    ``k = ceil(log(L_f L B / ((1 - lambda) eps)) / log(1 / lambda))``, at least 1;
    then ``||y_t - y^k_t|| <= eps`` for an ``L_f``-Lipschitz read-out.
    """
    scale = L_f * L * B / (1 - lam)
    if scale <= eps:
        return 1
    k = max(1, math.ceil(math.log(scale / eps) / math.log(1 / lam)))
    while (
        k > 1 and L_f * lam ** (k - 1) * L * B / (1 - lam) <= eps
    ):  # guard against rounding up too far
        k -= 1
    while L_f * lam**k * L * B / (1 - lam) > eps:
        k += 1
    return k


@validate_params(model=MODEL, x=INPUTS, ks=Ints(1))
def truncation_errors(
    model: RecurrentModel, x: torch.Tensor, ks: Sequence[int]
) -> np.ndarray:
    """``||s_t - s^k_t||_2`` for each k in ``ks``, maximized over the batch (chapter 9).

    Returns an array (len(ks), T): row i is the error of the ``ks[i]``-step truncation at each t.
    """
    with torch.no_grad():
        full = model(x)
        out = [
            (full - _truncated_states(model, x, k))
            .norm(dim=2)
            .amax(dim=0)
            .double()
            .numpy()
            for k in ks
        ]
    return np.stack(out)


@validate_params("k", model=MODEL, x=INPUTS, y=OUTPUTS, last_only=Bool())
def sequence_loss(
    model: RecurrentModel,
    x: torch.Tensor,
    y: torch.Tensor,
    k: int | None = None,
    *,
    last_only: bool = False,
) -> torch.Tensor:
    """The squared loss ``p_T`` of the full model, or ``p^k_T`` of the k-step truncated one (chapters 9, 10).

    ``p_T = mean over batch and t of 1/2 ||C h_t - y_t||^2``, with ``h`` from the
    full model (``k=None``) or from :func:`truncated_states`; with
    ``last_only`` only ``t = T`` counts. ``y`` has shape (batch, T, output_dim).
    """
    return _sequence_loss(model, x, y, k, last_only)


def _sequence_loss(
    model: RecurrentModel,
    x: torch.Tensor,
    y: torch.Tensor,
    k: int | None,
    last_only: bool,
) -> torch.Tensor:
    """:func:`sequence_loss` on validated arguments."""
    if last_only:
        T = x.shape[1]
        xs = x if k is None else x[:, max(0, T - k) :]
        s = model.initial_state(x.shape[0])
        for t in range(xs.shape[1]):
            s = model.step(s, xs[:, t])
        return 0.5 * ((model.output(s) - y[:, -1]) ** 2).sum(dim=1).mean()
    states = model(x) if k is None else _truncated_states(model, x, k)
    return 0.5 * ((model.output(states) - y) ** 2).sum(dim=2).mean()


def _flat_grad(model: RecurrentModel, loss: torch.Tensor) -> torch.Tensor:
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, params)])


@validate_params(model=MODEL, x=INPUTS, y=OUTPUTS, ks=Ints(1), last_only=Bool())
def gradient_difference(
    model: RecurrentModel,
    x: torch.Tensor,
    y: torch.Tensor,
    ks: Sequence[int],
    *,
    last_only: bool = True,
) -> np.ndarray:
    """``||grad p_T(w) - grad p^k_T(w)||_2`` over all trainable weights, for each k in ``ks`` (chapter 10).

    The gradient-difference lemma (a reconstruction) says this is at most
    ``gamma k lambda^k`` for a lambda-stable model. Returns an array (len(ks),).
    """
    full = _flat_grad(model, _sequence_loss(model, x, y, None, last_only))
    out = [
        float(
            (
                full
                - _flat_grad(
                    model,
                    _sequence_loss(model, x, y, k, last_only),
                )
            ).norm()
        )
        for k in ks
    ]
    return np.array(out)


@dataclass(frozen=True)
class TrainingPair:
    """Two gradient-descent runs from the same start (chapter 10).

    ``full[i]`` and ``truncated[i]`` are the flattened weights ``w_i`` and
    ``w^k_i`` (i = 0..N, shape (N+1, P)); ``loss_full``/``loss_truncated`` the
    losses before each step (N,); ``step_sizes`` the ``alpha_i`` used (N,).
    """

    full: np.ndarray
    truncated: np.ndarray
    loss_full: np.ndarray
    loss_truncated: np.ndarray
    step_sizes: np.ndarray
    k: int

    @property
    def distance(self) -> np.ndarray:
        """``||w_i - w^k_i||_2`` for i = 0..N."""
        return np.linalg.norm(self.full - self.truncated, axis=1)


def _step_sizes(lr: float, steps: int, schedule: str) -> np.ndarray:
    if schedule == "constant":
        return np.full(steps, lr)
    return lr / np.arange(1, steps + 1)  # "decay"


def _gd_run(
    model: RecurrentModel,
    x: torch.Tensor,
    y: torch.Tensor,
    k: int | None,
    alphas: np.ndarray,
    project: float | None,
    last_only: bool,
    progress: bool,
    label: str,
) -> tuple[np.ndarray, np.ndarray]:
    params = [p for p in model.parameters() if p.requires_grad]
    weights = [torch.cat([p.detach().reshape(-1) for p in params]).clone()]
    losses = []
    for i, alpha in enumerate(progress_bar(alphas, enabled=progress, desc=label)):
        loss = _sequence_loss(model, x, y, k, last_only)
        grads = torch.autograd.grad(loss, params)
        if not bool(torch.isfinite(loss)) or not all(
            bool(torch.isfinite(g).all()) for g in grads
        ):
            raise DivergenceError(
                f"{label}: the loss or its gradient became NaN/inf at step {i + 1} (loss {float(loss.detach()):.3g}); "
                "lower lr, use schedule='decay', or project onto a stable set"
            )
        losses.append(float(loss.detach()))
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= float(alpha) * g
            if project is not None:
                project_spectral_(model, project)
        w = torch.cat([p.detach().reshape(-1) for p in params]).clone()
        if not bool(torch.isfinite(w).all()):
            raise DivergenceError(
                f"{label}: the weights became NaN/inf at step {i + 1}; lower lr"
            )
        weights.append(w)
    return torch.stack(weights).double().numpy(), np.array(losses)


@validate_params(
    "k",
    "steps",
    "lr",
    "progress",
    project=PARAMS["lam"],
    schedule=SCHEDULES,
    model=MODEL,
    x=INPUTS,
    y=OUTPUTS,
    last_only=Bool(),
)
def train_full_and_truncated(
    model: RecurrentModel,
    x: torch.Tensor,
    y: torch.Tensor,
    k: int,
    *,
    steps: int,
    lr: float,
    schedule: str = "decay",
    project: float | None = None,
    last_only: bool = False,
    progress: bool = False,
) -> TrainingPair:
    """Gradient descent on the full loss ``p_T`` and on the truncated loss ``p^k_T`` from the same start (chapter 10).

    ``w_{i+1} = w_i - alpha_i grad p_T(w_i)`` and ``w^k_{i+1} = w^k_i - alpha_i grad p^k_T(w^k_i)``,
    ``w_0 = w^k_0`` = the weights of ``model`` (which is not modified), with
    ``alpha_i = lr`` (``schedule="constant"``) or ``lr / i`` (``"decay"``), i = 1..steps.
    If ``project`` is a lambda in (0, 1], both runs are projected onto
    ``{L_rho ||W||_2 <= lambda}`` after each step (projected GD; :class:`SimpleRNN`
    and :class:`LinearSystem` only). Raises :class:`DivergenceError` if a loss,
    gradient or weight stops being finite.
    """
    if project is not None:
        if not isinstance(model, (SimpleRNN, LinearSystem)):
            raise TypeError(
                "project= needs a SimpleRNN or LinearSystem (use rnnlib.stability.project_lstm_ for an LSTM)"
            )
    alphas = _step_sizes(lr, steps, schedule)
    full_w, full_loss = _gd_run(
        copy.deepcopy(model),
        x,
        y,
        None,
        alphas,
        project,
        last_only,
        progress,
        "full",
    )
    tr_w, tr_loss = _gd_run(
        copy.deepcopy(model),
        x,
        y,
        k,
        alphas,
        project,
        last_only,
        progress,
        f"truncated k={k}",
    )
    return TrainingPair(full_w, tr_w, full_loss, tr_loss, alphas, k)


@validate_params(
    "steps",
    "lr",
    "progress",
    project=PARAMS["lam"],
    schedule=SCHEDULES,
    model=MODEL,
    x=INPUTS,
    y=OUTPUTS,
    ks=Ints(1),
    last_only=Bool(),
)
def weight_distance_sweep(
    model: RecurrentModel,
    x: torch.Tensor,
    y: torch.Tensor,
    ks: Sequence[int],
    *,
    steps: int,
    lr: float,
    schedule: str = "decay",
    project: float | None = None,
    last_only: bool = False,
    progress: bool = False,
) -> np.ndarray:
    """``||w_i - w^k_i||_2`` for i = 0..steps and each k in ``ks``; the full run is done once (chapter 10).

    Same arguments as :func:`train_full_and_truncated`. Returns (len(ks), steps + 1).
    """
    pair = train_full_and_truncated(
        model,
        x,
        y,
        ks[0],
        steps=steps,
        lr=lr,
        schedule=schedule,
        project=project,
        last_only=last_only,
        progress=progress,
    )
    out = [pair.distance]
    for k in ks[1:]:
        tr_w, _ = _gd_run(
            copy.deepcopy(model),
            x,
            y,
            k,
            pair.step_sizes,
            project,
            last_only,
            progress,
            f"truncated k={k}",
        )
        out.append(np.linalg.norm(pair.full - tr_w, axis=1))
    return np.stack(out)


@validate_params(gradient_gap=NONNEGATIVE, beta=NONNEGATIVE)
def growth_recursion_bound(
    gradient_gap: float,
    beta: float,
    step_sizes: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """Unroll ``delta_{i+1} = (1 + alpha_i beta) delta_i + alpha_i gap``, ``delta_0 = 0`` (chapter 10).

    The Hardt-Recht-Singer growth recursion with a per-step gradient error
    ``gap`` (``gamma k lambda^k`` in the reconstruction): returns
    ``delta_0, ..., delta_N`` (N + 1,). With ``alpha_i = alpha / i`` it grows
    like ``N^(alpha beta)``; with a constant ``alpha`` like ``(1 + alpha beta)^N``.
    """
    gap = gradient_gap
    alphas = np.asarray(step_sizes, dtype=float)
    if (
        alphas.ndim != 1
        or alphas.size == 0
        or np.any(alphas < 0)
        or not np.all(np.isfinite(alphas))
    ):
        raise ValueError(
            "step_sizes must be a non-empty 1-d sequence of finite non-negative numbers"
        )
    delta = np.zeros(alphas.size + 1)
    for i, a in enumerate(alphas):
        delta[i + 1] = (1 + a * beta) * delta[i] + a * gap
    return delta


def _losses(
    W: torch.Tensor,
    U: torch.Tensor,
    C: torch.Tensor,
    windows: torch.Tensor,
    masks: torch.Tensor,
    y: torch.Tensor,
) -> torch.Tensor:
    """Per run r: ``mean_{b,t} 1/2 ||C h^(k_r)_t - y_t||^2`` (R,).

    ``windows`` (R, B*T, T, n): window t of run r holds ``x_{t-T+1..t}`` (zeros before the
    sequence); ``masks`` (R, 1, T, 1): step j of run r counts iff ``j >= T - k_r`` (with the
    zero padding, the state stays 0 before the window starts, as for the truncated model).
    """
    R, BT, T, _ = windows.shape
    s = windows.new_zeros(R, BT, W.shape[1])
    Ux = windows @ U.transpose(1, 2).unsqueeze(1)  # (R, BT, T, m)
    for j in range(T):
        pre = s @ W.transpose(1, 2) + Ux[:, :, j]
        s = masks[:, :, j] * torch.tanh(pre)
    out = s @ C.transpose(1, 2)  # (R, BT, d)
    return 0.5 * ((out - y) ** 2).sum(dim=2).mean(dim=1)


def _project(W: torch.Tensor, radius: float) -> torch.Tensor:
    """Clip the singular values of every (m, m) matrix of ``W`` at ``radius`` (as project_spectral)."""
    Us, s, Vh = torch.linalg.svd(W.double(), full_matrices=False)
    excess = (s - radius).clamp_min(0.0)
    if not bool((excess > 0).any()):
        return W
    return (W.double() - (Us * excess.unsqueeze(1)) @ Vh).to(W.dtype)


@validate_params("steps", project=PARAMS["lam"], last_only=Bool(), truncations=Ints(1))
def batched_gd_weights(
    W0: torch.Tensor,
    U0: torch.Tensor,
    C: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    truncations: Sequence[int],
    alphas: torch.Tensor,
    *,
    steps: int,
    project: float = 0.9,
    last_only: bool = False,
) -> torch.Tensor:
    """Projected gradient descent on R tanh RNNs and their truncations at once; the weights after every step (chapter 10).

    Run r starts at ``(W0[r], U0[r])`` (R, m, m), (R, m, n) with the frozen read-out ``C[r]``
    (R, d, m), on sequences ``x[r]`` (R, B, T, n) with targets ``y[r]`` (R, B, T, d), and
    minimizes the squared loss of the ``truncations[r]``-step truncated model
    (``truncations[r] >= T``: the full model), mean over batch and steps (with ``last_only``,
    at ``t = T`` only), as :func:`rnnlib.truncation.sequence_loss`, with step ``alphas[r, i]`` at step i, then
    ``W <- project_spectral(W, project)``. All runs advance together (one batched tensor per
    weight), so R runs cost about one sequential run (:func:`train_full_and_truncated` runs
    them one after the other, with the same result to rounding). Returns the flattened weights ``(W, U)`` at steps
    0..steps, shape (steps + 1, R, m*m + m*n), float64.
    """
    R, B, T, n = x.shape
    m = W0.shape[1]
    if (
        W0.shape != (R, m, m)
        or U0.shape != (R, m, n)
        or C.shape[0] != R
        or C.shape[2] != m
        or y.shape[:3] != (R, B, T)
        or y.shape[3] != C.shape[1]
    ):
        raise ValueError(
            "W0, U0, C, x, y must have shapes (R, m, m), (R, m, n), (R, d, m), (R, B, T, n), "
            f"(R, B, T, d); got {tuple(W0.shape)}, {tuple(U0.shape)}, {tuple(C.shape)}, "
            f"{tuple(x.shape)}, {tuple(y.shape)}"
        )
    if len(truncations) != R:
        raise ValueError(
            f"truncations must have length R = {R}, got {list(truncations)}"
        )
    if min(truncations) < 1:
        raise ValueError(f"truncations must be >= 1, got {list(truncations)}")
    if alphas.shape != (R, steps):
        raise ValueError(
            f"alphas must have shape (R, steps) = ({R}, {steps}), got {tuple(alphas.shape)}"
        )
    if last_only:  # one window per sequence: the sequence itself
        windows, yt = x, y[:, :, -1]
    else:  # window t: x_{t-T+1..t}, zeros before the sequence
        padded = torch.cat([x.new_zeros(R, B, T - 1, n), x], dim=2)
        windows = padded.unfold(2, T, 1).permute(0, 1, 2, 4, 3).reshape(R, B * T, T, n)
        yt = y.reshape(R, B * T, -1)
    ks = torch.tensor([min(int(k), T) for k in truncations])
    masks = (
        (torch.arange(T).unsqueeze(0) >= (T - ks).unsqueeze(1))
        .to(x.dtype)
        .reshape(R, 1, T, 1)
    )
    W = W0.detach().clone().requires_grad_(True)
    U = U0.detach().clone().requires_grad_(True)
    out = [torch.cat([W.reshape(R, -1), U.reshape(R, -1)], 1).detach()]
    for i in range(steps):
        loss = _losses(W, U, C, windows, masks, yt).sum()
        gW, gU = torch.autograd.grad(loss, (W, U))
        with torch.no_grad():
            a = alphas[:, i].reshape(R, 1, 1)
            W_new = _project(W - a * gW, project)
            U_new = U - a * gU
        if not bool(torch.isfinite(W_new).all() and torch.isfinite(U_new).all()):
            raise FloatingPointError(
                f"the weights became NaN/inf at step {i + 1}; lower the step size"
            )
        W = W_new.requires_grad_(True)
        U = U_new.requires_grad_(True)
        out.append(torch.cat([W.reshape(R, -1), U.reshape(R, -1)], 1).detach())
    return torch.stack(out).double()
