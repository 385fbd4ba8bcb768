"""rnnlib.inversion: each function against a brute-force loop, a closed form or Monte Carlo."""

import math

import numpy as np
import pytest
import torch

from rnnlib import inversion as inv
from rnnlib.concepts import ConceptTarget, get_function
from rnnlib.elman import (
    ElmanRNN,
    elman_hidden_states,
    normalize_sequence,
    sample_normalized_sequence,
    sample_true_sequence,
)
from rnnlib.pseudo import pseudo_network_sum

F64 = torch.float64


def _unit(d, gen):
    v = torch.randn(d, generator=gen, dtype=F64)
    return v / v.norm()


# --- Lemma 4.4 ------------------------------------------------------------------------------------


def test_relu_identity_matches_a_loop_and_printed_is_m_times_corrected():
    gen = torch.Generator().manual_seed(0)
    v, x = (
        torch.randn(5, generator=gen, dtype=F64),
        torch.randn(5, generator=gen, dtype=F64),
    )
    T = torch.randn(37, 5, generator=gen, dtype=F64)
    loop = sum(
        2.0 / 37 * float(T[r] @ v) * max(float(T[r] @ x), 0.0) for r in range(37)
    )
    assert float(inv.relu_identity(v, x, T)) == pytest.approx(loop, rel=1e-12)
    assert float(inv.relu_identity(v, x, T, scaling="printed")) == pytest.approx(
        37 * loop, rel=1e-12
    )
    with pytest.raises(ValueError, match="scaling"):
        inv.relu_identity(v, x, T, scaling="other")


def test_half_identity_and_unbiasedness_by_monte_carlo():
    # E[w w^T 1[w^T x >= 0]] = I/2, hence E[(2/m) (T v)^T relu(T x)] = v^T x
    gen = torch.Generator().manual_seed(1)
    x = _unit(4, gen)
    w = torch.randn(400_000, 4, generator=gen, dtype=F64)
    M = (w * (w @ x >= 0)[:, None].double()).T @ w / w.shape[0]
    assert torch.allclose(M, torch.eye(4, dtype=F64) / 2, atol=0.01)
    v = _unit(4, gen)
    est = float(
        inv.relu_identity(v, x, torch.randn(400_000, 4, generator=gen, dtype=F64))
    )
    assert abs(est - float(v @ x)) < 5 * inv.relu_identity_std(v, x, 400_000)


def test_relu_identity_std_matches_monte_carlo():
    gen = torch.Generator().manual_seed(2)
    v, x = (
        torch.randn(3, generator=gen, dtype=F64),
        torch.randn(3, generator=gen, dtype=F64),
    )
    m, n = 40, 4000
    T = torch.randn(n, m, 3, generator=gen, dtype=F64)
    est = 2.0 / m * ((T @ v) * torch.relu(T @ x)).sum(dim=1)
    assert float(est.mean()) == pytest.approx(
        float(v @ x),
        abs=4 * inv.relu_identity_std(v, x, m) / math.sqrt(n),
    )
    assert float(est.std()) == pytest.approx(inv.relu_identity_std(v, x, m), rel=0.06)


# --- Theorem 4.5 -------------------------------------------------------------------------------------


def test_naive_decode_matches_matrix_powers():
    model = ElmanRNN(4, 16, generator=0, dtype=F64)
    W, A = model.W.detach(), model.A.detach()
    h = torch.randn(
        3,
        16,
        generator=torch.Generator().manual_seed(0),
        dtype=F64,
    )
    out = inv.naive_decode(W, A, h, 5)
    for pos in range(5):  # position l = pos + 1, depth k = L - l
        k = 4 - pos
        ref = (A.T @ torch.linalg.matrix_power(W.T, k) @ h.T).T
        assert torch.allclose(out[:, pos], ref, atol=1e-12)


def test_one_step_inverse_recovers_the_input_of_a_wide_cell():
    # A^T relu(A x) ~ x for A with N(0, 2/m) entries (Lemma 4.4 in the RNN's scaling); W = 0, L = 1
    m, d = 2000, 5
    A = torch.randn(
        m, d, generator=torch.Generator().manual_seed(3), dtype=F64
    ) * math.sqrt(2 / m)
    x = _unit(d, torch.Generator().manual_seed(4))[None]
    xhat = inv.naive_decode(torch.zeros(m, m, dtype=F64), A, torch.relu(x @ A.T), 1)[
        :, 0
    ]
    assert float((xhat - x).abs().max()) < 5 * math.sqrt(5 / m)


def test_fit_linear_decoder_primal_dual_and_lstsq_agree():
    gen = torch.Generator().manual_seed(5)
    for n, m in [(30, 12), (12, 30)]:
        h = torch.randn(n, m, generator=gen, dtype=F64)
        y = torch.randn(n, 3, generator=gen, dtype=F64)
        dec = inv.fit_linear_decoder(h, y, ridge=0.1)
        aug_h = torch.cat([h, math.sqrt(0.1) * torch.eye(m, dtype=F64)])
        aug_y = torch.cat([y, torch.zeros(m, 3, dtype=F64)])
        ref = torch.linalg.lstsq(aug_h, aug_y).solution
        assert torch.allclose(dec.matrix, ref, atol=1e-10)
        assert torch.allclose(dec(h), h @ ref, atol=1e-10)


def test_decoding_errors_fitted_beats_naive_and_shapes():
    model = ElmanRNN(5, 256, generator=0)
    e = inv.decoding_errors(model, 8, 0.1, n_train=256, n_test=64, generator=1)
    assert e.positions.tolist() == list(
        range(2, 8)
    ) and e.naive.shape == e.fitted.shape == e.analytic.shape == (6,)
    assert np.all(e.naive > 5 * e.fitted) and e.n_train == 256
    assert e.fitted.max() < 0.5


def test_decoding_errors_analytic_field_and_no_fit():
    model = ElmanRNN(5, 256, generator=0)
    e = inv.decoding_errors(model, 6, 0.1, n_train=0, n_test=32, generator=1)
    assert e.analytic.shape == (4,) and np.all(np.isnan(e.fitted))
    assert e.n_train == 0 and e.analytic.max() < 1.0
    assert np.all(e.analytic < e.naive)


# --- Theorem 4.5: the analytic inverse (ours) ------------------------------------------------------


def _weights(m, d, seed):
    model = ElmanRNN(d, m, generator=seed, dtype=F64)
    return model.W.detach(), model.A.detach()


def test_base_sequence_is_the_zero_token_limit_of_normalize():
    x_bar = sample_true_sequence(3, 6, 4, generator=0, dtype=F64)
    x0 = inv.base_sequence(6, 4)
    tiny = normalize_sequence(x_bar, 1e-12)
    assert x0.shape == (6, 4) and x0.dtype == F64
    assert torch.allclose(tiny, x0.expand(3, 6, 4), atol=1e-11)


def test_step_jacobians_match_autograd_jacobian_at_the_base():
    # independent reference: torch.func.jacrev of x -> h^(L)
    W, A = _weights(40, 4, 0)
    L = 5
    x0 = inv.base_sequence(L, 4)
    ref = torch.func.jacrev(lambda x: elman_hidden_states(W, A, x[None])[0, -1])(
        x0
    )  # (m, L, d)
    J = inv.step_jacobians(W, A, L)
    assert J.shape == (L, 40, 4)
    assert torch.allclose(J, ref.permute(1, 0, 2), atol=1e-12)
    # and at another base sequence
    base = x0 + 0.3 * torch.randn(
        L, 4, generator=torch.Generator().manual_seed(1), dtype=F64
    )
    ref = torch.func.jacrev(lambda x: elman_hidden_states(W, A, x[None])[0, -1])(base)
    J = inv.step_jacobians(W, A, L, base=base)
    assert torch.allclose(J, ref.permute(1, 0, 2), atol=1e-12)


def test_step_jacobians_match_a_brute_force_product():
    W, A = _weights(12, 3, 2)
    L = 4
    x0 = inv.base_sequence(L, 3)
    h, D = torch.zeros(12, dtype=F64), []
    for step in range(L):
        pre = W @ h + A @ x0[step]
        D.append(torch.diag((pre > 0).double()))
        h = torch.relu(pre)
    J = inv.step_jacobians(W, A, L)
    for ell in range(L):
        P = D[ell] @ A
        for k in range(ell + 1, L):
            P = D[k] @ W @ P
        assert torch.allclose(J[ell], P, atol=1e-13)


def test_analytic_inverse_is_numpy_pinv_of_the_stacked_jacobians():
    W, A = _weights(60, 4, 3)
    L = 6
    J = inv.step_jacobians(W, A, L).numpy()
    stacked = np.concatenate(list(J), axis=1)  # (m, L d)
    ref = np.linalg.pinv(stacked)  # (L d, m)
    a = inv.analytic_inverse(W, A, L)
    assert a.rank == L * 4 and a.matrix.shape == (60, L * 4)
    np.testing.assert_allclose(a.matrix.numpy().T, ref, atol=1e-10)
    np.testing.assert_allclose(a.jacobian.numpy(), stacked)
    assert torch.all(a.singular_values[:-1] >= a.singular_values[1:])


def test_analytic_inverse_is_exact_on_the_linear_network():
    # freeze the base run's patterns: the recurrence is linear and J^+ inverts it exactly
    W, A = _weights(80, 4, 4)
    L = 5
    x0 = inv.base_sequence(L, 4)
    h, D = torch.zeros(80, dtype=F64), []
    for step in range(L):
        pre = W @ h + A @ x0[step]
        D.append((pre > 0).double())
        h = torch.relu(pre)
    x = torch.randn(
        7,
        L,
        4,
        generator=torch.Generator().manual_seed(5),
        dtype=F64,
    )
    h = torch.zeros(7, 80, dtype=F64)
    for step in range(L):  # h^(l) = D^(l) (W h^(l-1) + A x^(l))
        h = D[step] * (h @ W.T + x[:, step] @ A.T)
    a = inv.analytic_inverse(W, A, L)
    assert torch.allclose(a(h), x, atol=1e-9)
    # and on the ReLU network itself at the base sequence
    h0 = elman_hidden_states(W, A, x0[None])[:, -1]
    assert torch.allclose(a(h0), x0[None], atol=1e-10)


def test_analytic_inverse_error_small_and_falls_with_width():
    errs = []
    for m in (256, 1024):
        W, A = _weights(m, 5, 6)
        x = normalize_sequence(
            sample_true_sequence(64, 6, 5, generator=7, dtype=F64),
            0.1,
        )
        h = elman_hidden_states(W, A, x)[:, -1]
        xhat = inv.analytic_inverse(W, A, 6)(h)
        errs.append(float((xhat - x)[:, 1:-1].abs().amax(2).mean() / 0.1))
    assert errs[1] < errs[0] < 1.0


def test_analytic_inverse_float32_input_and_bad_arguments():
    W, A = _weights(30, 4, 8)
    a = inv.analytic_inverse(W.float(), A.float(), 4)
    h = torch.randn(2, 30)
    assert a(h).shape == (2, 4, 4) and a(h).dtype == torch.float32
    with pytest.raises(ValueError, match="h"):
        a(torch.randn(2, 29))
    with pytest.raises(ValueError, match="base"):
        inv.analytic_inverse(W, A, 4, base=torch.zeros(3, 4))
    with pytest.raises(ValueError, match="rcond"):
        inv.analytic_inverse(W, A, 4, rcond=2.0)
    with pytest.raises(ValueError, match="L"):
        inv.base_sequence(2, 4)


# --- Lemma 4.1 ------------------------------------------------------------------------------------


def _fit_with_theta(theta, radius=1.0):
    return inv.StepFeatureFit(
        torch.as_tensor(theta, dtype=F64),
        radius,
        (-1.0, 1.0),
        0.0,
        64,
    )


@pytest.mark.parametrize("radius", [1.0, 1.3])
def test_step_feature_expectation_closed_forms(radius):
    u = torch.linspace(-0.9, 0.9, 19, dtype=F64)
    one = _fit_with_theta([[1.0]], radius)  # H = 1: P[step] = 1/2
    assert torch.allclose(one.expectation(u), torch.full_like(u, 0.5), atol=1e-10)
    lin = _fit_with_theta(
        [[0.0], [1.0]], radius
    )  # H = alpha: g(u) = u r / sqrt(2 pi (1 + r^2)) (Stein)
    ref = u * radius / math.sqrt(2 * math.pi * (1 + radius**2))
    assert torch.allclose(lin.expectation(u), ref, atol=1e-8)
    # near |u| = 1 the integrand becomes a step and the quadrature is accurate to ~1e-3 only
    edge = torch.tensor([-0.99, 0.99], dtype=F64)
    ref = edge * radius / math.sqrt(2 * math.pi * (1 + radius**2))
    assert torch.allclose(lin.expectation(edge), ref, atol=2e-3)


def test_step_feature_average_matches_the_expectation():
    fit = inv.fit_step_features(lambda t: t**2, degree=(6, 4))
    u = torch.linspace(-1, 1, 11, dtype=F64)
    m = 200_000
    avg = inv.step_feature_average(fit, u, m, generator=0)
    assert float((avg - fit.expectation(u)).abs().max()) < 5 * fit.norm / math.sqrt(m)
    assert fit.fit_error < 0.05
    # H evaluated pointwise agrees with the Hermite expansion written out
    a, b = (
        torch.tensor([0.3, -1.2], dtype=F64),
        torch.tensor([0.7, 0.1], dtype=F64),
    )
    he = lambda t: [
        torch.ones_like(t),
        t,
        (t**2 - 1) / math.sqrt(2),
    ]  # noqa: E731
    th = fit.theta
    brute = sum(th[j, k] * he(a)[j] * he(b)[k] for j in range(3) for k in range(3))
    small = inv.StepFeatureFit(th[:3, :3].clone(), 1.0, (-1.0, 1.0), 0.0, 64)
    assert torch.allclose(small.H(a, b), brute, atol=1e-12)


# --- Lemma F.11 ---------------------------------------------------------------------------------------


def test_backprop_correlations_match_explicit_products():
    model = ElmanRNN(4, 24, output_dim=2, generator=0, dtype=F64)
    x = sample_normalized_sequence(2, 5, 4, 0.1, generator=1, dtype=F64)
    c = inv.backprop_correlations(model, x)
    W, A, B = model.W.detach(), model.A.detach(), model.B
    h = elman_hidden_states(W, A, x)
    for b in range(2):
        for i in range(5):  # step i + 1
            back = B.clone()
            for step in range(4, i, -1):  # D^(step+1) W, 0-based step
                back = back @ torch.diag((h[b, step] > 0).double()) @ W
            ref = (back * B).sum(dim=1) / 24
            assert torch.allclose(c[b, i], ref, atol=1e-12)
    assert torch.allclose(c[:, -1], (B * B).sum(dim=1).expand(2, 2) / 24)


# --- Lemma 4.2 / Theorem 4.3 -------------------------------------------------------------------------


def test_construction_matches_its_formula_and_the_explicit_sum(
    sin_target,
):
    L, d, m = 5, 4, 64
    model = ElmanRNN(d, m, generator=0, dtype=F64)
    tgt = sin_target(L, d)
    c = inv.construct_existence(model, tgt, 0.2, n_fit=64, generator=1)
    assert torch.count_nonzero(c.dA[:, :-1]) == 0
    W, A, B = model.W.detach(), model.A.detach(), model.B
    v_hat = c.v / c.v.norm()
    alpha = math.sqrt(m / 2) * (W @ v_hat)
    b0 = math.sqrt(m / 2) * A[:, -1]
    ref = torch.stack(
        [B[0, r] * c.fit.H(alpha[r : r + 1], b0[r : r + 1])[0] / m for r in range(m)]
    )
    assert torch.allclose(c.dA[:, -1], ref, atol=1e-12)
    x_bar = sample_true_sequence(8, L, d, generator=2, dtype=F64)
    e = inv.evaluate_construction(model, c, tgt, x_bar, 0.2)
    assert np.all(e.terms[1:-1] == 0)  # the true tokens have no bias coordinate
    x = normalize_sequence(x_bar, 0.2)
    ref_F = pseudo_network_sum(model, torch.zeros(m, m, dtype=F64), c.dA, x)[
        :, 0
    ].numpy()
    np.testing.assert_allclose(e.F, ref_F, atol=1e-10)
    np.testing.assert_allclose(e.F_star, tgt(x_bar)[:, 0].numpy(), atol=1e-12)


def test_check_target_reads_the_construction_s_target(sin_target):
    tgt = sin_target(5, 4)
    assert inv.check_target(tgt, 5, 4) is tgt
    with pytest.raises(TypeError, match="target must be"):
        inv.check_target("sin", 5, 4)
    with pytest.raises(
        ValueError,
        match=r"\(target\.n_tokens, target\.token_dim\) == \(L - 2, d - 1\) must hold",
    ):
        inv.check_target(tgt, 6, 4)


def test_construction_rejects_a_wide_target():
    model = ElmanRNN(4, 16, generator=0)
    w = torch.ones(1, 2, 9) / 3.0
    tgt = ConceptTarget(
        [[get_function("sin"), get_function("sin")]],
        w,
        torch.ones(1, 2),
        3,
        3,
    )
    with pytest.raises(ValueError, match="target"):
        inv.construct_existence(model, tgt, 0.1)
