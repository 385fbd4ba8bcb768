"""Binary languages, their samplers and the token embedding on the sphere (chapters 2 and 7).

A binary string ``z in {0,1}^n`` enters the RNN as a *true sequence* of
``n = L - 2`` tokens (Definition 3.1 of Panigrahi & Goyal 2021: unit vectors
in R^(d-1) whose last coordinate is 1/2). The embedding used throughout the
book, with d - 1 = 3, is::

    z  ->  ( sqrt(3)/2 * z,  sqrt(3)/2 * (1 - z),  1/2 ),

a unit vector for z in {0, 1} (3/4 + 1/4 = 1) with last coordinate 1/2. It is
a reconstruction for the book (the paper only says that tokens are "possibly
represented as a vector"); any injective map onto such unit vectors would do.

``D_L1`` is the language of strings with exactly one 1 (Sec. 5 of the paper).
"""

from __future__ import annotations

import math

import torch

from ._rng import as_generator
from ._validation import check_dtype, check_int, check_real, check_tensor

__all__ = ["embed_binary", "dl1_indicator", "count_ones", "sample_binary_strings", "sample_dl1_balanced"]


def _check_binary(z: object, name: str = "z") -> torch.Tensor:
    z = check_tensor(z, name, ndim=2, floating=False)
    if bool((~((z == 0) | (z == 1))).any()):
        raise ValueError(f"{name} must hold only 0s and 1s (binary strings, shape (batch, n))")
    return z


def embed_binary(z: torch.Tensor, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Embed binary strings ``z`` (batch, n) as true sequences (batch, n, 3) (chapters 2 and 7).

    Token ``z_i`` becomes ``(sqrt(3)/2 z_i, sqrt(3)/2 (1 - z_i), 1/2)``: a unit
    vector with last coordinate 1/2, as Definition 3.1 requires, so the result
    can be passed to :func:`rnnlib.elman.normalize_sequence` (then d = 4).
    """
    check_dtype(dtype)
    z = _check_binary(z).to(dtype)
    c = math.sqrt(3.0) / 2.0
    return torch.stack([c * z, c * (1 - z), torch.full_like(z, 0.5)], dim=2)


def count_ones(z: torch.Tensor) -> torch.Tensor:
    """The number of 1s, ``s = sum_i z_i``, of each string in ``z`` (batch, n); returns (batch,) int64."""
    return _check_binary(z).to(torch.int64).sum(dim=1)


def dl1_indicator(z: torch.Tensor) -> torch.Tensor:
    """``D_L1(z) = 1[z has exactly one 1]`` for binary strings ``z`` (batch, n); returns (batch,) float (chapter 2)."""
    return (count_ones(z) == 1).to(torch.get_default_dtype())


def sample_binary_strings(
    batch_size: int, n: int, *, p: float = 0.5, generator: torch.Generator | int | None = None
) -> torch.Tensor:
    """``batch_size`` strings of ``n`` i.i.d. Bernoulli(p) bits; returns int64 (batch_size, n)."""
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    n = check_int(n, "n", minimum=1)
    p = check_real(p, "p", low=0.0, high=1.0)
    gen = as_generator(generator)
    return (torch.rand(batch_size, n, generator=gen) < p).to(torch.int64)


def sample_dl1_balanced(
    batch_size: int, n: int, *, max_ones: int = 2, generator: torch.Generator | int | None = None
) -> torch.Tensor:
    """Binary strings whose number of 1s is uniform on {0, 1, ..., max_ones} (chapter 2).

    Under uniform random bits a string of length n is in D_L1 with
    probability n / 2^n, so "always say no" is nearly perfect for long
    strings. Here the count ``s`` of 1s is drawn uniformly from
    ``{0, ..., max_ones}`` and the s positions uniformly without replacement,
    so that the language stays balanced (a third of the strings in D_L1 for
    ``max_ones = 2``) at every length. Returns int64 (batch_size, n).
    """
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    n = check_int(n, "n", minimum=1)
    max_ones = check_int(max_ones, "max_ones", minimum=1, maximum=n)
    gen = as_generator(generator)
    counts = torch.randint(0, max_ones + 1, (batch_size,), generator=gen)
    ranks = torch.rand(batch_size, n, generator=gen).argsort(dim=1).argsort(dim=1)  # a random permutation per row
    return (ranks < counts[:, None]).to(torch.int64)
