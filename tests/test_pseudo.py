"""Tests of rnnlib.pseudo: eq. (4) against torch.func.jvp, the explicit sum, and the linearization gap."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnlib._rng import derive
from rnnlib.elman import (
    ElmanRNN,
    elman_hidden_states,
    sample_normalized_sequence,
)
from rnnlib.pseudo import (
    aligned_perturbation,
    back_matrices,
    linearization_changes,
    linearization_gap,
    pseudo_network,
    pseudo_network_sum,
    random_perturbation,
)
from rnnlib.stability import spectral_norm

FAST = settings(max_examples=25, deadline=None)
D = torch.float64


def _setup(batch, L, d, m, d_out, seed, eps_x=0.1):
    model = ElmanRNN(d, m, d_out, generator=seed, dtype=D)
    x = sample_normalized_sequence(
        batch, L, d, eps_x, generator=derive(seed, "data"), dtype=D
    )
    gen = derive(seed, "perturbation")
    dW = torch.randn(m, m, generator=gen, dtype=D) / m
    dA = torch.randn(m, d, generator=gen, dtype=D) / m
    return model, x, dW, dA


def _jvp(model, x, dW, dA):
    def f(W, A):
        return elman_hidden_states(W, A, x)[:, -1] @ model.B.T

    return torch.func.jvp(f, (model.W.detach(), model.A.detach()), (dW, dA))[1]


@FAST
@given(
    st.integers(1, 5),
    st.integers(3, 9),
    st.integers(3, 6),
    st.integers(2, 48),
    st.integers(1, 3),
    st.integers(0, 10_000),
)
def test_pseudo_network_is_the_jvp_of_the_rnn(batch, L, d, m, d_out, seed):
    model, x, dW, dA = _setup(batch, L, d, m, d_out, seed)
    out = pseudo_network(model, dW, dA, x)
    assert out.shape == (batch, d_out)
    assert torch.allclose(out, _jvp(model, x, dW, dA), atol=1e-12, rtol=1e-10)


@FAST
@given(
    st.integers(1, 4),
    st.integers(3, 8),
    st.integers(2, 32),
    st.integers(0, 10_000),
)
def test_recursion_equals_the_explicit_sum_of_eq_4(batch, L, m, seed):
    model, x, dW, dA = _setup(batch, L, 4, m, 2, seed)
    assert torch.allclose(
        pseudo_network(model, dW, dA, x),
        pseudo_network_sum(model, dW, dA, x),
        atol=1e-12,
    )


def test_back_matrices_are_the_gradients_of_the_output_wrt_each_preactivation():
    model, x, _, _ = _setup(2, 5, 4, 12, 1, 7)
    back = back_matrices(model, x)
    assert back.shape == (2, 5, 1, 12)
    assert torch.equal(back[:, -1], model.B.expand(2, -1, -1))  # Back_{L->L} = B
    # Back_{l->L} D^(l) = dF/d(pre-activation at step l): compare with autograd on the first sequence
    W, A = model.W.detach(), model.A.detach()
    h = elman_hidden_states(W, A, x[:1])
    pre = [torch.zeros(12, dtype=D, requires_grad=True) for _ in range(5)]
    state = torch.zeros(12, dtype=D)
    for step in range(5):
        state = torch.relu(W @ state + A @ x[0, step] + pre[step])
    (model.B @ state).sum().backward()
    D_ = model.activation_patterns(x[:1])[0].to(D)
    for step in range(5):
        assert torch.allclose(
            pre[step].grad,
            (back[0, step, 0] * D_[step]),
            atol=1e-12,
        )
    assert torch.allclose(state, h[0, -1])


def test_pseudo_network_is_linear_in_the_perturbation():
    model, x, dW, dA = _setup(3, 6, 4, 16, 1, 3)
    _, _, dW2, dA2 = _setup(3, 6, 4, 16, 1, 4)
    lhs = pseudo_network(model, 2 * dW - dW2, 2 * dA - dA2, x)
    rhs = 2 * pseudo_network(model, dW, dA, x) - pseudo_network(model, dW2, dA2, x)
    assert torch.allclose(lhs, rhs, atol=1e-13)
    zero = pseudo_network(model, torch.zeros_like(dW), torch.zeros_like(dA), x)
    assert torch.equal(zero, torch.zeros_like(zero))


def test_pseudo_network_does_not_touch_the_model():
    model, x, dW, dA = _setup(2, 5, 4, 8, 1, 5)
    W0, A0 = model.W.detach().clone(), model.A.detach().clone()
    pseudo_network(model, dW, dA, x)
    linearization_gap(model, x, 1.0, n_perturbations=1)
    assert torch.equal(model.W, W0) and torch.equal(model.A, A0)


def test_pseudo_network_works_in_float32():
    model = ElmanRNN(4, 16, generator=0)
    x = sample_normalized_sequence(3, 5, 4, 0.1, generator=1)
    dW, dA = random_perturbation(4, 16, 1.0, generator=2)
    assert pseudo_network(model, dW, dA, x).dtype == torch.float32


@pytest.mark.parametrize("m", [8, 64, 256, 600])
def test_spectral_norm_and_random_perturbation_radius(m):
    M = torch.randn(m, m, generator=torch.Generator().manual_seed(m), dtype=D)
    exact = float(torch.linalg.matrix_norm(M, ord=2))
    assert spectral_norm(M, exact_up_to=1000) == pytest.approx(exact, rel=1e-12)
    est = spectral_norm(
        M, exact_up_to=0
    )  # power iteration: from below, within a few percent
    assert est <= exact * (1 + 1e-12) and est >= 0.97 * exact
    dW, dA = random_perturbation(5, m, 2.0, generator=1, dtype=D)
    assert float(torch.linalg.matrix_norm(dW, ord=2)) == pytest.approx(
        2.0 / math.sqrt(m), rel=0.03
    )
    assert float(torch.linalg.matrix_norm(dA, ord=2)) == pytest.approx(
        2.0 / math.sqrt(m), rel=1e-9
    )


def test_linearization_changes_against_the_rnn_and_eq4():
    """Independent references: the RNN evaluated at the perturbed weights, and pseudo_network."""
    model, x, dW, dA = _setup(3, 6, 4, 16, 2, 21)
    gen = derive(21, "second")
    dW2 = torch.randn(16, 16, generator=gen, dtype=D) / 16
    dA2 = torch.randn(16, 4, generator=gen, dtype=D) / 16
    taus = [0.5, 2.0]
    change, pseudo, flips = linearization_changes(
        model, x, iter([(dW, dA), (dW2, dA2)]), taus
    )
    assert change.shape == pseudo.shape == (2, 2, 3, 2)
    assert flips.shape == (2, 2) and flips.dtype == torch.float64
    W, A, B = model.W.detach(), model.A.detach(), model.B
    h0 = elman_hidden_states(W, A, x)
    for q, (a, b) in enumerate(((dW, dA), (dW2, dA2))):
        for t, tau in enumerate(taus):
            h1 = elman_hidden_states(W + tau * a, A + tau * b, x)
            ref = (h1[:, -1] - h0[:, -1]) @ B.T
            assert torch.allclose(change[q, t], ref, atol=1e-12)
            assert torch.allclose(
                pseudo[q, t],
                pseudo_network(model, tau * a, tau * b, x),
                atol=1e-12,
            )
            assert float(flips[q, t]) == pytest.approx(
                float(((h1 > 0) != (h0 > 0)).double().mean())
            )
    with pytest.raises(ValueError, match="directions must hold"):
        linearization_changes(model, x, [], taus)
    with pytest.raises(ValueError, match="dW must have shape"):
        linearization_changes(model, x, [(dW[:3], dA)], taus)
    with pytest.raises(ValueError, match=r"taus\[i\] must lie in"):
        linearization_changes(model, x, [(dW, dA)], [0.0])


def test_gap_vanishes_as_tau_goes_to_zero():
    model, x, _, _ = _setup(8, 6, 5, 64, 1, 11)
    gaps = [
        linearization_gap(model, x, tau, n_perturbations=2, generator=0)
        for tau in (1e-6, 1e-4, 1e-2, 1.0)
    ]
    rel = [g.relative_gap for g in gaps]
    assert rel == sorted(rel)
    # below the smallest |pre-activation| no pattern flips, yet the network is not linear in the weights
    # (products of W's: exercise 3.2): the relative gap is the second-order term, proportional to tau
    assert (
        gaps[0].flip_fraction == 0.0 and gaps[1].flip_fraction == 0.0 and rel[0] < 1e-6
    )
    assert 0.9 < np.log(rel[1] / rel[0]) / np.log(100) < 1.1
    assert gaps[3].flip_fraction > 0  # at tau = 1 patterns flip


@pytest.mark.parametrize("m, rel", [(16, 1e-9), (64, 1e-9), (160, 0.02)])
def test_gradient_direction_is_the_gradient_of_the_output_along_c(m, rel):
    """aligned_perturbation(kind="gradient") against an independent formula: the rows built from Back_{l->L}."""
    model, x, _, _ = _setup(5, 6, 4, m, 3, 13)
    dW, dA = aligned_perturbation(model, x, 1.5, kind="gradient", generator=4)
    c = torch.randn(
        3, generator=torch.Generator().manual_seed(4), dtype=D
    )  # the same first draw
    c = c / c.norm()
    h = elman_hidden_states(model.W.detach(), model.A.detach(), x)
    h_prev = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)
    D_ = (h > 0).to(D)
    back = back_matrices(model, x)  # (batch, L, d_out, m)
    delta = D_ * torch.einsum("blom,o->blm", back, c)  # D^(l) Back_{l->L}^T c
    gW = torch.einsum("blm,bln->mn", delta, h_prev)
    gA = torch.einsum("blm,bld->md", delta, x)
    for got, ref in ((dW, gW), (dA, gA)):
        # exact through the Gram matrix up to m = 64, power iteration (within 2%) above
        assert float(torch.linalg.matrix_norm(got, ord=2)) == pytest.approx(
            1.5 / math.sqrt(m), rel=rel
        )
        cos = float((got * ref).sum() / (got.norm() * ref.norm()))
        assert cos == pytest.approx(1.0, abs=1e-12)
    # aligned: the pseudo-network moves the output along c by a positive amount, O(tau) in total
    assert float((pseudo_network(model, dW, dA, x) @ c).sum()) > 0


def test_construction_direction_lives_on_the_bias_column_and_is_aligned_with_B():
    model, x, _, _ = _setup(4, 6, 4, 32, 2, 17)
    dW, dA = aligned_perturbation(model, x, 1.0, kind="construction", generator=5)
    assert torch.equal(dW, torch.zeros_like(dW)) and torch.equal(
        dA[:, :-1], torch.zeros_like(dA[:, :-1])
    )
    c = torch.randn(2, generator=torch.Generator().manual_seed(5), dtype=D)
    c = c / c.norm()
    ref = model.B.T @ c
    assert torch.allclose(
        dA[:, -1],
        ref * (dA[:, -1].norm() / ref.norm()),
        atol=1e-14,
    )
    assert float(dA[:, -1].norm()) == pytest.approx(1.0 / math.sqrt(32), rel=1e-12)
    # the middle tokens have x_d = 0: only the start and end tokens see the change
    assert torch.equal(x[:, 1:-1] @ dA.T, torch.zeros(4, 4, 32, dtype=D))


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda m, x, dW, dA: pseudo_network("net", dW, dA, x),
            TypeError,
            "model must be an rnnlib.elman.ElmanRNN",
        ),
        (
            lambda m, x, dW, dA: pseudo_network(m, dW[:3], dA, x),
            ValueError,
            "dW must have shape",
        ),
        (
            lambda m, x, dW, dA: pseudo_network(m, dW, dA[:, :2], x),
            ValueError,
            "dA must have shape",
        ),
        (
            lambda m, x, dW, dA: pseudo_network(m, dW.float(), dA, x),
            TypeError,
            "dW has dtype",
        ),
        (
            lambda m, x, dW, dA: pseudo_network(m, dW, dA, x[:, :, :2]),
            ValueError,
            "x must have shape",
        ),
        (
            lambda m, x, dW, dA: pseudo_network(m, dW * float("nan"), dA, x),
            ValueError,
            "dW contains NaN",
        ),
        (
            lambda m, x, dW, dA: pseudo_network_sum(m, dW, [1.0], x),
            TypeError,
            "dA must be a torch.Tensor",
        ),
        (
            lambda m, x, dW, dA: back_matrices(m, x.float()),
            TypeError,
            "x has dtype",
        ),
        (
            lambda m, x, dW, dA: linearization_gap(m, x, 0.0),
            ValueError,
            "tau must lie in",
        ),
        (
            lambda m, x, dW, dA: linearization_gap(m, x, 1.0, n_perturbations=0),
            ValueError,
            "n_perturbations must be >= 1",
        ),
        (
            lambda m, x, dW, dA: random_perturbation(3, 0, 1.0),
            ValueError,
            "width must be >= 1",
        ),
        (
            lambda m, x, dW, dA: random_perturbation(3, 4, -1.0),
            ValueError,
            "tau must lie in",
        ),
        (
            lambda m, x, dW, dA: spectral_norm(torch.ones(3)),
            ValueError,
            "W must have 2 dimensions",
        ),
        (
            lambda m, x, dW, dA: spectral_norm(torch.ones(3, 3), n_iter=0),
            ValueError,
            "n_iter must be >= 1",
        ),
    ],
)
def test_bad_input_is_rejected(call, exc, match):
    model, x, dW, dA = _setup(2, 5, 4, 8, 1, 0)
    with pytest.raises(exc, match=match):
        call(model, x, dW, dA)


def test_checker_3_1_passes_a_correct_answer_and_fails_wrong_ones(
    capsys,
):
    from rnnlib import homework

    def right(W, A, B, dW, dA, x):
        def f(W_, A_):
            return elman_hidden_states(W_, A_, x)[:, -1] @ B.T

        return torch.func.jvp(f, (W, A), (dW, dA))[1]

    homework.check_exercise_3_1(right)
    assert "Exercise 3.1: all 3 checks passed." in capsys.readouterr().out

    def only_last_step(W, A, B, dW, dA, x):  # forgets every term l < L of eq. (4)
        h = elman_hidden_states(W, A, x)
        h_prev = h[:, -2]
        D_ = (h_prev @ W.T + x[:, -1] @ A.T >= 0).to(x.dtype)
        return (D_ * (h_prev @ dW.T + x[:, -1] @ dA.T)) @ B.T

    with pytest.raises(
        homework.ExerciseCheckFailed,
        match="wrong values on input: m = ",
    ):
        homework.check_exercise_3_1(only_last_step)
