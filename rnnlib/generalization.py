"""Generalization through the pseudo-network: Rademacher complexity of a tangent-kernel class (chapter 6).

Panigrahi & Goyal (2021) bound the population loss of the trained RNN through
the Rademacher complexity of its pseudo-network (their Lemma D.4, whose
statement is in the unavailable appendix). What is here is the textbook
argument, written out by us (a reconstruction, not the paper's statement):

* The uniform bound with the *empirical* complexity (Shalev-Shwartz & Ben-David,
  Thm 26.5, its third bound): for a loss with values in [0, b], with probability
  at least 1 - delta over the N samples Z, every predictor f of a class satisfies

      E_D loss(f) - E_Z loss(f) <= 2 R_Z(loss o class) + 4 b sqrt(2 log(4 / delta) / N),

  where ``R_Z`` is the empirical Rademacher complexity on Z itself. This is the
  form that a complexity computed from the sample's own kernel may be put into
  (the first form of the theorem needs the *expected* complexity E_Z R_Z, which a
  kernel evaluated on one sample does not give). A 1-Lipschitz loss does not
  increase the complexity (contraction lemma, SSBD Lemma 26.9):
  ``R_Z(loss o class) <= R_Z(class)``.

* The linearized RNN with weight change ``theta = (W', A')`` is
  ``z(x) = out_scale (F_rnn(x; W_0, A_0) + <theta, grad F(x)>)``. For the class
  ``{z : ||theta||_F <= B}`` (the offset does not change the complexity),
  Cauchy-Schwarz and Jensen give the closed form (:func:`rademacher_bound`)

      R_Z = (out_scale B / N) E_sigma || sum_n sigma_n grad F(x_n) ||
          = (out_scale B / N) E_sigma sqrt(sigma^T K sigma)
         <= out_scale B sqrt(sum_n K(x_n, x_n)) / N,

  with ``K`` the tangent kernel (:func:`rnnlib.ntk.tangent_kernel`); the
  middle expression is what :func:`empirical_rademacher` estimates by Monte
  Carlo over sign vectors. Khintchine-Kahane (constant 1/sqrt 2) bounds it
  from below by ``closed form / sqrt 2``.

:func:`classification_task` is chapter 6's task. Chapter 6's experiment
(``rnnlib.experiments.ch06.generalization_run``) trains an RNN on it with
the logistic loss and measures the train/test gap beside that bound, with
``B = ||theta_T||_F`` read off the trained weights (a data-dependent choice
of B: strictly, a union bound over a grid of B's adds a term of order
``sqrt(log log B / N)``, which we leave out and say so).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from ._validation import (
    NONNEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    Int,
    Tensor,
    as_generator,
    validate_params,
)
from .concepts import sample_task

__all__ = [
    "rademacher_bound",
    "RademacherEstimate",
    "empirical_rademacher",
    "uniform_bound",
    "logistic_loss_bound",
    "ClassificationTask",
    "classification_task",
    "sgd_budget",
]


@validate_params("out_scale", norm=NONNEGATIVE, K_diag=Tensor(ndim=1))
def rademacher_bound(K_diag: torch.Tensor, *, out_scale: float, norm: float) -> float:
    """``out_scale * norm * sqrt(sum_n K(x_n, x_n)) / N``: the closed-form bound on R_N (chapter 6).

    Bounds the empirical Rademacher complexity of the linear class
    ``{x -> out_scale <theta, grad F(x)> : ||theta||_F <= norm}`` on the
    sample ``x_1..x_N`` whose tangent-kernel diagonal is ``K_diag`` (N,)
    (:func:`rnnlib.ntk.tangent_kernel_diag`). Ours (textbook argument), the
    paper's Lemma D.4 is not available.
    """
    if bool((K_diag < 0).any()):
        raise ValueError("K_diag must be non-negative (a kernel's diagonal)")
    n = K_diag.shape[0]
    return out_scale * norm * math.sqrt(float(K_diag.double().sum())) / n


class RademacherEstimate(NamedTuple):
    """:func:`empirical_rademacher` results: the Monte-Carlo estimate and its standard error."""

    #: the mean over the sign vectors
    estimate: float
    #: its standard error
    stderr: float


@validate_params(
    "out_scale", "generator", norm=NONNEGATIVE, n_signs=Int(2), K=Tensor(ndim=2)
)
def empirical_rademacher(
    K: torch.Tensor,
    *,
    out_scale: float,
    norm: float,
    n_signs: int = 2000,
    generator: torch.Generator | int | None = None,
) -> RademacherEstimate:
    """Monte-Carlo estimate of the empirical Rademacher complexity of the linear class (chapter 6).

    ``R = E_sigma sup_{||theta|| <= norm} (1/N) sum_n sigma_n out_scale <theta, grad F(x_n)>
    = (out_scale norm / N) E_sigma sqrt(sigma^T K sigma)`` (the supremum is attained at
    ``theta`` parallel to ``sum_n sigma_n grad F(x_n)``), averaged over ``n_signs``
    uniform sign vectors. ``K`` is the (N, N) tangent kernel. Returns
    ``(estimate, standard error)``. Always <= :func:`rademacher_bound` in expectation (Jensen).
    """
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be square (N, N), got shape {tuple(K.shape)}")
    gen = as_generator(generator)
    n = K.shape[0]
    sigma = torch.randint(0, 2, (n_signs, n), generator=gen).double() * 2 - 1
    quad = torch.einsum("sn,nm,sm->s", sigma, K.double(), sigma).clamp_min(0)
    vals = out_scale * norm * quad.sqrt() / n
    return RademacherEstimate(
        float(vals.mean()), float(vals.std() / math.sqrt(n_signs))
    )


@validate_params(
    "n",
    rademacher=NONNEGATIVE,
    loss_bound=NONNEGATIVE,
    delta=OPEN_UNIT,
)
def uniform_bound(
    rademacher: float,
    *,
    n: int,
    loss_bound: float,
    delta: float = 0.05,
) -> float:
    """``2 R_Z + 4 b sqrt(2 log(4 / delta) / N)``: the bound on E_D - E_Z with the empirical complexity (SSBD Thm 26.5; chapter 6).

    ``rademacher`` bounds the *empirical* Rademacher complexity ``R_Z`` of the
    (1-Lipschitz loss composed with the) class on the training sample itself,
    ``loss_bound`` is ``b`` (losses in [0, b]), ``n`` the sample size, ``delta`` the
    failure probability.
    """
    return 2 * rademacher + 4 * loss_bound * math.sqrt(2 * math.log(4 / delta) / n)


@validate_params(max_abs_output=NONNEGATIVE)
def logistic_loss_bound(max_abs_output: float) -> float:
    """``b = log(1 + exp(M))``: the largest logistic loss of a predictor with ``|z| <= M`` (chapter 6)."""
    M = max_abs_output
    return M + math.log1p(math.exp(-M))


class ClassificationTask(NamedTuple):
    """:func:`classification_task` results: training pool and test set."""

    #: training inputs (n_train, L, d)
    x: torch.Tensor
    #: training labels in {-1, +1} (n_train, 1)
    y: torch.Tensor
    #: test inputs (n_test, L, d)
    x_test: torch.Tensor
    #: test labels in {-1, +1} (n_test, 1)
    y_test: torch.Tensor


@validate_params("L", "d", "eps_x", "n_train", "n_test", "dtype", "generator", p=Int(1))
def classification_task(
    L: int,
    d: int,
    eps_x: float,
    n_train: int,
    n_test: int,
    *,
    p: int = 4,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> ClassificationTask:
    """A binary task of chapter 6: labels ``sign(F*(x_bar) - median)`` for a random concept-class target.

    ``F*`` is :func:`rnnlib.concepts.sample_target`; subtracting the median over
    the drawn sequences balances the classes. Labels are in {-1, +1}, shape (n, 1).
    The first ``n_train`` sequences are the training pool (a smaller training set is
    a prefix of it), the rest the test set. Returns ``(x, y, x_test, y_test)``.
    """
    x, f = sample_task(
        L,
        d,
        eps_x,
        n_train + n_test,
        p=p,
        generator=generator,
        dtype=dtype,
    )
    y = torch.where(f >= f.median(), 1.0, -1.0).to(dtype)
    return ClassificationTask(x[:n_train], y[:n_train], x[n_train:], y[n_train:])


@validate_params(
    "width",
    "out_scale",
    p=Int(1),
    C=POSITIVE,
    L=Int(1),
    eps=POSITIVE,
    kernel_constant=POSITIVE,
    loss_bound=NONNEGATIVE,
)
def sgd_budget(
    *,
    p: int,
    C: float,
    L: int,
    width: int,
    out_scale: float,
    eps: float,
    kernel_constant: float = 1.0,
    loss_bound: float = 1.0,
) -> dict[str, float]:
    """The bookkeeping that assembles Theorem 3.1 from its pieces, every hidden constant explicit (ours; chapter 6).

    From chapter 4's construction, the comparator ``theta* = (W*, A*)/out_scale`` has
    ``||theta*|| = sqrt(2) p C / (out_scale sqrt(m))`` (``p`` neurons, ``|H| <= C``,
    ``b_r ~ N(0, 2)``). With ``K(x, x) = c L m`` (``c = kernel_constant``, measured in
    chapter 6) and ``|G'| <= 1``, the gradients obey ``||g_t|| <= Gamma = out_scale sqrt(c L m)``.
    The regret terms ``||theta*||^2/(2 eta T) + eta Gamma^2/2`` are smallest at
    ``eta = ||theta*|| / (Gamma sqrt(T))``, where they equal ``||theta*|| Gamma / sqrt(T)``;
    setting this to ``eps`` gives

        T = (||theta*|| Gamma / eps)^2 = 2 c p^2 C^2 L / eps^2,   eta = eps / (c out_scale^2 L m),

    so ``out_scale`` and ``m`` cancel from ``T``. The a-priori radius from the SGD
    recursion, ``||theta_T - theta*||^2 <= ||theta*||^2 + 2 eta T b + eta^2 T Gamma^2``
    (``b`` bounds the comparator's losses, ``loss_bound``), gives the ball
    ``B = ||theta*|| + sqrt(2 ||theta*||^2 + 2 eta T b)``, fixed before the data; its
    complexity ``out_scale B sqrt(c L m) / sqrt(N)`` is at most ``eps`` once
    ``N >= (out_scale B sqrt(c L m) / eps)^2`` (``N_min``).
    Returns ``theta_star``, ``Gamma``, ``T``, ``eta``, ``tau_star = sqrt(m) ||theta*||``,
    ``regret`` (the two terms at ``eta, T``: equals ``eps``), ``B`` and ``N_min``.
    """
    c, b = kernel_constant, loss_bound
    theta = math.sqrt(2) * p * C / (out_scale * math.sqrt(width))
    gamma = out_scale * math.sqrt(c * L * width)
    T = (theta * gamma / eps) ** 2
    eta = theta / (gamma * math.sqrt(T))
    regret = theta**2 / (2 * eta * T) + eta * gamma**2 / 2
    B = theta + math.sqrt(2 * theta**2 + 2 * eta * T * b)
    n_min = (out_scale * B * math.sqrt(c * L * width) / eps) ** 2
    return {
        "theta_star": theta,
        "Gamma": gamma,
        "T": T,
        "eta": eta,
        "tau_star": math.sqrt(width) * theta,
        "regret": regret,
        "B": B,
        "N_min": n_min,
    }
