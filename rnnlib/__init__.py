"""rnnlib: the library behind the executable textbook on recurrent networks.

Modules follow the objects of the theory (see DESIGN.md of the course):

* :mod:`rnnlib.elman` - the Elman ReLU RNN of Panigrahi & Goyal and its inputs;
* :mod:`rnnlib.initialization` - measurements at random initialization (chapter 1);
* :mod:`rnnlib.plotting`, :mod:`rnnlib.widgets` - one figure style, thin explorers;
* :mod:`rnnlib.homework` - checkers that students call from exercises.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from ._validation import check_int
from .elman import ElmanRNN, normalize_sequence, sample_normalized_sequence, sample_true_sequence

__version__ = "0.1.0"

__all__ = [
    "ElmanRNN",
    "normalize_sequence",
    "sample_true_sequence",
    "sample_normalized_sequence",
    "seed_everything",
]


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's, NumPy's and torch's global generators; return a fresh ``torch.Generator``.

    rnnlib itself draws only from explicit generators, so this is for the
    reader's own code in a notebook. Also caps torch at 2 threads' worth of
    nondeterminism-free defaults (``torch.use_deterministic_algorithms`` is
    left alone: it is not needed on the CPU).
    """
    seed = check_int(seed, "seed", minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


_SUBMODULES = {
    "concepts", "data", "generalization", "homework", "initialization", "inversion", "languages", "elman", "dynamical",
    "next_step", "plotting", "pseudo", "stability", "train", "truncation", "widgets",
}


def __getattr__(name: str):
    """Import submodules on first use, so ``rnnlib.homework.check_exercise_1_1`` works after ``import rnnlib``."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'rnnlib' has no attribute {name!r}")
