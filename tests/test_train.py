"""Tests of rnnlib.train (Part I): one SGD step against a hand-written torch loop, the linearized run
against torch.func.jvp, the convexity gap against the Taylor error. (The tangent kernel and kernel
ridge are tested in tests/test_ntk.py.)"""

import math

import numpy as np
import pytest
import torch

from rnnlib.elman import (
    ElmanRNN,
    elman_hidden_states,
    sample_normalized_sequence,
)
from rnnlib.train import (
    DivergenceError,
    objective,
    predict,
    train_pair,
    train_pseudo,
    train_rnn,
)

D = torch.float64


def _data(n=12, L=5, d=4, m=16, d_out=1, seed=0, signs=False):
    model = ElmanRNN(d, m, d_out, generator=seed, dtype=D)
    x = sample_normalized_sequence(n, L, d, 0.1, generator=seed + 1, dtype=D)
    y = torch.randn(
        n,
        d_out,
        generator=torch.Generator().manual_seed(seed + 2),
        dtype=D,
    )
    if signs:
        y = torch.sign(y)
    return model, x, y


def _hand_sgd(model, x, y, order, out_scale, lr, loss):
    """A plain torch loop: the reference the library's loop must reproduce exactly."""
    W = model.W.detach().clone().requires_grad_(True)
    A = model.A.detach().clone().requires_grad_(True)
    for idx in order:
        h = torch.zeros(len(idx), W.shape[0], dtype=D)
        for step in range(x.shape[1]):
            h = torch.relu(h @ W.T + x[idx, step] @ A.T)
        z = out_scale * h @ model.B.T
        if loss == "squared":
            value = (0.5 * (z - y[idx]) ** 2).mean()
        else:
            value = torch.log1p(torch.exp(-y[idx] * z)).mean()
        value.backward()
        with torch.no_grad():
            W -= lr * W.grad
            A -= lr * A.grad
        W.grad = None
        A.grad = None
    return W.detach(), A.detach()


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("batch_size", [1, 3])
def test_sgd_matches_a_hand_written_loop(loss, batch_size):
    model, x, y = _data(d_out=2, signs=loss == "logistic")
    steps, seed = 7, 5
    order = torch.randint(
        0,
        x.shape[0],
        (steps, batch_size),
        generator=torch.Generator().manual_seed(seed),
    )
    W_ref, A_ref = _hand_sgd(model, x, y, order, 0.7, 0.3, loss)
    res = train_rnn(
        model,
        x,
        y,
        out_scale=0.7,
        lr=0.3,
        steps=steps,
        loss=loss,
        batch_size=batch_size,
        generator=seed,
    )
    assert torch.allclose(res.model.W, W_ref, atol=1e-12)
    assert torch.allclose(res.model.A, A_ref, atol=1e-12)
    assert torch.equal(res.model.B, model.B)  # B frozen
    assert torch.allclose(res.dW, W_ref - model.W.detach(), atol=1e-12)


def test_the_input_model_is_untouched_and_history_is_consistent():
    model, x, y = _data()
    W0, A0 = model.W.detach().clone(), model.A.detach().clone()
    res = train_rnn(
        model,
        x[:8],
        y[:8],
        out_scale=0.5,
        lr=0.02,
        steps=10,
        x_eval=x[8:],
        y_eval=y[8:],
        log_every=4,
    )
    assert torch.equal(model.W.detach(), W0) and torch.equal(model.A.detach(), A0)
    h = res.history
    assert list(h.steps_logged) == [0, 4, 8, 10]
    assert h.step_loss.shape == (10,)
    assert h.dist_W_fro[0] == 0 and h.flip_fraction[0] == 0 and h.coupling_gap[0] == 0
    assert math.isclose(h.dist_W_fro[-1], float(res.dW.norm()), rel_tol=1e-9)
    assert math.isclose(
        h.dist_W_spec[-1],
        float(torch.linalg.matrix_norm(res.dW, ord=2)),
        rel_tol=1e-6,
    )
    assert math.isclose(h.W0_fro, float(W0.norm()), rel_tol=1e-12)
    final = objective(predict(res.model, x[:8], 0.5), y[:8]).mean()
    assert math.isclose(h.train_loss[-1], float(final), rel_tol=1e-10)
    ev = objective(res.predict(x[8:]), y[8:]).mean()
    assert math.isclose(h.eval_loss[-1], float(ev), rel_tol=1e-10)

    # the coupling gap at the final weights, recomputed with torch.func.jvp
    def f(W, A):
        return elman_hidden_states(W, A, x[8:])[:, -1] @ model.B.T

    f0, jvp = torch.func.jvp(f, (W0, A0), (res.dW, res.dA))
    change = f(res.model.W.detach(), res.model.A.detach()) - f0
    assert math.isclose(
        h.coupling_gap[-1],
        0.5 * float((change - jvp).abs().mean()),
        rel_tol=1e-8,
    )
    flips = (
        (model.activation_patterns(x[8:]) != res.model.activation_patterns(x[8:]))
        .double()
        .mean()
    )
    assert math.isclose(h.flip_fraction[-1], float(flips), abs_tol=1e-12)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_pseudo_sgd_is_sgd_on_the_jvp_linearization(loss):
    model, x, y = _data(signs=loss == "logistic")
    steps, seed, lam, lr = 6, 3, 0.8, 0.4
    order = torch.randint(
        0,
        x.shape[0],
        (steps, 1),
        generator=torch.Generator().manual_seed(seed),
    )
    W0, A0 = model.W.detach(), model.A.detach()

    def f(W, A, xx):
        return elman_hidden_states(W, A, xx)[:, -1] @ model.B.T

    dW = torch.zeros_like(W0, requires_grad=True)
    dA = torch.zeros_like(A0, requires_grad=True)
    for idx in order:
        f0, lin = torch.func.jvp(lambda W, A: f(W, A, x[idx]), (W0, A0), (dW, dA))
        z = lam * (f0 + lin)
        value = objective(z, y[idx], loss).mean()
        gW, gA = torch.autograd.grad(value, (dW, dA))
        with torch.no_grad():
            dW -= lr * gW
            dA -= lr * gA
    res = train_pseudo(
        model,
        x,
        y,
        out_scale=lam,
        lr=lr,
        steps=steps,
        loss=loss,
        generator=seed,
    )
    assert torch.allclose(res.dW, dW.detach(), atol=1e-12) and torch.allclose(
        res.dA, dA.detach(), atol=1e-12
    )
    assert res.history.flip_fraction.max() == 0
    f0, lin = torch.func.jvp(
        lambda W, A: f(W, A, x),
        (W0, A0),
        (dW.detach(), dA.detach()),
    )
    assert torch.allclose(res.predict(x), lam * (f0 + lin), atol=1e-12)


def test_train_pair_equals_the_two_runs_alone_and_agrees_to_first_order():
    model, x, y = _data(m=32)
    kw = dict(
        out_scale=0.5,
        lr=0.01,
        steps=12,
        generator=4,
        x_eval=x[:6],
        y_eval=y[:6],
        log_every=6,
    )
    pair = train_pair(model, x, y, **kw)
    alone_r, alone_p = (
        train_rnn(model, x, y, **kw),
        train_pseudo(model, x, y, **kw),
    )
    assert torch.equal(pair.rnn.model.W, alone_r.model.W) and torch.equal(
        pair.pseudo.dW, alone_p.dW
    )
    assert np.array_equal(pair.steps_logged, [0, 6, 12]) and pair.output_gap[0] < 1e-12
    zr, zp = pair.rnn.predict(x[:6]), pair.pseudo.predict(x[:6])
    assert math.isclose(
        pair.output_gap[-1],
        float((zr - zp).abs().mean()),
        rel_tol=1e-10,
    )
    # tiny learning rates: the two runs agree to first order (the relative gap vanishes with lr)
    gaps = [
        train_pair(model, x, y, **{**kw, "lr": lr}).relative_gap[-1]
        for lr in (1e-4, 1e-6)
    ]
    assert gaps[1] < 0.02 and gaps[1] < 0.1 * gaps[0]


def test_divergence_raises_naming_step_and_lr():
    model, x, y = _data(m=16)
    with pytest.raises(DivergenceError, match=r"step \d+.*lr = 1e\+06"):
        train_rnn(model, x * 100, y, out_scale=10.0, lr=1e6, steps=50)


def test_logistic_needs_sign_labels():
    model, x, y = _data()
    with pytest.raises(ValueError, match="y must hold labels"):
        train_rnn(
            model,
            x,
            y,
            out_scale=1.0,
            lr=0.1,
            steps=1,
            loss="logistic",
        )
    assert torch.allclose(
        objective(torch.zeros(2, 1), torch.ones(2, 1), "logistic"),
        torch.full((2,), math.log(2)),
    )


def test_convexity_gap_is_the_taylor_error_at_the_current_weights():
    """delta = s |F(theta*) - F(theta) - <grad F(theta), theta* - theta>|, the
    directional derivative computed independently by torch.func.jvp."""
    from rnnlib.elman import elman_hidden_states
    from rnnlib.train import convexity_gap

    model, x, _ = _data(n=6, L=4, d=3, m=10)
    gen = torch.Generator().manual_seed(3)
    th = (
        0.1 * torch.randn(10, 10, generator=gen, dtype=D),
        0.1 * torch.randn(10, 3, generator=gen, dtype=D),
    )
    st = (
        0.1 * torch.randn(10, 10, generator=gen, dtype=D),
        0.1 * torch.randn(10, 3, generator=gen, dtype=D),
    )
    W0, A0, B = (
        model.W.detach(),
        model.A.detach(),
        model.B.detach(),
    )

    def out(W, A):
        return elman_hidden_states(W, A, x)[:, -1] @ B[0]

    f, jvp = torch.func.jvp(
        out,
        (W0 + th[0], A0 + th[1]),
        (st[0] - th[0], st[1] - th[1]),
    )
    f_star = out(W0 + st[0], A0 + st[1])
    want = 0.5 * (f_star - f - jvp).abs()
    got = convexity_gap(model, th, st, x, out_scale=0.5)
    assert torch.allclose(got, want, atol=1e-12)
    # at theta = theta* the gap vanishes
    assert float(convexity_gap(model, st, st, x, out_scale=0.5).max()) < 1e-12


def test_train_pair_logs_the_convexity_gap_of_its_rnn_iterates():
    from rnnlib.train import convexity_gap

    model, x, y = _data(n=8, L=4, d=3, m=12)
    gen = torch.Generator().manual_seed(4)
    star = (
        0.05 * torch.randn(12, 12, generator=gen, dtype=D),
        0.05 * torch.randn(12, 3, generator=gen, dtype=D),
    )
    kw = dict(out_scale=0.5, lr=0.05, steps=6, generator=1, log_every=3)
    pair = train_pair(model, x, y, comparator=star, **kw)
    plain = train_pair(model, x, y, **kw)
    assert pair.convexity_mean.shape == (3,)
    assert plain.convexity_mean.shape == (0,)
    # the runs themselves are unchanged by the logging
    assert torch.equal(pair.rnn.model.W, plain.rnn.model.W)
    final = convexity_gap(model, (pair.rnn.dW, pair.rnn.dA), star, x, out_scale=0.5)
    assert math.isclose(pair.convexity_mean[-1], float(final.mean()), rel_tol=1e-9)
    assert math.isclose(pair.convexity_max[-1], float(final.max()), rel_tol=1e-9)


def test_worst_case_flip_fraction_follows_tau_two_thirds_m_minus_one_third():
    from rnnlib.train import worst_case_flip_fraction

    tau = 2.0
    fr = [
        worst_case_flip_fraction(m, tau, n_draws=4, generator=0) for m in (4096, 32768)
    ]
    predicted = [
        (3 / math.pi) ** (1 / 3) * tau ** (2 / 3) * m ** (-1 / 3) for m in (4096, 32768)
    ]
    for f, p in zip(fr, predicted):
        assert abs(f / p - 1) < 0.1
    slope = math.log(fr[1] / fr[0]) / math.log(8)
    assert abs(slope + 1 / 3) < 0.05
    assert worst_case_flip_fraction(64, 0.0) == 0.0


def test_train_rnn_logs_the_same_convexity_gap_as_train_pair():
    """train_rnn(comparator=...) logs delta_t in its history; the RNN run and the gaps equal train_pair's."""
    model, x, y = _data(n=8, L=4, d=3, m=12)
    gen = torch.Generator().manual_seed(5)
    star = (
        0.05 * torch.randn(12, 12, generator=gen, dtype=D),
        0.05 * torch.randn(12, 3, generator=gen, dtype=D),
    )
    kw = dict(out_scale=0.5, lr=0.05, steps=6, generator=1, log_every=3)
    alone = train_rnn(model, x, y, comparator=star, **kw)
    pair = train_pair(model, x, y, comparator=star, **kw)
    plain = train_rnn(model, x, y, **kw)
    assert alone.history.convexity_mean.shape == (3,)
    assert plain.history.convexity_mean.shape == (0,)
    assert torch.equal(alone.model.W, plain.model.W)
    np.testing.assert_array_equal(alone.history.convexity_mean, pair.convexity_mean)
    np.testing.assert_array_equal(alone.history.convexity_max, pair.convexity_max)
    assert np.all(alone.history.convexity_max > 0)


def test_the_three_entry_points_share_one_declared_settings_record():
    """train_rnn, train_pseudo and train_pair take the fields of train.SGD as keywords, declared once."""
    import dataclasses
    import inspect

    from rnnlib import train

    names = [f.name for f in dataclasses.fields(train.SGD)]
    for fn in (train.train_rnn, train.train_pseudo, train.train_pair):
        params = list(inspect.signature(fn).parameters)
        assert params[:3] == ["model", "x", "y"]
        assert params[3 : 3 + len(names)] == names
        assert fn.__rnnlib_params__ == train.SGD.__init__.__rnnlib_params__
    with pytest.raises(ValueError, match=r"^loss must be one of"):
        train.SGD(out_scale=1.0, lr=0.1, steps=1, loss="hinge")
    with pytest.raises(ValueError, match=r"^lr must lie in"):
        train.SGD(out_scale=1.0, lr=-0.1, steps=1)
    assert train.SGD(out_scale=1.0, lr=0.1, steps=3).batch_size == 1
