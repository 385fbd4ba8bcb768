"""One figure style for the whole book, and the figures of each chapter.

Every function takes numbers (the result of an rnnlib measurement) and returns
a ``matplotlib.figure.Figure``; none of them computes anything of its own, so
the figures in the book and in the explorers (:mod:`rnnlib.widgets`) are the
same pictures of the same measurements.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ._validation import check_int, check_real

__all__ = [
    "STYLE",
    "use_book_style",
    "new_figure",
    "loglog_slope",
    "plot_norm_profile",
    "plot_sequence_norms",
    "plot_flip_fraction",
]

#: rcParams of the book: white background (readable in dark mode), readable fonts.
STYLE: dict[str, object] = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 110,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "axes.titlesize": 11,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}


def use_book_style() -> None:
    """Apply :data:`STYLE` to matplotlib's global rcParams."""
    matplotlib.rcParams.update(STYLE)


def new_figure(ncols: int = 1, *, width: float | None = None, height: float = 3.6) -> tuple[Figure, np.ndarray]:
    """A figure with ``ncols`` side-by-side axes in the book's style; returns ``(fig, axes)``."""
    if not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    use_book_style()
    width = 4.2 * ncols if width is None else width
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False, layout="constrained")
    return fig, axes[0]


def _values(values: object, name: str, *, ndim: int | None = None, allow_inf: bool = False) -> np.ndarray:
    """Numbers to draw, as a float array; refuses non-numbers, empty arrays and NaN.

    A NaN (or an inf, unless ``allow_inf``) is silently left out of a matplotlib line,
    so a figure would hide a failed measurement: refuse it instead.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numbers, got {type(values).__name__}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if (np.isnan(arr) if allow_inf else ~np.isfinite(arr)).any():
        kind = "NaN" if allow_inf else "NaN or infinite"
        raise ValueError(f"{name} contains {kind} entries: refusing to draw a figure with missing values")
    return arr


def _same_length(values: np.ndarray, n: int, name: str, other: str) -> None:
    if values.shape[0] != n:
        raise ValueError(f"{name} must have one entry per {other} ({n}), got shape {values.shape}")


def _table(table: object, name: str) -> dict:
    """A non-empty mapping label -> values (one line per label)."""
    if not isinstance(table, dict):
        raise TypeError(f"{name} must be a dict label -> values, got {type(table).__name__}")
    if not table:
        raise ValueError(f"{name} must contain at least one entry")
    return table


def _record(obj: object, name: str, fields: tuple[str, ...], kind: str) -> None:
    missing = [f for f in fields if not hasattr(obj, f)]
    if missing:
        raise TypeError(f"{name} must be {kind} (fields {', '.join(fields)}), got {type(obj).__name__}")


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (the exponent of a power law y ~ x^slope)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"x and y must be 1-d of equal length >= 2, got shapes {x.shape} and {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0) or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be positive and finite for a log-log fit")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def plot_norm_profile(profile, *, step_for_spread: int | None = None) -> Figure:
    """Chapter 1: mean |h^(l)| along the sequence per width, and the spread against width.

    ``profile`` is an :class:`rnnlib.initialization.NormProfile`. The right
    panel shows the standard deviation over networks at step ``step_for_spread``
    (default: the last step before the end token) against m, on log-log axes.
    """
    _record(profile, "profile", ("widths", "mean", "std", "predicted"), "an rnnlib.initialization.NormProfile")
    widths, predicted = profile.widths, profile.predicted
    mean = _values(profile.mean, "profile.mean", ndim=2)
    std = _values(profile.std, "profile.std", ndim=2)
    L = mean.shape[1]
    step = L - 2 if step_for_spread is None else step_for_spread
    fig, (ax0, ax1) = new_figure(2)
    steps = np.arange(1, L + 1)
    for i, m in enumerate(widths):
        ax0.plot(steps, mean[i], marker="o", ms=3, label=f"m = {m}")
        ax0.fill_between(steps, mean[i] - std[i], mean[i] + std[i], alpha=0.12)
    ax0.plot(steps, predicted, "k--", lw=1.2, label=r"$\sqrt{\sum_{j\leq l}\|x^{(j)}\|^2}$")
    ax0.set_xlabel("step $l$")
    ax0.set_ylabel(r"$\|h^{(l)}\|$ (mean $\pm$ sd over networks)")
    ax0.legend(fontsize=8)
    spread = std[:, step]
    ax1.loglog(widths, spread, "o-", label=f"step $l = {step + 1}$")
    slope = loglog_slope(widths, spread)
    ax1.loglog(widths, spread[0] * (widths / widths[0]) ** -0.5, "k:", lw=1.2, label=r"$\propto m^{-1/2}$")
    ax1.set_xticks(widths, [str(m) for m in widths], minor=False)
    ax1.set_xticks([], minor=True)
    ax1.set_xlabel("width $m$")
    ax1.set_ylabel(r"sd of $\|h^{(l)}\|$ over networks")
    ax1.set_title(f"fitted slope {slope:.2f}")
    ax1.legend()
    return fig


def plot_sequence_norms(norms: np.ndarray, *, title: str = "") -> Figure:
    """Chapter 1 explorer: |h^(l)| against l, one thin line per sequence, with the mean in black.

    ``norms`` has shape (batch, L), e.g. from :func:`rnnlib.initialization.sequence_norms`.
    """
    norms = _values(norms, "norms")
    if norms.ndim != 2:
        raise ValueError(f"norms must have shape (batch, L), got {norms.shape}")
    fig, (ax,) = new_figure(1, width=6.0)
    steps = np.arange(1, norms.shape[1] + 1)
    ax.plot(steps, norms.T, color="tab:blue", alpha=0.25, lw=0.8)
    ax.plot(steps, norms.mean(axis=0), "k-", lw=2, label="mean over sequences")
    ax.axhline(1.0, color="gray", ls=":", lw=1)
    ax.set_xlabel("step $l$")
    ax.set_ylabel(r"$\|h^{(l)}\|$")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend()
    return fig


def plot_flip_fraction(eps_values: Sequence[float], flips: Sequence[float], *, label: str | None = None) -> Figure:
    """Chapter 1: fraction of flipped activation patterns against eps_x (log-log)."""
    eps_values = _values(eps_values, "eps_values", ndim=1)
    flips = _values(flips, "flips", ndim=1)
    _same_length(flips, eps_values.size, "flips", "eps value")
    fig, (ax,) = new_figure(1, width=5.0)
    ax.loglog(eps_values, flips, "o-", label=label or "measured")
    ax.loglog(eps_values, flips[0] * eps_values / eps_values[0], "k:", lw=1.2, label=r"$\propto \varepsilon_x$")
    ax.set_xlabel(r"$\varepsilon_x$")
    ax.set_ylabel("fraction of flipped $D^{(l)}$ entries")
    ax.legend()
    return fig


# --- Part II: stability and truncation (chapters 8-10) ---


def plot_state_distance(distances: dict[str, np.ndarray], lams: dict[str, float] | None = None) -> Figure:
    """Chapter 8: ``||s_t - s'_t||`` of two trajectories under the same inputs, per model (log scale).

    ``distances`` maps a label to an array (T,); ``lams`` optionally maps the same
    labels to a contraction constant, drawn as the dashed envelope ``d_0 lambda^t``.
    """
    _table(distances, "distances")
    fig, (ax,) = new_figure(1, width=5.6)
    for i, (label, dist) in enumerate(distances.items()):
        dist = _values(dist, f"distances[{label!r}]", ndim=1)
        t = np.arange(1, dist.size + 1)
        line = ax.semilogy(t, np.maximum(dist, 1e-300), label=label)[0]
        if lams and label in lams and lams[label] < 1:
            ax.semilogy(t, dist[0] * lams[label] ** (t - 1), "--", color=line.get_color(), lw=1.0)
    ax.set_xlabel("step $t$")
    ax.set_ylabel(r"$\|s_t - s'_t\|_2$")
    ax.legend()
    return fig


def plot_init_norms(widths: Sequence[int], norms: dict[str, np.ndarray]) -> Figure:
    """Chapter 8: ``||W||_2`` of standard initializations against the width, with the stability line 1."""
    widths = _values(widths, "widths", ndim=1)
    _table(norms, "norms")
    fig, (ax,) = new_figure(1, width=5.6)
    for scheme, values in norms.items():
        values = _values(values, f"norms[{scheme!r}]", ndim=2)
        _same_length(values, widths.size, f"norms[{scheme!r}]", "width")
        ax.errorbar(widths, values.mean(axis=1), yerr=values.std(axis=1), marker="o", ms=4, capsize=2, label=scheme)
    ax.axhline(1.0, color="k", ls=":", lw=1.2, label=r"$\|W\|_2 = 1$")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("width $m$")
    ax.set_ylabel(r"$\|W\|_2$ at initialization")
    ax.legend(ncol=2)
    return fig


def plot_jacobian_hist(norms: dict[str, np.ndarray], global_bounds: dict[str, float] | None = None) -> Figure:
    """Chapter 8: histograms of the measured ``||d s_t / d s_{t-1}||_2`` along data, one per model.

    ``global_bounds`` optionally maps labels to the data-free bound ``L_rho ||W||_2`` (drawn dashed).
    """
    _table(norms, "norms")
    fig, (ax,) = new_figure(1, width=5.6)
    for label, values in norms.items():
        line = ax.hist(_values(values, f"norms[{label!r}]").ravel(), bins=40, alpha=0.5, label=label)[2][0]
        if global_bounds and label in global_bounds:
            ax.axvline(global_bounds[label], ls="--", lw=1.2, color=line.get_facecolor()[:3])
    ax.axvline(1.0, color="k", ls=":", lw=1.2)
    ax.set_xlabel(r"$\|\partial s_t/\partial s_{t-1}\|_2$ along the data")
    ax.set_ylabel("count")
    ax.legend()
    return fig


def plot_lds_fit(fit) -> Figure:
    """Chapter 8 sidebar: risk of projected GD on a stable linear system, and the student's spectral radius."""
    _record(fit, "fit", ("risk", "spectral_radius"), "an rnnlib.stability.LDSFit")
    _values(fit.risk, "fit.risk", ndim=1)
    _values(fit.spectral_radius, "fit.spectral_radius", ndim=1)
    fig, (ax0, ax1) = new_figure(2)
    steps = np.arange(1, fit.risk.size + 1)
    ax0.loglog(steps, fit.risk)
    ax0.set_xlabel("gradient step")
    ax0.set_ylabel("idealized risk")
    ax1.plot(steps, fit.spectral_radius)
    ax1.axhline(1.0, color="k", ls=":", lw=1.2)
    ax1.set_xscale("log")
    ax1.set_ylim(0, 1.1)
    ax1.set_xlabel("gradient step")
    ax1.set_ylabel(r"spectral radius of $\hat A$")
    return fig


def plot_truncation_errors(
    ks: Sequence[int], errors: dict[str, np.ndarray], bounds: dict[str, np.ndarray] | None = None, *, title: str = ""
) -> Figure:
    """Chapter 9: measured ``max_t ||s_t - s^k_t||`` against k (log scale), with the bound dashed."""
    ks = _values(ks, "ks", ndim=1)
    _table(errors, "errors")
    for label, err in errors.items():
        _same_length(_values(err, f"errors[{label!r}]", ndim=1), ks.size, f"errors[{label!r}]", "k")
    fig, (ax,) = new_figure(1, width=5.8)
    for label, err in errors.items():
        line = ax.semilogy(ks, np.maximum(np.asarray(err, dtype=float), 1e-17), "o-", ms=3, label=label)[0]
        if bounds and label in bounds:
            ax.semilogy(ks, bounds[label], "--", lw=1.2, color=line.get_color())
    if bounds:
        ax.plot([], [], "k--", lw=1.2, label=r"bound $\lambda^k L B/(1-\lambda)$")
    ax.set_xlabel("truncation length $k$")
    ax.set_ylabel(r"$\max_t \|s_t - s^k_t\|_2$")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def plot_gradient_difference(ks: Sequence[int], gaps: dict[str, np.ndarray], lams: dict[str, float]) -> Figure:
    """Chapter 10: ``||grad p_T - grad p^k_T||`` against k, with the envelope ``c k lambda^k`` (dashed)."""
    ks = _values(ks, "ks", ndim=1)
    _table(gaps, "gaps")
    for label, gap in gaps.items():
        _same_length(_values(gap, f"gaps[{label!r}]", ndim=1), ks.size, f"gaps[{label!r}]", "k")
        if label not in lams:
            raise ValueError(f"lams has no contraction constant for {label!r}")
    fig, (ax,) = new_figure(1, width=5.8)
    for label, gap in gaps.items():
        gap = np.asarray(gap, dtype=float)
        line = ax.semilogy(ks, np.maximum(gap, 1e-300), "o-", ms=3, label=label)[0]
        envelope = ks * lams[label] ** ks
        ax.semilogy(ks, envelope * np.max(gap / envelope), "--", lw=1.0, color=line.get_color())
    ax.set_xlabel("truncation length $k$")
    ax.set_ylabel(r"$\|\nabla p_T - \nabla p^k_T\|_2$")
    ax.legend(fontsize=8)
    return fig


def plot_weight_distance(ks: Sequence[int], distances: dict[str, np.ndarray], *, k_index: int = 0) -> Figure:
    """Chapter 10: ``||w_N - w^k_N||`` against k at the last step (left) and against N for one k (right).

    ``distances`` maps a schedule label to an array (len(ks), N + 1).
    """
    ks = np.asarray(_values(ks, "ks", ndim=1), dtype=np.asarray(ks).dtype)
    k_index = check_int(k_index, "k_index", minimum=-ks.size, maximum=ks.size - 1)
    _table(distances, "distances")
    for label, dist in distances.items():
        _same_length(_values(dist, f"distances[{label!r}]", ndim=2), ks.size, f"distances[{label!r}]", "k")
    fig, (ax0, ax1) = new_figure(2)
    for label, dist in distances.items():
        dist = np.asarray(dist, dtype=float)
        ax0.semilogy(ks, dist[:, -1], "o-", ms=3, label=label)
        steps = np.arange(1, dist.shape[1])
        ax1.loglog(steps, dist[k_index, 1:], label=label)
    ax0.set_xlabel("truncation length $k$")
    ax0.set_ylabel(r"$\|w_N - w^k_N\|_2$ at the last step $N$")
    ax0.legend()
    ax1.set_xlabel("gradient step $N$")
    ax1.set_ylabel(rf"$\|w_N - w^k_N\|_2$, $k = {ks[k_index]}$")
    ax1.legend()
    return fig


__all__ += [
    "plot_state_distance",
    "plot_init_norms",
    "plot_jacobian_hist",
    "plot_lds_fit",
    "plot_truncation_errors",
    "plot_gradient_difference",
    "plot_weight_distance",
]


# --- Part I: the concept class and the pseudo-network (chapters 2-3) ---


def plot_targets(thetas: Sequence[float], slices: np.ndarray, interaction: np.ndarray, *, labels=None) -> Figure:
    """Chapter 2: targets along a circle of one token (left); the two-token interaction of one target (right).

    ``slices`` is (n_targets, k): each target as the first token moves along a
    circle with angles ``thetas`` (k,); ``interaction`` is (k, k), the mixed
    difference ``F(t1, t2) - F(t1, 0) - F(0, t2) + F(0, 0)`` of the first and
    the last token (zero for an additive target).
    """
    thetas = _values(thetas, "thetas", ndim=1)
    slices = np.atleast_2d(_values(slices, "slices"))
    if slices.ndim != 2 or slices.shape[1] != thetas.size:
        raise ValueError(f"slices must have shape (n_targets, {thetas.size}), got {slices.shape}")
    if _values(interaction, "interaction").shape != (thetas.size, thetas.size):
        raise ValueError(f"interaction must have shape ({thetas.size}, {thetas.size}), got {np.shape(interaction)}")
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for i, row in enumerate(slices):
        ax0.plot(thetas, row, label=labels[i] if labels else f"target {i + 1}")
    ax0.set_xlabel(r"angle $\theta$ of the first true token")
    ax0.set_ylabel(r"$F(\bar{\mathbf{x}})$")
    ax0.legend(fontsize=8)
    lim = float(np.max(np.abs(interaction))) or 1.0
    im = ax1.imshow(
        np.asarray(interaction, dtype=float).T, origin="lower", cmap="RdBu_r", vmin=-lim, vmax=lim,
        extent=(thetas[0], thetas[-1], thetas[0], thetas[-1]), aspect="auto",
    )
    ax1.grid(False)
    ax1.set_xlabel(r"$\theta_1$ (first token)")
    ax1.set_ylabel(r"$\theta_2$ (last token)")
    ax1.set_title("interaction of the two tokens")
    fig.colorbar(im, ax=ax1, shrink=0.85)
    return fig


def plot_complexity(radii: Sequence[float], log10_cs: dict[str, np.ndarray], log10_ceps: dict[str, np.ndarray]) -> Figure:
    """Chapter 2: ``log10 C_s(phi, R)`` (left) and ``log10 C_eps(phi, R)`` (right) against R, one line per phi.

    Infinite values (a Taylor series that diverges at that radius) are left out of the line.
    """
    radii = _values(radii, "radii", ndim=1)
    for table, table_name in ((log10_cs, "log10_cs"), (log10_ceps, "log10_ceps")):
        for label, values in _table(table, table_name).items():
            _same_length(_values(values, f"{table_name}[{label!r}]", ndim=1, allow_inf=True), radii.size,
                         f"{table_name}[{label!r}]", "radius")
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for ax, table, name in ((ax0, log10_cs, r"\mathfrak{C}_{\mathfrak{s}}"), (ax1, log10_ceps, r"\mathfrak{C}_{\varepsilon}")):
        for label, values in table.items():
            values = np.asarray(values, dtype=float)
            ok = np.isfinite(values) & ((values > 0) if ax is ax1 else True)
            ax.plot(radii[ok], values[ok], "o-", ms=3, label=label if ok.any() else f"{label} (infinite)")
        ax.set_xscale("log")
        ax.set_xlabel("radius $R$")
        ax.set_ylabel(rf"$\log_{{10}} {name}(\phi, R)$")
    ax0.legend(fontsize=8)
    ax1.set_yscale("log")
    ax1.legend(fontsize=8)
    return fig


def plot_dl1(
    lengths: Sequence[int], additive_mse: Sequence[float], counts: Sequence[int],
    additive_by_count: Sequence[float], neuron_by_count: Sequence[float],
) -> Figure:
    """Chapter 2: D_L1 against the additive class (left: best additive loss vs length) and one neuron (right).

    The right panel shows, against the number s of 1s, the label 1[s = 1], the
    mean prediction of the best additive fit, and the neuron ``s(2 - s)``.
    """
    lengths = _values(lengths, "lengths", ndim=1)
    _same_length(_values(additive_mse, "additive_mse", ndim=1), lengths.size, "additive_mse", "length")
    n_counts = _values(counts, "counts", ndim=1).size
    _same_length(_values(additive_by_count, "additive_by_count", ndim=1), n_counts, "additive_by_count", "count")
    _same_length(_values(neuron_by_count, "neuron_by_count", ndim=1), n_counts, "neuron_by_count", "count")
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    ax0.semilogx(lengths, additive_mse, "o-", label="best additive fit")
    ax0.axhline(2 / 9, color="k", ls=":", lw=1.2, label="2/9 (population optimum)")
    ax0.semilogx(lengths, np.zeros_like(lengths), "s-", ms=4, label=r"one neuron $s(2-s)$")
    ax0.set_xlabel("string length $n = L - 2$")
    ax0.set_ylabel("mean squared error on $D_{L_1}$")
    ax0.set_ylim(-0.02, 0.3)
    ax0.legend(fontsize=8)
    counts = np.asarray(counts)
    ax1.plot(counts, (counts == 1).astype(float), "ko", ms=7, label=r"$D_{L_1}$ label")
    ax1.plot(counts, additive_by_count, "o--", label="best additive fit")
    ax1.plot(counts, neuron_by_count, "s-", label=r"neuron $s(2-s)$")
    ax1.axhline(0.5, color="gray", ls=":", lw=1.0)
    ax1.set_xticks(counts)
    ax1.set_xlabel("number of 1s, $s$")
    ax1.set_ylabel("value")
    ax1.legend(fontsize=8)
    return fig


def plot_pseudo_gap(sweep) -> Figure:
    """Chapter 3: relative RNN / pseudo-network gap (left) and flipped patterns (right) against m, per tau.

    ``sweep`` is an :class:`rnnlib.pseudo.GapSweep`; log-log axes, fitted slopes in the legend.
    """
    _record(sweep, "sweep", ("widths", "taus", "relative_gap", "flip_fraction"), "an rnnlib.pseudo.GapSweep")
    widths = _values(sweep.widths, "sweep.widths", ndim=1)
    _values(sweep.relative_gap, "sweep.relative_gap", ndim=2)
    _values(sweep.flip_fraction, "sweep.flip_fraction", ndim=2)
    fig, (ax0, ax1) = new_figure(2, width=9.0)
    for i, tau in enumerate(sweep.taus):
        rel, flips = sweep.relative_gap[i], sweep.flip_fraction[i]
        ax0.loglog(widths, rel, "o-", ms=4, label=rf"$\tau = {tau:g}$: slope {loglog_slope(widths, rel):.2f}")
        ax1.loglog(widths, flips, "o-", ms=4, label=rf"$\tau = {tau:g}$: slope {loglog_slope(widths, flips):.2f}")
    ref = sweep.relative_gap[0, 0] * (widths / widths[0]) ** -0.25
    ax0.loglog(widths, ref, "k:", lw=1.2, label=r"$\propto m^{-1/4}$")
    ax1.loglog(widths, sweep.flip_fraction[0, 0] * (widths / widths[0]) ** -0.5, "k:", lw=1.2, label=r"$\propto m^{-1/2}$")
    for ax in (ax0, ax1):
        ax.set_xticks(widths, labels=[f"{int(w)}" for w in widths])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax0.set_xlabel("width $m$")
    ax0.set_ylabel("relative gap RNN vs pseudo-network")
    ax1.set_xlabel("width $m$")
    ax1.set_ylabel("fraction of flipped $D^{(l)}$ entries")
    ax0.legend(fontsize=8)
    ax1.legend(fontsize=8)
    return fig


def plot_linearization(sample) -> Figure:
    """Chapter 3 explorer: the true change of the RNN output against the pseudo-network output.

    ``sample`` is an :class:`rnnlib.pseudo.LinearizationSample`; the diagonal is exact agreement.
    """
    _record(sample, "sample", ("width", "tau", "L", "true_change", "pseudo", "flip_fraction"),
            "an rnnlib.pseudo.LinearizationSample")
    true, pseudo = _values(sample.true_change, "sample.true_change"), _values(sample.pseudo, "sample.pseudo")
    rel = np.mean(np.abs(true - pseudo)) / np.mean(np.abs(pseudo))
    fig, (ax,) = new_figure(1, width=5.0, height=4.2)
    lim = 1.05 * float(max(np.abs(true).max(), np.abs(pseudo).max()))
    ax.plot([-lim, lim], [-lim, lim], "k:", lw=1.2)
    ax.scatter(pseudo, true, s=10, alpha=0.6)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_xlabel(r"pseudo-network $F(\mathbf{x}; \Delta W, \Delta A)$")
    ax.set_ylabel(r"$F_{\mathrm{rnn}}(W + \Delta W, A + \Delta A) - F_{\mathrm{rnn}}(W, A)$")
    ax.set_title(
        rf"$m = {sample.width}$, $\tau = {sample.tau:g}$, $L = {sample.L}$: relative gap {rel:.2f}, "
        f"flips {100 * sample.flip_fraction:.2f}%",
        fontsize=9,
    )
    return fig


__all__ += ["plot_targets", "plot_complexity", "plot_dl1", "plot_pseudo_gap", "plot_linearization"]


def plot_truncation_over_time(errors: np.ndarray, bound: float | None, *, title: str = "") -> Figure:
    """Chapter 9 explorer: ``||s_t - s^k_t||`` along the sequence for one k, with the bound as a dashed line."""
    errors = _values(errors, "errors", ndim=1)
    if bound is not None:
        bound = check_real(bound, "bound", low=0.0)
    fig, (ax,) = new_figure(1, width=5.8)
    t = np.arange(1, errors.size + 1)
    ax.semilogy(t, np.maximum(errors, 1e-17), label=r"measured $\|s_t - s^k_t\|_2$")
    if bound is not None:
        ax.axhline(bound, color="k", ls="--", lw=1.2, label=r"bound $\lambda^k L B/(1-\lambda)$")
    ax.set_xlabel("step $t$")
    ax.set_ylabel("truncation error")
    ax.set_ylim(bottom=1e-17)
    if title:
        ax.set_title(title)
    ax.legend()
    return fig


__all__ += ["plot_truncation_over_time"]
