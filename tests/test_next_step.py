"""Tests of rnnlib.next_step (metrics, models, baselines, truncation, Jacobians) and the chapter 11 training loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rnnlib import next_step as ns
from rnnlib.experiments.ch11 import train_stable_and_unstable
from rnnlib.next_step import DivergenceError, train_next_step
from rnnlib.stability import certify

K = 6  # keys in the toy rolls


def toy_rolls(n=6, T=9, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.random((T - (i % 3), K)) < 0.3).astype(np.uint8) for i in range(n)]


def toy_codes(n=5, T=12, V=7, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, V, size=T - i).astype(np.int64) for i in range(n)]


def test_frame_nll_hand_computed():
    # one sequence, two predicted frames, two keys; p = sigmoid(logit)
    logits = torch.tensor(
        [[[0.0, math.log(3.0)], [math.log(1 / 4), 0.0]]],
        dtype=torch.float64,
    )
    targets = torch.tensor([[[1.0, 1.0], [0.0, 1.0]]], dtype=torch.float64)
    # frame 1: -log(1/2) - log(3/4); frame 2: -log(1 - 1/5) - log(1/2)
    f1 = math.log(2) + math.log(4 / 3)
    f2 = math.log(5 / 4) + math.log(2)
    assert float(ns.frame_nll(logits, targets)) == pytest.approx(
        (f1 + f2) / 2, abs=1e-12
    )
    mask = torch.tensor([[True, False]])
    assert float(ns.frame_nll(logits, targets, mask)) == pytest.approx(f1, abs=1e-12)
    assert float(ns.frame_nll(logits, targets, reduction="sum")) == pytest.approx(
        f1 + f2, abs=1e-12
    )
    per = ns.frame_nll(logits, targets, mask, reduction="none")
    assert per.shape == (1, 2) and float(per[0, 1]) == 0.0
    # all-zero logits: every key costs log 2, summed over the K keys
    z = torch.zeros(2, 3, 88)
    assert float(ns.frame_nll(z, torch.ones_like(z))) == pytest.approx(
        88 * math.log(2), rel=1e-6
    )


def test_bits_per_char_hand_computed():
    logits = torch.zeros(1, 3, 8)
    assert float(ns.bits_per_char(logits, torch.tensor([[0, 5, 7]]))) == pytest.approx(
        3.0
    )
    logits = torch.tensor(
        [[[math.log(3.0), 0.0]]], dtype=torch.float64
    )  # p = (3/4, 1/4)
    assert float(ns.bits_per_char(logits, torch.tensor([[1]]))) == pytest.approx(2.0)
    assert float(ns.bits_per_char(logits, torch.tensor([[0]]))) == pytest.approx(
        -math.log2(0.75)
    )


@pytest.mark.parametrize("kind", ns.KINDS)
def test_fused_forward_matches_the_step_loop(kind):
    model = ns.NextStepModel(kind, K, 5, generator=1, dtype=torch.float64)
    x = torch.rand(3, 7, K, dtype=torch.float64).round()
    ref = model.core.hidden(model.core(x))  # rnnlib.dynamical's own loop over step()
    torch.testing.assert_close(model.hidden_states(x), ref)
    torch.testing.assert_close(model(x), ref @ model.V.T + model.c)
    # gradients flow to the core's parameters through the fused path
    model(x).sum().backward()
    assert model.core.W.grad is not None and float(model.core.W.grad.abs().sum()) > 0


@pytest.mark.parametrize("kind", ns.KINDS)
def test_truncated_forward(kind):
    model = ns.NextStepModel(kind, K, 4, generator=2, dtype=torch.float64)
    x = torch.rand(2, 6, K, dtype=torch.float64).round()
    torch.testing.assert_close(model(x, k=6), model(x))
    one = model.logits(
        model.core.step(model.core.initial_state(2), x[:, 3])
    )  # from zero, one step
    torch.testing.assert_close(model(x, k=1)[:, 3], one)


def test_categorical_model_one_hot():
    model = ns.NextStepModel(
        "rnn",
        7,
        4,
        readout="categorical",
        generator=0,
        dtype=torch.float64,
    )
    codes = torch.tensor([[1, 2, 6]])
    one_hot = torch.nn.functional.one_hot(codes, 7).double()
    torch.testing.assert_close(
        model(codes),
        model.hidden_states(one_hot) @ model.V.T + model.c,
    )
    with pytest.raises(ValueError, match="codes"):
        model(torch.tensor([[7]]))


@pytest.mark.parametrize("readout", ns.READOUTS)
def test_evaluate_weights_every_step_equally(readout):
    seqs = toy_rolls() if readout == "bernoulli" else toy_codes()
    model = ns.NextStepModel(
        "lstm",
        K if readout == "bernoulli" else 7,
        4,
        readout=readout,
        generator=3,
    )
    total, count = 0.0, 0
    for q in seqs:  # one sequence at a time, pooled by hand
        inputs, targets, mask = ns.next_step_batch([q])
        with torch.no_grad():
            logits = model(inputs)
        loss = ns.frame_nll if readout == "bernoulli" else ns.bits_per_char
        total += float(loss(logits, targets, mask, reduction="sum"))
        count += q.shape[0] - 1
    for bs in (1, 2, 64):
        assert ns.evaluate(model, seqs, batch_size=bs) == pytest.approx(
            total / count, rel=1e-5
        )
    curve = ns.truncated_curve(model, seqs, [1, 3, 100, None])
    assert curve[2] == pytest.approx(
        curve[3], rel=1e-5
    )  # k longer than every sequence = full context


def test_baselines():
    seqs = toy_rolls(n=20, T=30)
    marg = ns.fit_baseline(seqs, readout="bernoulli", input_dim=K, previous=False)
    targets = np.concatenate([q[1:] for q in seqs])
    p = (targets.sum(0) + 0.5) / (targets.shape[0] + 1)
    np.testing.assert_allclose(torch.sigmoid(marg.c).detach().numpy(), p, rtol=1e-5)
    # sticky sequences: the previous frame predicts the next one, so the logistic regression wins
    sticky = [np.repeat(q[::3], 3, axis=0) for q in seqs]
    lr = ns.fit_baseline(sticky, readout="bernoulli", input_dim=K, previous=True)
    marg2 = ns.fit_baseline(sticky, readout="bernoulli", input_dim=K, previous=False)
    assert ns.evaluate(lr, sticky) < ns.evaluate(marg2, sticky) - 0.5
    codes = toy_codes(n=10, T=40)
    big = ns.fit_baseline(codes, readout="categorical", input_dim=7, previous=True)
    pairs = np.zeros((7, 7))
    for q in codes:
        np.add.at(pairs, (q[1:], q[:-1]), 1)
    expect = np.log((pairs + 0.5) / (pairs.sum(0, keepdims=True) + 3.5))
    np.testing.assert_allclose(big.A.detach().numpy(), expect, rtol=1e-5)
    uni = ns.fit_baseline(codes, readout="categorical", input_dim=7, previous=False)
    assert torch.softmax(uni.c, 0).sum().item() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("kind", ns.KINDS)
def test_local_jacobian_norms_against_autograd(kind):
    model = ns.NextStepModel(kind, K, 5, generator=4, dtype=torch.float64)
    seqs = toy_rolls(n=3, T=6)
    norms = ns.local_jacobian_norms(model, seqs)
    assert norms.shape == (sum(q.shape[0] - 1 for q in seqs),)
    # brute force: autograd Jacobian of one step, at the states of the first sequence
    x = torch.as_tensor(seqs[0][:-1], dtype=torch.float64).unsqueeze(0)
    s = model.core.initial_state(1)
    expect, expect_inf = [], []
    for t in range(x.shape[1]):
        J = torch.autograd.functional.jacobian(
            lambda v: model.core.step(v, x[:, t]), s
        )[0, :, 0]
        expect.append(float(torch.linalg.matrix_norm(J, ord=2)))
        expect_inf.append(float(J.abs().sum(dim=1).max()))
        s = model.core.step(s, x[:, t]).detach()
    np.testing.assert_allclose(norms[: len(expect)], expect, rtol=1e-8)
    norms_inf = ns.local_jacobian_norms(model, seqs, ord=math.inf)
    np.testing.assert_allclose(norms_inf[: len(expect)], expect_inf, rtol=1e-8)
    if kind == "rnn":
        assert norms.max() <= model.worst_case_lambda() + 1e-9  # |tanh'| <= 1


def test_contraction_summary():
    out = ns.contraction_summary(np.array([0.5, 0.9, 1.2, 0.1]), 2.0)
    assert (
        out["fraction contractive"] == 0.75
        and out["max"] == 1.2
        and out["median / worst case"] == pytest.approx(0.35)
    )


@pytest.mark.parametrize("kind", ns.KINDS)
def test_projection_makes_the_model_certifiably_stable(kind):
    model = ns.NextStepModel(kind, K, 6, generator=5)
    if kind == "rnn":
        with torch.no_grad():
            model.core.W.mul_(5)
    assert not certify(model.core).stable
    model.project_(lam=0.9)
    assert certify(model.core).stable and model.worst_case_lambda() < 1


@pytest.mark.parametrize("kind", ns.KINDS)
def test_training_is_seeded_projected_and_learns(kind):
    seqs = [np.repeat(q[::3], 3, axis=0) for q in toy_rolls(n=12, T=30)]
    runs = [
        train_stable_and_unstable(
            kind,
            seqs,
            seqs[:2],
            input_dim=K,
            hidden_dim=6,
            generator=7,
            steps=24,
            batch_size=4,
            lr=3e-2,
            eval_every=12,
            progress=False,
        )
        for _ in range(2 if kind == "rnn" else 1)
    ]
    for variant in ("unstable", "stable"):
        (_, h1), (_, h2) = runs[0][variant], runs[-1][variant]
        np.testing.assert_array_equal(h1.loss, h2.loss)  # seeded: the same run twice
        assert h1.loss[-4:].mean() < h1.loss[:4].mean()  # it learns
    hist = runs[0]["stable"][1]
    assert hist.stable and np.all(hist.lam < 1) and hist.eval_steps.tolist() == [12, 24]
    # the two variants start from the same weights: their first minibatch losses agree
    assert runs[0]["stable"][1].loss[0] == pytest.approx(
        runs[0]["unstable"][1].loss[0], rel=0.2
    )


def test_text_training_with_windows():
    codes = toy_codes(n=8, T=60, V=5)
    model = ns.NextStepModel(
        "rnn", 5, 6, readout="categorical", generator=0
    ).init_output_bias_(codes)
    hist = train_next_step(
        model,
        codes,
        steps=10,
        batch_size=4,
        window=8,
        progress=False,
    )
    assert hist.loss.shape == (10,) and np.isnan(hist.valid).all()


def test_divergence_raises_with_step_and_lr():
    seqs = toy_rolls(n=4, T=10)
    model = ns.NextStepModel("rnn", K, 4, generator=0)
    with pytest.raises(
        DivergenceError, match=r"step \d+.*lr = 1e\+38"
    ):  # float32 overflows
        train_next_step(
            model,
            seqs,
            steps=20,
            lr=1e38,
            optimizer="sgd",
            clip=None,
            progress=False,
        )
    model = ns.NextStepModel("lstm", K, 4, generator=0)
    with torch.no_grad():
        model.V[0, 0] = math.inf
    with pytest.raises(DivergenceError, match=r"step 1 .*lr = 0\.01"):
        train_next_step(model, seqs, steps=3, lr=0.01, progress=False)


@pytest.mark.parametrize("kind", ns.KINDS)
def test_multi_step_jacobian_norms_brute_force(kind):
    model = ns.NextStepModel(kind, K, 4, generator=6, dtype=torch.float64)
    seqs = toy_rolls(n=2, T=7)
    one = ns.multi_step_jacobian_norms(model, seqs, 1)
    np.testing.assert_allclose(one, ns.local_jacobian_norms(model, seqs), rtol=1e-8)
    r = 3
    got = ns.multi_step_jacobian_norms(model, seqs, r)
    assert got.shape == (sum(q.shape[0] - 1 - (r - 1) for q in seqs),)
    # brute force: autograd through r steps from the state at t - r, first sequence
    x = torch.as_tensor(seqs[0][:-1], dtype=torch.float64).unsqueeze(0)
    states = [model.core.initial_state(1)]
    for t in range(x.shape[1]):
        states.append(model.core.step(states[-1], x[:, t]).detach())

    def run(s, t0):
        for t in range(t0, t0 + r):
            s = model.core.step(s, x[:, t])
        return s

    expect = []
    for t0 in range(x.shape[1] - r + 1):
        J = torch.autograd.functional.jacobian(lambda v: run(v, t0), states[t0])[
            0, :, 0
        ]
        expect.append(float(torch.linalg.matrix_norm(J, ord=2)))
    np.testing.assert_allclose(got[: len(expect)], expect, rtol=1e-8)


def test_results_table_markdown_and_html():
    cols = {
        "music": {"rnn": 9.25, "lstm": 9.3},
        "text": {"rnn": 2.5},
    }
    md = ns.results_table(cols, {"music": "similar"})
    assert (
        md.splitlines()[0] == "| model | music | text |"
        and "| lstm | 9.300 | – |" in md
        and "*similar*" in md
    )
    html = ns.results_table(cols, {"text": "a < b"}, fmt="html")
    assert (
        html.startswith("<table>") and "<td>9.250</td>" in html and "a &lt; b" in html
    )


def test_keep_best_restores_the_best_validation_weights():
    seqs = [np.repeat(q[::3], 3, axis=0) for q in toy_rolls(n=12, T=30)]
    valid = toy_rolls(n=4, T=20, seed=5)  # unrelated: overfits
    runs = {}
    for keep in (True, False):
        model = ns.NextStepModel("rnn", K, 8, generator=3).init_output_bias_(seqs)
        hist = train_next_step(
            model,
            seqs,
            valid,
            steps=40,
            batch_size=4,
            lr=5e-2,
            eval_every=5,
            keep_best=keep,
            generator=1,
            progress=False,
        )
        runs[keep] = (model, hist)
    model, hist = runs[True]
    best = int(np.argmin(hist.valid))
    assert hist.best_step == hist.eval_steps[best]
    # the model holds the weights of the best evaluation step
    assert ns.evaluate(model, valid) == pytest.approx(hist.valid[best], rel=1e-5)
    assert runs[False][1].best_step == 40
    assert ns.evaluate(runs[False][0], valid) == pytest.approx(
        runs[False][1].valid[-1], rel=1e-5
    )
    # both runs saw the same minibatches
    np.testing.assert_array_equal(hist.loss, runs[False][1].loss)


def test_fit_baseline_infers_readout_and_input_dim():
    seqs = toy_rolls(n=10, T=20)
    a = ns.fit_baseline(seqs, previous=True)
    b = ns.fit_baseline(seqs, readout="bernoulli", input_dim=K, previous=True)
    assert ns.evaluate(a, seqs) == pytest.approx(ns.evaluate(b, seqs), rel=1e-6)
    codes = toy_codes(n=10, T=40)
    c = ns.fit_baseline(codes, previous=False)
    assert c.readout == "categorical" and c.c.shape == (7,)


def test_inference_bound_at_a_models_own_constants():
    import rnnlib.stability as st
    from rnnlib.experiments import ch11
    from rnnlib.truncation import inference_bound

    seqs = toy_rolls(n=5, T=12)
    model = ns.NextStepModel("rnn", K, 5, generator=2)
    model.project_(lam=0.5)
    r = ch11.inference_bound_at(model, seqs, 3)
    B = max(np.sqrt(q.sum(axis=1)).max() for q in seqs)
    L = float(torch.linalg.matrix_norm(model.core.U.detach(), ord=2))
    assert r["B"] == pytest.approx(B) and r["L"] == pytest.approx(L, rel=1e-5)
    assert r["bound"] == pytest.approx(0.5**3 * L * B / 0.5, rel=1e-4)
    assert r["bound"] == pytest.approx(inference_bound(r["lambda"], 3, r["L"], r["B"]))
    assert r["diameter"] == pytest.approx(2 * math.sqrt(5))
    assert st.certify(model.core).lam == pytest.approx(r["lambda"])
    unstable = ns.NextStepModel("rnn", K, 5, generator=2)
    with torch.no_grad():
        unstable.core.W.mul_(3 / torch.linalg.matrix_norm(unstable.core.W, ord=2))
    with pytest.raises(ValueError, match="certifiably stable"):
        ch11.inference_bound_at(unstable, seqs, 3)


@pytest.mark.parametrize("T, r", [(7, 1), (7, 3), (9, 3), (5, 5), (12, 4)])
def test_window_products_against_naive(T, r):
    gen = torch.Generator().manual_seed(T * 10 + r)
    J = torch.randn(2, T, 3, 3, generator=gen, dtype=torch.float64)
    got = ns._window_products(J, r)
    assert got.shape == (2, T - r + 1, 3, 3)
    for t in range(r - 1, T):
        expect = J[:, t]
        for j in range(1, r):
            expect = expect @ J[:, t - j]
        torch.testing.assert_close(got[:, t - r + 1], expect)


def test_jacobian_norms_keep_the_order_of_seqs():
    # batches are formed by length: the result is still sequence by sequence
    model = ns.NextStepModel("lstm", K, 4, generator=2, dtype=torch.float64)
    seqs = [toy_rolls(n=1, T=T, seed=T)[0] for T in (9, 4, 7)]
    whole = ns.local_jacobian_norms(model, seqs, batch_size=2)
    parts = [ns.local_jacobian_norms(model, [q]) for q in seqs]
    np.testing.assert_allclose(whole, np.concatenate(parts), rtol=1e-12)
    r = 3
    whole = ns.multi_step_jacobian_norms(model, seqs, r, batch_size=2)
    parts = [ns.multi_step_jacobian_norms(model, [q], r) for q in seqs]
    np.testing.assert_allclose(whole, np.concatenate(parts), rtol=1e-12)


def test_closed_form_lstm_jacobians_match_autograd():
    from rnnlib.stability import state_jacobians

    model = ns.NextStepModel("lstm", K, 5, generator=3, dtype=torch.float64)
    with torch.no_grad():
        model.core.b.normal_(generator=torch.Generator().manual_seed(1))
    inputs, _, _ = ns.next_step_batch(toy_rolls(n=3, T=7), dtype=torch.float64)
    got = ns._state_jacobians(model, inputs)
    expect = state_jacobians(model.core, model.encode(inputs))
    torch.testing.assert_close(got, expect, rtol=1e-10, atol=1e-12)


def test_patience_stops_at_a_best_step_before_the_last():
    rng = np.random.default_rng(0)
    seqs = [(rng.random((12, 88)) < 0.05).astype(np.uint8) for _ in range(6)]
    model = ns.NextStepModel("rnn", 88, 4, generator=0)
    hist = ns.train_next_step(
        model,
        seqs,
        seqs[:2],
        steps=400,
        batch_size=3,
        lr=0.5,
        eval_every=1,
        patience=3,
        progress=False,
        generator=0,
    )
    assert hist.last_step < 400
    assert hist.best_step == hist.last_step - 3
    assert len(hist.eval_steps) == hist.last_step
    with pytest.raises(ValueError, match="patience"):
        ns.train_next_step(model, seqs, None, steps=2, patience=1, progress=False)


def test_authors_projection_and_forget_gates():
    rng = np.random.default_rng(1)
    seqs = [(rng.random((10, 88)) < 0.05).astype(np.uint8) for _ in range(4)]
    model = ns.NextStepModel("lstm", 88, 6, forget_bias=20.0, generator=0)
    model.project_(projection="authors")
    H = 6
    cols = model.core.W[H : 2 * H].detach().abs().sum(0)
    assert torch.allclose(cols, torch.full_like(cols, 0.155))
    f = ns.forget_gates(model, seqs)
    assert f.shape == (sum(s.shape[0] - 1 for s in seqs) * H,)
    assert f.min() > 0.99  # sigma(20 - 0.155 - 0.25): saturated
    with pytest.raises(ValueError, match="projection"):
        model.project_(projection="rows")
    with pytest.raises(TypeError, match="LSTM"):
        ns.forget_gates(ns.NextStepModel("rnn", 88, 4), seqs)


def test_truncation_excess_counts_only_the_frames_truncation_changes():
    rng = np.random.default_rng(2)
    seqs = [(rng.random((T, 88)) < 0.05).astype(np.uint8) for T in (5, 9, 13)]
    model = ns.NextStepModel("lstm", 88, 4, generator=0)
    out = ns.truncation_excess(model, seqs, 4)
    predicted = sum(s.shape[0] - 1 for s in seqs)
    untouched = sum(min(s.shape[0] - 1, 4) for s in seqs)
    assert out["untouched"] == pytest.approx(untouched / predicted)
    full, trunc = (
        ns.evaluate(model, seqs),
        ns.evaluate(model, seqs, k=4),
    )
    assert out["excess all"] == pytest.approx(trunc - full, abs=1e-5)
    assert out["excess"] == pytest.approx(
        out["excess all"] / (1 - out["untouched"]), rel=1e-6
    )
    assert math.isnan(ns.truncation_excess(model, seqs, 20)["excess"])
    with pytest.raises(ValueError, match="k"):
        ns.truncation_excess(model, seqs, 0)


def test_the_training_loop_validates_once_not_at_every_step(
    monkeypatch,
):
    """The data are checked at the entry point; the loop calls unchecked kernels.

    The number of argument checks made during a run must not grow with its steps.
    """
    calls = {"n": 0}
    real = ns.check_tensor

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(ns, "check_tensor", counting)
    counts = []
    for steps in (2, 8):
        calls["n"] = 0
        model = ns.NextStepModel("rnn", K, 8, generator=0)
        train_next_step(
            model,
            toy_rolls(),
            steps=steps,
            batch_size=2,
            progress=False,
        )
        counts.append(calls["n"])
    assert counts[0] == counts[1], counts
    # the loss the loop uses is the checked one's value
    x = torch.as_tensor(np.stack(toy_rolls(n=1) * 2), dtype=torch.float32)
    logits = torch.randn(
        2,
        x.shape[1] - 1,
        K,
        generator=torch.Generator().manual_seed(0),
    )
    mask = torch.ones(2, x.shape[1] - 1, dtype=torch.bool)
    assert torch.equal(
        ns._readout_loss("bernoulli", logits, x[:, 1:], mask),
        ns.frame_nll(logits, x[:, 1:], mask),
    )
