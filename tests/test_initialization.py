"""Tests of rnnlib.initialization (chapter 1 measurements)."""

import pytest
import torch

from rnnlib.elman import (
    ElmanRNN,
    normalize_sequence,
    sample_true_sequence,
)
from rnnlib.initialization import (
    active_fraction,
    pattern_flip_fraction,
    predicted_sq_norms,
)


def test_predicted_sq_norms_is_cumulative_input_energy():
    x = normalize_sequence(sample_true_sequence(1, 5, 4, generator=0), 0.5)
    torch.testing.assert_close(
        predicted_sq_norms(x)[0],
        torch.tensor([1.0, 1.25, 1.5, 1.75, 2.75]),
    )


def test_active_fraction_is_about_one_half():
    net = ElmanRNN(5, 2048, generator=0)
    x = normalize_sequence(sample_true_sequence(16, 6, 5, generator=1), 0.1)
    frac = active_fraction(net, x)
    assert frac.shape == (6,)
    assert torch.all((frac - 0.5).abs() < 0.05)


def test_replacing_a_token_by_itself_flips_nothing():
    net = ElmanRNN(5, 256, generator=0)
    x_bar = sample_true_sequence(8, 6, 5, generator=1)
    # reuse the generator that produced the token
    same = pattern_flip_fraction(net, x_bar, 0.5, 0, generator=1)
    assert same == 0.0


def test_flip_fraction_only_counts_later_steps():
    net = ElmanRNN(5, 64, generator=0)
    x_bar = sample_true_sequence(4, 8, 5, generator=1)
    assert (
        0.0
        <= pattern_flip_fraction(net, x_bar, 1.0, x_bar.shape[1] - 1, generator=2)
        <= 1.0
    )
    with pytest.raises(ValueError, match="position must be <="):
        pattern_flip_fraction(net, x_bar, 1.0, x_bar.shape[1], generator=2)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: active_fraction("net", torch.zeros(1, 3, 4)),
            TypeError,
            "model must be an rnnlib.elman.ElmanRNN",
        ),
    ],
)
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
