"""rnnlib._progress: bars in a reader's notebook, none on a page rendered after execution."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from tqdm.auto import tqdm

import rnnlib
from rnnlib._progress import (
    PROGRESS_ENV,
    bars_enabled,
    progress_bar,
)


def test_bars_follow_the_argument_and_the_environment(monkeypatch):
    items = [1, 2, 3]
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    assert bars_enabled()
    bar = progress_bar(items, desc="x")
    assert isinstance(bar, tqdm) and list(bar) == items
    bar.close()
    assert progress_bar(items, enabled=False) is items
    monkeypatch.setenv(PROGRESS_ENV, "0")
    assert not bars_enabled()
    assert progress_bar(items, desc="x") is items
    monkeypatch.setenv(PROGRESS_ENV, "1")
    assert bars_enabled()


@pytest.mark.parametrize(
    "module",
    [
        "rnnlib.train",
        "rnnlib.next_step",
        "rnnlib.truncation",
        "rnnlib.experiments.ch03",
        "rnnlib.experiments.ch04",
        "rnnlib.experiments.ch05",
        "rnnlib.experiments.ch07",
    ],
)
def test_every_long_loop_goes_through_progress_bar(module):
    """No module calls tqdm itself, so the build's switch reaches every bar; none wraps
    :func:`progress_bar` in a helper of its own (one definition of a bar)."""
    import importlib
    import inspect

    src = inspect.getsource(importlib.import_module(module))
    assert "tqdm" not in src.replace("``tqdm.auto``", "")
    assert "progress_bar(" in src
    assert "def _progress" not in src


def test_seed_everything_seeds_the_global_generators_and_returns_nothing():
    assert rnnlib.seed_everything(3) is None
    a = (random.random(), np.random.rand(), torch.rand(()).item())
    rnnlib.seed_everything(3)
    assert a == (
        random.random(),
        np.random.rand(),
        torch.rand(()).item(),
    )
