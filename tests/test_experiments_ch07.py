"""Tests of rnnlib.experiments.ch07: the limit-kernel learner's sample-complexity sweep."""

import numpy as np
import torch

from rnnlib.experiments import ch07
from rnnlib.languages import encode_strings
from rnnlib.ntk import limit_tangent_kernel


def test_curve_shapes_and_baselines():
    c = ch07.limit_kernel_curve(
        "pattern:101",
        8,
        [20, 60],
        seeds=2,
        n_fresh=50,
        generator=0,
    )
    assert c.accuracy.shape == (2, 2)
    assert np.all((c.constant >= 0.5) & (c.constant <= 1))
    assert np.all((c.balanced >= 0) & (c.balanced <= 1))
    assert np.all(
        c.train_acc > 0.9
    )  # a small ridge nearly interpolates
    # the same seed gives the same curve
    c2 = ch07.limit_kernel_curve(
        "pattern:101",
        8,
        [20, 60],
        seeds=2,
        n_fresh=50,
        generator=0,
    )
    assert np.array_equal(c.accuracy, c2.accuracy)


def test_loo_ridge_matches_direct_solve():
    z, y = ch07.draw_strings("parity", 40, 6, generator=1)
    x = encode_strings(z, 0.5, dtype=torch.float64)
    K = limit_tangent_kernel(x)
    yy = 2 * y.double() - 1
    alpha, lam = ch07._krr_loo(K, yy, [1e-2])
    direct = torch.linalg.solve(
        K + lam * 40 * torch.eye(40, dtype=K.dtype), yy
    )
    assert float((alpha - direct).abs().max()) < 1e-6 * float(
        direct.abs().max()
    )
    # leave-one-out by refitting, against the closed form, for one point
    keep = torch.arange(40) != 3
    a3 = torch.linalg.solve(
        K[keep][:, keep] + lam * 40 * torch.eye(39, dtype=K.dtype),
        yy[keep],
    )
    pred3 = float(K[3, keep] @ a3)
    evals, evecs = torch.linalg.eigh(K)
    shrink = evals / (evals + lam * 40)
    fit = evecs @ (shrink * (evecs.T @ yy))
    h33 = float((evecs[3] ** 2 * shrink).sum())
    loo3 = float(yy[3] - (yy[3] - fit[3]) / (1 - h33))
    # the closed form holds for ridge (lam * 40) fixed when one point is left out
    assert abs(loo3 - pred3) < 1e-6 * max(1.0, abs(pred3))


def test_first_beating():
    c = ch07.limit_kernel_curve(
        "pattern:101",
        8,
        [20, 60],
        seeds=1,
        n_fresh=20,
        generator=0,
    )
    c.accuracy[:] = [[0.5, 0.9]]
    c.constant[:] = [[0.5, 0.5]]
    assert c.first_beating(0.1) == 60
    assert c.first_beating(0.5) is None
