"""Tests of rnnlib.stability: certificates, projections (hypothesis properties) and state Jacobians."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnlib.dynamical import LSTM, LinearSystem, SimpleRNN
from rnnlib.stability import (
    activation_lipschitz,
    certify,
    fit_lds_canonical,
    inf_norm,
    initialization_norms,
    input_lipschitz,
    jacobian_norms,
    lds_markov_parameters,
    lstm_forget_bound,
    lstm_lambda_inf,
    lstm_radii,
    project_l1_rows,
    project_lstm_,
    project_spectral,
    project_spectral_,
    state_distance,
    state_jacobians,
    state_lipschitz,
)

D = torch.float64
FAST = settings(max_examples=30, deadline=None)


def _matrix(seed: int, rows: int, cols: int, scale: float) -> torch.Tensor:
    return (
        torch.randn(
            rows,
            cols,
            generator=torch.Generator().manual_seed(seed),
            dtype=D,
        )
        * scale
    )


# --- certificates ---


def test_rnn_certificate_is_spectral_norm_times_lipschitz():
    model = SimpleRNN(3, 8, spectral_norm=0.7, generator=0, dtype=D)
    cert = certify(model)
    assert cert.stable and cert.lam == pytest.approx(0.7)
    assert state_lipschitz(model) == pytest.approx(0.7)
    assert not certify(LinearSystem(3, 8, spectral_norm=1.2, dtype=D)).stable
    assert input_lipschitz(model) == pytest.approx(
        torch.linalg.matrix_norm(model.U, ord=2).item()
    )
    assert activation_lipschitz("sigmoid") == 0.25


def test_rnn_certificate_bounds_the_empirical_contraction():
    model = SimpleRNN(2, 10, spectral_norm=0.9, generator=1, dtype=D)
    gen = torch.Generator().manual_seed(2)
    h, h2 = (
        torch.randn(500, 10, generator=gen, dtype=D),
        torch.randn(500, 10, generator=gen, dtype=D),
    )
    x = torch.randn(500, 2, generator=gen, dtype=D)
    ratio = (model.step(h, x) - model.step(h2, x)).norm(dim=1) / (h - h2).norm(dim=1)
    assert ratio.max() <= certify(model).lam + 1e-12


def test_inf_norm_is_the_max_row_sum():
    W = torch.tensor([[1.0, -2.0], [0.5, 0.25]])
    assert inf_norm(W) == 3.0


def test_lstm_lambda_inf_formula_and_radii():
    r = lstm_radii(0.605)
    assert (
        r["W_i"] == pytest.approx(0.395)
        and r["W_f"] == pytest.approx(0.395**2)
        and r["W_z"] == pytest.approx(0.395 / 4)
    )
    model = LSTM(2, 4, dtype=D)
    g = model.gate_matrices()
    f = lstm_forget_bound(model, 1.0)
    expected = (
        f
        + inf_norm(g["W_i"]) / 4
        + inf_norm(g["W_z"])
        + inf_norm(g["W_o"]) / 4
        + inf_norm(g["W_f"]) / (4 * (1 - f))
    )
    assert lstm_lambda_inf(model) == pytest.approx(expected)
    assert not certify(model).stable


def _reachable_states(model: LSTM, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(x).reshape(-1, model.state_dim)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_projected_lstm_contracts_in_max_norm_on_reachable_states(
    seed,
):
    model = LSTM(3, 16, generator=seed, dtype=D)
    with torch.no_grad():
        model.W.mul_(5.0)
    project_lstm_(model, 0.605, x_bound=1.0)
    cert = certify(model, x_bound=1.0)
    assert cert.stable and cert.lam <= 1 - 0.01 * 0.395 + 1e-12
    assert lstm_forget_bound(model, 1.0) <= 0.605 + 1e-12
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(40, 12, 3, generator=gen, dtype=D) * 2 - 1  # |x|_inf <= 1
    s = _reachable_states(model, x)
    s2 = s[torch.randperm(s.shape[0], generator=gen)]
    xt = torch.rand(s.shape[0], 3, generator=gen, dtype=D) * 2 - 1
    num = (model.step(s, xt) - model.step(s2, xt)).abs().amax(dim=1)
    den = (s - s2).abs().amax(dim=1)
    keep = den > 1e-9
    assert torch.all(num[keep] / den[keep] <= cert.lam + 1e-9)
    assert cert.l2_iterations >= 1


# --- projections: hypothesis properties ---


@FAST
@given(
    seed=st.integers(0, 10_000),
    m=st.integers(1, 12),
    scale=st.floats(0.01, 5.0),
    radius=st.floats(0.05, 1.0),
)
def test_spectral_projection_properties(seed, m, scale, radius):
    W = _matrix(seed, m, m, scale)
    P = project_spectral(W, radius)
    s_W = torch.linalg.svdvals(W)
    s_P = torch.linalg.svdvals(P)
    assert s_P.max() <= radius * (1 + 1e-10)
    torch.testing.assert_close(
        s_P, s_W.clamp_max(radius)
    )  # singular values are clipped, not rescaled
    torch.testing.assert_close(project_spectral(P, radius), P)  # idempotent
    if s_W.max() <= radius:
        assert torch.equal(P, W)  # stable inputs unchanged, bit for bit
    # nearest point in Frobenius norm: no scaled or random point of the ball is closer
    other = W * (radius / s_W.max()) if s_W.max() > radius else W
    assert (P - W).norm() <= (other - W).norm() + 1e-10


@FAST
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(1, 8),
    cols=st.integers(1, 12),
    scale=st.floats(0.001, 3.0),
    radius=st.floats(0.0, 2.0),
)
def test_l1_row_projection_properties(seed, rows, cols, scale, radius):
    W = _matrix(seed, rows, cols, scale)
    P = project_l1_rows(W, radius)
    assert torch.all(P.abs().sum(dim=1) <= radius * (1 + 1e-10) + 1e-12)
    torch.testing.assert_close(project_l1_rows(P, radius), P)
    inside = W.abs().sum(dim=1) <= radius
    assert torch.equal(P[inside], W[inside])
    # against an independent reference: bisection on the soft threshold theta
    for i in torch.nonzero(~inside).flatten().tolist():
        lo, hi = 0.0, float(W[i].abs().max())
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (
                (mid, hi)
                if (W[i].abs() - mid).clamp_min(0).sum() > radius
                else (lo, mid)
            )
        ref = torch.sign(W[i]) * (W[i].abs() - hi).clamp_min(0)
        torch.testing.assert_close(P[i], ref, atol=1e-9, rtol=0)


def test_l1_projection_is_per_row_not_per_column():
    W = torch.tensor([[3.0, 0.0], [0.0, 0.1]])
    P = project_l1_rows(W, 1.0)
    assert torch.equal(
        P, torch.tensor([[1.0, 0.0], [0.0, 0.1]])
    )  # the small row is not inflated
    P = project_l1_rows(W, torch.tensor([1.0, 0.05]))
    torch.testing.assert_close(P, torch.tensor([[1.0, 0.0], [0.0, 0.05]]))


@FAST
@given(
    seed=st.integers(0, 1000),
    scale=st.floats(0.01, 10.0),
    bias=st.floats(-3.0, 10.0),
)
def test_lstm_projection_properties(seed, scale, bias):
    model = LSTM(3, 5, generator=seed, forget_bias=bias, dtype=D)
    with torch.no_grad():
        model.W.mul_(scale)
        model.U.mul_(scale)
    project_lstm_(model, 0.6, x_bound=2.0)
    assert certify(model, x_bound=2.0).stable
    assert lstm_forget_bound(model, 2.0) <= 0.6 + 1e-12
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    project_lstm_(model, 0.6, x_bound=2.0)  # idempotent
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, before[k])


def test_lstm_projection_leaves_a_stable_model_unchanged():
    model = LSTM(3, 5, generator=0, dtype=D)
    with torch.no_grad():
        model.W.mul_(0.001)
        model.U.mul_(0.001)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    project_lstm_(model, 0.605)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k])


def test_spectral_projection_of_a_model():
    model = SimpleRNN(2, 6, spectral_norm=2.0, dtype=D)
    project_spectral_(model, 0.8)
    assert certify(model).lam == pytest.approx(0.8)


def test_projection_bad_inputs():
    with pytest.raises(ValueError, match=r"W must have shape \(m, m\)"):
        project_spectral(torch.randn(3, 4), 1.0)
    with pytest.raises(ValueError, match="W contains NaN"):
        project_spectral(torch.full((3, 3), float("nan")), 1.0)
    with pytest.raises(ValueError, match="radius"):
        project_spectral(torch.randn(3, 3), 0.0)
    model = SimpleRNN(2, 3)
    for bad in (0.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            project_spectral_(model, bad)
    with pytest.raises(TypeError, match="lam"):
        project_spectral_(model, "0.5")
    with pytest.raises(TypeError, match="model"):
        project_spectral_(LSTM(2, 3), 0.5)
    with pytest.raises(ValueError, match="f_max"):
        project_lstm_(LSTM(2, 3), 1.0)
    with pytest.raises(ValueError, match="radius"):
        project_l1_rows(torch.randn(2, 2), -1.0)
    with pytest.raises(ValueError, match="radius"):
        project_l1_rows(torch.randn(2, 2), torch.ones(3))


# --- Jacobians ---


@pytest.mark.parametrize(
    "make",
    [
        lambda: SimpleRNN(3, 5, generator=0, dtype=D),
        lambda: SimpleRNN(3, 5, activation="relu", generator=0, dtype=D),
        lambda: LinearSystem(3, 5, generator=0, dtype=D),
        lambda: LSTM(3, 4, generator=0, dtype=D),
    ],
)
def test_state_jacobians_match_autograd(make):
    model = make()
    x = torch.randn(
        2,
        6,
        3,
        dtype=D,
        generator=torch.Generator().manual_seed(1),
    )
    J = state_jacobians(model, x)
    states = model(x).detach()
    for b in range(2):
        for t in range(6):
            prev = states[b, t - 1] if t > 0 else torch.zeros(model.state_dim, dtype=D)
            ref = torch.autograd.functional.jacobian(
                lambda s: model.step(s[None], x[b, t][None])[0],
                prev,
            )
            torch.testing.assert_close(J[b, t], ref)


def test_tanh_jacobian_is_diag_times_w_and_below_certificate():
    model = SimpleRNN(3, 6, spectral_norm=0.9, generator=2, dtype=D)
    x = torch.randn(2, 5, 3, dtype=D)
    J = state_jacobians(model, x)
    h = model(x).detach()
    torch.testing.assert_close(J, (1 - h**2).unsqueeze(-1) * model.W.detach())
    norms = jacobian_norms(model, x)
    assert norms.shape == (2, 5) and torch.all(norms <= 0.9 + 1e-12)


def test_state_distance_contracts_at_rate_lambda():
    model = SimpleRNN(2, 8, spectral_norm=0.7, generator=3, dtype=D)
    x = torch.randn(3, 20, 2, dtype=D)
    s0, s1 = torch.randn(3, 8, dtype=D), torch.zeros(3, 8, dtype=D)
    dist = state_distance(model, x, s0, s1)
    t = torch.arange(1, 21, dtype=D)
    assert torch.all(dist <= 0.7**t * (s0 - s1).norm(dim=1, keepdim=True) + 1e-12)


def test_jacobian_bad_input():
    with pytest.raises(ValueError, match="x"):
        jacobian_norms(SimpleRNN(2, 3), torch.randn(1, 3, 5))
    with pytest.raises(TypeError, match="model"):
        jacobian_norms(torch.nn.RNN(2, 3), torch.randn(1, 3, 2))


# --- initializations and the LDS sidebar ---


def test_initialization_norms():
    norms = initialization_norms([64, 256], n_draws=2, generator=0)
    np.testing.assert_allclose(norms["orthogonal"], 1.0, rtol=1e-5)
    assert np.all(
        (norms["elman"][-1] > 2.5) & (norms["elman"][-1] < 3.0)
    )  # -> 2 sqrt 2
    assert np.all(norms["torch"] < 1.2)  # -> 2/sqrt 3
    with pytest.raises(ValueError, match="schemes"):
        initialization_norms([8], ["he"])


def test_lds_markov_parameters_match_the_matrices():
    a = torch.tensor([0.1, -0.2, 0.05], dtype=D)
    c = torch.tensor([1.0, 0.5, -0.3], dtype=D)
    d = torch.tensor(0.7, dtype=D)
    A = torch.zeros(3, 3, dtype=D)
    A[0, 1] = A[1, 2] = 1.0
    A[2] = -a.flip(0)
    B = torch.tensor([0.0, 0.0, 1.0], dtype=D)
    ref = [d] + [c @ torch.linalg.matrix_power(A, k) @ B for k in range(5)]
    torch.testing.assert_close(lds_markov_parameters(a, c, d, 6), torch.stack(ref))
    coeffs = np.poly(A.numpy())
    np.testing.assert_allclose(coeffs[1:], a.numpy(), atol=1e-12)


def test_projected_gd_learns_a_stable_lds():
    fit = fit_lds_canonical(4, steps=600, generator=1)
    assert fit.risk[-1] < 0.01 * fit.risk[0]
    assert np.all(fit.spectral_radius < 1)
    assert np.abs(fit.a).sum() <= math.sqrt(2) / 2 + 1e-9


# --- exercise checkers of chapter 8 ---


def test_chapter8_checkers_pass_references_and_fail_wrong_answers(
    unsealed,
    capsys,
):
    from rnnlib import homework

    homework.check_exercise_8_1(project_spectral)
    homework.check_exercise_8_2(project_l1_rows)
    out = capsys.readouterr().out
    assert "8.1: all 5 checks passed" in out and "8.2: all 4 checks passed" in out
    rescale = lambda W, r: W * min(1.0, r / torch.linalg.matrix_norm(W, ord=2).item())  # noqa: E731
    with pytest.raises(homework.ExerciseCheckFailed, match="wrong values"):
        homework.check_exercise_8_1(rescale)
    columns = lambda W, r: W * (r / W.abs().sum(dim=0))  # the authors' column rescaling  # noqa: E731
    with pytest.raises(homework.ExerciseCheckFailed, match="wrong values"):
        homework.check_exercise_8_2(columns)


# --- certificates are upper bounds, and refuse what they cannot certify ---


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_certificate_is_an_upper_bound_above_width_512(dtype):
    """At width 600 with ||W||_2 = 1.002 the RNN is not certifiably stable (power iteration said 0.99x)."""
    model = SimpleRNN(2, 600, spectral_norm=1.002, generator=0, dtype=dtype)
    exact = float(torch.linalg.svdvals(model.W.detach().double()).max())
    cert = certify(model)
    assert not cert.stable
    assert exact <= cert.lam <= exact * (1 + 1e-9)
    assert exact <= state_lipschitz(model)
    U = torch.randn(
        700,
        650,
        generator=torch.Generator().manual_seed(1),
        dtype=dtype,
    )
    model_u = SimpleRNN(650, 700, generator=0, dtype=dtype)
    with torch.no_grad():
        model_u.U.copy_(U)
    assert input_lipschitz(model_u) >= float(torch.linalg.svdvals(U.double()).max())


@pytest.mark.parametrize("gate_block", ["W_f", "U_f", "b_f", "W_i"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_lstm_certificates_refuse_nan_and_inf_weights(gate_block, value):
    model = LSTM(3, 4, generator=0, dtype=D)
    with torch.no_grad():
        model.gate_matrices()[gate_block].reshape(-1)[0] = value
    param = gate_block[0]
    message = rf"^model\.{param} contains NaN or infinite entries$"
    for call in (
        lambda: certify(model),
        lambda: lstm_forget_bound(model),
        lambda: lstm_lambda_inf(model),
        lambda: project_lstm_(model),
    ):
        with pytest.raises(ValueError, match=message):
            call()
    assert not torch.isfinite(
        model.gate_matrices()[gate_block]
    ).all()  # refused before any change


def test_lstm_projection_refuses_margin_zero_and_keeps_its_promise():
    with pytest.raises(
        ValueError,
        match=r"^margin must lie in \[1e-06, 1\.0\), got 0\.0$",
    ):
        project_lstm_(LSTM(3, 4, generator=0, dtype=D), margin=0.0)
    for dtype in (torch.float32, torch.float64):
        model = LSTM(3, 16, generator=0, forget_bias=5.0, dtype=dtype)
        with torch.no_grad():
            model.W.mul_(50.0)
            model.U.mul_(50.0)
        project_lstm_(model, 0.605, margin=1e-6)
        cert = certify(model)
        assert cert.stable and cert.lam < 1.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_l1_projection_is_inside_the_ball_for_large_float32_rows(
    dtype,
):
    gen = torch.Generator().manual_seed(0)
    W = (torch.randn(64, 2048, generator=gen) * 1e4).to(dtype)
    for radius in (1.0, 0.155, 0.3 * 0.395):
        P = project_l1_rows(W, radius)
        assert P.dtype == dtype
        sums = [
            math.fsum(abs(v) for v in row) for row in P.double().tolist()
        ]  # exact sums
        assert max(sums) <= radius
        assert inf_norm(P) <= radius
        assert min(sums) >= radius * (
            1 - 1e-5
        )  # still the projection, not a shrunken row


def test_rescale_lstm_columns_is_the_authors_stabilize():
    """Column rescaling as in the fork's stabilize(): every column's l1 norm set to its radius."""
    from rnnlib.dynamical import LSTM
    from rnnlib.stability import (
        AUTHORS_LSTM_RADII,
        certify,
        rescale_lstm_columns_,
    )

    model = LSTM(5, 7, forget_bias=10.0, generator=0)
    U_before = model.U.detach().clone()
    b_before = model.b.detach().clone()
    rescale_lstm_columns_(model)
    H = 7
    for g, name in enumerate("ifzo"):
        cols = model.W[g * H : (g + 1) * H].detach().abs().sum(0)
        assert torch.allclose(
            cols,
            torch.full_like(cols, AUTHORS_LSTM_RADII[f"W_{name}"]),
        )
    uf = model.U[H : 2 * H].detach().abs().sum(0)
    assert torch.allclose(uf, torch.full_like(uf, 0.25))
    # the other input weights and every bias are left free
    assert torch.equal(model.U[:H], U_before[:H])
    assert torch.equal(model.b, b_before)
    # with the forget bias at 10 nothing is certified
    assert not certify(model).stable
    with pytest.raises(TypeError, match="model"):
        rescale_lstm_columns_("lstm")
