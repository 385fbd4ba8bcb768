"""Shared pytest configuration: a non-interactive matplotlib backend.

Threads are not set here: torch takes them from ``OMP_NUM_THREADS`` (the Makefile's, one
by default; ARCHITECTURE.md, "Threads").
"""

import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture
def unsealed(monkeypatch):
    """Exercise checkers without sealing the library (``rnnlib.homework._core``).

    A checker seals the library functions an exercise asks the student to write
    while the student's function runs (tests/test_homework_checkers.py tests
    that). Tests that hand a checker the library's own function as the correct
    answer, or a wrong answer built on it, turn the seal off with this fixture.
    """
    import contextlib

    from rnnlib.homework import _core

    monkeypatch.setattr(_core, "_sealed", lambda sealed: contextlib.nullcontext())


@pytest.fixture
def sin_target():
    """A target of the concept class for chapter 4's construction: ``sin`` of a random unit direction.

    ``sin_target(L, d, seed=5)`` is a :class:`rnnlib.concepts.ConceptTarget` on the
    ``(L - 2) (d - 1)`` coordinates the construction reads, with one output.
    """
    import torch

    from rnnlib.concepts import ConceptTarget, get_function

    def make(L, d, seed=5):
        w = torch.randn(
            1,
            1,
            (L - 2) * (d - 1),
            generator=torch.Generator().manual_seed(seed),
        )
        return ConceptTarget(
            [[get_function("sin")]],
            w / w.norm(),
            torch.ones(1, 1),
            L - 2,
            d - 1,
        )

    return make
