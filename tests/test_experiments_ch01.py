"""Tests of rnnlib.experiments.ch01: the network at initialization over widths and token scales."""

import numpy as np
import pytest

from rnnlib.elman import ElmanRNN
from rnnlib.experiments import ch01


def test_norm_profile_shapes_and_prediction():
    prof = ch01.norm_profile([64, 256], L=6, d=4, eps_x=0.1, n_nets=4, batch_size=4)
    assert prof.mean.shape == prof.std.shape == (2, 6)
    assert prof.predicted.shape == (6,)
    np.testing.assert_allclose(
        prof.predicted[:5],
        np.sqrt(1 + 0.01 * np.arange(5)),
        rtol=1e-6,
    )
    assert np.all(np.abs(prof.mean[1] / prof.predicted - 1) < 0.3)


def test_sequence_norms_shape():
    assert ch01.sequence_norms(32, 5, 4, 0.1, batch_size=3).shape == (
        3,
        5,
    )


def test_flip_fraction_grows_with_eps():
    net = ElmanRNN(5, 256, generator=0)
    flips = ch01.flip_fraction_vs_eps(net, [0.01, 0.1, 1.0], L=6, batch_size=16)
    assert flips[0] < flips[1] < flips[2]


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: ch01.norm_profile([], 5, 4, 0.1),
            ValueError,
            "widths must be a non-empty sequence",
        ),
        (
            lambda: ch01.norm_profile([0], 5, 4, 0.1),
            ValueError,
            r"widths\[i\] must be >= 1",
        ),
        (
            lambda: ch01.norm_profile([8], 5, 4, 2.0),
            ValueError,
            "eps_x must lie in",
        ),
        (
            lambda: ch01.norm_profile([8], 5, 4, 0.1, n_nets=1),
            ValueError,
            "n_nets must be >= 2",
        ),
        (
            lambda: ch01.flip_fraction_vs_eps(ElmanRNN(4, 8), [], L=5),
            ValueError,
            "eps_values must be a non-empty sequence",
        ),
    ],
)
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
