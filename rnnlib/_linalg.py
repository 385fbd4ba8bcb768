"""Linear algebra shared by several chapters' modules (pseudo, stability)."""

from __future__ import annotations

import torch

from ._validation import as_generator, check_int, check_tensor

__all__ = ["spectral_norm"]


def spectral_norm(
    W: torch.Tensor, *, n_iter: int = 30, exact_up_to: int = 512, generator: torch.Generator | int | None = None
) -> float:
    """``||W||_2``, the largest singular value of a matrix (chapters 3 and 8).

    Exact (``torch.linalg.matrix_norm(W, ord=2)``) when the smaller side of
    ``W`` is at most ``exact_up_to``; otherwise estimated by ``n_iter`` steps of
    power iteration on ``W^T W``, which approaches ``||W||_2`` from below and,
    for an m x m Gaussian matrix, lands within about 1% after 30 steps (an
    exact SVD of a 4096 x 4096 matrix takes seconds on 2 cores, power
    iteration a fraction of a second).
    """
    W = check_tensor(W, "W", ndim=2).detach()
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    exact_up_to = check_int(exact_up_to, "exact_up_to", minimum=0)
    if min(W.shape) <= exact_up_to:
        return float(torch.linalg.matrix_norm(W, ord=2))
    v = torch.randn(W.shape[1], generator=as_generator(generator), dtype=W.dtype)
    for _ in range(n_iter):
        v = W.transpose(0, 1) @ (W @ v)
        v = v / v.norm()
    return float((W @ v).norm())
