"""Tests of rnnlib.ntk: the infinite-width tangent kernel against the finite-width one.

The derivation in rnnlib/ntk.py is ours, so it is checked against the network
itself, not against a formula: ``tangent_kernel(model_m, x, x2) / m`` for
independent draws must approach the limit with a relative error that falls
like ``m^(-1/2)`` (the fluctuation of a sum over m neurons), on several
lengths and on pairs of different sequences; the seed average must approach
it too. Plus the closed forms on the diagonal, symmetry, PSD and zero inputs.
"""

import numpy as np
import pytest
import torch

from rnnlib.elman import ElmanRNN, sample_normalized_sequence
from rnnlib.initialization import predicted_sq_norms
from rnnlib.ntk import (
    cross_time_fraction,
    limit_hidden_covariance,
    limit_tangent_kernel,
)
from rnnlib.train import tangent_kernel

F64 = torch.float64
F32 = (
    torch.float32
)  # the wide networks: their errors (~1e-2) dwarf float32 rounding
WIDTHS = (256, 1024, 4096)
SEEDS = (
    12,
    6,
    3,
)  # draws per width: the error of one draw varies less as m grows


def _inputs(n, L, d=5, eps=0.5, seed=1):
    return sample_normalized_sequence(
        n, L, d, eps, generator=seed, dtype=F64
    )


def _errors(L):
    """Per width: the relative errors of single draws, and of their mean, on the Gram of 5 different sequences."""
    x = _inputs(5, L, seed=L)
    K = limit_tangent_kernel(x)
    both = x.to(F32)
    single, averaged = [], []
    for m, seeds in zip(WIDTHS, SEEDS):
        Ks = torch.stack(
            [
                tangent_kernel(
                    ElmanRNN(
                        5, m, generator=100 * L + s, dtype=F32
                    ),
                    both,
                ).double()
                / m
                for s in range(seeds)
            ]
        )
        rel = (Ks - K).flatten(1).norm(dim=1) / K.norm()
        single.append(float(rel.mean()))
        averaged.append(float((Ks.mean(0) - K).norm() / K.norm()))
    return np.array(single), np.array(averaged)


@pytest.mark.parametrize("L", [3, 8])
def test_empirical_kernel_converges_like_inverse_sqrt_width(L):
    single, averaged = _errors(L)
    slope = np.polyfit(np.log(WIDTHS), np.log(single), 1)[0]
    # m^(-1/2) law: a wrong limit would make the error level off (slope -> 0)
    assert -0.8 < slope < -0.3, (slope, single)
    assert single[-1] < 0.15, single
    # the seed average is closer still (the errors are fluctuations, not a bias)
    assert averaged[-1] < 0.1, averaged


def test_diagonal_closed_forms():
    x = _inputs(6, 7)
    K = limit_tangent_kernel(x)
    sq = predicted_sq_norms(x)  # sum_{j<=l} |x^(j)|^2
    rel = (torch.diagonal(K) - sq.sum(dim=1)).abs() / sq.sum(dim=1)
    assert float(rel.max()) < 1e-13
    H = limit_hidden_covariance(x)
    rel = (torch.diagonal(H, dim1=0, dim2=1).T - sq).abs() / sq
    assert float(rel.max()) < 1e-13


def test_symmetric_and_positive_semidefinite():
    x = _inputs(60, 6, eps=1.0)
    K = limit_tangent_kernel(x)
    assert torch.equal(K, K.T)
    ev = torch.linalg.eigvalsh(K)
    assert float(ev.min()) > -1e-10 * float(ev.max())
    # the cross Gram is the corresponding block of the joint Gram
    block = limit_tangent_kernel(x[:10], x[10:25])
    assert float((block - K[:10, 10:25]).abs().max()) < 1e-12


def test_hidden_covariance_matches_wide_network():
    x = _inputs(4, 6, seed=3)
    H = limit_hidden_covariance(x)
    model = ElmanRNN(5, 4096, generator=7, dtype=F32)
    h = model.hidden_states(x.to(F32)).detach().double()
    He = torch.einsum("alm,blm->abl", h, h)
    # one draw at m = 4096: a relative error of order m^(-1/2) (about 0.06 measured)
    assert float((He - H).norm() / H.norm()) < 0.12


def test_zero_input_gives_zero_like_the_network():
    x = _inputs(2, 4)
    x[1] = (
        0.0  # a zero sequence: every pre-activation is 0, every pattern 0
    )
    K = limit_tangent_kernel(x)
    model = ElmanRNN(5, 64, generator=0, dtype=F64)
    Km = tangent_kernel(model, x)
    assert float(K[1].abs().max()) == 0.0
    assert float(Km[1].abs().max()) == 0.0
    assert torch.isfinite(K).all()


def test_cross_time_terms_shrink_with_width():
    x = _inputs(8, 8).to(F32)
    frac = [
        float(
            cross_time_fraction(
                ElmanRNN(5, m, generator=s, dtype=F32), x
            ).mean()
        )
        for m in (64, 1024)
        for s in range(4)
    ]
    # about 0.16 at m = 64 and 0.03 at m = 1024 (m^(-1/2) predicts a factor 4)
    assert np.mean(frac[4:]) < np.mean(frac[:4]) / 2
