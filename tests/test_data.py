"""Tests of rnnlib.data: the shipped JSB Chorales file (bytes and statistics), the benchmark loader, the ABC text."""

from __future__ import annotations

import hashlib
import os
import pickle

import numpy as np
import pytest
import torch

from rnnlib import data
from rnnlib.data import MIDI_LOW, N_KEYS


@pytest.fixture(scope="module")
def chorales():
    return data.load_jsb()


def test_shipped_jsb_is_the_standard_file(chorales):
    """The shipped bytes are the TCN repository's file, and load to the standard statistics."""
    digest = hashlib.sha256(data.JSB_FILE.read_bytes()).hexdigest()
    assert digest == data.JSB_SHA256
    readme = (data.JSB_FILE.parent / "README.md").read_text()
    assert data.JSB_SHA256 in readme and "MIT" in readme
    stats = chorales.statistics()
    ref = data.JSB_STANDARD_STATISTICS
    sizes = tuple(stats[s]["sequences"] for s in stats)
    assert sizes == ref["train / valid / test"] == (229, 76, 77)
    assert sum(s["frames"] for s in stats.values()) == ref["frames"]
    assert min(s["min length"] for s in stats.values()) == 25
    assert max(s["max length"] for s in stats.values()) == 160
    assert max(s["max active keys"] for s in stats.values()) == 4
    assert round(stats["train"]["mean active keys"], 2) == 3.90
    for s in ("train", "valid", "test"):
        for roll in chorales.split(s):
            assert roll.dtype == np.uint8 and roll.shape[1] == N_KEYS
    assert MIDI_LOW <= min(s["lowest note"] for s in stats.values())
    assert chorales.source == "JSB Chorales (standard file)"


def test_split_indices_partition_and_seed():
    parts = data.split_indices(10, generator=3)
    assert [len(parts[s]) for s in ("train", "valid", "test")] == [
        6,
        2,
        2,
    ]
    assert sorted(np.concatenate(list(parts.values())).tolist()) == list(range(10))
    again = data.split_indices(10, generator=3)
    assert all(np.array_equal(parts[s], again[s]) for s in parts)
    assert any(
        not np.array_equal(parts[s], data.split_indices(10, generator=4)[s])
        for s in parts
    )


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
    d = data.load_benchmark(_write_pickle(tmp_path / "JSB_Chorales.pickle", SMALL))
    assert [len(d.train), len(d.valid), len(d.test)] == [2, 1, 1]
    assert data.roll_to_notes(d.train[0]) == [[60, 64], [62], []]
    assert d.test[0].shape == (3, N_KEYS) and d.test[0][1, 108 - MIDI_LOW] == 1
    mat_style = {f"{s}data": v for s, v in SMALL.items()}
    d2 = data.load_benchmark(_write_pickle(tmp_path / "b.pkl", mat_style, protocol=4))
    assert all(np.array_equal(a, b) for a, b in zip(d.train, d2.train))


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
            pickle.dumps({"train": SMALL["train"], "valid": SMALL["valid"]}),
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
def test_benchmark_malformed_files_get_clear_errors(tmp_path, content, message):
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
            arr[0, i] = data.notes_to_roll([list(f) for f in q]).astype(float)
        cells[f"{s}data"] = arr
    scipy_io.savemat(tmp_path / "JSB.mat", cells)
    d = data.load_benchmark(tmp_path / "JSB.mat")
    assert data.roll_to_notes(d.train[0]) == [[60, 64], [62], []] and len(d.test) == 1
    (tmp_path / "bad.mat").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="mat"):
        data.load_benchmark(tmp_path / "bad.mat")


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
    assert "K:" in tune and "X:" not in tune and "T:" not in tune and "Z:" not in tune
    np.testing.assert_array_equal(text.encode(tune), text.train[0])
    with pytest.raises(ValueError, match="vocabulary"):
        text.encode("\u00e9")
    stats = text.statistics()
    assert stats["train"]["predicted characters"] == sum(len(q) - 1 for q in text.train)


def test_pad_sequences():
    x, mask = data.pad_sequences([np.ones((3, 4)), np.ones((1, 4))])
    assert x.shape == (2, 3, 4) and mask.tolist() == [
        [True] * 3,
        [True, False, False],
    ]
    assert float(x[1, 1:].abs().sum()) == 0.0
    codes, mask = data.pad_sequences([np.array([1, 2]), np.array([3])])
    assert codes.dtype == torch.int64 and codes.tolist() == [
        [1, 2],
        [3, 0],
    ]
    with pytest.raises(ValueError, match="seqs"):
        data.pad_sequences([])
    with pytest.raises(ValueError, match="seqs"):
        data.pad_sequences([np.ones((2, 3)), np.ones(2, dtype=int)])
