"""Tests of rnnlib.experiments.ch07: the learners on held-out splits and the limit-kernel learner's sample-complexity sweep."""

import math

import numpy as np
import torch

from rnnlib.experiments import ch07
from rnnlib.languages import encode_strings
from rnnlib.ntk import limit_tangent_kernel


def test_curve_shapes_and_baselines():
    c = ch07.limit_kernel_curve(
        "pattern:101",
        8,
        [20, 60],
        seeds=2,
        n_fresh=50,
        generator=0,
    )
    assert c.accuracy.shape == (2, 2)
    assert np.all((c.constant >= 0.5) & (c.constant <= 1))
    assert np.all((c.balanced >= 0) & (c.balanced <= 1))
    assert np.all(c.train_acc > 0.9)  # a small ridge nearly interpolates
    # the same seed gives the same curve
    c2 = ch07.limit_kernel_curve(
        "pattern:101",
        8,
        [20, 60],
        seeds=2,
        n_fresh=50,
        generator=0,
    )
    assert np.array_equal(c.accuracy, c2.accuracy)


def test_loo_ridge_matches_direct_solve():
    z, y = ch07.draw_strings("parity", 40, 6, generator=1)
    x = encode_strings(z, 0.5, dtype=torch.float64)
    K = limit_tangent_kernel(x)
    yy = 2 * y.double() - 1
    alpha, lam = ch07._krr_loo(K, yy, [1e-2])
    direct = torch.linalg.solve(K + lam * 40 * torch.eye(40, dtype=K.dtype), yy)
    assert float((alpha - direct).abs().max()) < 1e-6 * float(direct.abs().max())
    # leave-one-out by refitting, against the closed form, for one point
    keep = torch.arange(40) != 3
    a3 = torch.linalg.solve(
        K[keep][:, keep] + lam * 40 * torch.eye(39, dtype=K.dtype),
        yy[keep],
    )
    pred3 = float(K[3, keep] @ a3)
    evals, evecs = torch.linalg.eigh(K)
    shrink = evals / (evals + lam * 40)
    fit = evecs @ (shrink * (evecs.T @ yy))
    h33 = float((evecs[3] ** 2 * shrink).sum())
    loo3 = float(yy[3] - (yy[3] - fit[3]) / (1 - h33))
    # the closed form holds for ridge (lam * 40) fixed when one point is left out
    assert abs(loo3 - pred3) < 1e-6 * max(1.0, abs(pred3))


def test_first_beating():
    c = ch07.limit_kernel_curve(
        "pattern:101",
        8,
        [20, 60],
        seeds=1,
        n_fresh=20,
        generator=0,
    )
    c.accuracy[:] = [[0.5, 0.9]]
    c.constant[:] = [[0.5, 0.5]]
    assert c.first_beating(0.1) == 60
    assert c.first_beating(0.5) is None


def _dl1_split(seed=0, n=8, samples=300):
    from rnnlib.languages import (
        get_language,
        held_out_split,
        sample_dl1_balanced,
    )

    z = sample_dl1_balanced(samples, n, min_length=2, generator=seed)
    return held_out_split(
        z,
        get_language("dl1")(z),
        test_fraction=0.25,
        generator=seed,
    )


def test_distinct_test_and_constant():
    split = _dl1_split()
    z, y = ch07.distinct_test(split)
    assert len(z) == split.n_unique_test
    rows = {tuple(r) for r in split.z_test.tolist()}
    assert {tuple(r) for r in z.tolist()} == rows
    lang = __import__("rnnlib.languages", fromlist=["x"]).get_language("dl1")
    assert torch.equal(y.float(), lang(z).float())
    assert ch07.best_constant(torch.tensor([1, 1, 0, 1])) == 0.75
    assert ch07.best_constant(torch.tensor([0, 0, 0, 1])) == 0.75


def test_count_rule_and_coverage_by_hand():
    from rnnlib.languages import HeldOutSplit

    zt = torch.tensor([[0, 1], [1, 0], [0, 0], [0, 0]])
    yt = torch.tensor([1.0, 1.0, 0.0, 0.0])
    split = HeldOutSplit(zt, yt, torch.tensor([[1, 1]]), torch.tensor([0.0]), 3, 1)
    name, predict = ch07.count_rule(split)
    # "at least one 1" is right on all four training strings,
    # "at most one 1" wrong on both copies of 00
    assert name == "at least one 1"
    ztest = torch.tensor([[1, 1], [0, 1]])
    assert predict(ztest).tolist() == [1.0, 1.0]
    # the one-bit neighbours of 11 are 01 and 10: both in training
    assert ch07.neighbour_coverage(split) == 1.0
    # 11 is at distance 1 from 01 and 10, both positive
    nn = ch07.nearest_neighbour(split)
    assert nn(torch.tensor([[1, 1], [0, 0]])).tolist() == [
        1.0,
        0.0,
    ]
    assert ch07.unseen_mask(split, ztest).tolist() == [True, False]


def test_additive_logistic_learns_an_additive_rule():
    from rnnlib.languages import held_out_split

    g = torch.Generator().manual_seed(0)
    z = torch.randint(0, 2, (400, 6), generator=g)
    y = z[:, 2].float()  # the third bit: additive
    split = held_out_split(z, y, generator=0)
    predict = ch07.additive_logistic(split)
    zd, yd = ch07.distinct_test(split)
    assert torch.equal(predict(zd), yd.float())


def test_compare_learners_records_laziness():
    split = _dl1_split(samples=120, n=6)
    fresh = ch07.draw_strings("dl1", 100, 6, generator=5)
    fast = dict(eps_x=0.5, out_scale=1.0, lr=0.02, steps=20, batch_size=8)
    lazy = dict(
        eps_x=0.5,
        out_scale=0.5,
        lr_scale=0.3,
        steps=20,
        batch_size=8,
    )
    scores = ch07.compare_learners(
        split,
        fresh,
        learners=["fast SGD", "lazy SGD", "limit kernel", "1-NN"],
        width=32,
        fast=fast,
        lazy=lazy,
        generator=0,
    )
    by = {s.learner: s for s in scores}
    assert list(by) == [
        "fast SGD",
        "lazy SGD",
        "limit kernel",
        "1-NN",
    ]
    for name in ("fast SGD", "lazy SGD"):
        assert 0 <= by[name].flip_fraction <= 1
        assert by[name].coupling_relative >= 0
    assert by["limit kernel"].flip_fraction == 0.0
    assert np.isnan(by["1-NN"].flip_fraction)
    assert by["1-NN"].train_accuracy == 1.0
    # the lazy step is chapter 5's: lr_scale / (out_scale^2 mean K)
    lr = ch07.lazy_step(
        split,
        32,
        out_scale=0.5,
        lr_scale=0.3,
        generator=ch07.derive(0, "sgd"),
    )
    assert 0 < lr < 0.02
    mean = ch07.mean_scores([scores, scores])
    assert mean[0].accuracy == scores[0].accuracy


def test_pattern_count_target_counts_occurrences():
    from rnnlib.languages import (
        all_strings,
        embed_binary,
        get_language,
    )

    for pat in ("101", "0110", "1"):
        for n in (len(pat), 9):
            target, thr = ch07.pattern_count_target(n, pat)
            z = all_strings(n)
            F = target(embed_binary(z, dtype=torch.float64))[:, 0]
            k = len(pat)
            count = torch.tensor(
                [
                    sum(
                        "".join(map(str, r))[i : i + k] == pat for i in range(n - k + 1)
                    )
                    for r in z.tolist()
                ],
                dtype=torch.float64,
            )
            assert float((F - count).abs().max()) < 1e-9
            lang = get_language(f"pattern:{pat}")
            assert torch.equal((F > thr).double(), lang(z).double())


def test_pattern_count_complexity_polynomial_in_R():
    # degree k: C_s(phi, R) grows like R^k (times (k+1)^1.75 |c_k|)
    k = 3
    lo, hi = (
        ch07.pattern_count_complexity(k, 1e3),
        ch07.pattern_count_complexity(k, 1e4),
    )
    assert abs((hi - lo) - k) < 0.01
    phi, c = ch07.pattern_count_neuron(k)
    t = torch.arange(k + 1, dtype=torch.float64) * c
    assert torch.allclose(
        phi(t),
        torch.tensor([0.0] * k + [1.0], dtype=torch.float64),
    )


def test_run_learners_table_and_length_generalization():
    runs = ch07.run_learners(
        "tomita7",
        5,
        widths=[8, 16],
        hidden=4,
        additive=True,
        n_samples=120,
        wide_kwargs=dict(steps=5),
        practical_kwargs=dict(steps=5),
        generator=0,
    )
    assert set(runs.learners()) == {
        "wide RNN, m = 8",
        "wide RNN, m = 16",
        "practical RNN",
        "additive",
    }
    again = ch07.run_learners(
        "tomita7",
        5,
        widths=[8],
        hidden=None,
        split=runs.split,
        wide_kwargs=dict(steps=5),
    )
    assert again.split is runs.split and again.practical is None
    gen = ch07.length_generalization(runs, 10, n_samples=50, generator=0)
    assert set(gen) == {
        "wide RNN, m = 8",
        "wide RNN, m = 16",
        "practical RNN",
    }
    assert all(0.0 <= v <= 1.0 for v in gen.values())
    table = ch07.accuracy_table(
        ["tomita1", "tomita4"],
        [4],
        widths=[8],
        hidden=None,
        n_samples=60,
        wide_kwargs=dict(steps=3),
        generator=0,
    )
    assert set(table) == {("tomita1", 4), ("tomita4", 4)}
    assert table[("tomita4", 4)].wide[8].test_accuracy >= 0.0


def test_subset_rule_accuracy_matches_brute_force():
    # every string of length n with 0, 1 or 2 ones, each count weighted
    # 1/3 and uniform within its count: the rule "a 1 in S and none
    # outside S" for S = the first k positions (any S of size k, by
    # symmetry)
    from itertools import combinations

    for n in (2, 3, 5, 6):
        for k in range(n + 1):
            acc = 0.0
            for s in (0, 1, 2):
                strings = list(combinations(range(n), s))
                ok = 0
                for ones in strings:
                    inside = sum(i < k for i in ones)
                    pred = inside >= 1 and inside == len(ones)
                    ok += pred == (len(ones) == 1)
                acc += ok / len(strings) / 3
            assert abs(ch07.subset_rule_accuracy(n, k) - acc) < 1e-12
    # about 3/4 at k = n/2, above the best constant 2/3
    assert abs(ch07.subset_rule_accuracy(16, 8) - 0.7556) < 1e-4
    assert ch07.subset_rule_accuracy(16, 0) == 2 / 3


def test_subset_rule_fits_and_is_near_its_closed_form():
    from rnnlib.languages import (
        get_language,
        held_out_split,
        sample_dl1_balanced,
    )

    n = 12
    z = sample_dl1_balanced(4000, n, generator=0)
    split = held_out_split(z, get_language("dl1")(z), test_fraction=0.25, generator=0)
    subset, predict = ch07.subset_rule(split)
    assert 0 < len(subset) < n and subset == sorted(subset)
    # the rule computed by hand
    ones = (z == 1).long()
    inside = ones[:, subset].sum(1)
    by_hand = (inside >= 1) & (inside == ones.sum(1))
    assert torch.equal(predict(z), by_hand.float())
    # fresh fixed-length draws: near the closed form of its |S| (and
    # that closed form near the best over k)
    zf = sample_dl1_balanced(20000, n, generator=1)
    acc = float((predict(zf) == get_language("dl1")(zf).float()).double().mean())
    closed = ch07.subset_rule_accuracy(n, len(subset))
    assert abs(acc - closed) < 0.015
    best = max(ch07.subset_rule_accuracy(n, k) for k in range(n + 1))
    assert closed > best - 0.02
    assert acc > 2 / 3 + 0.05  # beats the constant


def test_memorizer_and_memorized_share():
    from rnnlib.languages import HeldOutSplit

    z = torch.tensor([[0, 1], [1, 0], [1, 0], [1, 1], [0, 0]])
    y = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0])
    # train on the first four rows
    split = HeldOutSplit(z[:4], y[:4], z[4:], y[4:], 3, 1)
    mem = ch07.memorizer(split)
    # (0,1) -> 1; (1,0): a tie of its copies -> 1; (1,1) -> 0; unseen
    # (0,0) -> the training majority (0.5 -> 1)
    assert mem(z).tolist() == [1.0, 1.0, 1.0, 0.0, 1.0]
    zero = ch07.memorizer(split, lambda q: torch.zeros(len(q)))
    assert zero(z).tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert ch07.memorized_share(split, z) == 4 / 5
    assert ch07.memorized_share(split, z[4:]) == 0.0


def test_compare_learners_runs_the_baselines():
    split = _dl1_split(seed=0)
    fresh = ch07.draw_strings("dl1", 200, 8, generator=5)
    names = [
        "S rule",
        "memorize + constant",
        "memorize + count rule",
    ]
    scores = ch07.compare_learners(split, fresh, learners=names)
    assert [s.learner for s in scores] == names
    by = {s.learner: s for s in scores}
    # memorizers are perfect on training strings
    assert by["memorize + constant"].train_accuracy == 1.0
    assert "|S| =" in by["S rule"].what
    for s in scores:
        assert 0.0 <= s.fresh_unseen <= 1.0


def test_learnability_atlas_against_a_direct_computation():
    """One cell of the atlas recomputed by hand; complementary and symmetric languages agree; PARITY is hard."""
    from rnnlib._rng import derive
    from rnnlib.languages import all_strings, get_language
    from rnnlib.ntk import sample_constant

    atlas = ch07.learnability_atlas(
        ["parity", "dl1", "tomita5", "tomita1", "tomita2"],
        [4, 6],
        [0.5],
        n_shuffles=4,
        generator=2,
    )
    assert atlas.constant.shape == (5, 2, 1)
    z = all_strings(6)
    K = limit_tangent_kernel(encode_strings(z, 0.5, dtype=torch.float64))
    f = 2 * get_language("dl1").membership(z).double() - 1
    assert np.isclose(atlas.constant[1, 1, 0], sample_constant(K, f))
    perms = [torch.randperm(64, generator=derive(2, "shuffle", 6, k)) for k in range(4)]
    shuffled = np.mean([sample_constant(K, f[p]) for p in perms])
    assert np.isclose(atlas.shuffled[1, 1, 0], shuffled)
    assert np.isclose(atlas.positives[1, 1], 6 / 64)
    # at even n, Tomita 5 (even 0s and even 1s) is the complement of PARITY:
    # f -> -f leaves f^T K^-1 f unchanged
    np.testing.assert_allclose(atlas.constant[0], atlas.constant[2], rtol=1e-10)
    # 1* and (10)* each accept one string of length n: the same constant
    np.testing.assert_allclose(atlas.constant[3], atlas.constant[4], rtol=1e-8)
    # PARITY needs more than random labels with its balance; ratio and slope are consistent
    assert np.all(atlas.ratio[0] > 1.5)
    b = atlas.bits_per_symbol()
    want_b = np.polyfit([4, 6], np.log2(atlas.constant[:, :, 0]).T, 1)[0]
    np.testing.assert_allclose(b[:, 0], want_b, rtol=1e-10)


def test_walsh_spectrum_agrees_with_the_atlas_and_the_group_structure():
    """The Walsh-basis constant equals the atlas's linear solve; the kernel is a function of z xor z'."""
    from rnnlib.languages import all_strings

    langs = ["parity", "dl1", "pattern:101", "tomita4"]
    w = ch07.walsh_spectrum(langs, [4, 6], [0.1, 0.5])
    a = ch07.learnability_atlas(langs, [4, 6], [0.1, 0.5], n_shuffles=1)
    assert np.allclose(w.constant, a.constant, rtol=1e-8, atol=0)
    assert w.off_diagonal.max() < 1e-10
    for j, n in enumerate(w.lengths):
        assert np.allclose(w.degree_mass[j].sum(axis=1), 1.0)
        counts = [math.comb(int(n), k) for k in range(int(n) + 1)]
        assert np.allclose(w.degree_mean[j] * counts, w.degree_mass[j])
    # PARITY's character carries the smallest eigenvalue
    assert np.allclose(w.parity_share, w.min_share, rtol=1e-12)
    # brute force, independent of the transform: K(z, z') = k(z xor z')
    z = all_strings(5)
    K = limit_tangent_kernel(encode_strings(z, 0.3, dtype=torch.float64))
    key = lambda u, v: tuple((z[u] ^ z[v]).tolist())  # noqa: E731
    seen: dict = {}
    for u in range(len(z)):
        for v in range(len(z)):
            seen.setdefault(key(u, v), []).append(float(K[u, v]))
    assert len(seen) == 2**5
    assert max(np.ptp(vals) for vals in seen.values()) < 1e-12


def test_language_task_splits_distinct_strings():
    t = ch07.language_task("pattern:101", 5, 10, 8, eps_x=0.5, generator=3)
    assert t.x.shape == (10, 7, 4) and t.y_eval.shape == (8, 1)
    assert set(t.y[:, 0].tolist()) <= {-1.0, 1.0}
    both = torch.cat([t.x, t.x_eval]).flatten(1)
    assert len(torch.unique(both, dim=0)) == 18  # no string twice
    again = ch07.language_task("pattern:101", 5, 10, 8, eps_x=0.5, generator=3)
    assert torch.equal(t.x, again.x)


def test_the_limit_record_rows_are_against_limit_itself(tmp_path):
    from rnnlib import records
    from rnnlib.experiments import ch05

    path = ch07.make_limit_record(tmp_path / "ch07.json", smoke=True)
    rec = records.read_record(path)
    cfg = ch07.SMOKE
    res = rec["results"]
    task = ch07.language_task(
        cfg["language"],
        cfg["n"],
        cfg["n_train"],
        cfg["n_eval"],
        eps_x=cfg["eps_x"],
        generator=cfg["seeds"][1],
    )
    r = ch05.against_limit(
        task,
        cfg["widths"],
        cfg["seeds"][1],
        out_scale=cfg["out_scale"],
        steps=cfg["steps"],
        lr_scale=cfg["lr_scale"],
    )
    assert res["distance"][1] == [float(v) for v in r.distance]
    ye = task.y_eval[:, 0].numpy() > 0
    acc = ((r.predictions > 0) == ye).mean(axis=1)
    assert np.allclose(res["accuracy"][1], acc)
    assert ch07.check_limit_record(rec) == 0.0


def test_the_committed_limit_record_is_full_and_fresh():
    from rnnlib import records

    rec = records.read_record(records.record_path(7))
    assert rec["scale"] == "full" and rec["config"] == ch07.RECORD
    assert ch07.check_limit_record(rec) < records.FINGERPRINT_RTOL
    shape = (len(ch07.RECORD["seeds"]), len(ch07.RECORD["widths"]))
    assert np.shape(rec["results"]["distance"]) == shape
