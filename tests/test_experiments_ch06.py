"""Tests of rnnlib.experiments.ch06: SGD in function space and the bound of the limit learner."""

import math

import numpy as np
import torch

from rnnlib.experiments import ch06
from rnnlib.generalization import (
    classification_task,
    logistic_loss_bound,
    uniform_bound,
)
from rnnlib.ntk import limit_tangent_kernel


def test_limit_curve_bound_and_the_two_kernel_paths_agree():
    kw = dict(L=3, d=4, eps_x=0.5, n_test=40, steps=60, n_pool=50)
    full = ch06.limit_generalization_curve([20, 50], 1, **kw)
    drawn = ch06.limit_generalization_curve(
        [20, 50], 1, gram_size=0, train_points=50, **kw
    )
    for a, b in zip(full, drawn):
        for f in ("train_loss", "test_loss", "norm", "bound"):
            assert np.isclose(getattr(a, f), getattr(b, f)), f
    r = full[1]
    x, _, xt, _ = classification_task(
        3, 4, 0.5, 50, 40, generator=1, dtype=torch.float64
    )
    diag = limit_tangent_kernel(x).diagonal()
    kbar = float(diag.mean())
    kmax = float(torch.cat([diag, limit_tangent_kernel(xt[:200]).diagonal()]).max())
    assert np.isclose(
        r.rademacher,
        r.norm * math.sqrt(float(diag.sum()) / kbar) / 50,
    )
    assert np.isclose(
        r.loss_bound,
        logistic_loss_bound(r.norm * math.sqrt(kmax / kbar)),
    )
    assert np.isclose(
        r.bound,
        uniform_bound(r.rademacher, n=50, loss_bound=r.loss_bound),
    )
    assert r.steps == 60 and r.visited <= 50


def test_limit_curve_passes_grow_the_steps():
    runs = ch06.limit_generalization_curve(
        [10, 30], 0, L=3, d=4, eps_x=0.5, n_test=20, epochs=2.0
    )
    assert [r.steps for r in runs] == [20, 60]
    assert runs[1].norm > runs[0].norm


def test_generalization_run_is_consistent():
    r = ch06.generalization_run(
        20,
        32,
        0,
        L=5,
        d=4,
        eps_x=0.5,
        n_pool=30,
        n_test=50,
        out_scale=0.5,
        epochs=2,
    )
    assert math.isclose(r.gap, r.test_loss - r.train_loss)
    assert r.bound >= 2 * r.rademacher and r.loss_bound >= math.log(2)
    assert 0 <= r.test_error <= 1 and r.norm > 0
    # epochs * n steps; the a-priori radius eta T Gamma holds the trained change
    assert r.steps == 40 and 0 < r.norm <= r.norm_prior
    assert r.kbar > 0 and r.f0_max > 0


def test_theorem_terms_add_up_and_the_ball_holds_the_run():
    kw = dict(L=5, d=4, eps_x=0.5, n=20, n_test=40, out_scale=0.5)
    r = ch06.theorem_terms(32, 0, steps=40, n_logs=4, **kw)
    assert r.steps == 40 and r.n == 20 and r.width == 32
    terms = r.terms
    assert list(terms) == list(ch06.TheoremTerms.TERMS)
    assert math.isclose(r.bound, sum(terms.values()))
    assert all(v >= 0 and math.isfinite(v) for v in terms.values())
    # each term from its ingredients, as the docstring states it
    T, eta = r.steps, r.lr
    assert math.isclose(r.regret_distance, r.comparator_norm**2 / (2 * eta * T))
    assert math.isclose(r.regret_gradient, eta * r.gamma**2 / 2)
    assert math.isclose(r.loss_bound, r.lipschitz**2 / 2)
    assert math.isclose(r.complexity, 2 * r.lipschitz * r.rademacher)
    assert math.isclose(
        r.confidence,
        4 * r.loss_bound * math.sqrt(2 * math.log(4 / 0.05) / 20),
    )
    ball = r.comparator_norm + math.sqrt(
        r.comparator_norm**2
        + 2 * eta * T * (r.comparator_max + r.error_product)
        + eta**2 * T * r.gamma**2
    )
    assert math.isclose(r.ball, ball)
    # the a-priori ball holds the trained weight change; |G'| <= max|G'|
    assert 0 < r.norm_final <= r.ball
    assert r.comparator_loss <= r.comparator_max
    assert r.max_output > 0 and r.zero_loss > 0
    # deterministic in its seed
    again = ch06.theorem_terms(32, 0, steps=40, n_logs=4, **kw)
    assert again == r


def test_theorem_terms_at_the_initialization():
    """With one logged iterate (theta_0 = 0) the measured loss is the initialization's on the fresh draws."""
    kw = dict(L=5, d=4, eps_x=0.5, n=10, n_test=30, out_scale=0.5)
    r = ch06.theorem_terms(16, 1, steps=5, n_logs=1, **kw)
    longer = ch06.theorem_terms(16, 1, steps=50, n_logs=1, **kw)
    # the same theta_0, target, data and comparator: only T differs
    assert r.population_loss == longer.population_loss
    assert r.error_product == longer.error_product
    assert r.comparator_norm == longer.comparator_norm
    assert math.isclose(r.regret_distance, 10 * longer.regret_distance)


def test_theorem_terms_against_their_pieces():
    """Independent reference: the comparator, its loss and the error product at theta_0 = 0, rebuilt from the documented pieces."""
    from rnnlib._rng import derive
    from rnnlib.concepts import ConceptTarget, get_function
    from rnnlib.elman import (
        ElmanRNN,
        normalize_sequence,
        sample_true_sequence,
    )
    from rnnlib.inversion import construct_existence
    from rnnlib.train import convexity_gap, predict

    L, d, m, n, seed, lam = 5, 4, 16, 10, 3, 0.5
    r = ch06.theorem_terms(
        m, seed, L=L, d=d, eps_x=0.5, n=n, n_test=30,
        out_scale=lam, steps=4, n_logs=1,
    )  # fmt: skip
    w = torch.randn(1, 1, (L - 2) * (d - 1), generator=derive(seed, "target"))
    target = ConceptTarget(
        [[get_function("sin")]], w / w.norm(), torch.ones(1, 1), L - 2, d - 1
    )  # fmt: skip
    xb = sample_true_sequence(n + 30, L, d, generator=derive(seed, "data"))
    x, y = normalize_sequence(xb, 0.5)[:n], target(xb)[:n]
    model = ElmanRNN(d, m, generator=derive(seed, "weights", m))
    dA = construct_existence(
        model, target, 0.5, generator=derive(seed, "fit", m)
    ).dA / lam  # fmt: skip
    assert math.isclose(r.comparator_norm, float(dA.double().norm()), rel_tol=1e-6)
    star = ElmanRNN(d, m, generator=derive(seed, "weights", m))
    with torch.no_grad():
        star.A.add_(dA)
    loss_star = 0.5 * (predict(star, x, lam) - y).square()[:, 0]
    assert math.isclose(r.comparator_loss, float(loss_star.mean()), rel_tol=1e-5)
    zero = torch.zeros(m, m), torch.zeros(m, d)
    delta = convexity_gap(model, zero, (zero[0], dA), x, out_scale=lam)
    residual = (predict(model, x, lam) - y).abs()[:, 0]
    assert math.isclose(
        r.error_product, float((residual * delta).mean()), rel_tol=1e-5
    )  # fmt: skip
    assert r.error_product < r.delta_mean * float(residual.max()) + 1e-12


def test_the_committed_record_is_full_and_fresh():
    from rnnlib import records

    rec = records.read_record(records.record_path(6))
    assert rec["scale"] == "full" and rec["config"] == ch06.RECORD
    assert ch06.check_width_record(rec) < records.FINGERPRINT_RTOL
    res = rec["results"]
    n_seeds = len(ch06.RECORD["fixed_seeds"])
    n_ns = len(ch06.RECORD["fixed_ns"])
    assert np.shape(res["fixed_t"]["bound"]) == (n_seeds, n_ns)
    assert np.shape(res["n_sweep"]["gap"]) == (
        len(ch06.RECORD["n_sweep_seeds"]),
        len(ch06.RECORD["n_sweep_ns"]),
    )
    assert set(ch06.width_trends(rec)) == set(ch06.RECORD["initializations"])


def test_the_smoke_record_rows_are_the_runs_themselves(tmp_path):
    from rnnlib import records

    path = ch06.make_width_record(tmp_path / "ch06.json", smoke=True)
    rec = records.read_record(path)
    cfg = ch06.SMOKE
    res = rec["results"]
    kw = dict(
        L=cfg["L"],
        d=cfg["d"],
        eps_x=cfg["eps_x"],
        n_pool=cfg["n_pool"],
        n_test=cfg["n_test"],
        out_scale=cfg["out_scale"],
        epochs=cfg["epochs"],
        delta=cfg["delta"],
    )
    r = ch06.generalization_run(
        cfg["n_sweep_ns"][1],
        cfg["n_sweep_m"],
        cfg["n_sweep_seeds"][1],
        **kw,
    )
    assert res["n_sweep"]["bound"][1][1] == r.bound
    assert res["n_sweep"]["gap"][1][1] == r.gap
    fixed = ch06.limit_generalization_curve(
        cfg["fixed_ns"],
        cfg["fixed_seeds"][1],
        L=cfg["L"],
        d=cfg["d"],
        eps_x=cfg["eps_x"],
        n_test=cfg["n_test"],
        steps=cfg["fixed_steps"],
        delta=cfg["delta"],
        gram_size=0,
        train_points=cfg["fixed_train_points"],
        n_pool=max(cfg["fixed_ns"]),
    )
    assert res["fixed_t"]["bound"][1] == [f.bound for f in fixed]
    assert ch06.check_width_record(rec) == 0.0
