"""Tests of rnnlib.concepts: targets (eq. 2), complexity measures (Definition 2.1), the additive class."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnlib.concepts import (
    C_STAR,
    ConceptTarget,
    complexity_eps,
    complexity_s,
    dl1_neuron,
    fit_additive,
    get_function,
    mixed_difference,
    monomial,
    polynomial,
    sample_target,
    taylor_coefficients,
    token_circle,
)
from rnnlib.elman import sample_true_sequence
from rnnlib.languages import (
    additive_dl1_loss,
    count_ones,
    dl1_indicator,
    embed_binary,
    sample_binary_strings,
    sample_dl1_balanced,
)

FAST = settings(max_examples=30, deadline=None)
D = torch.float64


# --- Taylor coefficients ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["sin", "sinh", "expm1", "exp", "cos", "tanh"])
def test_taylor_coefficients_reproduce_the_function(name):
    phi = get_function(name)
    z = torch.linspace(-0.7, 0.7, 15, dtype=D)
    coefs = taylor_coefficients(phi, 60)
    # signs from autograd-free closed forms: compare |series| termwise against numerical derivatives at 0 is
    # overkill; instead rebuild phi from |c_i| and the known sign pattern of each function
    signs = {
        "sin": [(-1) ** ((i - 1) // 2) if i % 2 else 0 for i in range(60)],
        "sinh": [1 if i % 2 else 0 for i in range(60)],
        "expm1": [0] + [1] * 59,
        "exp": [1] * 60,
        "cos": [(-1) ** (i // 2) if i % 2 == 0 else 0 for i in range(60)],
        "tanh": [(-1) ** ((i - 1) // 2) if i % 2 else 0 for i in range(60)],
    }[name]
    series = sum(s * c * z**i for i, (s, c) in enumerate(zip(signs, coefs)))
    assert torch.allclose(series, phi(z), atol=1e-10)


def test_tanh_first_coefficients():
    assert np.allclose(
        taylor_coefficients("tanh", 8),
        [0, 1, 0, 1 / 3, 0, 2 / 15, 0, 17 / 315],
    )


# --- complexity measures -----------------------------------------------------------------


@FAST
@given(st.integers(1, 6), st.floats(0.01, 50.0))
def test_monomial_closed_forms(k, R):
    assert math.isclose(
        complexity_s(monomial(k), R),
        C_STAR * (k + 1) ** 1.75 * R**k,
        rel_tol=1e-9,
    )
    eps = 1e-3
    expected = (C_STAR * R) ** k * (1 + (math.log(1 / eps) / k) ** (k / 2))
    assert math.isclose(complexity_eps(monomial(k), R, eps), expected, rel_tol=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_monomial_orders_match_the_paper(k):
    radii = np.logspace(0, 3, 7)
    log_cs = [complexity_s(f"z^{k}", R, log10=True) for R in radii]
    assert np.polyfit(np.log10(radii), log_cs, 1)[0] == pytest.approx(k)  # C_s = O(R^k)
    # C_eps = O(R^k log^{k/2}(1/eps)): the ratio to log^{k/2}(1/eps) settles as eps -> 0
    r = [
        complexity_eps(f"z^{k}", 1.0, e) / math.log(1 / e) ** (k / 2)
        for e in (1e-50, 1e-100)
    ]
    assert r[0] == pytest.approx(r[1], rel=0.2)


@pytest.mark.parametrize("name", ["sin", "expm1", "sinh"])
def test_entire_functions_are_order_one_and_grow_like_exp_R(name):
    assert complexity_s(name, 1.0) < 10 * C_STAR  # O(1) at R = O(1)
    radii = np.array([20.0, 40.0, 80.0])
    logs = np.array([complexity_s(name, R, log10=True) for R in radii]) * math.log(10)
    slopes = np.diff(logs) / np.diff(radii)  # d log C_s / dR -> 1: e^{R (1 + o(1))}
    assert np.all((slopes > 0.9) & (slopes < 1.2))


def test_tanh_diverges_beyond_its_radius():
    assert math.isfinite(complexity_s("tanh", 1.5))
    assert complexity_s("tanh", 1.6) == math.inf
    assert complexity_eps("tanh", 1e-5, 0.01) < math.inf
    assert complexity_eps("tanh", 1.0, 0.01) == math.inf


@FAST
@given(
    st.sampled_from(["sin", "expm1", "tanh", "z^1", "z^2", "z^4", "sinh"]),
    st.floats(1e-3, 5.0),
)
def test_cs_below_ceps_for_small_eps(name, R):
    # termwise: (C* R)^i >= C* (i+1)^1.75 R^i for i >= 2, and for i = 1 once sqrt(log 1/eps) >= 2^1.75 - 1
    eps = 1e-3
    assert complexity_s(name, R, log10=True) <= complexity_eps(name, R, eps, log10=True)


def test_cs_exceeds_ceps_for_tiny_R_and_large_eps():
    # the termwise argument needs eps <= exp(-(2^1.75 - 1)^2) ~ 0.0037: at eps = 0.01 and tiny R it fails
    assert complexity_s("sin", 1e-6) > complexity_eps("sin", 1e-6, 0.01)
    assert complexity_s("sin", 1e-6) <= complexity_eps("sin", 1e-6, 0.003)


def test_log10_agrees_with_value_and_overflow_is_inf():
    v = complexity_s("sin", 2.0)
    assert math.isclose(
        math.log10(v),
        complexity_s("sin", 2.0, log10=True),
        rel_tol=1e-12,
    )
    assert complexity_eps("sin", 1.0, 0.01) == math.inf
    assert 4000 < complexity_eps("sin", 1.0, 0.01, log10=True) < 4400  # ~ C* R log10(e)


def test_polynomial_evaluation_and_degree():
    p = polynomial([0.0, 2.0, -1.0, 0.0])
    assert p.degree == 2
    z = torch.tensor([0.0, 1.0, 2.0, -1.0], dtype=D)
    assert torch.allclose(p(z), 2 * z - z**2)


# --- targets -----------------------------------------------------------------------------


def test_sample_target_matches_eq_2():
    L, d = 6, 4
    t = sample_target(L, d, p=3, output_dim=2, generator=1, dtype=D)
    assert torch.allclose(t.w.norm(dim=2), torch.ones(2, 3, dtype=D))
    assert bool((t.b.abs() <= 1).all())
    x_bar = sample_true_sequence(5, L, d, generator=2, dtype=D)
    y = t(x_bar)
    assert y.shape == (5, 2)
    flat = x_bar.reshape(5, -1)
    for s in range(2):
        manual = sum(t.b[s, r] * t.phis[s][r](flat @ t.w[s, r]) for r in range(3))
        assert torch.allclose(y[:, s], manual)
    assert torch.equal(
        t.w,
        sample_target(L, d, p=3, output_dim=2, generator=1, dtype=D).w,
    )


def test_targets_vanish_at_zero_preactivation_and_complexity_is_the_max():
    t = sample_target(5, 4, p=4, functions=("sin", "z^3"), generator=3)
    assert t.complexity_s(1.0) == max(
        complexity_s("sin", 1.0), complexity_s("z^3", 1.0)
    )


@pytest.mark.parametrize("seed", range(3))
def test_sampled_targets_are_in_the_class_at_the_theorems_radius(
    seed,
):
    """Issue 14: sample_target drew tanh, whose C_s and C_eps are infinite at R = 1/eps_x = 10."""
    t = sample_target(8, 4, p=8, generator=seed)
    for R in (1.0, 10.0):
        assert math.isfinite(t.complexity_s(R, log10=True)) and math.isfinite(
            t.complexity_eps(R, 1e-3, log10=True)
        )
    assert all(f.radius == math.inf for row in t.phis for f in row)


def test_sample_target_refuses_functions_outside_the_class_at_its_radius():
    with pytest.raises(ValueError, match="tanh is not in the concept class"):
        sample_target(5, 4, functions=("sin", "tanh"))
    tiny = math.pi / (2 * C_STAR) / 2  # C* R < pi/2: tanh's series converges there
    t = sample_target(5, 4, functions=("tanh",), radius=tiny, generator=0)
    assert math.isfinite(t.complexity_eps(tiny, 1e-3))
    assert t.complexity_eps(tiny, 1e-3) == max(
        complexity_eps(f, tiny, 1e-3) for row in t.phis for f in row
    )


def test_general_targets_couple_tokens_but_additive_ones_do_not():
    x_bar = sample_true_sequence(1, 6, 4, generator=4, dtype=D)[0]
    thetas = torch.linspace(0, 2 * math.pi, 7, dtype=D)
    t = sample_target(6, 4, p=4, generator=5, dtype=D)
    assert mixed_difference(t, x_bar, thetas).abs().max() > 1e-3

    def additive(
        xb,
    ):  # sin of token 1 plus tanh of token 4: no interaction
        return (torch.sin(xb[:, 0, 0]) + torch.tanh(xb[:, -1, 1]))[:, None]

    assert mixed_difference(additive, x_bar, thetas).abs().max() < 1e-12


def test_token_circle_stays_on_the_true_token_sphere():
    x_bar = sample_true_sequence(1, 5, 5, generator=0, dtype=D)[0]
    out = token_circle(x_bar, 1, torch.linspace(0, 6, 5, dtype=D))
    assert out.shape == (5, 3, 4)
    assert torch.allclose(out.norm(dim=2), torch.ones(5, 3, dtype=D))
    assert torch.equal(out[:, 0], x_bar[0].expand(5, -1))


# --- the additive class and D_L1 ---------------------------------------------------------


@FAST
@given(st.integers(2, 8), st.integers(2, 4), st.integers(0, 1000))
def test_fit_additive_is_exact_on_additive_data(n, k, seed):
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, k, (200, n), generator=gen)
    table = torch.randn(n, k, generator=gen, dtype=D)
    y = 0.3 + table.gather(1, tokens.T).T.sum(1)
    fit = fit_additive(tokens, y, alphabet_size=k)
    assert fit.mse < 1e-20
    assert torch.allclose(fit.predict(tokens), y)


def test_fit_additive_is_the_least_squares_optimum():
    z = sample_dl1_balanced(400, 6, generator=1)
    y = dl1_indicator(z).to(D)
    fit = fit_additive(z, y)
    X = torch.cat(
        [torch.ones(400, 1, dtype=D), z.to(D)], 1
    )  # binary: f_i(z_i) is affine in z_i
    sol = torch.linalg.lstsq(X, y[:, None]).solution
    assert fit.mse == pytest.approx(
        float(((X @ sol)[:, 0] - y).pow(2).mean()), rel=1e-9
    )


def test_dl1_is_not_additive_but_is_one_neuron():
    losses = additive_dl1_loss([4, 16, 64], samples_per_token=80, generator=0)
    assert np.all(
        np.abs(losses - 2 / 9) < 0.03
    )  # bounded away from zero, at every length
    for n in (3, 10, 40):
        z = torch.cat(
            [
                sample_dl1_balanced(200, n, generator=n),
                sample_binary_strings(200, n, generator=n),
            ]
        )
        neuron = dl1_neuron(n)
        F = neuron(embed_binary(z, dtype=D))[:, 0]
        s = count_ones(z).to(D)
        assert torch.allclose(F, s * (2 - s), atol=1e-9)
        assert torch.equal(
            (F > 0.5).to(D), dl1_indicator(z).to(D)
        )  # exact recognizer on every string
    assert abs(float(neuron.w.norm()) - 1) < 1e-12 and float(neuron.b.abs().max()) <= 1


# --- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: complexity_s("sin", -1.0),
            ValueError,
            "R must lie in",
        ),
        (
            lambda: complexity_s("arcsin", 1.0),
            ValueError,
            "phi: unknown function name",
        ),
        (
            lambda: complexity_s(3, 1.0),
            TypeError,
            r"phi must be an rnnlib\.concepts\.SmoothFunction or a str, got int",
        ),
        (
            lambda: complexity_eps("sin", 1.0, 1.0),
            ValueError,
            "eps must lie in",
        ),
        (
            lambda: complexity_eps("sin", 1.0, "0.1"),
            TypeError,
            "eps must be a real number",
        ),
        (
            lambda: polynomial([]),
            ValueError,
            "coefficients must be a non-empty sequence of coefficients",
        ),
        (
            lambda: polynomial("1 2"),
            ValueError,
            "coefficients must be a non-empty sequence of coefficients",
        ),
        (lambda: monomial(0), ValueError, "k must be >= 1"),
        (
            lambda: taylor_coefficients("sin", 0),
            ValueError,
            "n must be >= 1",
        ),
        (
            lambda: sample_target(2, 4),
            ValueError,
            "L must be >= 3",
        ),
        (
            lambda: sample_target(5, 4, p=0),
            ValueError,
            "p must be >= 1",
        ),
        (
            lambda: sample_target(5, 4, functions=("exp",)),
            ValueError,
            r"phi\(0\) = 0",
        ),
        (
            lambda: sample_target(5, 4, functions=()),
            ValueError,
            "functions must be a non-empty",
        ),
        (
            lambda: sample_target(5, 4)(torch.zeros(2, 3, 3)),
            ValueError,
            "x_bar tokens must be unit vectors",
        ),
        (
            lambda: sample_target(5, 4)(sample_true_sequence(2, 6, 4)),
            ValueError,
            r"x_bar must have shape \(batch, 3, 3\)",
        ),
        (
            lambda: ConceptTarget(
                [["sin"]],
                torch.ones(1, 1, 6),
                torch.ones(1, 1),
                2,
                3,
            ),
            ValueError,
            "w must have unit rows",
        ),
        (
            lambda: ConceptTarget(
                [["sin"]],
                torch.ones(1, 1, 6) / 6**0.5,
                2 * torch.ones(1, 1),
                2,
                3,
            ),
            ValueError,
            "b must have entries",
        ),
        (
            lambda: ConceptTarget(
                [["sin"]],
                torch.ones(1, 1, 5),
                torch.ones(1, 1),
                2,
                3,
            ),
            ValueError,
            "w must have shape",
        ),
        (
            lambda: fit_additive(torch.rand(5, 3), torch.rand(5)),
            TypeError,
            "tokens must be an integer tensor",
        ),
        (
            lambda: fit_additive(torch.zeros(5, 3, dtype=torch.long), torch.rand(4)),
            ValueError,
            "y must have shape",
        ),
        (
            lambda: fit_additive(-torch.ones(5, 3, dtype=torch.long), torch.rand(5)),
            ValueError,
            "tokens must be non-negative",
        ),
        (
            lambda: fit_additive(
                2 * torch.ones(5, 3, dtype=torch.long),
                torch.rand(5),
                alphabet_size=2,
            ),
            ValueError,
            "tokens must lie in",
        ),
        (
            lambda: additive_dl1_loss([]),
            ValueError,
            "lengths must be a non-empty",
        ),
        (
            lambda: additive_dl1_loss([1]),
            ValueError,
            r"lengths\[i\] must be >= 2",
        ),
        (lambda: dl1_neuron(0), ValueError, "n must be >= 1"),
        (
            lambda: token_circle(torch.ones(3, 2), 0, torch.zeros(2)),
            ValueError,
            "token_dim >= 3",
        ),
        (
            lambda: token_circle(torch.ones(3, 4), 5, torch.zeros(2)),
            ValueError,
            "position must be <= 2",
        ),
        (
            lambda: mixed_difference(
                lambda x: x, torch.ones(3, 4), torch.zeros(2), (0,)
            ),
            ValueError,
            "positions must be two",
        ),
    ],
)
def test_bad_input_is_rejected(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- the exercise checker of chapter 2 ---------------------------------------------------


def test_checker_2_1_passes_the_reference_and_fails_wrong_answers(
    capsys,
):
    from rnnlib import homework

    def right(c, R):
        i = torch.arange(len(c), dtype=D)
        return C_STAR * ((i + 1) ** 1.75 * R**i * c.abs()).sum()

    homework.check_exercise_2_1(right)
    assert "Exercise 2.1: all 6 checks passed." in capsys.readouterr().out

    def forgot_abs(c, R):
        i = torch.arange(len(c), dtype=D)
        return C_STAR * ((i + 1) ** 1.75 * R**i * c).sum()

    with pytest.raises(
        homework.ExerciseCheckFailed,
        match="wrong values on input: coefficients",
    ):
        homework.check_exercise_2_1(forgot_abs)
