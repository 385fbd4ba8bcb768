"""Chapter 7's experiments: the learners on held-out splits, and the sample-complexity sweep at infinite width.

:func:`run_learners` trains the learners of :mod:`rnnlib.recognizers` on one
held-out split of a language, :func:`accuracy_table` over a grid of languages
and lengths (the Tomita table) and :func:`length_generalization` scores them on
longer strings.

Theorem 3.1 of Panigrahi & Goyal describes SGD in the lazy regime, whose limit is
kernel regression with the infinite-width tangent kernel (:mod:`rnnlib.ntk`). So
the question "how many samples does the theorem's learner need for this
language?" can be asked without training anything: fit kernel ridge regression
on +-1 labels with :func:`rnnlib.ntk.limit_tangent_kernel` and classify by the
sign. :func:`limit_kernel_curve` does it for growing training sizes N and
scores it the way the chapter does:

* on the *distinct* held-out strings (each counted once, so a short string that
  the sampler repeats does not dominate), against the best constant answer on
  those same strings; and by balanced accuracy (the mean of the two per-class
  accuracies, 0.5 for any constant);
* on fresh i.i.d. draws from the same sampler (repeats allowed, training strings
  allowed), which is what a generalization bound speaks about.

The ridge is chosen on the training data alone by leave-one-out error, in closed
form for kernel ridge regression: ``residual_i / (1 - H_ii)`` with the hat matrix
``H = K (K + ridge N I)^{-1}``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from .. import records
from .._progress import progress_bar
from .._rng import derive
from .._validation import (
    OPEN_UNIT,
    PARAMS,
    POSITIVE,
    Bool,
    Choice,
    Function,
    Instance,
    Int,
    Ints,
    PathLike,
    Real,
    Relation,
    Seq,
    Str,
    Tensor,
    check_int,
    check_ints,
    check_real,
    check_sequence,
    validate_params,
)
from ..concepts import ConceptTarget, SmoothFunction
from ..elman import ElmanRNN
from ..languages import (
    LANGUAGE,
    STRINGS,
    ConceptRepresentation,
    HeldOutSplit,
    LabelledStrings,
    all_strings,
    check_split,
    check_strings,
    encode_strings,
    get_language,
    held_out_split,
    language_dataset,
    sample_dl1_balanced,
    sample_language,
    string_ones,
)
from ..ntk import (
    limit_tangent_kernel,
    sample_constant,
    tangent_kernel_diag,
)
from ..recognizers import (
    Recognition,
    additive_baseline,
    token_codes,
    train_practical_rnn,
    train_wide_rnn,
)
from .ch05 import RegressionTask, against_limit

__all__ = [
    "KernelCurve",
    "limit_kernel_curve",
    "draw_strings",
    "distinct_test",
    "unseen_mask",
    "best_constant",
    "COUNT_RULES",
    "CountRule",
    "count_rule",
    "memorized_share",
    "memorizer",
    "subset_rule_accuracy",
    "SubsetRule",
    "subset_rule",
    "additive_logistic",
    "nearest_neighbour",
    "neighbour_coverage",
    "kernel_learner",
    "lazy_step",
    "LearnerScore",
    "score_learner",
    "LEARNERS",
    "compare_learners",
    "mean_scores",
    "PatternCountNeuron",
    "pattern_count_neuron",
    "pattern_count_complexity",
    "pattern_count_target",
    "LanguageRuns",
    "run_learners",
    "accuracy_table",
    "length_generalization",
    "LearnabilityAtlas",
    "learnability_atlas",
    "WalshSpectrum",
    "walsh_spectrum",
    "language_task",
    "CHAPTER",
    "RECORD",
    "SMOKE",
    "run_limit_record",
    "limit_fingerprint",
    "make_limit_record",
    "check_limit_record",
]


@validate_params(
    "generator", n=Int(2), n_samples=Int(2), language=LANGUAGE, min_length=Int(1, "n")
)
def draw_strings(
    language: str,
    n_samples: int,
    n: int,
    *,
    min_length: int | None = None,
    generator,
) -> LabelledStrings:
    """Labelled strings of chapter 7's sampler for ``language`` (chapter 7).

    ``"dl1"``: :func:`rnnlib.languages.sample_dl1_balanced` (number of 1s
    uniform on {0, 1, 2}, lengths ``min_length..n``, default 2..n); any other
    language: :func:`rnnlib.languages.sample_language` at lengths
    ``min_length..n`` (default: fixed length n; balanced, half the negatives
    one flip from a positive). Returns ``(z, y)``.
    """
    if language == "dl1":
        z = sample_dl1_balanced(
            n_samples,
            n,
            min_length=2 if min_length is None else min_length,
            generator=generator,
        )
        return LabelledStrings(z, get_language("dl1")(z))
    return sample_language(
        language,
        n_samples,
        n,
        min_length=min_length,
        generator=generator,
    )


def _krr_loo(K: torch.Tensor, y: torch.Tensor, ridges):
    """(alpha, ridge) of kernel ridge regression with the ridge of least leave-one-out 0-1 error."""
    n = K.shape[0]
    evals, evecs = torch.linalg.eigh(K)
    evals = evals.clamp_min(0)
    vy = evecs.T @ y
    best = None
    for lam in ridges:
        shrink = evals / (evals + lam * n)
        fit = evecs @ (shrink * vy)
        hat_diag = (evecs**2 * shrink).sum(dim=1)
        loo = y - (y - fit) / (1 - hat_diag).clamp_min(1e-12)
        err = float((torch.sign(loo) != y).double().mean())
        if best is None or err < best[0]:
            best = (err, lam)
    lam = best[1]
    alpha = evecs @ (vy / (evals + lam * n))
    return alpha, lam


@dataclass
class KernelCurve:
    """:func:`limit_kernel_curve` results (chapter 7). Arrays have shape (seeds, len(sizes)).

    ``n_train``: training strings (with repeats); ``accuracy``: accuracy on the
    distinct held-out strings; ``balanced``: balanced accuracy there; ``constant``:
    the best constant answer on the same distinct strings; ``fresh``: accuracy on
    fresh i.i.d. draws, ``fresh_constant`` the best constant there; ``train_acc``:
    training accuracy; ``ridge``: the ridge chosen by leave-one-out.
    """

    language: str
    n: int
    sizes: np.ndarray
    n_train: np.ndarray
    accuracy: np.ndarray
    balanced: np.ndarray
    constant: np.ndarray
    fresh: np.ndarray
    fresh_constant: np.ndarray
    train_acc: np.ndarray
    ridge: np.ndarray

    def first_beating(self, margin: float) -> int | None:
        """The smallest size whose seed-mean accuracy beats the seed-mean best constant by ``margin`` (None if none)."""
        gap = self.accuracy.mean(0) - self.constant.mean(0)
        hit = np.nonzero(gap > margin)[0]
        return int(self.sizes[hit[0]]) if len(hit) else None


def _check_language(name: object, what: str) -> None:
    """Refuse a ``name`` that is not a language name, saying which argument (``what``) it was."""
    if not isinstance(name, str):
        raise TypeError(
            f"{what} must be a language name (str), got {type(name).__name__}"
        )
    try:
        get_language(name)
    except ValueError as err:
        raise ValueError(f"{what} {str(err).removeprefix('name: ')}") from None


@validate_params(
    "eps_x",
    "generator",
    n=Int(2),
    sizes=Ints(4),
    seeds=Int(1),
    test_fraction=OPEN_UNIT,
    n_fresh=Int(2),
    ridges=Seq(POSITIVE, "positive reals"),
    language=LANGUAGE,
)
def limit_kernel_curve(
    language: str,
    n: int,
    sizes: Sequence[int],
    *,
    seeds: int = 2,
    eps_x: float = 0.5,
    test_fraction: float = 0.25,
    n_fresh: int = 1000,
    ridges: Sequence[float] = (1e-6, 1e-4, 1e-3, 1e-2, 1e-1),
    generator=None,
) -> KernelCurve:
    """Held-out accuracy of the infinite-width lazy learner as the training set grows (chapter 7).

    For each size N in ``sizes`` and each seed: draw ``N / (1 - test_fraction)``
    strings of ``language`` at length ``n`` (:func:`draw_strings`), split them by
    :func:`rnnlib.languages.held_out_split` (no string on both sides), encode them
    at token scale ``eps_x`` (:func:`rnnlib.languages.encode_strings`), fit kernel
    ridge regression on labels ``2y - 1`` with the limit tangent kernel and the
    ridge of least leave-one-out error among ``ridges``, and classify by the sign.
    Scores: see :class:`KernelCurve` and the module docstring.
    """
    _check_language(language, "language")
    shape = (seeds, len(sizes))
    out = {
        k: np.zeros(shape)
        for k in (
            "n_train accuracy balanced constant fresh fresh_constant train_acc ridge".split()
        )
    }
    f64 = torch.float64
    for s in range(seeds):
        zf, yf = draw_strings(
            language,
            n_fresh,
            n,
            generator=derive(generator, "fresh", s),
        )
        xf = encode_strings(zf, eps_x, dtype=f64)
        for j, size in enumerate(sizes):
            pool = int(round(size / (1 - test_fraction)))
            z, y = draw_strings(
                language,
                pool,
                n,
                generator=derive(generator, "pool", s, j),
            )
            split = held_out_split(
                z,
                y,
                test_fraction=test_fraction,
                generator=derive(generator, "split", s, j),
            )
            xtr = encode_strings(split.z_train, eps_x, dtype=f64)
            ytr = 2 * split.y_train.to(f64) - 1
            K = limit_tangent_kernel(xtr)
            alpha, lam = _krr_loo(K, ytr, ridges)
            zte, inv = torch.unique(split.z_test, dim=0, return_inverse=True)
            yte = torch.zeros(len(zte), dtype=f64)
            yte[inv] = split.y_test.to(f64)
            pred = (
                limit_tangent_kernel(encode_strings(zte, eps_x, dtype=f64), xtr) @ alpha
                > 0
            )
            correct = (pred.to(f64) == yte).to(f64)
            pos = yte == 1
            rates = [float(correct[m].mean()) for m in (pos, ~pos) if bool(m.any())]
            pf = limit_tangent_kernel(xf, xtr) @ alpha > 0
            yf64 = yf.to(f64)
            fit = K @ alpha > 0
            out["n_train"][s, j] = len(ytr)
            out["accuracy"][s, j] = float(correct.mean())
            out["balanced"][s, j] = float(np.mean(rates))
            p = float(yte.mean())
            out["constant"][s, j] = max(p, 1 - p)
            out["fresh"][s, j] = float((pf.to(f64) == yf64).to(f64).mean())
            q = float(yf64.mean())
            out["fresh_constant"][s, j] = max(q, 1 - q)
            out["train_acc"][s, j] = float(
                (fit.to(f64) == split.y_train.to(f64)).to(f64).mean()
            )
            out["ridge"][s, j] = lam
    return KernelCurve(language, n, np.array(sizes), **out)


# --- the learners of chapter 7 side by side, scored the same way ---


@validate_params(split=Instance(HeldOutSplit))
def distinct_test(
    split: HeldOutSplit,
) -> LabelledStrings:
    """The distinct held-out strings of ``split`` with their labels, each once (chapter 7).

    A sampler repeats short strings (at lengths 1..10 the string "1" can be 16 %
    of the held-out copies); scoring the distinct strings weighs each one once.
    """
    split = check_split(split)
    z, inv = torch.unique(split.z_test, dim=0, return_inverse=True)
    y = torch.zeros(len(z), dtype=split.y_test.dtype)
    y[inv] = split.y_test
    return LabelledStrings(z, y)


@validate_params(y=Tensor(ndim=1, floating=False, values="binary"))
def best_constant(y: torch.Tensor) -> float:
    """Accuracy of the best constant answer on labels ``y`` (0/1): ``max(p, 1 - p)`` (chapter 7)."""
    p = float(y.to(torch.float64).mean())
    return max(p, 1.0 - p)


@validate_params(split=Instance(HeldOutSplit), z=STRINGS)
def unseen_mask(split: HeldOutSplit, z: torch.Tensor) -> torch.Tensor:
    """Which strings of ``z`` are not training strings of ``split`` (bool, (batch,); chapter 7)."""
    split = check_split(split)
    z = z.to(torch.int64)
    if z.shape[1] != split.z_train.shape[1]:
        raise ValueError(
            f"z must have the training width {split.z_train.shape[1]}, got {z.shape[1]}"
        )
    train = {tuple(r) for r in split.z_train.tolist()}
    return torch.tensor([tuple(r) not in train for r in z.tolist()])


#: The count rules of :func:`count_rule`: name -> rule on the number s of 1s.
COUNT_RULES = {
    "at most one 1": lambda s: s <= 1,
    "at least one 1": lambda s: s >= 1,
}


class CountRule(NamedTuple):
    """:func:`count_rule` results: the rule's name and its predictor."""

    #: the name of the rule in :data:`COUNT_RULES`
    name: str
    #: strings -> 0/1 labels (float32)
    predict: Callable


@validate_params(split=Instance(HeldOutSplit))
def count_rule(split: HeldOutSplit) -> CountRule:
    """The count rule of :data:`COUNT_RULES` with the best training accuracy (chapter 7).

    "at most one 1" and "at least one 1" are both additive (a threshold of the
    number of 1s, a sum over positions), and each gets two of D_L1's three
    counts {0, 1, 2} right. Returns ``(name, predict)``, ``predict`` mapping
    strings to 0/1 labels (float32).
    """
    split = check_split(split)
    s = string_ones(split.z_train)
    y = split.y_train.to(torch.bool)
    name = max(
        COUNT_RULES,
        key=lambda k: float((COUNT_RULES[k](s) == y).double().mean()),
    )
    rule = COUNT_RULES[name]

    def predict(z: torch.Tensor) -> torch.Tensor:
        return rule(string_ones(z)).to(torch.float32)

    return CountRule(name, predict)


# --- memorization and the 0-1-optimal additive rule ---


@validate_params(split=Instance(HeldOutSplit), z=STRINGS)
def memorized_share(split: HeldOutSplit, z: torch.Tensor) -> float:
    """Fraction of the strings ``z`` that repeat a training string of ``split`` (chapter 7).

    ``1 - mean(unseen_mask(split, z))``: on fresh i.i.d. draws, the share a
    learner that only memorizes its training strings answers from memory.
    """
    return 1.0 - float(unseen_mask(split, z).double().mean())


@validate_params(split=Instance(HeldOutSplit), fallback=Function())
def memorizer(split: HeldOutSplit, fallback: Callable | None = None) -> Callable:
    """Memorize the training strings, else answer ``fallback`` (chapter 7).

    A string of ``z`` that is a training string of ``split`` gets the
    majority label of its training copies (ties: 1); any other string gets
    ``fallback(z)`` (strings -> 0/1), by default the training majority label
    (``memorize + constant``). With :func:`count_rule`'s rule as the
    fallback it is ``memorize + count rule``. No such learner generalizes
    beyond its fallback: on unseen strings it *is* its fallback, so its
    accuracy on fresh draws measures how much of them repeat training strings.
    Returns ``predict`` (strings -> 0/1 float32).
    """
    split = check_split(split)
    if fallback is not None and not callable(fallback):
        raise TypeError(
            "fallback must be a callable (strings -> 0/1 labels) or "
            f"None, got {type(fallback).__name__}"
        )
    width = split.z_train.shape[1]
    votes: dict[tuple, list[float]] = {}
    for row, label in zip(split.z_train.tolist(), split.y_train.tolist()):
        votes.setdefault(tuple(row), []).append(float(label))
    table = {k: float(np.mean(v) >= 0.5) for k, v in votes.items()}
    majority = float(split.y_train.to(torch.float64).mean() >= 0.5)

    def predict(z: torch.Tensor) -> torch.Tensor:
        z = check_strings(z)
        if z.shape[1] != width:
            raise ValueError(
                f"z must have the training width {width}, got {z.shape[1]}"
            )
        if fallback is None:
            out = torch.full((len(z),), majority)
        else:
            out = fallback(z).to(torch.float64).clone()
        for i, row in enumerate(z.tolist()):
            hit = table.get(tuple(row))
            if hit is not None:
                out[i] = hit
        return out.to(torch.float32)

    return predict


@validate_params(n=Int(2), k=Int(0, "n"))
def subset_rule_accuracy(n: int, k: int) -> float:
    """Accuracy on D_L1 of the rule "a 1 in S and none outside S", |S| = k (chapter 7).

    Strings of fixed length ``n`` whose number s of 1s is uniform on
    {0, 1, 2} and whose 1s sit at uniformly random positions
    (:func:`rnnlib.languages.sample_dl1_balanced` without padding). The rule is
    correct on every s = 0 string, on an s = 1 string when its 1 is in S
    (probability k/n) and on an s = 2 string unless both 1s are in S
    (probability k(k-1)/(n(n-1))), so its accuracy is

        (2 + k/n - k(k-1)/(n(n-1))) / 3,

    about 3/4 at k = n/2 (0.756 at n = 16), above the best constant's 2/3.
    The rule is additive: the sign of ``-1/2 + sum_l f_l(z_l)`` with
    ``f_l(1) = 1`` for l in S, ``-(k+1)`` outside S, ``f_l(0) = 0``.
    """
    return (2.0 + k / n - k * (k - 1) / (n * (n - 1))) / 3.0


def _subset_predict(ones: torch.Tensor, mask: torch.Tensor):
    inside = ones @ mask
    outside = ones.sum(dim=1) - inside
    return (inside >= 1) & (outside == 0)


class SubsetRule(NamedTuple):
    """:func:`subset_rule` results: the fitted set of positions and its predictor."""

    #: the positions S, sorted
    subset: list[int]
    #: strings of the training width -> 0/1 labels (float32)
    predict: Callable


@validate_params(split=Instance(HeldOutSplit))
def subset_rule(
    split: HeldOutSplit,
) -> SubsetRule:
    """The additive rule "a 1 in S and none outside S", S fitted to the training strings (chapter 7).

    S is a set of positions of the (left-padded) strings, chosen for the 0-1
    accuracy on the training copies of ``split`` by greedy local search:
    from S empty (the constant "no"), toggle the one position that raises
    the training accuracy most, until none does. The family is additive
    (:func:`subset_rule_accuracy`), so this is a lower bound on the best
    additive classifier's 0-1 accuracy, not the convex surrogate that
    :func:`additive_logistic` fits. Returns ``(S, predict)``, ``S`` sorted,
    ``predict`` (strings of the training width -> 0/1 float32).
    """
    split = check_split(split)
    width = split.z_train.shape[1]
    ones = (split.z_train == 1).to(torch.float64)
    y = split.y_train.to(torch.bool)
    mask = torch.zeros(width, dtype=torch.float64)

    def accuracy(m: torch.Tensor) -> float:
        return float((_subset_predict(ones, m) == y).double().mean())

    best = accuracy(mask)
    while True:
        trials = []
        for i in range(width):
            m = mask.clone()
            m[i] = 1.0 - m[i]
            trials.append(accuracy(m))
        i = int(np.argmax(trials))
        if trials[i] <= best + 1e-12:
            break
        mask[i] = 1.0 - mask[i]
        best = trials[i]
    subset = [int(i) for i in torch.nonzero(mask).flatten()]

    def predict(z: torch.Tensor) -> torch.Tensor:
        z = check_strings(z)
        if z.shape[1] != width:
            raise ValueError(
                f"z must have the training width {width}, got {z.shape[1]}"
            )
        hit = _subset_predict((z == 1).to(torch.float64), mask)
        return hit.to(torch.float32)

    return SubsetRule(subset, predict)


def _one_hot_codes(z: torch.Tensor) -> torch.Tensor:
    codes = token_codes(z)
    return torch.nn.functional.one_hot(codes, 5).flatten(1).double()


@validate_params("ridge", "iterations", split=Instance(HeldOutSplit))
def additive_logistic(
    split: HeldOutSplit,
    *,
    ridge: float = 1e-3,
    iterations: int = 50,
) -> Callable:
    """The best additive *classifier*: logistic regression on per-position token codes (chapter 7).

    Allen-Zhu & Li's additive class with one output, ``c + sum_l f_l(x^(l))``
    (each ``f_l`` a table over the five tokens of the normalized input: zero
    padding, start, bit 0, bit 1, end), fitted to the training labels by the
    logistic loss with a small ridge ``ridge * |theta|^2 / 2`` (Newton's
    method, ``iterations`` steps), and classified by the sign. Unlike a least-
    squares fit thresholded at 1/2, it is the additive predictor chosen for the
    0-1 error's convex surrogate. Returns ``predict`` (strings -> 0/1 float32);
    strings must have the training width.
    """
    split = check_split(split)
    width = split.z_train.shape[1]
    X = _one_hot_codes(split.z_train)
    X = torch.cat([X, torch.ones(len(X), 1, dtype=X.dtype)], dim=1)
    y = split.y_train.to(torch.float64)
    theta = torch.zeros(X.shape[1], dtype=X.dtype)
    n = len(X)
    eye = torch.eye(X.shape[1], dtype=X.dtype)
    for _ in range(iterations):
        p = torch.sigmoid(X @ theta)
        grad = X.T @ (p - y) / n + ridge * theta
        hess = (X.T * (p * (1 - p))) @ X / n + ridge * eye
        step = torch.linalg.solve(hess, grad)
        theta = theta - step
        if float(step.abs().max()) < 1e-10:
            break

    def predict(z: torch.Tensor) -> torch.Tensor:
        z = check_strings(z)
        if z.shape[1] != width:
            raise ValueError(
                f"z must have the training width {width} (one table per position)"
            )
        Xz = _one_hot_codes(z)
        Xz = torch.cat([Xz, torch.ones(len(Xz), 1, dtype=Xz.dtype)], dim=1)
        return (Xz @ theta > 0).to(torch.float32)

    return predict


@validate_params(split=Instance(HeldOutSplit))
def nearest_neighbour(split: HeldOutSplit) -> Callable:
    """The 1-nearest-neighbour classifier in Hamming distance over the padded strings (chapter 7).

    Distance: the number of positions where two left-padded strings differ
    (padding is a third symbol). Ties between the nearest distinct training
    strings are settled by their majority label, and a tie of labels by the
    training majority. Returns ``predict`` (strings -> 0/1 float32).
    """
    split = check_split(split)
    zt, inv = torch.unique(split.z_train, dim=0, return_inverse=True)
    yt = torch.zeros(len(zt), dtype=torch.float64)
    yt[inv] = split.y_train.to(torch.float64)
    majority = float(split.y_train.to(torch.float64).mean() >= 0.5)

    def predict(z: torch.Tensor) -> torch.Tensor:
        z = check_strings(z)
        d = (z[:, None, :] != zt[None, :, :]).sum(dim=2)
        nearest = d == d.min(dim=1, keepdim=True).values
        vote = (nearest * yt).sum(1) / nearest.sum(1)
        out = torch.where(vote == 0.5, majority, (vote > 0.5).double())
        return out.to(torch.float32)

    return predict


@validate_params(split=Instance(HeldOutSplit))
def neighbour_coverage(split: HeldOutSplit) -> float:
    """Mean fraction of a distinct held-out string's one-bit neighbours that are training strings (chapter 7).

    The neighbours of a string of length l are the l strings of the same
    length that differ from it in one bit. For PARITY each of them has the
    opposite label, so a learner that copies its neighbours scores *below*
    chance where this coverage is high.
    """
    split = check_split(split)
    train = {tuple(r) for r in split.z_train.tolist()}
    z, _ = distinct_test(split)
    fractions = []
    for row in z.tolist():
        idx = [i for i, b in enumerate(row) if b >= 0]
        hits = 0
        for i in idx:
            flipped = list(row)
            flipped[i] = 1 - flipped[i]
            hits += tuple(flipped) in train
        fractions.append(hits / len(idx))
    return float(np.mean(fractions))


@validate_params(
    "eps_x", ridges=Seq(POSITIVE, "positive reals"), split=Instance(HeldOutSplit)
)
def kernel_learner(
    split: HeldOutSplit,
    *,
    eps_x: float = 0.5,
    ridges: Sequence[float] = (1e-6, 1e-4, 1e-3, 1e-2, 1e-1),
) -> Callable:
    """The lazy learner at infinite width on ``split``: limit-tangent-kernel ridge regression (chapter 7).

    Kernel ridge regression on labels ``2y - 1`` with
    :func:`rnnlib.ntk.limit_tangent_kernel` of the inputs encoded at ``eps_x``,
    the ridge of least leave-one-out error among ``ridges``, classified by the
    sign (as in :func:`limit_kernel_curve`). Returns ``predict``.
    """
    split = check_split(split)
    f64 = torch.float64
    xtr = encode_strings(split.z_train, eps_x, dtype=f64)
    ytr = 2 * split.y_train.to(f64) - 1
    alpha, _ = _krr_loo(limit_tangent_kernel(xtr), ytr, ridges)

    def predict(z: torch.Tensor) -> torch.Tensor:
        x = encode_strings(check_strings(z), eps_x, dtype=f64)
        return (limit_tangent_kernel(x, xtr) @ alpha > 0).to(torch.float32)

    return predict


@validate_params(
    "width", "eps_x", "out_scale", "lr_scale", "generator", split=Instance(HeldOutSplit)
)
def lazy_step(
    split: HeldOutSplit,
    width: int,
    *,
    eps_x: float = 0.5,
    out_scale: float = 0.5,
    lr_scale: float = 0.3,
    generator=None,
) -> float:
    """Chapter 5's lazy step ``lr = lr_scale / (out_scale^2 mean_n K(x_n, x_n))`` for ``split`` (chapter 7).

    ``K`` is the tangent kernel of the initialization that
    :func:`rnnlib.recognizers.train_wide_rnn` draws from ``generator``, on the
    training strings encoded at ``eps_x``: the step moves the predictor by
    about ``lr_scale`` in function space, chapter 5's lazy window.
    """
    split = check_split(split)
    model = ElmanRNN(4, width, 1, generator=derive(generator, "weights"))
    kbar = float(
        tangent_kernel_diag(model, encode_strings(split.z_train, eps_x)).mean()
    )
    return lr_scale / (out_scale**2 * kbar)


@dataclass
class LearnerScore:
    """One learner on one split, scored the way chapter 7 scores.

    ``learner``: its label; ``what``: what it is, in words; ``accuracy``: on the
    distinct held-out strings; ``balanced``: balanced accuracy there (the mean
    of the two per-class accuracies; 0.5 for any constant); ``fresh``: accuracy
    on fresh i.i.d. draws from the sampler; ``train_accuracy``: on the training
    copies; ``fresh_unseen``: accuracy on the fresh draws whose string is not a
    training string (the sampler's weights, training strings left out);
    ``flip_fraction`` and ``coupling_relative``: its laziness (chapter 5's
    measures) for the SGD runs, 0 for the kernel learner (exactly linear), NaN
    where they mean nothing.
    """

    learner: str
    what: str
    accuracy: float
    balanced: float
    fresh: float
    train_accuracy: float
    fresh_unseen: float
    flip_fraction: float = float("nan")
    coupling_relative: float = float("nan")


@validate_params(
    split=Instance(HeldOutSplit), learner=Str(), what=Str(), predict=Function()
)
def score_learner(
    learner: str,
    what: str,
    predict: Callable,
    split: HeldOutSplit,
    fresh: tuple[torch.Tensor, torch.Tensor] | None = None,
    *,
    flip_fraction: float = float("nan"),
    coupling_relative: float = float("nan"),
) -> LearnerScore:
    """Score ``predict`` (strings -> 0/1) on ``split`` and on ``fresh`` draws (chapter 7); a :class:`LearnerScore`.

    ``fresh``: ``(z, y)`` drawn i.i.d. from the sampler, or ``None`` (the
    fresh scores are then NaN).
    """
    split = check_split(split)
    z, y = distinct_test(split)
    nan = float("nan")
    parts = [(z, y), (split.z_train, split.y_train)]
    if fresh is not None:
        zf, yf = fresh
        unseen = unseen_mask(split, zf)
        parts.append((zf, yf))
    # one call of predict on every string (kernel learners pay per call)
    ok = predict(torch.cat([p[0] for p in parts])) == torch.cat(
        [p[1].to(torch.float32) for p in parts]
    )
    sizes = [len(p[0]) for p in parts]
    correct, train_ok, *fresh_ok = torch.split(ok, sizes)
    rates = [
        float(correct[m].double().mean()) for m in (y == 1, y == 0) if bool(m.any())
    ]
    fresh_acc = unseen_acc = nan
    if fresh_ok:
        fresh_acc = float(fresh_ok[0].double().mean())
        if bool(unseen.any()):
            unseen_acc = float(fresh_ok[0][unseen].double().mean())
    return LearnerScore(
        learner,
        what,
        float(correct.double().mean()),
        float(np.mean(rates)),
        fresh_acc,
        float(train_ok.double().mean()),
        unseen_acc,
        flip_fraction,
        coupling_relative,
    )


#: What each learner of :func:`compare_learners` is, in the chapter's words.
LEARNERS = {
    "fast SGD": "Elman ReLU RNN, SGD on W, A (B frozen) at a step far above "
    "chapter 5's: outside the lazy regime",
    "lazy SGD": "the same RNN and SGD at chapter 5's lazy step "
    "lr = 0.3 / (lambda_out^2 mean K)",
    "limit kernel": "the lazy limit: ridge regression with the infinite-width "
    "tangent kernel, sign",
    "GRU": "16 units, all weights trained by Adam: outside the theory",
    "additive (logistic)": "best additive classifier: logistic regression "
    "on per-position tokens",
    "count rule": "'at most one 1' or 'at least one 1', chosen on training data",
    "1-NN": "nearest training string in Hamming distance",
    "S rule": "additive: 'a 1 in S and none outside S', S chosen on "
    "training data (0-1 accuracy)",
    "memorize + constant": "training label of a training string, "
    "else the training majority",
    "memorize + count rule": "training label of a training string, else the count rule",
}


@validate_params(
    "width",
    "generator",
    learners=Seq(Choice(*LEARNERS), "learner names"),
    split=Instance(HeldOutSplit),
    fast=Instance(Mapping),
    lazy=Instance(Mapping),
    practical=Instance(Mapping),
    hidden=Int(1),
    kernel_eps=Real(0.0, 1.0, low_open=True),
)
def compare_learners(
    split: HeldOutSplit,
    fresh: tuple[torch.Tensor, torch.Tensor],
    *,
    learners: Sequence[str] = tuple(LEARNERS),
    width: int = 256,
    fast: dict | None = None,
    lazy: dict | None = None,
    practical: dict | None = None,
    hidden: int = 16,
    kernel_eps: float = 0.5,
    generator=None,
) -> list[LearnerScore]:
    """The learners ``learners`` (keys of :data:`LEARNERS`) on one split, each scored by :func:`score_learner` (chapter 7).

    ``fast``: keyword arguments of :func:`rnnlib.recognizers.train_wide_rnn`
    for the fast run; ``lazy``: ``eps_x``, ``out_scale``, ``lr_scale``,
    ``steps``, ``batch_size`` of the lazy run (its step from :func:`lazy_step`);
    the two SGD runs share their initialization (the same ``generator``
    stream). ``practical``: keyword arguments of
    :func:`rnnlib.recognizers.train_practical_rnn`. Returns one
    :class:`LearnerScore` per learner, in the order asked.
    """
    split = check_split(split)
    out = []
    for name in learners:
        what, extra = LEARNERS[name], {}
        if name in ("fast SGD", "lazy SGD"):
            kw = dict(fast or {})
            if name == "lazy SGD":
                lz = dict(lazy or {})
                lr = lazy_step(
                    split,
                    width,
                    eps_x=lz.get("eps_x", 0.5),
                    out_scale=lz.get("out_scale", 0.5),
                    lr_scale=lz.pop("lr_scale", 0.3),
                    generator=derive(generator, "sgd"),
                )
                kw = {**lz, "lr": lr}
            r = train_wide_rnn(
                split,
                width,
                generator=derive(generator, "sgd"),
                **kw,
            )
            predict = r.predict
            extra = dict(
                flip_fraction=r.flip_fraction,
                coupling_relative=r.coupling_relative,
            )
        elif name == "limit kernel":
            predict = kernel_learner(split, eps_x=kernel_eps)
            extra = dict(flip_fraction=0.0, coupling_relative=0.0)
        elif name == "GRU":
            predict = train_practical_rnn(
                split,
                hidden,
                generator=derive(generator, "gru"),
                **(practical or {}),
            ).predict
        elif name == "additive (logistic)":
            predict = additive_logistic(split)
        elif name == "count rule":
            rule, predict = count_rule(split)
            what = f"{rule} (chosen on training data)"
        elif name == "S rule":
            subset, predict = subset_rule(split)
            what = f"{LEARNERS[name]}: |S| = {len(subset)}"
        elif name == "memorize + constant":
            predict = memorizer(split)
        elif name == "memorize + count rule":
            predict = memorizer(split, count_rule(split)[1])
        else:
            predict = nearest_neighbour(split)
        out.append(score_learner(name, what, predict, split, fresh, **extra))
    return out


def mean_scores(
    runs: Sequence[Sequence[LearnerScore]],
) -> list[LearnerScore]:
    """The seed-mean of :func:`compare_learners` results (the same learners on several splits; chapter 7)."""
    runs = check_sequence(runs, "runs", "lists of LearnerScore")
    first = runs[0]
    for run in runs:
        if [s.learner for s in run] != [s.learner for s in first]:
            raise ValueError("runs must list the same learners in the same order")
    fields = (
        "accuracy balanced fresh train_accuracy fresh_unseen "
        "flip_fraction coupling_relative"
    ).split()
    out = []
    for i, s in enumerate(first):
        values = {
            f: float(np.mean([getattr(run[i], f) for run in runs])) for f in fields
        }
        whats = {run[i].what for run in runs}
        what = s.what if len(whats) == 1 else LEARNERS[s.learner]
        out.append(LearnerScore(s.learner, what, **values))
    return out


# --- pattern matching by counting: one polynomial neuron per offset ---


class PatternCountNeuron(NamedTuple):
    """:func:`pattern_count_neuron` results: the counting neuron and its scale."""

    #: the degree-k polynomial neuron
    phi: SmoothFunction
    #: the scale ``c = sqrt(3) / (2 sqrt k)``
    c: float


@validate_params("k")
def pattern_count_neuron(k: int) -> PatternCountNeuron:
    """The degree-k neuron ``phi(t) = prod_{j<k} (t/c - j) / (k - j)`` that counts a k-symbol pattern (chapter 7).

    With the window weights of :func:`rnnlib.languages.concept_representation`
    (``<w_i, x> = c m_i``, ``c = sqrt(3) / (2 sqrt k)``, ``m_i`` the symbols of
    window i that agree with the pattern), ``phi(c m) = C(m, k)``: 1 when the
    window matches (``m = k``) and 0 for ``m = 0, ..., k - 1``. So
    ``F = sum_i phi(<w_i, x>)`` is the number of occurrences, and ``F > 1/2``
    recognizes the pattern, exactly. ``phi`` is a polynomial of degree k whose
    coefficients do not depend on the length n, so ``C_s(phi, R)`` is
    independent of n, and polynomial in R (degree k) at the theorem's radius
    ``R = O(1/eps_x)``: unlike the exponential neuron, whose degree grows with
    the radius. Returns ``(phi, c)``: a :class:`rnnlib.concepts.SmoothFunction`
    (:func:`rnnlib.concepts.polynomial`) and the scale c. (Our construction.)
    """
    from ..concepts import polynomial

    c = math.sqrt(3.0) / (2.0 * math.sqrt(k))
    poly = np.polynomial.Polynomial([1.0])
    for j in range(k):
        poly = poly * np.polynomial.Polynomial([-j / (k - j), 1.0 / (c * (k - j))])
    return PatternCountNeuron(
        polynomial(list(poly.coef), name=f"pattern count, k = {k}"),
        c,
    )


@validate_params("k", R=POSITIVE)
def pattern_count_complexity(k: int, R: float) -> float:
    """``log10 C_s(phi, R)`` of :func:`pattern_count_neuron` ``(k)`` (chapter 7): the same for every length n."""
    from ..concepts import complexity_s

    phi, _ = pattern_count_neuron(k)
    return complexity_s(phi, R, log10=True)


@validate_params("n", pattern=Str())
def pattern_count_target(n: int, pattern: str) -> ConceptRepresentation:
    """Pattern matching at length n as a concept-class target of counting neurons (chapter 7; ours).

    The unit window weights of :func:`rnnlib.languages.pattern_neurons`
    ``(n, pattern)`` (one neuron per offset), each with the neuron of
    :func:`pattern_count_neuron` and output weight 1: the target is the number of
    occurrences of ``pattern``, and ``1[target > 1/2]`` is the language. Returns
    ``(target, 0.5)``.
    """
    from ..languages import pattern_neurons

    base = pattern_neurons(n, pattern)
    phi, _ = pattern_count_neuron(len(pattern))
    p = base.w.shape[1]
    return ConceptRepresentation(
        ConceptTarget(
            [[phi] * p],
            base.w,
            torch.ones(1, p, dtype=base.w.dtype),
            base.n_tokens,
            base.token_dim,
        ),
        0.5,
    )


# --- the learners of rnnlib.recognizers on one split, and over a grid of languages -----------------


@dataclass
class LanguageRuns:
    """The learners of :func:`run_learners` on one split of one language (chapter 7).

    ``language``: its name; ``n``: the maximal string length; ``split``: the
    :class:`rnnlib.languages.HeldOutSplit`; ``wide``: width m -> the wide RNN's
    :class:`rnnlib.recognizers.Recognition`; ``practical`` and ``additive``: the other learners'
    (``None`` when not run).
    """

    language: str
    n: int
    split: HeldOutSplit
    wide: dict
    practical: Recognition | None = None
    additive: Recognition | None = None

    def learners(self) -> dict:
        """Every learner that was run, by label: ``"wide RNN, m = 256"``, ``"practical RNN"``, ``"additive"``."""
        out = {f"wide RNN, m = {m}": r for m, r in self.wide.items()}
        if self.practical is not None:
            out["practical RNN"] = self.practical
        if self.additive is not None:
            out["additive"] = self.additive
        return out


def _check_widths(widths: object) -> list[int]:
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence):
        raise TypeError(
            f"widths must be a list of positive integers, got {type(widths).__name__}"
        )
    return [check_int(m, "widths[i]", minimum=1) for m in widths]


@validate_params(
    "n",
    "generator",
    hidden=Int(1),
    additive=Bool(),
    language=LANGUAGE,
    n_samples=Int(1),
    test_fraction=OPEN_UNIT,
    wide_kwargs=Instance(Mapping),
    practical_kwargs=Instance(Mapping),
    split=Instance(HeldOutSplit),
    min_length=Int(1),
)
def run_learners(
    language: str,
    n: int,
    *,
    widths: Sequence[int] = (256,),
    hidden: int | None = 16,
    additive: bool = False,
    n_samples: int = 1000,
    min_length: int | None = 1,
    test_fraction: float = 0.25,
    wide_kwargs: dict | None = None,
    practical_kwargs: dict | None = None,
    split: HeldOutSplit | None = None,
    generator: torch.Generator | int | None = None,
) -> LanguageRuns:
    """One held-out split of ``language`` (lengths ``min_length..n``), and the learners on it (chapter 7).

    The split is :func:`rnnlib.languages.language_dataset` with ``n_samples``
    strings; then a wide RNN per width (:func:`rnnlib.recognizers.train_wide_rnn` with
    ``wide_kwargs``), the practical RNN if ``hidden`` is not ``None``
    (:func:`rnnlib.recognizers.train_practical_rnn` with ``practical_kwargs``) and the additive
    baseline if ``additive``. A ``split`` given (of strings of ``language``
    of length at most ``n``) is used instead of a new one. Streams are derived
    from ``generator``.
    """
    lang = get_language(language)
    widths = _check_widths(widths)
    for kw, name in (
        (wide_kwargs, "wide_kwargs"),
        (practical_kwargs, "practical_kwargs"),
    ):
        if kw is not None and not isinstance(kw, dict):
            raise TypeError(
                f"{name} must be a dict of keyword arguments, got {type(kw).__name__}"
            )
    lo = None if min_length is None else min(min_length, n)
    if split is None:
        split = language_dataset(
            lang,
            n_samples,
            n,
            min_length=lo,
            test_fraction=test_fraction,
            generator=derive(generator, "data"),
        )
    elif not isinstance(split, HeldOutSplit):
        raise TypeError(
            f"split must be an rnnlib.languages.HeldOutSplit or None, got {type(split).__name__}"
        )
    wide = {
        m: train_wide_rnn(
            split,
            m,
            generator=derive(generator, "wide", m),
            **(wide_kwargs or {}),
        )
        for m in widths
    }
    prac = None
    if hidden is not None:
        prac = train_practical_rnn(
            split,
            hidden,
            generator=derive(generator, "practical"),
            **(practical_kwargs or {}),
        )
    return LanguageRuns(
        lang.name,
        n,
        split,
        wide,
        prac,
        additive_baseline(split) if additive else None,
    )


@validate_params(
    "generator",
    "progress",
    languages=Seq(LANGUAGE, "languages"),
    lengths=Ints(1),
)
def accuracy_table(
    languages: Sequence[str],
    lengths: Sequence[int],
    *,
    widths: Sequence[int] = (64, 256),
    generator: torch.Generator | int | None = None,
    progress: bool = False,
    **kwargs,
) -> dict:
    """:func:`run_learners` for every language and maximal length (the Tomita table of chapter 7).

    Returns ``{(language, n): LanguageRuns}``; ``kwargs`` are passed to
    :func:`run_learners`; ``progress`` shows a ``tqdm.auto`` bar.
    """
    if (
        isinstance(languages, str)
        or not isinstance(languages, Sequence)
        or len(languages) == 0
    ):
        raise ValueError(
            f"languages must be a non-empty list of language names, got {languages!r}"
        )
    if (
        isinstance(lengths, (str, bytes))
        or not isinstance(lengths, Sequence)
        or len(lengths) == 0
    ):
        raise ValueError(
            f"lengths must be a non-empty list of positive integers, got {lengths!r}"
        )
    lengths = [check_int(n, "lengths[i]", minimum=1) for n in lengths]
    names = [get_language(name).name for name in languages]
    jobs = [(name, n) for name in names for n in lengths]
    if progress:
        jobs = progress_bar(jobs, desc="languages x lengths")
    return {
        (name, n): run_learners(
            name,
            n,
            widths=widths,
            generator=derive(generator, name, n),
            **kwargs,
        )
        for name, n in jobs
    }


@validate_params("n_test", "generator", runs=Instance(LanguageRuns), n_samples=Int(1))
def length_generalization(
    runs: LanguageRuns,
    n_test: int,
    *,
    n_samples: int = 400,
    generator: torch.Generator | int | None = None,
) -> dict:
    """Accuracy of each learner of ``runs`` on balanced strings of length exactly ``n_test`` (chapter 7).

    Typically ``n_test = 2 n``: strings longer than any training string, so
    all of them are unseen. The additive baseline (one table per position)
    cannot read other lengths and is left out. Returns ``{label: accuracy}``;
    the majority baseline is 1/2 (balanced sample).
    """
    if not isinstance(runs, LanguageRuns):
        raise TypeError(
            f"runs must be an rnnlib.experiments.ch07.LanguageRuns, got {type(runs).__name__}"
        )
    z, y = sample_language(runs.language, n_samples, n_test, generator=generator)
    return {
        label: r.accuracy(z, y)
        for label, r in runs.learners().items()
        if label != "additive"
    }


# --- the learnability atlas of the limit kernel (ours) -------------------------------------------


@dataclass(frozen=True)
class LearnabilityAtlas:
    """:func:`learnability_atlas` results (chapter 7). Arrays (languages, lengths, eps_values).

    ``constant``: :func:`rnnlib.ntk.sample_constant` of the language's +-1 indicator on
    all 2^n strings under the limit tangent kernel; ``shuffled``: the same for a random
    relabelling with the language's number of positives (the indicator at a random
    permutation of the strings), the mean over ``n_shuffles`` draws; ``positives``:
    the language's share of the 2^n strings, (languages, lengths).
    """

    languages: list
    lengths: np.ndarray
    eps_values: np.ndarray
    constant: np.ndarray
    shuffled: np.ndarray
    positives: np.ndarray
    n_shuffles: int

    @property
    def ratio(self) -> np.ndarray:
        """``constant / shuffled``: below 1, the kernel's route finds structure beyond the class balance."""
        return self.constant / self.shuffled

    @validate_params(which=Choice("constant", "shuffled"))
    def bits_per_symbol(self, which: str = "constant") -> np.ndarray:
        """The least-squares slope of ``log2`` of ``which`` ("constant" or "shuffled") against n, (languages, eps_values).

        ``C ~ 2^(b n)``: ``b`` near 1 is the growth of random labels (the route needs about as many
        samples as there are strings), near 0 a polynomial growth at these lengths.
        """
        values = np.log2(getattr(self, which))
        n = self.lengths.astype(float)
        nc = n - n.mean()
        return np.einsum(
            "j,ije->ie",
            nc,
            values - values.mean(axis=1, keepdims=True),
        ) / float(nc @ nc)


def _atlas_args(languages: object, lengths: object, eps_values: object) -> tuple:
    languages = list(check_sequence(languages, "languages", "language names"))
    for name in languages:
        _check_language(name, "languages[i]")
    lengths = check_ints(lengths, "lengths", minimum=2)
    if max(lengths) > 12:
        raise ValueError(
            f"lengths must be at most 12 (a 2^n x 2^n kernel), got {max(lengths)}"
        )
    if len(lengths) < 2:
        raise ValueError("lengths must hold at least 2 lengths (a slope in n)")
    eps_values = [
        check_real(e, "eps_values[i]", low=0.0, high=1.0, low_open=True)
        for e in check_sequence(eps_values, "eps_values", "reals in (0, 1]")
    ]
    return languages, lengths, eps_values


@validate_params(
    "generator",
    n_shuffles=Int(1),
    languages=Seq(LANGUAGE, "languages"),
    lengths=Ints(1),
    eps_values=Seq(PARAMS["eps_x"], "input scales"),
)
def learnability_atlas(
    languages: Sequence[str],
    lengths: Sequence[int],
    eps_values: Sequence[float],
    *,
    n_shuffles: int = 20,
    generator=0,
) -> LearnabilityAtlas:
    """The sample-size constant of the lazy learner's Rademacher route, per language, length and eps_x (chapter 7, ours).

    For each length n: all 2^n strings (:func:`rnnlib.languages.all_strings`), encoded at
    each ``eps_x`` (:func:`rnnlib.languages.encode_strings`, float64), their limit tangent
    kernel (:func:`rnnlib.ntk.limit_tangent_kernel`), and for each language
    :func:`rnnlib.ntk.sample_constant` of its +-1 indicator, beside the mean over
    ``n_shuffles`` random permutations of that indicator (the same number of positives,
    no structure; permutations from ``derive(generator, "shuffle", n, k)``). Lengths up to
    12 (a 4096 x 4096 kernel). Returns a :class:`LearnabilityAtlas`.
    """
    languages, lengths, eps_values = _atlas_args(languages, lengths, eps_values)
    shape = (len(languages), len(lengths), len(eps_values))
    constant, shuffled = np.zeros(shape), np.zeros(shape)
    positives = np.zeros(shape[:2])
    f64 = torch.float64
    for j, n in enumerate(lengths):
        z = all_strings(n)
        labels = [get_language(name).membership(z).to(f64) for name in languages]
        perms = [
            torch.randperm(
                len(z),
                generator=derive(generator, "shuffle", n, k),
            )
            for k in range(n_shuffles)
        ]
        for i, y in enumerate(labels):
            positives[i, j] = float(y.mean())
        for e, eps in enumerate(eps_values):
            K = limit_tangent_kernel(encode_strings(z, eps, dtype=f64))
            # every indicator and every shuffle in one solve
            F = torch.stack(
                [
                    g
                    for y in labels
                    for g in (
                        2 * y - 1,
                        *((2 * y - 1)[p] for p in perms),
                    )
                ],
                dim=1,
            )
            c = sample_constant(K, F).reshape(len(labels), -1)
            constant[:, j, e] = c[:, 0]
            shuffled[:, j, e] = c[:, 1:].mean(axis=1)
    return LearnabilityAtlas(
        languages,
        np.asarray(lengths),
        np.asarray(eps_values, dtype=float),
        constant,
        shuffled,
        positives,
        n_shuffles,
    )


class WalshSpectrum(NamedTuple):
    """:func:`walsh_spectrum` results (chapter 7): the limit kernel on all 2^n strings in the Walsh basis.

    ``degree_mass[j]``: (eps_values, n + 1) for the j-th length n, the share of the
    kernel's trace on the characters of each degree ``|S| = 0..n``;
    ``off_diagonal``: (lengths, eps_values), ``||H K H - diag||_F / ||H K H||_F`` with
    ``H`` the characters (0 when the kernel is a function of ``z xor z'``);
    ``constant``: (languages, lengths, eps_values), the atlas's sample-size constant
    from the Walsh coefficients, ``sup K sum_S fhat(S)^2 / lambda_S / E f^2``;
    ``degree_mean[j]``: (eps_values, n + 1), the mean eigenvalue's share of the trace
    per degree (``degree_mass`` over the number of characters of that degree);
    ``parity_share``: (lengths, eps_values), the top character's share of the trace
    (PARITY's indicator is minus that character); ``min_share``: the smallest
    eigenvalue's share. ``parity_share == min_share``: no function with the same
    ``E f^2`` has a larger constant than PARITY's.
    """

    languages: list
    lengths: np.ndarray
    eps_values: np.ndarray
    degree_mass: list
    degree_mean: list
    off_diagonal: np.ndarray
    constant: np.ndarray
    parity_share: np.ndarray
    min_share: np.ndarray


@validate_params(
    languages=Seq(LANGUAGE, "languages"),
    lengths=Ints(1),
    eps_values=Seq(PARAMS["eps_x"], "input scales"),
)
def walsh_spectrum(
    languages: Sequence[str],
    lengths: Sequence[int],
    eps_values: Sequence[float],
) -> WalshSpectrum:
    """The limit tangent kernel on all 2^n strings of length n, in the Walsh basis (chapter 7, ours).

    The characters ``chi_S(z) = (-1)^(sum_(i in S) z_i)`` of the hypercube are an
    orthogonal basis of the functions on the 2^n strings. Every string of length n
    has the same token norms, and the inner product of two encoded strings at step
    l depends only on whether their l-th symbols agree, so the limit kernel
    (:func:`rnnlib.ntk.limit_tangent_kernel`, whose recursion reads only these inner
    products) is a function of ``z xor z'``: a convolution on the group, diagonal in
    the characters with eigenvalue ``2^n lambda_S``, ``lambda_S = chi_S^T K chi_S /
    4^n``. Then ``||f||_K^2 = sum_S fhat(S)^2 / lambda_S`` with ``fhat(S) = chi_S^T f
    / 2^n``, and the atlas's constant (:func:`rnnlib.ntk.sample_constant`) is
    ``sup K sum_S fhat(S)^2 / lambda_S / E f^2``. Measured here, not assumed: the
    off-diagonal share of the transformed kernel and the constant from the
    coefficients, to compare with :func:`learnability_atlas`. Returns a
    :class:`WalshSpectrum`.
    """
    languages, lengths, eps_values = _atlas_args(languages, lengths, eps_values)
    f64 = torch.float64
    shape = (len(lengths), len(eps_values))
    off, top, low = (np.zeros(shape) for _ in range(3))
    constant = np.zeros((len(languages), *shape))
    masses, means = [], []
    for j, n in enumerate(lengths):
        z = all_strings(n)
        size = len(z)
        # chi[S, x]: the subsets S are the strings themselves
        chi = 1.0 - 2.0 * ((z @ z.T) % 2).to(f64)
        degree = z.sum(dim=1)
        F = torch.stack(
            [2 * get_language(name).membership(z).to(f64) - 1 for name in languages],
            dim=1,
        )
        fhat = chi @ F / size
        mass = np.zeros((len(eps_values), n + 1))
        counts = np.array([math.comb(n, k) for k in range(n + 1)])
        for e, eps in enumerate(eps_values):
            K = limit_tangent_kernel(encode_strings(z, eps, dtype=f64))
            Kw = chi @ K @ chi.T / size**2
            lam = Kw.diagonal()
            off[j, e] = float((Kw - torch.diag(lam)).norm() / Kw.norm())
            total = float(lam.sum())
            mass[e] = [float(lam[degree == k].sum()) / total for k in range(n + 1)]
            top[j, e] = float(lam[degree == n].sum()) / total
            low[j, e] = float(lam.min()) / total
            norm2 = (fhat.square() / lam[:, None]).sum(dim=0)
            constant[:, j, e] = (
                float(K.diagonal().max()) * norm2 / F.square().mean(dim=0)
            ).numpy()
        masses.append(mass)
        means.append(mass / counts)
    return WalshSpectrum(
        languages,
        np.asarray(lengths),
        np.asarray(eps_values, dtype=float),
        masses,
        means,
        off,
        constant,
        top,
        low,
    )


@validate_params(
    "n_eval",
    "eps_x",
    Relation("n_train + n_eval <= 2 ** n", "distinct strings of length n"),
    "generator",
    "dtype",
    n=Int(2),
    n_train=Int(2),
    language=LANGUAGE,
)
def language_task(
    language: str,
    n: int,
    n_train: int,
    n_eval: int,
    *,
    eps_x: float,
    generator: int,
    dtype: torch.dtype = torch.float32,
) -> RegressionTask:
    """A language as a regression task on distinct strings of one length (chapter 7).

    The 2^n strings of length ``n`` in the order of ``torch.randperm`` from
    ``derive(generator, "strings")``: the first ``n_train`` train, the next
    ``n_eval`` evaluate (no string in both); labels ``+-1`` (the indicator,
    ``2 y - 1``, shape (n, 1)); inputs :func:`rnnlib.languages.encode_strings` at
    ``eps_x``. The task of :func:`rnnlib.experiments.ch05.against_limit` on a language.
    """
    _check_language(language, "language")
    z = all_strings(n)
    z = z[torch.randperm(len(z), generator=derive(generator, "strings"))]
    z = z[: n_train + n_eval]
    y = 2 * get_language(language).membership(z).to(dtype) - 1
    x = encode_strings(z, eps_x, dtype=dtype)
    return RegressionTask(
        x[:n_train],
        y[:n_train, None],
        x[n_train:],
        y[n_train:, None],
    )


# ---------------------------------------------------------------------------
# The recorded run of chapter 7 (make record CH=07): the lazy learner at finite
# width against its limit on a language

CHAPTER = 7
#: The recorded run: doubled networks on contains-101 against the limit learner.
RECORD: dict = {
    "language": "pattern:101",
    "n": 10,
    "n_train": 256,
    "n_eval": 256,
    "eps_x": 0.5,
    "widths": [128, 256, 512, 1024],
    "seeds": list(range(8)),
    "steps": 1000,
    "out_scale": 0.5,
    "lr_scale": 0.3,
}
#: The record at a size that takes seconds (CI runs it; never written over the record).
SMOKE: dict = {
    **RECORD,
    "n": 6,
    "n_train": 16,
    "n_eval": 16,
    "widths": [8, 16],
    "seeds": [0, 1],
    "steps": 20,
}
# the short float64 run whose outputs fingerprint the code path
_FP = {
    "n": 6,
    "n_train": 16,
    "n_eval": 16,
    "widths": [8, 16],
    "seeds": [0, 1],
    "steps": 20,
}
_LIMIT_ROWS = ("distance", "accuracy", "agreement", "eval_loss")


def _check_limit_config(config: object) -> dict:
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a mapping like RECORD, got {type(config).__name__}"
        )
    missing = sorted(set(RECORD) - set(config))
    if missing:
        raise ValueError(f"config must have the keys of RECORD; missing {missing}")
    _check_language(config["language"], "config['language']")
    for key in ("widths", "seeds"):
        check_ints(config[key], f"config[{key!r}]", minimum=0)
    return dict(config)


def _limit_runs(
    cfg: Mapping,
    *,
    dtype: torch.dtype = torch.float32,
    progress: bool = False,
) -> dict:
    out: dict = {
        k: []
        for k in (
            *_LIMIT_ROWS,
            "limit_accuracy",
            "limit_eval_loss",
            "constant",
        )
    }
    for seed in progress_bar(cfg["seeds"], enabled=progress, desc="record runs"):
        task = language_task(
            cfg["language"],
            cfg["n"],
            cfg["n_train"],
            cfg["n_eval"],
            eps_x=cfg["eps_x"],
            generator=seed,
            dtype=dtype,
        )
        r = against_limit(
            task,
            cfg["widths"],
            seed,
            out_scale=cfg["out_scale"],
            steps=cfg["steps"],
            lr_scale=cfg["lr_scale"],
        )
        ye = task.y_eval[:, 0].double().numpy() > 0
        net, lim = r.predictions > 0, r.limit_predictions > 0
        rows = {
            "distance": r.distance,
            "accuracy": (net == ye).mean(axis=1),
            "agreement": (net == lim).mean(axis=1),
            "eval_loss": r.eval_loss,
        }
        for k in _LIMIT_ROWS:
            out[k].append([float(v) for v in rows[k]])
        out["limit_accuracy"].append(float((lim == ye).mean()))
        out["limit_eval_loss"].append(float(r.limit_eval_loss))
        out["constant"].append(float(max(ye.mean(), 1 - ye.mean())))
    return out


@validate_params("progress", config=Instance(Mapping))
def run_limit_record(config: Mapping | None = None, *, progress: bool = False) -> dict:
    """The recorded run of chapter 7 (``make record CH=07``): lazy SGD at finite width against its limit on a language.

    For each seed of ``config["seeds"]`` (:data:`RECORD` by default), the task
    :func:`language_task` and :func:`rnnlib.experiments.ch05.against_limit` at
    ``widths`` (doubled networks, zero initial output). Returns ``{field: [[value
    per width] per seed]}`` for ``distance`` (relative RMS distance of the held-out
    predictions from the limit learner's), ``accuracy`` (the sign's held-out
    accuracy), ``agreement`` (the share of held-out strings where the network's
    sign is the limit learner's) and ``eval_loss``; and one value per seed of
    ``limit_accuracy``, ``limit_eval_loss`` and ``constant`` (the best constant's
    held-out accuracy).
    """
    cfg = _check_limit_config(RECORD if config is None else config)
    return _limit_runs(cfg, progress=progress)


@validate_params(config=Instance(Mapping))
def limit_fingerprint(config: Mapping | None = None) -> dict:
    """A short deterministic CPU run of the record's code path, in float64 (chapter 7).

    :func:`run_limit_record`'s runs at two seeds, strings of length 6 (16 to train,
    16 to evaluate), widths 8 and 16 and 20 steps, with ``config``'s other settings;
    returns their numbers and ``config`` itself (:func:`check_limit_record`).
    """
    cfg = _check_limit_config(RECORD if config is None else config)
    return {
        "config": copy.deepcopy(cfg),
        **_limit_runs({**cfg, **_FP}, dtype=torch.float64),
    }


@validate_params("progress", smoke=Bool(), path=PathLike(), command=Str(), jobs=Int(1))
def make_limit_record(
    path: str | Path | None = None,
    *,
    smoke: bool = False,
    progress: bool = False,
    command: str | None = None,
    jobs: int = 1,
) -> Path:
    """Run the record (:data:`RECORD`, or :data:`SMOKE` with ``smoke``) and write it (``rnnlib.records.build_record``).

    ``path`` defaults to ``chapters/records/ch07.json`` for the full record; a smoke
    record must be given a path. ``jobs`` is accepted for ``make record`` and
    ignored (one process, about 5 CPU-minutes). Returns the path written.
    """
    return records.build_record(
        CHAPTER,
        path,
        config=SMOKE if smoke else RECORD,
        run=lambda cfg: run_limit_record(cfg, progress=progress),
        fingerprint=limit_fingerprint,
        smoke=smoke,
        command=command,
    )


@validate_params(record=Instance(Mapping))
def check_limit_record(record: Mapping) -> float:
    """Re-run :func:`limit_fingerprint` at the record's config and compare (``rnnlib.records.check_live_fingerprint``).

    Raises :class:`rnnlib.records.StaleRecordError` when the code path or the config
    changed since the record was made. Returns the largest relative difference.
    """
    return records.check_live_fingerprint(record, CHAPTER, limit_fingerprint)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m rnnlib.experiments.ch07 --record | --smoke [--out PATH]``."""
    records.record_cli(
        argv,
        chapter=CHAPTER,
        make=lambda out, smoke, **kw: make_limit_record(
            out, smoke=smoke, progress=not smoke, **kw
        ),
        cost="about 5 CPU-minutes",
    )


if __name__ == "__main__":
    main()
