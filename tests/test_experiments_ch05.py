"""Tests of rnnlib.experiments.ch05: the laziness sweep, the kernel-convergence measurement and the limit-kernel predictor."""

import numpy as np
import pytest
import torch

from rnnlib._rng import derive
from rnnlib.elman import ElmanRNN, sample_normalized_sequence
from rnnlib.experiments import ch05
from rnnlib.experiments.ch05 import regression_task
from rnnlib.ntk import (
    cross_time_fraction,
    kernel_reference,
    limit_tangent_kernel,
    tangent_kernel,
    tangent_kernel_diag,
)
from rnnlib.train import objective, predict, train_pair


def test_regression_task_is_standardized_and_split():
    x, y, xe, ye = regression_task(5, 4, 0.5, 10, 6, generator=3)
    assert x.shape == (10, 5, 4) and xe.shape == (6, 5, 4)
    assert y.shape == (10, 1) and ye.shape == (6, 1)
    both = torch.cat([y, ye])
    assert abs(float(both.mean())) < 1e-6
    assert abs(float(both.std()) - 1) < 1e-5
    x2, y2, _, _ = regression_task(5, 4, 0.5, 10, 6, generator=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)


def test_rnn_sweep_gives_the_grids_rnn_measurements():
    """The RNN's run alone reproduces lazy_grid's coupling gap, flips and delta_t exactly (same task, network, lr, order, comparator)."""
    kw = dict(
        L=4,
        d=4,
        eps_x=0.5,
        n_train=8,
        n_eval=4,
        steps=6,
        log_every=3,
    )
    grid = ch05.lazy_grid([8, 16], [0.5], [2, 3], **kw)
    light = ch05.rnn_sweep([8, 16], [2, 3], out_scale=0.5, **kw)
    for name in light._fields:
        got = getattr(light, name)
        assert got.shape == (2, 2)
        assert np.all(np.isfinite(got)) and np.all(got > 0)
        np.testing.assert_array_equal(got, getattr(grid, name)[:, 0], err_msg=name)


def test_lazy_grid_cell_is_train_pair_on_its_task_and_network():
    """One cell of the sweep, rebuilt by hand: the same task, network, learning rate and SGD."""
    kw = dict(L=4, d=4, eps_x=0.5, n_train=8, n_eval=4, steps=6)
    grid = ch05.lazy_grid([8, 16], [0.5], [2], log_every=3, **kw)
    assert grid.rel_move.shape == (1, 1, 2)
    assert not grid.diverged.any()
    x, y, xe, ye = regression_task(4, 4, 0.5, 8, 4, generator=2)
    model = ElmanRNN(4, 16, generator=derive(2, "weights", 16))
    lr = 0.3 / (0.25 * float(tangent_kernel_diag(model, x).mean()))
    assert np.isclose(grid.lr[0, 0, 1], lr)
    ridge = 0.25 * float(tangent_kernel_diag(model, x).mean()) / (0.3 * 6)
    _, fe, _, star = kernel_reference(
        model,
        x,
        y,
        xe,
        out_scale=0.5,
        ridge=ridge,
        return_weights=True,
    )
    pair = train_pair(
        model,
        x,
        y,
        out_scale=0.5,
        lr=lr,
        steps=6,
        generator=derive(2, "order", 16),
        x_eval=xe,
        y_eval=ye,
        log_every=3,
        comparator=star,
    )
    h = pair.rnn.history
    assert grid.eval_rnn[0, 0, 1] == h.eval_loss[-1]
    assert grid.train_pseudo[0, 0, 1] == (pair.pseudo.history.train_loss[-1])
    assert grid.rel_move[0, 0, 1] == h.dist_W_fro[-1] / h.W0_fro
    assert grid.eval_kernel[0, 0, 1] == float(objective(fe, ye).mean())
    assert grid.convexity_max[0, 0, 1] == float(pair.convexity_max.max())
    assert grid.pairs[0][0][1].rnn.history.steps_logged.tolist() == [
        0,
        3,
        6,
    ]


def test_kernel_convergence_errors_are_the_networks_and_fall():
    x = sample_normalized_sequence(6, 4, 5, 0.5, generator=3)
    conv = ch05.kernel_convergence(x, [64, 256, 1024], [8, 4, 2], generator=7)
    # one draw, rebuilt by hand: the same network and the same error
    model = ElmanRNN(5, 256, generator=derive(7, "kernel", 256, 1))
    K = limit_tangent_kernel(x)
    Km = tangent_kernel(model, x).double() / 256
    ref = float((Km - K).norm() / K.norm())
    assert np.isclose(conv.errors[1][1], ref)
    assert np.isclose(
        conv.cross_time[1],
        np.mean(
            [
                float(
                    cross_time_fraction(
                        ElmanRNN(
                            5,
                            256,
                            generator=derive(7, "kernel", 256, s),
                        ),
                        x,
                    ).mean()
                )
                for s in range(4)
            ]
        ),
    )
    assert [len(e) for e in conv.errors] == [8, 4, 2]
    assert np.isclose(
        conv.slope,
        np.polyfit(np.log([64, 256, 1024]), np.log(conv.mean_error), 1)[0],
    )
    assert conv.slope < -0.2  # the error falls with m (about -1/2)


def test_limit_kernel_reference_is_kernel_ridge_with_the_normalized_limit():
    x, y, xe, ye = regression_task(4, 5, 0.5, 30, 12, generator=2)
    f0 = torch.linspace(-0.3, 0.3, 30)[:, None]
    f0e = torch.linspace(0.1, 0.2, 12)[:, None]
    z, ze = ch05.limit_kernel_reference(x, y, xe, ridge=0.01, offset=(f0, f0e))
    K = limit_tangent_kernel(x).numpy()
    kbar = np.diag(K).mean()
    Ke = limit_tangent_kernel(xe, x).numpy() / kbar
    alpha = np.linalg.solve(
        K / kbar + 0.01 * 30 * np.eye(30),
        y.double().numpy() - f0.double().numpy(),
    )
    assert np.allclose(z.numpy(), f0.numpy() + K / kbar @ alpha)
    assert np.allclose(ze.numpy(), f0e.numpy() + Ke @ alpha)


def test_finite_kernel_reference_approaches_the_limit_predictor():
    x, y, xe, _ = regression_task(4, 5, 0.5, 24, 12, generator=4)
    gaps = []
    for m in (64, 2048):
        model = ElmanRNN(5, m, generator=derive(4, "w", m))
        kbar = float(tangent_kernel_diag(model, x).mean())
        fe = kernel_reference(
            model,
            x,
            y,
            xe,
            out_scale=0.5,
            ridge=0.25 * kbar * 0.02,
        ).f_eval
        off = (predict(model, x, 0.5), predict(model, xe, 0.5))
        _, le = ch05.limit_kernel_reference(x, y, xe, ridge=0.02, offset=off)
        gaps.append(float((fe.double() - le).square().mean().sqrt()))
    assert gaps[1] < 0.6 * gaps[0], gaps


def test_limit_reference_sweep_matches_its_parts():
    r = ch05.limit_reference_sweep(
        [32, 64],
        [0],
        L=4,
        d=5,
        eps_x=0.5,
        n_train=16,
        n_eval=8,
        out_scale=0.5,
        steps=50,
    )
    assert r.eval_offset.shape == (1, 2) == r.rms_gap.shape
    x, y, xe, ye = regression_task(4, 5, 0.5, 16, 8, generator=0)
    _, ze = ch05.limit_kernel_reference(x, y, xe, ridge=1 / (0.3 * 50))
    assert np.isclose(
        r.eval_centred[0],
        float(((ze - ye.double()) ** 2 / 2).mean()),
    )
    assert np.all(r.rms_gap > 0)


def test_limit_convergence_doubled_networks_approach_the_limit_learner():
    """Doubled networks start at 0 and end closer to the limit learner when wider; i.i.d. ones start far."""
    common = dict(
        L=5,
        d=4,
        eps_x=0.5,
        n_train=24,
        n_eval=16,
        out_scale=0.5,
        steps=40,
    )
    dbl = ch05.limit_convergence([16, 512], [0, 1], **common)
    iid = ch05.limit_convergence([16, 512], [0, 1], doubled=False, **common)
    assert dbl.distance.shape == (2, 2) and dbl.doubled
    assert np.all(dbl.initial < 1e-5)  # float32 rounding of 0
    assert np.all(iid.initial > 0.1)
    assert dbl.distance[:, 1].mean() < 0.6 * dbl.distance[:, 0].mean()
    # the wide i.i.d. network stays about its initial output away
    assert iid.distance[:, 1].mean() > 2 * dbl.distance[:, 1].mean()
    assert np.all(np.isfinite(dbl.eval_loss))
    np.testing.assert_allclose(dbl.limit_eval_loss, iid.limit_eval_loss)


def test_limit_convergence_refuses_odd_widths_when_doubled():
    with pytest.raises(ValueError, match="widths must be even"):
        ch05.limit_convergence(
            [15],
            [0],
            L=5,
            d=4,
            eps_x=0.5,
            n_train=4,
            n_eval=4,
            out_scale=0.5,
            steps=2,
        )


def test_the_record_holds_rnn_sweep_and_limit_convergence(
    tmp_path,
):
    """The smoke record's rows are the sweeps' own numbers, seed by seed, and it reads back as them."""
    from rnnlib import records

    path = ch05.make_lazy_record(tmp_path / "ch05.json", smoke=True)
    rec = records.read_record(path)
    cfg = ch05.SMOKE
    assert rec["scale"] == "smoke" and rec["config"] == cfg
    kw = {
        k: cfg[k]
        for k in (
            "out_scale",
            "L",
            "d",
            "eps_x",
            "n_train",
            "n_eval",
            "steps",
            "lr_scale",
        )
    }
    # one call over all seeds gives the record's per-seed rows
    direct = ch05.rnn_sweep(
        cfg["widths"],
        cfg["seeds"],
        log_every=cfg["log_every"],
        **kw,
    )
    got = ch05.recorded_sweep(rec)
    for name in ch05.RnnSweep._fields:
        assert np.array_equal(getattr(got, name), getattr(direct, name))
    for init in ("doubled", "iid"):
        live = ch05.limit_convergence(
            cfg["limit_widths"],
            cfg["limit_seeds"],
            doubled=init == "doubled",
            **kw,
        )
        back = ch05.recorded_limit(rec, init)
        assert back.doubled == live.doubled
        for name in ("distance", "initial", "eval_loss"):
            assert np.array_equal(getattr(back, name), getattr(live, name))
        assert np.array_equal(back.limit_eval_loss, live.limit_eval_loss)
    # the fingerprint is re-run and agrees; an edited config is stale
    assert ch05.check_lazy_record(rec) == 0.0
    edited = {**rec, "config": {**cfg, "steps": cfg["steps"] + 1}}
    with pytest.raises(records.StaleRecordError):
        ch05.check_lazy_record(edited)


def test_the_committed_record_is_full_and_fresh():
    from rnnlib import records

    rec = records.read_record(records.record_path(5))
    assert rec["scale"] == "full" and rec["config"] == ch05.RECORD
    assert ch05.check_lazy_record(rec) < records.FINGERPRINT_RTOL
    sweep = ch05.recorded_sweep(rec)
    shape = (len(ch05.RECORD["seeds"]), len(ch05.RECORD["widths"]))
    assert sweep.coupling_relative.shape == shape
    assert np.isfinite(np.asarray(sweep)).all()


def test_against_limit_is_limit_convergence_on_one_task():
    kw = dict(out_scale=0.5, steps=15, lr_scale=0.3)
    task = regression_task(4, 3, 0.5, 10, 8, generator=2)
    one = ch05.against_limit(task, [8, 16], 2, **kw)
    many = ch05.limit_convergence(
        [8, 16],
        [2],
        L=4,
        d=3,
        eps_x=0.5,
        n_train=10,
        n_eval=8,
        **kw,
    )
    assert np.array_equal(one.distance, many.distance[0])
    assert np.array_equal(one.eval_loss, many.eval_loss[0])
    assert one.limit_eval_loss == many.limit_eval_loss[0]
    # the distance is that of the returned predictions
    f, g = one.predictions, one.limit_predictions
    rms = np.sqrt(((f - g) ** 2).mean(axis=1)) / np.sqrt((g**2).mean())
    assert np.allclose(rms, one.distance, rtol=1e-6)
