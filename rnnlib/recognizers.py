"""RNNs that recognize regular languages, and the baselines they are compared with (chapter 7).

Three learners read the same held-out splits (:func:`rnnlib.languages.language_dataset`):

* the **wide RNN** of Part I (:class:`rnnlib.elman.ElmanRNN`, B frozen), trained
  by SGD on only W and A with chapter 5's objective
  ``E G(out_scale * F_rnn(x), y)``, ``G(t, y) = log(1 + e^(-y t))`` (the
  logistic loss, convex and 1-Lipschitz in t, ``G(0, y) = log 2``), labels
  ``y = +-1`` and inputs :func:`rnnlib.languages.encode_strings`
  (:func:`train_wide_rnn`);
* a **practical RNN**: a small GRU with a linear read-out, trained by Adam on
  the cross-entropy, reading one-hot symbols (:class:`PracticalRNN`,
  :func:`train_practical_rnn`); nothing of the theory applies to it;
* the **best additive predictor** ``c + sum_l f_l(x^(l))`` of Allen-Zhu & Li's
  class over the tokens of the normalized input (zero padding, start, bit 0,
  bit 1, end), fitted by least squares (:func:`rnnlib.concepts.fit_additive`)
  and thresholded at 1/2 (:func:`additive_baseline`).

Each returns a :class:`Recognition` with train and held-out accuracies, the
majority baseline of the split and a ``predict`` function for other strings
(length generalization). Chapter 7's runs of them over languages and
lengths (the Tomita table) are in ``rnnlib.experiments.ch07``.

The wide RNN is trained by :func:`rnnlib.train.train_rnn` (chapters 5-6), the
same loop as chapter 5, with ``loss="logistic"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ._rng import derive
from ._validation import (
    DivergenceError,
    Instance,
    Int,
    as_generator,
    validate_params,
)
from .concepts import fit_additive
from .elman import ElmanRNN
from .languages import (
    PAD,
    STRINGS,
    HeldOutSplit,
    check_split,
    check_strings,
    encode_strings,
)
from .train import train_rnn

__all__ = [
    "Recognition",
    "train_wide_rnn",
    "PracticalRNN",
    "train_practical_rnn",
    "additive_baseline",
    "token_codes",
]


@dataclass
class Recognition:
    """What one learner achieved on one split (chapter 7).

    ``learner``: ``"wide RNN"``, ``"practical RNN"`` or ``"additive"``;
    ``train_accuracy``, ``test_accuracy``: fractions of correct labels on the
    training strings and on the held-out ones; ``majority_baseline``: the
    held-out accuracy of the constant majority answer; ``losses``: the
    training loss per step (empty for the additive fit); ``predict``: maps
    strings (int64, left-padded) to 0/1 labels. For the wide RNN, its laziness
    at the end of training (chapter 5's measures, :class:`rnnlib.train.TrainHistory`):
    ``flip_fraction``, the fraction of activation patterns changed since
    initialization, and ``coupling_relative``, the gap to its own pseudo-network
    relative to the pseudo-network's change (NaN for the other learners).
    """

    learner: str
    train_accuracy: float
    test_accuracy: float
    majority_baseline: float
    losses: np.ndarray
    predict: Callable[[torch.Tensor], torch.Tensor] = field(repr=False)
    flip_fraction: float = float("nan")
    coupling_relative: float = float("nan")

    def accuracy(self, z: torch.Tensor, y: torch.Tensor) -> float:
        """The fraction of strings of ``z`` whose predicted label equals ``y``."""
        z = check_strings(z)
        return float((self.predict(z) == y.to(torch.float32)).to(torch.float64).mean())


def _finish(
    learner: str, split: HeldOutSplit, losses: list[float], predict
) -> Recognition:
    r = Recognition(
        learner,
        0.0,
        0.0,
        split.majority_baseline,
        np.asarray(losses, dtype=float),
        predict,
    )
    r.train_accuracy = r.accuracy(split.z_train, split.y_train)
    r.test_accuracy = r.accuracy(split.z_test, split.y_test)
    return r


@validate_params(
    "width",
    "eps_x",
    "out_scale",
    "lr",
    "steps",
    "batch_size",
    "generator",
    split=Instance(HeldOutSplit),
)
def train_wide_rnn(
    split: HeldOutSplit,
    width: int,
    *,
    eps_x: float = 0.5,
    out_scale: float = 1.0,
    lr: float = 0.03,
    steps: int = 300,
    batch_size: int = 32,
    generator: torch.Generator | int | None = None,
) -> Recognition:
    """Train the Part I RNN (B frozen, SGD on W and A) on ``split`` and measure it (chapter 7).

    The objective is chapter 5's ``E G(out_scale F_rnn(x), y)`` with the
    logistic loss ``G(t, y) = log(1 + e^(-y t))``, ``y = 2 label - 1``, over
    minibatches of ``batch_size`` strings (a deviation from the theorem's one
    sample per step), ``steps`` steps of size ``lr``. Strings are encoded by
    :func:`rnnlib.languages.encode_strings` with ``eps_x``; the prediction is
    ``1[F_rnn > 0]``. Raises :class:`rnnlib.train.DivergenceError` when the loss
    stops being finite.
    """
    split = check_split(split)
    model = ElmanRNN(4, width, 1, generator=derive(generator, "weights"))
    x = encode_strings(split.z_train, eps_x)
    y = 2 * split.y_train.to(torch.float32)[:, None] - 1
    result = train_rnn(
        model,
        x,
        y,
        out_scale=out_scale,
        lr=lr,
        steps=steps,
        loss="logistic",
        batch_size=min(batch_size, len(x)),
        generator=derive(generator, "batches"),
        log_every=steps,
    )

    def predict(z: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return (result.predict(encode_strings(z, eps_x))[:, 0] > 0).to(
                torch.float32
            )

    r = _finish("wide RNN", split, result.history.step_loss, predict)
    r.flip_fraction = float(result.history.flip_fraction[-1])
    r.coupling_relative = float(result.history.coupling_relative[-1])
    return r


class PracticalRNN(nn.Module):
    """A small GRU recognizer with a linear read-out of its last state (chapter 7).

    Symbols are one-hot vectors of {0, 1, padding}; ``forward(z)`` takes
    strings (batch, n_max), int64 left-padded with -1, and returns one logit
    per string. Initialized by torch's defaults from ``generator``.
    """

    @validate_params("generator", hidden=Int(1))
    def __init__(
        self,
        hidden: int = 16,
        *,
        generator: torch.Generator | int | None = None,
    ) -> None:
        super().__init__()
        gen = as_generator(generator)
        # built without touching the global generator, then filled from ours
        meta = {"device": "meta"}
        kw = {**meta, "batch_first": True}
        gru = nn.GRU(3, hidden, **kw)  # rng-ok: meta
        self.gru = gru.to_empty(device="cpu")
        readout = nn.Linear(hidden, 1, **meta)  # rng-ok: meta
        self.readout = readout.to_empty(device="cpu")
        with torch.no_grad():
            for p in (
                self.parameters()
            ):  # torch's default U(-1/sqrt(h), 1/sqrt(h)), from our generator
                p.copy_((2 * torch.rand(p.shape, generator=gen) - 1) / hidden**0.5)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        z = check_strings(z)
        onehot = nn.functional.one_hot(torch.where(z == PAD, 2, z), 3).to(torch.float32)
        out, _ = self.gru(onehot)
        return self.readout(out[:, -1])[:, 0]


@validate_params(
    "lr",
    "steps",
    "batch_size",
    "generator",
    hidden=Int(1),
    split=Instance(HeldOutSplit),
)
def train_practical_rnn(
    split: HeldOutSplit,
    hidden: int = 16,
    *,
    lr: float = 0.01,
    steps: int = 300,
    batch_size: int = 64,
    generator: torch.Generator | int | None = None,
) -> Recognition:
    """Train a :class:`PracticalRNN` with Adam on the cross-entropy and measure it (chapter 7).

    The usual practice (small GRU, adaptive steps, all weights trained), beside
    the wide RNN of the theory. The prediction is ``1[logit > 0]``.
    """
    split = check_split(split)
    model = PracticalRNN(hidden, generator=derive(generator, "weights"))
    gen = derive(generator, "batches")
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    z, y = split.z_train, split.y_train.to(torch.float32)
    losses = []
    for step in range(steps):
        idx = torch.randint(0, len(z), (batch_size,), generator=gen)
        loss = nn.functional.binary_cross_entropy_with_logits(model(z[idx]), y[idx])
        if not torch.isfinite(loss):
            raise DivergenceError(
                f"training diverged at step {step} with learning rate lr = {lr:g}"
            )
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    def predict(zz: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return (model(zz) > 0).to(torch.float32)

    return _finish("practical RNN", split, losses, predict)


@validate_params(z=STRINGS)
def token_codes(z: torch.Tensor) -> torch.Tensor:
    """The tokens of the normalized input as codes (chapter 7's additive baselines).

    ``z`` holds binary strings (batch, n_max), left-padded with ``PAD``; the
    result (batch, n_max + 2) codes each position of the normalized input:
    0 zero padding, 1 start, 2 bit 0, 3 bit 1, 4 end.
    """
    z = z.to(torch.int64)
    batch, n = z.shape
    codes = torch.zeros(batch, n + 2, dtype=torch.int64)
    codes[:, 1:-1] = torch.where(z == PAD, 0, z + 2)
    codes[torch.arange(batch), (z == PAD).sum(dim=1)] = 1
    codes[:, -1] = 4
    return codes


@validate_params(split=Instance(HeldOutSplit))
def additive_baseline(split: HeldOutSplit) -> Recognition:
    """The best additive predictor of the labels, thresholded at 1/2 (chapter 7).

    Allen-Zhu & Li's class with one output: ``c + sum_l f_l(x^(l))`` over the
    tokens of the normalized input (codes: zero padding, start, bit 0, bit 1,
    end; each ``f_l`` an arbitrary table). Fitted on the training strings by
    least squares (:func:`rnnlib.concepts.fit_additive`); predicts
    ``1[c + sum_l f_l > 1/2]``.
    """
    split = check_split(split)
    fit = fit_additive(
        token_codes(split.z_train),
        split.y_train.to(torch.float64),
        alphabet_size=5,
    )

    def predict(z: torch.Tensor) -> torch.Tensor:
        z = check_strings(z)
        if z.shape[1] != split.z_train.shape[1]:
            raise ValueError(
                f"z must have the training width {split.z_train.shape[1]} (an additive fit has one table per position)"
            )
        return (fit.predict(token_codes(z)) > 0.5).to(torch.float32)

    return _finish("additive", split, [], predict)
