"""Chapter 11's measurements that combine several theory modules: chapter 9's inference
bound at a trained model's own constants.

Used by chapter 11 (``from rnnlib.experiments import ch11``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._validation import check_int, check_real
from ..next_step import NextStepModel
from ..stability import certify, input_lipschitz
from ..truncation import inference_bound, k_for_epsilon

__all__ = ["inference_bound_at"]


def inference_bound_at(
    model: NextStepModel,
    seqs: Sequence[np.ndarray],
    k: int,
    *,
    eps: float = 0.01,
) -> dict[str, float]:
    """Chapter 9's truncation bound evaluated at a trained model's own constants (chapter 11).

    For a tanh RNN core: ``lambda = ||W||_2`` (must be < 1), ``L = ||U||_2``,
    ``B = max_t ||x_t||_2`` over ``seqs``, the bound
    ``lambda^k L B / (1 - lambda)`` on ``||h_t - h^k_t||_2`` and the context
    ``k_eps`` it needs for ``eps``; ``diameter = 2 sqrt(H)``, the largest
    distance two tanh states can have, so a bound above it says nothing
    (``vacuous``). For an LSTM core only ``lambda`` (the certified
    ``lambda_inf``, in the max-norm) and ``l2_iterations`` (steps before an
    iterate contracts in l2, ``sqrt(2H) lambda_inf^r < 1``) are returned, with
    the other entries NaN. Returns a dict of floats (``vacuous`` as 0/1).
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(
            f"model must be a NextStepModel, got {type(model).__name__}"
        )
    k = check_int(k, "k", minimum=1)
    eps = check_real(eps, "eps", low=0.0, low_open=True)
    if (
        isinstance(seqs, (str, bytes))
        or not isinstance(seqs, Sequence)
        or len(seqs) == 0
    ):
        raise ValueError(
            "seqs must be a non-empty list of sequences"
        )
    cert = certify(model.core, x_bound=1.0)
    if not cert.stable:
        raise ValueError(
            f"model must be certifiably stable (lambda < 1), got lambda = {cert.lam:.4g}"
        )
    H = model.core.hidden_dim
    nan = math.nan
    if model.kind == "lstm":
        return {
            "lambda": float(cert.lam),
            "l2_iterations": float(cert.l2_iterations),
            "L": nan,
            "B": nan,
            "bound": nan,
            "diameter": 2 * math.sqrt(2 * H),
            "k_eps": nan,
            "vacuous": 1.0,
        }
    B = max(
        float(
            np.sqrt(
                (np.asarray(q, dtype=float) ** 2).sum(axis=1)
            ).max()
        )
        for q in seqs
    )
    L = input_lipschitz(model.core)
    bound = inference_bound(cert.lam, k, L, B)
    diameter = 2 * math.sqrt(H)
    return {
        "lambda": float(cert.lam),
        "l2_iterations": 1.0,
        "L": float(L),
        "B": B,
        "bound": float(bound),
        "diameter": diameter,
        "k_eps": float(k_for_epsilon(eps, cert.lam, L, B)),
        "vacuous": float(bound >= diameter),
    }
