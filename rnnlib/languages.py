"""Binary languages, their automata and samplers, and the token embedding on the sphere (chapters 2 and 7).

**Strings.** A binary string ``z in {0,1}^n`` is a row of an int64 tensor.
Strings of different lengths share one tensor (batch, n_max) by *left padding*
with :data:`PAD` ``= -1``: a row ``(-1, -1, 1, 0, 1)`` is the string ``101``.

**Embedding.** A string enters the RNN as a *true sequence* of ``n = L - 2``
tokens (Definition 3.1 of Panigrahi & Goyal 2021: unit vectors in R^(d-1)
whose last coordinate is 1/2). The embedding used throughout the book, with
d - 1 = 3, is::

    z  ->  ( sqrt(3)/2 * z,  sqrt(3)/2 * (1 - z),  1/2 ),

a unit vector for z in {0, 1} (3/4 + 1/4 = 1) with last coordinate 1/2. It is
a reconstruction for the book (the paper only says that tokens are "possibly
represented as a vector"); any injective map onto such unit vectors would do.
:func:`encode_strings` builds the normalized RNN input; a padded position
becomes the zero vector *before* the start token, which leaves ``h = 0``
exactly (``relu(W 0 + A 0) = 0``), so padding is the same as a shorter input.

**Languages** (Sec. 5 of the paper; chapter 7). ``D_L1`` (exactly one 1),
``PARITY`` (an odd number of 1s), pattern matching (contains a given
substring) and the seven Tomita grammars (Tomita 1982). Each
:class:`Language` has a reference deterministic automaton (:class:`DFA`) that
gives every label, and an independent membership function (counts, runs,
windows) that the tests compare with the automaton on all strings of small
lengths.

**Samplers.** :func:`sample_language` draws balanced labelled strings: positives
uniform among the accepted strings of each length (counting paths in the
automaton), and negatives that are half uniform rejected strings, half
*near-boundary*: a positive with one bit flipped. :func:`held_out_split` splits
a sample into train and test sets with no string in common (at small lengths
a few hundred samples cover every string, and accuracy on seen strings is
memorization).

**Concept-class representations** (chapter 7): one neuron per offset for
pattern matching (:func:`pattern_neurons`, our construction) and the natural
PARITY neuron ``(1 - cos(pi s)) / 2`` (:func:`parity_neuron`), whose
complexity at radius R is ``e^(Theta(sqrt(n) R))``; the ``D_L1`` neuron is
:func:`rnnlib.concepts.dl1_neuron`. :func:`concept_representation` returns
any of the three with its decision threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from ._rng import as_generator, derive
from ._validation import (
    OPEN_UNIT,
    POSITIVE,
    UNIT,
    Either,
    Instance,
    Int,
    Ints,
    Str,
    Tensor,
    check_int,
    check_tensor,
    validate_params,
)
from .concepts import (
    ConceptTarget,
    SmoothFunction,
    complexity_s,
    dl1_neuron,
    fit_additive,
    get_function,
)

__all__ = [
    "PAD",
    "TOMITA_DESCRIPTIONS",
    "embed_binary",
    "dl1_indicator",
    "count_ones",
    "sample_binary_strings",
    "sample_dl1_balanced",
    "string_lengths",
    "string_ones",
    "parity_indicator",
    "contains_pattern",
    "tomita_indicator",
    "DFA",
    "dfa_from_table",
    "Language",
    "get_language",
    "language_names",
    "all_strings",
    "LabelledStrings",
    "sample_language",
    "HeldOutSplit",
    "check_split",
    "held_out_split",
    "language_dataset",
    "encode_strings",
    "check_strings",
    "pattern_neurons",
    "parity_neuron",
    "ConceptRepresentation",
    "concept_representation",
    "representation_complexity",
    "additive_dl1_loss",
]

#: The padding symbol: strings shorter than the tensor's width are left-padded with -1.
PAD: int = -1


#: Binary strings (batch, n) and left-padded ones (batch, n_max), declared
#: (:func:`check_strings` checks the same of an argument it is handed).
BINARY = Tensor(ndim=2, floating=False, values="binary")
STRINGS = Tensor(ndim=2, floating=False, integer=True, values="strings")


def _check_binary(z: object, name: str = "z") -> torch.Tensor:
    z = check_tensor(z, name, ndim=2, floating=False)
    if bool((~((z == 0) | (z == 1))).any()):
        raise ValueError(
            f"{name} must hold only 0s and 1s (binary strings, shape (batch, n))"
        )
    return z


@validate_params(name=Str())
def check_strings(z: object, name: str = "z") -> torch.Tensor:
    """Binary strings (batch, n_max), possibly left-padded with PAD = -1; at least one symbol per row."""
    z = check_tensor(z, name, ndim=2, floating=False, integer=True)
    if bool((~((z == 0) | (z == 1) | (z == PAD))).any()):
        raise ValueError(
            f"{name} must hold only 0s and 1s, left-padded with -1 (shape (batch, n_max))"
        )
    pad = z == PAD
    if bool((pad[:, 1:] & ~pad[:, :-1]).any()):
        raise ValueError(
            f"{name}: padding (-1) must come before the symbols of a string (left padding)"
        )
    if bool(pad[:, -1].any()):
        raise ValueError(
            f"{name}: every string must have at least one symbol (a row is all padding)"
        )
    return z.to(torch.int64)


@validate_params("dtype", z=BINARY)
def embed_binary(
    z: torch.Tensor, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Embed binary strings ``z`` (batch, n) as true sequences (batch, n, 3) (chapters 2 and 7).

    Token ``z_i`` becomes ``(sqrt(3)/2 z_i, sqrt(3)/2 (1 - z_i), 1/2)``: a unit
    vector with last coordinate 1/2, as Definition 3.1 requires, so the result
    can be passed to :func:`rnnlib.elman.normalize_sequence` (then d = 4).
    """
    z = z.to(dtype)
    c = math.sqrt(3.0) / 2.0
    return torch.stack([c * z, c * (1 - z), torch.full_like(z, 0.5)], dim=2)


@validate_params(z=BINARY)
def count_ones(z: torch.Tensor) -> torch.Tensor:
    """The number of 1s, ``s = sum_i z_i``, of each string in ``z`` (batch, n); returns (batch,) int64."""
    return z.to(torch.int64).sum(dim=1)


def dl1_indicator(z: torch.Tensor) -> torch.Tensor:
    """``D_L1(z) = 1[z has exactly one 1]`` for binary strings ``z`` (batch, n); returns (batch,) float (chapter 2)."""
    return (count_ones(z) == 1).to(torch.get_default_dtype())


@validate_params("batch_size", "n", "generator", p=UNIT)
def sample_binary_strings(
    batch_size: int,
    n: int,
    *,
    p: float = 0.5,
    generator: torch.Generator | int | None = None,
) -> torch.Tensor:
    """``batch_size`` strings of ``n`` i.i.d. Bernoulli(p) bits; returns int64 (batch_size, n)."""
    gen = as_generator(generator)
    return (torch.rand(batch_size, n, generator=gen) < p).to(torch.int64)


@validate_params(
    "batch_size",
    "n",
    "generator",
    max_ones=Int(1, "n"),
    min_length=Int("max_ones", "n"),
)
def sample_dl1_balanced(
    batch_size: int,
    n: int,
    *,
    max_ones: int = 2,
    min_length: int | None = None,
    generator: torch.Generator | int | None = None,
) -> torch.Tensor:
    """Binary strings whose number of 1s is uniform on {0, 1, ..., max_ones} (chapters 2 and 7).

    Under uniform random bits a string of length n is in D_L1 with
    probability n / 2^n, so "always say no" is nearly perfect for long
    strings. Here the count ``s`` of 1s is drawn uniformly from
    ``{0, ..., max_ones}`` and the s positions uniformly without replacement,
    so that the language stays balanced (a third of the strings in D_L1 for
    ``max_ones = 2``) at every length. Returns int64 (batch_size, n).

    With ``min_length`` (chapter 7) each string's length is uniform on
    ``[min_length, n]`` (with ``min_length >= max_ones``), and shorter strings
    are left-padded with :data:`PAD`. This is the distribution on which the best
    additive predictor does no better than the majority answer (chapter 2).
    """
    gen = as_generator(generator)
    counts = torch.randint(0, max_ones + 1, (batch_size,), generator=gen)
    ranks = (
        torch.rand(batch_size, n, generator=gen).argsort(dim=1).argsort(dim=1)
    )  # a random permutation per row
    if min_length is None:
        return (ranks < counts[:, None]).to(torch.int64)
    lengths = torch.randint(min_length, n + 1, (batch_size,), generator=gen)
    pad = torch.arange(n)[None, :] < (n - lengths)[:, None]
    ranks = (
        torch.rand(batch_size, n, generator=gen)
        .masked_fill(pad, 2.0)
        .argsort(dim=1)
        .argsort(dim=1)
    )
    z = (ranks < counts[:, None]).to(torch.int64)
    return z.masked_fill(pad, PAD)


# --- membership functions, independent of the automata (the tests compare the two) -----------------


@validate_params(z=STRINGS)
def string_lengths(z: torch.Tensor) -> torch.Tensor:
    """The length of each (left-padded) string in ``z`` (batch, n_max): the number of non-PAD symbols; (batch,) int64."""
    return (z != PAD).sum(dim=1)


def _ones(z: torch.Tensor) -> torch.Tensor:
    return (z == 1).sum(dim=1)


@validate_params(z=STRINGS)
def string_ones(z: torch.Tensor) -> torch.Tensor:
    """The number of 1s of each (left-padded) string in ``z`` (batch, n_max); (batch,) int64 (chapter 7)."""
    return _ones(z)


def _zeros(z: torch.Tensor) -> torch.Tensor:
    return (z == 0).sum(dim=1)


def _as_label(mask: torch.Tensor) -> torch.Tensor:
    return mask.to(torch.get_default_dtype())


@validate_params(z=STRINGS)
def parity_indicator(z: torch.Tensor) -> torch.Tensor:
    """``PARITY(z) = 1[sum_i z_i is odd]`` for (left-padded) strings ``z`` (batch, n_max); (batch,) float (chapter 7)."""
    z = z.to(torch.int64)
    return _as_label(_ones(z) % 2 == 1)


def _check_pattern(pattern: object, name: str = "pattern") -> tuple[int, ...]:
    if isinstance(pattern, str):
        if not pattern or set(pattern) - {"0", "1"}:
            raise ValueError(
                f"{name} must be a non-empty string of 0s and 1s, got {pattern!r}"
            )
        return tuple(int(c) for c in pattern)
    if (
        isinstance(pattern, (tuple, list))
        and pattern
        and all(
            not isinstance(b, bool) and isinstance(b, int) and b in (0, 1)
            for b in pattern
        )
    ):
        return tuple(int(b) for b in pattern)
    raise ValueError(
        f"{name} must be a non-empty string or sequence of 0s and 1s, got {pattern!r}"
    )


@validate_params(z=STRINGS)
def contains_pattern(z: torch.Tensor, pattern: str | tuple[int, ...]) -> torch.Tensor:
    """``1[pattern occurs as a contiguous substring of z]`` for (left-padded) strings ``z``; (batch,) float (chapter 7).

    ``pattern`` is a string such as ``"101"`` or a tuple of bits. Computed by
    comparing every window of ``len(pattern)`` symbols with the pattern.
    """
    z = z.to(torch.int64)
    q = torch.tensor(_check_pattern(pattern), dtype=torch.int64)
    k = len(q)
    if k > z.shape[1]:
        return torch.zeros(z.shape[0], dtype=torch.get_default_dtype())
    windows = z.unfold(1, k, 1)  # (batch, n - k + 1, k); a PAD never equals a bit
    return _as_label((windows == q).all(dim=2).any(dim=1))


def _runs(row: list[int]) -> list[tuple[int, int]]:
    """Maximal runs of a list of bits, as (symbol, length)."""
    out: list[tuple[int, int]] = []
    for b in row:
        if out and out[-1][0] == b:
            out[-1] = (b, out[-1][1] + 1)
        else:
            out.append((b, 1))
    return out


def _tomita3_row(row: list[int]) -> bool:
    runs = _runs(row)
    return not any(
        a == 1 and la % 2 == 1 and b == 0 and lb % 2 == 1
        for (a, la), (b, lb) in zip(runs, runs[1:])
    )


#: The seven Tomita grammars (Tomita 1982), over the alphabet {0, 1}.
TOMITA_DESCRIPTIONS: dict[int, str] = {
    1: "1*",
    2: "(10)*",
    3: "no odd-length run of 1s immediately followed by an odd-length run of 0s",
    4: "no 000 substring",
    5: "an even number of 0s and an even number of 1s",
    6: "the number of 0s minus the number of 1s is a multiple of 3",
    7: "0*1*0*1*",
}


@validate_params(k=Int(1, 7), z=STRINGS)
def tomita_indicator(z: torch.Tensor, k: int) -> torch.Tensor:
    """Membership in Tomita grammar ``k`` (1..7; :data:`TOMITA_DESCRIPTIONS`) for strings ``z``; (batch,) float.

    Computed from counts, windows and runs (not from the automaton), so that the
    tests can check the automata of :func:`get_language` against it (chapter 7).
    """
    z = z.to(torch.int64)
    n = string_lengths(z)
    valid = z != PAD
    pos = (
        torch.cumsum(valid.to(torch.int64), dim=1) - 1
    )  # index within the string (-1 on padding)
    if k == 1:
        return _as_label(((z == 1) | ~valid).all(dim=1))
    if k == 2:
        expected = 1 - pos % 2
        return _as_label((n % 2 == 0) & ((z == expected) | ~valid).all(dim=1))
    if k == 3:
        rows = [[int(b) for b in r if b != PAD] for r in z.tolist()]
        return _as_label(
            torch.tensor([_tomita3_row(r) for r in rows], dtype=torch.bool)
        )
    if k == 4:
        return 1 - contains_pattern(z, "000")
    if k == 5:
        return _as_label((_zeros(z) % 2 == 0) & (_ones(z) % 2 == 0))
    if k == 6:
        return _as_label((_zeros(z) - _ones(z)) % 3 == 0)
    ten = (z[:, :-1] == 1) & (z[:, 1:] == 0)  # k == 7: 0*1*0*1* = at most one "10"
    return _as_label(ten.sum(dim=1) <= 1)


# --- deterministic automata ------------------------------------------------------------------------


@dataclass(frozen=True)
class DFA:
    """A deterministic finite automaton over {0, 1} (chapter 7).

    ``transitions[q, a]`` is the state after reading bit ``a`` in state ``q``
    (int64, (n_states, 2)); ``accepting[q]`` says whether ``q`` accepts (bool,
    (n_states,)); ``start`` is the initial state. The padding symbol -1 leaves
    the state unchanged, so a left-padded string is read as itself.
    """

    transitions: torch.Tensor
    accepting: torch.Tensor
    start: int = 0

    def __post_init__(self) -> None:
        t = self.transitions  # declared on __init__ (below the class)
        n_states = t.shape[0]
        if bool((t < 0).any()) or bool((t >= n_states).any()):
            raise ValueError(
                f"transitions must hold states in {{0, ..., {n_states - 1}}}"
            )
        a = self.accepting
        if a.dtype != torch.bool:
            raise TypeError(f"accepting must be a bool tensor, got {a.dtype}")
        check_int(self.start, "start", minimum=0, maximum=n_states - 1)
        object.__setattr__(self, "transitions", t.to(torch.int64))

    @property
    def n_states(self) -> int:
        """The number of states."""
        return self.transitions.shape[0]

    def run(self, z: torch.Tensor) -> torch.Tensor:
        """The final state after reading each (left-padded) string of ``z`` (batch, n_max); (batch,) int64."""
        z = check_strings(z)
        q = torch.full((z.shape[0],), self.start, dtype=torch.int64)
        for t in range(z.shape[1]):
            a = z[:, t]
            q = torch.where(a == PAD, q, self.transitions[q, a.clamp(min=0)])
        return q

    def accepts(self, z: torch.Tensor) -> torch.Tensor:
        """``1[the automaton accepts z]`` for each string of ``z``; (batch,) float."""
        return _as_label(self.accepting[self.run(z)])

    def complement(self) -> DFA:
        """The automaton of the complement language (same states, accepting states swapped)."""
        return DFA(self.transitions, ~self.accepting, self.start)

    @validate_params(n=Int(0))
    def count_accepted(self, n: int) -> torch.Tensor:
        """``c[r, q]``: the number of strings of length r accepted from state q, for r = 0..n; float64 (n+1, n_states).

        ``c[0] = accepting`` and ``c[r, q] = c[r-1, T[q, 0]] + c[r-1, T[q, 1]]``.
        Float64 holds exact integers up to 2^53 and the ratios that sampling
        needs far beyond (chapter 7 samples uniformly among accepted strings).
        """
        c = torch.zeros(n + 1, self.n_states, dtype=torch.float64)
        c[0] = self.accepting.to(torch.float64)
        for r in range(1, n + 1):
            c[r] = c[r - 1, self.transitions[:, 0]] + c[r - 1, self.transitions[:, 1]]
        return c

    def sample(
        self,
        lengths: torch.Tensor,
        *,
        generator: torch.Generator | int | None = None,
    ) -> torch.Tensor:
        """One accepted string of each length in ``lengths`` (batch,), uniform among the accepted strings of that length.

        Walks the automaton from the start, choosing bit ``a`` in state ``q``
        with ``r`` symbols to go with probability ``c[r-1, T[q, a]] / c[r, q]``
        (:meth:`count_accepted`). Returns int64 (batch, max(lengths)),
        left-padded with -1; raises ``ValueError`` when some length has no
        accepted string.
        """
        lengths = check_tensor(lengths, "lengths", ndim=1, floating=False).to(
            torch.int64
        )
        if bool((lengths < 1).any()):
            raise ValueError("lengths must be >= 1")
        gen = as_generator(generator)
        n = int(lengths.max())
        c = self.count_accepted(n)
        if bool((c[lengths, self.start] == 0).any()):
            bad = sorted({int(k) for k in lengths[c[lengths, self.start] == 0]})
            raise ValueError(f"lengths: no accepted string of length {bad}")
        batch = lengths.shape[0]
        z = torch.full((batch, n), PAD, dtype=torch.int64)
        q = torch.full((batch,), self.start, dtype=torch.int64)
        u = torch.rand(batch, n, generator=gen, dtype=torch.float64)
        for t in range(n):
            remaining = n - t  # symbols still to write, this one included
            active = lengths >= remaining
            r = remaining - 1
            c0 = c[r, self.transitions[q, 0]]
            c1 = c[r, self.transitions[q, 1]]
            bit = (u[:, t] * (c0 + c1) >= c0).to(torch.int64)
            z[:, t] = torch.where(active, bit, z[:, t])
            q = torch.where(active, self.transitions[q, bit], q)
        return z


DFA.__init__ = validate_params(
    transitions=Tensor(shape=("n_states", 2), floating=False, integer=True),
    accepting=Tensor(shape=("n_states",), floating=False),
    start=Int(0),
)(DFA.__init__)


@validate_params(start=Int(0))
def dfa_from_table(
    transitions: list[list[int]],
    accepting: list[int],
    start: int = 0,
) -> DFA:
    """A :class:`DFA` from plain lists: ``transitions[q] = [T(q, 0), T(q, 1)]`` and the accepting states (chapter 7)."""
    if not isinstance(transitions, (list, tuple)) or not transitions:
        raise TypeError(
            f"transitions must be a non-empty list of [next state on 0, next state on 1], got {transitions!r}"
        )
    if any(not isinstance(row, (list, tuple)) or len(row) != 2 for row in transitions):
        raise ValueError(
            "transitions must be a list of pairs [next state on 0, next state on 1], one per state"
        )
    if not isinstance(accepting, (list, tuple, set)):
        raise TypeError(
            f"accepting must be a list of accepting states, got {type(accepting).__name__}"
        )
    n_states = len(transitions)
    try:
        t = torch.tensor(
            [[int(a), int(b)] for a, b in transitions],
            dtype=torch.int64,
        )
    except (TypeError, ValueError) as exc:
        raise TypeError("transitions must hold integer states") from exc
    acc = torch.zeros(n_states, dtype=torch.bool)
    for q in accepting:
        q = check_int(q, "accepting[i]", minimum=0, maximum=n_states - 1)
        acc[q] = True
    return DFA(t, acc, start)


def _pattern_dfa(q: tuple[int, ...]) -> DFA:
    """The Knuth-Morris-Pratt automaton of "contains q": state j = longest prefix of q that ends here; k absorbs."""
    k = len(q)
    table = []
    for j in range(k):
        row = []
        for a in (0, 1):
            seen = list(q[:j]) + [a]
            nxt = max(
                n
                for n in range(0, j + 2)
                if n <= k and list(q[:n]) == seen[len(seen) - n :]
            )
            row.append(nxt)
        table.append(row)
    table.append([k, k])
    return dfa_from_table(table, [k])


_TOMITA_TABLES: dict[int, tuple[list[list[int]], list[int]]] = {
    1: ([[1, 0], [1, 1]], [0]),  # 0: only 1s so far; 1: dead
    2: (
        [[2, 1], [0, 2], [2, 2]],
        [0],
    ),  # 0: complete (10)*; 1: after a 1; 2: dead
    # 0: start, or in 0s not after an odd run of 1s; 1: odd run of 1s; 2: even run of 1s;
    # 3: odd run of 0s after an odd run of 1s; 4: even run of 0s after one; 5: dead
    3: (
        [[0, 1], [3, 2], [0, 1], [4, 5], [3, 1], [5, 5]],
        [0, 1, 2, 4],
    ),
    4: (
        [[1, 0], [2, 0], [3, 0], [3, 3]],
        [0, 1, 2],
    ),  # trailing zeros 0, 1, 2; 3: dead (000 seen)
    5: (
        [[1, 2], [0, 3], [3, 0], [2, 1]],
        [0],
    ),  # (parity of 0s, parity of 1s) = 0:(e,e) 1:(o,e) 2:(e,o) 3:(o,o)
    6: ([[1, 2], [2, 0], [0, 1]], [0]),  # (#0 - #1) mod 3
    7: (
        [[0, 1], [2, 1], [2, 3], [4, 3], [4, 4]],
        [0, 1, 2, 3],
    ),  # 0*, 1*, 0*, 1*, dead
}


@dataclass(frozen=True)
class Language:
    """A binary language with its reference automaton (chapter 7).

    ``name`` is the registry name (``"dl1"``, ``"parity"``, ``"pattern:101"``,
    ``"tomita3"``); ``dfa`` the reference automaton, which gives every label;
    ``membership`` an independent membership function (counts, runs, windows)
    used by the tests; ``description`` one line for tables.
    Calling the language labels strings with its automaton.
    """

    name: str
    dfa: DFA
    membership: Callable[[torch.Tensor], torch.Tensor]
    description: str

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        """The labels ``1[z in the language]`` from the automaton; (batch,) float."""
        return self.dfa.accepts(z)

    @validate_params(n=Int(0))
    def count(self, n: int) -> int:
        """The number of strings of length exactly ``n`` in the language."""
        return int(self.dfa.count_accepted(n)[n, self.dfa.start])

    def __repr__(self) -> str:
        return f"Language({self.name!r}: {self.description})"


#: A language argument: a name of :func:`get_language` or a :class:`Language`.
LANGUAGE = Either(Instance(Language), Str())


def language_names() -> list[str]:
    """The names :func:`get_language` knows (a pattern language is ``"pattern:<bits>"``, e.g. ``"pattern:101"``)."""
    return ["dl1", "parity", "pattern:<bits>"] + [f"tomita{k}" for k in range(1, 8)]


@validate_params(name=LANGUAGE)
def get_language(name: str | Language) -> Language:
    """The :class:`Language` called ``name`` (see :func:`language_names`); a :class:`Language` is returned as is.

    ``"dl1"``: exactly one 1; ``"parity"``: an odd number of 1s;
    ``"pattern:101"``: contains the substring 101; ``"tomita1"`` to ``"tomita7"``:
    the Tomita grammars (:data:`TOMITA_DESCRIPTIONS`).
    """
    if isinstance(name, Language):
        return name
    if not isinstance(name, str):
        raise TypeError(
            f"name must be a language name (str), got {type(name).__name__}"
        )
    if name == "dl1":
        dfa = dfa_from_table(
            [[0, 1], [1, 2], [2, 2]], [1]
        )  # states: no 1 yet, one 1, two or more
        return Language(
            "dl1",
            dfa,
            lambda z: _as_label(_ones(check_strings(z)) == 1),
            "exactly one 1 (D_L1)",
        )
    if name == "parity":
        return Language(
            "parity",
            dfa_from_table([[0, 1], [1, 0]], [1]),
            parity_indicator,
            "an odd number of 1s",
        )
    if name.startswith("pattern:"):
        q = _check_pattern(
            name.removeprefix("pattern:"),
            "name (the bits after 'pattern:')",
        )
        bits = "".join(map(str, q))
        return Language(
            name,
            _pattern_dfa(q),
            lambda z: contains_pattern(z, q),
            f"contains {bits}",
        )
    if name.startswith("tomita") and name[6:].isdigit() and 1 <= int(name[6:]) <= 7:
        k = int(name[6:])
        return Language(
            name,
            dfa_from_table(*_TOMITA_TABLES[k]),
            lambda z: tomita_indicator(z, k),
            TOMITA_DESCRIPTIONS[k],
        )
    raise ValueError(
        f"name: unknown language {name!r}; known: {', '.join(language_names())}"
    )


@validate_params(n=Int(1, 20))
def all_strings(n: int) -> torch.Tensor:
    """Every binary string of length ``n`` (1 <= n <= 20), in lexicographic order; int64 (2^n, n)."""
    k = torch.arange(2**n, dtype=torch.int64)
    return (k[:, None] >> torch.arange(n - 1, -1, -1)) & 1


# --- balanced samplers and held-out splits ----------------------------------------------------------


def _lengths_with(dfa: DFA, lo: int, hi: int) -> torch.Tensor:
    c = dfa.count_accepted(hi)[:, dfa.start]
    ok = [k for k in range(lo, hi + 1) if c[k] > 0]
    return torch.tensor(ok, dtype=torch.int64)


def _near_negatives(
    lang: Language, pos: torch.Tensor, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """For each positive, a uniformly chosen one-bit flip that leaves the language; and whether one exists."""
    batch, n = pos.shape
    flips = pos[:, None, :].repeat(1, n, 1)  # (batch, n, n): flip bit j in copy j
    eye = torch.eye(n, dtype=torch.bool)[None].expand(batch, -1, -1)
    valid = (pos != PAD)[:, :, None].expand(-1, -1, n).transpose(
        1, 2
    ) & eye  # only real symbols flip
    flips = torch.where(valid, 1 - flips, flips)
    labels = lang(flips.reshape(batch * n, n)).reshape(batch, n)
    ok = (labels == 0) & (pos != PAD)
    scores = torch.rand(batch, n, generator=gen).masked_fill(~ok, -1.0)
    j = scores.argmax(dim=1)
    return flips[torch.arange(batch), j], ok.any(dim=1)


class LabelledStrings(NamedTuple):
    """Labelled strings: codes and labels (:func:`sample_language`)."""

    #: int64 strings (batch, n), left-padded with -1
    z: torch.Tensor
    #: float labels (batch,)
    y: torch.Tensor


@validate_params(
    "n",
    "generator",
    batch_size=Int(2),
    near_fraction=UNIT,
    language=LANGUAGE,
    min_length=Int(1, "n"),
)
def sample_language(
    language: str | Language,
    batch_size: int,
    n: int,
    *,
    min_length: int | None = None,
    near_fraction: float = 0.5,
    generator: torch.Generator | int | None = None,
) -> LabelledStrings:
    """Balanced labelled strings of ``language``: half positives, half negatives (chapter 7).

    Lengths are uniform on ``[min_length, n]`` (default ``min_length = n``:
    fixed length) among the lengths that have a string of the required class.
    Positives are uniform among the accepted strings of their length
    (:meth:`DFA.sample`). Of the negatives, a fraction ``near_fraction`` are
    *near-boundary*: a fresh positive with one uniformly chosen bit flipped so
    that it leaves the language (where no flip does, a uniform negative); the
    rest are uniform among the rejected strings of their length. Labels come
    from the automaton. Returns ``(z, y)``: int64 (batch_size, n) left-padded
    with -1, and float (batch_size,), rows in random order.
    """
    lang = get_language(language)
    lo = n if min_length is None else min_length
    n_pos = batch_size // 2
    n_neg = batch_size - n_pos
    n_near = int(round(near_fraction * n_neg))
    pos_lengths = _lengths_with(lang.dfa, lo, n)
    neg_lengths = _lengths_with(lang.dfa.complement(), lo, n)
    if len(pos_lengths) == 0 or len(neg_lengths) == 0:
        kind = "accepted" if len(pos_lengths) == 0 else "rejected"
        raise ValueError(
            f"n: {lang.name} has no {kind} string of length in [{lo}, {n}]; choose other lengths"
        )

    def draw(dfa: DFA, choices: torch.Tensor, count: int, stream: str) -> torch.Tensor:
        g = derive(generator, stream)
        lengths = choices[torch.randint(0, len(choices), (count,), generator=g)]
        z = dfa.sample(lengths, generator=g)
        return torch.cat(
            [
                torch.full((count, n - z.shape[1]), PAD, dtype=torch.int64),
                z,
            ],
            dim=1,
        )

    parts = [draw(lang.dfa, pos_lengths, n_pos, "positives")]
    if n_neg - n_near > 0:
        parts.append(
            draw(
                lang.dfa.complement(),
                neg_lengths,
                n_neg - n_near,
                "negatives",
            )
        )
    if n_near > 0:
        seeds = draw(lang.dfa, pos_lengths, n_near, "near-seeds")
        near, ok = _near_negatives(lang, seeds, derive(generator, "near-flips"))
        if not bool(ok.all()):
            near[~ok] = draw(
                lang.dfa.complement(),
                neg_lengths,
                int((~ok).sum()),
                "near-fallback",
            )
        parts.append(near)
    z = torch.cat(parts)
    z = z[torch.randperm(batch_size, generator=derive(generator, "order"))]
    return LabelledStrings(z, lang(z))


@dataclass(frozen=True)
class HeldOutSplit:
    """Train and test strings with no string in common (chapter 7).

    ``z_train, y_train, z_test, y_test``: strings (int64, left-padded) and
    labels; ``n_unique_train``, ``n_unique_test``: the numbers of distinct
    strings on each side.
    """

    z_train: torch.Tensor
    y_train: torch.Tensor
    z_test: torch.Tensor
    y_test: torch.Tensor
    n_unique_train: int
    n_unique_test: int

    @property
    def majority_baseline(self) -> float:
        """Test accuracy of the constant prediction that is most frequent in the training labels."""
        guess = float(self.y_train.mean() >= 0.5)
        return float((self.y_test == guess).to(torch.float64).mean())


def check_split(split: object) -> HeldOutSplit:
    """``split`` itself if it is a :class:`HeldOutSplit`, else a ``TypeError`` naming ``split`` (chapter 7)."""
    if not isinstance(split, HeldOutSplit):
        raise TypeError(
            "split must be an rnnlib.languages.HeldOutSplit (from language_dataset), "
            f"got {type(split).__name__}"
        )
    return split


@validate_params(
    "generator",
    test_fraction=OPEN_UNIT,
    z=Tensor(shape=("batch", None), floating=False, integer=True, values="strings"),
    y=Tensor(shape=("batch",), values="binary"),
)
def held_out_split(
    z: torch.Tensor,
    y: torch.Tensor,
    *,
    test_fraction: float = 0.25,
    generator: torch.Generator | int | None = None,
) -> HeldOutSplit:
    """Split labelled strings so that no string is on both sides (chapter 7).

    The *distinct* strings of each label are shuffled and a fraction
    ``test_fraction`` of them (at least one when a label has two or more
    distinct strings) go to the test side; every copy of a string follows it.
    So test accuracy measures strings the learner has never seen, also at
    small lengths where a sample repeats strings; the label balance of the
    sample is kept on both sides up to multiplicities.
    """
    z = z.to(torch.int64)
    gen = as_generator(generator)
    uniq, inverse = torch.unique(z, dim=0, return_inverse=True)
    u_label = torch.zeros(len(uniq), dtype=y.dtype)
    u_label[inverse] = y
    to_test = torch.zeros(len(uniq), dtype=torch.bool)
    for label in (0.0, 1.0):
        idx = torch.nonzero(u_label == label)[:, 0]
        if len(idx) >= 2:
            k = max(
                1,
                min(
                    len(idx) - 1,
                    int(round(test_fraction * len(idx))),
                ),
            )
            to_test[idx[torch.randperm(len(idx), generator=gen)[:k]]] = True
    test = to_test[inverse]
    return HeldOutSplit(
        z[~test],
        y[~test],
        z[test],
        y[test],
        int((~to_test).sum()),
        int(to_test.sum()),
    )


@validate_params(
    "n",
    "generator",
    n_samples=Int(2),
    test_fraction=OPEN_UNIT,
    language=LANGUAGE,
    near_fraction=UNIT,
)
def language_dataset(
    language: str | Language,
    n_samples: int,
    n: int,
    *,
    min_length: int | None = None,
    test_fraction: float = 0.25,
    near_fraction: float = 0.5,
    generator: torch.Generator | int | None = None,
) -> HeldOutSplit:
    """``n_samples`` balanced strings of ``language`` (:func:`sample_language`), split by :func:`held_out_split`."""
    z, y = sample_language(
        language,
        n_samples,
        n,
        min_length=min_length,
        near_fraction=near_fraction,
        generator=derive(generator, "sample"),
    )
    return held_out_split(
        z,
        y,
        test_fraction=test_fraction,
        generator=derive(generator, "split"),
    )


@validate_params("eps_x", "dtype", z=STRINGS)
def encode_strings(
    z: torch.Tensor,
    eps_x: float,
    *,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The normalized RNN inputs (Definition 3.1) of (left-padded) strings ``z`` (batch, n_max); (batch, n_max + 2, 4).

    Each string becomes start token, its tokens ``eps_x * (embed_binary(z_i), 0)``,
    end token. A string shorter than ``n_max`` is preceded by zero vectors
    *before* its start token: from ``h^(0) = 0`` they give ``relu(0) = 0``, so
    the ReLU RNN's output is exactly that of the unpadded input (chapter 7).
    """
    z = z.to(torch.int64)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype}")
    batch, n = z.shape
    x = torch.zeros(batch, n + 2, 4, dtype=dtype)
    pad = z == PAD
    zf = z.clamp(min=0).to(dtype)
    c = math.sqrt(3.0) / 2.0
    tokens = (
        torch.stack([c * zf, c * (1 - zf), torch.full_like(zf, 0.5)], dim=2) * eps_x
    )
    x[:, 1:-1, :3] = tokens.masked_fill(
        pad[:, :, None], 0.0
    )  # symbol j at position j + 1
    x[torch.arange(batch), pad.sum(dim=1), 3] = (
        1.0  # the start token, right after the padding
    )
    x[:, -1, 3] = 1.0  # the end token
    return x


# --- concept-class representations (chapter 7) -----------------------------------------------------


def _scaled_expm1(scale: float, factor: float, name: str):
    """``phi(t) = factor * (exp(scale * t) - 1)`` as a concepts.SmoothFunction (coefficients factor scale^i / i!)."""

    def log_abs_coef(k: int) -> np.ndarray:
        i = np.arange(k, dtype=float)
        out = (
            math.log(factor)
            + i * math.log(scale)
            - np.array([math.lgamma(v + 1) for v in i])
        )
        if k > 0:
            out[0] = -np.inf
        return out

    return SmoothFunction(
        name,
        lambda t: factor * torch.expm1(scale * t),
        log_abs_coef,
        latex=name,
    )


@validate_params("n", "dtype")
def pattern_neurons(
    n: int,
    pattern: str | tuple[int, ...],
    *,
    dtype: torch.dtype = torch.float64,
):
    """One neuron per offset that recognizes "contains ``pattern``" on strings of length ``n`` (chapter 7).

    Our construction (the paper's Sec. H is not available). For offset i the
    unit vector ``w_i`` reads coordinate 1 (``sqrt(3)/2 z``) of the tokens
    where the pattern has a 1 and coordinate 2 (``sqrt(3)/2 (1 - z)``) where it
    has a 0, over the window ``i..i+k-1``, scaled by ``1/sqrt(k)``; so
    ``<w_i, xbar> = c m_i`` with ``c = sqrt(3) / (2 sqrt(k))`` and ``m_i`` the
    number of matching symbols (``m_i = k`` iff the window matches). With
    ``beta = log(2n)`` and ``phi(t) = e^(-beta k) (e^(beta t / c) - 1)``
    (``phi(0) = 0``), ``F = sum_i phi(c m_i)`` is at least ``1 - (2n)^(-k) >= 3/4``
    on a match and at most ``(n - k + 1) / (2n) < 1/2`` otherwise: threshold
    5/8. Returns a :class:`rnnlib.concepts.ConceptTarget` with ``n - k + 1``
    neurons; its complexity (:func:`representation_complexity`) is
    polynomial in n for a fixed pattern and radius.
    """
    q = _check_pattern(pattern)
    k = len(q)
    if k > n:
        raise ValueError(f"pattern must not be longer than n = {n}, got length {k}")
    c = math.sqrt(3.0) / (2.0 * math.sqrt(k))
    beta = math.log(2 * n)
    phi = _scaled_expm1(
        beta / c,
        math.exp(-beta * k),
        f"match{''.join(map(str, q))}",
    )
    offsets = n - k + 1
    w = torch.zeros(1, offsets, n, 3, dtype=dtype)
    for i in range(offsets):
        for j, bit in enumerate(q):
            w[0, i, i + j, 0 if bit == 1 else 1] = 1.0 / math.sqrt(k)
    return ConceptTarget(
        [[phi] * offsets],
        w.reshape(1, offsets, 3 * n),
        torch.ones(1, offsets, dtype=dtype),
        n,
        3,
    )


@validate_params("n", "dtype")
def parity_neuron(n: int, *, dtype: torch.dtype = torch.float64):
    """The natural PARITY neuron ``phi(<w, xbar>) = (1 - cos(pi s)) / 2`` on strings of length ``n`` (chapter 7).

    ``w = (e_1, ..., e_1) / sqrt(n)`` gives ``<w, xbar> = c s`` with
    ``c = sqrt(3) / (2 sqrt(n))`` and s the number of 1s; ``phi(t) = (1 -
    cos(pi t / c)) / 2`` is 1 for odd s and 0 for even s. Its Taylor
    coefficients are ``(pi/c)^(2j) / (2 (2j)!)``, so its complexity at radius R
    grows like ``exp(pi R / c) = exp(2 pi sqrt(n) R / sqrt(3))``: super-polynomial
    in n. (The paper's camera-ready says PARITY has "small complexity"; its
    construction is not available, and this natural one does not have it.)
    """
    c = math.sqrt(3.0) / (2.0 * math.sqrt(n))
    a = math.pi / c

    def log_abs_coef(k: int) -> np.ndarray:
        i = np.arange(k, dtype=float)
        out = (
            math.log(0.5) + i * math.log(a) - np.array([math.lgamma(v + 1) for v in i])
        )
        out[(np.arange(k) % 2 == 1) | (np.arange(k) == 0)] = -np.inf
        return out

    phi = SmoothFunction(
        "parity",
        lambda t: 0.5 * (1 - torch.cos(a * t)),
        log_abs_coef,
        latex=r"\frac{1-\cos(\pi t/c)}{2}",
    )
    w = torch.zeros(1, 1, n, 3, dtype=dtype)
    w[..., 0] = 1.0 / math.sqrt(n)
    return ConceptTarget(
        [[phi]],
        w.reshape(1, 1, 3 * n),
        torch.ones(1, 1, dtype=dtype),
        n,
        3,
    )


class ConceptRepresentation(NamedTuple):
    """A concept-class target and its decision threshold (:func:`concept_representation`)."""

    #: the concept-class target
    target: ConceptTarget
    #: the language is ``1[target > threshold]``
    threshold: float


@validate_params("n", name=Str())
def concept_representation(name: str, n: int) -> ConceptRepresentation:
    """``(target, threshold)``: a concept-class target for strings of length ``n`` and its decision threshold (chapter 7).

    ``name`` is ``"dl1"`` (:func:`rnnlib.concepts.dl1_neuron`, threshold 1/2),
    ``"parity"`` (:func:`parity_neuron`, 1/2) or ``"pattern:<bits>"``
    (:func:`pattern_neurons`, 5/8). ``1[target(embed_binary(z)) > threshold]``
    is the language's indicator on every string of length n.
    """
    lang = get_language(name)
    if lang.name == "dl1":
        return ConceptRepresentation(dl1_neuron(n), 0.5)
    if lang.name == "parity":
        return ConceptRepresentation(parity_neuron(n), 0.5)
    if lang.name.startswith("pattern:"):
        return ConceptRepresentation(
            pattern_neurons(n, lang.name.removeprefix("pattern:")),
            0.625,
        )
    raise ValueError(
        f"name: no concept-class representation of {lang.name!r} in the book (dl1, parity, pattern:<bits>)"
    )


@validate_params("n", R=POSITIVE, name=Str())
def representation_complexity(name: str, n: int, R: float) -> float:
    """``log10 C_s(phi, R)`` of the neuron(s) of :func:`concept_representation` ``(name, n)`` (chapter 7).

    All neurons of a representation share one ``phi``. The pattern and PARITY
    neurons are rescaled functions ``phi(t) = f g(a t)`` with ``g`` = ``expm1``
    or ``(1 - cos) / 2``, and ``C_s(phi, R) = f C_s(g, a R)`` (exercise 2.2):
    computed so, because :func:`rnnlib.concepts.complexity_s` sums as many
    Taylor terms as coefficients like ``1/i!`` need at the radius it is given.
    """
    lang = get_language(name)
    if lang.name == "parity":
        a = math.pi / (math.sqrt(3.0) / (2.0 * math.sqrt(n)))

        def log_abs_coef(k: int) -> np.ndarray:
            out = math.log(0.5) - np.array([math.lgamma(v + 1.0) for v in range(k)])
            out[(np.arange(k) % 2 == 1) | (np.arange(k) == 0)] = -np.inf
            return out

        g = SmoothFunction(
            "(1 - cos)/2",
            lambda u: 0.5 * (1 - torch.cos(u)),
            log_abs_coef,
        )
        return complexity_s(g, a * R, log10=True)
    if lang.name.startswith("pattern:"):
        k = len(lang.name) - len("pattern:")
        if k > n:
            raise ValueError(f"name: the pattern must not be longer than n = {n}")
        beta = math.log(2 * n)
        c = math.sqrt(3.0) / (2.0 * math.sqrt(k))
        return -beta * k / math.log(10) + complexity_s(
            get_function("expm1"), beta / c * R, log10=True
        )
    target, _ = concept_representation(lang.name, n)
    return complexity_s(target.phis[0][0], R, log10=True)


@validate_params("generator", samples_per_token=Int(2), lengths=Ints(1))
def additive_dl1_loss(
    lengths: Sequence[int],
    *,
    samples_per_token: int = 60,
    generator: torch.Generator | int | None = None,
) -> np.ndarray:
    """Best additive least-squares loss on ``D_L1`` for each string length n in ``lengths`` (chapter 2).

    Strings come from :func:`sample_dl1_balanced` (number of
    1s uniform on {0, 1, 2}), ``samples_per_token * n`` of them (at least 200),
    labelled by ``D_L1``. Returns the training mean squared error of
    :func:`rnnlib.concepts.fit_additive` for each length. By symmetry the population optimum
    is ``c + a s`` fitted to ``s(2 - s)`` on s in {0, 1, 2}: slope 0,
    constant 1/3, loss 2/9 at every length (the chapter derives this).
    """
    if isinstance(lengths, (str, bytes)) or len(lengths) == 0:
        raise ValueError(
            f"lengths must be a non-empty sequence of string lengths, got {lengths!r}"
        )
    lengths = [check_int(n, "lengths[i]", minimum=2) for n in lengths]
    gen = as_generator(generator)
    out = []
    for n in lengths:
        z = sample_dl1_balanced(max(200, samples_per_token * n), n, generator=gen)
        y = (count_ones(z) == 1).to(torch.float64)
        out.append(fit_additive(z, y, alphabet_size=2).mse)
    return np.asarray(out)
