"""Progress bars of rnnlib's long loops, and the switch that keeps them off a static page.

Every long loop of the library (training runs, sweeps) shows a ``tqdm.auto`` bar when
its ``progress`` argument is true. A bar is a live widget: an executed notebook that is
rendered later (the HTML book, nbconvert) keeps only its first text frame,
``0%| | 0/N``, frozen above the cell's figure. So the machinery that executes the book
(``booktools.execute``, the nbval run) starts its kernels with ``RNNLIB_PROGRESS=0``,
and :func:`progress_bar` then returns the iterable unchanged: the static page has no
bar, a reader's notebook has one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

#: The environment variable that switches every bar off when set to "0".
PROGRESS_ENV = "RNNLIB_PROGRESS"


def bars_enabled() -> bool:
    """False when ``RNNLIB_PROGRESS=0`` (a build that renders the notebook later), else True."""
    return os.environ.get(PROGRESS_ENV, "1").strip() != "0"


def progress_bar(
    iterable: Iterable[T],
    *,
    enabled: bool = True,
    desc: str | None = None,
    leave: bool = False,
) -> Iterable[T]:
    """``iterable`` wrapped in a ``tqdm.auto`` bar, or unchanged when ``enabled`` is false or bars are off (:func:`bars_enabled`)."""
    if not (enabled and bars_enabled()):
        return iterable
    return tqdm(iterable, desc=desc, leave=leave)
