"""Tests of rnnlib.generalization: the closed-form Rademacher bound against Monte Carlo and brute force."""

import itertools
import math

import pytest
import torch

from rnnlib.elman import ElmanRNN, sample_normalized_sequence
from rnnlib.generalization import (
    classification_task,
    empirical_rademacher,
    logistic_loss_bound,
    rademacher_bound,
    uniform_bound,
)
from rnnlib.ntk import tangent_kernel, tangent_kernel_diag

D = torch.float64


def _kernel(n=8, m=24, seed=0):
    model = ElmanRNN(4, m, generator=seed, dtype=D)
    x = sample_normalized_sequence(n, 5, 4, 0.5, generator=seed + 1, dtype=D)
    return tangent_kernel(model, x), tangent_kernel_diag(model, x)


def test_monte_carlo_matches_the_exact_expectation_and_sits_below_the_closed_form():
    K, Kd = _kernel(n=8)
    exact = (
        sum(
            math.sqrt(float(torch.tensor(s, dtype=D) @ K @ torch.tensor(s, dtype=D)))
            for s in itertools.product([-1, 1], repeat=8)
        )
        / 2**8
        * 0.5
        * 2.0
        / 8
    )
    mc, se = empirical_rademacher(
        K, out_scale=0.5, norm=2.0, n_signs=20000, generator=1
    )
    assert abs(mc - exact) < 4 * se + 1e-12
    closed = rademacher_bound(Kd, out_scale=0.5, norm=2.0)
    assert (
        exact <= closed <= math.sqrt(2) * exact
    )  # Jensen above, Khintchine-Kahane (1/sqrt 2) below


def test_the_supremum_is_attained_by_the_aligned_direction():
    # brute force over random directions never beats the closed-form supremum for a fixed sign vector
    gen = torch.Generator().manual_seed(0)
    phi = torch.randn(6, 5, generator=gen, dtype=D)  # explicit features: K = phi phi^T
    K = phi @ phi.T
    sigma = torch.tensor([1, -1, 1, 1, -1, -1], dtype=D)
    best = max(
        float(sigma @ phi @ (t / t.norm()))
        for t in torch.randn(4000, 5, generator=gen, dtype=D)
    )
    assert best <= math.sqrt(float(sigma @ K @ sigma)) + 1e-12
    assert best > 0.97 * math.sqrt(float(sigma @ K @ sigma))


def test_uniform_bound_and_loss_bound():
    assert math.isclose(
        uniform_bound(0.1, n=100, loss_bound=1.0, delta=0.05),
        0.2 + 4 * math.sqrt(2 * math.log(80) / 100),
    )
    assert math.isclose(logistic_loss_bound(0.0), math.log(2))
    assert math.isclose(logistic_loss_bound(50.0), 50.0, rel_tol=1e-12)


def test_classification_task_is_balanced_and_nested():
    x, y, xt, yt = classification_task(5, 4, 0.5, 40, 60, generator=3)
    assert x.shape == (40, 5, 4) and y.shape == (40, 1) and xt.shape == (60, 5, 4)
    assert set(torch.cat([y, yt]).unique().tolist()) == {-1.0, 1.0}
    assert abs(float(torch.cat([y, yt]).mean())) <= 0.05
    x2, y2, _, _ = classification_task(5, 4, 0.5, 40, 60, generator=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)


def test_exercise_6_2_checker(capsys):
    from rnnlib import homework

    def exact(K, out_scale, norm):
        n = K.shape[0]
        s = torch.tensor(
            list(itertools.product([-1.0, 1.0], repeat=n)),
            dtype=K.dtype,
        )
        return out_scale * norm * ((s @ K) * s).sum(1).clamp_min(0).sqrt().mean() / n

    homework.check_exercise_6_2(exact)
    assert "Exercise 6.2: all 4 checks passed." in capsys.readouterr().out
    with pytest.raises(homework.ExerciseCheckFailed):
        homework.check_exercise_6_2(
            lambda K, a, b: a * b * K.diagonal().sum().sqrt() / K.shape[0]
        )


def test_sgd_budget_closes_and_cancels_out_scale_and_width():
    from rnnlib.generalization import sgd_budget

    kw = dict(p=2, C=3.0, L=6, eps=0.1, kernel_constant=1.7)
    a = sgd_budget(width=256, out_scale=0.5, **kw)
    b = sgd_budget(width=4096, out_scale=0.01, **kw)
    # the regret terms at (eta, T) equal eps, and T = 2 c p^2 C^2 L / eps^2
    assert math.isclose(a["regret"], 0.1, rel_tol=1e-12)
    assert math.isclose(a["T"], 2 * 1.7 * 4 * 9 * 6 / 0.01, rel_tol=1e-12)
    assert math.isclose(a["T"], b["T"], rel_tol=1e-12)
    # eta = eps / (c out_scale^2 L m), tau* = sqrt(2) p C / out_scale
    assert math.isclose(a["eta"], 0.1 / (1.7 * 0.25 * 6 * 256), rel_tol=1e-12)
    assert math.isclose(b["tau_star"], math.sqrt(2) * 6 / 0.01, rel_tol=1e-12)
    # the a-priori ball's sample size does not depend on out_scale or m
    assert math.isclose(a["N_min"], b["N_min"], rel_tol=1e-9)
    # a brute-force minimization of the regret terms over eta gives the same T
    th, G = a["theta_star"], a["Gamma"]
    etas = a["eta"] * torch.logspace(-2, 2, 2001, dtype=D)
    best = (th**2 / (2 * etas * a["T"]) + etas * G**2 / 2).min()
    assert math.isclose(float(best), 0.1, rel_tol=1e-5)
