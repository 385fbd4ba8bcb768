"""Chapter 11 on a standard benchmark file: ``benchmark_path`` end to end, offline.

A reader with ``JSB_Chorales.pickle`` (or ``.mat``) sets ``benchmark_path`` in the
chapter's parameters cell. These tests write small synthetic files in the standard
layouts (the pickle: ``train``/``valid``/``test`` lists of sequences of frames of MIDI
numbers; the ``.mat``: ``traindata``/... cell arrays of (T, 88) rolls), run the
chapter's data path on them (statistics, baselines, the trained models of one seed and
the record's measurements of them). The chapter itself, executed at tiny sizes on the pickle, is a
kernel test: ``booktools/tests/test_ch11_benchmark_chapter.py``.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from rnnlib import data
from rnnlib import next_step as ns
from rnnlib.experiments import ch11

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "11_real_data.ipynb"

TINY = dict(
    hidden=4,
    music_steps=3,
    music_batch=4,
    music_eval=1,
    k_check=2,
    r_multi=2,
    jac_n=2,
)


def synthetic_jsb(seed: int = 0) -> dict[str, list]:
    """A JSB-like set: four voices a frame (MIDI 43-75), 20-40 quarter notes a chorale."""
    rng = np.random.default_rng(seed)
    out = {}
    for split, n in (("train", 10), ("valid", 4), ("test", 4)):
        seqs = []
        for _ in range(n):
            T = int(rng.integers(20, 41))
            # a slow random walk of the bass: the previous frame predicts the next
            steps = rng.choice([-2, 0, 0, 0, 2], size=T)
            bass = np.clip(50 + np.cumsum(steps), 43, 59)
            seqs.append([tuple(int(b + d) for d in (0, 7, 12, 16)) for b in bass])
        out[split] = seqs
    return out


def write_pickle(path: Path, obj: dict) -> Path:
    path.write_bytes(pickle.dumps(obj))
    return path


def write_mat(path: Path, obj: dict) -> Path:
    import scipy.io as scipy_io  # a pinned dependency: never skipped

    cells = {}
    for split, seqs in obj.items():
        arr = np.empty((1, len(seqs)), dtype=object)
        for i, q in enumerate(seqs):
            arr[0, i] = data.notes_to_roll([list(f) for f in q]).astype(float)
        cells[f"{split}data"] = arr
    scipy_io.savemat(path, cells)
    return path


@pytest.mark.parametrize("suffix", [".pickle", ".mat"])
def test_the_chapters_data_path_on_a_standard_file(tmp_path, suffix):
    raw = synthetic_jsb()
    write = write_pickle if suffix == ".pickle" else write_mat
    path = write(tmp_path / f"JSB_Chorales{suffix}", raw)
    music = data.load_benchmark(path)
    assert music.source == path.name
    stats = music.statistics()
    assert [stats[s]["sequences"] for s in ("train", "valid", "test")] == [
        10,
        4,
        4,
    ]
    assert stats["train"]["max active keys"] == 4
    assert music.train[0].shape == (
        len(raw["train"][0]),
        data.N_KEYS,
    )
    # the baselines and the models of one seed run unchanged on it
    prev = ns.fit_baseline(music.train, previous=True)
    marg = ns.fit_baseline(music.train, previous=False)
    assert ns.evaluate(prev, music.test) < ns.evaluate(marg, music.test)
    models, histories = ch11.train_models(music, generator=0, progress=False, **TINY)
    assert sorted(models) == [
        ("music", k, v) for k in ("lstm", "rnn") for v in ("stable", "unstable")
    ]
    assert all(h.best_step >= 1 for h in histories.values())
    row = ch11.measure_music(
        models["music", "lstm", "stable"],
        music.test,
        ks=[2],
        jac_n=2,
        r_multi=2,
    )
    assert row["lambda"] < 1 and row["forget"]["max"] <= 0.605
    assert 0 < row["truncation"]["2"]["untouched"] < 1
    # both layouts give the same rolls
    if suffix == ".mat":
        other = data.load_benchmark(write_pickle(tmp_path / "JSB_Chorales.pickle", raw))
        assert all(np.array_equal(a, b) for a, b in zip(music.test, other.test))


def test_defaults_match_the_chapters_parameters_cell():
    """ch11.DEFAULTS (what the pilot ran at) are the values of the chapter's parameters cell."""
    import nbformat

    nb = nbformat.read(CHAPTER, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    values: dict = {}
    exec(cell.source, {}, values)
    assert {k: values[k] for k in ch11.DEFAULTS} == ch11.DEFAULTS
    assert values["benchmark_path"] is None


def test_the_live_run_is_the_start_of_the_recorded_one():
    """The chapter's music settings are the record's, so the live run overlaps it."""
    mc = ch11.RECORD["music"]
    d = ch11.DEFAULTS
    assert (
        d["hidden"],
        d["music_batch"],
        d["music_lr"],
        d["music_eval"],
    ) == (
        mc["hidden"],
        mc["batch"],
        mc["lr"],
        mc["eval_every"],
    )
    assert (d["clip"], d["lam"], d["f_max"]) == (
        ch11.RECORD["clip"],
        ch11.RECORD["lam"],
        ch11.RECORD["f_max"],
    )
    # patience cannot stop a recorded run before the live run's last step
    assert mc["patience"] * mc["eval_every"] >= d["music_steps"]
    assert len(ch11.RECORD["seeds"]) >= 5


def test_train_models_refuses_bad_input():
    music = data.PianoRollData(
        *([np.zeros((5, data.N_KEYS), dtype=np.uint8)] for _ in range(3)),
        {s: [f"{s}/0"] for s in ("train", "valid", "test")},
        source="toy",
    )
    with pytest.raises(ValueError, match="unknown parameters"):
        ch11.train_models(music, generator=0, hiden=4)
    with pytest.raises(TypeError, match="music must be"):
        ch11.train_models([], generator=0)
    with pytest.raises(ValueError, match="device"):
        ch11.train_models(music, generator=0, device="gpu0")
    with pytest.raises(ValueError, match="seeds"):
        ch11.run_record(music, None, {**ch11.SMOKE, "seeds": []})
    with pytest.raises(ValueError, match="name"):
        ch11.train_variant(
            "gru",
            music.train,
            None,
            generator=0,
            input_dim=88,
            hidden_dim=4,
            steps=1,
        )
