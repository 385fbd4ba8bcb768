"""Tests of rnnlib.languages: the binary embedding, D_L1 and the samplers."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnlib.elman import normalize_sequence
from rnnlib.languages import (
    count_ones,
    dl1_indicator,
    embed_binary,
    sample_binary_strings,
    sample_dl1_balanced,
)

FAST = settings(max_examples=30, deadline=None)


@FAST
@given(st.integers(1, 6), st.integers(1, 12), st.integers(0, 10_000))
def test_embedding_gives_true_sequences(batch, n, seed):
    z = sample_binary_strings(batch, n, generator=seed)
    x_bar = embed_binary(z, dtype=torch.float64)
    assert x_bar.shape == (batch, n, 3)
    assert torch.allclose(
        x_bar.norm(dim=2),
        torch.ones(batch, n, dtype=torch.float64),
    )
    assert torch.all(x_bar[..., -1] == 0.5)
    normalize_sequence(x_bar, 0.1)  # accepted by Definition 3.1's validation
    # injective: the first coordinate recovers the bit
    assert torch.equal((x_bar[..., 0] > 0.4).long(), z)


def test_dl1_indicator_and_count():
    z = torch.tensor([[0, 0, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 0, 1]])
    assert count_ones(z).tolist() == [0, 1, 2, 3, 1]
    assert dl1_indicator(z).tolist() == [0.0, 1.0, 0.0, 0.0, 1.0]


@FAST
@given(st.integers(2, 40), st.integers(1, 3), st.integers(0, 10_000))
def test_balanced_sampler_counts(n, max_ones, seed):
    max_ones = min(max_ones, n)
    z = sample_dl1_balanced(300, n, max_ones=max_ones, generator=seed)
    s = count_ones(z)
    assert z.shape == (300, n) and int(s.max()) <= max_ones and int(s.min()) >= 0


def test_balanced_sampler_is_balanced_and_reproducible():
    z = sample_dl1_balanced(3000, 50)
    frac = dl1_indicator(z).mean().item()
    assert abs(frac - 1 / 3) < 0.03
    assert torch.equal(z, sample_dl1_balanced(3000, 50))
    # positions are spread over the whole string
    assert z[count_ones(z) == 1].float().mean(0).min() > 0


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: embed_binary(torch.tensor([[0, 2]])),
            ValueError,
            r"z must have binary \(0/1\) entries",
        ),
        (
            lambda: embed_binary([[0, 1]]),
            TypeError,
            "z must be a torch.Tensor",
        ),
        (
            lambda: embed_binary(torch.zeros(3)),
            ValueError,
            "z must have 2 dimensions",
        ),
        (
            lambda: dl1_indicator(torch.tensor([[0.5, 1.0]])),
            ValueError,
            r"z must have binary \(0/1\) entries",
        ),
        (
            lambda: sample_binary_strings(0, 3),
            ValueError,
            "batch_size must be >= 1",
        ),
        (
            lambda: sample_binary_strings(2, 3, p=1.5),
            ValueError,
            r"p must lie in \[0.0, 1.0\], got 1.5",
        ),
        (
            lambda: sample_dl1_balanced(4, 3, max_ones=4),
            ValueError,
            "max_ones must be <= n = 3",
        ),
        (
            lambda: sample_dl1_balanced(4, 2.5),
            TypeError,
            "n must be an integer",
        ),
    ],
)
def test_bad_input_is_rejected(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- chapter 7: automata, samplers, splits, concept-class representations ---------------------------

from rnnlib.elman import ElmanRNN  # noqa: E402
from rnnlib.languages import (  # noqa: E402
    PAD,
    all_strings,
    concept_representation,
    contains_pattern,
    encode_strings,
    get_language,
    held_out_split,
    language_dataset,
    parity_indicator,
    representation_complexity,
    sample_language,
    string_lengths,
    tomita_indicator,
)

NAMES = [
    "dl1",
    "parity",
    "pattern:101",
    "pattern:0",
    "pattern:0011",
] + [f"tomita{k}" for k in range(1, 8)]


@pytest.mark.parametrize("name", NAMES)
def test_membership_agrees_with_the_automaton_on_all_strings(name):
    lang = get_language(name)
    for n in range(1, 11):
        z = all_strings(n)
        assert torch.equal(lang(z), lang.membership(z)), f"{name}, n = {n}"
        assert lang.count(n) == int(
            lang(z).sum()
        )  # path counting in the automaton = brute force
    z = all_strings(5)  # left padding leaves the language unchanged
    zp = torch.cat([torch.full((32, 3), PAD), z], dim=1)
    assert torch.equal(lang(zp), lang(z)) and torch.equal(
        lang.membership(zp), lang.membership(z)
    )


def test_memberships_by_hand():
    z = torch.tensor(
        [
            [1, 1, 1, 1],
            [1, 0, 1, 0],
            [1, 0, 0, 1],
            [1, 1, 0, 1],
            [0, 0, 0, 1],
            [0, 1, 0, 1],
        ]
    )
    assert parity_indicator(z).tolist() == [0, 0, 0, 1, 1, 0]
    assert contains_pattern(z, "101").tolist() == [
        0,
        1,
        0,
        1,
        0,
        1,
    ]
    assert tomita_indicator(z, 1).tolist() == [1, 0, 0, 0, 0, 0]
    assert tomita_indicator(z, 2).tolist() == [0, 1, 0, 0, 0, 0]
    assert tomita_indicator(z, 3).tolist() == [
        1,
        0,
        1,
        1,
        1,
        0,
    ]  # 1101: the odd 0-run follows "11"
    assert tomita_indicator(z, 4).tolist() == [1, 1, 1, 1, 0, 1]
    assert tomita_indicator(z, 7).tolist() == [1, 0, 1, 1, 1, 1]
    assert string_lengths(torch.tensor([[PAD, PAD, 1], [0, 1, 1]])).tolist() == [1, 3]


@pytest.mark.parametrize("name", NAMES)
def test_sampler_is_balanced_labelled_by_the_automaton_and_seeded(
    name,
):
    lang = get_language(name)
    z, y = sample_language(name, 400, 9, min_length=4, generator=3)
    assert z.shape == (400, 9) and y.mean().item() == 0.5
    assert torch.equal(y, lang.membership(z))
    lengths = string_lengths(z)
    assert int(lengths.min()) >= 4 and int(lengths.max()) <= 9
    z2, y2 = sample_language(name, 400, 9, min_length=4, generator=3)
    assert torch.equal(z, z2) and torch.equal(y, y2)


def test_near_boundary_negatives_are_one_flip_from_a_member():
    lang = get_language("dl1")
    z, y = sample_language("dl1", 2000, 12, near_fraction=1.0, generator=0)
    neg = z[y == 0]
    s = neg.sum(dim=1)
    assert set(s.tolist()) <= {
        0,
        2,
    }  # one flip of a string with a single 1
    z, y = sample_language("tomita4", 1000, 10, near_fraction=1.0, generator=0)
    neg = z[y == 0]
    flips = neg[:, None, :].repeat(1, 10, 1)
    idx = torch.arange(10)
    flips[:, idx, idx] = 1 - flips[:, idx, idx]
    near = get_language("tomita4")(flips.reshape(-1, 10)).reshape(-1, 10).amax(dim=1)
    assert (
        near.mean().item() > 0.95
    )  # near-boundary (a few fall back to uniform negatives: 1111111111)
    # with near_fraction = 0 negatives are uniform: most D_L1 negatives have many ones
    z, y = sample_language("dl1", 1000, 12, near_fraction=0.0, generator=0)
    assert z[y == 0].sum(dim=1).float().mean() > 5
    assert lang(z).mean() == 0.5


def test_positives_are_uniform_among_accepted_strings():
    lang = get_language("tomita7")
    n = 5
    z = lang.dfa.sample(torch.full((12000,), n), generator=1)
    counts = torch.unique(z, dim=0, return_counts=True)[1].double()
    assert len(counts) == lang.count(n)
    expected = 12000 / lang.count(n)
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 3 * len(counts)  # df = count - 1; a gross bias would give thousands


def test_held_out_split_is_disjoint_and_keeps_labels():
    for name, n, lo in [
        ("dl1", 8, None),
        ("tomita1", 8, 1),
        ("parity", 12, None),
    ]:
        sp = language_dataset(name, 600, n, min_length=lo, generator=1)
        train = {tuple(r) for r in sp.z_train.tolist()}
        test = {tuple(r) for r in sp.z_test.tolist()}
        assert not train & test
        assert len(train) == sp.n_unique_train and len(test) == sp.n_unique_test
        assert len(sp.z_train) + len(sp.z_test) == 600
        lang = get_language(name)
        assert torch.equal(sp.y_train, lang(sp.z_train)) and torch.equal(
            sp.y_test, lang(sp.z_test)
        )
        assert (
            sp.y_test.min() == 0 and sp.y_test.max() == 1
        )  # both labels on the test side
        assert 0.0 <= sp.majority_baseline <= 1.0
    z = torch.tensor([[0, 1], [0, 1], [1, 1], [1, 0], [0, 0]])
    sp = held_out_split(
        z,
        torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0]),
        test_fraction=0.5,
        generator=0,
    )
    assert sp.n_unique_train + sp.n_unique_test == 4


def test_padded_encoding_gives_the_output_of_the_short_string():
    model = ElmanRNN(4, 32, generator=0, dtype=torch.float64)
    z = torch.tensor([[PAD, PAD, 1, 0, 1], [0, 1, 1, 0, 1]])
    x = encode_strings(z, 0.3, dtype=torch.float64)
    short = encode_strings(torch.tensor([[1, 0, 1]]), 0.3, dtype=torch.float64)
    assert torch.allclose(model(x[:1]), model(short), atol=1e-12)
    full = normalize_sequence(embed_binary(z[1:], dtype=torch.float64), 0.3)
    assert torch.allclose(x[1:], full)


@pytest.mark.parametrize(
    "name",
    ["dl1", "parity", "pattern:101", "pattern:0", "pattern:0110"],
)
def test_concept_representations_recognize_every_string(name):
    lang = get_language(name)
    for n in [4, 7, 10]:
        target, threshold = concept_representation(name, n)
        z = all_strings(n)
        F = target(embed_binary(z, dtype=torch.float64))[:, 0]
        assert torch.equal((F > threshold).double(), lang(z).double()), (
            f"{name}, n = {n}"
        )


def test_pattern_neuron_margins_and_complexity_growth():
    n = 10
    target, _ = concept_representation("pattern:11", n)
    z = all_strings(n)
    F = target(embed_binary(z, dtype=torch.float64))[:, 0]
    y = contains_pattern(z, "11").bool()
    assert (
        F[y].min() >= 1 - (2 * n) ** -2 - 1e-12
        and F[~y].max() <= (n - 1) / (2 * n) + 1e-12
    )
    ns = np.array([8, 16, 32, 64, 128])
    R = 2.0
    pat = np.array([representation_complexity("pattern:101", int(k), R) for k in ns])
    par = np.array([representation_complexity("parity", int(k), R) for k in ns])
    # polynomial: log C linear in log n (bounded slope); parity: log C linear in sqrt(n)
    slope_pat = np.polyfit(np.log10(ns), pat, 1)[0]
    assert (
        0 < slope_pat < 2 * 3 * R
    )  # about (2 sqrt(k) R / sqrt 3) / ln 10 ... well below
    local = np.diff(pat) / np.diff(np.log10(ns))
    assert local.max() < 1.5 * local.min() + 1  # straight line in log-log
    per_sqrt = np.diff(par) / np.diff(np.sqrt(ns))
    c = 2 * np.pi * R / np.sqrt(3) / np.log(10)
    assert np.all(
        np.abs(per_sqrt[1:] - c) < 0.1 * c
    )  # log10 C ~ (2 pi R / sqrt 3) sqrt(n) / ln 10


@pytest.mark.parametrize(
    "name, n, R",
    [
        ("parity", 256, 10.0),
        ("pattern:101", 128, 10.0),
        ("parity", 4, 0.3),
    ],
)
def test_complexity_matches_a_long_direct_sum(name, n, R):
    from rnnlib.concepts import C_STAR

    target, _ = concept_representation(name, n)
    logc = target.phis[0][0].log_abs_coef(
        6000
    )  # the scaled function's own coefficients
    i = np.arange(6000, dtype=float)
    terms = math.log(C_STAR) + 1.75 * np.log1p(i) + i * math.log(R) + logc
    top = terms.max()
    direct = (top + math.log(np.exp(terms - top).sum())) / math.log(10)
    assert abs(representation_complexity(name, n, R) - direct) < 1e-8


def test_complexity_of_parity_matches_closed_form_sum():
    from rnnlib.concepts import C_STAR

    n, R = 9, 0.5
    a = np.pi / (np.sqrt(3) / (2 * np.sqrt(n)))
    terms = [
        C_STAR
        * (i + 1) ** 1.75
        * R**i
        * 0.5
        * math.exp(i * math.log(a) - math.lgamma(i + 1))
        for i in range(2, 200, 2)
    ]
    assert abs(representation_complexity("parity", n, R) - np.log10(sum(terms))) < 1e-9


def test_language_registry_errors():
    with pytest.raises(ValueError, match="name: unknown language"):
        get_language("tomita8")
    with pytest.raises(ValueError, match="name"):
        get_language("pattern:12")
    with pytest.raises(ValueError, match="no concept-class representation"):
        concept_representation("tomita3", 5)
    with pytest.raises(ValueError, match="padding"):
        get_language("dl1")(torch.tensor([[1, PAD, 0]]))
    with pytest.raises(ValueError, match="no accepted string"):
        sample_language("tomita2", 10, 3)


def test_dl1_balanced_with_lengths():
    z = sample_dl1_balanced(3000, 12, min_length=2, generator=0)
    lengths = string_lengths(z)
    assert int(lengths.min()) == 2 and int(lengths.max()) == 12
    ones = (z == 1).sum(dim=1)
    for s in range(3):
        assert abs((ones == s).float().mean().item() - 1 / 3) < 0.04
    assert torch.equal(z, sample_dl1_balanced(3000, 12, min_length=2, generator=0))
    # the 1s are spread over the real symbols only, never on the padding
    assert bool(((z == 1).sum(dim=1) == ones).all()) and bool(
        ((z == PAD) | (z >= 0)).all()
    )
    with pytest.raises(ValueError, match="min_length"):
        sample_dl1_balanced(4, 5, min_length=1)  # below max_ones = 2


def test_exercise_7_1_checker():
    from rnnlib import homework
    from rnnlib.languages import dfa_from_table

    homework.check_exercise_7_1(lambda: dfa_from_table([[0, 1], [0, 2], [2, 2]], [0]))
    with pytest.raises(
        homework.ExerciseCheckFailed,
        match="(?s)strings of length 1 .*1 of 2 entries differ",
    ):
        homework.check_exercise_7_1(
            lambda: dfa_from_table([[0, 1], [0, 2], [2, 2]], [0, 1])
        )
    with pytest.raises(
        homework.ExerciseCheckFailed,
        match="expected a torch.Tensor, got list",
    ):
        homework.check_exercise_7_1(lambda: [[0, 1]])
    with pytest.raises(NotImplementedError):
        homework.check_exercise_7_1(
            lambda: (_ for _ in ()).throw(NotImplementedError("Exercise 7.1"))
        )
