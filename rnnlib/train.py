"""Training loops (chapters 5-7 and 11).

Placeholder of the house issue: the loops of chapters 5-7 (Part I, SGD in the
lazy regime) and chapter 11 (Part II) are added here. It already holds the one
error every training loop raises when the loss or the weights stop being finite.
"""

from __future__ import annotations

from ._validation import DivergenceError

__all__ = ["DivergenceError"]


# --- Part II: next-step models (chapter 11) ---

import math  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from ._rng import derive  # noqa: E402
from ._validation import check_int, check_real  # noqa: E402
from .next_step import NextStepModel, _loss, evaluate, next_step_batch  # noqa: E402

__all__ += ["NextStepHistory", "train_next_step", "train_stable_and_unstable"]


@dataclass(frozen=True)
class NextStepHistory:
    """What :func:`train_next_step` recorded (chapter 11).

    ``loss``: the minibatch loss before each step (steps,); ``eval_steps``: the
    steps after which the validation metric ``valid`` and the certified
    contraction constant ``lam`` (``||W||_2`` or the LSTM's ``lambda_inf``) were
    measured; ``seconds``: wall time of the run.
    """

    loss: np.ndarray
    eval_steps: np.ndarray
    valid: np.ndarray
    lam: np.ndarray
    seconds: float
    stable: bool


def _minibatch(seqs: list, batch_size: int, window: int | None, gen: torch.Generator, state: dict) -> list:
    """Sequences for one step: epochs of a seeded permutation; with ``window``, a random crop of window + 1 steps."""
    if not state.get("order"):
        state["order"] = torch.randperm(len(seqs), generator=gen).tolist()
    take, state["order"] = state["order"][:batch_size], state["order"][batch_size:]
    out = []
    for i in take:
        s = seqs[i]
        if window is not None and s.shape[0] > window + 1:
            start = int(torch.randint(0, s.shape[0] - window, (1,), generator=gen))
            s = s[start : start + window + 1]
        out.append(s)
    return out


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
    window: int | None = None,
    eval_every: int | None = None,
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
    and after every step: projected gradient descent, as Miller & Hardt (2019,
    Sec. 4) did. Every ``eval_every`` steps (and at the end) the validation
    metric and the certified constant are recorded.

    Raises :class:`DivergenceError` naming the step and ``lr`` if the loss, a
    gradient or a weight stops being finite.
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    if isinstance(train, (str, bytes)) or not isinstance(train, Sequence) or len(train) == 0:
        raise ValueError("train must be a non-empty list of sequences")
    steps = check_int(steps, "steps", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    lr = check_real(lr, "lr", low=0.0, low_open=True)
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    if clip is not None:
        clip = check_real(clip, "clip", low=0.0, low_open=True)
    lam = check_real(lam, "lam", low=0.0, high=1.0, low_open=True)
    f_max = check_real(f_max, "f_max", low=0.0, high=1.0, low_open=True, high_open=True)
    if window is not None:
        window = check_int(window, "window", minimum=1)
    eval_every = steps if eval_every is None else check_int(eval_every, "eval_every", minimum=1)
    gen = derive(generator, "minibatches")
    train = [np.asarray(s) for s in train]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr) if optimizer == "adam" else torch.optim.SGD(params, lr=lr)
    if stable:
        model.project_(lam=lam, f_max=f_max)
    losses, eval_steps, valid_hist, lam_hist, state = [], [], [], [], {}
    t0 = time.perf_counter()
    label = f"{model.kind} ({'stable' if stable else 'unstable'})"
    for step in tqdm(range(1, steps + 1), desc=label, disable=not progress, leave=False):
        inputs, targets, mask = next_step_batch(_minibatch(train, batch_size, window, gen, state), dtype=model.dtype)
        logits = model(inputs)
        if not bool(torch.isfinite(logits).all()):
            raise DivergenceError(
                f"{label}: the predictions became NaN/inf at step {step} with lr = {lr:g}; lower lr or clip the gradient"
            )
        loss = _loss(model, logits, targets, mask, "mean")
        opt.zero_grad()
        loss.backward()
        grads_finite = all(bool(torch.isfinite(p.grad).all()) for p in params if p.grad is not None)
        if not bool(torch.isfinite(loss)) or not grads_finite:
            raise DivergenceError(
                f"{label}: the loss or its gradient became NaN/inf at step {step} (loss {float(loss.detach()):.3g}) "
                f"with lr = {lr:g}; lower lr or clip the gradient"
            )
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        if stable:
            model.project_(lam=lam, f_max=f_max)
        if not all(bool(torch.isfinite(p).all()) for p in params):
            raise DivergenceError(f"{label}: the weights became NaN/inf at step {step} with lr = {lr:g}; lower lr")
        losses.append(float(loss.detach()))
        if step % eval_every == 0 or step == steps:
            eval_steps.append(step)
            valid_hist.append(evaluate(model, valid) if valid is not None else math.nan)
            lam_hist.append(model.worst_case_lambda())
    return NextStepHistory(
        np.array(losses), np.array(eval_steps), np.array(valid_hist), np.array(lam_hist),
        time.perf_counter() - t0, bool(stable),
    )


def train_stable_and_unstable(
    kind: str,
    train: Sequence[np.ndarray],
    valid: Sequence[np.ndarray] | None = None,
    *,
    input_dim: int,
    hidden_dim: int,
    readout: str = "bernoulli",
    generator: torch.Generator | int | None = None,
    **train_kwargs,
) -> dict[str, tuple[NextStepModel, NextStepHistory]]:
    """Train the same next-step model twice, unconstrained and projected (chapter 11).

    Both runs start from the same initial weights (drawn from ``generator``'s
    stream ``"init"``, read-out bias at the training marginals), see the same
    minibatches (stream ``"data"``) and use the same optimizer and number of
    steps (``train_kwargs`` of :func:`train_next_step`); only ``stable`` differs.
    Returns ``{"unstable": (model, history), "stable": (model, history)}``.
    """
    if "stable" in train_kwargs:
        raise ValueError("train_kwargs must not set stable: both variants are trained")
    out = {}
    for variant in ("unstable", "stable"):
        model = NextStepModel(kind, input_dim, hidden_dim, readout=readout, generator=derive(generator, "init"))
        model.init_output_bias_(train)
        history = train_next_step(
            model, train, valid, stable=variant == "stable", generator=derive(generator, "data"), **train_kwargs
        )
        out[variant] = (model, history)
    return out
