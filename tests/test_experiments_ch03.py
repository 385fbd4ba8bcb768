"""Tests of rnnlib.experiments.ch03: the RNN against its pseudo-network over widths, scales and directions."""

import numpy as np
import pytest

from rnnlib.experiments import ch03


def test_gap_shrinks_with_width_and_grows_with_tau():
    sweep = ch03.gap_sweep(
        [64, 256, 1024],
        [0.5, 2.0],
        L=6,
        d=5,
        eps_x=0.1,
        batch_size=16,
        n_networks=2,
        generator=0,
    )
    assert sweep.relative_gap.shape == (
        2,
        3,
    ) and sweep.flip_fraction.shape == (2, 3)
    assert np.all(np.diff(sweep.flip_fraction, axis=1) < 0)  # fewer flips as m grows
    assert np.all(
        sweep.relative_gap[:, -1] < sweep.relative_gap[:, 0]
    )  # smaller gap at large m
    assert np.all(
        sweep.relative_gap[1] > sweep.relative_gap[0]
    )  # larger gap at larger tau
    assert np.all(sweep.flip_fraction[1] > sweep.flip_fraction[0])


def test_aligned_directions_move_the_output_more_than_random_ones_at_equal_size():
    """The issue-14 defect: along random directions the pseudo-network's output is O(tau/sqrt(m)), along
    B-aligned ones O(tau), so the relative gap is much smaller there at the same spectral norm."""
    sweep = ch03.direction_gap_sweep(
        [64, 1024],
        [1.0],
        L=6,
        d=5,
        eps_x=0.1,
        output_dim=8,
        batch_size=8,
        n_networks=1,
        n_perturbations=1,
        generator=0,
    )
    assert sweep.relative_gap.shape == (
        3,
        1,
        2,
    ) and sweep.kinds == ("random", "gradient", "construction")
    random, gradient, construction = sweep.pseudo[:, 0]
    assert (
        random[1] < 0.5 * random[0]
    )  # 16x wider: the random signal falls like 1/sqrt(m)
    assert (
        gradient[1] > 0.5 * gradient[0] and construction[1] > 0.5 * construction[0]
    )  # O(tau): it does not
    assert np.all(sweep.relative_gap[1:, 0, 1] < 0.6 * sweep.relative_gap[0, 0, 1])
    again = ch03.direction_gap_sweep(
        [64, 1024],
        [1.0],
        L=6,
        d=5,
        eps_x=0.1,
        output_dim=8,
        batch_size=8,
        n_networks=1,
        n_perturbations=1,
        generator=0,
    )
    assert np.array_equal(again.gap, sweep.gap)  # reproducible from the generator
    assert np.array_equal(sweep.select("random").relative_gap, sweep.relative_gap[0])


def test_linearization_sample_pairs():
    s = ch03.linearization_sample(64, 1.0, 5, batch_size=8, n_perturbations=2)
    assert s.true_change.shape == s.pseudo.shape == (16,)
    assert np.mean(np.abs(s.true_change - s.pseudo)) < np.mean(np.abs(s.pseudo))
    assert 0 < s.flip_fraction < 0.2


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: ch03.gap_sweep([], [1.0], L=5, d=4, eps_x=0.1),
            ValueError,
            "widths must be a non-empty",
        ),
        (
            lambda: ch03.gap_sweep([8], [], L=5, d=4, eps_x=0.1),
            ValueError,
            "taus must be a non-empty",
        ),
        (
            lambda: ch03.gap_sweep([8], [-1.0], L=5, d=4, eps_x=0.1),
            ValueError,
            r"taus\[i\] must lie in",
        ),
        (
            lambda: ch03.gap_sweep([8.5], [1.0], L=5, d=4, eps_x=0.1),
            TypeError,
            r"widths\[i\] must be an integer",
        ),
        (
            lambda: ch03.gap_sweep([8], [1.0], L=2, d=4, eps_x=0.1),
            ValueError,
            "L must be >= 3",
        ),
        (
            lambda: ch03.gap_sweep([8], [1.0], L=5, d=4, eps_x=2.0),
            ValueError,
            "eps_x must lie in",
        ),
        (
            lambda: ch03.linearization_sample(8, 1.0, 2),
            ValueError,
            "L must be >= 3",
        ),
        (
            lambda: ch03.linearization_sample(8, 0.0, 5),
            ValueError,
            "tau must lie in",
        ),
    ],
)
def test_bad_input_is_rejected(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_per_network_tables_are_the_networks_behind_the_means():
    """The per-network tables (the seeds of chapter 3's fitted slopes) average to the sweep's means.

    Network k of a 3-network sweep is the network of a 1-network sweep only through its
    stream, so the check is against the sweep's own means: the flip fractions average
    exactly, and the relative gap of each network is its own gap over its own signal.
    """
    kwargs = dict(
        L=5,
        d=4,
        eps_x=0.1,
        output_dim=4,
        batch_size=4,
        n_perturbations=2,
        generator=3,
    )
    sweep = ch03.direction_gap_sweep([16, 32], [0.5, 1.0], n_networks=3, **kwargs)
    assert sweep.network_relative_gap.shape == (3, 2, 2, 3)
    assert sweep.network_flip_fraction.shape == (3, 2, 2, 3)
    np.testing.assert_allclose(
        sweep.network_flip_fraction.mean(axis=-1),
        sweep.flip_fraction,
        rtol=1e-12,
    )
    # networks differ (distinct streams), so the per-network gaps are not all equal
    assert np.ptp(sweep.network_relative_gap, axis=-1).max() > 0
    # the mean relative gap is a ratio of means, between the networks' extremes
    lo = sweep.network_relative_gap.min(axis=-1)
    hi = sweep.network_relative_gap.max(axis=-1)
    assert np.all(lo <= sweep.relative_gap + 1e-12)
    assert np.all(sweep.relative_gap <= hi + 1e-12)
