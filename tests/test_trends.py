"""rnnlib.trends: per-seed slopes and the t-interval of their mean, against numpy and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rnnlib import trends
from rnnlib.experiments import ch10


def test_seed_slopes_match_polyfit_and_linregress():
    rng = np.random.default_rng(0)
    x = np.log([64.0, 128.0, 256.0, 512.0, 1024.0])
    y = rng.normal(size=(6, x.size)) + np.outer(rng.normal(size=6), x)
    got = trends.seed_slopes(x, y)
    want = [np.polyfit(x, row, 1)[0] for row in y]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(
        got,
        [stats.linregress(x, row).slope for row in y],
        rtol=1e-12,
    )
    # a 1-d series is one seed
    np.testing.assert_allclose(trends.seed_slopes(x, y[0]), want[:1], rtol=1e-12)


def test_seed_slopes_nan_row_gives_nan_slope():
    y = np.array([[1.0, 2.0, 3.0], [1.0, np.nan, 3.0]])
    s = trends.seed_slopes([0.0, 1.0, 2.0], y)
    assert s[0] == pytest.approx(1.0) and np.isnan(s[1])


def test_mean_interval_is_the_t_interval():
    v = [1.0, 2.0, 3.0, 4.0, 6.0]
    mean, lo, hi = trends.mean_interval(v)
    sem = stats.sem(v)
    want = stats.t.interval(0.95, len(v) - 1, loc=np.mean(v), scale=sem)
    assert (mean, lo, hi) == pytest.approx((np.mean(v), *want))
    mean, lo, hi = trends.mean_interval(v, 0.5)
    want = stats.t.interval(0.5, len(v) - 1, loc=np.mean(v), scale=sem)
    assert (lo, hi) == pytest.approx(want)


def test_loglog_trend_recovers_a_power_law():
    rng = np.random.default_rng(1)
    m = np.array([256.0, 512.0, 1024.0, 2048.0])
    rates = -0.5 + 0.05 * rng.normal(size=7)
    y = 3.0 * m[None, :] ** rates[:, None]
    t = trends.loglog_trend(m, y)
    np.testing.assert_allclose(t.slopes, rates, rtol=1e-10)
    mean, lo, hi = trends.mean_interval(rates)
    assert (t.mean, t.low, t.high) == pytest.approx((mean, lo, hi))
    assert t.low < -0.5 < t.high
    assert t.level == 0.95
    assert str(t) == (
        f"slope {mean:.2f} [{lo:.2f}, {hi:.2f}] (95 % t-interval, 7 seeds)"
    )
    assert t.text("networks").endswith("7 networks)")
    # linregress on each seed's logs gives the same slopes
    np.testing.assert_allclose(
        t.slopes,
        [stats.linregress(np.log(m), np.log(r)).slope for r in y],
        rtol=1e-10,
    )


def test_chapter_10_uses_the_shared_helpers():
    assert ch10.seed_slopes is trends.seed_slopes
    assert ch10.mean_interval is trends.mean_interval


def test_bootstrap_loglog_trend_brackets_the_rate_of_noisy_draws():
    """Draws |N(0, 1)| / sqrt(m): the slope of the means is -1/2 up to noise, inside the interval."""
    rng = np.random.default_rng(3)
    m = [64.0, 256.0, 1024.0, 4096.0]
    draws = [np.abs(rng.normal(size=60)) / np.sqrt(x) for x in m]
    t = trends.bootstrap_loglog_trend(m, draws, generator=5)
    # the point estimate is the least-squares slope of the logged means
    want = np.polyfit(np.log(m), np.log([d.mean() for d in draws]), 1)[0]
    assert t.slope == pytest.approx(want, rel=1e-12)
    assert t.low < -0.5 < t.high
    assert t.low < t.slope < t.high
    assert 0.05 < t.high - t.low < 0.5
    assert t.draws == (60, 60, 60, 60)
    assert str(t).endswith("(95 % bootstrap, 60 draws each)")
    # seeded: the same interval again; more draws, a narrower one
    assert trends.bootstrap_loglog_trend(m, draws, generator=5) == t
    more = [np.abs(rng.normal(size=960)) / np.sqrt(x) for x in m]
    wide = trends.bootstrap_loglog_trend(m, more, generator=5)
    assert wide.high - wide.low < (t.high - t.low) / 2
    # a flat series: the interval holds 0
    flat = [np.abs(rng.normal(size=60)) for _ in m]
    f = trends.bootstrap_loglog_trend(m, flat, generator=5)
    assert f.low < 0 < f.high
