"""Chapter 11's measurements that combine several theory modules: a model trained twice,
unconstrained and projected, from the same start; the eight trained models of a seed, the
committed pilot over seeds, and chapter 9's inference bound at a trained model's own
constants.

Used by chapter 11 (``from rnnlib.experiments import ch11``). The pilot over seeds is
re-run with ``python -m rnnlib.experiments.ch11`` (it rewrites
``rnnlib/_data/ch11_seeds.json``, which the chapter shows).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from .. import next_step as ns
from .._rng import derive
from .._validation import check_int, check_real
from ..data import N_KEYS, PianoRollData, TextData
from ..next_step import (
    NextStepHistory,
    NextStepModel,
    train_next_step,
)
from ..stability import certify, input_lipschitz
from ..truncation import inference_bound, k_for_epsilon

__all__ = [
    "train_stable_and_unstable",
    "DEFAULTS",
    "SEED_TABLE",
    "train_models",
    "seed_row",
    "seed_table",
    "load_seed_table",
    "inference_bound_at",
]

#: The sizes of chapter 11's parameters cell (its checks were piloted at these;
#: tests/test_ch11_benchmark.py compares them with the notebook).
DEFAULTS: dict[str, float | int] = {
    "hidden": 64,
    "music_steps": 300,
    "music_batch": 16,
    "music_lr": 5e-3,
    "music_eval": 60,
    "text_hidden": 32,
    "text_steps": 300,
    "text_batch": 32,
    "text_lr": 1e-2,
    "text_window": 32,
    "clip": 1.0,
    "lam": 0.99,
    "f_max": 0.605,
    "k_check": 16,
    "r_multi": 16,
    "jac_n": 24,
}

#: The committed pilot over seeds that chapter 11 shows (``python -m rnnlib.experiments.ch11``).
SEED_TABLE = (
    Path(__file__).resolve().parent.parent
    / "_data"
    / "ch11_seeds.json"
)

#: (task, core, variant) of the eight trained models, in the chapter's order.
MODEL_KEYS = [
    (task, kind, variant)
    for task in ("music", "text")
    for kind in ("rnn", "lstm")
    for variant in ("unstable", "stable")
]


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
    ):
        out[name] = check_int(out[name], name, minimum=1)
    for name in (
        "text_hidden",
        "text_steps",
        "text_batch",
        "text_window",
        "k_check",
        "r_multi",
        "jac_n",
    ):
        out[name] = check_int(out[name], name, minimum=1)
    for name in ("music_lr", "text_lr", "clip", "lam", "f_max"):
        out[name] = check_real(
            out[name], name, low=0.0, low_open=True
        )
    return out


def _check_data(music: object, text: object) -> None:
    if not isinstance(music, PianoRollData):
        raise TypeError(
            f"music must be a PianoRollData, got {type(music).__name__}"
        )
    if text is not None and not isinstance(text, TextData):
        raise TypeError(
            f"text must be a TextData or None, got {type(text).__name__}"
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
    steps (``train_kwargs`` of :func:`rnnlib.next_step.train_next_step`); only ``stable`` differs.
    Returns ``{"unstable": (model, history), "stable": (model, history)}``.
    """
    if "stable" in train_kwargs:
        raise ValueError(
            "train_kwargs must not set stable: both variants are trained"
        )
    out = {}
    for variant in ("unstable", "stable"):
        model = NextStepModel(
            kind,
            input_dim,
            hidden_dim,
            readout=readout,
            generator=derive(generator, "init"),
        )
        model.init_output_bias_(train)
        history = train_next_step(
            model,
            train,
            valid,
            stable=variant == "stable",
            generator=derive(generator, "data"),
            **train_kwargs,
        )
        out[variant] = (model, history)
    return out


def train_models(
    music: PianoRollData,
    text: TextData | None,
    *,
    generator: int,
    progress: bool = True,
    **params: float | int,
) -> tuple[dict, dict]:
    """Chapter 11's trained models of one seed: RNN and LSTM, unstable and stable, on music and text.

    Each pair comes from :func:`train_stable_and_unstable` (same
    initial weights, same minibatches, only the projection differs), seeded by
    ``generator`` (the seed of the row, an int); ``params`` override :data:`DEFAULTS` (the chapter's parameters
    cell). Music models are kept at their best validation NLL (checked every
    ``music_eval`` steps), text models at their last step. ``text=None``
    trains the music models only. Returns ``(models, histories)``, both keyed
    by ``(task, kind, variant)``.
    """
    _check_data(music, text)
    generator = check_int(generator, "generator", minimum=0)
    p = _check_params(params)
    common = dict(
        generator=generator,
        clip=p["clip"],
        lam=p["lam"],
        f_max=p["f_max"],
        progress=progress,
    )
    runs = {
        "music": (
            music.train,
            music.valid,
            dict(
                input_dim=N_KEYS,
                readout="bernoulli",
                hidden_dim=p["hidden"],
                steps=p["music_steps"],
                batch_size=p["music_batch"],
                lr=p["music_lr"],
                eval_every=p["music_eval"],
            ),
        )
    }
    if text is not None:
        runs["text"] = (
            text.train,
            None,
            dict(
                input_dim=len(text.vocab),
                readout="categorical",
                hidden_dim=p["text_hidden"],
                steps=p["text_steps"],
                batch_size=p["text_batch"],
                lr=p["text_lr"],
                window=p["text_window"],
            ),
        )
    models, histories = {}, {}
    for task, (train, valid, kw) in runs.items():
        for kind in ("rnn", "lstm"):
            pair = train_stable_and_unstable(
                kind, train, valid, **kw, **common
            )
            for variant, (model, hist) in pair.items():
                models[task, kind, variant] = model
                histories[task, kind, variant] = hist
    return models, histories


def _key(key: tuple[str, str, str]) -> str:
    return " ".join(key)


def seed_row(
    models: dict,
    music: PianoRollData,
    text: TextData | None,
    **params: float | int,
) -> dict[str, float]:
    """Chapter 11's measurements of :func:`train_models`' models as one flat row.

    ``"music rnn unstable"`` etc.: the test metric (NLL in nats per frame;
    text in bits per character). For the music models also: ``"... excess"``,
    the truncated NLL at ``k_check`` minus the full one; for the unstable
    music models ``"... excess 2k"`` (at ``2 k_check``), ``"... contractive"``
    (fraction of single steps with ``||J_t||_2 < 1`` on the first ``jac_n``
    test chorales) and ``"... multi"`` (median ``r_multi``-step Jacobian
    norm); ``"music lstm unstable contractive inf"`` in l_inf; ``"... lambda"``
    the certified constant of every music model.
    """
    _check_data(music, text)
    p = _check_params(params)
    splits = {"music": music.test}
    if text is not None:
        splits["text"] = text.test
    row = {
        _key(key): float(ns.evaluate(m, splits[key[0]]))
        for key, m in models.items()
    }
    k = p["k_check"]
    jac = music.test[: p["jac_n"]]
    for key, m in models.items():
        if key[0] != "music":
            continue
        name = _key(key)
        row[f"{name} lambda"] = m.worst_case_lambda()
        row[f"{name} excess"] = (
            float(ns.evaluate(m, music.test, k=k)) - row[name]
        )
        if key[2] == "unstable":
            row[f"{name} excess 2k"] = (
                float(ns.evaluate(m, music.test, k=2 * k))
                - row[name]
            )
            row[f"{name} contractive"] = float(
                np.mean(ns.local_jacobian_norms(m, jac) < 1)
            )
            row[f"{name} multi"] = float(
                np.median(
                    ns.multi_step_jacobian_norms(
                        m, jac, p["r_multi"]
                    )
                )
            )
            if key[1] == "lstm":
                row[f"{name} contractive inf"] = float(
                    np.mean(
                        ns.local_jacobian_norms(
                            m, jac, ord=math.inf
                        )
                        < 1
                    )
                )
    return row


def seed_table(
    music: PianoRollData,
    text: TextData | None,
    seeds: Sequence[int],
    *,
    progress: bool = False,
    **params: float | int,
) -> dict:
    """Chapter 11's pilot: the models of :func:`train_models` for each of ``seeds``, and the two baselines.

    Returns a JSON-ready dict: ``parameters`` (:data:`DEFAULTS` with
    ``params``), ``baselines`` (test metric of the marginal and the
    previous-step model, which do not depend on the seed), ``rows`` (one
    :func:`seed_row` per seed, with its ``seed`` and ``cpu_seconds``),
    ``date`` and ``machine``.
    """
    _check_data(music, text)
    if (
        isinstance(seeds, (str, bytes))
        or not isinstance(seeds, Sequence)
        or not seeds
    ):
        raise ValueError("seeds must be a non-empty list of seeds")
    seeds = [check_int(s, "seed", minimum=0) for s in seeds]
    p = _check_params(params)
    tasks = (
        {"music": music}
        if text is None
        else {"music": music, "text": text}
    )
    baselines = {}
    for task, d in tasks.items():
        n = N_KEYS if task == "music" else len(d.vocab)
        for name, previous in (
            ("marginal", False),
            ("previous step", True),
        ):
            b = ns.fit_baseline(
                d.train, input_dim=n, previous=previous
            )
            baselines[f"{task} {name}"] = float(
                ns.evaluate(b, d.test)
            )
    rows = []
    for seed in seeds:
        t0 = time.process_time()
        models, _ = train_models(
            music, text, generator=seed, progress=progress, **p
        )
        row = {"seed": seed, **seed_row(models, music, text, **p)}
        row["cpu_seconds"] = round(time.process_time() - t0, 1)
        rows.append(row)
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"
        ),
        "machine": f"{platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s)",
        "music": music.source,
        "parameters": p,
        "baselines": baselines,
        "rows": rows,
    }


def load_seed_table(path: str | Path | None = None) -> dict:
    """The committed pilot of :func:`seed_table` (``rnnlib/_data/ch11_seeds.json`` by default)."""
    path = SEED_TABLE if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no pilot table; run python -m rnnlib.experiments.ch11"
        )
    return json.loads(path.read_text())


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
        raise TypeError(
            f"model must be a NextStepModel, got {type(model).__name__}"
        )
    k = check_int(k, "k", minimum=1)
    eps = check_real(eps, "eps", low=0.0, low_open=True)
    if (
        isinstance(seqs, (str, bytes))
        or not isinstance(seqs, Sequence)
        or len(seqs) == 0
    ):
        raise ValueError(
            "seqs must be a non-empty list of sequences"
        )
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
        float(
            np.sqrt(
                (np.asarray(q, dtype=float) ** 2).sum(axis=1)
            ).max()
        )
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
    """``python -m rnnlib.experiments.ch11 [--seeds 0 1 2] [--out PATH]``: re-run the pilot over seeds."""
    parser = argparse.ArgumentParser(
        description="Chapter 11's pilot over seeds at the chapter's defaults "
        "(one thread; a few minutes)."
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2]
    )
    parser.add_argument("--out", type=Path, default=SEED_TABLE)
    args = parser.parse_args(argv)
    from ..data import load_abc_text, load_chorales

    torch.set_num_threads(1)
    table = seed_table(
        load_chorales(), load_abc_text(), args.seeds, progress=True
    )
    table["command"] = (
        "python -m rnnlib.experiments.ch11 --seeds "
        + " ".join(map(str, args.seeds))
    )
    args.out.write_text(json.dumps(table, indent=1) + "\n")
    for row in table["rows"]:
        print(row)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
