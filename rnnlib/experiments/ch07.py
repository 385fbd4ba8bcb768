"""Chapter 7's sample-complexity sweep of the lazy learner at infinite width.

Theorem 3.1 of Panigrahi & Goyal describes SGD in the lazy regime, whose limit is
kernel regression with the infinite-width tangent kernel (:mod:`rnnlib.ntk`). So
the question "how many samples does the theorem's learner need for this
language?" can be asked without training anything: fit kernel ridge regression
on +-1 labels with :func:`rnnlib.ntk.limit_tangent_kernel` and classify by the
sign. :func:`limit_kernel_curve` does it for growing training sizes N and
scores it the way the chapter does (issue 20):

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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._rng import derive
from .._validation import check_int, check_real, check_sequence
from ..languages import (
    encode_strings,
    get_language,
    held_out_split,
    sample_dl1_balanced,
    sample_language,
)
from ..ntk import limit_tangent_kernel

__all__ = ["KernelCurve", "limit_kernel_curve", "draw_strings"]


def draw_strings(
    language: str, n_samples: int, n: int, *, generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Labelled strings of chapter 7's sampler for ``language`` (chapter 7).

    ``"dl1"``: :func:`rnnlib.languages.sample_dl1_balanced` (number of 1s
    uniform on {0, 1, 2}, lengths 2..n); any other language:
    :func:`rnnlib.languages.sample_language` at fixed length n (balanced, half
    the negatives one flip from a positive). Returns ``(z, y)``.
    """
    n_samples = check_int(n_samples, "n_samples", minimum=2)
    n = check_int(n, "n", minimum=2)
    if language == "dl1":
        z = sample_dl1_balanced(
            n_samples, n, min_length=2, generator=generator
        )
        return z, get_language("dl1")(z)
    return sample_language(
        language, n_samples, n, generator=generator
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
    if not isinstance(language, str):
        raise TypeError(
            f"language must be a language name (str), got {type(language).__name__}"
        )
    try:
        get_language(language)
    except ValueError as err:
        raise ValueError(
            f"language {str(err).removeprefix('name: ')}"
        ) from None
    n = check_int(n, "n", minimum=2)
    sizes = [
        check_int(s, "sizes[i]", minimum=4)
        for s in check_sequence(sizes, "sizes", "integers")
    ]
    seeds = check_int(seeds, "seeds", minimum=1)
    eps_x = check_real(
        eps_x, "eps_x", low=0.0, high=1.0, low_open=True
    )
    test_fraction = check_real(
        test_fraction,
        "test_fraction",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    )
    n_fresh = check_int(n_fresh, "n_fresh", minimum=2)
    ridges = [
        check_real(r, "ridges[i]", low=0.0, low_open=True)
        for r in check_sequence(ridges, "ridges", "positive reals")
    ]
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
            alpha, lam = _krr_loo(
                limit_tangent_kernel(xtr), ytr, ridges
            )
            zte, inv = torch.unique(
                split.z_test, dim=0, return_inverse=True
            )
            yte = torch.zeros(len(zte), dtype=f64)
            yte[inv] = split.y_test.to(f64)
            pred = (
                limit_tangent_kernel(
                    encode_strings(zte, eps_x, dtype=f64), xtr
                )
                @ alpha
                > 0
            )
            correct = (pred.to(f64) == yte).to(f64)
            pos = yte == 1
            rates = [
                float(correct[m].mean())
                for m in (pos, ~pos)
                if bool(m.any())
            ]
            pf = limit_tangent_kernel(xf, xtr) @ alpha > 0
            yf64 = yf.to(f64)
            fit = limit_tangent_kernel(xtr) @ alpha > 0
            out["n_train"][s, j] = len(ytr)
            out["accuracy"][s, j] = float(correct.mean())
            out["balanced"][s, j] = float(np.mean(rates))
            p = float(yte.mean())
            out["constant"][s, j] = max(p, 1 - p)
            out["fresh"][s, j] = float(
                (pf.to(f64) == yf64).to(f64).mean()
            )
            q = float(yf64.mean())
            out["fresh_constant"][s, j] = max(q, 1 - q)
            out["train_acc"][s, j] = float(
                (fit.to(f64) == split.y_train.to(f64))
                .to(f64)
                .mean()
            )
            out["ridge"][s, j] = lam
    return KernelCurve(language, n, np.array(sizes), **out)
