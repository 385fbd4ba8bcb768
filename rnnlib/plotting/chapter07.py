"""Figures of chapter 7 (regular languages); see :mod:`rnnlib.plotting`."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from .._validation import UNIT, Instance, Str, validate_params
from ..experiments.ch07 import LearnabilityAtlas, WalshSpectrum
from ._style import (
    _record,
    _same_length,
    _table,
    _values,
    new_figure,
)

__all__ = [
    "plot_learner_accuracy",
    "plot_eps_effect",
    "plot_length_sweep",
    "plot_representation_complexity",
    "plot_accuracy_grid",
    "plot_learnability_atlas",
    "plot_walsh_spectrum",
]


@validate_params(title=Str(), accuracies=Instance(Mapping), baseline=UNIT)
def plot_learner_accuracy(
    accuracies: dict, baseline: float, *, title: str = ""
) -> Figure:
    """Chapter 7: held-out accuracy per learner (bars) with the majority baseline (dashed line).

    ``accuracies`` maps a learner's name to its accuracy in [0, 1].
    """
    accuracies = _table(accuracies, "accuracies")
    values = _values(list(accuracies.values()), "accuracies", ndim=1)
    base = float(_values([baseline], "baseline")[0])
    fig, (ax,) = new_figure(1, width=5.4, height=3.4)
    labels = [str(k).replace(", ", ",\n") for k in accuracies]
    bars = ax.bar(
        labels,
        values,
        color=["C7", "C0", "C1", "C2", "C3"][: len(values)],
    )
    for bar, v in zip(bars, values):
        ax.text(
            bar.get_x() + bar.get_width() / 2,
            v + 0.02,
            f"{v:.2f}",
            ha="center",
            fontsize=9,
        )
    ax.axhline(
        base,
        color="k",
        ls="--",
        lw=1.2,
        label=f"majority baseline {base:.2f}",
    )
    ax.set_ylim(0, 1.2)
    ax.set_ylabel("accuracy on held-out strings")
    ax.legend(loc="upper left", fontsize=8)
    if title:
        ax.set_title(title)
    return fig


@validate_params(baseline=UNIT)
def plot_eps_effect(eps_values, accuracies, baseline: float) -> Figure:
    """Chapter 7: held-out accuracy at a fixed budget against eps_x; ``accuracies`` is (seeds, len(eps_values))."""
    eps = _values(eps_values, "eps_values", ndim=1)
    acc = _values(accuracies, "accuracies", ndim=2)
    if acc.shape[1] != len(eps):
        raise ValueError(
            f"accuracies must have one column per eps_x value ({len(eps)}), got shape {acc.shape}"
        )
    base = float(_values([baseline], "baseline")[0])
    fig, (ax,) = new_figure(1, width=5.4, height=3.4)
    for row in acc:
        ax.semilogx(eps, row, "o", color="C0", alpha=0.35, ms=4)
    ax.semilogx(
        eps,
        acc.mean(axis=0),
        "o-",
        color="C0",
        label="wide RNN, mean over seeds",
    )
    ax.axhline(base, color="k", ls="--", lw=1.2, label="majority baseline")
    ax.set_xlabel(r"token scale $\varepsilon_x$")
    ax.set_ylabel("accuracy on held-out strings")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    return fig


@validate_params(title=Str(), accuracies=Instance(Mapping))
def plot_length_sweep(
    lengths, accuracies: dict, baselines, *, title: str = ""
) -> Figure:
    """Chapter 7: held-out accuracy against the maximal string length n, one line per learner.

    ``accuracies`` maps a learner's name to one accuracy per length; ``baselines``
    holds the majority baseline of each length's split.
    """
    n = _values(lengths, "lengths", ndim=1)
    accuracies = _table(accuracies, "accuracies")
    base = _values(baselines, "baselines", ndim=1)
    _same_length(base, len(n), "baselines", "length")
    fig, (ax,) = new_figure(1, width=5.4, height=3.4)
    for i, (label, acc) in enumerate(accuracies.items()):
        acc = _values(acc, f"accuracies[{label!r}]", ndim=1)
        _same_length(acc, len(n), f"accuracies[{label!r}]", "length")
        ax.plot(n, acc, "o-", color=f"C{i}", label=label)
    ax.plot(n, base, "k--", lw=1.2, label="majority baseline")
    ax.set_xlabel("maximal string length $n$")
    ax.set_ylabel("accuracy on held-out strings")
    ax.set_ylim(-0.02, 1.05)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


@validate_params("R", log10_cs=Instance(Mapping))
def plot_representation_complexity(lengths, log10_cs: dict, R: float) -> Figure:
    """Chapter 7: log10 C_s(Phi, R) of each concept-class representation against n (left) and sqrt(n) (right)."""
    n = _values(lengths, "lengths", ndim=1)
    log10_cs = _table(log10_cs, "log10_cs")
    fig, (ax0, ax1) = new_figure(2, width=9.0, height=3.4)
    for i, (label, v) in enumerate(log10_cs.items()):
        v = _values(v, f"log10_cs[{label!r}]", ndim=1)
        _same_length(v, len(n), f"log10_cs[{label!r}]", "length")
        ax0.semilogx(n, v, "o-", color=f"C{i}", label=label)
        ax1.plot(np.sqrt(n), v, "o-", color=f"C{i}", label=label)
    ax0.set_xlabel("string length $n$ (log scale)")
    ax1.set_xlabel(r"$\sqrt{n}$")
    for ax in (ax0, ax1):
        ax.set_ylabel(
            rf"$\log_{{10}} \mathfrak{{C}}_{{\mathfrak{{s}}}}(\phi, R = {R:g})$"
        )
    ax0.set_title("polynomial = straight line here", fontsize=9)
    ax1.set_title(r"$e^{\Theta(\sqrt{n})}$ = straight line here", fontsize=9)
    ax0.legend(fontsize=8)
    return fig


@validate_params(tables=Instance(Mapping))
def plot_accuracy_grid(row_labels, col_labels, tables: dict) -> Figure:
    """Chapter 7: heat maps of accuracy (rows: languages, columns: settings), one panel per learner.

    ``tables`` maps a panel title to an array (len(row_labels), len(col_labels)) of accuracies in [0, 1].
    """
    tables = _table(tables, "tables")
    fig, axes = new_figure(len(tables), width=4.6 * len(tables), height=3.8)
    for ax, (title, acc) in zip(axes, tables.items()):
        acc = _values(acc, f"tables[{title!r}]", ndim=2)
        if acc.shape != (len(row_labels), len(col_labels)):
            raise ValueError(
                f"tables[{title!r}] must have shape ({len(row_labels)}, {len(col_labels)}), got {acc.shape}"
            )
        ax.imshow(acc, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
        for i in range(acc.shape[0]):
            for j in range(acc.shape[1]):
                ax.text(
                    j,
                    i,
                    f"{acc[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                )
        ax.set_xticks(
            range(len(col_labels)),
            labels=[str(c).replace(", ", "\n") for c in col_labels],
            fontsize=8,
        )
        ax.set_yticks(range(len(row_labels)), labels=row_labels, fontsize=8)
        ax.grid(False)
        ax.set_title(title, fontsize=10)
    return fig


@validate_params(curves=Instance(Mapping))
def plot_kernel_curves(curves: dict) -> Figure:
    """Chapter 7: accuracy of the infinite-width lazy learner against the training size, one panel per language.

    ``curves`` maps a title to a :class:`rnnlib.experiments.ch07.KernelCurve`;
    each panel shows the seed-mean accuracy on distinct held-out strings, the
    balanced accuracy and the best constant on the same strings, against N
    (log scale).
    """
    curves = _table(curves, "curves")
    fig, axes = new_figure(len(curves), height=3.0)
    for ax, (title, c) in zip(axes, curves.items()):
        n = c.n_train.mean(0)
        ax.plot(
            n,
            c.accuracy.mean(0),
            "o-",
            label="held-out (distinct)",
        )
        ax.plot(n, c.balanced.mean(0), "s--", label="balanced")
        ax.plot(n, c.fresh.mean(0), "^:", label="fresh i.i.d. draws")
        ax.plot(
            n,
            c.constant.mean(0),
            "k--",
            lw=1.0,
            label="best constant",
        )
        ax.set_xscale("log")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("training strings N")
        ax.set_title(str(title))
    axes[0].set_ylabel("accuracy")
    axes[0].legend(fontsize=7, loc="lower left")
    return fig


@validate_params("eps_x", atlas=Instance(LearnabilityAtlas))
def plot_learnability_atlas(atlas, eps_x: float) -> Figure:
    """Chapter 7: the lazy learner's sample-size constant per language against n, and its ratio to shuffled labels.

    ``atlas`` is an :class:`rnnlib.experiments.ch07.LearnabilityAtlas`; ``eps_x`` one of
    its ``eps_values``. Left, log scale: ``C`` per language and, dotted, ``2^n``
    (the number of strings); right, log scale: ``C`` over that of the language's
    indicator at random permutations of the strings (1: no structure beyond the
    class balance). Legend below.
    """
    _record(
        atlas,
        "atlas",
        (
            "languages",
            "lengths",
            "eps_values",
            "constant",
            "shuffled",
        ),
        "an rnnlib.experiments.ch07.LearnabilityAtlas",
    )
    eps = _values(atlas.eps_values, "atlas.eps_values", ndim=1)
    hits = np.flatnonzero(np.isclose(eps, float(eps_x)))
    if hits.size == 0:
        raise ValueError(
            f"eps_x must be one of atlas.eps_values {eps.tolist()}, got {eps_x!r}"
        )
    e = int(hits[0])
    n = _values(atlas.lengths, "atlas.lengths", ndim=1)
    C = _values(atlas.constant, "atlas.constant", ndim=3)[:, :, e]
    ratio = C / _values(atlas.shuffled, "atlas.shuffled", ndim=3)[:, :, e]
    fig, (ax0, ax1) = new_figure(2, width=9.5, height=4.2)
    markers = "os^vD<>ph*"
    for k, name in enumerate(atlas.languages):
        kw = dict(
            marker=markers[k % len(markers)],
            ms=4,
            ls="-" if k < len(markers) else "--",
        )
        line = ax0.plot(n, C[k], label=name, **kw)[0]
        ax1.plot(n, ratio[k], color=line.get_color(), **kw)
    ax0.plot(n, 2.0**n, "k:", lw=1, label="$2^n$ strings")
    ax1.axhline(1.0, color="k", ls=":", lw=1)
    for ax in (ax0, ax1):
        ax.set_yscale("log")
        ax.set_xticks(n, labels=[f"{int(v)}" for v in n])
        ax.set_xlabel("string length $n$")
    ax0.set_ylabel(r"$C=\|f\|_K^2\,\sup K$")
    ax1.set_ylabel("$C$ / $C$ of shuffled labels")
    handles, labels = ax0.get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=4,
        fontsize=8,
    )
    return fig


@validate_params(spectrum=Instance(WalshSpectrum))
def plot_walsh_spectrum(spectrum) -> Figure:
    """Chapter 7: the limit kernel's eigenvalues by Walsh degree, at the largest length, one line per eps_x.

    ``spectrum`` is an :class:`rnnlib.experiments.ch07.WalshSpectrum`. Left, log
    scale: the mean eigenvalue ``lambda_S`` over the characters of each degree
    ``|S|``, as a share of the trace (degree n is PARITY's character alone); right:
    the share of the trace on degree ``|S|`` (mean times the number of characters).
    """
    _record(
        spectrum,
        "spectrum",
        ("lengths", "eps_values", "degree_mass", "degree_mean"),
        "an rnnlib.experiments.ch07.WalshSpectrum",
    )
    n = int(_values(spectrum.lengths, "spectrum.lengths", ndim=1)[-1])
    eps = _values(spectrum.eps_values, "spectrum.eps_values", ndim=1)
    mean = _values(
        spectrum.degree_mean[-1],
        "spectrum.degree_mean[-1]",
        ndim=2,
    )
    mass = _values(
        spectrum.degree_mass[-1],
        "spectrum.degree_mass[-1]",
        ndim=2,
    )
    if mean.shape != (len(eps), n + 1) or mass.shape != mean.shape:
        raise ValueError(
            "spectrum.degree_mean[-1] and degree_mass[-1] must have shape"
            f" (eps_values, n + 1) = {(len(eps), n + 1)}, got"
            f" {mean.shape} and {mass.shape}"
        )
    k = np.arange(n + 1)
    fig, (ax0, ax1) = new_figure(2, width=9.5, height=3.8)
    for e, value in enumerate(eps):
        kw = dict(
            marker="os^vD"[e % 5],
            ms=4,
            label=f"$\\epsilon_x={value:g}$",
        )
        ax0.plot(k, mean[e], **kw)
        ax1.plot(k, mass[e], **kw)
    ax0.set_yscale("log")
    ax0.set_ylabel(r"mean $\lambda_S$ / trace")
    ax1.set_ylabel("share of the trace")
    for ax in (ax0, ax1):
        ax.set_xticks(k)
        ax.set_xlabel(f"Walsh degree $|S|$ (strings of length {n})")
    ax0.legend(fontsize=8)
    return fig
