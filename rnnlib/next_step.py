"""Next-step models of real sequences, their metrics, truncated evaluation and local contraction (chapter 11).

A next-step model reads a sequence ``x_1, ..., x_T`` and predicts each element
from the ones before it: the recurrent state ``s_t = phi_w(s_{t-1}, x_t)``
(:class:`rnnlib.dynamical.SimpleRNN` with tanh, or :class:`rnnlib.dynamical.LSTM`)
is read out by a *trained* affine map, ``logits_t = V h_t + c``, which predicts
``x_{t+1}``:

* **polyphonic music** (88 binary keys): ``p(key j on at t+1) = sigmoid(logits_t,j)``,
  independently over keys. The metric of Boulanger-Lewandowski et al. (2012) and of the
  TCN benchmark code (Bai, Kolter & Koltun 2018, locuslab/TCN, which Miller & Hardt forked)
  is the Bernoulli negative log-likelihood **summed over the 88 keys, in nats,
  averaged over the predicted frames** of a split (every frame weighs the same;
  the first frame of a sequence is not predicted):
  ``NLL = -(1/N) sum_{seq, t >= 2} sum_j [y_tj log p_tj + (1 - y_tj) log(1 - p_tj)]``;
* **characters** (vocabulary of size V, one-hot inputs): a softmax over ``logits_t``;
  metric: **bits per character**, ``-(1/N) sum log_2 p(x_{t+1} | x_{<=t})``.

The read-out is trained, unlike the frozen ``C`` of :mod:`rnnlib.dynamical`
(Miller & Hardt: "its parameters can be pushed to the recurrent model"); the
stability of the model is the stability of its recurrence ``phi_w``, which is
what chapter 8's projections constrain and what truncation (chapter 9) needs.

Also here: the two baselines of chapter 11 (per-key / per-character marginal
frequencies, and a logistic regression on the previous step), the evaluation
of a model truncated to the last k inputs (:func:`rnnlib.truncation.truncated_states`),
chapter 11's training loop (:func:`train_next_step`: Adam or SGD with gradient
clipping, optionally projected onto the stable set after every step, as Miller &
Hardt's code does; a loss, gradient or weight that stops being finite raises
:class:`DivergenceError`), and the local contraction ``||d s_t / d s_{t-1}||_2``
along real sequences.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._progress import progress_bar
from ._recurrence import previous_states
from ._rng import derive
from ._validation import (
    ANY_REAL,
    NONNEGATIVE,
    POSITIVE,
    Bool,
    Choice,
    DivergenceError,
    Instance,
    Int,
    Model,
    Relation,
    Tensor,
    as_generator,
    check_real,
    check_tensor,
    validate_params,
)
from .data import ARRAYS, pad_sequences
from .dynamical import LSTM, SimpleRNN
from .stability import (
    certify,
    project_lstm_,
    project_spectral_,
    rescale_lstm_columns_,
)
from .truncation import truncated_states

__all__ = [
    "KINDS",
    "READOUTS",
    "ADAM_BETAS",
    "PROJECTIONS",
    "NextStepModel",
    "Baseline",
    "frame_nll",
    "bits_per_char",
    "NextStepBatch",
    "next_step_batch",
    "evaluate",
    "readout_loss",
    "truncated_curve",
    "truncation_excess",
    "forget_gates",
    "fit_baseline",
    "NextStepHistory",
    "train_next_step",
    "DivergenceError",
    "local_jacobian_norms",
    "multi_step_jacobian_norms",
    "contraction_summary",
    "results_table",
]

#: Recurrent cores of a next-step model.
KINDS = ("rnn", "lstm")
#: Read-outs: independent sigmoids (binary frames) or a softmax (characters).
READOUTS = ("bernoulli", "categorical")
# entries of the (windows, k, n) input tensor of a truncated evaluation per batch
_WINDOW_BUDGET = 8_000_000
#: Adam's (beta_1, beta_2) in :func:`train_next_step` (torch's defaults). A training
#: constant: chapter 11's recorded runs are fingerprinted on it (``rnnlib.records``).
ADAM_BETAS = (0.9, 0.999)
#: The stable sets :meth:`NextStepModel.project_` can project an LSTM onto:
#: ``"certified"`` (chapter 8's row-wise projection) and ``"authors"`` (the column
#: rescaling of Miller & Hardt's code, :func:`rnnlib.stability.rescale_lstm_columns_`).
PROJECTIONS = ("certified", "authors")


class NextStepModel(nn.Module):
    """A tanh RNN or LSTM with a trained affine read-out that predicts the next element (chapter 11).

    ``kind``: ``"rnn"`` (``h_t = tanh(W h_{t-1} + U x_t)``, no bias so that
    ``phi(0, 0) = 0``, ``W`` initialized as ``torch.nn.RNN``) or ``"lstm"``
    (:class:`rnnlib.dynamical.LSTM` with ``forget_bias``). ``readout``:
    ``"bernoulli"`` (``input_dim = output_dim`` binary keys) or ``"categorical"``
    (integer codes in ``range(input_dim)``, fed as one-hot vectors;
    ``output_dim = input_dim``). The read-out ``V`` starts U(-0.1, 0.1) as in
    the authors' code, ``c`` at 0.
    """

    @validate_params(
        "hidden_dim",
        "generator",
        "dtype",
        input_dim=Int(2),
        forget_bias=ANY_REAL,
        kind=Choice(*KINDS),
        readout=Choice(*READOUTS),
    )
    def __init__(
        self,
        kind: str,
        input_dim: int,
        hidden_dim: int,
        *,
        readout: str = "bernoulli",
        forget_bias: float = 1.0,
        generator: torch.Generator | int | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        n = input_dim
        H = hidden_dim
        gen = as_generator(generator)
        g_core, g_out = derive(gen, "core"), derive(gen, "readout")
        if kind == "rnn":
            self.core = SimpleRNN(
                n,
                H,
                1,
                activation="tanh",
                init="torch",
                generator=g_core,
                dtype=dtype,
            )
        else:
            self.core = LSTM(
                n,
                H,
                1,
                forget_bias=forget_bias,
                generator=g_core,
                dtype=dtype,
            )
        (
            self.kind,
            self.readout,
            self.input_dim,
            self.hidden_dim,
        ) = kind, readout, n, H
        self.V = nn.Parameter(
            (torch.rand(n, H, generator=g_out, dtype=dtype) * 2 - 1) * 0.1
        )
        self.c = nn.Parameter(torch.zeros(n, dtype=dtype))

    @property
    def dtype(self) -> torch.dtype:
        return self.V.dtype

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}, readout={self.readout!r}, input_dim={self.input_dim}, hidden_dim={self.hidden_dim}"

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Inputs as float vectors (batch, T, input_dim): frames as they are, codes one-hot."""
        if self.readout == "categorical":
            x = check_tensor(x, "x", ndim=2, floating=False)
            if (
                x.dtype not in (torch.int64, torch.int32)
                or bool((x < 0).any())
                or bool((x >= self.input_dim).any())
            ):
                raise ValueError(
                    f"x must hold integer codes in [0, {self.input_dim}) for a categorical model"
                )
        else:
            x = check_tensor(x, "x", shape=("batch", "T", self.input_dim))
        return self._encode(x)

    def _encode(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`encode` of a checked batch."""
        if self.readout == "categorical":
            return F.one_hot(x.long(), self.input_dim).to(self.dtype)
        return x.to(self.dtype)

    def _training_logits(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` of a batch the training loop built from checked data (no checks)."""
        return self._hidden_states(self._encode(x)) @ self.V.transpose(0, 1) + self.c

    def logits(self, states: torch.Tensor) -> torch.Tensor:
        """``V h_t + c`` for states (..., state_dim)."""
        return self.core.hidden(states) @ self.V.transpose(0, 1) + self.c

    @validate_params(k=Int(1))
    def forward(self, x: torch.Tensor, k: int | None = None) -> torch.Tensor:
        """Logits (batch, T, output_dim) predicting ``x_{t+1}`` from ``x_1..x_t``.

        With ``k``, the state is that of the k-step truncated model
        (:func:`rnnlib.truncation.truncated_states`): only ``x_{t-k+1..t}`` is seen.
        """
        u = self.encode(x)
        if k is not None:
            return self.logits(truncated_states(self.core, u, k))
        return self.hidden_states(u) @ self.V.transpose(0, 1) + self.c

    def hidden_states(self, u: torch.Tensor) -> torch.Tensor:
        """``h_1, ..., h_T`` (batch, T, H) of the full model on encoded inputs ``u`` (batch, T, input_dim).

        Runs ``torch.nn.RNN`` / ``torch.nn.LSTM``'s fused loop with the core's own
        weights (``torch.func.functional_call``; same map as ``core.step``, checked
        in the tests), which is faster than a Python loop over ``core.step``.
        """
        u = check_tensor(u, "u", shape=("batch", "T", self.input_dim))
        return self._hidden_states(u)

    def _hidden_states(self, u: torch.Tensor) -> torch.Tensor:
        core, H = self.core, self.hidden_dim
        if self.kind == "rnn":
            module = nn.RNN(
                self.input_dim,
                H,
                bias=False,
                batch_first=True,
                device="meta",
            )
            params = {
                "weight_ih_l0": core.U,
                "weight_hh_l0": core.W,
            }
        else:
            module = nn.LSTM(self.input_dim, H, batch_first=True, device="meta")
            params = {
                "weight_ih_l0": core.U,
                "weight_hh_l0": core.W,
                "bias_ih_l0": core.b,
                "bias_hh_l0": torch.zeros_like(core.b),
            }
        h, _ = torch.func.functional_call(module, params, (u.to(self.dtype),))
        return h

    def project_(
        self,
        *,
        lam: float = 0.99,
        f_max: float = 0.605,
        projection: str = "certified",
    ) -> NextStepModel:
        """Project the recurrence onto a stable set, in place (chapters 8 and 11).

        RNN: ``||W||_2 <= lam`` (spectral clipping). LSTM with
        ``projection="certified"``: the row-wise projection
        :func:`rnnlib.stability.project_lstm_` with forget-gate bound ``f_max``
        (inputs have ``|x_t|_inf <= 1``: binary frames, one-hot characters), which
        certifies ``lambda_inf < 1``; with ``"authors"``: the column rescaling of
        Miller & Hardt's code (:func:`rnnlib.stability.rescale_lstm_columns_`,
        biases free, certifies nothing).
        """
        if projection not in PROJECTIONS:
            raise ValueError(
                f"projection must be one of {PROJECTIONS}, got {projection!r}"
            )
        if self.kind == "rnn":
            project_spectral_(self.core, lam)
        elif projection == "authors":
            rescale_lstm_columns_(self.core)
        else:
            project_lstm_(self.core, f_max, x_bound=1.0)
        return self

    def init_output_bias_(self, seqs: Sequence[np.ndarray]) -> NextStepModel:
        """Start the read-out bias ``c`` at the marginal baseline (log-odds per key / log-frequencies per character).

        The marginal fit of :func:`fit_baseline`; saves the first steps of training
        from learning what the marginals already say. Returns the model.
        """
        base = fit_baseline(
            seqs,
            readout=self.readout,
            input_dim=self.input_dim,
            previous=False,
        )
        with torch.no_grad():
            self.c.copy_(base.c.to(self.dtype))
        return self

    def worst_case_lambda(self) -> float:
        """The certified contraction constant of the recurrence: ``||W||_2`` (RNN), ``lambda_inf`` (LSTM)."""
        return float(certify(self.core, x_bound=1.0).lam)


class Baseline(nn.Module):
    """A non-recurrent next-step predictor: ``logits_t = A x_t + c`` (chapter 11).

    ``previous=False``: ``A = 0``, the marginal frequencies of the training
    targets; ``previous=True``: a logistic regression on the previous step
    (for characters, a smoothed bigram model). Built by :func:`fit_baseline`.
    """

    @validate_params(
        "dtype", input_dim=Int(2), readout=Choice(*READOUTS), previous=Bool()
    )
    def __init__(
        self,
        input_dim: int,
        *,
        readout: str,
        previous: bool,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.readout, self.previous = readout, bool(previous)
        self.A = nn.Parameter(
            torch.zeros(self.input_dim, self.input_dim, dtype=dtype),
            requires_grad=self.previous,
        )
        self.c = nn.Parameter(torch.zeros(self.input_dim, dtype=dtype))

    @property
    def dtype(self) -> torch.dtype:
        return self.c.dtype

    encode = NextStepModel.encode
    _encode = NextStepModel._encode

    def forward(self, x: torch.Tensor, k: int | None = None) -> torch.Tensor:
        """Logits (batch, T, output_dim); ``k`` is ignored (the model sees one step)."""
        return self.encode(x) @ self.A.transpose(0, 1) + self.c


#: How a metric reduces its per-step values.
REDUCTION = Choice("mean", "sum", "none")

# --- metrics ------------------------------------------------------------------------------------------


def _check_mask(mask: object, shape: tuple[int, ...]) -> torch.Tensor | None:
    if mask is None:
        return None
    mask = check_tensor(mask, "mask", shape=shape, floating=False)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor, got {mask.dtype}")
    if not bool(mask.any()):
        raise ValueError("mask must select at least one step")
    return mask


@validate_params(
    logits=Tensor(shape=("batch", "T", "K")),
    targets=Tensor(shape=("batch", "T", "K"), values="binary"),
    reduction=REDUCTION,
)
def frame_nll(
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    reduction: str = "mean",
) -> torch.Tensor:
    """Bernoulli NLL summed over keys, in nats, per frame (chapter 11; Boulanger-Lewandowski et al. 2012).

    ``logits``, ``targets`` (batch, T, K), targets in {0, 1}; ``mask`` (batch, T)
    selects the frames that count. ``reduction="mean"``: the average over the
    selected frames; ``"sum"``: their total (to pool batches with every frame
    weighted equally); ``"none"``: the (batch, T) per-frame NLLs (0 where masked).
    """
    mask = _check_mask(mask, tuple(logits.shape[:2]))
    return _frame_nll(logits, targets, mask, reduction)


def _frame_nll(
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None,
    reduction: str,
) -> torch.Tensor:
    """:func:`frame_nll` on checked arguments (the training loop's kernel)."""
    per_frame = F.binary_cross_entropy_with_logits(
        logits, targets.to(logits.dtype), reduction="none"
    ).sum(dim=2)
    return _reduce(per_frame, mask, reduction)


@validate_params(
    logits=Tensor(shape=("batch", "T", None)),
    targets=Tensor(shape=("batch", "T"), floating=False, integer=True),
    reduction=REDUCTION,
)
def bits_per_char(
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    reduction: str = "mean",
) -> torch.Tensor:
    """Cross-entropy of a softmax read-out in bits: ``-log_2 p(target)`` per character (chapter 11).

    ``logits`` (batch, T, V), ``targets`` (batch, T) integer codes; ``mask`` and
    ``reduction`` as in :func:`frame_nll`.
    """
    if bool((targets < 0).any()) or bool((targets >= logits.shape[2]).any()):
        raise ValueError(f"targets must be codes in [0, {logits.shape[2]})")
    mask = _check_mask(mask, tuple(logits.shape[:2]))
    return _bits_per_char(logits, targets, mask, reduction)


def _bits_per_char(
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None,
    reduction: str,
) -> torch.Tensor:
    """:func:`bits_per_char` on checked arguments (the training loop's kernel)."""
    nats = F.cross_entropy(logits.transpose(1, 2), targets.long(), reduction="none")
    return _reduce(nats / math.log(2), mask, reduction)


def _reduce(
    per_step: torch.Tensor,
    mask: torch.Tensor | None,
    reduction: str,
) -> torch.Tensor:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(
            f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}"
        )
    if mask is not None:
        per_step = per_step * mask.to(per_step.dtype)
    if reduction == "none":
        return per_step
    total = per_step.sum()
    if reduction == "sum":
        return total
    return total / (mask.sum() if mask is not None else per_step.numel())


# --- evaluation -----------------------------------------------------------------------------------------


def _check_predictor(model: object) -> NextStepModel | Baseline:
    if not isinstance(model, (NextStepModel, Baseline)):
        raise TypeError(
            f"model must be a NextStepModel or a Baseline, got {type(model).__name__}"
        )
    return model


def _check_seqs(seqs: object) -> list[np.ndarray]:
    if (
        isinstance(seqs, (str, bytes))
        or not isinstance(seqs, Sequence)
        or len(seqs) == 0
    ):
        raise ValueError("seqs must be a non-empty list of sequences")
    seqs = [np.asarray(s) for s in seqs]
    if any(s.shape[0] < 2 for s in seqs):
        raise ValueError(
            "seqs must have at least 2 steps each (the first one is not predicted)"
        )
    return seqs


def _check_training_data(train: Sequence, model: NextStepModel) -> list[np.ndarray]:
    """``train`` checked once, as the loop's batches and loss would check each minibatch.

    At least 2 steps per sequence; a Bernoulli read-out needs 0/1 piano rolls with
    the model's keys, a categorical one integer codes below its vocabulary.
    """
    seqs = [np.asarray(s) for s in train]
    if any(s.ndim == 0 or s.shape[0] < 2 for s in seqs):
        raise ValueError(
            "train must hold sequences longer than 1 step (the first step is not predicted)"
        )
    width = model.V.shape[0]
    if model.readout == "bernoulli":
        if any(
            s.ndim != 2 or s.shape[1] != width or not np.isin(s, (0, 1)).all()
            for s in seqs
        ):
            raise ValueError(
                f"train must be binary (T, {width}) piano rolls for the Bernoulli read-out"
            )
    elif any(
        s.ndim != 1
        or not np.issubdtype(s.dtype, np.integer)
        or s.min() < 0
        or s.max() >= width
        for s in seqs
    ):
        raise ValueError(
            f"train must be (T,) integer codes in [0, {width}) for the categorical read-out"
        )
    return seqs


class NextStepBatch(NamedTuple):
    """:func:`next_step_batch` results: inputs, targets and the mask of real target steps."""

    #: ``x[:, :-1]``
    inputs: torch.Tensor
    #: ``x[:, 1:]``
    targets: torch.Tensor
    #: true where the target is a real step
    mask: torch.Tensor


@validate_params("dtype", seqs=ARRAYS)
def next_step_batch(
    seqs: Sequence[np.ndarray],
    *,
    dtype: torch.dtype = torch.float32,
) -> NextStepBatch:
    """``(inputs, targets, mask)`` for predicting ``x_{t+1}`` from ``x_{<=t}`` on padded sequences (chapter 11).

    ``inputs = x[:, :-1]``, ``targets = x[:, 1:]``, ``mask`` true where the target is a real step.
    """
    seqs = _check_seqs(seqs)
    x, mask = pad_sequences(seqs, dtype=dtype)
    return NextStepBatch(x[:, :-1], x[:, 1:], mask[:, 1:])


@validate_params(
    model=Model((NextStepModel, Baseline), finite=False),
    reduction=REDUCTION,
)
def readout_loss(
    model: NextStepModel | Baseline,
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor,
    reduction: str = "mean",
) -> torch.Tensor:
    """The loss of ``model``'s readout (chapter 11): :func:`frame_nll` for ``"bernoulli"``, :func:`bits_per_char` for ``"categorical"``.

    The one place that picks the metric from the readout, used by
    :func:`evaluate`, :func:`fit_baseline` and :func:`train_next_step`.
    ``logits``, ``targets``, ``mask`` and ``reduction`` are checked by the metric.
    """
    if model.readout == "bernoulli":
        return frame_nll(logits, targets, mask, reduction=reduction)
    return bits_per_char(logits, targets, mask, reduction=reduction)


def _readout_loss(
    readout: str,
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor,
) -> torch.Tensor:
    """The mean :func:`readout_loss` on arguments the caller built (no checks: the loop's kernel)."""
    kernel = _frame_nll if readout == "bernoulli" else _bits_per_char
    return kernel(logits, targets, mask, "mean")


@validate_params(
    "batch_size",
    k=Int(1),
    model=Instance((NextStepModel, Baseline)),
    seqs=ARRAYS,
)
def evaluate(
    model: NextStepModel | Baseline,
    seqs: Sequence[np.ndarray],
    *,
    k: int | None = None,
    batch_size: int = 64,
) -> float:
    """The metric of ``model`` on a split: NLL per predicted frame (nats) or bits per character (chapter 11).

    Every predicted step of every sequence weighs the same. With ``k`` the
    model is evaluated truncated to its last k inputs.
    """
    model = _check_predictor(model)
    seqs = _check_seqs(seqs)
    total, count = 0.0, 0
    device = next(model.parameters()).device
    order = list(
        np.argsort([s.shape[0] for s in seqs])
    )  # batches of similar lengths pad less
    with torch.no_grad():
        while order:
            size = batch_size
            if (
                k is not None
            ):  # the truncated model runs batch * T windows of k steps: bound that memory
                T = seqs[order[min(len(order), size) - 1]].shape[0]
                size = max(
                    1,
                    min(
                        size,
                        _WINDOW_BUDGET // (T * min(k, T) * model.input_dim),
                    ),
                )
            chunk, order = order[:size], order[size:]
            inputs, targets, mask = (
                t.to(device)
                for t in next_step_batch([seqs[i] for i in chunk], dtype=model.dtype)
            )
            total += float(readout_loss(model, model(inputs, k), targets, mask, "sum"))
            count += int(mask.sum())
    return total / count


@validate_params(
    "batch_size",
    model=Model(NextStepModel),
    seqs=ARRAYS,
)
def truncated_curve(
    model: NextStepModel,
    seqs: Sequence[np.ndarray],
    ks: Sequence[int],
    *,
    batch_size: int = 64,
) -> np.ndarray:
    """The metric of the k-step truncated model for each k of ``ks`` (``None`` = full context) (chapter 11).

    Returns an array (len(ks),). For a lambda-stable model the truncated
    predictions approach the full ones geometrically in k (chapter 9), so this
    curve flattens at small k.
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence) or len(ks) == 0:
        raise ValueError(
            "ks must be a non-empty list of truncation lengths (ints, or None for full context)"
        )
    return np.array([evaluate(model, seqs, k=k, batch_size=batch_size) for k in ks])


@validate_params(
    "k",
    "batch_size",
    model=Model(NextStepModel),
    seqs=ARRAYS,
)
def truncation_excess(
    model: NextStepModel,
    seqs: Sequence[np.ndarray],
    k: int,
    *,
    batch_size: int = 32,
) -> dict[str, float]:
    """The cost of truncating to the last ``k`` inputs, measured where truncation acts (chapter 11).

    The prediction of frame ``t + 1`` reads ``t`` inputs; the k-step truncated
    model (:func:`rnnlib.truncation.truncated_states`) differs from the full one
    only where ``t > k``. Returns ``"excess"``: the mean over those frames of
    ``NLL_k - NLL_full`` (per frame; nats, or bits for text), ``"excess all"``:
    the same difference averaged over every predicted frame (what
    ``evaluate(model, seqs, k=k) - evaluate(model, seqs)`` gives), and
    ``"untouched"``: the share of predicted frames with ``t <= k``, which
    truncation leaves exactly as they were (``"excess"`` is NaN if that share is 1).
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    seqs = _check_seqs(seqs)
    device = model.V.device
    diff_touched, n_touched, n_all = 0.0, 0, 0
    with torch.no_grad():
        for start in range(0, len(seqs), batch_size):
            inputs, targets, mask = (
                t.to(device)
                for t in next_step_batch(
                    seqs[start : start + batch_size],
                    dtype=model.dtype,
                )
            )
            full = readout_loss(model, model(inputs), targets, mask, "none")
            trunc = readout_loss(model, model(inputs, k), targets, mask, "none")
            seen = torch.arange(1, inputs.shape[1] + 1, device=device).expand(
                mask.shape
            )
            touched = mask & (seen > k)
            diff_touched += float(((trunc - full) * touched).sum().double())
            n_touched += int(touched.sum())
            n_all += int(mask.sum())
    return {
        "excess": diff_touched / n_touched if n_touched else math.nan,
        "excess all": diff_touched / n_all,
        "untouched": 1.0 - n_touched / n_all,
    }


@validate_params(model=Model(NextStepModel), seqs=ARRAYS)
def forget_gates(model: NextStepModel, seqs: Sequence[np.ndarray]) -> np.ndarray:
    """Every forget gate ``f_t,j`` of an LSTM model along real sequences (chapter 11).

    ``f_t = sigma(W_f h_{t-1} + U_f x_t + b_f)`` at every real step of every
    sequence of ``seqs`` (inputs ``x_1 .. x_{T-1}``, ``h_0 = 0``), as a flat
    array. Its maximum is the data's ``fbar``, the quantity the LSTM condition of
    chapter 8 bounds by ``f_max`` (``1 / (1 - fbar)`` is the cell's memory time).
    """
    if not isinstance(model, NextStepModel) or model.kind != "lstm":
        raise TypeError(f"model must be an LSTM NextStepModel, got {model!r:.60}")
    seqs = _check_seqs(seqs)
    H, device = model.hidden_dim, model.V.device
    out = []
    with torch.no_grad():
        for start in range(0, len(seqs), 64):
            inputs, _, mask = (
                t.to(device)
                for t in next_step_batch(seqs[start : start + 64], dtype=model.dtype)
            )
            u = model.encode(inputs)
            h = model.hidden_states(u)
            h_prev = previous_states(h)
            core = model.core
            pre = (
                h_prev @ core.W[H : 2 * H].transpose(0, 1)
                + u @ core.U[H : 2 * H].transpose(0, 1)
                + core.b[H : 2 * H]
            )
            out.append(torch.sigmoid(pre)[mask].double().cpu())
    return torch.cat(out).flatten().numpy()


@validate_params(
    "iterations",
    input_dim=Int(2),
    l2=NONNEGATIVE,
    previous=Bool(),
    readout=Choice(*READOUTS),
    seqs=ARRAYS,
)
def fit_baseline(
    seqs: Sequence[np.ndarray],
    *,
    readout: str | None = None,
    input_dim: int | None = None,
    previous: bool,
    l2: float = 1e-4,
    iterations: int = 100,
) -> Baseline:
    """Fit a :class:`Baseline` on training sequences by maximum likelihood (chapter 11).

    ``previous=False``: the marginal frequencies (per key, or per character),
    in closed form with add-1/2 smoothing. ``previous=True``: a logistic
    regression (sigmoid per key, or softmax over characters) on the previous
    step, ``logits_t = A x_t + c``: for binary frames by L-BFGS on the mean NLL plus
    ``l2 * ||A||_F^2`` (``iterations`` iterations, deterministic); for characters
    (one-hot inputs) its maximum-likelihood solution is the bigram model,
    computed in closed form with add-1/2 smoothing.

    ``readout`` and ``input_dim`` are inferred from ``seqs`` when not given:
    (T, K) frames give ``"bernoulli"`` with ``K`` keys, (T,) integer codes give
    ``"categorical"`` with ``1 +`` the largest code (pass the vocabulary size
    when some characters never occur in ``seqs``).
    """
    seqs = _check_seqs(seqs)
    ndims = {s.ndim for s in seqs}
    if ndims not in ({1}, {2}):
        raise ValueError("seqs must be all (T, K) frames or all (T,) integer codes")
    if readout is None:
        readout = "bernoulli" if ndims == {2} else "categorical"
    if input_dim is None:
        input_dim = (
            int(seqs[0].shape[1])
            if ndims == {2}
            else 1 + max(int(s.max()) for s in seqs)
        )
    # Baseline's declaration checks an inferred input_dim (input_dim >= 2)
    base = Baseline(input_dim, readout=readout, previous=previous)
    # all (x_t, x_{t+1}) pairs of the split as one sequence-free batch (1, N, ...): no padding
    inputs = torch.as_tensor(np.concatenate([q[:-1] for q in seqs])).unsqueeze(0)
    targets = torch.as_tensor(np.concatenate([q[1:] for q in seqs])).unsqueeze(0)
    if readout == "bernoulli":
        inputs, targets = (
            inputs.to(base.dtype),
            targets.to(base.dtype),
        )
    mask = torch.ones(targets.shape[:2], dtype=torch.bool)
    with torch.no_grad():
        if readout == "bernoulli":
            if targets.shape[2] != input_dim:
                raise ValueError(
                    f"input_dim must equal the number of keys {targets.shape[2]}, got {input_dim}"
                )
            on = (targets * mask.unsqueeze(2)).sum(dim=(0, 1))
            p = (on + 0.5) / (mask.sum() + 1.0)
            base.c.copy_(torch.log(p) - torch.log1p(-p))
        else:
            if int(targets.max()) >= input_dim:
                raise ValueError(f"input_dim must exceed every code, got {input_dim}")
            counts = torch.bincount(targets[mask], minlength=input_dim).to(base.dtype)
            base.c.copy_(torch.log((counts + 0.5) / (counts.sum() + 0.5 * input_dim)))
    if not previous:
        return base
    if (
        readout == "categorical"
    ):  # the logistic regression on a one-hot previous step is the bigram model:
        with (
            torch.no_grad()
        ):  # its maximum-likelihood fit is closed-form (add-1/2 smoothing; l2 unused)
            pairs = torch.zeros(input_dim, input_dim, dtype=base.dtype)
            pairs.index_put_(
                (targets[mask], inputs[mask]),
                torch.ones(int(mask.sum()), dtype=base.dtype),
                accumulate=True,
            )
            base.A.copy_(
                torch.log(
                    (pairs + 0.5) / (pairs.sum(dim=0, keepdim=True) + 0.5 * input_dim)
                )
            )
            base.c.zero_()
        return base
    # the objective depends on the data only through, for each distinct previous frame,
    # how often it occurs and the sum of the frames that follow it: fit on those
    # (the same mean NLL, summed in another order, with far fewer rows)
    frames, inverse = torch.unique(inputs[0], dim=0, return_inverse=True)
    counts = torch.bincount(inverse, minlength=frames.shape[0]).to(base.dtype)
    on_sum = torch.zeros(frames.shape[0], input_dim, dtype=base.dtype).index_add_(
        0, inverse, targets[0]
    )
    n_pairs = float(inverse.numel())
    opt = torch.optim.LBFGS(
        base.parameters(),
        lr=1.0,
        max_iter=iterations,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        z = frames @ base.A.transpose(0, 1) + base.c
        # sum_t BCE(z, y_t) = n softplus(z) - (sum_t y_t) z, per frame and key
        nll = (counts.unsqueeze(1) * F.softplus(z) - on_sum * z).sum() / n_pairs
        loss = nll + l2 * (base.A**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return base


# --- training (chapter 11's loop) ------------------------------------------------------------------


@dataclass(frozen=True)
class NextStepHistory:
    """What :func:`train_next_step` recorded (chapter 11).

    ``loss``: the minibatch loss before each step (steps,); ``eval_steps``: the
    steps after which the validation metric ``valid`` and the certified
    contraction constant ``lam`` (``||W||_2`` or the LSTM's ``lambda_inf``) were
    measured; ``seconds``: wall time of the run; ``best_step``: the evaluation
    step whose weights the model holds at the end (the best validation metric
    when ``keep_best`` and a validation split were given, else the last step);
    ``last_step``: the steps taken (fewer than ``steps`` when ``patience``
    stopped the run); ``forget``: for an LSTM, the largest forget gate on the
    validation split at each evaluation step (NaN otherwise).
    """

    loss: np.ndarray
    eval_steps: np.ndarray
    valid: np.ndarray
    lam: np.ndarray
    seconds: float
    stable: bool
    best_step: int = 0
    last_step: int = 0
    forget: np.ndarray | None = None


def _minibatch(
    seqs: list,
    batch_size: int,
    window: int | None,
    gen: torch.Generator,
    state: dict,
) -> list:
    """Sequences for one step: epochs of a seeded permutation; with ``window``, a random crop of window + 1 steps."""
    if not state.get("order"):
        state["order"] = torch.randperm(len(seqs), generator=gen).tolist()
    take, state["order"] = (
        state["order"][:batch_size],
        state["order"][batch_size:],
    )
    out = []
    for i in take:
        s = seqs[i]
        if window is not None and s.shape[0] > window + 1:
            start = int(torch.randint(0, s.shape[0] - window, (1,), generator=gen))
            s = s[start : start + window + 1]
        out.append(s)
    return out


@validate_params(
    "steps",
    "batch_size",
    "lr",
    "lam",
    "f_max",
    "clip",
    "window",
    "eval_every",
    "patience",
    Relation(
        "patience is None or valid is not None",
        "patience must come with a valid split to watch",
    ),
    "generator",
    "progress",
    optimizer=Choice("adam", "sgd"),
    projection=Choice(*PROJECTIONS),
    stable=Bool(),
    keep_best=Bool(),
    model=Instance(NextStepModel),  # a non-finite model is a DivergenceError at step 1,
    train=ARRAYS,
    valid=ARRAYS,
)
def train_next_step(
    model: NextStepModel,
    train: Sequence[np.ndarray],
    valid: Sequence[np.ndarray] | None = None,
    *,
    steps: int,
    batch_size: int = 16,
    lr: float = 1e-2,
    optimizer: str = "adam",
    clip: float | None = 1.0,
    stable: bool = False,
    lam: float = 0.99,
    f_max: float = 0.605,
    projection: str = "certified",
    window: int | None = None,
    eval_every: int | None = None,
    patience: int | None = None,
    keep_best: bool = True,
    generator: torch.Generator | int | None = None,
    progress: bool = True,
) -> NextStepHistory:
    """Train a next-step model in place, unconstrained or projected onto the stable set (chapter 11).

    Each of ``steps`` optimizer steps takes ``batch_size`` training sequences
    (epochs of a seeded permutation; with ``window``, a random crop of
    ``window + 1`` steps of each, for long texts), computes the mean loss
    (NLL per frame, or bits per character) over the predicted steps, clips the
    gradient norm at ``clip``, and steps Adam or SGD with ``lr``. With
    ``stable=True`` the model is projected (:meth:`NextStepModel.project_`: RNN
    ``||W||_2 <= lam``, LSTM row-wise projection with ``f_max``) before training
    and after every step: projected gradient descent, as Miller & Hardt's code
    (their fork of locuslab/TCN) does. Every ``eval_every`` steps (and at the end) the validation
    metric and the certified constant are recorded. With ``keep_best`` (the
    default) and a ``valid`` split, the model ends with the weights of the
    evaluation step of lowest validation metric (early stopping by model
    selection, as the TCN benchmark code and the authors' fork of it do: they
    report the test metric at the best validation epoch); its step is
    ``history.best_step``. The projected model is stable at every evaluation
    step, so the selected one is too.

    Raises :class:`DivergenceError` naming the step and ``lr`` if the loss, a
    gradient or a weight stops being finite.
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    if (
        isinstance(train, (str, bytes))
        or not isinstance(train, Sequence)
        or len(train) == 0
    ):
        raise ValueError("train must be a non-empty list of sequences")
    eval_every = steps if eval_every is None else eval_every
    device = model.V.device
    gen = derive(generator, "minibatches")
    best = {"metric": math.inf, "step": 0, "state": None}
    train = _check_training_data(train, model)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = (
        torch.optim.Adam(params, lr=lr, betas=ADAM_BETAS)
        if optimizer == "adam"
        else torch.optim.SGD(params, lr=lr)
    )
    if stable:
        model.project_(lam=lam, f_max=f_max, projection=projection)
    losses, eval_steps, valid_hist, lam_hist, state = (
        [],
        [],
        [],
        [],
        {},
    )
    forget_hist, waited, last = [], 0, 0
    t0 = time.perf_counter()
    label = f"{model.kind} ({'stable' if stable else 'unstable'})"
    for step in progress_bar(range(1, steps + 1), enabled=progress, desc=label):
        # the data were checked once, above: the loop builds the batch and
        # the loss without re-validating them at every step
        x, pad = pad_sequences(
            _minibatch(train, batch_size, window, gen, state),
            dtype=model.dtype,
        )
        inputs, targets, mask = (
            x[:, :-1].to(device),
            x[:, 1:].to(device),
            pad[:, 1:].to(device),
        )
        logits = model._training_logits(inputs)
        if not bool(torch.isfinite(logits).all()):
            raise DivergenceError(
                f"{label}: the predictions became NaN/inf at step {step} with lr = {lr:g}; lower lr or clip the gradient"
            )
        loss = _readout_loss(model.readout, logits, targets, mask)
        opt.zero_grad()
        loss.backward()
        # one finiteness test each for the loss and the gradient (through its
        # norm), and one for the weights
        grads = [p.grad for p in params if p.grad is not None]
        grad_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
        if not bool(torch.isfinite(loss + grad_norm)):
            raise DivergenceError(
                f"{label}: the loss or its gradient became NaN/inf at step {step} (loss {float(loss.detach()):.3g}) "
                f"with lr = {lr:g}; lower lr or clip the gradient"
            )
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        if stable:
            model.project_(lam=lam, f_max=f_max, projection=projection)
        if not bool(
            torch.isfinite(
                torch.stack(torch._foreach_norm([p.detach() for p in params])).sum()
            )
        ):
            raise DivergenceError(
                f"{label}: the weights became NaN/inf at step {step} with lr = {lr:g}; lower lr"
            )
        losses.append(float(loss.detach()))
        last = step
        if step % eval_every == 0 or step == steps:
            eval_steps.append(step)
            valid_hist.append(evaluate(model, valid) if valid is not None else math.nan)
            lam_hist.append(model.worst_case_lambda())
            forget_hist.append(
                float(forget_gates(model, valid).max())
                if model.kind == "lstm" and valid is not None
                else math.nan
            )
            if valid is not None and valid_hist[-1] < best["metric"]:
                waited = 0
                best.update(
                    metric=valid_hist[-1],
                    step=step,
                    state={k: v.detach().clone() for k, v in model.state_dict().items()}
                    if keep_best
                    else None,
                )
            else:
                waited += 1
            if patience is not None and waited >= patience:
                break
    if best["state"] is not None and best["step"] != last:
        model.load_state_dict(best["state"])
    return NextStepHistory(
        np.array(losses),
        np.array(eval_steps),
        np.array(valid_hist),
        np.array(lam_hist),
        time.perf_counter() - t0,
        bool(stable),
        best_step=int(best["step"] if keep_best and best["step"] else last),
        last_step=int(last),
        forget=np.array(forget_hist),
    )


# --- data-dependent stability --------------------------------------------------------------------------------


def _length_sorted_batches(seqs: list[np.ndarray], batch_size: int) -> list[list[int]]:
    """Indices of ``seqs`` in batches of similar lengths (they pad less)."""
    order = [int(i) for i in np.argsort([s.shape[0] for s in seqs])]
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def _state_jacobians(model: NextStepModel, inputs: torch.Tensor) -> torch.Tensor:
    """``J_t = d s_t / d s_{t-1}`` (batch, T, S, S) at the model's own states.

    In closed form (checked against autograd in the tests). RNN:
    ``diag(1 - h_t^2) W``. LSTM, state ``s = (c, h)``, gates ``(i, f, z, o)``
    at ``(s_{t-1}, x_t)``, ``tc = tanh(c_t)``::

        dc/dc' = diag(f)
        dc/dh' = diag(z i (1-i)) W_i + diag(c' f (1-f)) W_f + diag(i (1-z^2)) W_z
        dh/dc' = diag(o (1 - tc^2)) dc/dc'
        dh/dh' = diag(tc o (1-o)) W_o + diag(o (1 - tc^2)) dc/dh'
    """
    u = model.encode(inputs)
    core = model.core
    if model.kind == "rnn":
        h = model.hidden_states(u)
        return (1 - h**2).unsqueeze(-1) * core.W
    batch, T, n = u.shape
    H = core.hidden_dim
    states = core(u)
    prev = torch.cat(
        [core.initial_state(batch).unsqueeze(1), states[:, :-1]],
        dim=1,
    ).reshape(-1, 2 * H)
    i, f, z, o = core.gates(prev, u.reshape(-1, n))
    c_prev = prev[:, :H]
    tc = torch.tanh(i * z + f * c_prev)
    Wi, Wf, Wz, Wo = core.W.chunk(4, dim=0)
    dc_dh = (
        (z * i * (1 - i)).unsqueeze(2) * Wi
        + (c_prev * f * (1 - f)).unsqueeze(2) * Wf
        + (i * (1 - z**2)).unsqueeze(2) * Wz
    )
    out_gain = o * (1 - tc**2)
    dh_dh = (tc * o * (1 - o)).unsqueeze(2) * Wo + out_gain.unsqueeze(2) * dc_dh
    J = torch.zeros(prev.shape[0], 2 * H, 2 * H, dtype=u.dtype)
    idx = torch.arange(H)
    J[:, idx, idx] = f
    J[:, :H, H:] = dc_dh
    J[:, H + idx, idx] = out_gain * f
    J[:, H:, H:] = dh_dh
    return J.reshape(batch, T, 2 * H, 2 * H)


def _window_products(J: torch.Tensor, r: int) -> torch.Tensor:
    """``P_t = J_t J_{t-1} ... J_{t-r+1}`` for t = r-1..T-1 of J (batch, T, S, S).

    Sliding-window products in about 3 matrix products per t instead of
    r - 1: within blocks of r steps, prefix products ``L`` (from the block's
    start up to t) and suffix products ``R`` (from s to the block's end);
    a window starting at s that is not a block start is ``L[s+r-1] R[s]``.
    """
    batch, T, S, _ = J.shape
    nb = -(-T // r)
    eye = torch.eye(S, dtype=J.dtype).expand(batch, nb * r - T, S, S)
    B = torch.cat([J, eye], dim=1).reshape(batch, nb, r, S, S)
    L, R = B.clone(), B.clone()
    for j in range(1, r):
        L[:, :, j] = B[:, :, j] @ L[:, :, j - 1]
        R[:, :, r - 1 - j] = R[:, :, r - j] @ B[:, :, r - 1 - j]
    L = L.reshape(batch, nb * r, S, S)
    R = R.reshape(batch, nb * r, S, S)
    s = torch.arange(T - r + 1)
    P = L[:, s + r - 1] @ R[:, s]
    starts = s[s % r == 0]
    P[:, starts] = R[:, starts]
    return P


@validate_params("batch_size", model=Model(NextStepModel), seqs=ARRAYS)
def local_jacobian_norms(
    model: NextStepModel,
    seqs: Sequence[np.ndarray],
    *,
    batch_size: int = 8,
    ord: float = 2,
) -> np.ndarray:
    """``||d s_t / d s_{t-1}||_2`` at every step of every sequence of ``seqs`` (chapter 11).

    The local contraction of the trained recurrence along real data, at the
    model's own states (``s_0 = 0``), for the steps that produce predictions
    (inputs ``x_1..x_{T-1}``). RNN: ``J_t = diag(1 - h_t^2) W``; LSTM: the
    Jacobian of the full state ``s = (c, h)`` (2H x 2H), in closed form (the
    same as :func:`rnnlib.stability.state_jacobians`' autograd, checked in the
    tests). Returns a 1-d array over all
    steps, sequence by sequence in the order of ``seqs`` (computed in batches
    of similar lengths; padded steps are never normed).
    The worst case over all states is ``||W||_2`` for the RNN (``|tanh'| <= 1``).
    ``ord=math.inf`` gives the l_inf operator norm (largest absolute row sum)
    instead, the norm of chapter 8's LSTM certificate.
    """
    if ord not in (2, math.inf):
        raise ValueError(f"ord must be 2 or math.inf, got {ord!r}")
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    seqs = _check_seqs(seqs)
    out: list = [None] * len(seqs)
    with torch.no_grad():
        for chunk in _length_sorted_batches(seqs, batch_size):
            inputs, _, mask = next_step_batch(
                [seqs[i] for i in chunk], dtype=model.dtype
            )
            J = _state_jacobians(model, inputs)[mask]
            norms = torch.linalg.matrix_norm(J, ord=ord)
            counts = mask.sum(dim=1).tolist()
            for i, part in zip(chunk, norms.split(counts)):
                out[i] = part.double().numpy()
    return np.concatenate(out)


@validate_params(
    "batch_size",
    r=Int(1),
    model=Model(NextStepModel),
    seqs=ARRAYS,
)
def multi_step_jacobian_norms(
    model: NextStepModel,
    seqs: Sequence[np.ndarray],
    r: int,
    *,
    batch_size: int = 8,
) -> np.ndarray:
    """``||d s_t / d s_{t-r}||_2 = ||J_t J_{t-1} ... J_{t-r+1}||_2`` along real sequences (chapter 11).

    The contraction of ``r`` consecutive steps at the model's own states, for
    every t with ``r`` steps of history (``J_t`` as in :func:`local_jacobian_norms`).
    A model whose single steps often expand can still contract over a few
    steps; this is what truncation (chapter 9) needs. The products are formed
    by sliding windows (about three matrix products per step, whatever ``r``).
    Returns a 1-d array over all such t, sequence by sequence in the order of
    ``seqs`` (empty if no sequence has ``r`` predicting steps).
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    seqs = _check_seqs(seqs)
    out: list = [np.zeros(0)] * len(seqs)
    with torch.no_grad():
        for chunk in _length_sorted_batches(seqs, batch_size):
            inputs, _, mask = next_step_batch(
                [seqs[i] for i in chunk], dtype=model.dtype
            )
            if inputs.shape[1] < r:
                continue
            keep = mask[:, r - 1 :]
            P = _window_products(_state_jacobians(model, inputs), r)
            norms = torch.linalg.matrix_norm(P[keep], ord=2)
            counts = keep.sum(dim=1).tolist()
            for i, part in zip(chunk, norms.split(counts)):
                out[i] = part.double().numpy()
    return np.concatenate(out)


@validate_params(worst_case=POSITIVE)
def contraction_summary(
    norms: np.ndarray, worst_case: float | None = None
) -> dict[str, float]:
    """Summary of local Jacobian norms: fraction of contractive steps (< 1), quantiles, max (chapter 11).

    With ``worst_case`` (e.g. ``||W||_2``), also the ratio of the median to it.
    """
    norms = np.asarray(norms, dtype=float)
    if (
        norms.ndim != 1
        or norms.size == 0
        or not np.all(np.isfinite(norms))
        or np.any(norms < 0)
    ):
        raise ValueError(
            "norms must be a non-empty 1-d array of finite non-negative numbers"
        )
    out = {
        "fraction contractive": float(np.mean(norms < 1)),
        "median": float(np.median(norms)),
        "q90": float(np.quantile(norms, 0.9)),
        "q99": float(np.quantile(norms, 0.99)),
        "max": float(norms.max()),
    }
    if worst_case is not None:
        out["worst case"] = worst_case
        out["median / worst case"] = out["median"] / worst_case
    return out


@validate_params(
    digits=Int(0),
    fmt=Choice("markdown", "html"),
    columns=Instance(Mapping),
    notes=Instance(Mapping),
)
def results_table(
    columns: dict[str, dict[str, float]],
    notes: dict[str, str] | None = None,
    *,
    digits: int = 3,
    fmt: str = "markdown",
) -> str:
    """A table of measured metrics: one column per task, one row per model (chapter 11).

    ``columns`` maps a column title to ``{row label: value}``; rows appear in order
    of first appearance, a missing value as a dash. ``notes`` adds a last row
    (e.g. the paper's claim for each column). ``fmt``: ``"markdown"`` or ``"html"``
    (for ``IPython.display.HTML``, which the book renders as a table).
    """
    if not isinstance(columns, dict) or not columns:
        raise ValueError("columns must be a non-empty dict title -> {row: value}")
    rows: list[str] = []
    for title, col in columns.items():
        if not isinstance(col, dict):
            raise TypeError(
                f"columns[{title!r}] must be a dict row -> value, got {type(col).__name__}"
            )
        for label, value in col.items():
            check_real(value, f"columns[{title!r}][{label!r}]")
            if label not in rows:
                rows.append(label)
    if fmt == "html":
        esc = html.escape
        out = [
            "<table>",
            "<thead><tr><th>model</th>"
            + "".join(f"<th>{esc(t)}</th>" for t in columns)
            + "</tr></thead>",
            "<tbody>",
        ]
        for label in rows:
            cells = [
                f"{columns[t][label]:.{digits}f}" if label in columns[t] else "–"
                for t in columns
            ]
            out.append(
                f"<tr><td>{esc(label)}</td>"
                + "".join(f"<td>{c}</td>" for c in cells)
                + "</tr>"
            )
        if notes:
            out.append(
                "<tr><td><em>the paper's claim</em></td>"
                + "".join(f"<td><em>{esc(notes.get(t, ''))}</em></td>" for t in columns)
                + "</tr>"
            )
        return "\n".join(out + ["</tbody>", "</table>"])
    lines = [
        "| model | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for label in rows:
        cells = [
            f"{columns[t][label]:.{digits}f}" if label in columns[t] else "–"
            for t in columns
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if notes:
        lines.append(
            "| *the paper's claim* | "
            + " | ".join(f"*{notes[t]}*" if notes.get(t) else "" for t in columns)
            + " |"
        )
    return "\n".join(lines)
