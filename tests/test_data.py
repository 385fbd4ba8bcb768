"""Tests of rnnlib.data: the shipped chorale file against a re-parse, the benchmark loader, the ABC text."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import torch

from rnnlib import data
from rnnlib.data import MIDI_HIGH, MIDI_LOW, N_KEYS


@pytest.fixture(scope="module")
def chorales():
    return data.load_chorales()


def test_chorale_splits_shapes_and_key_range(chorales):
    sizes = {
        s: len(chorales.split(s))
        for s in ("train", "valid", "test")
    }
    n = sum(sizes.values())
    assert n > 300  # 371 chorales minus exact duplicates (348)
    assert sizes["train"] == round(0.6 * n) and sizes[
        "valid"
    ] == round(0.2 * n)
    for s in ("train", "valid", "test"):
        for roll in chorales.split(s):
            assert (
                roll.ndim == 2
                and roll.shape[1] == N_KEYS
                and roll.shape[0] >= 2
            )
            assert roll.dtype == np.uint8 and set(
                np.unique(roll)
            ) <= {0, 1}
    stats = chorales.statistics()
    for s in stats.values():
        assert (
            MIDI_LOW
            <= s["lowest note"]
            <= s["highest note"]
            <= MIDI_HIGH
        )
        assert (
            3.0 < s["mean active keys"] < 4.5
        )  # four voices, sometimes fewer sounding at the beat
    assert stats["train"]["frames"] == sum(
        r.shape[0] for r in chorales.train
    )
    # four voices only, in the standard set's register (MIDI 43-96)
    assert (
        max(
            int(r.sum(axis=1).max())
            for s in ("train", "valid", "test")
            for r in chorales.split(s)
        )
        <= 4
    )
    assert min(s["lowest note"] for s in stats.values()) >= 36
    assert max(s["highest note"] for s in stats.values()) <= 100


def test_chorale_key_comes_from_the_signature():
    pytest.importorskip("music21")
    from music21 import corpus

    # bwv40.8 is notated in c minor (three flats); the
    # Krumhansl-Schmuckler estimate says f minor
    score = corpus.parse("bach/bwv40.8")
    key, source = data._chorale_key(score)
    assert (key.tonic.name, key.mode, source) == (
        "C",
        "minor",
        "signature",
    )
    # bwv41.6 has trumpets and timpani: only the four voices stay
    parts = data._vocal_parts(corpus.parse("bach/bwv41.6"))
    assert [p.partName.split()[0] for p in parts] == [
        "Soprano",
        "Alto",
        "Tenor",
        "Bass",
    ]


def test_chorale_splits_are_disjoint(chorales):
    names = {
        s: set(chorales.names[s])
        for s in ("train", "valid", "test")
    }
    assert (
        not names["train"] & names["valid"]
        and not names["train"] & names["test"]
        and not names["valid"] & names["test"]
    )
    rolls = {
        s: {
            r.tobytes() + bytes(str(r.shape), "ascii")
            for r in chorales.split(s)
        }
        for s in names
    }
    assert (
        not rolls["train"] & rolls["test"]
        and not rolls["train"] & rolls["valid"]
        and not rolls["valid"] & rolls["test"]
    )


def test_split_indices_partition_and_seed():
    parts = data.split_indices(10, generator=3)
    assert [len(parts[s]) for s in ("train", "valid", "test")] == [
        6,
        2,
        2,
    ]
    assert sorted(
        np.concatenate(list(parts.values())).tolist()
    ) == list(range(10))
    again = data.split_indices(10, generator=3)
    assert all(np.array_equal(parts[s], again[s]) for s in parts)
    assert any(
        not np.array_equal(
            parts[s], data.split_indices(10, generator=4)[s]
        )
        for s in parts
    )


def test_shipped_file_matches_a_fresh_parse(chorales):
    """Re-parse one chorale of each split with music21 and compare with the shipped rolls (the regeneration check)."""
    pytest.importorskip("music21")
    for s in ("train", "valid", "test"):
        name, stored = chorales.names[s][0], chorales.split(s)[0]
        roll, shift, key = data.chorale_roll(name)
        assert -6 <= shift <= 5 and key
        np.testing.assert_array_equal(
            roll,
            stored,
            err_msg=f"{name} differs from the shipped file: rerun python -m booktools.make_chorale_data",
        )


def test_transposition_puts_the_tonic_on_c():
    pytest.importorskip("music21")
    from music21 import corpus

    score = corpus.parse(data.load_chorales().names["test"][0])
    roll, shift, key = data.chorale_roll(score)
    tonic_pc = data._chorale_key(score)[0].tonic.pitchClass
    assert (tonic_pc + shift) % 12 == 0
    # the pitch classes used, weighted by duration, make C (or its minor third's relative) prominent
    pcs = np.zeros(12)
    for j in np.flatnonzero(roll.any(axis=0)):
        pcs[(j + MIDI_LOW) % 12] += roll[:, j].sum()
    assert pcs[0] > np.median(pcs)


def test_notes_roll_round_trip_and_range():
    frames = [[60, 64, 67], [], [21, 108]]
    roll = data.notes_to_roll(frames)
    assert roll.shape == (3, N_KEYS) and roll.sum() == 5
    assert data.roll_to_notes(roll) == frames
    with pytest.raises(ValueError, match="outside the piano"):
        data.notes_to_roll([[20]])
    with pytest.raises(ValueError, match="integer"):
        data.notes_to_roll([[60.5]])


def _write_pickle(path, obj, protocol=2):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)
    return path


SMALL = {
    "train": [[[60, 64], [62], []], [[48, 55, 64, 72]] * 4],
    "valid": [[(60,), (59, 62)]],
    "test": [[[21], [108], [60, 61, 62]]],
}


def test_benchmark_pickle_loads(tmp_path):
    d = data.load_benchmark(
        _write_pickle(tmp_path / "JSB_Chorales.pickle", SMALL)
    )
    assert [len(d.train), len(d.valid), len(d.test)] == [2, 1, 1]
    assert data.roll_to_notes(d.train[0]) == [[60, 64], [62], []]
    assert (
        d.test[0].shape == (3, N_KEYS)
        and d.test[0][1, 108 - MIDI_LOW] == 1
    )
    mat_style = {f"{s}data": v for s, v in SMALL.items()}
    d2 = data.load_benchmark(
        _write_pickle(tmp_path / "b.pkl", mat_style, protocol=4)
    )
    assert all(
        np.array_equal(a, b) for a, b in zip(d.train, d2.train)
    )


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch evil_was_here",))


def test_benchmark_refuses_a_hostile_pickle(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = _write_pickle(
        tmp_path / "evil.pickle",
        {"train": [_Evil()], "valid": [], "test": []},
    )
    with pytest.raises(ValueError, match="refusing to load"):
        data.load_benchmark(path)
    assert not (tmp_path / "evil_was_here").exists()
    # a numpy array is not a plain list either (its pickle calls numpy functions)
    path = _write_pickle(
        tmp_path / "np.pickle",
        {"train": [np.zeros((2, 88))], "valid": [], "test": []},
    )
    with pytest.raises(ValueError, match="refusing"):
        data.load_benchmark(path)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not a pickle at all", "malformed|not a plain"),
        (pickle.dumps(SMALL)[:-20], "malformed"),
        (pickle.dumps([1, 2, 3]), "expected a dict"),
        (
            pickle.dumps(
                {"train": SMALL["train"], "valid": SMALL["valid"]}
            ),
            "test",
        ),
        (
            pickle.dumps({**SMALL, "test": [[[200]]]}),
            "outside the piano",
        ),
        (
            pickle.dumps({**SMALL, "test": [[["C4"]]]}),
            "integer MIDI",
        ),
        (pickle.dumps({**SMALL, "test": []}), "non-empty"),
        (pickle.dumps({**SMALL, "test": [5]}), "list of frames"),
    ],
)
def test_benchmark_malformed_files_get_clear_errors(
    tmp_path, content, message
):
    path = tmp_path / "bad.pickle"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        data.load_benchmark(path)


def test_benchmark_path_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        data.load_benchmark(tmp_path / "missing.pickle")
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(ValueError, match="expected a .pickle"):
        data.load_benchmark(tmp_path / "x.txt")
    with pytest.raises(TypeError, match="path"):
        data.load_benchmark(3)


def test_benchmark_mat_file(tmp_path):
    import scipy.io as scipy_io  # a pinned dependency: never skipped

    cells = {}
    for s, seqs in SMALL.items():
        arr = np.empty((1, len(seqs)), dtype=object)
        for i, q in enumerate(seqs):
            arr[0, i] = data.notes_to_roll(
                [list(f) for f in q]
            ).astype(float)
        cells[f"{s}data"] = arr
    scipy_io.savemat(tmp_path / "JSB.mat", cells)
    d = data.load_benchmark(tmp_path / "JSB.mat")
    assert (
        data.roll_to_notes(d.train[0]) == [[60, 64], [62], []]
        and len(d.test) == 1
    )
    (tmp_path / "bad.mat").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="mat"):
        data.load_benchmark(tmp_path / "bad.mat")


def test_load_chorales_refuses_a_bad_file(tmp_path):
    bad = tmp_path / "c.npz"
    np.savez(
        bad,
        notes=np.array([200], dtype=np.uint8),
        frame_ptr=np.array([0, 1]),
        seq_ptr=np.array([0, 1]),
        names=np.array(["x"]),
        split=np.array([0], dtype=np.uint8),
    )
    with pytest.raises(ValueError, match="inconsistent"):
        data.load_chorales(bad)
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(ValueError, match="npz"):
        data.load_chorales(tmp_path / "junk.npz")


@pytest.fixture(scope="module")
def text():
    return data.load_abc_text()


def test_abc_text_split_vocab_and_cleaning(text):
    sizes = [len(text.train), len(text.valid), len(text.test)]
    assert sum(sizes) == 1059 and sizes == [635, 212, 212]
    assert not set(text.names["train"]) & set(text.names["test"])
    assert (
        all(ord(c) < 128 for c in text.vocab)
        and "\n" in text.vocab
        and len(set(text.vocab)) == len(text.vocab)
    )
    tune = text.decode(text.train[0])
    assert (
        "K:" in tune
        and "X:" not in tune
        and "T:" not in tune
        and "Z:" not in tune
    )
    np.testing.assert_array_equal(text.encode(tune), text.train[0])
    with pytest.raises(ValueError, match="vocabulary"):
        text.encode("\u00e9")
    stats = text.statistics()
    assert stats["train"]["predicted characters"] == sum(
        len(q) - 1 for q in text.train
    )


def test_pad_sequences():
    x, mask = data.pad_sequences(
        [np.ones((3, 4)), np.ones((1, 4))]
    )
    assert x.shape == (2, 3, 4) and mask.tolist() == [
        [True] * 3,
        [True, False, False],
    ]
    assert float(x[1, 1:].abs().sum()) == 0.0
    codes, mask = data.pad_sequences(
        [np.array([1, 2]), np.array([3])]
    )
    assert codes.dtype == torch.int64 and codes.tolist() == [
        [1, 2],
        [3, 0],
    ]
    with pytest.raises(ValueError, match="seqs"):
        data.pad_sequences([])
    with pytest.raises(ValueError, match="seqs"):
        data.pad_sequences(
            [np.ones((2, 3)), np.ones(2, dtype=int)]
        )
