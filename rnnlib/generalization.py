"""Generalization through the pseudo-network: Rademacher complexity of a tangent-kernel class (chapter 6).

Panigrahi & Goyal (2021) bound the population loss of the trained RNN through
the Rademacher complexity of its pseudo-network (their Lemma D.4, whose
statement is in the unavailable appendix). What is here is the textbook
argument, written out by us (a reconstruction, not the paper's statement):

* The uniform bound (Shalev-Shwartz & Ben-David, Thm 26.5): for a loss with
  values in [0, b], with probability at least 1 - delta over the N samples,
  every predictor f of a class satisfies

      E_D loss(f) - E_Z loss(f) <= 2 R_N(loss o class) + b sqrt(2 log(2 / delta) / N)

  (the "4 b" of the theorem's variant with the empirical complexity is not
  needed here: ``R_N`` below is bounded for every sample, so the expected
  complexity is bounded too). A 1-Lipschitz loss does not increase the
  complexity (contraction lemma, SSBD Lemma 26.9): ``R_N(loss o class) <= R_N(class)``.

* The linearized RNN with weight change ``theta = (W', A')`` is
  ``z(x) = out_scale (F_rnn(x; W_0, A_0) + <theta, grad F(x)>)``. For the class
  ``{z : ||theta||_F <= B}`` (the offset does not change the complexity),
  Cauchy-Schwarz and Jensen give the closed form (:func:`rademacher_bound`)

      R_Z = (out_scale B / N) E_sigma || sum_n sigma_n grad F(x_n) ||
          = (out_scale B / N) E_sigma sqrt(sigma^T K sigma)
         <= out_scale B sqrt(sum_n K(x_n, x_n)) / N,

  with ``K`` the tangent kernel (:func:`rnnlib.train.tangent_kernel`); the
  middle expression is what :func:`empirical_rademacher` estimates by Monte
  Carlo over sign vectors. Khintchine-Kahane (constant 1/sqrt 2) bounds it
  from below by ``closed form / sqrt 2``.

:func:`generalization_run` trains an RNN on a classification task with the
logistic loss and measures the train/test gap beside that bound, with
``B = ||theta_T||_F`` read off the trained weights (a data-dependent choice
of B: strictly, a union bound over a grid of B's adds a term of order
``sqrt(log log B / N)``, which we leave out and say so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._rng import as_seed, derive
from ._validation import (
    as_generator,
    check_int,
    check_real,
    check_tensor,
)
from .concepts import sample_task
from .elman import ElmanRNN
from .train import (
    objective,
    predict,
    tangent_kernel_diag,
    train_rnn,
)

__all__ = [
    "rademacher_bound",
    "empirical_rademacher",
    "uniform_bound",
    "logistic_loss_bound",
    "classification_task",
    "GeneralizationRun",
    "generalization_run",
]


def rademacher_bound(
    K_diag: torch.Tensor, *, out_scale: float, norm: float
) -> float:
    """``out_scale * norm * sqrt(sum_n K(x_n, x_n)) / N``: the closed-form bound on R_N (chapter 6).

    Bounds the empirical Rademacher complexity of the linear class
    ``{x -> out_scale <theta, grad F(x)> : ||theta||_F <= norm}`` on the
    sample ``x_1..x_N`` whose tangent-kernel diagonal is ``K_diag`` (N,)
    (:func:`rnnlib.train.tangent_kernel_diag`). Ours (textbook argument), the
    paper's Lemma D.4 is not available.
    """
    K_diag = check_tensor(K_diag, "K_diag", ndim=1)
    if bool((K_diag < 0).any()):
        raise ValueError(
            "K_diag must be non-negative (a kernel's diagonal)"
        )
    out_scale = check_real(
        out_scale, "out_scale", low=0.0, low_open=True
    )
    norm = check_real(norm, "norm", low=0.0)
    n = K_diag.shape[0]
    return (
        out_scale
        * norm
        * math.sqrt(float(K_diag.double().sum()))
        / n
    )


def empirical_rademacher(
    K: torch.Tensor,
    *,
    out_scale: float,
    norm: float,
    n_signs: int = 2000,
    generator: torch.Generator | int | None = None,
) -> tuple[float, float]:
    """Monte-Carlo estimate of the empirical Rademacher complexity of the linear class (chapter 6).

    ``R = E_sigma sup_{||theta|| <= norm} (1/N) sum_n sigma_n out_scale <theta, grad F(x_n)>
    = (out_scale norm / N) E_sigma sqrt(sigma^T K sigma)`` (the supremum is attained at
    ``theta`` parallel to ``sum_n sigma_n grad F(x_n)``), averaged over ``n_signs``
    uniform sign vectors. ``K`` is the (N, N) tangent kernel. Returns
    ``(estimate, standard error)``. Always <= :func:`rademacher_bound` in expectation (Jensen).
    """
    K = check_tensor(K, "K", ndim=2)
    if K.shape[0] != K.shape[1]:
        raise ValueError(
            f"K must be square (N, N), got shape {tuple(K.shape)}"
        )
    out_scale = check_real(
        out_scale, "out_scale", low=0.0, low_open=True
    )
    norm = check_real(norm, "norm", low=0.0)
    n_signs = check_int(n_signs, "n_signs", minimum=2)
    gen = as_generator(generator)
    n = K.shape[0]
    sigma = (
        torch.randint(0, 2, (n_signs, n), generator=gen).double()
        * 2
        - 1
    )
    quad = torch.einsum(
        "sn,nm,sm->s", sigma, K.double(), sigma
    ).clamp_min(0)
    vals = out_scale * norm * quad.sqrt() / n
    return float(vals.mean()), float(
        vals.std() / math.sqrt(n_signs)
    )


def uniform_bound(
    rademacher: float,
    *,
    n: int,
    loss_bound: float,
    delta: float = 0.05,
) -> float:
    """``2 R + b sqrt(2 log(2 / delta) / N)``: the bound on E_D - E_Z (SSBD Thm 26.5; chapter 6).

    ``rademacher`` bounds the Rademacher complexity of the (1-Lipschitz loss
    composed with the) class, ``loss_bound`` is ``b`` (losses in [0, b]), ``n`` the
    sample size, ``delta`` the failure probability.
    """
    rademacher = check_real(rademacher, "rademacher", low=0.0)
    n = check_int(n, "n", minimum=1)
    loss_bound = check_real(loss_bound, "loss_bound", low=0.0)
    delta = check_real(
        delta,
        "delta",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    )
    return 2 * rademacher + loss_bound * math.sqrt(
        2 * math.log(2 / delta) / n
    )


def logistic_loss_bound(max_abs_output: float) -> float:
    """``b = log(1 + exp(M))``: the largest logistic loss of a predictor with ``|z| <= M`` (chapter 6)."""
    M = check_real(max_abs_output, "max_abs_output", low=0.0)
    return M + math.log1p(math.exp(-M))


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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A binary task of chapter 6: labels ``sign(F*(x_bar) - median)`` for a random concept-class target.

    ``F*`` is :func:`rnnlib.concepts.sample_target`; subtracting the median over
    the drawn sequences balances the classes. Labels are in {-1, +1}, shape (n, 1).
    The first ``n_train`` sequences are the training pool (a smaller training set is
    a prefix of it), the rest the test set. Returns ``(x, y, x_test, y_test)``.
    """
    n_train, n_test = (
        check_int(n_train, "n_train", minimum=1),
        check_int(n_test, "n_test", minimum=1),
    )
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
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


@dataclass(frozen=True)
class GeneralizationRun:
    """One trained RNN and its generalization numbers (chapter 6).

    ``train_loss``, ``test_loss``: logistic losses; ``gap = test_loss - train_loss``;
    ``test_error``: the 0-1 error on the test set; ``norm``: ``||theta_T||_F`` (the
    weight change); ``rademacher``: :func:`rademacher_bound` with that norm;
    ``complexity``: ``rademacher`` itself (the term the theory predicts to be
    roughly independent of m); ``loss_bound``: b; ``bound``: :func:`uniform_bound`;
    ``flip_fraction``, ``coupling_relative``: from the RNN's history, on the training inputs
    (how lazy the run was).
    """

    n: int
    width: int
    seed: int
    train_loss: float
    test_loss: float
    gap: float
    test_error: float
    norm: float
    rademacher: float
    loss_bound: float
    bound: float
    flip_fraction: float
    coupling_relative: float


def generalization_run(
    n: int,
    width: int,
    generator: torch.Generator | int | None,
    *,
    L: int,
    d: int,
    eps_x: float,
    n_pool: int,
    n_test: int,
    out_scale: float,
    lr_scale: float = 0.3,
    epochs: float = 4.0,
    delta: float = 0.05,
    steps: int | None = None,
) -> GeneralizationRun:
    """Train an RNN by SGD (batch 1, logistic loss) on the first ``n`` of a task's sequences (chapter 6).

    The task is :func:`classification_task` with ``n_pool`` training and
    ``n_test`` test sequences (so runs with different ``n`` share the test set
    and nest their training sets); with ``seed = as_seed(generator)`` (an int seed is
    used as it is), the network is ``derive(seed, "weights", width)``.
    ``steps = epochs * n`` steps (or ``steps`` if given: a number of steps that does not
    grow with ``n``, as in Theorem 3.1 where T depends on epsilon only) of size ``lr_scale / (out_scale^2 mean_n K(x_n, x_n))``.
    ``b`` is the logistic loss at ``M = max |z(x)|`` of the linear class with
    ``B = ||theta_T||``, the max taken over the training set and 200 test sequences
    (``out_scale (|F_rnn(x; W_0)| + B sqrt(K(x, x)))``): an estimate of the sup
    over the distribution, ours. Returns a :class:`GeneralizationRun`.
    """
    n = check_int(n, "n", minimum=1)
    width = check_int(width, "width", minimum=1)
    seed = as_seed(generator)
    n_pool = check_int(n_pool, "n_pool", minimum=n)
    out_scale = check_real(
        out_scale, "out_scale", low=0.0, low_open=True
    )
    lr_scale = check_real(
        lr_scale, "lr_scale", low=0.0, low_open=True
    )
    epochs = check_real(epochs, "epochs", low=0.0, low_open=True)
    x, y, xt, yt = classification_task(
        L, d, eps_x, n_pool, n_test, generator=seed
    )
    x, y = x[:n], y[:n]
    model = ElmanRNN(
        d, width, generator=derive(seed, "weights", width)
    )
    k_train = tangent_kernel_diag(model, x)
    lr = lr_scale / (out_scale**2 * float(k_train.mean()))
    steps = (
        max(1, int(round(epochs * n)))
        if steps is None
        else check_int(steps, "steps", minimum=1)
    )
    res = train_rnn(
        model,
        x,
        y,
        out_scale=out_scale,
        lr=lr,
        steps=steps,
        loss="logistic",
        generator=derive(seed, "order", width, n),
        log_every=steps,
    )
    h = res.history  # flips and coupling measured on the training inputs; the test loss once, below
    norm = math.sqrt(
        float(
            res.dW.double().square().sum()
            + res.dA.double().square().sum()
        )
    )
    rad = rademacher_bound(k_train, out_scale=out_scale, norm=norm)
    xs = torch.cat([x, xt[:200]])
    ks = torch.cat([k_train, tangent_kernel_diag(model, xt[:200])])
    M = float(
        (
            predict(model, xs, out_scale).abs()[:, 0]
            + out_scale * norm * ks.sqrt()
        ).max()
    )
    b = logistic_loss_bound(M)
    with torch.no_grad():
        zt = res.predict(xt)
        test_error = float((torch.sign(zt) != yt).double().mean())
        test_loss = float(objective(zt, yt, "logistic").mean())
    train_loss = float(h.train_loss[-1])
    return GeneralizationRun(
        n,
        width,
        seed,
        train_loss,
        test_loss,
        test_loss - train_loss,
        test_error,
        norm,
        rad,
        b,
        uniform_bound(rad, n=n, loss_bound=b, delta=delta),
        float(h.flip_fraction[-1]),
        float(h.coupling_relative[-1]),
    )
