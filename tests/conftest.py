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

    monkeypatch.setattr(
        _core, "_sealed", lambda sealed: contextlib.nullcontext()
    )
