"""Tests of rnnlib.ntk: the finite-width tangent kernel against autograd, kernel ridge against the
primal solve, and the infinite-width tangent kernel against the finite-width one.

The derivation in rnnlib/ntk.py is ours, so it is checked against the network
itself, not against a formula: ``tangent_kernel(model_m, x, x2) / m`` for
independent draws must approach the limit with a relative error that falls
like ``m^(-1/2)`` (the fluctuation of a sum over m neurons), on several
lengths and on pairs of different sequences; the seed average must approach
it too. Plus the closed forms on the diagonal, symmetry, PSD and zero inputs.
"""

import math

import numpy as np
import pytest
import torch

from rnnlib.elman import (
    ElmanRNN,
    elman_hidden_states,
    sample_normalized_sequence,
)
from rnnlib.initialization import predicted_sq_norms
from rnnlib.ntk import (
    cross_time_fraction,
    kernel_reference,
    kernel_ridge,
    limit_hidden_covariance,
    limit_tangent_kernel,
    tangent_kernel,
    tangent_kernel_diag,
)

F64 = torch.float64
F32 = torch.float32  # the wide networks: their errors (~1e-2) dwarf float32 rounding
WIDTHS = (256, 1024, 4096)
SEEDS = (
    12,
    6,
    3,
)  # draws per width: the error of one draw varies less as m grows


def _inputs(n, L, d=5, eps=0.5, seed=1):
    return sample_normalized_sequence(n, L, d, eps, generator=seed, dtype=F64)


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
                    ElmanRNN(5, m, generator=100 * L + s, dtype=F32),
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
    x[1] = 0.0  # a zero sequence: every pre-activation is 0, every pattern 0
    K = limit_tangent_kernel(x)
    model = ElmanRNN(5, 64, generator=0, dtype=F64)
    Km = tangent_kernel(model, x)
    assert float(K[1].abs().max()) == 0.0
    assert float(Km[1].abs().max()) == 0.0
    assert torch.isfinite(K).all()


def test_cross_time_terms_shrink_with_width():
    x = _inputs(8, 8).to(F32)
    frac = [
        float(cross_time_fraction(ElmanRNN(5, m, generator=s, dtype=F32), x).mean())
        for m in (64, 1024)
        for s in range(4)
    ]
    # about 0.16 at m = 64 and 0.03 at m = 1024 (m^(-1/2) predicts a factor 4)
    assert np.mean(frac[4:]) < np.mean(frac[:4]) / 2


# --- the tangent kernel at finite width ----------------------------------------------------------


def _model_data(n=12, L=5, d=4, m=16, seed=0):
    model = ElmanRNN(d, m, 1, generator=seed, dtype=F64)
    x = sample_normalized_sequence(n, L, d, 0.1, generator=seed + 1, dtype=F64)
    y = torch.randn(
        n,
        1,
        generator=torch.Generator().manual_seed(seed + 2),
        dtype=F64,
    )
    return model, x, y


def test_tangent_kernel_matches_autograd_gradients():
    model, x, _ = _model_data(n=5, L=6, d=4, m=12)
    x2 = sample_normalized_sequence(3, 6, 4, 0.1, generator=9, dtype=F64)

    def grads(xx):
        rows = []
        for n in range(xx.shape[0]):
            W = model.W.detach().clone().requires_grad_(True)
            A = model.A.detach().clone().requires_grad_(True)
            out = elman_hidden_states(W, A, xx[n : n + 1])[0, -1] @ model.B[0]
            gW, gA = torch.autograd.grad(out, (W, A))
            rows.append(torch.cat([gW.flatten(), gA.flatten()]))
        return torch.stack(rows)

    g1, g2 = grads(x), grads(x2)
    assert torch.allclose(tangent_kernel(model, x), g1 @ g1.T, atol=1e-10)
    assert torch.allclose(tangent_kernel(model, x, x2), g1 @ g2.T, atol=1e-10)


def test_kernel_ridge_is_ridge_regression_on_explicit_features():
    gen = torch.Generator().manual_seed(0)
    phi = torch.randn(10, 4, generator=gen, dtype=F64)
    y = torch.randn(10, generator=gen, dtype=F64)
    ridge = 0.1
    alpha, norm = kernel_ridge(phi @ phi.T, y, ridge)
    # primal: minimize (1/N) sum (phi theta - y)^2 / 2 + ridge/2 |theta|^2
    theta = torch.linalg.solve(
        phi.T @ phi / 10 + ridge * torch.eye(4, dtype=F64),
        phi.T @ y / 10,
    )
    assert torch.allclose(phi @ phi.T @ alpha, phi @ theta, atol=1e-10)
    assert math.isclose(norm, float(theta.norm()), rel_tol=1e-8)


def test_tangent_kernel_diag_is_the_diagonal():
    model, x, _ = _model_data(n=6, L=5, d=4, m=20)
    assert torch.allclose(
        tangent_kernel_diag(model, x),
        tangent_kernel(model, x).diagonal(),
        atol=1e-10,
    )


def test_exercise_5_2_checker_passes_autograd_and_fails_a_wrong_kernel(
    capsys,
):
    from rnnlib import homework

    def autograd_kernel(W, A, B, x):
        rows = []
        for n in range(x.shape[0]):
            Wg, Ag = (
                W.clone().requires_grad_(True),
                A.clone().requires_grad_(True),
            )
            out = elman_hidden_states(Wg, Ag, x[n : n + 1])[0, -1] @ B[0]
            rows.append(
                torch.cat([g.flatten() for g in torch.autograd.grad(out, (Wg, Ag))])
            )
        g = torch.stack(rows)
        return g @ g.T

    homework.check_exercise_5_2(autograd_kernel)
    assert "Exercise 5.2: all 3 checks passed." in capsys.readouterr().out
    with pytest.raises(homework.ExerciseCheckFailed, match="wrong values"):
        homework.check_exercise_5_2(lambda W, A, B, x: 2 * autograd_kernel(W, A, B, x))


def test_kernel_reference_recovers_the_primal_ridge_solution():
    """theta* from per-sequence autograd gradients and the primal ridge problem.

    Minimize (1/N) sum (s (F0 + <g_n, theta>) - y_n)^2 / 2 + ridge/2 ||theta||^2
    over the weight change theta = (W', A'): the predictions, the norm and the
    weights of kernel_reference must be those of this independent solve.
    """
    model, x, y = _model_data(n=9, L=4, d=3, m=8)
    xe = sample_normalized_sequence(5, 4, 3, 0.1, generator=7, dtype=F64)
    s, ridge = 0.5, 0.05
    rows, f0 = [], []
    for xx in (x, xe):
        for n in range(xx.shape[0]):
            W = model.W.detach().clone().requires_grad_(True)
            A = model.A.detach().clone().requires_grad_(True)
            out = elman_hidden_states(W, A, xx[n : n + 1])[0, -1] @ (model.B[0])
            gW, gA = torch.autograd.grad(out, (W, A))
            rows.append(torch.cat([gW.flatten(), gA.flatten()]))
            f0.append(float(out.detach()))
    G = torch.stack(rows)
    f0 = torch.tensor(f0, dtype=F64)
    N = x.shape[0]
    Gt, Ge = G[:N], G[N:]
    theta = torch.linalg.solve(
        s**2 * Gt.T @ Gt / N + ridge * torch.eye(G.shape[1], dtype=F64),
        s * Gt.T @ (y[:, 0] - s * f0[:N]) / N,
    )
    ftr, fev, norm, (Ws, As) = kernel_reference(
        model,
        x,
        y,
        xe,
        out_scale=s,
        ridge=ridge,
        return_weights=True,
    )
    assert torch.allclose(ftr[:, 0], s * (f0[:N] + Gt @ theta), atol=1e-9)
    assert torch.allclose(fev[:, 0], s * (f0[N:] + Ge @ theta), atol=1e-9)
    assert math.isclose(norm, float(theta.norm()), rel_tol=1e-8)
    m = model.width
    assert torch.allclose(Ws.flatten(), theta[: m * m], atol=1e-9) and torch.allclose(
        As.flatten(), theta[m * m :], atol=1e-9
    )
    # without weights: the same values, and weights None (one record either way)
    out3 = kernel_reference(model, x, y, xe, out_scale=s, ridge=ridge)
    assert out3.weights is None and math.isclose(out3.norm, norm)
    assert torch.allclose(out3.f_eval, fev)


@pytest.mark.parametrize("doubled, batch_size", [(False, 1), (True, 2)])
def test_kernel_sgd_is_train_pseudo_in_function_space(doubled, batch_size):
    """With the network's own scaled tangent kernel and initial output, kernel_sgd gives
    train_pseudo's predictions (same generator, same samples in the same order)."""
    from rnnlib.experiments.ch05 import regression_task
    from rnnlib.ntk import kernel_sgd
    from rnnlib.train import predict, sgd_order, train_pseudo

    x, y, xe, _ = (t.double() for t in regression_task(6, 5, 0.5, 24, 10, generator=0))
    net = ElmanRNN(5, 48, generator=3, dtype=torch.float64, doubled=doubled)
    lam = 0.5
    K = lam**2 * tangent_kernel(net, x)
    lr = 0.3 / float(K.diagonal().mean())
    run = train_pseudo(
        net,
        x,
        y,
        out_scale=lam,
        lr=lr,
        steps=40,
        generator=5,
        batch_size=batch_size,
    )
    sgd = kernel_sgd(
        K,
        y,
        sgd_order(len(x), 40, batch_size, 5),
        lr=lr,
        K_eval=lam**2 * tangent_kernel(net, xe, x),
        f0=predict(net, x, lam),
        f0_eval=predict(net, xe, lam),
    )
    assert torch.allclose(sgd.f, run.predict(x), atol=1e-12, rtol=0)
    assert torch.allclose(sgd.f_eval, run.predict(xe), atol=1e-12, rtol=0)
    # the predictions moved: the comparison is not of two initial outputs
    assert float((sgd.f_eval - predict(net, xe, lam)).abs().max()) > 0.05


def test_doubled_network_kernel_has_the_same_limit():
    """K_m / m of the doubled initialization converges to limit_tangent_kernel as m grows.

    Medians over 5 draws: single draws have heavy tails (one of 3 doubled draws at
    m = 256 was 2.7 in a pilot), and the doubled network has m/2 independent neurons.
    Pilot medians: 0.33 at m = 64, 0.065 at m = 4096.
    """
    x = _inputs(6, 6)
    K = limit_tangent_kernel(x)
    medians = []
    for m in (64, 4096):
        e = [
            float(
                (
                    tangent_kernel(
                        ElmanRNN(
                            5,
                            m,
                            generator=s,
                            dtype=torch.float64,
                            doubled=True,
                        ),
                        x,
                    )
                    / m
                    - K
                ).norm()
                / K.norm()
            )
            for s in range(5)
        ]
        medians.append(float(np.median(e)))
    # a wrong limit would leave the error near its m = 64 value
    assert medians[1] < 0.15 and medians[1] < 0.5 * medians[0], medians


def test_kernel_sgd_validation():
    from rnnlib.ntk import kernel_sgd

    K, y = torch.eye(3, dtype=torch.float64), torch.zeros(3, 1)
    o = torch.tensor([0, 1, 2])
    with pytest.raises(ValueError, match=r"K must have shape \(N, N\)"):
        kernel_sgd(K[:2], y, o, lr=0.1)
    with pytest.raises(ValueError, match="y"):
        kernel_sgd(K, y[:2], o, lr=0.1)
    with pytest.raises(ValueError, match=r"order must be .* in \[0, 3\)"):
        kernel_sgd(K, y, o + 1, lr=0.1)
    with pytest.raises(TypeError, match="order must be an integer"):
        kernel_sgd(K, y, [0, 1], lr=0.1)
    with pytest.raises(
        ValueError, match="f0_eval is None or K_eval is not None must hold"
    ):
        kernel_sgd(K, y, o, lr=0.1, f0_eval=y)
    with pytest.raises(ValueError, match="labels in"):
        kernel_sgd(K, y, o, lr=0.1, loss="logistic")
    with pytest.raises(ValueError, match="lr"):
        kernel_sgd(K, y, o, lr=-1.0)


def test_kernel_sgd_is_logistic_sgd_on_the_features():
    """Independent reference: SGD on explicit weights theta of a linear model z = Phi theta."""
    gen = torch.Generator().manual_seed(0)
    Phi = torch.randn(20, 7, generator=gen, dtype=torch.float64)
    y = torch.where(torch.randn(20, generator=gen) > 0, 1.0, -1.0).double()
    order = torch.randint(0, 20, (60,), generator=gen)
    from rnnlib.ntk import kernel_sgd

    sgd = kernel_sgd(Phi @ Phi.T, y[:, None], order, lr=0.05, loss="logistic")
    z, gamma = sgd.f[:, 0].numpy(), sgd.gamma[:, 0].numpy()
    theta = torch.zeros(7, dtype=torch.float64)
    for i in order.tolist():
        zi = float(Phi[i] @ theta)
        g = -float(y[i]) / (1 + math.exp(float(y[i]) * zi))
        theta -= 0.05 * g * Phi[i]
    assert np.allclose(z, (Phi @ theta).numpy())
    K = (Phi @ Phi.T).numpy()
    # f = K gamma, and the weight change's squared norm is gamma^T K gamma
    assert np.isclose(gamma @ K @ gamma, float(theta @ theta))


def test_sample_constant_is_the_min_norm_interpolant_times_sup_k():
    """f^T K^-1 f sup K / mean f^2 against an explicit inverse; several targets in one call; bad K refused."""
    from rnnlib.ntk import sample_constant

    gen = torch.Generator().manual_seed(3)
    G = torch.randn(12, 12, generator=gen, dtype=F64)
    K = G @ G.T + 0.5 * torch.eye(12, dtype=F64)
    f = torch.sign(torch.randn(12, generator=gen, dtype=F64))
    want = float(f @ torch.linalg.inv(K) @ f) * float(K.diagonal().max())
    assert math.isclose(sample_constant(K, f), want, rel_tol=1e-10)
    # the identity kernel: ||f||^2 = N for a +-1 target, sup K = 1
    assert math.isclose(
        sample_constant(torch.eye(12, dtype=F64), f),
        12.0,
        rel_tol=1e-12,
    )
    # the smallest RKHS interpolant: K alpha = f, and its norm is alpha^T K alpha
    alpha = torch.linalg.solve(K, f)
    assert math.isclose(
        float(alpha @ K @ alpha) * float(K.diagonal().max()),
        want,
        rel_tol=1e-10,
    )
    # a batch of targets, scaled: the constant does not depend on the scale of f
    F = torch.stack([f, 3 * f, torch.ones(12, dtype=F64)], dim=1)
    got = sample_constant(K, F)
    np.testing.assert_allclose(got[:2], [want, want], rtol=1e-10)
    # relabelling the domain (a permutation of K's rows and columns and of f) changes nothing
    p = torch.randperm(12, generator=gen)
    assert math.isclose(sample_constant(K[p][:, p], f[p]), want, rel_tol=1e-10)
    with pytest.raises(ValueError, match="positive definite"):
        sample_constant(-K, f)


def test_sequences_sharing_a_prefix_are_parallel_there_to_rounding():
    """Two sequences equal in their first l tokens have cos = 1 at those steps: H(x, x') = H(x, x).

    Without snapping cos to 1, rounding of a few ulps in cos becomes theta ~ 1e-8 through
    arccos, and the kernel's value depends on how BLAS orders a row's sum.
    """
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 7, 4, generator=g, dtype=torch.float64)
    x[1, :5] = x[0, :5]  # x_1 shares x_0's first five tokens
    H = limit_hidden_covariance(x)
    torch.testing.assert_close(H[0, 1, :5], H[0, 0, :5], rtol=1e-15, atol=0)
    # then they part: Cauchy-Schwarz holds strictly
    assert (H[0, 1, 5:] < (H[0, 0, 5:] * H[1, 1, 5:]).sqrt()).all()
    K = limit_tangent_kernel(x)
    assert torch.equal(K, K.T)
