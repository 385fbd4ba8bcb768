"""Chapter 11's experiments: stable and unstable next-step models on JSB Chorales and ABC text.

Two tiers (``rnnlib.records``):

* the **live run** of the chapter (:func:`train_models`): one seed, the four music
  models (tanh RNN and LSTM, unconstrained and projected onto chapter 8's
  certified stable sets) at laptop size (:data:`DEFAULTS`, the chapter's parameters
  cell);
* the **recorded run** (:func:`run_record`, ``make record CH=11`` or
  ``python -m rnnlib.experiments.ch11 --record``): every seed of :data:`RECORD`,
  every model trained with patience to its validation optimum, the three LSTM
  constraints (unconstrained, certified, the authors' column rescaling), the
  forget-gate bound sweep ("the price of stability"), the text models on whole
  tunes, truncated evaluation and local Jacobians, written to
  ``chapters/records/ch11.json`` with its provenance and a :func:`fingerprint`
  (a 20-step float64 CPU run of the same code path) that the chapter re-runs.

Also here: paired stable - unstable differences over seeds (:func:`paired`), the
agreement of the live run with the record where they overlap (:func:`overlap`), and
chapter 9's inference bound at a trained model's constants (:func:`inference_bound_at`).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from .. import next_step as ns
from .. import records
from .._rng import derive
from .._validation import (
    ANY_REAL,
    POSITIVE,
    Bool,
    Choice,
    Instance,
    Int,
    Ints,
    Model,
    PathLike,
    Relation,
    Seq,
    Str,
    check_int,
    check_real,
    validate_params,
)
from ..data import ARRAYS, N_KEYS, PianoRollData, TextData
from ..next_step import (
    NextStepHistory,
    NextStepModel,
    train_next_step,
)
from ..stability import certify, input_lipschitz, lstm_forget_bound
from ..truncation import inference_bound, k_for_epsilon

__all__ = [
    "CHAPTER",
    "DEFAULTS",
    "RECORD",
    "SMOKE",
    "VARIANTS",
    "AUTHORS_FORGET_BIAS",
    "train_stable_and_unstable",
    "TrainedVariant",
    "train_variant",
    "TrainedModels",
    "train_models",
    "measure_music",
    "run_record",
    "fingerprint",
    "make_record",
    "load_record",
    "check_record",
    "paired",
    "overlap",
    "seed_values",
    "sweep_values",
    "inference_bound_at",
]

#: The chapter whose record this module makes.
CHAPTER = 11

#: The sizes of chapter 11's parameters cell (the live run; its checks were piloted at
#: these, and tests/test_ch11_benchmark.py compares them with the notebook). The music
#: settings are the record's, capped at ``music_steps``, so the live run of seed 0 is the
#: first ``music_steps`` steps of the recorded one (:func:`overlap`).
DEFAULTS: dict[str, float | int] = {
    "hidden": 64,
    "music_steps": 300,
    "music_batch": 16,
    "music_lr": 5e-3,
    "music_eval": 50,
    "clip": 1.0,
    "lam": 0.99,
    "f_max": 0.605,
    "k_check": 16,
    "r_multi": 16,
    "jac_n": 24,
}

#: The forget-gate bias of the authors' LSTM: their ``init_weights()`` fills the forget
#: slice of both of torch's bias vectors with 10, and the two add up.
AUTHORS_FORGET_BIAS = 20.0

#: The trained models of a seed: name -> (core, constraint, forget-gate bound). "stable"
#: is chapter 8's certified projection; "authors" the column rescaling of Miller &
#: Hardt's code (forget bias 20 at initialization, biases free).
VARIANTS = {
    "rnn unstable": ("rnn", None),
    "rnn stable": ("rnn", "certified"),
    "lstm unstable": ("lstm", None),
    "lstm stable": ("lstm", "certified"),
    "lstm authors": ("lstm", "authors"),
}

#: The recorded run (``make record CH=11``): sizes, seeds, patience.
RECORD: dict = {
    "seeds": [0, 1, 2, 3, 4],
    "music": {
        "hidden": 64,
        "batch": 16,
        "lr": 5e-3,
        "max_steps": 3000,
        "eval_every": 50,
        "patience": 10,
        "n_train": None,
        "variants": list(VARIANTS),
    },
    "sweep": {
        "f_max": [0.8, 0.9, 0.99],
        "seeds": [0, 1, 2, 3, 4],
    },
    "text": {
        "hidden": 32,
        "batch": 16,
        "lr": 1e-2,
        "max_steps": 16000,
        "eval_every": 200,
        "patience": 3,
        "window": None,
        "n_train": None,
        "variants": [
            "rnn unstable",
            "rnn stable",
            "lstm unstable",
            "lstm stable",
        ],
    },
    "clip": 1.0,
    "lam": 0.99,
    "f_max": 0.605,
    "ks": [4, 16, 32],
    "jac_n": 24,
    "r_multi": 16,
}

#: The record at a size that takes seconds (CI runs it; never written over the record).
SMOKE: dict = copy.deepcopy(RECORD)
SMOKE["seeds"] = [0, 1]  # two: paired differences need two seeds
SMOKE["music"].update(hidden=4, max_steps=4, eval_every=2, patience=1, n_train=12)
SMOKE["sweep"] = {"f_max": [0.9], "seeds": [0, 1]}
SMOKE["text"].update(hidden=4, max_steps=2, eval_every=1, patience=1, n_train=8)
SMOKE.update(ks=[2], jac_n=2, r_multi=2)

# the short deterministic run whose outputs fingerprint the code path
_FP = {
    "steps": 20,
    "eval_every": 10,
    "hidden": 8,
    "batch": 8,
    "n_train": 24,
    "n_valid": 8,
    # text: fewer, shorter steps (whole tunes are long), two of its variants
    "text_steps": 10,
    "text_batch": 4,
    "text_n": 8,
    "text_variants": ("rnn unstable", "lstm stable"),
}


# --- validation ---------------------------------------------------------------------------------


def _check_params(params: dict) -> dict:
    unknown = set(params) - set(DEFAULTS)
    if unknown:
        raise ValueError(
            f"unknown parameters {sorted(unknown)}; known: {sorted(DEFAULTS)}"
        )
    out = {**DEFAULTS, **params}
    for name in (
        "hidden",
        "music_steps",
        "music_batch",
        "music_eval",
        "k_check",
        "r_multi",
        "jac_n",
    ):
        out[name] = check_int(out[name], name, minimum=1)
    for name in ("music_lr", "clip", "lam", "f_max"):
        out[name] = check_real(out[name], name, low=0.0, low_open=True)
    return out


def _check_music(music: object) -> PianoRollData:
    if not isinstance(music, PianoRollData):
        raise TypeError(f"music must be a PianoRollData, got {type(music).__name__}")
    return music


def _check_text(text: object) -> TextData | None:
    if text is not None and not isinstance(text, TextData):
        raise TypeError(f"text must be a TextData or None, got {type(text).__name__}")
    return text


def _check_config(config: object) -> dict:
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a dict like RECORD, got {type(config).__name__}"
        )
    missing = set(RECORD) - set(config)
    if missing:
        raise ValueError(f"config is missing {sorted(missing)} (see RECORD)")
    if not config["seeds"] or not all(
        isinstance(s, int) and s >= 0 for s in config["seeds"]
    ):
        raise ValueError("config['seeds'] must be a non-empty list of ints >= 0")
    unknown = set(config["music"]["variants"]) - set(VARIANTS)
    if unknown:
        raise ValueError(
            f"config['music']['variants']: unknown {sorted(unknown)}; known {list(VARIANTS)}"
        )
    return dict(config)


def _check_device(device: object) -> torch.device:
    try:
        return torch.device(device)
    except (TypeError, RuntimeError) as err:
        raise ValueError(
            f"device must name a torch device ('cpu', 'cuda'), got {device!r}"
        ) from err


# --- training -----------------------------------------------------------------------------------


@validate_params(
    "input_dim",
    "hidden_dim",
    "generator",
    kind=Choice(*ns.KINDS),
    readout=Choice(*ns.READOUTS),
    train=ARRAYS,
    valid=ARRAYS,
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
    steps (``train_kwargs`` of :func:`rnnlib.next_step.train_next_step`); only
    ``stable`` differs: projected gradient descent onto chapter 8's certified set
    (``||W||_2 <= lam``; the LSTM's row-sum condition with forget gates
    ``<= f_max``). Returns ``{"unstable": (model, history), "stable": (model, history)}``.
    """
    if "stable" in train_kwargs:
        raise ValueError("train_kwargs must not set stable: both variants are trained")
    out = {}
    for variant in ("unstable", "stable"):
        out[variant] = _train_one(
            kind,
            train,
            valid,
            constraint="certified" if variant == "stable" else None,
            input_dim=input_dim,
            hidden_dim=hidden_dim,
            readout=readout,
            generator=generator,
            **train_kwargs,
        )
    return out


class TrainedVariant(NamedTuple):
    """:func:`train_variant` results: the trained model (on the CPU) and its history."""

    #: the model at its best validation NLL
    model: NextStepModel
    #: its training history
    history: NextStepHistory


def _train_one(
    kind: str,
    train: Sequence[np.ndarray],
    valid: Sequence[np.ndarray] | None,
    *,
    constraint: str | None,
    input_dim: int,
    hidden_dim: int,
    readout: str,
    generator: torch.Generator | int | None,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
    **train_kwargs,
) -> TrainedVariant:
    model = NextStepModel(
        kind,
        input_dim,
        hidden_dim,
        readout=readout,
        forget_bias=AUTHORS_FORGET_BIAS if constraint == "authors" else 1.0,
        generator=derive(generator, "init"),
        dtype=dtype,
    )
    model.init_output_bias_(train)
    model.to(device)
    history = train_next_step(
        model,
        train,
        valid,
        stable=constraint is not None,
        projection=constraint or "certified",
        generator=derive(generator, "data"),
        **train_kwargs,
    )
    return TrainedVariant(model.to("cpu"), history)


@validate_params(
    "input_dim",
    "hidden_dim",
    "dtype",
    generator=Int(0),
    name=Str(),
    readout=Choice(*ns.READOUTS),
    device=records.DEVICE,
    train=ARRAYS,
    valid=ARRAYS,
)
def train_variant(
    name: str,
    train: Sequence[np.ndarray],
    valid: Sequence[np.ndarray] | None,
    *,
    generator: int,
    input_dim: int,
    hidden_dim: int,
    readout: str = "bernoulli",
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
    **train_kwargs,
) -> TrainedVariant:
    """One of chapter 11's trained models (:data:`VARIANTS`), back on the CPU.

    ``name``: ``"rnn unstable"``, ``"rnn stable"``, ``"lstm unstable"``,
    ``"lstm stable"`` (chapter 8's certified projection, forget gates
    ``<= f_max``) or ``"lstm authors"`` (the column rescaling of Miller & Hardt's
    code, :func:`rnnlib.stability.rescale_lstm_columns_`, with their forget bias
    of 20 at initialization). Every variant of a seed starts from the same core
    weights and sees the same minibatches (:func:`train_stable_and_unstable`).
    The model trains on ``device`` and is returned on the CPU.
    """
    if name not in VARIANTS:
        raise ValueError(f"name must be one of {list(VARIANTS)}, got {name!r}")
    kind, constraint = VARIANTS[name]
    return _train_one(
        kind,
        train,
        valid,
        constraint=constraint,
        input_dim=input_dim,
        hidden_dim=hidden_dim,
        readout=readout,
        generator=generator,
        device=_check_device(device),
        dtype=dtype,
        **train_kwargs,
    )


class TrainedModels(NamedTuple):
    """:func:`train_models` results, both keyed by ``(task, kind, variant)``."""

    #: the trained models
    models: dict
    #: their training histories
    histories: dict


@validate_params(
    "progress",
    generator=Int(0),
    music=Instance(PianoRollData),
    device=records.DEVICE,
)
def train_models(
    music: PianoRollData,
    *,
    generator: int,
    progress: bool = True,
    device: str = "cpu",
    **params: float | int,
) -> TrainedModels:
    """Chapter 11's live run: the four music models of one seed (RNN and LSTM, unstable and stable).

    Each pair comes from :func:`train_stable_and_unstable` (same initial
    weights, same minibatches, only the projection differs), seeded by
    ``generator`` (an int); ``params`` override :data:`DEFAULTS` (the chapter's
    parameters cell). The models are kept at their best validation NLL
    (checked every ``music_eval`` steps, at most ``music_steps`` steps). Returns
    ``(models, histories)``, both keyed by ``(task, kind, variant)`` with task
    ``"music"``.
    """
    music = _check_music(music)
    p = _check_params(params)
    dev = _check_device(device)
    models, histories = {}, {}
    for name in (
        "rnn unstable",
        "rnn stable",
        "lstm unstable",
        "lstm stable",
    ):
        model, hist = train_variant(
            name,
            music.train,
            music.valid,
            generator=generator,
            input_dim=N_KEYS,
            hidden_dim=p["hidden"],
            device=str(dev),
            steps=p["music_steps"],
            batch_size=p["music_batch"],
            lr=p["music_lr"],
            eval_every=p["music_eval"],
            clip=p["clip"],
            lam=p["lam"],
            f_max=p["f_max"],
            progress=progress,
        )
        kind, variant = name.split()
        models["music", kind, variant] = model
        histories["music", kind, variant] = hist
    return TrainedModels(models, histories)


# --- the measurements of a trained model --------------------------------------------------------


def _history_dict(h: NextStepHistory) -> dict:
    return {
        "best_step": int(h.best_step),
        "last_step": int(h.last_step),
        "eval_steps": [int(s) for s in h.eval_steps],
        "valid": [float(v) for v in h.valid],
        "lambda": [float(v) for v in h.lam],
        "forget_max": [float(v) for v in h.forget] if h.forget is not None else [],
    }


@validate_params(
    jac_n=Int(1),
    r_multi=Int(1),
    model=Model(NextStepModel),
    jacobians=Bool(),
    test=ARRAYS,
    ks=Ints(1),
)
def measure_music(
    model: NextStepModel,
    test: Sequence[np.ndarray],
    *,
    ks: Sequence[int],
    jac_n: int,
    r_multi: int,
    jacobians: bool = True,
) -> dict:
    """What the record keeps of a trained music model (chapter 11).

    ``test`` NLL; the certified constant (``||W||_2`` or ``lambda_inf``) and,
    for an LSTM, its forget gates on ``test`` (max, mean, 99th percentile) and the
    memory time ``1 / (1 - max f)``; for each ``k`` of ``ks``
    :func:`rnnlib.next_step.truncation_excess` (excess NLL on the frames with
    ``t > k`` and the share of untouched frames); with ``jacobians``, the share of
    contracting single steps (l2; l_inf for an LSTM) and the median
    ``r_multi``-step Jacobian norm on the first ``jac_n`` test chorales.
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    out = {
        "test": float(ns.evaluate(model, test)),
        "lambda": float(model.worst_case_lambda()),
        "truncation": {str(k): ns.truncation_excess(model, test, k) for k in ks},
    }
    if model.kind == "lstm":
        f = ns.forget_gates(model, test)
        out["forget"] = {
            "max": float(f.max()),
            "mean": float(f.mean()),
            "p99": float(np.quantile(f, 0.99)),
        }
        # the bound the certificate uses (1 when sigma saturates in float64)
        out["forget bound"] = float(lstm_forget_bound(model.core, 1.0))
    if jacobians:
        jac = list(test[:jac_n])
        out["contractive"] = float(np.mean(ns.local_jacobian_norms(model, jac) < 1))
        out["multi"] = float(
            np.median(ns.multi_step_jacobian_norms(model, jac, r_multi))
        )
        if model.kind == "lstm":
            out["contractive inf"] = float(
                np.mean(ns.local_jacobian_norms(model, jac, ord=math.inf) < 1)
            )
    return out


def _subset(seqs: Sequence, n: int | None) -> list:
    return list(seqs) if n is None else list(seqs[:n])


def _baselines(music: PianoRollData, text: TextData | None) -> dict:
    out = {}
    tasks = {"music": (music, N_KEYS)}
    if text is not None:
        tasks["text"] = (text, len(text.vocab))
    for task, (d, n) in tasks.items():
        for name, previous in (
            ("marginal", False),
            ("previous step", True),
        ):
            b = ns.fit_baseline(d.train, input_dim=n, previous=previous)
            out[f"{task} {name}"] = float(ns.evaluate(b, d.test))
    return out


def _record_task(
    task: tuple,
    music: PianoRollData,
    text: TextData | None,
    cfg: Mapping,
    dev: str,
    progress: bool,
) -> tuple[tuple, dict, str]:
    """One trained model of the record: ``task`` is ("music", seed, name, f_max) or ("text", seed, name).

    Returns the task, its JSON-ready row and its log line. Each model depends only on
    its own seed and settings (:func:`train_variant` derives every stream from the
    seed), so the tasks may run in any order and in any process.
    """
    kind, seed, name = task[:3]
    part = cfg[kind]
    if kind == "music":
        f_max = task[3]
        data, extra = music, dict(input_dim=N_KEYS)
    else:
        f_max = cfg["f_max"]
        data = text
        extra = dict(
            input_dim=len(text.vocab),
            readout="categorical",
            window=part["window"],
        )
    t0 = time.process_time()
    model, hist = train_variant(
        name,
        _subset(data.train, part["n_train"]),
        data.valid,
        generator=seed,
        hidden_dim=part["hidden"],
        device=dev,
        steps=part["max_steps"],
        batch_size=part["batch"],
        lr=part["lr"],
        eval_every=part["eval_every"],
        patience=part["patience"],
        f_max=f_max,
        clip=cfg["clip"],
        lam=cfg["lam"],
        progress=progress,
        **extra,
    )
    if kind == "music":
        measured = measure_music(
            model,
            music.test,
            ks=cfg["ks"],
            jac_n=cfg["jac_n"],
            r_multi=cfg["r_multi"],
            jacobians=name.endswith("unstable") or f_max == cfg["f_max"],
        )
    else:
        measured = {
            "test": float(ns.evaluate(model, text.test)),
            "lambda": float(model.worst_case_lambda()),
        }
    row = {
        **_history_dict(hist),
        **measured,
        "cpu_seconds": round(time.process_time() - t0, 1),
    }
    line = (
        f"{kind} seed {seed} {name}"
        + (f" f_max {f_max}" if kind == "music" else "")
        + f": test {row['test']:.4f}, best step {row['best_step']} "
        f"of {row['last_step']}, {row['cpu_seconds']} s"
    )
    return task, row, line


def _record_worker(args: tuple) -> tuple[tuple, dict, str]:
    """A pool worker's call of :func:`_record_task` (one torch thread per worker)."""
    torch.set_num_threads(1)
    return _record_task(*args)


@validate_params(
    "progress",
    jobs=Int(1),
    music=Instance(PianoRollData),
    text=Instance(TextData),
    config=Instance(Mapping),
    device=records.DEVICE,
)
def run_record(
    music: PianoRollData,
    text: TextData | None,
    config: Mapping | None = None,
    *,
    device: str = "cpu",
    progress: bool = False,
    jobs: int = 1,
    log=print,
) -> dict:
    """The recorded experiment of chapter 11 (``make record CH=11``): every seed of ``config``.

    For each seed: the music models of ``config["music"]["variants"]``
    (:func:`train_variant`, patience-based stopping to the validation optimum,
    at most ``max_steps``), each with its training history and
    :func:`measure_music`; the certified LSTM at each forget-gate bound of
    ``config["sweep"]["f_max"]`` (the price of stability) on the sweep's seeds; and
    the text models (whole tunes when ``window`` is None), with their test bits
    per character and history. Also the two baselines. Trains on ``device``,
    measures on the CPU. With ``jobs`` > 1 the models train in that many worker
    processes (one thread each; the text models first, the longest); every model
    depends only on its own seed, so the result is the same for any ``jobs``.
    Returns a JSON-ready dict; each row's ``cpu_seconds`` is its own process's.
    """
    music = _check_music(music)
    text = _check_text(text)
    cfg = _check_config(RECORD if config is None else config)
    dev = str(_check_device(device))
    mc, tc = cfg["music"], cfg["text"]
    tasks: list[tuple] = []
    if text is not None:
        tasks += [
            ("text", seed, name) for name in tc["variants"] for seed in cfg["seeds"]
        ]
    tasks += [
        ("music", seed, name, cfg["f_max"])
        for seed in cfg["seeds"]
        for name in mc["variants"]
    ]
    tasks += [
        ("music", seed, "lstm stable", f_max)
        for f_max in cfg["sweep"]["f_max"]
        for seed in cfg["sweep"]["seeds"]
    ]
    rows: dict[tuple, dict] = {}
    if jobs == 1:
        for task in tasks:
            _, row, line = _record_task(task, music, text, cfg, dev, progress)
            rows[task] = row
            log(line)
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(
            max_workers=jobs, mp_context=mp.get_context("spawn")
        ) as pool:
            for task, row, line in pool.map(
                _record_worker,
                [(t, music, text, cfg, dev, False) for t in tasks],
            ):
                rows[task] = row
                log(line)
    results = {
        "baselines": _baselines(music, text),
        "music": {},
        "sweep": {},
        "text": {},
    }
    for seed in cfg["seeds"]:
        results["music"][str(seed)] = {
            name: rows["music", seed, name, cfg["f_max"]] for name in mc["variants"]
        }
    for f_max in cfg["sweep"]["f_max"]:
        results["sweep"][str(f_max)] = {
            str(seed): rows["music", seed, "lstm stable", f_max]
            for seed in cfg["sweep"]["seeds"]
        }
    if text is not None:
        for seed in cfg["seeds"]:
            results["text"][str(seed)] = {
                name: rows["text", seed, name] for name in tc["variants"]
            }
    return results


# --- the fingerprint ----------------------------------------------------------------------------


@validate_params(
    music=Instance(PianoRollData), text=Instance(TextData), config=Instance(Mapping)
)
def fingerprint(
    music: PianoRollData,
    text: TextData | None,
    config: Mapping | None = None,
) -> dict:
    """A short deterministic CPU run of the record's code path, in float64 (chapter 11).

    Seed 0, every music variant of ``config`` (and the certified LSTM at the
    first bound of the sweep): :func:`train_variant` for 20 steps of 8 sequences
    with a hidden size of 8, on the first 24 training and 8 validation sequences;
    the text RNN (unstable) and LSTM (stable) for 10 steps of 4 of the first 8
    tunes; with the record's learning rates, clipping, window,
    projections and :data:`rnnlib.next_step.ADAM_BETAS`; returns the training
    losses, the validation metrics and certified constants at steps 10 and 20,
    the test metric of the resulting model on 8 test sequences, and ``config``
    itself. Any change to the training code, its constants or the config
    changes it (:func:`check_record`). Takes a few seconds.
    """
    music = _check_music(music)
    text = _check_text(text)
    cfg = _check_config(RECORD if config is None else config)
    out: dict = {"config": copy.deepcopy(cfg)}
    fp = dict(
        steps=_FP["steps"],
        eval_every=_FP["eval_every"],
        batch_size=_FP["batch"],
        clip=cfg["clip"],
        lam=cfg["lam"],
        progress=False,
        dtype=torch.float64,
        device="cpu",
    )
    jobs = [("music", name, cfg["f_max"]) for name in cfg["music"]["variants"]] + [
        ("music", "lstm stable", cfg["sweep"]["f_max"][0])
    ]
    if text is not None:
        jobs += [
            ("text", name, cfg["f_max"])
            for name in _FP["text_variants"]
            if name in cfg["text"]["variants"]
        ]
    for task, name, f_max in jobs:
        d = music if task == "music" else text
        n = _FP["n_train"] if task == "music" else _FP["text_n"]
        sizes = (
            dict(fp)
            if task == "music"
            else {
                **fp,
                "steps": _FP["text_steps"],
                "eval_every": _FP["text_steps"] // 2,
                "batch_size": _FP["text_batch"],
            }
        )
        model, hist = train_variant(
            name,
            d.train[:n],
            d.valid[: _FP["n_valid"]],
            generator=0,
            input_dim=N_KEYS if task == "music" else len(text.vocab),
            hidden_dim=_FP["hidden"],
            readout="bernoulli" if task == "music" else "categorical",
            lr=cfg[task]["lr"],
            f_max=f_max,
            window=cfg["text"]["window"] if task == "text" else None,
            **sizes,
        )
        out[f"{task} {name} f_max={f_max}"] = {
            "loss": [float(v) for v in hist.loss],
            "valid": [float(v) for v in hist.valid],
            "lambda": [float(v) for v in hist.lam],
            "test": float(ns.evaluate(model, d.test[: _FP["n_valid"]])),
        }
    return out


# --- making, reading and checking the record ----------------------------------------------------


def _load_data():
    from ..data import load_abc_text, load_jsb

    return load_jsb(), load_abc_text()


@validate_params(
    "progress",
    smoke=Bool(),
    path=PathLike(),
    device=records.DEVICE,
    jobs=Int(1),
    command=Str(),
)
def make_record(
    path: str | Path | None = None,
    *,
    smoke: bool = False,
    device: str = "cpu",
    progress: bool = False,
    jobs: int = 1,
    command: str | None = None,
    log=print,
) -> Path:
    """Run the record (:data:`RECORD`, or :data:`SMOKE` with ``smoke``) and write it (``rnnlib.records``).

    ``path`` defaults to ``chapters/records/ch11.json`` for the full record; a
    smoke record must be given a path (it never overwrites the committed one).
    The fingerprint is computed on the CPU whatever ``device`` trains the
    record. ``jobs``: worker processes of :func:`run_record`; the provenance's
    CPU seconds then add the workers' (each model's own) to this process's.
    Returns the path written.
    """
    records.output_path(path, CHAPTER, smoke=smoke)
    dev = str(_check_device(device))
    music, text = _load_data()

    def worker_cpu(results: Mapping) -> float:
        if jobs <= 1:
            return 0.0
        rows = [
            row
            for task in ("music", "text")
            for by_model in results[task].values()
            for row in by_model.values()
        ] + [row for by_model in results["sweep"].values() for row in by_model.values()]
        return sum(row["cpu_seconds"] for row in rows)

    return records.build_record(
        CHAPTER,
        path,
        config=SMOKE if smoke else RECORD,
        run=lambda cfg: run_record(
            music,
            text,
            cfg,
            device=dev,
            progress=progress,
            jobs=jobs,
            log=log,
        ),
        fingerprint=lambda cfg: fingerprint(music, text, cfg),
        smoke=smoke,
        command=command,
        device=dev,
        worker_cpu=worker_cpu,
    )


@validate_params(path=PathLike())
def load_record(path: str | Path | None = None) -> dict:
    """The committed record of chapter 11 (``chapters/records/ch11.json`` by default)."""
    return records.read_record(records.record_path(CHAPTER) if path is None else path)


@validate_params(
    record=Instance(Mapping), music=Instance(PianoRollData), text=Instance(TextData)
)
def check_record(
    record: Mapping,
    music: PianoRollData,
    text: TextData | None,
) -> float:
    """Re-run :func:`fingerprint` at the record's config and compare (``rnnlib.records.check_fingerprint``).

    Raises :class:`rnnlib.records.StaleRecordError` with "the recorded runs of
    chapter 11 are stale: run `make record CH=11`" if the code path gives other
    numbers than when the record was made (relative tolerance
    :data:`rnnlib.records.FINGERPRINT_RTOL`, for float64 rounding across
    machines). Returns the largest relative difference.
    """
    music = _check_music(music)
    text = _check_text(text)
    return records.check_live_fingerprint(
        record,
        CHAPTER,
        lambda config: fingerprint(music, text, config),
    )


# --- reading the record -------------------------------------------------------------------------


def _t_quantile_975(df: int) -> float:
    table = {
        1: 12.706,
        2: 4.303,
        3: 3.182,
        4: 2.776,
        5: 2.571,
        6: 2.447,
        7: 2.365,
        8: 2.306,
        9: 2.262,
        10: 2.228,
    }
    return table.get(df, 1.96 + 2.5 / df)


@validate_params(
    Relation("len(a) == len(b)", "paired: one value of each per seed"),
    Relation("len(a) >= 2", "a spread needs two seeds"),
    a=Seq(ANY_REAL, "numbers"),
    b=Seq(ANY_REAL, "numbers"),
)
def paired(a: Sequence[float], b: Sequence[float]) -> dict:
    """Paired differences ``a - b`` over seeds, with their spread, a t-interval and a sign test (chapter 11).

    Returns ``diffs``, ``mean``, ``sd`` (sample standard deviation), ``lo``/``hi``
    (the 95 % t-interval of the mean, ``mean +- t_{0.975, n-1} sd / sqrt(n)``),
    ``n_neg``/``n_pos`` (seeds where ``a < b`` / ``a > b``) and ``p_sign``, the
    two-sided sign-test p-value ``min(1, 2 P[Bin(n, 1/2) <= min(n_neg, n_pos)])``
    over the nonzero differences (5 of 5 gives 0.0625: with five seeds a sign
    test alone cannot reach 5 %).
    """
    a = [float(x) for x in a]
    b = [float(x) for x in b]
    d = np.array(a) - np.array(b)
    n = len(d)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = _t_quantile_975(n - 1) * sd / math.sqrt(n)
    n_neg, n_pos = int((d < 0).sum()), int((d > 0).sum())
    m = n_neg + n_pos
    k = min(n_neg, n_pos)
    p = (
        min(
            1.0,
            2 * sum(math.comb(m, i) for i in range(k + 1)) / 2**m,
        )
        if m
        else 1.0
    )
    return {
        "diffs": [float(x) for x in d],
        "mean": mean,
        "sd": sd,
        "lo": mean - half,
        "hi": mean + half,
        "n_neg": n_neg,
        "n_pos": n_pos,
        "p_sign": p,
    }


@validate_params(
    generator=Int(0), record=Instance(Mapping), histories=Instance(Mapping)
)  # the record's seed, an int
def overlap(record: Mapping, histories: Mapping, generator: int) -> float:
    """Largest difference between the live run's validation curve and the record's, where they overlap.

    The live run trains the record's music models with the same settings for
    fewer steps, so at each evaluation step both exist the validation NLLs are
    the same computation (bit for bit on one machine; float32 rounding across
    machines). ``histories``: :func:`train_models`' histories (keys
    ``("music", kind, variant)``); returns the max absolute difference in nats
    over every shared evaluation step of every model (NaN if none is shared).
    """
    if not isinstance(record, Mapping) or "results" not in record:
        raise ValueError("record must be a record (load_record)")
    seed = generator
    rows = record["results"]["music"].get(str(seed))
    if rows is None:
        raise ValueError(f"seed {seed} is not in the record")
    worst = math.nan
    for (task, kind, variant), h in histories.items():
        rec = rows.get(f"{kind} {variant}")
        if task != "music" or rec is None:
            continue
        steps = dict(zip(rec["eval_steps"], rec["valid"]))
        for s, v in zip(h.eval_steps, h.valid):
            if int(s) in steps:
                diff = abs(float(v) - steps[int(s)])
                worst = diff if math.isnan(worst) else max(worst, diff)
    return worst


@validate_params(
    task=Choice("music", "text"), record=Instance(Mapping), name=Str(), key=Str()
)
def seed_values(
    record: Mapping, task: str, name: str, key: str = "test"
) -> list[float]:
    """One number of one model on every seed of a record, in seed order (chapter 11).

    ``task``: ``"music"`` or ``"text"``; ``name``: a variant (``"lstm stable"``);
    ``key``: a field of its row (``"test"``, ``"best_step"``, ``"lambda"``, ...),
    or a path through nested rows joined by ``/`` (``"forget/max"``,
    ``"truncation/16/excess"``).
    """
    if not isinstance(record, Mapping) or "results" not in record:
        raise ValueError("record must be a record (load_record)")
    rows = record["results"][task]
    out = []
    for seed in sorted(rows, key=int):
        if name not in rows[seed]:
            raise ValueError(f"name {name!r} is not in the record's {task} rows")
        value = rows[seed][name]
        for part in key.split("/"):
            value = value[part]
        out.append(value)
    return out


@validate_params(record=Instance(Mapping), key=Str())
def sweep_values(record: Mapping, key: str = "test") -> dict[float, list]:
    """The forget-gate sweep of a record: ``f_max -> [key on each sweep seed]`` (chapter 11).

    The bound of the main runs (``config["f_max"]``, the certified ``"lstm
    stable"`` model) is included for the sweep's seeds, so the curve starts at
    the authors' value 0.605. ``key`` as in :func:`seed_values`.
    """
    if not isinstance(record, Mapping) or "results" not in record:
        raise ValueError("record must be a record (load_record)")
    cfg, res = record["config"], record["results"]

    def get(row):
        value = row
        for part in key.split("/"):
            value = value[part]
        return value

    seeds = [str(s) for s in cfg["sweep"]["seeds"]]
    out = {float(cfg["f_max"]): [get(res["music"][s]["lstm stable"]) for s in seeds]}
    for f, rows in res["sweep"].items():
        out[float(f)] = [get(rows[s]) for s in seeds]
    return dict(sorted(out.items()))


@validate_params(
    "k",
    eps=POSITIVE,
    model=Model(NextStepModel),
    seqs=ARRAYS,
)
def inference_bound_at(
    model: NextStepModel,
    seqs: Sequence[np.ndarray],
    k: int,
    *,
    eps: float = 0.01,
) -> dict[str, float]:
    """Chapter 9's truncation bound evaluated at a trained model's own constants (chapter 11).

    For a tanh RNN core: ``lambda = ||W||_2`` (must be < 1), ``L = ||U||_2``,
    ``B = max_t ||x_t||_2`` over ``seqs``, the bound
    ``lambda^k L B / (1 - lambda)`` on ``||h_t - h^k_t||_2`` and the context
    ``k_eps`` it needs for ``eps``; ``diameter = 2 sqrt(H)``, the largest
    distance two tanh states can have, so a bound above it says nothing
    (``vacuous``). For an LSTM core only ``lambda`` (the certified
    ``lambda_inf``, in the max-norm) and ``l2_iterations`` (steps before an
    iterate contracts in l2, ``sqrt(2H) lambda_inf^r < 1``) are returned, with
    the other entries NaN. Returns a dict of floats (``vacuous`` as 0/1).
    """
    if not isinstance(model, NextStepModel):
        raise TypeError(f"model must be a NextStepModel, got {type(model).__name__}")
    if (
        isinstance(seqs, (str, bytes))
        or not isinstance(seqs, Sequence)
        or len(seqs) == 0
    ):
        raise ValueError("seqs must be a non-empty list of sequences")
    cert = certify(model.core, x_bound=1.0)
    if not cert.stable:
        raise ValueError(
            f"model must be certifiably stable (lambda < 1), got lambda = {cert.lam:.4g}"
        )
    H = model.core.hidden_dim
    nan = math.nan
    if model.kind == "lstm":
        return {
            "lambda": float(cert.lam),
            "l2_iterations": float(cert.l2_iterations),
            "L": nan,
            "B": nan,
            "bound": nan,
            "diameter": 2 * math.sqrt(2 * H),
            "k_eps": nan,
            "vacuous": 1.0,
        }
    B = max(
        float(np.sqrt((np.asarray(q, dtype=float) ** 2).sum(axis=1)).max())
        for q in seqs
    )
    L = input_lipschitz(model.core)
    bound = inference_bound(cert.lam, k, L, B)
    diameter = 2 * math.sqrt(H)
    return {
        "lambda": float(cert.lam),
        "l2_iterations": 1.0,
        "L": float(L),
        "B": B,
        "bound": float(bound),
        "diameter": diameter,
        "k_eps": float(k_for_epsilon(eps, cert.lam, L, B)),
        "vacuous": float(bound >= diameter),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m rnnlib.experiments.ch11 --record | --smoke [--out PATH] [--device cuda] [--jobs J]``."""
    records.record_cli(
        argv,
        chapter=CHAPTER,
        make=lambda out, **kw: make_record(
            out, log=lambda s: print(s, flush=True), **kw
        ),
        cost="about 100 CPU-minutes; --jobs 2 halves the wall time",
        device=True,
    )


if __name__ == "__main__":
    main()
