"""Tests of rnnlib.languages: the binary embedding, D_L1 and the samplers."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnlib.languages import count_ones, dl1_indicator, embed_binary, sample_binary_strings, sample_dl1_balanced
from rnnlib.elman import normalize_sequence

FAST = settings(max_examples=30, deadline=None)


@FAST
@given(st.integers(1, 6), st.integers(1, 12), st.integers(0, 10_000))
def test_embedding_gives_true_sequences(batch, n, seed):
    z = sample_binary_strings(batch, n, generator=seed)
    x_bar = embed_binary(z, dtype=torch.float64)
    assert x_bar.shape == (batch, n, 3)
    assert torch.allclose(x_bar.norm(dim=2), torch.ones(batch, n, dtype=torch.float64))
    assert torch.all(x_bar[..., -1] == 0.5)
    normalize_sequence(x_bar, 0.1)  # accepted by Definition 3.1's validation
    # injective: the first coordinate recovers the bit
    assert torch.equal((x_bar[..., 0] > 0.4).long(), z)


def test_dl1_indicator_and_count():
    z = torch.tensor([[0, 0, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 0, 1]])
    assert count_ones(z).tolist() == [0, 1, 2, 3, 1]
    assert dl1_indicator(z).tolist() == [0.0, 1.0, 0.0, 0.0, 1.0]


@FAST
@given(st.integers(2, 40), st.integers(1, 3), st.integers(0, 10_000))
def test_balanced_sampler_counts(n, max_ones, seed):
    max_ones = min(max_ones, n)
    z = sample_dl1_balanced(300, n, max_ones=max_ones, generator=seed)
    s = count_ones(z)
    assert z.shape == (300, n) and int(s.max()) <= max_ones and int(s.min()) >= 0


def test_balanced_sampler_is_balanced_and_reproducible():
    z = sample_dl1_balanced(3000, 50)
    frac = dl1_indicator(z).mean().item()
    assert abs(frac - 1 / 3) < 0.03
    assert torch.equal(z, sample_dl1_balanced(3000, 50))
    # positions are spread over the whole string
    assert z[count_ones(z) == 1].float().mean(0).min() > 0


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: embed_binary(torch.tensor([[0, 2]])), ValueError, "z must hold only 0s and 1s"),
        (lambda: embed_binary([[0, 1]]), TypeError, "z must be a torch.Tensor"),
        (lambda: embed_binary(torch.zeros(3)), ValueError, "z must have 2 dimensions"),
        (lambda: dl1_indicator(torch.tensor([[0.5, 1.0]])), ValueError, "z must hold only 0s and 1s"),
        (lambda: sample_binary_strings(0, 3), ValueError, "batch_size must be >= 1"),
        (lambda: sample_binary_strings(2, 3, p=1.5), ValueError, r"p must lie in \[0.0, 1.0\], got 1.5"),
        (lambda: sample_dl1_balanced(4, 3, max_ones=4), ValueError, "max_ones must be <= 3"),
        (lambda: sample_dl1_balanced(4, 2.5), TypeError, "n must be an integer"),
    ],
)
def test_bad_input_is_rejected(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
