"""Tests of rnnlib.initialization (chapter 1 measurements)."""

import numpy as np
import pytest
import torch

from rnnlib.elman import (
    ElmanRNN,
    normalize_sequence,
    sample_true_sequence,
)
from rnnlib.initialization import (
    active_fraction,
    flip_fraction_vs_eps,
    norm_profile,
    pattern_flip_fraction,
    predicted_sq_norms,
    sequence_norms,
)


def test_predicted_sq_norms_is_cumulative_input_energy():
    x = normalize_sequence(
        sample_true_sequence(1, 5, 4, generator=0), 0.5
    )
    torch.testing.assert_close(
        predicted_sq_norms(x)[0],
        torch.tensor([1.0, 1.25, 1.5, 1.75, 2.75]),
    )


def test_norm_profile_shapes_and_prediction():
    prof = norm_profile(
        [64, 256], L=6, d=4, eps_x=0.1, n_nets=4, batch_size=4
    )
    assert prof.mean.shape == prof.std.shape == (2, 6)
    assert prof.predicted.shape == (6,)
    np.testing.assert_allclose(
        prof.predicted[:5],
        np.sqrt(1 + 0.01 * np.arange(5)),
        rtol=1e-6,
    )
    assert np.all(np.abs(prof.mean[1] / prof.predicted - 1) < 0.3)


def test_active_fraction_is_about_one_half():
    net = ElmanRNN(5, 2048, generator=0)
    x = normalize_sequence(
        sample_true_sequence(16, 6, 5, generator=1), 0.1
    )
    frac = active_fraction(net, x)
    assert frac.shape == (6,)
    assert torch.all((frac - 0.5).abs() < 0.05)


def test_flip_fraction_is_zero_without_change_and_grows_with_eps():
    net = ElmanRNN(5, 256, generator=0)
    x_bar = sample_true_sequence(8, 6, 5, generator=1)
    flips = flip_fraction_vs_eps(
        net, [0.01, 0.1, 1.0], L=6, batch_size=16
    )
    assert flips[0] < flips[1] < flips[2]
    # replacing a token by itself flips nothing: reuse the generator that produced the token
    same = pattern_flip_fraction(net, x_bar, 0.5, 0, generator=1)
    assert same == 0.0


def test_flip_fraction_only_counts_later_steps():
    net = ElmanRNN(5, 64, generator=0)
    x_bar = sample_true_sequence(4, 8, 5, generator=1)
    assert (
        0.0
        <= pattern_flip_fraction(
            net, x_bar, 1.0, x_bar.shape[1] - 1, generator=2
        )
        <= 1.0
    )
    with pytest.raises(ValueError, match="position must be <="):
        pattern_flip_fraction(
            net, x_bar, 1.0, x_bar.shape[1], generator=2
        )


def test_sequence_norms_shape():
    assert sequence_norms(32, 5, 4, 0.1, batch_size=3).shape == (
        3,
        5,
    )


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: norm_profile([], 5, 4, 0.1),
            ValueError,
            "widths must contain",
        ),
        (
            lambda: norm_profile([0], 5, 4, 0.1),
            ValueError,
            r"widths\[i\] must be >= 1",
        ),
        (
            lambda: norm_profile([8], 5, 4, 2.0),
            ValueError,
            "eps_x must lie in",
        ),
        (
            lambda: norm_profile([8], 5, 4, 0.1, n_nets=1),
            ValueError,
            "n_nets must be >= 2",
        ),
        (
            lambda: active_fraction("net", torch.zeros(1, 3, 4)),
            TypeError,
            "model must be an rnnlib.elman.ElmanRNN",
        ),
        (
            lambda: flip_fraction_vs_eps(ElmanRNN(4, 8), [], L=5),
            ValueError,
            "eps_values must contain",
        ),
    ],
)
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
