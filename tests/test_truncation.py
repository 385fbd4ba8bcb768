"""Tests of rnnlib.truncation: the truncated model against a naive loop, the bounds, the coupled GD runs."""

import math

import numpy as np
import pytest
import torch

from rnnlib.dynamical import LSTM, LinearSystem, SimpleRNN
from rnnlib.stability import input_lipschitz, state_lipschitz
from rnnlib.truncation import (
    DivergenceError,
    gradient_difference,
    growth_recursion_bound,
    inference_bound,
    k_for_epsilon,
    sequence_loss,
    train_full_and_truncated,
    truncated_states,
    truncation_errors,
    weight_distance_sweep,
)

D = torch.float64


def _naive_truncated(model, x, k):
    out = []
    for t in range(x.shape[1]):
        s = model.initial_state(x.shape[0])
        for r in range(max(0, t - k + 1), t + 1):
            s = model.step(s, x[:, r])
        out.append(s)
    return torch.stack(out, dim=1)


def _lstm_with_bias():
    model = LSTM(3, 4, generator=1, dtype=D)
    with torch.no_grad():
        model.b.normal_(generator=torch.Generator().manual_seed(2))  # phi(0, 0) != 0
    return model


@pytest.mark.parametrize(
    "make",
    [
        lambda: SimpleRNN(3, 5, generator=0, dtype=D),
        lambda: LinearSystem(3, 5, generator=0, dtype=D),
        _lstm_with_bias,
    ],
)
@pytest.mark.parametrize("k", [1, 2, 5, 9, 20])
def test_truncated_states_match_a_naive_loop(make, k):
    model = make()
    x = torch.randn(
        2,
        9,
        3,
        dtype=D,
        generator=torch.Generator().manual_seed(k),
    )
    with torch.no_grad():
        torch.testing.assert_close(
            truncated_states(model, x, k),
            _naive_truncated(model, x, k),
        )


def test_long_truncation_is_the_full_model_and_gradients_flow():
    model = SimpleRNN(2, 4, generator=0, dtype=D)
    x = torch.randn(3, 6, 2, dtype=D)
    torch.testing.assert_close(truncated_states(model, x, 6), model(x))
    y = torch.randn(3, 6, 1, dtype=D)
    assert gradient_difference(model, x, y, [6, 10]).max() < 1e-12
    assert gradient_difference(model, x, y, [6], last_only=False).max() < 1e-12
    loss = sequence_loss(model, x, y, 2)
    loss.backward()
    assert model.W.grad is not None and torch.isfinite(model.W.grad).all()


def test_last_only_loss_matches_the_truncated_states():
    model = SimpleRNN(2, 4, generator=0, dtype=D)
    x = torch.randn(3, 7, 2, dtype=D)
    y = torch.randn(3, 7, 1, dtype=D)
    h = truncated_states(model, x, 3)[:, -1]
    ref = 0.5 * ((model.output(h) - y[:, -1]) ** 2).sum(1).mean()
    torch.testing.assert_close(sequence_loss(model, x, y, 3, last_only=True), ref)


@pytest.mark.parametrize("lam", [0.3, 0.8, 0.95])
def test_inference_bound_holds_for_stable_rnns(lam):
    model = SimpleRNN(
        3,
        16,
        init="orthogonal",
        spectral_norm=lam,
        generator=1,
        dtype=D,
    )
    x = torch.randn(
        4,
        60,
        3,
        dtype=D,
        generator=torch.Generator().manual_seed(3),
    )
    ks = [1, 2, 4, 8, 16]
    errors = truncation_errors(model, x, ks).max(axis=1)
    B = float(x.norm(dim=2).max())
    bound = np.array(
        [
            inference_bound(
                state_lipschitz(model),
                k,
                input_lipschitz(model),
                B,
            )
            for k in ks
        ]
    )
    assert np.all(errors <= bound)
    # a linear system with W = lam * orthogonal attains the contraction exactly: h_t - h^k_t = W^k h_{t-k}
    lin = LinearSystem(
        3,
        16,
        init="orthogonal",
        spectral_norm=lam,
        generator=1,
        dtype=D,
    )
    x1 = x[:1]
    e = truncation_errors(lin, x1, [10])[0, -1]
    with torch.no_grad():
        h = lin(x1)[0]
    assert e == pytest.approx(lam**10 * float(h[-11].norm()), rel=1e-6)


def test_k_for_epsilon_is_the_smallest_sufficient_k():
    for eps, lam, L, B in [
        (1e-3, 0.9, 1.0, 1.0),
        (0.5, 0.5, 2.0, 3.0),
        (1e-8, 0.99, 0.5, 1.0),
        (100.0, 0.5, 1, 1),
    ]:
        k = k_for_epsilon(eps, lam, L, B)
        assert inference_bound(lam, k, L, B) <= eps
        assert k == 1 or inference_bound(lam, k - 1, L, B) > eps
    assert k_for_epsilon(0.01, 0.5, 1, 1, L_f=10) > k_for_epsilon(0.01, 0.5, 1, 1)


def test_bound_bad_inputs_name_the_argument():
    for bad in (0.0, 1.0, 1.5, -0.5):
        with pytest.raises(ValueError, match="lam"):
            inference_bound(bad, 3, 1.0, 1.0)
    with pytest.raises(ValueError, match="k"):
        inference_bound(0.5, 0, 1.0, 1.0)
    with pytest.raises(TypeError, match="k"):
        inference_bound(0.5, 2.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        k_for_epsilon(0.0, 0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="L"):
        inference_bound(0.5, 2, float("nan"), 1.0)
    model = SimpleRNN(2, 3)
    with pytest.raises(ValueError, match="k"):
        truncated_states(model, torch.randn(1, 4, 2), 0)
    with pytest.raises(ValueError, match="x"):
        truncated_states(model, torch.full((1, 4, 2), float("nan")), 2)
    with pytest.raises(ValueError, match="ks"):
        truncation_errors(model, torch.randn(1, 4, 2), [])


def test_gradient_difference_decays_for_a_stable_model():
    model = SimpleRNN(
        2,
        8,
        init="orthogonal",
        spectral_norm=0.7,
        generator=0,
        dtype=D,
    )
    x = torch.randn(4, 30, 2, dtype=D)
    y = torch.randn(4, 30, 1, dtype=D)
    gaps = gradient_difference(model, x, y, [1, 5, 10, 20])
    assert np.all(np.diff(gaps) < 0)
    assert gaps[-1] < 1e-2 * gaps[0]


def _teacher_data(T=12, bs=4):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(bs, T, 2, generator=gen, dtype=D)
    teacher = SimpleRNN(2, 6, spectral_norm=0.8, generator=1, dtype=D)
    with torch.no_grad():
        y = teacher.output(teacher(x))
    return x, y


def test_coupled_gd_runs_agree_when_k_covers_the_sequence():
    x, y = _teacher_data()
    student = SimpleRNN(2, 6, spectral_norm=0.8, generator=2, dtype=D)
    w0 = student.W.detach().clone()
    pair = train_full_and_truncated(
        student,
        x,
        y,
        12,
        steps=15,
        lr=0.5,
        schedule="decay",
        project=0.9,
    )
    np.testing.assert_allclose(pair.full, pair.truncated, atol=1e-12)
    assert pair.full.shape == (16, 6 * 6 + 6 * 2)
    assert torch.equal(student.W, w0)  # the model passed in is not modified
    np.testing.assert_allclose(pair.step_sizes, 0.5 / np.arange(1, 16))
    assert pair.loss_full[-1] < pair.loss_full[0]
    short = train_full_and_truncated(
        student,
        x,
        y,
        2,
        steps=15,
        lr=0.5,
        schedule="constant",
        project=0.9,
    )
    assert short.distance[0] == 0 and short.distance[-1] > 0
    # both runs stay in the stable set
    W_last = torch.as_tensor(short.truncated[-1][:36]).reshape(6, 6)
    assert torch.linalg.matrix_norm(W_last, ord=2) <= 0.9 + 1e-9


def test_weight_distance_sweep_shape_and_decay_in_k():
    x, y = _teacher_data(T=16)
    student = SimpleRNN(2, 6, spectral_norm=0.8, generator=2, dtype=D)
    dist = weight_distance_sweep(
        student, x, y, [1, 4, 16], steps=20, lr=0.5, project=0.9
    )
    assert dist.shape == (3, 21)
    assert dist[0, -1] > dist[1, -1] > dist[2, -1]
    assert dist[2, -1] < 1e-12


def test_divergent_training_raises_instead_of_returning_nan():
    x, y = _teacher_data()
    model = LinearSystem(2, 6, spectral_norm=3.0, generator=2, dtype=D)
    with pytest.raises(DivergenceError, match="NaN/inf"):
        train_full_and_truncated(
            model,
            x * 100,
            y,
            3,
            steps=50,
            lr=1e6,
            schedule="constant",
        )


def test_training_bad_inputs():
    x, y = _teacher_data()
    model = SimpleRNN(2, 6, dtype=D)
    with pytest.raises(ValueError, match="schedule"):
        train_full_and_truncated(model, x, y, 2, steps=2, lr=0.1, schedule="cosine")
    with pytest.raises(ValueError, match="lr"):
        train_full_and_truncated(model, x, y, 2, steps=2, lr=0.0)
    with pytest.raises(ValueError, match="project"):
        train_full_and_truncated(model, x, y, 2, steps=2, lr=0.1, project=1.5)
    with pytest.raises(ValueError, match="y"):
        train_full_and_truncated(model, x, y[:, :-1], 2, steps=2, lr=0.1)
    with pytest.raises(TypeError, match="project"):
        lstm = LSTM(2, 3, dtype=D)
        train_full_and_truncated(lstm, x, y, 2, steps=2, lr=0.1, project=0.9)


def test_growth_recursion_closed_forms():
    gap, beta, alpha, N = 0.01, 2.0, 0.1, 30
    delta = growth_recursion_bound(gap, beta, np.full(N, alpha))
    assert delta[-1] == pytest.approx(gap / beta * ((1 + alpha * beta) ** N - 1))
    decay = growth_recursion_bound(gap, beta, alpha / np.arange(1, 1001))
    # the reconstruction's bound: delta_N <= gap N^(alpha beta) (alpha + 1/beta)
    assert decay[-1] <= gap * 1000 ** (alpha * beta) * (alpha + 1 / beta)
    with pytest.raises(ValueError, match="step_sizes"):
        growth_recursion_bound(gap, beta, [])
    assert math.isfinite(decay[-1])


# --- exercise checkers of chapters 9 and 10 ---


def test_chapter9_and_10_checkers(unsealed, capsys):
    from rnnlib import homework

    def naive(W, U, x, k):
        model = SimpleRNN(U.shape[1], W.shape[0], dtype=W.dtype)
        with torch.no_grad():
            model.W.copy_(W)
            model.U.copy_(U)
            return _naive_truncated(model, x, k)

    homework.check_exercise_9_1(naive)
    assert "9.1: all 5 checks passed" in capsys.readouterr().out

    def untruncated(W, U, x, k):
        return naive(W, U, x, x.shape[1])

    with pytest.raises(homework.ExerciseCheckFailed, match="wrong values"):
        homework.check_exercise_9_1(untruncated)

    def recursion(gap, beta, alphas):
        return torch.as_tensor(growth_recursion_bound(gap, beta, alphas.numpy()))

    homework.check_exercise_10_1(recursion)
    assert "10.1: all 4 checks passed" in capsys.readouterr().out
    with pytest.raises(homework.ExerciseCheckFailed, match="wrong output shape"):
        homework.check_exercise_10_1(
            lambda gap, beta, alphas: recursion(gap, beta, alphas)[1:]
        )
