"""rnnlib: the library behind the executable textbook on recurrent networks.

Modules follow the objects of the theory (the module map with chapters is the table
"rnnlib, module by module" in the repository's ARCHITECTURE.md; conventions in
CONTRIBUTING.md):

Part I (Panigrahi & Goyal 2021, chapters 1-7):

* :mod:`rnnlib.elman` - the Elman ReLU RNN in the paper's parametrization and its inputs;
* :mod:`rnnlib.initialization` - measurements at random initialization (chapter 1);
* :mod:`rnnlib.concepts`, :mod:`rnnlib.languages` - the concept class, the D_L1 language (chapter 2), regular languages (chapter 7);
* :mod:`rnnlib.pseudo` - the pseudo-network, the linearization of the RNN (chapter 3);
* :mod:`rnnlib.inversion` - reading tokens back from the hidden state; the existence construction (chapter 4);
* :mod:`rnnlib.train` - Part I's SGD on the RNN and on its linearization (chapters 5-7);
* :mod:`rnnlib.ntk` - the tangent kernel at finite width, its kernel regression, and its infinite-width limit (chapters 5-7);
* :mod:`rnnlib.generalization` - Rademacher complexity and the generalization bound (chapter 6);
* :mod:`rnnlib.recognizers` - learners of regular languages and their baselines (chapter 7).

Part II (Miller & Hardt 2019, chapters 8-11):

* :mod:`rnnlib.dynamical` - linear systems, simple RNNs and LSTMs as recurrent maps;
* :mod:`rnnlib.stability` - certificates, projections, data-dependent contraction (chapter 8);
* :mod:`rnnlib.truncation` - truncated models for inference and training (chapters 9, 10);
* :mod:`rnnlib.data`, :mod:`rnnlib.next_step` - real sequence data offline, next-step models and their training (chapter 11).

For the whole book:

* :mod:`rnnlib.experiments` - the chapters' sweeps and their result records, one module per chapter;
* :mod:`rnnlib.plotting`, :mod:`rnnlib.widgets` - one figure style, thin explorers;
* :mod:`rnnlib.homework` - checkers that students call from exercises;
* :mod:`rnnlib.claims` - ``claims.check``, which asserts a claim of the registry ``chapters/claims.yml``.

Conventions: randomness through an explicit ``generator`` (``rnnlib._rng``),
validation at the public boundary (``rnnlib._validation``: scalars declared with
``validate_params``), no import circle and no private name imported across modules
(``tests/test_architecture.py``).
"""

from __future__ import annotations

import pkgutil
import random

import numpy as np
import torch

from ._validation import validate_params
from .elman import (
    ElmanRNN,
    normalize_sequence,
    sample_normalized_sequence,
    sample_true_sequence,
)

__version__ = "0.1.0"

__all__ = [
    "ElmanRNN",
    "normalize_sequence",
    "sample_true_sequence",
    "sample_normalized_sequence",
    "seed_everything",
]


@validate_params("seed")
def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators.

    Returns nothing, so a chapter's first cell that ends with it prints nothing (a
    returned generator showed as ``<torch._C.Generator object at 0x...>`` on every page);
    for a generator of your own, ``torch.Generator().manual_seed(seed)``.

    rnnlib itself draws only from explicit generators (``generator=`` arguments,
    see :mod:`rnnlib._rng`), so this is for the reader's own code in a notebook,
    e.g. ``torch.nn.RNN(...)``'s default initialization. It changes nothing else
    (no thread settings, no deterministic-algorithm flags).
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


# Every public submodule, imported on first attribute access (``rnnlib.stability``); read from
# the package directory, so a module added later (chapters 4-7, 11) is found without editing this.
_SUBMODULES = {
    m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")
}


def __getattr__(name: str):
    """Import submodules on first use, so ``rnnlib.homework.check_exercise_1_1`` works after ``import rnnlib``."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'rnnlib' has no attribute {name!r}")
