"""Chapter 6's experiments: trained RNNs against the generalization bound, and the lazy learner at infinite width.

Chapter 6 trains RNNs by SGD with the logistic loss and evaluates the bound
``2 R + 4 b sqrt(2 log(4 / delta) / N)`` (:func:`rnnlib.generalization.uniform_bound`)
with ``R = out_scale ||theta_T|| sqrt(sum_n K_m(x_n, x_n)) / N``
(:func:`generalization_run`: one trained network, its gap and its bound). Trained networks
stop at a few hundred samples. In the lazy regime the network is its
linearization, and SGD on the linearization is SGD *in function space* with the
tangent kernel (ours, the standard kernel view): a step on sample ``i`` with
step ``lr`` changes the output everywhere by
``-lr out_scale^2 G'(z_i, y_i) K_m(., x_i)``. With chapter 6's step
``lr = lr_scale / (out_scale^2 Kbar_m)`` (``Kbar_m`` the mean of ``K_m(x_n, x_n)``
over the training set) this is ``-lr_scale G'(z_i, y_i) Kn(., x_i)`` with the
normalized kernel ``Kn = K_m / Kbar_m``, whose limit ``K / Kbar`` is free of
the width and of ``out_scale`` (:func:`rnnlib.ntk.limit_tangent_kernel`).
Writing the function as ``z = lr_scale sum_n gamma_n Kn(., x_n)`` (``gamma_n``
minus the sum of the loss derivatives at the steps that drew ``n``), the
weight change is ``theta = lr out_scale sum_n gamma_n grad F(x_n)``, so

    out_scale ||theta|| sqrt(Kbar_m) = lr_scale sqrt(gamma^T Kn gamma) =: B_n,
    R = B_n sqrt(sum_n Kn(x_n, x_n)) / N,   max |z| over the class = B_n max sqrt(Kn(x, x)),

all of them limits that need no network. :func:`rnnlib.ntk.kernel_sgd` runs that SGD on a
given kernel matrix; :func:`limit_generalization_curve` evaluates the bound of
chapter 6 for the limit learner at sample sizes up to 10^4 and beyond. The
learner starts from the zero function: the random initial output
``out_scale F_rnn(x; W_0, A_0)`` of a finite network is a Gaussian process in the
limit, not zero; it is left out (as an antisymmetric initialization would), which
removes its contribution to ``M``.

:func:`theorem_terms` evaluates every term of the chapter's assembly of
Theorem 3.1 (ours) on chapter 4's one-neuron target with the squared loss, at
the run's own step, number of steps, sample size and failure probability,
beside the measured population loss (:class:`TheoremTerms`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import records, trends
from .._progress import progress_bar
from .._rng import as_seed, derive
from .._validation import (
    OPEN_UNIT,
    POSITIVE,
    Bool,
    Choice,
    Instance,
    Int,
    Ints,
    PathLike,
    Str,
    check_int,
    check_ints,
    validate_params,
)
from ..concepts import ConceptTarget, get_function
from ..elman import (
    ElmanRNN,
    normalize_sequence,
    sample_true_sequence,
)
from ..generalization import (
    classification_task,
    logistic_loss_bound,
    rademacher_bound,
    uniform_bound,
)
from ..inversion import construct_existence
from ..ntk import (
    kernel_sgd,
    limit_tangent_kernel,
    tangent_kernel_diag,
)
from ..pseudo import pseudo_network
from ..train import (
    convexity_gap,
    objective,
    predict,
    train_rnn,
)

__all__ = [
    "GeneralizationRun",
    "generalization_run",
    "LimitRun",
    "limit_generalization_curve",
    "TheoremTerms",
    "theorem_terms",
    "RECORD",
    "SMOKE",
    "run_width_record",
    "width_fingerprint",
    "make_width_record",
    "check_width_record",
    "width_trends",
]


@dataclass(frozen=True)
class GeneralizationRun:
    """One trained RNN and its generalization numbers (chapter 6).

    ``train_loss``, ``test_loss``: logistic losses; ``gap = test_loss - train_loss``;
    ``test_error``: the 0-1 error on the test set; ``norm``: ``||theta_T||_F`` (the
    weight change); ``rademacher``: :func:`rnnlib.generalization.rademacher_bound` with that norm;
    ``complexity``: ``rademacher`` itself (the term the theory predicts to be
    roughly independent of m); ``loss_bound``: b; ``bound``: :func:`rnnlib.generalization.uniform_bound`;
    ``flip_fraction``, ``coupling_relative``: from the RNN's history, on the training inputs
    (how lazy the run was); ``steps``: the SGD steps taken; ``kbar``: the mean of
    ``K(x_n, x_n)`` over the training set (the tangent kernel at initialization);
    ``norm_prior``: the a-priori radius ``eta T Gamma`` with ``Gamma = out_scale max sqrt(K(x, x))``
    (over the inputs of ``b``): ``||theta_T|| <= eta sum_t ||g_t|| <= eta T Gamma`` for every
    run of ``T`` steps, whatever the data (the logistic loss has ``|G'| <= 1``);
    ``f0_max``: the largest ``|F_rnn(x; W_0, A_0)|`` over those inputs (unscaled);
    ``doubled``: the network's initialization (``ElmanRNN(..., doubled=True)``: zero
    initial output).
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
    steps: int = 0
    kbar: float = 0.0
    norm_prior: float = 0.0
    f0_max: float = 0.0
    doubled: bool = False


@validate_params(
    "n",
    "width",
    "out_scale",
    "lr_scale",
    "steps",
    "generator",
    "L",
    "d",
    "eps_x",
    "n_test",
    "dtype",
    epochs=POSITIVE,
    doubled=Bool(),
    delta=OPEN_UNIT,
    n_pool=Int("n"),
)
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
    doubled: bool = False,
    dtype: torch.dtype = torch.float32,
) -> GeneralizationRun:
    """Train an RNN by SGD (batch 1, logistic loss) on the first ``n`` of a task's sequences (chapter 6).

    The task is :func:`rnnlib.generalization.classification_task` with ``n_pool`` training and
    ``n_test`` test sequences (so runs with different ``n`` share the test set
    and nest their training sets); with ``seed = as_seed(generator)`` (an int seed is
    used as it is), the network is ``derive(seed, "weights", width)``.
    ``steps = epochs * n`` steps (or ``steps`` if given: a number of steps that does not
    grow with ``n``, as in Theorem 3.1 where T depends on epsilon only) of size ``lr_scale / (out_scale^2 mean_n K(x_n, x_n))``.
    ``b`` is the logistic loss at ``M = max |z(x)|`` of the linear class with
    ``B = ||theta_T||``, the max taken over the training set and 200 test sequences
    (``out_scale (|F_rnn(x; W_0)| + B sqrt(K(x, x)))``): an estimate of the sup
    over the distribution, ours. ``doubled``: the doubled initialization
    (``ElmanRNN(..., doubled=True)``, the same weight stream; its output at
    initialization is 0), else the paper's i.i.d. one. ``dtype``: of the task and the
    network (float64 for the record's fingerprint). Returns a :class:`GeneralizationRun`.
    """
    seed = as_seed(generator)
    x, y, xt, yt = classification_task(
        L, d, eps_x, n_pool, n_test, generator=seed, dtype=dtype
    )
    x, y = x[:n], y[:n]
    model = ElmanRNN(
        d,
        width,
        generator=derive(seed, "weights", width),
        doubled=doubled,
        dtype=dtype,
    )
    k_train = tangent_kernel_diag(model, x)
    lr = lr_scale / (out_scale**2 * float(k_train.mean()))
    steps = max(1, int(round(epochs * n))) if steps is None else steps
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
    h = (
        res.history
    )  # flips and coupling measured on the training inputs; the test loss once, below
    norm = math.sqrt(
        float(res.dW.double().square().sum() + res.dA.double().square().sum())
    )
    rad = rademacher_bound(k_train, out_scale=out_scale, norm=norm)
    xs = torch.cat([x, xt[:200]])
    ks = torch.cat([k_train, tangent_kernel_diag(model, xt[:200])])
    f0 = predict(model, xs, out_scale).abs()[:, 0]
    f0_max = float(f0.max()) / out_scale
    M = float((f0 + out_scale * norm * ks.sqrt()).max())
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
        steps,
        float(k_train.mean()),
        lr * steps * out_scale * math.sqrt(float(ks.max())),
        f0_max,
        doubled,
    )


def _gram(x: torch.Tensor, block: int) -> torch.Tensor:
    """``limit_tangent_kernel(x)`` by blocks of ``block`` rows: the symmetric half computed once, little extra memory.

    Blocks of a few hundred rows keep the recursion's arrays in cache: at
    ``block = 500`` the Gram matrix of 4000 sequences takes half the time it takes
    with blocks of 2000 (the recursion is memory-bound).
    """
    n = x.shape[0]
    K = torch.empty(n, n, dtype=torch.float64)
    for a in range(0, n, block):
        for b in range(a, n, block):
            blk = limit_tangent_kernel(
                x[a : a + block],
                None if a == b else x[b : b + block],
            )
            K[a : a + block, b : b + block] = blk
            if a != b:
                K[b : b + block, a : a + block] = blk.T
    return K


def _cross(x1: torch.Tensor, x2: torch.Tensor, block: int):
    return torch.cat(
        [
            limit_tangent_kernel(x1, x2[b : b + block])
            for b in range(0, x2.shape[0], block)
        ],
        dim=1,
    )


def _diag(x: torch.Tensor) -> torch.Tensor:
    """``K(x, x) = sum_l sum_{j<=l} |x^(j)|^2``, the limit kernel's diagonal in closed form (rnnlib.ntk)."""
    return (x * x).sum(dim=2).cumsum(dim=1).sum(dim=1)


@dataclass(frozen=True)
class LimitRun:
    """The limit learner of chapter 6 at one sample size (:func:`limit_generalization_curve`).

    ``train_loss`` (over ``train_points`` training sequences: all N, or a prefix
    when N exceeds the precomputed Gram matrix), ``test_loss``, ``gap``,
    ``test_error`` as in :class:`GeneralizationRun`;
    ``norm``: ``B_n = out_scale ||theta_T|| sqrt(Kbar)`` (module docstring);
    ``rademacher``, ``loss_bound`` (b), ``bound``: chapter 6's bound for the class
    ``||theta|| <= ||theta_T||``; ``steps``: SGD steps; ``visited``: distinct
    training sequences drawn.
    """

    n: int
    steps: int
    train_loss: float
    test_loss: float
    gap: float
    test_error: float
    norm: float
    rademacher: float
    loss_bound: float
    bound: float
    train_points: int
    visited: int


def _logistic(z: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.logaddexp(0.0, -y * z)))


@validate_params(
    "n_test",
    "lr_scale",
    "steps",
    "generator",
    "L",
    "d",
    "eps_x",
    ns=Ints(2),
    epochs=POSITIVE,
    delta=OPEN_UNIT,
    train_points=Int(1),
    block=Int(1),
    gram_size=Int(0),
)
def limit_generalization_curve(
    ns: Sequence[int],
    generator: int,
    *,
    L: int,
    d: int,
    eps_x: float,
    n_test: int,
    lr_scale: float = 0.3,
    epochs: float = 4.0,
    steps: int | None = None,
    delta: float = 0.05,
    gram_size: int | None = None,
    n_pool: int | None = None,
    train_points: int = 2000,
    block: int = 500,
) -> list[LimitRun]:
    """Chapter 6's SGD and bound for the infinite-width lazy learner at each N of ``ns`` (chapter 6).

    One task per seed, :func:`rnnlib.generalization.classification_task` with
    ``n_pool`` (default ``max(ns)``) training and ``n_test`` test sequences, in
    float64; the training set of size N is its first N sequences. For each N:
    ``epochs * N`` SGD steps (or ``steps``, the same for every N, Theorem 3.1's
    fixed T), drawn uniformly with replacement (``derive(seed, "order", N)``), of
    :func:`rnnlib.ntk.kernel_sgd` with the normalized limit kernel ``K / Kbar``, ``Kbar`` the
    mean of ``K(x_n, x_n)`` over the N training sequences. The bound is chapter 6's,
    with ``M = B_n max sqrt(Kn(x, x))`` over the training set and 200 test
    sequences and ``R`` from :func:`rnnlib.generalization.rademacher_bound` on the
    diagonal of ``Kn``. The Gram matrix of the first ``gram_size`` (default
    ``max(ns)``) training sequences is computed once (by blocks, float64: 800 MB at
    10^4); a larger N is only possible with a fixed ``steps``, using the kernel
    among the drawn sequences and the training loss on the first ``train_points``.
    ``block``: rows per block of the kernel computations.
    """
    seed = as_seed(generator)
    gram_size = max(ns) if gram_size is None else gram_size
    if steps is None and max(ns) > gram_size:
        raise ValueError(
            f"ns must not exceed gram_size = {gram_size} when the steps grow with N (steps=None), got {max(ns)}"
        )
    n_pool = max(ns) if n_pool is None else check_int(n_pool, "n_pool", minimum=max(ns))
    x, y, xt, yt = classification_task(
        L,
        d,
        eps_x,
        n_pool,
        n_test,
        generator=seed,
        dtype=torch.float64,
    )
    y, yt = y[:, 0], yt[:, 0].numpy()
    diag = _diag(x)
    diag_t = _diag(xt[:200])
    G = _gram(x[:gram_size], block) if gram_size else None
    Gt = _cross(xt, x[:gram_size], block) if gram_size else None
    out = []
    for n in ns:
        T = max(1, round(epochs * n)) if steps is None else steps
        order = torch.randint(0, n, (T,), generator=derive(seed, "order", n))
        kbar = float(diag[:n].mean())
        full = G is not None and n <= gram_size
        if full:
            pos = order
            K = G[:n, :n]
            idx = None
        else:
            idx, pos = torch.unique(order, return_inverse=True)
            K = _gram(x[idx], block)
        y_fit = y[:n] if full else y[idx]
        # K / kbar without a copy of K: the step scale absorbs 1 / kbar
        sgd = kernel_sgd(
            K,
            y_fit[:, None],
            pos,
            lr=lr_scale / kbar,
            loss="logistic",
        )
        # in this module's units: z = lr_scale (K / kbar) gamma
        z = sgd.f[:, 0].numpy()
        gamma = sgd.gamma[:, 0].numpy() * kbar / lr_scale
        if full:
            z_train, y_train, n_points = z, y[:n].numpy(), n
            Kt = Gt[:, :n]
        else:
            n_points = min(n, train_points)
            z_train = (
                lr_scale * (_cross(x[:n_points], x[idx], block) / kbar).numpy() @ gamma
            )
            y_train = y[:n_points].numpy()
            Kt = _cross(xt, x[idx], block)
        z_test = lr_scale * (Kt / kbar).numpy() @ gamma
        quad = max(float(gamma @ (K.numpy() @ gamma)) / kbar, 0.0)
        norm = lr_scale * math.sqrt(quad)
        rad = rademacher_bound(diag[:n] / kbar, out_scale=1.0, norm=norm)
        k_max = float(torch.cat([diag[:n], diag_t]).max()) / kbar
        b = logistic_loss_bound(norm * math.sqrt(k_max))
        train_loss = _logistic(z_train, y_train)
        test_loss = _logistic(z_test, yt)
        out.append(
            LimitRun(
                n,
                T,
                train_loss,
                test_loss,
                test_loss - train_loss,
                float(np.mean(np.sign(z_test) != yt)),
                norm,
                rad,
                b,
                uniform_bound(rad, n=n, loss_bound=b, delta=delta),
                n_points,
                int(torch.unique(order).numel()),
            )
        )
    return out


@dataclass(frozen=True)
class TheoremTerms:
    """Each term of chapter 6's assembly of Theorem 3.1 on one target and one run (ours; :func:`theorem_terms`).

    The run: ``width``, ``seed``, ``n`` (N), ``steps`` (T), ``lr`` (eta), ``delta``.
    The comparator: ``comparator_norm`` ``||theta*||`` (chapter 4's construction
    divided by ``out_scale``), ``comparator_loss`` (the RNN's mean training loss at
    ``theta*``) and ``comparator_max`` (its largest). Optimization:
    ``regret_distance`` ``||theta*||^2 / (2 eta T)``, ``regret_gradient``
    ``eta Gamma^2 / 2`` with ``gamma`` (Gamma) the largest gradient norm at the
    logged iterates, ``error_product`` the mean of ``|G'(b_t)| delta_t`` and
    ``delta_mean`` the mean of ``delta_t`` alone. Generalization: ``coupling`` (the
    measured loss gap between the RNN and its linearization, train plus test),
    ``ball`` (the radius B of the recursion), ``norm_final`` ``||theta_T||``,
    ``max_output`` (M), ``lipschitz`` (``M + max |y|``), ``loss_bound`` (b),
    ``rademacher`` (R of the ball's class), ``complexity`` ``2 (M + max|y|) R``,
    ``confidence`` ``4 b sqrt(2 log(4/delta) / N)``. Measured: ``train_loss``
    and ``population_loss``, means over the logged iterates of the training
    loss and of the loss on fresh draws; ``final_population`` at ``theta_T``.
    """

    width: int
    seed: int
    n: int
    steps: int
    lr: float
    delta: float
    comparator_norm: float
    comparator_loss: float
    comparator_max: float
    regret_distance: float
    regret_gradient: float
    gamma: float
    error_product: float
    delta_mean: float
    coupling: float
    ball: float
    norm_final: float
    max_output: float
    lipschitz: float
    loss_bound: float
    rademacher: float
    complexity: float
    confidence: float
    train_loss: float
    population_loss: float
    final_population: float
    zero_loss: float

    #: the additive terms of the bound, in the order of the assembly
    TERMS = (
        "comparator_loss",
        "regret_distance",
        "regret_gradient",
        "error_product",
        "coupling",
        "complexity",
        "confidence",
    )

    @property
    def terms(self) -> dict[str, float]:
        """The additive terms of the bound, by name (:attr:`TERMS`)."""
        return {k: getattr(self, k) for k in self.TERMS}

    @property
    def bound(self) -> float:
        """The sum of :attr:`terms`: the bound on ``population_loss``."""
        return float(sum(self.terms.values()))


def _sq(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return 0.5 * (z - y).square().sum(dim=1)


@validate_params(
    "width",
    "L",
    "d",
    "n",
    "n_test",
    "eps_x",
    "out_scale",
    "lr_scale",
    "steps",
    "generator",
    n_logs=Int(1, "steps"),
    delta=OPEN_UNIT,
)
def theorem_terms(
    width: int,
    generator: torch.Generator | int | None,
    *,
    L: int,
    d: int,
    eps_x: float,
    n: int,
    n_test: int,
    out_scale: float,
    steps: int,
    lr_scale: float = 0.3,
    n_logs: int = 8,
    delta: float = 0.05,
) -> TheoremTerms:
    """Every term of chapter 6's Theorem 3.1 assembly (ours) on one target and one SGD run of the RNN (chapter 6).

    The target is chapter 4's one-neuron ``F*(xbar) = sin(<w, xbar>)`` (``w``
    uniform on the unit sphere, ``derive(seed, "target")``); the task is
    regression with the squared loss ``G(z, y) = (z - y)^2 / 2`` on ``n``
    sequences ``x = normalize_sequence(xbar, eps_x)``, ``y = F*(xbar)`` (``xbar``:
    :func:`rnnlib.elman.sample_true_sequence` of ``n + n_test`` sequences with
    ``derive(seed, "data")``, the first ``n`` for training, the rest fresh). The
    network is ``ElmanRNN(d, width, generator=derive(seed, "weights", width))``; the
    comparator is :func:`rnnlib.inversion.construct_existence`'s ``(0, A*)``
    (``generator=derive(seed, "fit", width)``) divided by ``out_scale``. SGD (:func:`rnnlib.train.train_rnn`, batch 1) takes
    ``steps = T`` steps of ``eta = lr_scale / (out_scale^2 Kbar)`` in ``n_logs``
    chunks; at the start of each chunk (the logged iterates ``theta_t``) the
    quantities below are evaluated on *all* training sequences: since ``x_t`` is
    drawn uniformly and independently of ``theta_t``, the mean over the training
    set is the expectation over the draw at step ``t``. The bound, our
    reconstruction of the chapter's steps 1-8 for the squared loss:

        mean_t E_D G(theta_t) <= mean_n G(theta*)                        (comparator)
            + ||theta*||^2 / (2 eta T) + eta Gamma^2 / 2                   (regret)
            + mean_t |G'(b_t)| delta_t                                     (error product)
            + coupling                                                     (RNN vs linearization)
            + 2 (M + Y) R_B + 4 b sqrt(2 log(4/delta) / N)                  (generalization)

    ``delta_t`` is :func:`rnnlib.train.convexity_gap` and ``G'(b_t) = z_t - y`` (the
    squared loss is not 1-Lipschitz, so the error is the product); ``Gamma`` is the
    largest ``|G'| out_scale sqrt(K_t(x, x))`` at the logged iterates. The ball
    ``B = ||theta*|| + sqrt(||theta*||^2 + 2 eta T (max_n G(theta*) + e) + eta^2 T Gamma^2)``
    (``e`` the mean error product) contains every iterate by the recursion of
    chapter 6's step 7; ``R_B`` is :func:`rnnlib.generalization.rademacher_bound`
    for the linearized class of radius B at the initialization's kernel, ``M`` its
    largest ``|z|`` (initial output included) over the training set and 200 fresh
    sequences, ``Y`` the largest ``|y|``; losses then lie in ``[0, b]``,
    ``b = (M + Y)^2 / 2``, and are ``(M + Y)``-Lipschitz (contraction lemma). The
    class covers the linearized network; the RNN's iterates are reached by
    ``coupling``, the mean over iterates of ``|G(RNN) - G(lin)|`` on the training
    set plus on the fresh draws (measured, not bounded). ``population_loss`` is the
    mean over the logged iterates of the loss on ``n_test`` fresh draws.
    """
    seed = as_seed(generator)
    w = torch.randn(1, 1, (L - 2) * (d - 1), generator=derive(seed, "target"))
    target = ConceptTarget(
        [[get_function("sin")]],
        w / w.norm(),
        torch.ones(1, 1),
        L - 2,
        d - 1,
    )
    xb = sample_true_sequence(n + n_test, L, d, generator=derive(seed, "data"))
    x_all = normalize_sequence(xb, eps_x)
    y_all = target(xb)
    x, y, xt, yt = x_all[:n], y_all[:n], x_all[n:], y_all[n:]
    model = ElmanRNN(d, width, generator=derive(seed, "weights", width))
    cons = construct_existence(
        model, target, eps_x, generator=derive(seed, "fit", width)
    )
    zero_w = torch.zeros(width, width)
    star = (zero_w, cons.dA / out_scale)
    theta_star = float(star[1].double().norm())
    model_star = copy.deepcopy(model)
    with torch.no_grad():
        model_star.A.add_(star[1])
        loss_star = _sq(predict(model_star, x, out_scale), y)
    k_train = tangent_kernel_diag(model, x)
    lr = lr_scale / (out_scale**2 * float(k_train.mean()))
    f0 = predict(model, x, out_scale)
    f0_t = predict(model, xt, out_scale)
    bounds = np.linspace(0, steps, n_logs + 1).round().astype(int)
    cur = model
    prods, deltas, g2max = [], [], 0.0
    train, test, coupling = [], [], []
    for k in range(n_logs + 1):
        with torch.no_grad():
            dW = cur.W.detach() - model.W.detach()
            dA = cur.A.detach() - model.A.detach()
        z = predict(cur, x, out_scale)
        zt = predict(cur, xt, out_scale)
        lin = f0 + out_scale * pseudo_network(model, dW, dA, x)
        lin_t = f0_t + out_scale * pseudo_network(model, dW, dA, xt)
        if k == n_logs:  # theta_T: its norm and its loss only
            final = float(_sq(zt, yt).mean())
            norm_final = math.sqrt(
                float(dW.double().square().sum()) + float(dA.double().square().sum())
            )
            break
        gp = (z - y).abs().sum(dim=1)
        dlt = convexity_gap(model, (dW, dA), star, x, out_scale=out_scale)
        prods.append(float((gp * dlt).mean()))
        deltas.append(float(dlt.mean()))
        kt = tangent_kernel_diag(cur, x)
        g2max = max(g2max, float((gp**2 * out_scale**2 * kt).max()))
        tr, te = _sq(z, y).mean(), _sq(zt, yt).mean()
        train.append(float(tr))
        test.append(float(te))
        coupling.append(
            abs(float(tr - _sq(lin, y).mean())) + abs(float(te - _sq(lin_t, yt).mean()))
        )
        chunk = int(bounds[k + 1] - bounds[k])
        if chunk > 0:
            cur = train_rnn(
                cur,
                x,
                y,
                out_scale=out_scale,
                lr=lr,
                steps=chunk,
                loss="squared",
                generator=derive(seed, "order", width, k),
                log_every=chunk,
            ).model
    T = steps
    e = float(np.mean(prods))
    reg_dist = theta_star**2 / (2 * lr * T)
    reg_grad = lr * g2max / 2
    ball = theta_star + math.sqrt(
        theta_star**2 + 2 * lr * T * (float(loss_star.max()) + e) + lr**2 * T * g2max
    )
    ks = torch.cat([k_train, tangent_kernel_diag(model, xt[:200])])
    f0s = torch.cat([f0, f0_t[:200]]).abs()[:, 0]
    M = float((f0s + out_scale * ball * ks.sqrt()).max())
    Y = float(torch.cat([y, yt[:200]]).abs().max())
    lip = M + Y
    b = lip**2 / 2
    rad = rademacher_bound(k_train, out_scale=out_scale, norm=ball)
    conf = uniform_bound(0.0, n=n, loss_bound=b, delta=delta)
    return TheoremTerms(
        width,
        seed,
        n,
        T,
        lr,
        delta,
        theta_star,
        float(loss_star.mean()),
        float(loss_star.max()),
        reg_dist,
        reg_grad,
        math.sqrt(g2max),
        e,
        float(np.mean(deltas)),
        float(np.mean(coupling)),
        ball,
        norm_final,
        M,
        lip,
        b,
        rad,
        2 * lip * rad,
        conf,
        float(np.mean(train)),
        float(np.mean(test)),
        final,
        float((yt.square().sum(dim=1) / 2).mean()),
    )


# --- the recorded run: the gap against the width, both initializations, more seeds ----------------

#: The chapter whose record this module makes.
CHAPTER = 6

#: The recorded width sweep (``make record CH=06``): chapter 6's width sweep
#: (``n`` training sequences, ``epochs`` passes) at more seeds and one more width, for
#: the paper's i.i.d. initialization and the doubled one (zero initial output).
RECORD: dict = {
    "widths": [128, 256, 512, 1024, 2048],
    "seeds": list(range(8)),
    "initializations": ["iid", "doubled"],
    "n": 100,
    "L": 6,
    "d": 6,
    "eps_x": 0.5,
    "n_pool": 400,
    "n_test": 1000,
    "out_scale": 0.5,
    "epochs": 4,
    "delta": 0.05,
    # the sweep over N at one width (the i.i.d. initialization)
    "n_sweep_ns": [25, 50, 100, 200, 400],
    "n_sweep_m": 256,
    "n_sweep_seeds": list(range(8)),
    # the limit learner at a fixed number of SGD steps, any N
    "fixed_ns": [400, 1000, 3000, 10000, 30000, 70000, 100000],
    "fixed_steps": 1600,
    "fixed_train_points": 1000,
    "fixed_seeds": list(range(8)),
}
#: The record at a size that takes seconds (CI runs it; never written over the record).
SMOKE: dict = {
    **RECORD,
    "widths": [8, 16],
    "seeds": [0, 1],
    "n": 8,
    "n_pool": 8,
    "n_test": 16,
    "n_sweep_ns": [4, 8],
    "n_sweep_m": 8,
    "n_sweep_seeds": [0, 1],
    "fixed_ns": [8, 16],
    "fixed_steps": 20,
    "fixed_train_points": 8,
    "fixed_seeds": [0, 1],
}
# the short deterministic run whose outputs fingerprint the code path
_FP = {"widths": [12, 24], "seeds": [0, 1], "n": 10, "n_test": 20}
#: What the record keeps of each run (fields of :class:`GeneralizationRun`).
_KEPT = (
    "gap",
    "train_loss",
    "test_loss",
    "test_error",
    "norm",
    "rademacher",
    "flip_fraction",
    "f0_max",
)
#: What the record keeps of each run of the sweep over N (adds the bound).
_KEPT_N = (*_KEPT, "loss_bound", "bound")
#: What the record keeps of the fixed-T limit learner (fields of :class:`LimitRun`).
_KEPT_FIXED = (
    "gap",
    "train_loss",
    "test_loss",
    "test_error",
    "norm",
    "rademacher",
    "loss_bound",
    "bound",
)


def _check_record_config(config: object) -> dict:
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a mapping like RECORD, got {type(config).__name__}"
        )
    missing = sorted(set(RECORD) - set(config))
    if missing:
        raise ValueError(f"config must have the keys of RECORD; missing {missing}")
    bad = sorted(set(config["initializations"]) - {"iid", "doubled"})
    if bad:
        raise ValueError(
            f"config['initializations'] must be 'iid' or 'doubled', got {bad}"
        )
    for key in (
        "n_sweep_ns",
        "n_sweep_seeds",
        "fixed_ns",
        "fixed_seeds",
    ):
        check_ints(config[key], f"config[{key!r}]", minimum=0)
    if max(config["n_sweep_ns"]) > config["n_pool"]:
        raise ValueError(
            "config['n_sweep_ns'] must not exceed config['n_pool'] ="
            f" {config['n_pool']}, got {max(config['n_sweep_ns'])}"
        )
    return dict(config)


def _run(cfg: Mapping, n: int, m: int, generator: int, init: str, **kw):
    return generalization_run(
        n,
        m,
        generator,
        L=cfg["L"],
        d=cfg["d"],
        eps_x=cfg["eps_x"],
        n_pool=cfg["n_pool"],
        n_test=cfg["n_test"],
        out_scale=cfg["out_scale"],
        epochs=cfg["epochs"],
        delta=cfg["delta"],
        doubled=init == "doubled",
        **kw,
    )


def _fixed_curve(
    cfg: Mapping,
    generator: int,
    *,
    ns: Sequence[int] | None = None,
    n_test: int | None = None,
    steps: int | None = None,
    train_points: int | None = None,
) -> list:
    """The record's fixed-T limit learner at one seed (:func:`limit_generalization_curve`, pool of ``max(ns)``)."""
    ns = cfg["fixed_ns"] if ns is None else ns
    return limit_generalization_curve(
        ns,
        generator,
        L=cfg["L"],
        d=cfg["d"],
        eps_x=cfg["eps_x"],
        n_test=cfg["n_test"] if n_test is None else n_test,
        steps=cfg["fixed_steps"] if steps is None else steps,
        delta=cfg["delta"],
        gram_size=0,
        train_points=(
            cfg["fixed_train_points"] if train_points is None else train_points
        ),
        n_pool=max(ns),
    )


@validate_params("progress", config=Instance(Mapping))
def run_width_record(config: Mapping | None = None, *, progress: bool = False) -> dict:
    """The recorded runs of chapter 6 (``make record CH=06``): the width sweep, the sweep over N, the fixed-T learner.

    For each initialization of ``config`` (:data:`RECORD` by default), seed and width,
    :func:`generalization_run` at ``n`` training sequences, under the
    initialization's name: ``{field: [[value per width] per seed]}`` for the fields
    ``gap``, ``train_loss``, ``test_loss``, ``test_error``, ``norm``,
    ``rademacher``, ``flip_fraction`` and ``f0_max`` of
    :class:`GeneralizationRun`. Under ``"n_sweep"``: the i.i.d. runs at width
    ``n_sweep_m`` for each N of ``n_sweep_ns`` and seed of ``n_sweep_seeds``
    (``[[value per N] per seed]``, the same fields plus ``loss_bound`` and
    ``bound``). Under ``"fixed_t"``: :func:`limit_generalization_curve` at
    ``fixed_steps`` steps for each seed of ``fixed_seeds`` over ``fixed_ns``
    (``[[value per N] per seed]`` of ``gap``, ``train_loss``, ``test_loss``,
    ``test_error``, ``norm``, ``rademacher``, ``loss_bound``, ``bound``). Every
    run uses the chapter's streams, so the chapter's live runs at its own seeds
    are rows of the record, which it checks.
    """
    cfg = _check_record_config(RECORD if config is None else config)
    cells = [
        (init, i, j)
        for init in cfg["initializations"]
        for i in range(len(cfg["seeds"]))
        for j in range(len(cfg["widths"]))
    ]
    ns_cells = [
        (i, j)
        for i in range(len(cfg["n_sweep_seeds"]))
        for j in range(len(cfg["n_sweep_ns"]))
    ]

    def empty(keys, rows, cols):
        return {k: [[math.nan] * len(cols) for _ in rows] for k in keys}

    out = {
        init: empty(_KEPT, cfg["seeds"], cfg["widths"])
        for init in cfg["initializations"]
    }
    out["n_sweep"] = empty(_KEPT_N, cfg["n_sweep_seeds"], cfg["n_sweep_ns"])
    out["fixed_t"] = empty(_KEPT_FIXED, cfg["fixed_seeds"], cfg["fixed_ns"])
    tasks = (
        [("width", c) for c in cells]
        + [("n", c) for c in ns_cells]
        + [("fixed", i) for i in range(len(cfg["fixed_seeds"]))]
    )
    for kind, c in progress_bar(tasks, enabled=progress, desc="record runs"):
        if kind == "width":
            init, i, j = c
            r = _run(
                cfg,
                cfg["n"],
                cfg["widths"][j],
                cfg["seeds"][i],
                init,
            )
            for k in _KEPT:
                out[init][k][i][j] = float(getattr(r, k))
        elif kind == "n":
            i, j = c
            r = _run(
                cfg,
                cfg["n_sweep_ns"][j],
                cfg["n_sweep_m"],
                cfg["n_sweep_seeds"][i],
                "iid",
            )
            for k in _KEPT_N:
                out["n_sweep"][k][i][j] = float(getattr(r, k))
        else:
            runs = _fixed_curve(cfg, cfg["fixed_seeds"][c])
            for k in _KEPT_FIXED:
                out["fixed_t"][k][c] = [float(getattr(r, k)) for r in runs]
    return out


@validate_params(config=Instance(Mapping))
def width_fingerprint(config: Mapping | None = None) -> dict:
    """A short deterministic CPU run of the record's code path, in float64 (chapter 6).

    :func:`generalization_run` for both initializations, two seeds and two small
    widths, ``n = 10`` sequences with ``config``'s other settings, and the
    fixed-T limit learner at two seeds, N = 10 and 20, 30 steps; returns the kept
    numbers of every run and ``config`` itself. Any change to the training code, its
    constants or the config changes it (:func:`check_width_record`). Takes a second.
    """
    cfg = _check_record_config(RECORD if config is None else config)
    small = {**cfg, "n_pool": _FP["n"], "n_test": _FP["n_test"]}
    out: dict = {"config": copy.deepcopy(cfg)}
    for init in cfg["initializations"]:
        for seed in _FP["seeds"]:
            for m in _FP["widths"]:
                r = _run(
                    small,
                    _FP["n"],
                    m,
                    seed,
                    init,
                    dtype=torch.float64,
                )
                out[f"{init} seed={seed} m={m}"] = {
                    k: float(getattr(r, k)) for k in _KEPT
                }
    for seed in _FP["seeds"]:
        runs = _fixed_curve(
            cfg,
            seed,
            ns=[_FP["n"], 2 * _FP["n"]],
            n_test=_FP["n_test"],
            steps=30,
            train_points=_FP["n"],
        )
        out[f"fixed_t seed={seed}"] = [
            {k: float(getattr(r, k)) for k in _KEPT_FIXED} for r in runs
        ]
    return out


@validate_params("progress", smoke=Bool(), path=PathLike(), command=Str(), jobs=Int(1))
def make_width_record(
    path: str | Path | None = None,
    *,
    smoke: bool = False,
    progress: bool = False,
    command: str | None = None,
    jobs: int = 1,
) -> Path:
    """Run the record (:data:`RECORD`, or :data:`SMOKE` with ``smoke``) and write it (``rnnlib.records``).

    ``path`` defaults to ``chapters/records/ch06.json`` for the full record; a smoke
    record must be given a path (it never overwrites the committed one). ``jobs``
    is accepted for ``make record`` and ignored (one process, about 5 CPU-minutes).
    Returns the path written.
    """
    return records.build_record(
        CHAPTER,
        path,
        config=SMOKE if smoke else RECORD,
        run=lambda cfg: run_width_record(cfg, progress=progress),
        fingerprint=width_fingerprint,
        smoke=smoke,
        command=command,
    )


@validate_params(record=Instance(Mapping))
def check_width_record(record: Mapping) -> float:
    """Re-run :func:`width_fingerprint` at the record's config and compare (``rnnlib.records.check_fingerprint``).

    Raises :class:`rnnlib.records.StaleRecordError` ("the recorded runs of chapter 6
    are stale: run `make record CH=06`") if the code path gives other numbers than
    when the record was made, or if the config was edited after it. Returns the
    largest relative difference.
    """
    return records.check_live_fingerprint(record, CHAPTER, width_fingerprint)


@validate_params(record=Instance(Mapping), field=Choice(*_KEPT))
def width_trends(record: Mapping, field: str = "gap") -> dict:
    """Per initialization of a record, the log-log slope in m of ``field`` fitted per seed (chapter 6).

    Returns ``{init: rnnlib.trends.SeedTrend}`` (:func:`rnnlib.trends.loglog_trend`
    over the record's seeds and widths); ``field`` is one of the kept fields with
    positive values (``gap``, ``norm``, ``rademacher``, ...).
    """
    if not isinstance(record, Mapping) or "results" not in record:
        raise ValueError("record must be a record (rnnlib.records.read_record)")
    cfg, res = record["config"], record["results"]
    return {
        init: trends.loglog_trend(cfg["widths"], np.asarray(res[init][field]))
        for init in cfg["initializations"]
    }


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m rnnlib.experiments.ch06 --record | --smoke [--out PATH]``."""
    records.record_cli(
        argv,
        chapter=CHAPTER,
        make=lambda out, smoke, **kw: make_width_record(
            out, smoke=smoke, progress=not smoke, **kw
        ),
        cost="about 5 CPU-minutes",
    )


if __name__ == "__main__":
    main()
