"""Randomness in rnnlib: one convention (CONTRIBUTING.md, "Randomness").

Every public function that draws takes ``generator: torch.Generator | int | None``:

* an ``int`` is a seed, ``None`` means seed 0 (so defaults are reproducible);
* a ``torch.Generator`` is used (and advanced) as it is.

When one call needs several independent streams (one per network of a sweep,
one for the data and one for the weights, ...), they are *derived*, never made
by arithmetic on the seed such as ``seed + k`` or ``10_000 + seed`` (which makes
neighbouring seeds share streams: seed 1's second network is seed 2's first).
:func:`derive` maps ``(seed, name, index, ...)`` through
``numpy.random.SeedSequence`` (entropy = the seed, spawn key = the names,
strings hashed with CRC-32), whose outputs for distinct keys are independent
for practical purposes.
"""

from __future__ import annotations

import numbers
import zlib

import numpy as np
import torch

__all__ = ["as_generator", "as_seed", "derive", "derive_seed"]

_MAX_SEED = 2**63 - 1


def as_generator(
    generator: torch.Generator | int | None,
    name: str = "generator",
) -> torch.Generator:
    """Turn a seed, a generator or ``None`` into a ``torch.Generator``.

    ``None`` means seed 0, so that every draw in rnnlib is reproducible by
    default; pass an explicit seed or generator to get other draws.
    """
    if generator is None:
        return torch.Generator().manual_seed(0)
    if isinstance(generator, torch.Generator):
        return generator
    if isinstance(generator, numbers.Integral) and not isinstance(generator, bool):
        if not 0 <= int(generator) <= _MAX_SEED:
            raise ValueError(
                f"{name} must be a seed in [0, 2**63 - 1], got {int(generator)}"
            )
        return torch.Generator().manual_seed(int(generator))
    raise TypeError(
        f"{name} must be a torch.Generator, an int seed or None, got {type(generator).__name__}"
    )


def as_seed(
    generator: torch.Generator | int | None,
    name: str = "generator",
) -> int:
    """The integer root of a family of derived streams.

    An int seed is returned as it is (``None`` is 0); a ``torch.Generator``
    gives one 63-bit draw (so it advances by one draw). Sweeps call this once
    and then :func:`derive` every stream from the result, so that their
    streams do not depend on the order in which they are drawn.
    """
    if isinstance(generator, torch.Generator):
        return int(torch.randint(0, _MAX_SEED, (1,), generator=generator).item())
    return as_generator(generator, name).initial_seed()


def _key(part: object, name: str) -> int:
    if isinstance(part, str):
        return zlib.crc32(part.encode("utf-8"))
    if (
        isinstance(part, numbers.Integral)
        and not isinstance(part, bool)
        and int(part) >= 0
    ):
        return int(part)
    raise TypeError(
        f"{name}: stream names must be strings or non-negative ints, got {part!r}"
    )


def derive_seed(
    generator: torch.Generator | int | None,
    *stream: str | int,
    name: str = "generator",
) -> int:
    """The 63-bit seed of sub-stream ``stream`` of ``generator``.

    For an int seed ``s`` (``None`` is 0) this is a pure function of
    ``(s, stream)``: ``SeedSequence(s, spawn_key=stream).generate_state``.
    For a ``torch.Generator`` one 63-bit number is drawn from it and used as
    the entropy, so the generator advances by one draw.
    """
    if isinstance(generator, torch.Generator):
        entropy = int(torch.randint(0, _MAX_SEED, (1,), generator=generator).item())
    elif generator is None:
        entropy = 0
    else:
        entropy = as_generator(generator, name).initial_seed()
    key = tuple(_key(p, name) for p in stream)
    state = np.random.SeedSequence(entropy, spawn_key=key).generate_state(
        2, dtype=np.uint32
    )
    return (int(state[0]) << 31 | int(state[1]) >> 1) & _MAX_SEED


def derive(
    generator: torch.Generator | int | None,
    *stream: str | int,
    name: str = "generator",
) -> torch.Generator:
    """A fresh ``torch.Generator`` for sub-stream ``stream`` of ``generator`` (see :func:`derive_seed`).

    Example: ``derive(seed, "weights", k)`` for the k-th network of a sweep and
    ``derive(seed, "data")`` for its inputs; the two never overlap, and seed 1's
    streams are unrelated to seed 2's.
    """
    return torch.Generator().manual_seed(derive_seed(generator, *stream, name=name))
