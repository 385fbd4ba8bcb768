"""Tests of rnnlib.experiments.ch04: the existence construction's tools over widths, lengths and scales."""

import numpy as np
import torch

from rnnlib.experiments import ch04
from rnnlib.plotting import loglog_slope


def test_lemma44_sweep_slopes_and_the_printed_bound():
    widths = [64, 256, 1024, 4096]
    s = ch04.lemma44_sweep(widths, d=10, n_trials=60, generator=0)
    assert -0.62 < loglog_slope(widths, s.corrected) < -0.38
    assert 0.9 < loglog_slope(widths, s.printed) < 1.1
    np.testing.assert_allclose(s.corrected, s.predicted, rtol=0.3)
    # |v||x|/sqrt(m) without a constant is exceeded in a large fraction of trials
    assert 0.25 < s.exceed.mean() < 0.7


def test_decoding_sweep_falls_with_width():
    s = ch04.decoding_sweep(
        [64, 512],
        [6],
        [0.1],
        d=5,
        n_networks=1,
        n_train=256,
        n_test=64,
    )
    assert s.fitted.shape == (2, 1, 1) and set(s.profiles) == {
        (64, 6, 0.1),
        (512, 6, 0.1),
    }
    assert s.fitted[1, 0, 0] < s.fitted[0, 0, 0]
    assert s.analytic.shape == (2, 1, 1)
    assert s.fitted_nets.shape == (1, 2, 1, 1)
    assert s.n_train.tolist() == [256, 256]


def test_decoding_sweep_per_network_arrays_and_train_per_m():
    s = ch04.decoding_sweep(
        [32, 64],
        [5],
        [0.1, 0.3],
        d=4,
        n_networks=2,
        n_train=10,
        n_train_per_m=4,
        n_test=16,
        generator=0,
    )
    assert s.n_train.tolist() == [128, 256]
    for nets, mean in [
        (s.naive_nets, s.naive),
        (s.fitted_nets, s.fitted),
        (s.analytic_nets, s.analytic),
    ]:
        assert nets.shape == (2, 2, 1, 2)
        np.testing.assert_allclose(nets.mean(axis=0), mean)
    prof = s.naive_profile_nets[(64, 5, 0.3)]
    assert prof.shape == (2, 3)
    np.testing.assert_allclose(prof.mean(axis=0), s.profiles[(64, 5, 0.3)][0])
    np.testing.assert_allclose(
        s.analytic_profiles[(64, 5, 0.3)].mean(),
        s.analytic[1, 0, 1],
    )
    # no fitted decoder at all
    s0 = ch04.decoding_sweep([32], [5], [0.1], d=4, n_networks=1, n_train=0, n_test=8)
    assert np.isnan(s0.fitted).all() and np.isfinite(s0.analytic).all()


def test_step_feature_sweep_error_falls_and_norm_grows_with_complexity():
    s = ch04.step_feature_sweep(
        {
            "z^2": lambda t: t**2,
            "sin 3z": lambda t: torch.sin(3 * t),
        },
        [256, 4096],
        n_draws=4,
        generator=0,
    )
    assert np.all(s.errors[:, 1] < s.errors[:, 0])
    assert s.norms[1] > s.norms[0]


def test_correlation_sweep_last_near_two_earlier_small():
    s = ch04.correlation_sweep([128, 1024], L=5, d=4, batch_size=4, n_networks=2)
    assert np.all(np.abs(s.last - 2) < 0.4)
    assert s.max_earlier[1] < s.max_earlier[0] and s.max_earlier[1] < 0.5


def test_construction_norm_shrinks_like_inverse_sqrt_width_and_error_falls(
    sin_target,
):
    tgt = sin_target(5, 4)
    s = ch04.construction_sweep(
        [64, 1024],
        tgt,
        eps_x=0.3,
        n_networks=2,
        n_fit=128,
        n_test=64,
    )
    ratio = s.norm_A[1] / s.norm_A[0]
    assert 0.15 < ratio < 0.4  # 16x wider: 1/4 expected
    assert s.centred[1] < s.centred[0]
    assert np.all(s.decoding < 0.1)
    # the per-network series (one slope each) average to the means
    assert s.centred_nets.shape == s.error_nets.shape == (2, 2)
    np.testing.assert_allclose(s.centred_nets.mean(0), s.centred)
    np.testing.assert_allclose(s.error_nets.mean(0), s.error)
