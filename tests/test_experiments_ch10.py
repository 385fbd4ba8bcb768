"""Chapter 10's sweeps: the batched runs against the library's one-run-at-a-time ones, k*, slopes, the scalar model."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import t as student_t

from rnnlib.dynamical import SimpleRNN
from rnnlib.experiments import ch10
from rnnlib.truncation import (
    batched_gd_weights,
    weight_distance_sweep,
)


def _setup(T: int = 7, n: int = 2, m: int = 5, batch: int = 3):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(batch, T, n, generator=gen, dtype=torch.float64)
    x = x / x.norm(dim=2, keepdim=True).clamp(min=1.0)
    teacher = SimpleRNN(
        n,
        m,
        init="orthogonal",
        spectral_norm=0.8,
        generator=1,
        dtype=torch.float64,
    )
    student = SimpleRNN(
        n,
        m,
        init="orthogonal",
        spectral_norm=0.85,
        generator=2,
        dtype=torch.float64,
    )
    with torch.no_grad():
        y = teacher.output(teacher(x))
        student.C.copy_(teacher.C)
    return student, x, y


@pytest.mark.parametrize("last_only", [False, True])
@pytest.mark.parametrize("schedule", ["decay", "constant"])
def test_batched_runs_equal_the_library_runs(last_only, schedule):
    student, x, y = _setup()
    ks, steps, T = [1, 2, 4], 20, x.shape[1]
    lr = 1.0 if schedule == "decay" else 0.2
    ref = weight_distance_sweep(
        student,
        x,
        y,
        ks,
        steps=steps,
        lr=lr,
        schedule=schedule,
        project=0.9,
        last_only=last_only,
    )
    R = 1 + len(ks)
    alphas = lr / np.arange(1, steps + 1) if schedule == "decay" else np.full(steps, lr)
    w = batched_gd_weights(
        student.W.detach().expand(R, -1, -1),
        student.U.detach().expand(R, -1, -1),
        student.C.expand(R, -1, -1),
        x.expand(R, -1, -1, -1),
        y.expand(R, -1, -1, -1),
        [T, *ks],
        torch.tensor(np.tile(alphas, (R, 1))),
        steps=steps,
        project=0.9,
        last_only=last_only,
    ).numpy()
    dist = np.linalg.norm(w[:, 1:] - w[:, :1], axis=2).T
    np.testing.assert_allclose(dist, ref, rtol=0, atol=1e-12)


def test_smallest_k_interpolates_a_geometric_decay():
    ks = [1, 2, 4, 8]
    d = 0.5 ** np.array(ks, dtype=float)
    eps = 0.5**3
    assert ch10.smallest_k(d, ks, eps) == pytest.approx(3.0)
    # every k is within eps: the first k; none is: nan
    assert ch10.smallest_k(d, ks, 1.0) == 1
    assert math.isnan(ch10.smallest_k(d, ks, 1e-6))
    # a late bump above eps moves k* past it
    bumped = d.copy()
    bumped[2] = 0.2
    assert ch10.smallest_k(bumped, ks, eps) > 4
    # shape is kept over leading axes
    assert ch10.smallest_k(np.stack([d, d]), ks, eps).shape == (2,)


def test_seed_slopes_and_interval():
    x = np.log([8, 16, 32, 64])
    y = np.stack([2 + 0.3 * x, 1 - 0.1 * x])
    np.testing.assert_allclose(ch10.seed_slopes(x, y), [0.3, -0.1])
    v = [1.0, 2.0, 3.0, 4.0]
    mean, lo, hi = ch10.mean_interval(v)
    half = student_t.ppf(0.975, 3) * np.std(v, ddof=1) / 2
    assert (mean, lo, hi) == pytest.approx((2.5, 2.5 - half, 2.5 + half))


@pytest.mark.parametrize("w", [1.1, 0.9, -1.2])
def test_scalar_smoothness_matches_autograd(w):
    Ts = [3, 10, 20]
    got = ch10.scalar_smoothness(w, Ts, batch=8, generator=4)
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(8, max(Ts), generator=gen, dtype=torch.float64)
    y = torch.randn(8, generator=gen, dtype=torch.float64)
    for j, T in enumerate(Ts):
        wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
        h = torch.zeros(8, dtype=torch.float64)
        for t in range(T):
            h = wt * h + x[:, t]
        loss = 0.5 * ((h - y) ** 2).mean()
        (g,) = torch.autograd.grad(loss, wt, create_graph=True)
        (g2,) = torch.autograd.grad(g, wt)
        assert got[1, j] == pytest.approx(abs(float(g.detach())), rel=1e-10)
        assert got[0, j] == pytest.approx(abs(float(g2)), rel=1e-10)


def test_scalar_smoothness_grows_like_t2_w2t_only_when_unstable():
    Ts = [40, 80, 120]
    grow = ch10.scalar_smoothness(1.1, Ts)[0]
    rate = ch10.seed_slopes(Ts, np.log(grow) - 2 * np.log(Ts))[0]
    assert rate == pytest.approx(2 * math.log(1.1), rel=0.05)
    flat = ch10.scalar_smoothness(0.9, Ts)[0]
    assert flat.max() / flat.min() < 10


def test_k_star_sweep_small():
    sweep = ch10.k_star_sweep(
        [2, 4, 8],
        [1, 2, 3],
        [0, 1],
        eps=0.05,
        m=3,
        T=5,
        batch=2,
        constant_lr=0.1,
    )
    assert list(sweep.distances) == [
        "alpha/i",
        "constant, matched sum",
        "constant 0.1",
    ]
    for d in sweep.distances.values():
        assert d.shape == (2, 3, 3) and np.all(np.isfinite(d))
    for v in sweep.slopes.values():
        assert v.shape == (2,)
    # the matched constant walks the same total length as alpha/i
    np.testing.assert_allclose(
        sweep.step_length,
        [1.5, 1.5 + 1 / 3 + 1 / 4, 2.717857142857143],
    )
