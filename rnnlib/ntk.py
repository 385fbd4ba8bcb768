"""The tangent kernel of chapter 1's Elman RNN: at finite width, in kernel regression, and at infinite width (chapters 5-7).

At finite width (chapter 5): :func:`tangent_kernel` is the kernel
``K_m(x, x') = <grad_{W,A} F(x), grad_{W,A} F(x')>`` of the network
``F(x) = B h^(L)``, ``h^(l) = relu(W h^(l-1) + A x^(l))``, ``h^(0) = 0``, with
``W`` (m x m) and ``A`` (m x d) i.i.d. N(0, 2/m) and ``B`` (1 x m) i.i.d.
N(0, 2), frozen, built from chapter 3's pieces; :func:`tangent_kernel_diag` is its
diagonal, :func:`kernel_ridge` kernel ridge regression with any kernel, and
:func:`kernel_reference` the regression with the scaled tangent kernel that
chapter 5 compares SGD with (the best predictor of the linearized RNN).

At infinite width: ``K_m`` grows like ``m`` (it is a sum over the m rows of
``B``); this module gives its limit ``K(x, x') = lim_{m -> inf} K_m(x, x') / m``
as an exact recursion over the time steps, with no width and no training.

The derivation (ours: a reconstruction in the style of the recurrent NTK of
Alemohammad, Wang, Balestriero & Baraniuk, "The Recurrent Neural Tangent
Kernel", ICLR 2021, and of Yang's tensor programs for tied weights; the
paper of Panigrahi & Goyal does not state a limit kernel). Write, for two
inputs ``x, x'`` of the same length ``L``,

* ``X^l = <x^(l), x'^(l)>``, the inputs' inner product at step l;
* ``H^l = lim <h^(l)(x), h^(l)(x')>``, the hidden states' inner product
  (``H^0 = 0``): the NNGP part;
* ``S^l = H^(l-1) + X^l``, so that the pre-activations ``g_r = w_r . h^(l-1) +
  a_r . x^(l)`` of one neuron at x and x' are, in the limit, jointly Gaussian
  with covariance ``(2/m) S^l`` (a tensor-program statement: weight tying
  across time does not change it, because the covariance of ``W v`` over the
  Gaussian ``W`` is given by inner products of the vectors ``v``);
* ``theta^l = arccos(S^l / sqrt(S^l(x,x) S^l(x',x')))``.

The arc-cosine expectations of ReLU (Cho & Saul 2009) for a centred Gaussian
pair of variances ``a, b`` and angle ``theta`` are
``E relu(g) relu(g') = sqrt(ab) (sin theta + (pi - theta) cos theta) / (2 pi)``
and ``P(g > 0, g' > 0) = (pi - theta) / (2 pi)``. Summing over the m neurons:

    H^l = sqrt(S^l(x,x) S^l(x',x')) (sin theta^l + (pi - theta^l) cos theta^l) / pi,
    kappa^l = (pi - theta^l) / (2 pi).

On the diagonal ``theta = 0`` and ``H^l(x,x) = S^l(x,x) = sum_{j<=l} |x^(j)|^2``:
chapter 1's norm heuristic (:func:`rnnlib.initialization.predicted_sq_norms`)
is the exact limit.

The gradient. With ``u_l = D^(l) W^T D^(l+1) ... W^T D^(L) B^T`` (m), the
finite kernel is (chapter 5, :func:`tangent_kernel`)

    K_m(x, x') = sum_{l, l'} <u_l, u'_l'> (<h^(l-1), h'^(l'-1)> + <x^(l), x'^(l')>).

``<u_L, u'_L> / m = (1/m) sum_r B_r^2 D_r D'_r -> 2 kappa^L`` (Var B_r = 2).
Going back one step, ``u_l = D^(l) W^T u_(l+1)``; the coordinates of
``W^T u_(l+1)`` and ``W^T u'_(l+1)`` are Gaussian with covariance
``(2/m) <u_(l+1), u'_(l+1)>``, independent of the patterns ``D^(l)`` in the
limit (the gradient-independence property, valid here because ``B`` is
drawn independently of ``W, A`` with mean zero), so
``<u_l, u'_l> / m -> U^l = 2 kappa^l U^(l+1)``, ``U^L = 2 kappa^L``:

    U^l = prod_{j=l}^{L} 2 kappa^j.

The cross-time terms ``l != l'`` pair a vector with ``L - l`` factors ``W^T``
with one with ``L - l'`` factors; their inner products are ``O(sqrt(m))``
against the ``O(m)`` of the matched terms, so they vanish from ``K_m / m``,
but only like ``m^(-1/2)`` for one draw (:func:`cross_time_fraction` measures
them). The limit:

    K(x, x') = sum_{l=1}^{L} U^l S^l = sum_l (prod_{j>=l} 2 kappa^j) (H^(l-1) + X^l),

computed forward as ``R_1 = 2 kappa^1 S^1``, ``R_l = 2 kappa^l (R_(l-1) + S^l)``,
``K = R_L``. On the diagonal ``kappa = 1/2``, ``U^l = 1`` and
``K(x, x) = sum_l sum_{j<=l} |x^(j)|^2``. Sequences are aligned step by step,
so both arguments must have the same length.

The derivation is checked, not trusted: ``tests/test_ntk.py`` compares the
seed-averaged ``K_m / m`` with ``K`` for m = 256 ... 4096 on several lengths
and pairs of different sequences, and the relative error falls like ``m^(-1/2)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ._recurrence import previous_states
from ._validation import (
    Bool,
    Choice,
    Model,
    Relation,
    Tensor,
    check_model,
    check_tensor,
    validate_params,
)
from .elman import INPUTS, ElmanRNN, elman_hidden_states, elman_last_state
from .pseudo import back_matrices

__all__ = [
    "tangent_kernel",
    "tangent_kernel_diag",
    "KernelRidge",
    "kernel_ridge",
    "KernelReference",
    "kernel_reference",
    "KernelSGD",
    "kernel_sgd",
    "limit_hidden_covariance",
    "limit_tangent_kernel",
    "cross_time_fraction",
    "sample_constant",
]


# --- the tangent kernel at finite width (chapter 5) ----------------------------------------------


def _check_scalar_model(model: object, what: str) -> ElmanRNN:
    model = check_model(model, ElmanRNN)
    if model.output_dim != 1:
        raise ValueError(
            f"model must have output_dim 1 for {what}, got {model.output_dim}"
        )
    return model


def _gradient_pieces(
    model: ElmanRNN, x: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``u_l = D^(l) Back_{l->L}^T`` and ``h^(l-1)`` for l = 1..L, each (N, L, m), at the model's weights; no grad.

    ``D^(l)`` is read off the states as ``1[h^(l) > 0]`` (the derivative autograd uses for ReLU).
    """
    with torch.no_grad():
        h = elman_hidden_states(model.W.detach(), model.A.detach(), x)
        h_prev = previous_states(h)
        D = (h > 0).to(x.dtype)
        return back_matrices(model, x)[:, :, 0, :] * D, h_prev


def _diagonal_terms(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    """``<u_l, u_l'> (<h^(l-1), h^(l'-1)> + <x^(l), x^(l')>)`` per sequence, (N, L, L); no grad."""
    u, h_prev = _gradient_pieces(model, x)
    with torch.no_grad():
        uu = torch.einsum("nlm,nkm->nlk", u, u)
        zz = torch.einsum("nlm,nkm->nlk", h_prev, h_prev) + torch.einsum(
            "nld,nkd->nlk", x, x
        )
        return uu * zz


@validate_params(
    model=Model(ElmanRNN),
    x=INPUTS,
    x2=Tensor(shape=(None, "L", "model.input_dim"), dtype_of="model"),
)
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
    model = _check_scalar_model(model, "tangent_kernel")
    x2 = x if x2 is None else x2
    if x2.shape[1] != x.shape[1]:
        raise ValueError(
            f"x2 must have the same length L = {x.shape[1]} as x, got shape {tuple(x2.shape)}"
        )
    u1, h1 = _gradient_pieces(model, x)
    u2, h2 = (u1, h1) if x2 is x else _gradient_pieces(model, x2)
    with torch.no_grad():
        uu = torch.einsum("alm,bkm->ablk", u1, u2)
        zz = torch.einsum("alm,bkm->ablk", h1, h2) + torch.einsum(
            "ald,bkd->ablk", x, x2
        )
        return (uu * zz).sum(dim=(2, 3))


@validate_params(model=Model(ElmanRNN), x=INPUTS)
def tangent_kernel_diag(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    """``K(x_n, x_n) = ||grad_{W,A} F(x_n)||^2`` for each sequence, (N,) (chapters 5-6).

    The diagonal of :func:`tangent_kernel` at cost ~ N L^2 m instead of N^2 L^2 m:
    ``sum_{l, l'} <u_l, u_l'> (<h^(l-1), h^(l'-1)> + <x^(l), x^(l')>)`` per sequence.
    """
    model = _check_scalar_model(model, "tangent_kernel_diag")
    return _diagonal_terms(model, x).sum(dim=(1, 2))


class KernelRidge(NamedTuple):
    """:func:`kernel_ridge` results: the dual coefficients and the solution's RKHS norm."""

    #: ``(K + ridge N I)^{-1} y``, shaped like ``y``
    alpha: torch.Tensor
    #: ``sqrt(alpha^T K alpha)`` (Frobenius over several columns)
    norm: float


@validate_params("ridge", K=Tensor(ndim=2), y=Tensor())
def kernel_ridge(K: torch.Tensor, y: torch.Tensor, ridge: float) -> KernelRidge:
    """Kernel ridge regression: ``alpha = (K + ridge N I)^{-1} y`` and ``||theta|| = sqrt(alpha^T K alpha)`` (chapter 5).

    Minimizes ``(1/N) sum_n (f(x_n) - y_n)^2 / 2 + (ridge / 2) ||theta||^2`` over
    ``f = <theta, phi(x)>`` with ``K = Phi Phi^T``; the minimizer is
    ``f(.) = K(., X) alpha``. ``K`` is (N, N) symmetric positive semi-definite,
    ``y`` (N,) or (N, k), ``ridge > 0``. Returns ``(alpha, norm)`` where
    ``norm`` is the RKHS norm of the solution (for several columns, the
    Frobenius norm over them). Predictions at new points: ``K(X_new, X) @ alpha``.
    """
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be square (N, N), got shape {tuple(K.shape)}")
    if y.dim() not in (1, 2) or y.shape[0] != K.shape[0]:
        raise ValueError(
            f"y must have shape ({K.shape[0]},) or ({K.shape[0]}, k), got {tuple(y.shape)}"
        )
    n = K.shape[0]
    Kd = K.to(torch.float64)
    yd = y.to(torch.float64)
    alpha = torch.linalg.solve(Kd + ridge * n * torch.eye(n, dtype=torch.float64), yd)
    a2 = alpha if alpha.dim() == 2 else alpha[:, None]
    norm = float(torch.einsum("nk,nm,mk->", a2, Kd, a2).clamp_min(0).sqrt())
    return KernelRidge(alpha.to(K.dtype), norm)


class KernelReference(NamedTuple):
    """:func:`kernel_reference` results; ``weights`` is None unless ``return_weights=True``."""

    #: predictions ``z(.; theta*)`` on ``x`` (N, 1)
    f: torch.Tensor
    #: predictions on ``x_eval`` (N_eval, 1)
    f_eval: torch.Tensor
    #: ``||theta*||`` (Frobenius, ``(W', A')`` stacked)
    norm: float
    #: ``(W*, A*)``, (m, m) and (m, d), with ``return_weights=True``; else None
    weights: tuple[torch.Tensor, torch.Tensor] | None = None


@validate_params(
    "out_scale",
    "ridge",
    return_weights=Bool(),
    model=Model(ElmanRNN, finite=False),
    x=INPUTS,
    x_eval=Tensor(shape=(None, None, "model.input_dim"), dtype_of="model"),
)
def kernel_reference(
    model: ElmanRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    x_eval: torch.Tensor,
    *,
    out_scale: float,
    ridge: float,
    return_weights: bool = False,
) -> KernelReference:
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
    (our heuristic, used by chapter 5's sweep ``rnnlib.experiments.ch05.lazy_grid``).
    The minimizer is ``theta* = out_scale sum_n alpha_n grad F(x_n)``.

    Returns the predictions ``z(.; theta*)`` on ``x`` and ``x_eval`` and the norm
    ``||theta*||`` (Frobenius, ``(W', A')`` stacked); with ``return_weights=True`` also
    ``(W*, A*)``, computed by one backward pass through ``sum_n alpha_n F(x_n)``
    (``W*`` (m, m), ``A*`` (m, d)). ``x`` is (N, L, d), ``y`` (N, 1) in its dtype,
    ``x_eval`` (N_eval, L, d).
    """
    y = check_tensor(y, "y", shape=(x.shape[0], model.output_dim))
    if y.dtype != x.dtype:
        raise TypeError(f"y has dtype {y.dtype} but x has {x.dtype}")
    B = model.B.transpose(0, 1)
    with torch.no_grad():
        f0, f0e = (
            out_scale * (elman_last_state(model.W, model.A, xx) @ B)
            for xx in (x, x_eval)
        )
    K = out_scale**2 * tangent_kernel(model, x)
    alpha, norm = kernel_ridge(K, y - f0, ridge)
    Ke = out_scale**2 * tangent_kernel(model, x_eval, x)
    if not return_weights:
        return KernelReference(f0 + K @ alpha, f0e + Ke @ alpha, norm)
    W = model.W.detach().clone().requires_grad_(True)
    A = model.A.detach().clone().requires_grad_(True)
    out = (elman_last_state(W, A, x) @ B.detach() * alpha).sum()
    gW, gA = torch.autograd.grad(out_scale * out, (W, A))
    return KernelReference(f0 + K @ alpha, f0e + Ke @ alpha, norm, (gW, gA))


class KernelSGD(NamedTuple):
    """:func:`kernel_sgd` results: the predictions after the last step, and their coefficients."""

    #: predictions on the training inputs, (N, k), float64
    f: torch.Tensor
    #: predictions on the evaluation inputs, (N_eval, k), float64; None without ``K_eval``
    f_eval: torch.Tensor | None
    #: the coefficients of the change: ``f = f0 + K gamma`` (N, k), float64
    gamma: torch.Tensor


def _loss_slope(z: np.ndarray, y: np.ndarray, loss: str) -> np.ndarray:
    """dG/dz of the squared ``(z - y)^2 / 2`` or the logistic ``log(1 + exp(-y z))``."""
    if loss == "squared":
        return z - y
    return -y / (1.0 + np.exp(np.minimum(y * z, 700.0)))


@validate_params(
    "lr",
    Relation(
        "f0_eval is None or K_eval is not None",
        "f0_eval needs K_eval, the kernel that moves it",
    ),
    loss=Choice("squared", "logistic"),
    K=Tensor(shape=("N", "N")),
    y=Tensor(shape=("N", "k")),
    K_eval=Tensor(shape=("N_eval", "N")),
    f0=Tensor(shape=("N", "k")),
    f0_eval=Tensor(shape=("N_eval", "k")),
)
def kernel_sgd(
    K: torch.Tensor,
    y: torch.Tensor,
    order: torch.Tensor,
    *,
    lr: float,
    loss: str = "squared",
    K_eval: torch.Tensor | None = None,
    f0: torch.Tensor | None = None,
    f0_eval: torch.Tensor | None = None,
) -> KernelSGD:
    """P&G's SGD run in function space with a fixed kernel (chapters 5-6).

    Step ``t`` takes the ``b`` indices ``order[t]`` and updates the predictions
    everywhere by the kernel's columns at those samples:

        f(x) <- f(x) - (lr / (b k)) sum_j K(x, x_(i_j)) G'(f(x_(i_j)), y_(i_j)),

    ``G'`` the derivative of the loss per output (``"squared"``: ``(z - y)^2 / 2``;
    ``"logistic"``: ``log(1 + exp(-y z))``, labels in {-1, +1}) and ``k`` the number
    of outputs (the losses are means over outputs, as in :mod:`rnnlib.train`). So
    ``f = f0 + K gamma``, with ``gamma_n`` the accumulated ``-(lr / (b k)) G'`` of the
    steps that drew ``n``; the predictions on new inputs are ``f0_eval + K_eval gamma``.

    This is exactly :func:`rnnlib.train.train_pseudo` seen in function space when
    ``K`` is ``out_scale^2`` times that network's :func:`tangent_kernel`, ``f0`` its
    initial output ``out_scale F_rnn(x; W_0, A_0)``, ``lr`` its step and ``order``
    :func:`rnnlib.train.sgd_order` with its generator (a test checks it). With the
    normalized limit kernel ``K / Kbar`` of :func:`limit_tangent_kernel`,
    ``lr = lr_scale`` and ``f0 = 0`` it is the m -> inf limit of the runs of chapters
    5-6 (step ``lr = lr_scale / (out_scale^2 Kbar_m)``) from a zero initial output,
    the doubled initialization of :class:`rnnlib.elman.ElmanRNN`.

    ``K`` (N, N) symmetric (its rows are read); ``y`` (N, k); ``order`` (T, b) or
    (T,) integer indices in [0, N); ``K_eval`` (N_eval, N), the kernel between
    evaluation and training inputs; ``f0`` (N, k) and ``f0_eval`` (N_eval, k) the
    initial predictions (zero if omitted). Computed in float64.
    """
    n = K.shape[0]
    if loss == "logistic" and not bool(((y == 1) | (y == -1)).all()):
        raise ValueError("y must hold labels in {-1, +1} for the logistic loss")
    if not isinstance(order, torch.Tensor) or order.dtype not in (
        torch.int32,
        torch.int64,
    ):
        raise TypeError(
            f"order must be an integer torch.Tensor, got {type(order).__name__}"
        )
    if order.dim() == 1:
        order = order[:, None]
    if order.dim() != 2 or (
        order.numel() and (int(order.min()) < 0 or int(order.max()) >= n)
    ):
        raise ValueError(
            f"order must be (T, b) or (T,) indices in [0, {n}), got shape {tuple(order.shape)}"
        )
    k = y.shape[1]
    f = np.zeros((n, k))
    if f0 is not None:
        f = f0.double().numpy().copy()
    if K_eval is not None:
        fe = np.zeros((K_eval.shape[0], k))
        if f0_eval is not None:
            fe = f0_eval.double().numpy()
    Kn = K.detach().double().numpy()
    yn = y.detach().double().numpy()
    gamma = np.zeros((n, k))
    scale = lr / (order.shape[1] * k)
    if order.shape[1] == 1 and k == 1:  # P&G's SGD: one row per step
        f1, y1, g1 = f[:, 0], yn[:, 0], gamma[:, 0]
        for i in order[:, 0].tolist():
            r = scale * float(_loss_slope(f1[i], y1[i], loss))
            g1[i] -= r
            f1 -= r * Kn[i]
    else:
        for idx in order.numpy():
            r = scale * _loss_slope(f[idx], yn[idx], loss)
            np.subtract.at(gamma, idx, r)
            f -= Kn[idx].T @ r
    f_eval = None
    if K_eval is not None:
        f_eval = torch.from_numpy(fe + K_eval.detach().double().numpy() @ gamma)
    return KernelSGD(torch.from_numpy(f), f_eval, torch.from_numpy(gamma))


# --- the tangent kernel at infinite width ----------------------------------------------------------


#: The inputs of the limit kernels: x (N, L, d) and x2 (N2, L, d), the same L and d.
_PAIR = {
    "x": Tensor(shape=(None, "L", "d")),
    "x2": Tensor(shape=(None, "L", "d")),
}


def _pair(
    x: torch.Tensor, x2: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """``x``, ``x2`` (``x`` when None) in float64, and whether they are one tensor."""
    same = x2 is None
    x2 = x if same else x2
    return x.to(torch.float64), x2.to(torch.float64), same


#: 1 - cos below which two pre-activations count as parallel (128 float64 ulps of 1).
_COS_SNAP = 2.0**-45


def _arccos_step(S, r1, r2, H, two_kappa):
    """H^l and 2 kappa^l from S^l (N, N2) and the root diagonals r1 (N,), r2 (N2,), into ``H``, ``two_kappa``.

    The ReLU arc-cosine expectations of the module docstring. Where a diagonal is 0
    (a zero pre-activation, which only a zero input can give) H and kappa are 0, as in
    the finite network (``D = 1[h > 0]``). The norms are outer products of vectors and
    the arrays are reused (``out=``), so that a step costs one arccos and one square
    root per entry and no allocation: the Gram matrix of thousands of sequences runs
    at the speed of memory.
    """
    i1 = torch.where(r1 > 0, 1.0 / r1.clamp_min(1e-300), 0.0)
    i2 = torch.where(r2 > 0, 1.0 / r2.clamp_min(1e-300), 0.0)
    cos = torch.mul(S, i1[:, None], out=H)  # H is free: S holds H^(l-1)
    cos.mul_(i2[None, :]).clamp_(-1.0, 1.0)
    # Parallel pairs (x with itself, two sequences that share their first l tokens) have
    # cos = 1 exactly; rounding leaves 1 - cos of a few ulps, which arccos turns into
    # theta ~ 1e-8, machine-dependent (BLAS sums the entries of a row in its own order).
    # Within _COS_SNAP of 1, cos is 1: an error of at most sqrt(2 _COS_SNAP) = 2.4e-7 in
    # theta for a pair that is that close without being parallel; distinct strings of the
    # book are at 1 - cos >= 8e-4.
    cos.masked_fill_(cos >= 1.0 - _COS_SNAP, 1.0)  # theta(x, x) = 0 with it
    theta = torch.arccos(cos, out=two_kappa).neg_().add_(math.pi)
    # sin theta = sqrt(1 - cos^2), computed into S (S is not needed any more)
    sin = torch.mul(cos, cos, out=S).neg_().add_(1.0).clamp_(min=0.0)
    sin.sqrt_().addcmul_(theta, cos)  # sin + (pi - theta) cos
    sin.mul_((r1 / math.pi)[:, None]).mul_(r2[None, :])
    H.copy_(sin)  # sqrt(S S') (sin + (pi - theta) cos) / pi
    theta.div_(math.pi)  # 2 kappa = (pi - theta) / pi
    if bool((r1 <= 0).any()) or bool((r2 <= 0).any()):
        live = (r1 > 0).to(S.dtype)[:, None] * (r2 > 0).to(S.dtype)
        theta.mul_(live)


def _recursion(x, x2, same):
    """Yield (S^l, H^l, 2 kappa^l) for l = 1..L, each (N, N2) float64; the arrays are reused between steps."""
    N, L, _ = x.shape
    N2 = x2.shape[0]
    sq1 = (x * x).sum(dim=2)  # (N, L) |x^(l)|^2
    sq2 = sq1 if same else (x2 * x2).sum(dim=2)
    n1 = torch.cumsum(sq1, dim=1)  # S^l(x, x) = sum_{j<=l} |x^(j)|^2
    n2 = n1 if same else torch.cumsum(sq2, dim=1)
    r1, r2 = n1.sqrt(), n2.sqrt()
    H = torch.zeros(N, N2, dtype=torch.float64)
    S = torch.empty_like(H)
    S_out = torch.empty_like(H)
    two_kappa = torch.empty_like(H)
    xt = x.transpose(0, 1).contiguous()  # (L, N, d)
    x2t = xt if same else x2.transpose(0, 1).contiguous()
    for step in range(L):
        torch.addmm(H, xt[step], x2t[step].T, out=S)  # H^(l-1) + X^l
        S_out.copy_(S)
        _arccos_step(S, r1[:, step], r2[:, step], H, two_kappa)
        yield S_out, H, two_kappa


@validate_params(**_PAIR)
def limit_hidden_covariance(
    x: torch.Tensor, x2: torch.Tensor | None = None
) -> torch.Tensor:
    """``H^l(x_a, x2_b) = lim_{m -> inf} <h^(l)(x_a), h^(l)(x2_b)>`` for l = 1..L; (N, N2, L) float64 (chapters 1, 5).

    The NNGP part of the limit (module docstring):
    ``H^l = sqrt(S S') (sin theta + (pi - theta) cos theta) / pi`` with
    ``S^l = H^(l-1) + <x^(l), x2^(l)>``, ``H^0 = 0``. Its diagonal is
    ``sum_{j<=l} |x^(j)|^2``, chapter 1's norm heuristic. ``x`` is (N, L, d),
    ``x2`` (N2, L, d) (default ``x``), any float dtype; the result is float64
    and does not depend on the width or the seed of any network.
    """
    x, x2, same = _pair(x, x2)
    return torch.stack([H.clone() for _, H, _ in _recursion(x, x2, same)], dim=2)


@validate_params(**_PAIR)
def limit_tangent_kernel(
    x: torch.Tensor, x2: torch.Tensor | None = None
) -> torch.Tensor:
    """``K(x, x') = lim_{m -> inf} tangent_kernel(model_m, x, x') / m``; (N, N2) float64 (chapters 5-7).

    The infinite-width tangent kernel of the Elman ReLU RNN of chapter 1
    (``W, A ~ N(0, 2/m)`` trained, ``B ~ N(0, 2)`` frozen, ``d_out = 1``), by
    the recursion of the module docstring (ours)::

        K = sum_{l=1}^{L} (prod_{j=l}^{L} 2 kappa^j) (H^(l-1) + <x^(l), x'^(l)>),

    computed forward in one pass over the steps (``R_l = 2 kappa^l (R_(l-1) + S^l)``),
    so the memory is a few (N, N2) arrays. ``x`` is (N, L, d), ``x2`` (N2, L, d)
    (default ``x``), any float dtype. Symmetric and positive semi-definite.
    Cost ~ N N2 L (one arccos per entry and step): the Gram matrix of 2000
    sequences of length 16 takes about a second (``benchmarks/bench_ntk.py``).
    """
    x, x2, same = _pair(x, x2)
    R = torch.zeros(x.shape[0], x2.shape[0], dtype=torch.float64)
    for S, _, two_kappa in _recursion(x, x2, same):
        R.add_(S).mul_(two_kappa)
    if same:
        R = (R + R.T) / 2  # exact symmetry despite rounding
    return R


@validate_params(model=Model(ElmanRNN), x=INPUTS)
def cross_time_fraction(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    """The share of the cross-time terms in the finite tangent kernel, per sequence; (N,) (chapter 5).

    ``K_m(x, x) = sum_{l, l'} <u_l, u_l'> (<h^(l-1), h^(l'-1)> + <x^(l), x^(l')>)``
    (:func:`tangent_kernel_diag`); returns
    ``|sum_{l != l'} ...| / sum_{l, l'} ...``, the part that vanishes in the limit
    (like ``m^(-1/2)`` for one draw, module docstring). ``model`` has
    ``output_dim = 1``, ``x`` is (N, L, d) in the model's dtype.
    """
    model = _check_scalar_model(model, "cross_time_fraction")
    terms = _diagonal_terms(model, x)
    total = terms.sum(dim=(1, 2))
    diag = torch.diagonal(terms, dim1=1, dim2=2).sum(dim=1)
    return (total - diag).abs() / total


@validate_params(K=Tensor(shape=("N", "N")), f=Tensor())
def sample_constant(K: torch.Tensor, f: torch.Tensor) -> float | np.ndarray:
    """The sample-size constant of the Rademacher route for a target on a finite domain: ``||f||_K^2 sup K / E f^2`` (chapter 7, ours).

    ``K`` (N, N) is a positive definite kernel matrix on all N points of a domain,
    ``f`` (N,) the target's values there, or (N, k) for k targets at once (one
    factorization). ``||f||_K^2 = f^T K^{-1} f`` is the squared norm of the smallest
    function of the kernel's RKHS that equals ``f`` on the domain (a Cholesky solve).
    Kernel regression in the ball ``||g||_K <= ||f||_K`` has Rademacher complexity at
    most ``||f||_K sqrt(sup_x K(x, x) / n)`` on ``n`` samples, so the route that
    Theorem 3.1's proof takes needs ``n ~ C / eps^2`` samples for an error ``eps``, with
    ``C = ||f||_K^2 sup_x K(x, x) / E f^2``; the mean of ``f^2`` is over the domain (1 for
    a +-1 indicator). Returns a float, or an array (k,) for (N, k). Raises
    ``ValueError`` when ``K`` is not positive definite (its Cholesky factorization fails).
    """
    one = f.ndim == 1
    if f.ndim == 1:
        f = f[:, None]
    if f.ndim != 2 or f.shape[0] != K.shape[0]:
        raise ValueError(
            f"f must have shape ({K.shape[0]},) or ({K.shape[0]}, k), got {tuple(f.shape)}"
        )
    f = f.to(K.dtype)
    scale = (f * f).mean(dim=0)
    if not bool(torch.all(scale > 0)):
        raise ValueError("f must not be zero everywhere")
    chol, info = torch.linalg.cholesky_ex(K)
    if int(info) != 0:
        raise ValueError(
            "K must be positive definite (its Cholesky factorization failed "
            f"at column {int(info)})"
        )
    alpha = torch.cholesky_solve(f, chol)
    c = (f * alpha).sum(dim=0) * K.diagonal().max() / scale
    return float(c[0]) if one else c.numpy()
