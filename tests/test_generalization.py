"""Tests of rnnlib.generalization: the closed-form Rademacher bound against Monte Carlo and brute force."""

import itertools
import math

import pytest
import torch

from rnnlib.elman import ElmanRNN, sample_normalized_sequence
from rnnlib.generalization import (
    classification_task,
    empirical_rademacher,
    generalization_run,
    logistic_loss_bound,
    rademacher_bound,
    uniform_bound,
)
from rnnlib.train import tangent_kernel, tangent_kernel_diag

D = torch.float64


def _kernel(n=8, m=24, seed=0):
    model = ElmanRNN(4, m, generator=seed, dtype=D)
    x = sample_normalized_sequence(
        n, 5, 4, 0.5, generator=seed + 1, dtype=D
    )
    return tangent_kernel(model, x), tangent_kernel_diag(model, x)


def test_monte_carlo_matches_the_exact_expectation_and_sits_below_the_closed_form():
    K, Kd = _kernel(n=8)
    exact = (
        sum(
            math.sqrt(
                float(
                    torch.tensor(s, dtype=D)
                    @ K
                    @ torch.tensor(s, dtype=D)
                )
            )
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
    phi = torch.randn(
        6, 5, generator=gen, dtype=D
    )  # explicit features: K = phi phi^T
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
        0.2 + math.sqrt(2 * math.log(40) / 100),
    )
    assert math.isclose(logistic_loss_bound(0.0), math.log(2))
    assert math.isclose(
        logistic_loss_bound(50.0), 50.0, rel_tol=1e-12
    )


def test_classification_task_is_balanced_and_nested():
    x, y, xt, yt = classification_task(
        5, 4, 0.5, 40, 60, generator=3
    )
    assert (
        x.shape == (40, 5, 4)
        and y.shape == (40, 1)
        and xt.shape == (60, 5, 4)
    )
    assert set(torch.cat([y, yt]).unique().tolist()) == {-1.0, 1.0}
    assert abs(float(torch.cat([y, yt]).mean())) <= 0.05
    x2, y2, _, _ = classification_task(
        5, 4, 0.5, 40, 60, generator=3
    )
    assert torch.equal(x, x2) and torch.equal(y, y2)


def test_generalization_run_is_consistent():
    r = generalization_run(
        20,
        32,
        0,
        L=5,
        d=4,
        eps_x=0.5,
        n_pool=30,
        n_test=50,
        out_scale=0.5,
        epochs=2,
    )
    assert math.isclose(r.gap, r.test_loss - r.train_loss)
    assert (
        r.bound >= 2 * r.rademacher and r.loss_bound >= math.log(2)
    )
    assert 0 <= r.test_error <= 1 and r.norm > 0


def test_exercise_6_2_checker(capsys):
    from rnnlib import homework

    def exact(K, out_scale, norm):
        n = K.shape[0]
        s = torch.tensor(
            list(itertools.product([-1.0, 1.0], repeat=n)),
            dtype=K.dtype,
        )
        return (
            out_scale
            * norm
            * ((s @ K) * s).sum(1).clamp_min(0).sqrt().mean()
            / n
        )

    homework.check_exercise_6_2(exact)
    assert (
        "Exercise 6.2: all 4 checks passed."
        in capsys.readouterr().out
    )
    with pytest.raises(homework.ExerciseCheckFailed):
        homework.check_exercise_6_2(
            lambda K, a, b: (
                a * b * K.diagonal().sum().sqrt() / K.shape[0]
            )
        )
