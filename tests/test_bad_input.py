"""Bad input: every public rnnlib function and class refuses it with an error that names the argument.

Two sources of cases, one test each:

* **Generated** (:func:`test_declared_constraint_is_refused`): every
  constraint declared with ``rnnlib._validation.validate_params`` (``eps_x``,
  ``L``, ``lr``, ...), read from the function's ``__rnnlib_params__``: for a
  scalar a wrong type, NaN and inf, each end of the range; for a declared
  ``Tensor`` a list, one dimension too many, the wrong dtype, NaN, inf and an
  empty tensor (:class:`Bad`); for a ``Model`` a non-model and a NaN weight;
  for ``Ints`` a string, an empty list, a float and an item below the minimum. The message must start with the
  argument's name and state the range or type (``L must be >= 3``,
  ``eps_x must lie in (0.0, 1.0]``), as scikit-learn's
  ``test_public_functions.py`` does from its ``validate_params``.
* **Hand-written** (:data:`ROWS`, one line per bad call): what no declaration
  expresses: a tensor's type, shape, dtype, NaN/inf entries or emptiness
  (:func:`tensor_rows` makes the six standard ones), malformed data (a
  non-binary string, a non-unit true token, mismatched lengths), a wrong model,
  a constraint that depends on another argument. A row names its *kind*
  (``type``/``dtype`` raise ``TypeError``, the others ``ValueError``, unless
  ``exc=``); the message must name the argument and use the words of that kind
  (:data:`KIND_WORDS`), never a whole sentence, so rewording a message does not
  mean editing this table.

:func:`test_every_public_name_has_rows` fails when a public function or class
has neither rows nor declared constraints; constants, exception classes and
result records (dataclasses that validate nothing, NamedTuples) need no rows, anything else
is listed in :data:`NO_ARGUMENTS_TO_VALIDATE` with a reason.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch

import rnnlib
from rnnlib import _validation


@dataclass
class Row:
    target: str  # "module.name" of the public function/class
    kind: str  # a key of KIND_WORDS
    call: Callable[[], object]
    arg: str  # the argument the error message must name
    note: str = ""
    exc: type[Exception] = ValueError

    @property
    def id(self) -> str:
        note = f"-{self.note}" if self.note else ""
        return f"{self.target.removeprefix('rnnlib.')}-{self.kind}-{self.arg}{note}"


ROWS: list[Row] = []

#: What a message of each kind of row says besides the argument's name (searched, not matched whole).
KIND_WORDS = {
    "type": r"must (be|hold|have)|pass |got ",
    "dtype": r"dtype|float|integer|bool",
    "shape": r"shape|dimension|square|column|entr(y|ies)|length|steps|same|match|size|rows|equal|len\(",
    "nan": r"NaN|finite|nan|inf|numbers",
    "empty": r"empty|at least|no |non-empty|shape|length|must say",
    "range": r"[<>]|lie in|in [\[({]|range|positive|negative|exceed|at most|longer|outside|sum to|between|finite|one output",
    "malformed": r"must|unknown|no |not |has |cannot|missing",
}
KIND_WORDS["inf"] = KIND_WORDS["nan"]


def row(
    target: str,
    kind: str,
    arg: str,
    call: Callable[[], object],
    *,
    note: str = "",
    exc: type[Exception] | None = None,
) -> None:
    """One bad call; the exception defaults to ``TypeError`` for the kinds ``type``/``dtype``."""
    assert kind in KIND_WORDS, kind
    if exc is None:
        exc = TypeError if kind in ("type", "dtype") else ValueError
    ROWS.append(Row(target, kind, call, arg, note, exc))


def with_nan(t: torch.Tensor, value: float = math.nan) -> torch.Tensor:
    t = t.clone()
    t.reshape(-1)[0] = value
    return t


def _with_nan_weight(model, name):
    """A copy of ``model`` whose parameter ``name`` has a NaN entry (certificates must refuse it)."""
    import copy

    bad = copy.deepcopy(model)
    with torch.no_grad():
        getattr(bad, name).reshape(-1)[0] = math.nan
    return bad


def tensor_rows(
    target: str,
    arg: str,
    good: torch.Tensor,
    call: Callable[[object], object],
    *,
    skip: tuple[str, ...] = (),
) -> None:
    """The standard bad tensors for one argument: a list, one dimension too many, int64, NaN, inf, empty."""
    cases = {
        "type": lambda: call(good.tolist()),
        "shape": lambda: call(good.unsqueeze(0)),
        "dtype": lambda: call(good.to(torch.int64)),
        "nan": lambda: call(with_nan(good)),
        "inf": lambda: call(with_nan(good, math.inf)),
        "empty": lambda: call(good[:0]),
    }
    for kind, fn in cases.items():
        if kind not in skip:
            row(target, kind, arg, fn)


def int_rows(
    target: str,
    arg: str,
    call: Callable[[object], object],
    *,
    low: int,
    note: str = "",
) -> None:
    """An integer that no declaration covers (an item of a list, a data-dependent bound): 2.5, '3', ``low - 1``."""
    row(target, "type", arg, lambda: call(2.5), note=note)
    row(target, "type", arg, lambda: call("3"), note=note + "str")
    row(target, "range", arg, lambda: call(low - 1), note=note)


def real_rows(
    target: str,
    arg: str,
    call: Callable[[object], object],
    *,
    bad: tuple[float, ...],
    note: str = "",
) -> None:
    """A real that no declaration covers: a string, NaN and each out-of-range value of ``bad``."""
    row(target, "type", arg, lambda: call("0.1"), note=note)
    row(target, "nan", arg, lambda: call(math.nan), note=note)
    for value in bad:
        row(
            target,
            "range",
            arg,
            lambda v=value: call(v),
            note=f"{note}{value}",
        )


# The table: one line per bad call (or per standard set of them), grouped by module.
# fmt: off

# --- valid inputs every row starts from -------------------------------------------------------

from rnnlib import concepts, dynamical, elman, homework, initialization, languages  # noqa: I001
from rnnlib import plotting, pseudo, stability, truncation, widgets
from rnnlib.experiments import ch01 as exp01, ch03 as exp03, ch04 as exp04

G = torch.Generator().manual_seed(0)
D, L, M, B = 4, 5, 6, 2  # input dim, length, width, batch
ELMAN = elman.ElmanRNN(D, M, generator=0)
X = elman.sample_normalized_sequence(B, L, D, 0.1, generator=0)  # (B, L, D)
XBAR = elman.sample_true_sequence(B, L, D, generator=0)  # (B, L-2, D-1)
DW, DA = pseudo.random_perturbation(D, M, 0.1, generator=0)
N_IN, H = 3, 5
LIN = dynamical.LinearSystem(N_IN, H, generator=0)
RNN = dynamical.SimpleRNN(N_IN, H, generator=0)
LSTM = dynamical.LSTM(N_IN, 4, generator=0)
XR = torch.randn(B, 7, N_IN, generator=G)
YR = torch.randn(B, 7, 1, generator=G)
S0 = torch.zeros(B, H)
SQUARE = torch.randn(H, H, generator=G)
Z = torch.tensor([[0, 1, 1, 0], [1, 0, 0, 0]])

# --- rnnlib.elman ------------------------------------------------------------------------------

T = "rnnlib.elman.ElmanRNN"
row(T, "type", "generator", lambda: elman.ElmanRNN(D, M, generator="seed"))
row(T, "malformed", "width", lambda: elman.ElmanRNN(D, M + 1, doubled=True), note="doubled")
tensor_rows(T, "x", X, lambda v: ELMAN(v))
row(T, "shape", "x", lambda: ELMAN(X[..., :-1]), note="input_dim")
row(T, "dtype", "x", lambda: ELMAN(X.double()), note="float64")
tensor_rows(T, "x", X, lambda v: ELMAN.hidden_states(v), skip=("type", "dtype", "inf"))

for (name, fn) in (
    ("elman_hidden_states", elman.elman_hidden_states),
    ("elman_last_state", elman.elman_last_state),
):
    T = f"rnnlib.elman.{name}"
    W, A = (ELMAN.W.detach(), ELMAN.A.detach())
    # pure functions for torch.func transforms: only types, shapes and dtypes are checked (a value
    # check would stop jvp/vmap); ElmanRNN's methods also refuse NaN/inf (rows above)
    tensor_rows(T, "W", W, lambda v, fn=fn: fn(v, A, X), skip=("empty", "nan", "inf"))
    row(T, "shape", "W", lambda fn=fn: fn(W[:, :-1], A, X), note="square")
    tensor_rows(T, "A", A, lambda v, fn=fn: fn(W, v, X), skip=("empty", "nan", "inf"))
    tensor_rows(T, "x", X, lambda v, fn=fn: fn(W, A, v), skip=("nan", "inf"))
    row(T, "dtype", "x", lambda fn=fn: fn(W, A, X.double()), note="float64")

T = "rnnlib.elman.normalize_sequence"
tensor_rows(T, "x_bar", XBAR, lambda v: elman.normalize_sequence(v, 0.1))
row(T, "malformed", "x_bar", lambda: elman.normalize_sequence(2 * XBAR, 0.1), note="non-unit tokens")

for (name, fn) in (
    ("sample_true_sequence", elman.sample_true_sequence),
    ("sample_normalized_sequence", lambda b, l, d, **kw: elman.sample_normalized_sequence(b, l, d, 0.1, **kw)),
):
    T = f"rnnlib.elman.{name}"
    row(T, "type", "generator", lambda fn=fn: fn(B, L, D, generator=1.5))
    row(T, "dtype", "dtype", lambda fn=fn: fn(B, L, D, dtype=torch.int64))



# --- rnnlib.initialization -----------------------------------------------------------------------

T = "rnnlib.initialization.predicted_sq_norms"
tensor_rows(T, "x", X, initialization.predicted_sq_norms)

T = "rnnlib.experiments.ch01.norm_profile"
row(T, "empty", "widths", lambda: exp01.norm_profile([], L, D, 0.1))
row(T, "range", "widths", lambda: exp01.norm_profile([8, 0], L, D, 0.1))

T = "rnnlib.initialization.active_fraction"
row(T, "type", "model", lambda: initialization.active_fraction(LIN, X))
tensor_rows(T, "x", X, lambda v: initialization.active_fraction(ELMAN, v), skip=("type",))

T = "rnnlib.initialization.pattern_flip_fraction"
row(T, "type", "model", lambda: initialization.pattern_flip_fraction("net", XBAR, 0.1, 0))
tensor_rows(T, "x_bar", XBAR, lambda v: initialization.pattern_flip_fraction(ELMAN, v, 0.1, 0))
real_rows(T, "eps_x", lambda v: initialization.pattern_flip_fraction(ELMAN, XBAR, v, 0), bad=(0.0, 3.0))
int_rows(T, "position", lambda v: initialization.pattern_flip_fraction(ELMAN, XBAR, 0.1, v), low=0)
row(T, "range", "position", lambda: initialization.pattern_flip_fraction(ELMAN, XBAR, 0.1, L), note="too large")

T = "rnnlib.experiments.ch01.flip_fraction_vs_eps"
row(T, "type", "model", lambda: exp01.flip_fraction_vs_eps(None, [0.1], L=L))
row(T, "empty", "eps_values", lambda: exp01.flip_fraction_vs_eps(ELMAN, [], L=L))
row(T, "range", "eps_values", lambda: exp01.flip_fraction_vs_eps(ELMAN, [0.1, -1.0], L=L), note="an item outside eps_x's range")
int_rows(T, "L", lambda v: exp01.flip_fraction_vs_eps(ELMAN, [0.1], L=v), low=3)
int_rows(T, "batch_size", lambda v: exp01.flip_fraction_vs_eps(ELMAN, [0.1], L=L, batch_size=v), low=1)

T = "rnnlib.experiments.ch01.sequence_norms"

# --- rnnlib.languages ------------------------------------------------------------------------------

for name in (
    "embed_binary",
    "dl1_indicator",
    "count_ones",
):
    T = f"rnnlib.languages.{name}"
    fn = getattr(languages, name)
    row(T, "type", "z", lambda fn=fn: fn([[0, 1]]))
    row(T, "shape", "z", lambda fn=fn: fn(Z[0]))
    row(T, "empty", "z", lambda fn=fn: fn(Z[:0]))
    row(T, "malformed", "z", lambda fn=fn: fn(2 * Z), note="not binary")
    row(T, "malformed", "z", lambda fn=fn: fn(Z.float() + 0.5), note="fractional")


T = "rnnlib.languages.sample_dl1_balanced"
int_rows(T, "max_ones", lambda v: languages.sample_dl1_balanced(2, 4, max_ones=v), low=1)
row(T, "range", "max_ones", lambda: languages.sample_dl1_balanced(2, 4, max_ones=5), note="above n")
int_rows(T, "min_length", lambda v: languages.sample_dl1_balanced(2, 4, min_length=v), low=2)

# chapter 7: strings may be left-padded with -1
ZP = torch.tensor([[-1, 1, 0], [0, 1, 1]])
for (name, fn) in (
    ("string_lengths", languages.string_lengths),
    ("string_ones", languages.string_ones),
    ("parity_indicator", languages.parity_indicator),
    ("contains_pattern", lambda z: languages.contains_pattern(z, "10")),
    ("tomita_indicator", lambda z: languages.tomita_indicator(z, 3)),
    ("held_out_split", lambda z: languages.held_out_split(z, torch.ones(len(z)))),
    ("encode_strings", lambda z: languages.encode_strings(z, 0.5)),
):
    T = f"rnnlib.languages.{name}"
    row(T, "type", "z", lambda fn=fn: fn([[0, 1]]))
    row(T, "shape", "z", lambda fn=fn: fn(ZP[0]))
    row(T, "empty", "z", lambda fn=fn: fn(ZP[:0]))
    row(T, "malformed", "z", lambda fn=fn: fn(2 * ZP), note="not binary")
    row(T, "malformed", "z", lambda fn=fn: fn(torch.tensor([[1, -1, 0]])), note="pad inside")
    row(T, "malformed", "z", lambda fn=fn: fn(torch.tensor([[1, 0, -1]])), note="pad last")
    row(T, "dtype", "z", lambda fn=fn: fn(ZP.float()), note="float")
row("rnnlib.languages.contains_pattern", "malformed", "pattern", lambda: languages.contains_pattern(ZP, "1a"))
row("rnnlib.languages.contains_pattern", "empty", "pattern", lambda: languages.contains_pattern(ZP, ""))
row("rnnlib.languages.check_split", "type", "split", lambda: languages.check_split(ZP))

T = "rnnlib.languages.held_out_split"
row(T, "shape", "y", lambda: languages.held_out_split(ZP, torch.ones(3)))
row(T, "malformed", "y", lambda: languages.held_out_split(ZP, torch.tensor([0.5, 1.0])))
row("rnnlib.languages.encode_strings", "dtype", "dtype", lambda: languages.encode_strings(ZP, 0.5, dtype=torch.int64))

T = "rnnlib.languages.DFA"
row(T, "type", "transitions", lambda: languages.DFA([[0, 1]], torch.tensor([True])))
row(T, "range", "transitions", lambda: languages.DFA(torch.tensor([[0, 2]]), torch.tensor([True])))
row(T, "shape", "accepting", lambda: languages.DFA(torch.tensor([[0, 0]]), torch.tensor([True, False])))
row(T, "dtype", "accepting", lambda: languages.DFA(torch.tensor([[0, 0]]), torch.tensor([1])))
row(T, "range", "start", lambda: languages.DFA(torch.tensor([[0, 0]]), torch.tensor([True]), 1))
row(T, "malformed", "z", lambda: languages.get_language("dl1").dfa.run(torch.tensor([[2]])))
row(T, "range", "lengths", lambda: languages.get_language("dl1").dfa.sample(torch.tensor([0])))
row(T, "malformed", "lengths", lambda: languages.get_language("tomita2").dfa.sample(torch.tensor([3])), note="none")
T = "rnnlib.languages.dfa_from_table"
row(T, "type", "transitions", lambda: languages.dfa_from_table("01", [0]))
row(T, "malformed", "transitions", lambda: languages.dfa_from_table([[0, 1, 1]], [0]))
row(T, "range", "transitions", lambda: languages.dfa_from_table([[0, 3]], [0]))
row(T, "range", "accepting", lambda: languages.dfa_from_table([[0, 0]], [1]))
row(T, "type", "accepting", lambda: languages.dfa_from_table([[0, 0]], 0))
T = "rnnlib.languages.Language"
row(T, "malformed", "z", lambda: languages.get_language("parity")(torch.tensor([[3, 1]])))
row(T, "type", "n", lambda: languages.get_language("parity").count(2.0))
T = "rnnlib.languages.get_language"
row(T, "type", "name", lambda: languages.get_language(3))
row(T, "malformed", "name", lambda: languages.get_language("tomita9"))
row(T, "malformed", "name", lambda: languages.get_language("pattern:"), note="empty pattern")
T = "rnnlib.languages.sample_language"
row(T, "malformed", "name", lambda: languages.sample_language("dyck", 4, 3))
int_rows(T, "min_length", lambda v: languages.sample_language("dl1", 4, 3, min_length=v), low=1)
row(T, "range", "min_length", lambda: languages.sample_language("dl1", 4, 3, min_length=4), note="above n")
row(T, "malformed", "n", lambda: languages.sample_language("tomita2", 4, 3), note="no positive")
row(T, "type", "generator", lambda: languages.sample_language("dl1", 4, 3, generator=1.5))
row("rnnlib.languages.pattern_neurons", "malformed", "pattern", lambda: languages.pattern_neurons(5, "0x"))
row("rnnlib.languages.pattern_neurons", "range", "pattern", lambda: languages.pattern_neurons(2, "010"))
row("rnnlib.languages.concept_representation", "malformed", "name", lambda: languages.concept_representation("tomita1", 4))
T = "rnnlib.languages.representation_complexity"
row(T, "malformed", "name", lambda: languages.representation_complexity("tomita1", 4, 1.0))

# --- rnnlib.concepts -------------------------------------------------------------------------------

T = "rnnlib.concepts.SmoothFunction"
row(T, "type", "fn", lambda: concepts.SmoothFunction("f", 3.0, lambda n: np.zeros(n)))
row(T, "range", "radius", lambda: concepts.SmoothFunction("f", torch.sin, lambda n: np.zeros(n), radius=-1.0))

T = "rnnlib.concepts.get_function"
row(T, "malformed", "phi", lambda: concepts.get_function("no-such-function"))
row(T, "type", "phi", lambda: concepts.get_function(3))

T = "rnnlib.concepts.polynomial"
row(T, "malformed", "coefficients", lambda: concepts.polynomial(3.0))
row(T, "empty", "coefficients", lambda: concepts.polynomial([]))
row(T, "nan", "coefficients", lambda: concepts.polynomial([0.0, math.nan]))


T = "rnnlib.concepts.taylor_coefficients"
row(T, "type", "phi", lambda: concepts.taylor_coefficients(None, 4))

T = "rnnlib.concepts.complexity_s"
row(T, "malformed", "phi", lambda: concepts.complexity_s("nope", 1.0))

T = "rnnlib.concepts.complexity_eps"

TARGET = concepts.sample_target(L, D, p=2, generator=0)
T = "rnnlib.concepts.ConceptTarget"
row(T, "shape", "w", lambda: concepts.ConceptTarget(TARGET.phis, TARGET.w[..., :-1], TARGET.b, TARGET.n_tokens, TARGET.token_dim))
row(T, "malformed", "w", lambda: concepts.ConceptTarget(TARGET.phis, 2 * TARGET.w, TARGET.b, TARGET.n_tokens, TARGET.token_dim), note="not unit")
row(T, "range", "b", lambda: concepts.ConceptTarget(TARGET.phis, TARGET.w, TARGET.b + 5, TARGET.n_tokens, TARGET.token_dim))
row(T, "nan", "w", lambda: concepts.ConceptTarget(TARGET.phis, with_nan(TARGET.w), TARGET.b, TARGET.n_tokens, TARGET.token_dim))
row(T, "range", "n_tokens", lambda: concepts.ConceptTarget(TARGET.phis, TARGET.w, TARGET.b, 0, TARGET.token_dim))
row(T, "malformed", "phis", lambda: concepts.ConceptTarget(TARGET.phis[:0], TARGET.w, TARGET.b, TARGET.n_tokens, TARGET.token_dim))
XT = XBAR  # (B, L-2, D-1): the true tokens a target reads
tensor_rows(T, "x_bar", XT, lambda v: TARGET(v), skip=("type",))

T = "rnnlib.concepts.sample_target"
row(T, "empty", "functions", lambda: concepts.sample_target(L, D, functions=()))
row(T, "malformed", "phi", lambda: concepts.sample_target(L, D, functions=("nope",)))

T = "rnnlib.concepts.token_circle"
THETAS = torch.linspace(0, 1, 5, dtype=XBAR.dtype)
int_rows(T, "position", lambda v: concepts.token_circle(XBAR[0], v, THETAS), low=-XBAR.shape[1])

T = "rnnlib.concepts.mixed_difference"
row(T, "type", "f", lambda: concepts.mixed_difference("f", XBAR[0], THETAS))
row(T, "malformed", "positions", lambda: concepts.mixed_difference(TARGET, XBAR[0], THETAS, positions=(0,)))

TOKENS = torch.tensor([[0, 1, 2], [2, 1, 0], [1, 1, 1]])
YT = torch.tensor([0.5, -0.5, 0.0])
T = "rnnlib.concepts.fit_additive"
row(T, "malformed", "tokens", lambda: concepts.fit_additive(-TOKENS, YT), note="negative")
row(T, "range", "tokens", lambda: concepts.fit_additive(TOKENS, YT, alphabet_size=2), note="above alphabet")
row(T, "shape", "y", lambda: concepts.fit_additive(TOKENS, YT[:2]))
FIT = concepts.fit_additive(TOKENS, YT)
T = "rnnlib.concepts.AdditiveFit"
row(T, "shape", "tokens", lambda: FIT.predict(TOKENS[:, :2]))
row(T, "dtype", "tokens", lambda: FIT.predict(TOKENS.float()))
row(T, "range", "tokens", lambda: FIT.predict(TOKENS + 5))

T = "rnnlib.languages.additive_dl1_loss"
row(T, "empty", "lengths", lambda: languages.additive_dl1_loss([]))
row(T, "range", "lengths", lambda: languages.additive_dl1_loss([4, 1]))

T = "rnnlib.concepts.dl1_neuron"

# --- rnnlib.pseudo -------------------------------------------------------------------------------

for name in (
    "pseudo_network",
    "pseudo_network_sum",
):
    T = f"rnnlib.pseudo.{name}"
    fn = getattr(pseudo, name)
    row(T, "type", "model", lambda fn=fn: fn(LIN, DW, DA, X))
    tensor_rows(T, "dW", DW, lambda v, fn=fn: fn(ELMAN, v, DA, X))
    row(T, "shape", "dA", lambda fn=fn: fn(ELMAN, DW, DA[:, :-1], X))
    row(T, "nan", "dA", lambda fn=fn: fn(ELMAN, DW, with_nan(DA), X))
    tensor_rows(T, "x", X, lambda v, fn=fn: fn(ELMAN, DW, DA, v))
    row(T, "dtype", "dW", lambda fn=fn: fn(ELMAN, DW.double(), DA, X), note="float64")

T = "rnnlib.pseudo.back_matrices"
row(T, "type", "model", lambda: pseudo.back_matrices(RNN, X))
tensor_rows(T, "x", X, lambda v: pseudo.back_matrices(ELMAN, v))



T = "rnnlib.pseudo.linearization_gap"
row(T, "type", "model", lambda: pseudo.linearization_gap(LSTM, X, 0.1))
tensor_rows(T, "x", X, lambda v: pseudo.linearization_gap(ELMAN, v, 0.1))
T = "rnnlib.pseudo.linearization_gaps"
row(T, "type", "model", lambda: pseudo.linearization_gaps(LSTM, X, [0.1]))
row(T, "empty", "taus", lambda: pseudo.linearization_gaps(ELMAN, X, []))

T = "rnnlib.pseudo.linearization_changes"
row(T, "type", "model", lambda: pseudo.linearization_changes(LSTM, X, [(DW, DA)], [0.1]))
tensor_rows(T, "x", X, lambda v: pseudo.linearization_changes(ELMAN, v, [(DW, DA)], [0.1]))
tensor_rows(T, "dW", DW, lambda v: pseudo.linearization_changes(ELMAN, X, [(v, DA)], [0.1]))
row(T, "shape", "dA", lambda: pseudo.linearization_changes(ELMAN, X, [(DW, DA[:, :-1])], [0.1]))
row(T, "empty", "directions", lambda: pseudo.linearization_changes(ELMAN, X, [], [0.1]))
row(T, "empty", "taus", lambda: pseudo.linearization_changes(ELMAN, X, [(DW, DA)], []))
row(T, "range", "taus", lambda: pseudo.linearization_changes(ELMAN, X, [(DW, DA)], [0.0]))

T = "rnnlib.experiments.ch03.gap_sweep"
row(T, "empty", "widths", lambda: exp03.gap_sweep([], [0.1], L=L, d=D, eps_x=0.1))
row(T, "range", "widths", lambda: exp03.gap_sweep([0], [0.1], L=L, d=D, eps_x=0.1))
row(T, "empty", "taus", lambda: exp03.gap_sweep([8], [], L=L, d=D, eps_x=0.1))
row(T, "range", "taus", lambda: exp03.gap_sweep([8], [-0.1], L=L, d=D, eps_x=0.1))


# --- rnnlib.dynamical ------------------------------------------------------------------------------

T = "rnnlib.dynamical.recurrent_matrix"
row(T, "malformed", "scheme", lambda: dynamical.recurrent_matrix(4, "no-such-scheme"))

for cls in (
    "LinearSystem",
    "SimpleRNN",
    "LSTM",
):
    T = f"rnnlib.dynamical.{cls}"
    model = {"LinearSystem": LIN, "SimpleRNN": RNN, "LSTM": LSTM}[cls]
    tensor_rows(T, "x", XR, lambda v, model=model: model(v))
    row(T, "dtype", "x", lambda model=model: model(XR.double()), note="float64")
tensor_rows("rnnlib.dynamical.SimpleRNN", "s0", S0, lambda v: RNN(XR, v), skip=("empty",))
row("rnnlib.dynamical.LSTM", "type", "lstm", lambda: dynamical.LSTM.from_torch(torch.nn.GRU(3, 4)))
row("rnnlib.dynamical.LSTM", "malformed", "lstm", lambda: dynamical.LSTM.from_torch(torch.nn.LSTM(3, 4, num_layers=2)))

T = "rnnlib.dynamical.RecurrentModel"
row(T, "shape", "x", lambda: RNN(XR[..., :-1]), note="input_dim")
row(T, "shape", "s0", lambda: RNN(XR, S0[:1]), note="batch")

# --- rnnlib.stability ------------------------------------------------------------------------------

T = "rnnlib.stability.activation_lipschitz"
row(T, "malformed", "activation", lambda: stability.activation_lipschitz("gelu"))
row(T, "type", "activation", lambda: stability.activation_lipschitz(None))

T = "rnnlib.stability.spectral_norm"
tensor_rows(T, "W", SQUARE, stability.spectral_norm)
row("rnnlib.stability.project_spectral", "shape", "W", lambda: stability.project_spectral(SQUARE[:, :-1], 0.9), note="not square")

T = "rnnlib.stability.project_l1_rows"
real_rows(T, "radius", lambda v: stability.project_l1_rows(SQUARE, v), bad=(-1.0,))
row(T, "shape", "radius", lambda: stability.project_l1_rows(SQUARE, torch.ones(H + 1)), note="per-row")
row(T, "range", "radius", lambda: stability.project_l1_rows(SQUARE, -torch.ones(H)), note="per-row")

T = "rnnlib.stability.initialization_norms"
row(T, "malformed", "schemes", lambda: stability.initialization_norms([4], ("nope",)))

T = "rnnlib.stability.lds_markov_parameters"
AV, CV = torch.tensor([0.5, 0.1]), torch.tensor([1.0, 0.0])
row(T, "shape", "c", lambda: stability.lds_markov_parameters(AV, CV[:1], torch.tensor(0.0), 5))


# --- rnnlib.truncation -----------------------------------------------------------------------------

# (models, tensors, ks, steps, lr, project and schedule are declared: their cases are generated)
row("rnnlib.truncation.sequence_loss", "shape", "y", lambda: truncation.sequence_loss(RNN, XR, YR[:, :-1]), note="T")
row("rnnlib.truncation.truncated_states", "dtype", "x", lambda: truncation.truncated_states(RNN, XR.double(), 2), note="float64")

T = "rnnlib.truncation.growth_recursion_bound"
STEPS = r"^step_sizes must be a non-empty 1-d sequence of finite non-negative numbers$"
row(T, "empty", "step_sizes", lambda: truncation.growth_recursion_bound(0.1, 1.0, []))
row(T, "nan", "step_sizes", lambda: truncation.growth_recursion_bound(0.1, 1.0, [0.1, math.nan]))
row(T, "range", "step_sizes", lambda: truncation.growth_recursion_bound(0.1, 1.0, [0.1, -0.1]))
row(T, "shape", "step_sizes", lambda: truncation.growth_recursion_bound(0.1, 1.0, [[0.1]]))
# lambda = 0 is refused on purpose (the generated case covers it too): see inference_bound's docstring
row("rnnlib.truncation.inference_bound", "range", "lam", lambda: truncation.inference_bound(0.0, 3, 1.0, 1.0), note="zero")

# --- rnnlib.trends (chapters 4-6, 10; ch10 re-exports seed_slopes and mean_interval) -----------

from rnnlib import trends  # noqa: E402

T = "rnnlib.trends.seed_slopes"
row(T, "shape", "y", lambda: trends.seed_slopes([1.0, 2.0], np.ones((2, 3))))
row(T, "shape", "y", lambda: trends.seed_slopes([1.0], np.ones((2, 1))), note="one x")
row(T, "type", "x", lambda: trends.seed_slopes([[1.0, 2.0]], np.ones((2, 2))), note="2-d x")
row(T, "nan", "x", lambda: trends.seed_slopes([1.0, math.nan], np.ones((2, 2))))
row(T, "range", "x", lambda: trends.seed_slopes([1.0, 1.0], np.ones((2, 2))), note="constant x")
T = "rnnlib.trends.mean_interval"
row(T, "empty", "values", lambda: trends.mean_interval([1.0]))
row(T, "nan", "values", lambda: trends.mean_interval([1.0, math.nan]))
real_rows(T, "level", lambda v: trends.mean_interval([1.0, 2.0], v), bad=(0.0, 1.0))
T = "rnnlib.trends.loglog_trend"
row(T, "shape", "y", lambda: trends.loglog_trend([1.0, 2.0], np.ones(2)), note="one seed")
row(T, "shape", "y", lambda: trends.loglog_trend([1.0, 2.0], np.ones((3, 3))))
row(T, "range", "y", lambda: trends.loglog_trend([1.0, 2.0], -np.ones((2, 2))), note="negative")
row(T, "range", "x", lambda: trends.loglog_trend([0.0, 2.0], np.ones((2, 2))), note="zero")
real_rows(T, "level", lambda v: trends.loglog_trend([1.0, 2.0], np.ones((2, 2)) + [[0, 1], [1, 0]], v), bad=(0.0, 1.0))
T = "rnnlib.trends.bootstrap_loglog_trend"
row(T, "range", "x", lambda: trends.bootstrap_loglog_trend([0.0, 2.0], [[1.0, 2.0], [1.0, 2.0]]), note="zero")
row(T, "shape", "samples", lambda: trends.bootstrap_loglog_trend([1.0, 2.0], [[1.0, 2.0]]), note="one size short")
row(T, "range", "samples[1]", lambda: trends.bootstrap_loglog_trend([1.0, 2.0], [[1.0, 2.0], [1.0]]), note="one draw")
row(T, "range", "n_boot", lambda: trends.bootstrap_loglog_trend([1.0, 2.0], [[1.0, 2.0], [1.0, 2.0]], n_boot=10))

# --- rnnlib.experiments.ch10 (chapter 10) ----------------------------------------------------------

from rnnlib.experiments import ch10 as exp10  # noqa: E402

T = "rnnlib.experiments.ch10.smallest_k"
DK = np.array([[0.5, 0.1, 0.01]])
row(T, "shape", "distances", lambda: exp10.smallest_k(DK, [1, 2], 0.05))
row(T, "malformed", "ks", lambda: exp10.smallest_k(DK, [1, 3, 2], 0.05), exc=ValueError)
row(T, "nan", "distances", lambda: exp10.smallest_k(np.array([[0.5, math.nan, 0.01]]), [1, 2, 3], 0.05))
row(T, "range", "distances", lambda: exp10.smallest_k(-DK, [1, 2, 3], 0.05), note="negative")
real_rows(T, "eps", lambda v: exp10.smallest_k(DK, [1, 2, 3], v), bad=(0.0, -1.0))
T = "rnnlib.truncation.batched_gd_weights"
R10, M10, N10, B10, T10 = 2, 3, 2, 2, 4
BD = dict(
    W0=torch.zeros(R10, M10, M10, dtype=torch.float64), U0=torch.zeros(R10, M10, N10, dtype=torch.float64),
    C=torch.ones(R10, 1, M10, dtype=torch.float64), x=torch.ones(R10, B10, T10, N10, dtype=torch.float64),
    y=torch.ones(R10, B10, T10, 1, dtype=torch.float64), truncations=[T10, 1],
    alphas=torch.full((R10, 2), 0.1, dtype=torch.float64),
)
row(T, "shape", "W0", lambda: truncation.batched_gd_weights(**{**BD, "W0": BD["W0"][:, :2]}, steps=2))
row(T, "shape", "truncations", lambda: truncation.batched_gd_weights(**{**BD, "truncations": [1]}, steps=2))
row(T, "range", "truncations", lambda: truncation.batched_gd_weights(**{**BD, "truncations": [0, 1]}, steps=2))
row(T, "shape", "alphas", lambda: truncation.batched_gd_weights(**BD, steps=3))
row("rnnlib.experiments.ch10.scalar_smoothness", "type", "generator", lambda: exp10.scalar_smoothness(1.1, [3], generator="seed"))
T = "rnnlib.experiments.ch10.k_star_sweep"
row(T, "malformed", "Ns", lambda: exp10.k_star_sweep([4, 2], [1], [0, 1], eps=0.1, T=4), exc=ValueError)
row(T, "range", "ks", lambda: exp10.k_star_sweep([2, 4], [1, 4], [0, 1], eps=0.1, T=4))
row(T, "empty", "seeds", lambda: exp10.k_star_sweep([2, 4], [1], [0], eps=0.1, T=4))
for (name, call, arg, kind) in (
    ("plot_k_star", lambda: plotting.plot_k_star([8, 16], {"a": np.ones((2, 3))}), "k_star", "shape"),
    ("plot_k_star", lambda: plotting.plot_k_star([8, 16], {"a": np.full((2, 2), math.nan)}), "k_star", "nan"),
    ("plot_k_star", lambda: plotting.plot_k_star([8, 16], []), "k_star", "type"),
    ("plot_scalar_smoothness", lambda: plotting.plot_scalar_smoothness([8, 16], {"a": np.ones((2, 3))}), "curvature", "shape"),
    ("plot_scalar_smoothness", lambda: plotting.plot_scalar_smoothness([8, 16], {}), "curvature", "empty"),
):
    row(f"rnnlib.plotting.{name}", kind, arg, call)

# --- rnnlib.plotting -------------------------------------------------------------------------------

T = "rnnlib.plotting.html_table"
row(T, "malformed", "header", lambda: plotting.html_table("ab", [["a", "b"]]))
row(T, "empty", "header", lambda: plotting.html_table([], []))
row(T, "shape", "rows", lambda: plotting.html_table(["a", "b"], [[1]]))
row(T, "nan", "rows", lambda: plotting.html_table(["a"], [[float("nan")]]))
row(T, "type", "rows", lambda: plotting.html_table(["a"], [[None]]))
row(T, "range", "digits", lambda: plotting.html_table(["a"], [[1.0]], digits=-1))
T = "rnnlib.plotting.new_figure"
row(T, "range", "ncols", lambda: plotting.new_figure(0))
row(T, "type", "ncols", lambda: plotting.new_figure("2"))

T = "rnnlib.plotting.loglog_slope"
LENGTHS = r"^x and y must be 1-d of equal length >= 2, got shapes \(\d*,\) and \(\d*,\)$"
POSITIVE = "^x and y must be positive and finite for a log-log fit$"
row(T, "shape", "x", lambda: plotting.loglog_slope([1, 2, 3], [1, 2]))
row(T, "range", "x", lambda: plotting.loglog_slope([1, -2], [1, 2]))
row(T, "nan", "y", lambda: plotting.loglog_slope([1, 2], [1, math.nan]))
row(T, "empty", "x", lambda: plotting.loglog_slope([], []))

NAN = np.array([0.1, math.nan])
for (name, call, arg, kind) in (
    ("plot_norm_profile", lambda: plotting.plot_norm_profile("not a profile"), "profile", "type"),
    ("plot_sequence_norms", lambda: plotting.plot_sequence_norms(np.array([[1.0, math.nan]])), "norms", "nan"),
    ("plot_sequence_norms", lambda: plotting.plot_sequence_norms(np.ones(3)), "norms", "shape"),
    ("plot_flip_fraction", lambda: plotting.plot_flip_fraction([0.1, 0.2], [0.5]), "flips", "shape"),
    ("plot_flip_fraction", lambda: plotting.plot_flip_fraction([0.1, 0.2], NAN), "flips", "nan"),
    ("plot_state_distance", lambda: plotting.plot_state_distance({}), "distances", "empty"),
    ("plot_state_distance", lambda: plotting.plot_state_distance({"rnn": NAN}), "distances", "nan"),
    ("plot_init_norms", lambda: plotting.plot_init_norms([4, 8], {"gaussian": np.ones((3, 2))}), "norms", "shape"),
    ("plot_jacobian_hist", lambda: plotting.plot_jacobian_hist({}), "norms", "empty"),
    ("plot_jacobian_hist", lambda: plotting.plot_jacobian_hist({"rnn": [1.0, math.inf]}), "norms", "inf"),
    ("plot_lds_fit", lambda: plotting.plot_lds_fit(None), "fit", "type"),
    ("plot_truncation_errors", lambda: plotting.plot_truncation_errors([1, 2], {"rnn": np.ones(3)}), "errors", "shape"),
    ("plot_truncation_errors", lambda: plotting.plot_truncation_errors([1, 2], {"rnn": NAN}), "errors", "nan"),
    ("plot_gradient_difference", lambda: plotting.plot_gradient_difference([1, 2], {"rnn": np.ones(3)}, {"rnn": 0.5}), "gaps", "shape"),
    ("plot_gradient_difference", lambda: plotting.plot_gradient_difference([1, 2], {"rnn": np.ones(2)}, {}), "lams", "malformed"),
    ("plot_weight_distance", lambda: plotting.plot_weight_distance([1, 2], {"rnn": np.ones((2, 3))}, k_index=5), "k_index", "range"),
    ("plot_weight_distance", lambda: plotting.plot_weight_distance([1, 2], {"rnn": np.full((2, 3), math.nan)}), "distances", "nan"),
    ("plot_weight_distance", lambda: plotting.plot_weight_distance([1, 2], {"rnn": np.ones((2, 3))}, step_lengths={"rnn": np.ones(3)}), "step_lengths", "shape"),
    ("plot_weight_distance", lambda: plotting.plot_weight_distance([1, 2], {"rnn": np.ones((2, 3))}, step_lengths={"cnn": np.ones(2)}), "step_lengths", "malformed"),
    ("plot_targets", lambda: plotting.plot_targets([0.1, 0.2], np.ones((3, 3)), np.ones((2, 2))), "slices", "shape"),
    ("plot_targets", lambda: plotting.plot_targets([0.1, 0.2], np.ones((3, 2)), np.ones((3, 3))), "interaction", "shape"),
    ("plot_complexity", lambda: plotting.plot_complexity([1.0, 2.0], {"sin": np.ones(3)}, {"sin": np.ones(2)}), "log10_cs", "shape"),
    ("plot_complexity", lambda: plotting.plot_complexity([1.0, 2.0], {"sin": NAN}, {"sin": np.ones(2)}), "log10_cs", "nan"),
    ("plot_dl1", lambda: plotting.plot_dl1([4, 8], [0.1], [0, 1], [0.1, 0.2], [0.0, 0.0]), "additive_mse", "shape"),
    ("plot_pseudo_gap", lambda: plotting.plot_pseudo_gap(None), "sweep", "type"),
    ("plot_linearization", lambda: plotting.plot_linearization(None), "sample", "type"),
    ("plot_relu_identity", lambda: plotting.plot_relu_identity(None), "sweep", "type"),
    ("plot_decoding", lambda: plotting.plot_decoding(None, 8, 0.1), "sweep", "type"),
    ("plot_decoding_profile", lambda: plotting.plot_decoding_profile(None), "errors", "type"),
    ("plot_inversion", lambda: plotting.plot_inversion(None, None, None, None), "by_width", "type"),
    ("plot_step_features", lambda: plotting.plot_step_features(None), "sweep", "type"),
    ("plot_correlations", lambda: plotting.plot_correlations(None), "sweep", "type"),
    ("plot_construction", lambda: plotting.plot_construction(None), "sweep", "type"),
    ("plot_truncation_over_time", lambda: plotting.plot_truncation_over_time(np.array([]), None), "errors", "empty"),
    ("plot_truncation_over_time", lambda: plotting.plot_truncation_over_time(np.ones(3), -1.0), "bound", "range"),
):
    row(f"rnnlib.plotting.{name}", kind, arg, call)

# --- rnnlib.widgets --------------------------------------------------------------------------------

T = "rnnlib.widgets.explore"
row(T, "type", "figure_fn", lambda: widgets.explore(3, a=widgets.int_slider(1, 0, 2)))
row(T, "empty", "sliders", lambda: widgets.explore(lambda: None))

# --- rnnlib.notebook -------------------------------------------------------------------------------

from rnnlib import notebook as _notebook  # noqa: E402

row("rnnlib.notebook.glue", "malformed", "name", lambda: _notebook.glue("ch01 x", 1.0))

# --- rnnlib.homework -------------------------------------------------------------------------------

for number in sorted(homework.CHECKERS):
    fn = homework.CHECKERS[number]
    arg = next(iter(inspect.signature(fn).parameters))
    row(f"rnnlib.homework.{fn.__name__}", "type", arg, lambda fn=fn: fn(42), note=number)

T = "rnnlib.homework.compare_with_reference"
row(T, "type", "student_fn", lambda: homework.compare_with_reference("1.1", "not callable", abs, [homework.Case("c", (1,))]))
row(T, "empty", "cases", lambda: homework.compare_with_reference("1.1", abs, abs, []))
row(T, "type", "forbidden", lambda: homework.compare_with_reference("1.1", abs, abs, [homework.Case("c", (1,))], forbidden=(abs,)))
T = "rnnlib.homework.register"
row(T, "type", "exercise", lambda: homework.register("1.1")(lambda f: None))
T = "rnnlib.homework.run_cases"
row(T, "malformed", "number", lambda: homework.run_cases("99.9", abs, "in.pt", "out"))
row(T, "type", "student", lambda: homework.run_cases("8.1", 42, "in.pt", "out"))
T = "rnnlib.homework.read_results"
row(T, "malformed", "count", lambda: homework.read_results(".", -1))
T = "rnnlib.homework.mismatch"
row(T, "malformed", "atol", lambda: homework.mismatch("1.1", "x", np.zeros(2), "float64", np.zeros(2), -1.0, 0.0))
T = "rnnlib.homework.Exercise"
row(T, "malformed", "number", lambda: homework.Exercise("1", lambda s: [], abs, seed=1))
row(T, "type", "cases", lambda: homework.Exercise("1.1", 3, abs, seed=1))
row(T, "type", "seed", lambda: homework.Exercise("1.1", lambda s: [], abs, seed=1.5))
row(T, "malformed", "atol", lambda: homework.Exercise("1.1", lambda s: [], abs, seed=1, atol=-1))
row(T, "type", "forbidden", lambda: homework.Exercise("1.1", lambda s: [], abs, seed=1, forbidden=(abs,)))
T = "rnnlib.homework.Case"
row(T, "type", "args", lambda: homework.Case("c", 3))
row(T, "type", "kwargs", lambda: homework.Case("c", (1,), [2]))

# --- rnnlib.inversion -----------------------------------------------------------------------------

from rnnlib import inversion  # noqa: E402

INV_V = torch.randn(D, generator=G)
INV_T = torch.randn(M, D, generator=G)
T = "rnnlib.inversion.relu_identity"
tensor_rows(T, "T", INV_T, lambda v: inversion.relu_identity(INV_V, INV_V, v))
tensor_rows(T, "v", INV_V, lambda v: inversion.relu_identity(v, INV_V, INV_T))
row(T, "shape", "x", lambda: inversion.relu_identity(INV_V, INV_V[:-1], INV_T))
row(T, "malformed", "scaling", lambda: inversion.relu_identity(INV_V, INV_V, INV_T, scaling="paper"))
T = "rnnlib.inversion.relu_identity_std"
tensor_rows(T, "v", INV_V, lambda v: inversion.relu_identity_std(v, INV_V, 8), skip=("shape",))
row(T, "shape", "x", lambda: inversion.relu_identity_std(INV_V, INV_V[:-1], 8))
T = "rnnlib.experiments.ch04.lemma44_sweep"
row(T, "empty", "widths", lambda: exp04.lemma44_sweep([]))
row(T, "range", "widths", lambda: exp04.lemma44_sweep([0]))

INV_W, INV_A = ELMAN.W.detach(), ELMAN.A.detach()
INV_H = elman.elman_hidden_states(INV_W, INV_A, X)[:, -1]
T = "rnnlib.inversion.naive_decode"
tensor_rows(T, "W", INV_W, lambda v: inversion.naive_decode(v, INV_A, INV_H, L))
row(T, "shape", "W", lambda: inversion.naive_decode(INV_W[:, :-1], INV_A, INV_H, L), note="square")
tensor_rows(T, "h", INV_H, lambda v: inversion.naive_decode(INV_W, INV_A, v, L))
row(T, "shape", "A", lambda: inversion.naive_decode(INV_W, INV_A[:-1], INV_H, L))
T = "rnnlib.inversion.fit_linear_decoder"
tensor_rows(T, "h", INV_H, lambda v: inversion.fit_linear_decoder(v, INV_H[:, :2]))
row(T, "shape", "targets", lambda: inversion.fit_linear_decoder(INV_H, INV_H[:1]))
row(T, "nan", "targets", lambda: inversion.fit_linear_decoder(INV_H, with_nan(INV_H)))
T = "rnnlib.inversion.decoding_errors"
row(T, "type", "model", lambda: inversion.decoding_errors(LIN, L, 0.1))
row(T, "range", "n_train", lambda: inversion.decoding_errors(ELMAN, L, 0.1, n_train=-1))
T = "rnnlib.inversion.base_sequence"
row(T, "range", "L", lambda: inversion.base_sequence(2, D))
T = "rnnlib.inversion.step_jacobians"
tensor_rows(T, "W", INV_W, lambda v: inversion.step_jacobians(v, INV_A, L))
row(T, "shape", "W", lambda: inversion.step_jacobians(INV_W[:, :-1], INV_A, L), note="square")
tensor_rows(T, "A", INV_A, lambda v: inversion.step_jacobians(INV_W, v, L))
row(T, "shape", "base", lambda: inversion.step_jacobians(INV_W, INV_A, L, base=torch.zeros(L + 1, D)))
row(T, "nan", "base", lambda: inversion.step_jacobians(INV_W, INV_A, L, base=with_nan(torch.zeros(L, D))))
T = "rnnlib.inversion.analytic_inverse"
tensor_rows(T, "W", INV_W, lambda v: inversion.analytic_inverse(v, INV_A, L))
row(T, "range", "rcond", lambda: inversion.analytic_inverse(INV_W, INV_A, L, rcond=-0.5))
row(T, "range", "L", lambda: inversion.analytic_inverse(INV_W, INV_A, 0))
T = "rnnlib.experiments.ch04.decoding_sweep"
row(T, "empty", "widths", lambda: exp04.decoding_sweep([], [L], [0.1]))
row(T, "range", "lengths", lambda: exp04.decoding_sweep([4], [2], [0.1]))
row(T, "empty", "eps_values", lambda: exp04.decoding_sweep([4], [L], []))
row(T, "range", "eps_values", lambda: exp04.decoding_sweep([4], [L], [1.5]))
row(T, "range", "n_train_per_m", lambda: exp04.decoding_sweep([4], [L], [0.1], n_train_per_m=-1))
T = "rnnlib.experiments.ch04.growth_fit"
row(T, "malformed", "depths", lambda: exp04.growth_fit([1, 1, 2], np.ones((2, 3))))
row(T, "shape", "errors", lambda: exp04.growth_fit([1, 2, 3], np.ones((2, 4))))
row(T, "nan", "errors", lambda: exp04.growth_fit([1, 2, 3], np.array([[1.0, math.nan, 2.0]])))

T = "rnnlib.inversion.fit_step_features"
row(T, "type", "phi", lambda: inversion.fit_step_features(3.0))
row(T, "malformed", "interval", lambda: inversion.fit_step_features(torch.sin, interval=(0.5, -0.5)))
row(T, "range", "interval", lambda: inversion.fit_step_features(torch.sin, interval=(-2.0, 1.0)))
row(T, "malformed", "degree", lambda: inversion.fit_step_features(torch.sin, degree=3))
row(T, "range", "degree", lambda: inversion.fit_step_features(torch.sin, degree=(-1, 2)))
row(T, "malformed", "phi", lambda: inversion.fit_step_features(lambda u: u.sum()))
INV_FIT = inversion.fit_step_features(torch.sin, degree=(3, 2), n_quad=8)
INV_U = torch.linspace(-1, 1, 5, dtype=torch.float64)
T = "rnnlib.inversion.step_feature_average"
row(T, "type", "fit", lambda: inversion.step_feature_average("fit", INV_U, 8))
tensor_rows(T, "u", INV_U, lambda v: inversion.step_feature_average(INV_FIT, v, 8))
row(T, "range", "u", lambda: inversion.step_feature_average(INV_FIT, 2 * INV_U, 8))
T = "rnnlib.experiments.ch04.step_feature_sweep"
row(T, "empty", "functions", lambda: exp04.step_feature_sweep({}, [8]))
row(T, "empty", "widths", lambda: exp04.step_feature_sweep({"sin": torch.sin}, []))

T = "rnnlib.inversion.backprop_correlations"
row(T, "type", "model", lambda: inversion.backprop_correlations(RNN, X))
tensor_rows(T, "x", X, lambda v: inversion.backprop_correlations(ELMAN, v))
T = "rnnlib.experiments.ch04.correlation_sweep"
row(T, "empty", "widths", lambda: exp04.correlation_sweep([]))

_inv_w = torch.ones(1, 1, (L - 2) * (D - 1)) / math.sqrt((L - 2) * (D - 1))
INV_TARGET = concepts.ConceptTarget([["sin"]], _inv_w, torch.ones(1, 1), L - 2, D - 1)
INV_TARGET2 = concepts.ConceptTarget([["sin", "sin"]], _inv_w.expand(1, 2, -1).clone(), torch.ones(1, 2), L - 2, D - 1)
T = "rnnlib.inversion.check_target"
row(T, "type", "target", lambda: inversion.check_target("sin", L, D))
row(T, "malformed", "target", lambda: inversion.check_target(INV_TARGET2, L, D), note="two neurons")
row(T, "malformed", "target", lambda: inversion.check_target(INV_TARGET, L + 1, D), note="length")
T = "rnnlib.inversion.construct_existence"
row(T, "type", "model", lambda: inversion.construct_existence(LSTM, INV_TARGET, 0.1))
row(T, "range", "model", lambda: inversion.construct_existence(elman.ElmanRNN(D, M, 2), INV_TARGET, 0.1), note="d_out")
row(T, "type", "target", lambda: inversion.construct_existence(ELMAN, "sin", 0.1))
row(T, "malformed", "target", lambda: inversion.construct_existence(ELMAN, INV_TARGET2, 0.1))
INV_CONS = inversion.construct_existence(ELMAN, INV_TARGET, 0.1, n_fit=8)
T = "rnnlib.inversion.evaluate_construction"
row(T, "type", "model", lambda: inversion.evaluate_construction(LSTM, INV_CONS, INV_TARGET, XBAR, 0.1))
row(T, "type", "construction", lambda: inversion.evaluate_construction(ELMAN, None, INV_TARGET, XBAR, 0.1))
row(T, "shape", "construction", lambda: inversion.evaluate_construction(elman.ElmanRNN(D, M + 1), INV_CONS, INV_TARGET, XBAR, 0.1))
tensor_rows(T, "x_bar", XBAR, lambda v: inversion.evaluate_construction(ELMAN, INV_CONS, INV_TARGET, v, 0.1))
row(T, "malformed", "target", lambda: inversion.evaluate_construction(ELMAN, INV_CONS, INV_TARGET2, XBAR, 0.1))
T = "rnnlib.experiments.ch04.construction_sweep"
row(T, "empty", "widths", lambda: exp04.construction_sweep([], INV_TARGET))
row(T, "type", "target", lambda: exp04.construction_sweep([8], None))
# --- rnnlib.pseudo (B-aligned directions) and rnnlib.concepts (targets inside the class) ----------

T = "rnnlib.pseudo.aligned_perturbation"
row(T, "type", "model", lambda: pseudo.aligned_perturbation(LSTM, X, 0.1))
tensor_rows(T, "x", X, lambda v: pseudo.aligned_perturbation(ELMAN, v, 0.1))
row(T, "malformed", "kind", lambda: pseudo.aligned_perturbation(ELMAN, X, 0.1, kind="random"))

T = "rnnlib.experiments.ch03.direction_gap_sweep"
row(T, "empty", "widths", lambda: exp03.direction_gap_sweep([], [0.1], L=L, d=D, eps_x=0.1))
row(T, "range", "widths", lambda: exp03.direction_gap_sweep([0], [0.1], L=L, d=D, eps_x=0.1))
row(T, "empty", "taus", lambda: exp03.direction_gap_sweep([8], [], L=L, d=D, eps_x=0.1))
row(T, "range", "taus", lambda: exp03.direction_gap_sweep([8], [0.0], L=L, d=D, eps_x=0.1))
row(T, "empty", "kinds", lambda: exp03.direction_gap_sweep([8], [0.1], kinds=(), L=L, d=D, eps_x=0.1))
row(T, "malformed", "kinds", lambda: exp03.direction_gap_sweep([8], [0.1], kinds=("nope",), L=L, d=D, eps_x=0.1))

T = "rnnlib.plotting.plot_direction_gap"
row(T, "type", "sweep", lambda: plotting.plot_direction_gap("not a sweep"))

T = "rnnlib.concepts.sample_target"
row(T, "malformed", "functions", lambda: concepts.sample_target(L, D, functions=("tanh",)), note="tanh")
real_rows(T, "radius", lambda v: concepts.sample_target(L, D, radius=v), bad=(0.0, -1.0))

# --- rnnlib.data, rnnlib.next_step, rnnlib.experiments.ch11 (chapter 11) ------------------------

from rnnlib import data as rdata
from rnnlib import next_step as nstep
from rnnlib.experiments import ch11 as exp11

ROLLS = [(np.arange(5 * 88).reshape(5, 88) % 7 == 0).astype(np.uint8), np.eye(88, dtype=np.uint8)[:4]]
CODES = [np.array([0, 1, 2, 1, 0]), np.array([2, 2, 1])]
NSM = nstep.NextStepModel("rnn", 88, 4, generator=0)
NSC = nstep.NextStepModel("lstm", 3, 4, readout="categorical", generator=0)
LOG = torch.zeros(2, 3, 88)

T = "rnnlib.data.notes_to_roll"
row(T, "type", "frames", lambda: rdata.notes_to_roll("C4"))
row(T, "empty", "frames", lambda: rdata.notes_to_roll([]))
row(T, "range", "frames", lambda: rdata.notes_to_roll([[200]]))
row(T, "malformed", "frames", lambda: rdata.notes_to_roll([[60.5]]))
row("rnnlib.data.roll_to_notes", "shape", "roll", lambda: rdata.roll_to_notes(np.zeros((3, 12))))
row("rnnlib.data.roll_to_notes", "type", "roll", lambda: rdata.roll_to_notes([[0] * 88]))
row("rnnlib.data.roll_to_notes", "malformed", "roll", lambda: rdata.roll_to_notes(np.full((2, 88), 2)))
row("rnnlib.data.load_benchmark", "type", "path", lambda: rdata.load_benchmark(3))
row("rnnlib.data.load_benchmark", "malformed", "path", lambda: rdata.load_benchmark("/nonexistent/JSB.pickle"))
row("rnnlib.data.split_indices", "range", "fractions", lambda: rdata.split_indices(10, (0.5, 0.5, 0.5)))
row("rnnlib.data.abc_tunes", "malformed", "directory", lambda: rdata.abc_tunes("/nonexistent"))
row("rnnlib.data.load_abc_text", "type", "generator", lambda: rdata.load_abc_text(generator=0.5))
row("rnnlib.data.pad_sequences", "empty", "seqs", lambda: rdata.pad_sequences([]))
row("rnnlib.data.pad_sequences", "shape", "seqs", lambda: rdata.pad_sequences([np.ones((2, 3)), np.ones((2, 4))]))
row("rnnlib.data.pad_sequences", "nan", "seqs", lambda: rdata.pad_sequences([np.full((2, 3), math.nan)]))

T = "rnnlib.next_step.NextStepModel"
row(T, "malformed", "kind", lambda: nstep.NextStepModel("gru", 88, 4))
row(T, "malformed", "readout", lambda: nstep.NextStepModel("rnn", 88, 4, readout="gauss"))
tensor_rows(T, "x", torch.zeros(2, 3, 88), lambda v: NSM(v))
T = "rnnlib.next_step.Baseline"
row(T, "malformed", "readout", lambda: nstep.Baseline(88, readout="x", previous=True))
int_rows(T, "input_dim", lambda v: nstep.Baseline(v, readout="bernoulli", previous=True), low=2)
T = "rnnlib.next_step.frame_nll"
tensor_rows(T, "logits", LOG, lambda v: nstep.frame_nll(v, torch.ones(2, 3, 88)))
row(T, "shape", "targets", lambda: nstep.frame_nll(LOG, torch.ones(2, 3, 4)))
row(T, "malformed", "targets", lambda: nstep.frame_nll(LOG, torch.full((2, 3, 88), 0.5)))
row(T, "shape", "mask", lambda: nstep.frame_nll(LOG, torch.ones(2, 3, 88), torch.ones(2, 4, dtype=torch.bool)))
row(T, "empty", "mask", lambda: nstep.frame_nll(LOG, torch.ones(2, 3, 88), torch.zeros(2, 3, dtype=torch.bool)))
row(T, "malformed", "reduction", lambda: nstep.frame_nll(LOG, torch.ones(2, 3, 88), reduction="max"))
T = "rnnlib.next_step.bits_per_char"
tensor_rows(T, "logits", torch.zeros(2, 3, 5), lambda v: nstep.bits_per_char(v, torch.zeros(2, 3, dtype=torch.long)))
row(T, "dtype", "targets", lambda: nstep.bits_per_char(torch.zeros(2, 3, 5), torch.zeros(2, 3)))
row(T, "range", "targets", lambda: nstep.bits_per_char(torch.zeros(2, 3, 5), torch.full((2, 3), 5)))
row("rnnlib.next_step.next_step_batch", "empty", "seqs", lambda: nstep.next_step_batch([]))
row("rnnlib.next_step.next_step_batch", "shape", "seqs", lambda: nstep.next_step_batch([np.ones((1, 88))]))
T = "rnnlib.next_step.evaluate"
row(T, "type", "model", lambda: nstep.evaluate(RNN, ROLLS))
row(T, "empty", "seqs", lambda: nstep.evaluate(NSM, []))
int_rows(T, "k", lambda v: nstep.evaluate(NSM, ROLLS, k=v), low=1)
T = "rnnlib.next_step.truncated_curve"
row(T, "type", "model", lambda: nstep.truncated_curve(RNN, ROLLS, [1]))
row(T, "empty", "ks", lambda: nstep.truncated_curve(NSM, ROLLS, []))
row(T, "range", "k", lambda: nstep.truncated_curve(NSM, ROLLS, [0]))
T = "rnnlib.next_step.fit_baseline"
row(T, "malformed", "readout", lambda: nstep.fit_baseline(ROLLS, readout="x", input_dim=88, previous=False))
row(T, "shape", "input_dim", lambda: nstep.fit_baseline(ROLLS, readout="bernoulli", input_dim=12, previous=False))
row(T, "range", "input_dim", lambda: nstep.fit_baseline(CODES, readout="categorical", input_dim=2, previous=True))
T = "rnnlib.next_step.local_jacobian_norms"
row(T, "type", "model", lambda: nstep.local_jacobian_norms(RNN, ROLLS))
row(T, "empty", "seqs", lambda: nstep.local_jacobian_norms(NSM, []))
row(T, "malformed", "ord", lambda: nstep.local_jacobian_norms(NSM, ROLLS, ord=1))
T = "rnnlib.next_step.multi_step_jacobian_norms"
row(T, "type", "model", lambda: nstep.multi_step_jacobian_norms(RNN, ROLLS, 2))
T = "rnnlib.next_step.contraction_summary"
row(T, "empty", "norms", lambda: nstep.contraction_summary(np.zeros(0)))
row(T, "nan", "norms", lambda: nstep.contraction_summary(np.array([0.5, math.nan])))
row(T, "range", "worst_case", lambda: nstep.contraction_summary(np.array([0.5]), 0.0))
T = "rnnlib.next_step.results_table"
row(T, "empty", "columns", lambda: nstep.results_table({}))
row(T, "type", "columns", lambda: nstep.results_table({"music": [1.0]}))
row(T, "nan", "columns", lambda: nstep.results_table({"music": {"rnn": math.nan}}))
row(T, "malformed", "fmt", lambda: nstep.results_table({"music": {"rnn": 1.0}}, fmt="latex"))

T = "rnnlib.next_step.train_next_step"
row(T, "type", "model", lambda: nstep.train_next_step(RNN, ROLLS, steps=1, progress=False))
row(T, "empty", "train", lambda: nstep.train_next_step(NSM, [], steps=1, progress=False))
row(T, "range", "train", lambda: nstep.train_next_step(NSM, [ROLLS[0][:1]], steps=1, progress=False), note="a 1-step sequence")
row(T, "malformed", "train", lambda: nstep.train_next_step(NSM, [2 * ROLLS[0]], steps=1, progress=False), note="not binary")
row(T, "malformed", "optimizer", lambda: nstep.train_next_step(NSM, ROLLS, steps=1, optimizer="lbfgs", progress=False))
row(T, "type", "keep_best", lambda: nstep.train_next_step(NSM, ROLLS, steps=1, keep_best=1, progress=False))
T = "rnnlib.next_step.train_next_step"
row(T, "malformed", "projection", lambda: nstep.train_next_step(NSM, ROLLS, steps=1, projection="rows", progress=False))
row(T, "range", "patience", lambda: nstep.train_next_step(NSM, ROLLS, ROLLS, steps=1, patience=0, progress=False))
row(T, "malformed", "patience", lambda: nstep.train_next_step(NSM, ROLLS, None, steps=1, patience=2, progress=False), note="no valid split")
row("rnnlib.next_step.truncation_excess", "type", "model", lambda: nstep.truncation_excess("rnn", ROLLS, 2))
row("rnnlib.next_step.truncation_excess", "range", "k", lambda: nstep.truncation_excess(NSM, ROLLS, 0))
row("rnnlib.next_step.truncation_excess", "empty", "seqs", lambda: nstep.truncation_excess(NSM, [], 2))
row("rnnlib.next_step.forget_gates", "type", "model", lambda: nstep.forget_gates(NSM, ROLLS))
row("rnnlib.next_step.forget_gates", "empty", "seqs", lambda: nstep.forget_gates(nstep.NextStepModel("lstm", 88, 4), []))
row("rnnlib.stability.rescale_lstm_columns_", "type", "model", lambda: stability.rescale_lstm_columns_(NSM))
T = "rnnlib.experiments.ch11.train_stable_and_unstable"
row(T, "malformed", "stable", lambda: exp11.train_stable_and_unstable("rnn", ROLLS, input_dim=88, hidden_dim=4, steps=1, stable=True))
row(T, "malformed", "kind", lambda: exp11.train_stable_and_unstable("gru", ROLLS, input_dim=88, hidden_dim=4, steps=1))

for (name, call, arg, kind) in (
    ("plot_truncated_nll", lambda: plotting.plot_truncated_nll([1, 2], {"rnn": np.ones(3)}, {"rnn": 1.0}), "curves", "shape"),
    ("plot_truncated_nll", lambda: plotting.plot_truncated_nll([1, 2], {"rnn": NAN}, {"rnn": 1.0}), "curves", "nan"),
    ("plot_truncated_nll", lambda: plotting.plot_truncated_nll([1, 2], {"rnn": np.ones(2)}, {}), "full", "empty"),
    ("plot_validation_curves", lambda: plotting.plot_validation_curves({}, {}), "curves", "empty"),
    ("plot_validation_curves", lambda: plotting.plot_validation_curves({"rnn": ([1, 2], [1.0])}, {}), "curves", "shape"),
    ("plot_price_of_stability", lambda: plotting.plot_price_of_stability([0.5, 1.5], [1.0, 1.0], [0.0, 0.0], [0.9, 0.9]), "f_max", "range"),
    ("plot_price_of_stability", lambda: plotting.plot_price_of_stability([0.5, 0.6], [1.0], [0.0, 0.0], [0.9, 0.9]), "test", "shape"),
    ("plot_local_contraction", lambda: plotting.plot_local_contraction({}), "norms", "empty"),
    ("plot_local_contraction", lambda: plotting.plot_local_contraction({"rnn": NAN}), "norms", "nan"),
    ("plot_local_contraction", lambda: plotting.plot_local_contraction({"rnn": np.ones(3)}, {"rnn": -1.0}), "worst_case", "range"),
):
    row(f"rnnlib.plotting.{name}", kind, arg, call)
# --- rnnlib.train -------------------------------------------------------------------------------

from rnnlib import ntk, train  # noqa: E402

Y1 = torch.randn(B, 1, generator=torch.Generator().manual_seed(11))
for (T, fn) in (
    ("rnnlib.train.train_rnn", train.train_rnn),
    ("rnnlib.train.train_pseudo", train.train_pseudo),
    ("rnnlib.train.train_pair", train.train_pair),
):
    kw = dict(out_scale=0.5, lr=0.01, steps=2)
    row(T, "type", "model", lambda fn=fn: fn("model", X, Y1, **kw))
    tensor_rows(T, "x", X, lambda v, fn=fn: fn(ELMAN, v, Y1, **kw), skip=("empty",))
    tensor_rows(T, "y", Y1, lambda v, fn=fn: fn(ELMAN, X, v, **kw), skip=("empty",))
    row(T, "range", "batch_size", lambda fn=fn: fn(ELMAN, X, Y1, **kw, batch_size=B + 1))
    row(T, "malformed", "loss", lambda fn=fn: fn(ELMAN, X, Y1, **kw, loss="hinge"))
    row(T, "malformed", "y", lambda fn=fn: fn(ELMAN, X, Y1, **kw, loss="logistic"), note="signs")
    row(T, "malformed", "y_eval", lambda fn=fn: fn(ELMAN, X, Y1, **kw, x_eval=X), note="alone")
    row(T, "shape", "y_eval", lambda fn=fn: fn(ELMAN, X, Y1, **kw, x_eval=X, y_eval=Y1[:1]))
    row(T, "dtype", "x", lambda fn=fn: fn(ELMAN, X.double(), Y1, **kw), note="float64")
T = "rnnlib.train.predict"
row(T, "type", "model", lambda: train.predict(None, X, 1.0))
tensor_rows(T, "x", X, lambda v: train.predict(ELMAN, v, 1.0))
T = "rnnlib.train.objective"
tensor_rows(T, "z", Y1, lambda v: train.objective(v, Y1))
tensor_rows(T, "y", Y1, lambda v: train.objective(Y1, v))
row(T, "malformed", "loss", lambda: train.objective(Y1, Y1, "hinge"))
T = "rnnlib.ntk.tangent_kernel"
row(T, "type", "model", lambda: ntk.tangent_kernel("m", X))
tensor_rows(T, "x", X, lambda v: ntk.tangent_kernel(ELMAN, v))
tensor_rows(T, "x2", X, lambda v: ntk.tangent_kernel(ELMAN, X, v))
row(T, "malformed", "output_dim", lambda: ntk.tangent_kernel(elman.ElmanRNN(D, M, 2), X))
T = "rnnlib.ntk.kernel_ridge"
KT = torch.eye(B)
tensor_rows(T, "K", KT, lambda v: ntk.kernel_ridge(v, Y1, 0.1))
tensor_rows(T, "y", Y1, lambda v: ntk.kernel_ridge(KT, v, 0.1), skip=("shape",))
row(T, "shape", "y", lambda: ntk.kernel_ridge(KT, Y1[:1], 0.1))

T = "rnnlib.train.sgd_order"
row(T, "range", "n", lambda: train.sgd_order(0, 3))
row(T, "type", "generator", lambda: train.sgd_order(3, 3, 1, "seed"))
T = "rnnlib.ntk.kernel_sgd"
_O3 = torch.tensor([0, 1])
tensor_rows(T, "K", KT, lambda v: ntk.kernel_sgd(v, Y1, _O3, lr=0.1))
tensor_rows(T, "y", Y1, lambda v: ntk.kernel_sgd(KT, v, _O3, lr=0.1))
tensor_rows(T, "K_eval", KT, lambda v: ntk.kernel_sgd(KT, Y1, _O3, lr=0.1, K_eval=v))
tensor_rows(T, "f0", Y1, lambda v: ntk.kernel_sgd(KT, Y1, _O3, lr=0.1, f0=v))
tensor_rows(T, "f0_eval", Y1, lambda v: ntk.kernel_sgd(KT, Y1, _O3, lr=0.1, K_eval=KT, f0_eval=v))
row(T, "type", "order", lambda: ntk.kernel_sgd(KT, Y1, [0, 1], lr=0.1))
row(T, "malformed", "order", lambda: ntk.kernel_sgd(KT, Y1, _O3 + B, lr=0.1))
row(T, "malformed", "f0_eval", lambda: ntk.kernel_sgd(KT, Y1, _O3, lr=0.1, f0_eval=Y1), note="needs K_eval")
row(T, "malformed", "y", lambda: ntk.kernel_sgd(KT, Y1, _O3, lr=0.1, loss="logistic"), note="labels")
T = "rnnlib.ntk.tangent_kernel_diag"
row(T, "type", "model", lambda: ntk.tangent_kernel_diag("m", X))
tensor_rows(T, "x", X, lambda v: ntk.tangent_kernel_diag(ELMAN, v))
row(T, "malformed", "output_dim", lambda: ntk.tangent_kernel_diag(elman.ElmanRNN(D, M, 2), X))
T = "rnnlib.ntk.kernel_reference"
row(T, "type", "model", lambda: ntk.kernel_reference(None, X, Y1, X, out_scale=1.0, ridge=0.1))
tensor_rows(T, "x", X, lambda v: ntk.kernel_reference(ELMAN, v, Y1, X, out_scale=1.0, ridge=0.1), skip=("empty",))
tensor_rows(T, "x_eval", X, lambda v: ntk.kernel_reference(ELMAN, X, Y1, v, out_scale=1.0, ridge=0.1))
row(T, "type", "return_weights", lambda: ntk.kernel_reference(ELMAN, X, Y1, X, out_scale=1.0, ridge=0.1, return_weights=1))
row("rnnlib.train.train_pair", "type", "comparator", lambda: train.train_pair(ELMAN, X, Y1, out_scale=0.5, lr=0.01, steps=2, comparator=1.0))
row("rnnlib.train.train_pair", "shape", "comparator[1]", lambda: train.train_pair(ELMAN, X, Y1, out_scale=0.5, lr=0.01, steps=2, comparator=(torch.zeros(M, M), torch.zeros(M, 2))))
row("rnnlib.train.train_rnn", "type", "comparator", lambda: train.train_rnn(ELMAN, X, Y1, out_scale=0.5, lr=0.01, steps=2, comparator=1.0))
row("rnnlib.train.train_rnn", "shape", "comparator[1]", lambda: train.train_rnn(ELMAN, X, Y1, out_scale=0.5, lr=0.01, steps=2, comparator=(torch.zeros(M, M), torch.zeros(M, 2))))
T = "rnnlib.train.convexity_gap"
TH = (torch.zeros(M, M), torch.zeros(M, D))
row(T, "type", "model", lambda: train.convexity_gap(None, TH, TH, X, out_scale=1.0))
row(T, "type", "theta", lambda: train.convexity_gap(ELMAN, 1.0, TH, X, out_scale=1.0))
row(T, "shape", "theta_star[0]", lambda: train.convexity_gap(ELMAN, TH, (torch.zeros(3, 3), TH[1]), X, out_scale=1.0))
tensor_rows(T, "x", X, lambda v: train.convexity_gap(ELMAN, TH, TH, v, out_scale=1.0))

# chapters 5-6 figures (rnnlib.plotting.chapter05, chapter06)
from rnnlib.experiments import ch05 as exp05  # noqa: E402

_NAN_GRID = ("rel_move", "spec_move", "flip_fraction", "coupling_relative", "pair_relative", "eval_rnn", "init_eval")
_G = object.__new__(exp05.LazyGrid)  # a grid with only the fields the figure reads before the NaN
for _k, _v in dict(widths=np.array([8, 16]), out_scales=np.array([1.0]), seeds=np.array([0]), **{k: np.array([[[0.1, math.nan]]]) for k in _NAN_GRID}).items():
    object.__setattr__(_G, _k, _v)
row("rnnlib.plotting.plot_laziness", "type", "grid", lambda: plotting.plot_laziness("grid"))
row("rnnlib.plotting.plot_laziness", "nan", "grid", lambda: plotting.plot_laziness(_G))
row("rnnlib.plotting.plot_out_scale", "type", "grid", lambda: plotting.plot_out_scale(None))
row("rnnlib.plotting.plot_pair", "type", "pair", lambda: plotting.plot_pair(None))
row("rnnlib.plotting.plot_gap_vs_n", "empty", "runs", lambda: plotting.plot_gap_vs_n([]))
row("rnnlib.plotting.plot_gap_vs_n", "type", "runs", lambda: plotting.plot_gap_vs_n(["run"]))
row("rnnlib.plotting.plot_complexity_vs_width", "empty", "runs", lambda: plotting.plot_complexity_vs_width([]))
row("rnnlib.plotting.plot_walsh_spectrum", "type", "spectrum", lambda: plotting.plot_walsh_spectrum(None))
row("rnnlib.plotting.plot_learnability_atlas", "type", "atlas", lambda: plotting.plot_learnability_atlas(None, 0.5))
row("rnnlib.ntk.sample_constant", "shape", "K", lambda: ntk.sample_constant(torch.eye(3, 2, dtype=torch.float64), torch.ones(3, dtype=torch.float64)))
row("rnnlib.ntk.sample_constant", "shape", "f", lambda: ntk.sample_constant(torch.eye(3, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
row("rnnlib.ntk.sample_constant", "malformed", "K", lambda: ntk.sample_constant(-torch.eye(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)), note="not positive definite")
row("rnnlib.plotting.plot_gap_vs_width_record", "type", "gaps", lambda: plotting.plot_gap_vs_width_record([8, 16], [1.0], {}))
row("rnnlib.plotting.plot_gap_vs_width_record", "malformed", "errors", lambda: plotting.plot_gap_vs_width_record([8, 16], {"a": np.ones((2, 2))}, {"b": np.ones((2, 2))}))
row("rnnlib.plotting.plot_gap_vs_width_record", "range", "limit_gap", lambda: plotting.plot_gap_vs_width_record([8, 16], {"a": np.ones((2, 2))}, {"a": np.ones((2, 2))}, limit_gap=-1.0))

# --- rnnlib.generalization ----------------------------------------------------------------------

from rnnlib import generalization  # noqa: E402
from rnnlib.experiments import ch06 as exp06  # noqa: E402

T = "rnnlib.generalization.rademacher_bound"
KD = torch.ones(B)
tensor_rows(T, "K_diag", KD, lambda v: generalization.rademacher_bound(v, out_scale=1.0, norm=1.0))
row(T, "range", "K_diag", lambda: generalization.rademacher_bound(-KD, out_scale=1.0, norm=1.0))
T = "rnnlib.generalization.empirical_rademacher"
tensor_rows(T, "K", torch.eye(B), lambda v: generalization.empirical_rademacher(v, out_scale=1.0, norm=1.0))
T = "rnnlib.experiments.ch06.generalization_run"
GR = dict(L=5, d=4, eps_x=0.5, n_pool=10, n_test=4, out_scale=0.5, epochs=1)
int_rows(T, "n_pool", lambda v: exp06.generalization_run(4, 8, 0, **{**GR, "n_pool": v}), low=4)
T = "rnnlib.experiments.ch06.theorem_terms"
TT = dict(L=5, d=4, eps_x=0.5, n=6, n_test=4, out_scale=0.5, steps=3)
row(T, "range", "n_logs", lambda: exp06.theorem_terms(8, 0, n_logs=4, **TT))
row("rnnlib.plotting.plot_theorem_terms", "empty", "runs", lambda: plotting.plot_theorem_terms([]))
row("rnnlib.plotting.plot_theorem_terms", "type", "runs", lambda: plotting.plot_theorem_terms([1.0]))

# --- rnnlib.recognizers (and the figures of chapter 7) ----------------------------------------------

from rnnlib import recognizers  # noqa: E402
from rnnlib.experiments import ch07 as exp07  # noqa: E402

SPLIT = languages.language_dataset("dl1", 40, 4, min_length=1, generator=0)
T = "rnnlib.recognizers.train_wide_rnn"
row(T, "type", "split", lambda: recognizers.train_wide_rnn((ZP, ZP), 8))
T = "rnnlib.recognizers.PracticalRNN"
row(T, "malformed", "z", lambda: recognizers.PracticalRNN(4)(torch.tensor([[0, 2]])))
row(T, "dtype", "z", lambda: recognizers.PracticalRNN(4)(ZP.float()))
T = "rnnlib.recognizers.train_practical_rnn"
row(T, "type", "split", lambda: recognizers.train_practical_rnn(None))
row("rnnlib.recognizers.additive_baseline", "type", "split", lambda: recognizers.additive_baseline(ZP))
row("rnnlib.recognizers.token_codes", "malformed", "z", lambda: recognizers.token_codes(torch.tensor([[0, 3, 1, 1]])))
row("rnnlib.recognizers.Recognition", "malformed", "z", lambda: recognizers.additive_baseline(SPLIT).accuracy(torch.tensor([[0, 3, 1, 1]]), torch.ones(1)))
T = "rnnlib.experiments.ch07.run_learners"
row(T, "malformed", "name", lambda: exp07.run_learners("dyck", 4, widths=[]))
row(T, "type", "widths", lambda: exp07.run_learners("dl1", 4, widths=8, hidden=None))
T = "rnnlib.experiments.ch07.learnability_atlas"
row(T, "malformed", "languages[i]", lambda: exp07.learnability_atlas(["dyck"], [4, 6], [0.5]))
row(T, "type", "languages[i]", lambda: exp07.learnability_atlas([3], [4, 6], [0.5]))
row(T, "range", "lengths", lambda: exp07.learnability_atlas(["dl1"], [4, 13], [0.5]), note="a 2^13 kernel")
row(T, "range", "eps_values[i]", lambda: exp07.learnability_atlas(["dl1"], [4, 6], [0.0]))
row(T, "empty", "lengths", lambda: exp07.learnability_atlas(["dl1"], [4], [0.5]), note="one length: no slope")
row(T, "range", "widths", lambda: exp07.run_learners("dl1", 4, widths=[0], hidden=None))
row(T, "range", "hidden", lambda: exp07.run_learners("dl1", 4, widths=[], hidden=0))
row(T, "type", "wide_kwargs", lambda: exp07.run_learners("dl1", 4, widths=[], hidden=None, wide_kwargs=[1]))
int_rows(T, "min_length", lambda v: exp07.run_learners("dl1", 4, widths=[], hidden=None, min_length=v), low=1)
T = "rnnlib.experiments.ch07.language_task"
row(T, "range", "n_train", lambda: exp07.language_task("parity", 3, 6, 4, eps_x=0.5, generator=0), note="more than 2^n strings")
T = "rnnlib.experiments.ch07.accuracy_table"
row(T, "empty", "languages", lambda: exp07.accuracy_table([], [4]))
row(T, "empty", "lengths", lambda: exp07.accuracy_table(["dl1"], []))
row(T, "range", "lengths", lambda: exp07.accuracy_table(["dl1"], [0]))
row(T, "malformed", "name", lambda: exp07.accuracy_table(["tomita0"], [4]))
T = "rnnlib.experiments.ch07.length_generalization"
row(T, "type", "runs", lambda: exp07.length_generalization(SPLIT, 8))
RUNS = exp07.run_learners("dl1", 4, widths=[], hidden=None, n_samples=40)

for (name, call, arg, kind) in (
    ("plot_learner_accuracy", lambda: plotting.plot_learner_accuracy({}, 0.5), "accuracies", "empty"),
    ("plot_learner_accuracy", lambda: plotting.plot_learner_accuracy({"a": math.nan}, 0.5), "accuracies", "nan"),
    ("plot_learner_accuracy", lambda: plotting.plot_learner_accuracy([0.5], 0.5), "accuracies", "type"),
    ("plot_eps_effect", lambda: plotting.plot_eps_effect([0.1, 1.0], np.ones((2, 3)), 0.5), "accuracies", "shape"),
    ("plot_eps_effect", lambda: plotting.plot_eps_effect([0.1], np.ones(1), 0.5), "accuracies", "malformed"),
    ("plot_length_sweep", lambda: plotting.plot_length_sweep([4, 8], {"a": [1.0]}, [0.5, 0.5]), "accuracies", "shape"),
    ("plot_length_sweep", lambda: plotting.plot_length_sweep([4, 8], {"a": [1.0, 1.0]}, [0.5]), "baselines", "shape"),
    ("plot_representation_complexity", lambda: plotting.plot_representation_complexity([4, 8], {"a": [1.0, NAN]}, 1.0), "log10_cs", "type"),
    ("plot_representation_complexity", lambda: plotting.plot_representation_complexity([4, 8], {}, 1.0), "log10_cs", "empty"),
    ("plot_accuracy_grid", lambda: plotting.plot_accuracy_grid(["a"], ["b"], {"t": np.ones((2, 1))}), "tables", "shape"),
    ("plot_accuracy_grid", lambda: plotting.plot_accuracy_grid(["a"], ["b"], []), "tables", "type"),
    ("plot_kernel_curves", lambda: plotting.plot_kernel_curves([]), "curves", "type"),
):
    row(f"rnnlib.plotting.{name}", kind, arg, call)


# --- rnnlib.claims ------------------------------------------------------------------------------

T = "rnnlib.ntk.limit_tangent_kernel"
tensor_rows(T, "x", X, lambda v: ntk.limit_tangent_kernel(v))
tensor_rows(T, "x2", X, lambda v: ntk.limit_tangent_kernel(X, v))
row(T, "shape", "x2", lambda: ntk.limit_tangent_kernel(X, X[:, :-1]))
T = "rnnlib.ntk.limit_hidden_covariance"
tensor_rows(T, "x", X, lambda v: ntk.limit_hidden_covariance(v))
tensor_rows(T, "x2", X, lambda v: ntk.limit_hidden_covariance(X, v))
T = "rnnlib.ntk.cross_time_fraction"
row(T, "type", "model", lambda: ntk.cross_time_fraction("m", X))
tensor_rows(T, "x", X, lambda v: ntk.cross_time_fraction(ELMAN, v))
row(T, "malformed", "output_dim", lambda: ntk.cross_time_fraction(elman.ElmanRNN(D, M, 2), X))

T = "rnnlib.experiments.ch07.limit_kernel_curve"
row(T, "type", "language", lambda: exp07.limit_kernel_curve(3, 8, [20]))
row(T, "malformed", "language", lambda: exp07.limit_kernel_curve("nope", 8, [20]))
int_rows(T, "n", lambda v: exp07.limit_kernel_curve("dl1", v, [20]), low=2)
int_rows(T, "seeds", lambda v: exp07.limit_kernel_curve("dl1", 8, [20], seeds=v), low=1)
row(T, "empty", "sizes", lambda: exp07.limit_kernel_curve("dl1", 8, []))
real_rows(T, "eps_x", lambda v: exp07.limit_kernel_curve("dl1", 8, [20], eps_x=v), bad=(0.0, 1.5))
T = "rnnlib.experiments.ch07.draw_strings"
int_rows(T, "n_samples", lambda v: exp07.draw_strings("dl1", v, 8, generator=0), low=2)
int_rows(T, "n", lambda v: exp07.draw_strings("dl1", 10, v, generator=0), low=2)

_Z7 = torch.tensor([[0, 1], [1, 0], [1, 1], [0, 0]] * 3)
SPLIT7 = languages.held_out_split(_Z7, languages.get_language("dl1")(_Z7), generator=0)
_ONE_ARG_SPLIT = {
    "distinct_test": exp07.distinct_test,
    "count_rule": exp07.count_rule,
    "additive_logistic": exp07.additive_logistic,
    "nearest_neighbour": exp07.nearest_neighbour,
    "neighbour_coverage": exp07.neighbour_coverage,
    "kernel_learner": exp07.kernel_learner,
    "subset_rule": exp07.subset_rule,
    "memorizer": exp07.memorizer,
}
for (_name, _fn) in _ONE_ARG_SPLIT.items():
    row(f"rnnlib.experiments.ch07.{_name}", "type", "split", lambda _fn=_fn: _fn(_Z7))
T = "rnnlib.experiments.ch07.unseen_mask"
row(T, "type", "split", lambda: exp07.unseen_mask(None, _Z7))
row(T, "malformed", "z", lambda: exp07.unseen_mask(SPLIT7, torch.zeros(2, 5, dtype=torch.int64)))
T = "rnnlib.experiments.ch07.best_constant"
row(T, "type", "y", lambda: exp07.best_constant([0, 1]))
row(T, "empty", "y", lambda: exp07.best_constant(torch.zeros(0)))
T = "rnnlib.experiments.ch07.additive_logistic"
real_rows(T, "ridge", lambda v: exp07.additive_logistic(SPLIT7, ridge=v), bad=(0.0, -1.0))
T = "rnnlib.experiments.ch07.lazy_step"
row(T, "type", "split", lambda: exp07.lazy_step(_Z7, 8))
int_rows(T, "width", lambda v: exp07.lazy_step(SPLIT7, v), low=1)
real_rows(T, "out_scale", lambda v: exp07.lazy_step(SPLIT7, 8, out_scale=v), bad=(0.0, -1.0))
T = "rnnlib.experiments.ch07.score_learner"
row(T, "type", "split", lambda: exp07.score_learner("x", "", lambda z: z[:, 0].float(), _Z7, (_Z7, _Z7[:, 0])))
T = "rnnlib.experiments.ch07.compare_learners"
row(T, "type", "split", lambda: exp07.compare_learners(_Z7, (_Z7, _Z7[:, 0])))
row(T, "malformed", "learners", lambda: exp07.compare_learners(SPLIT7, (_Z7, _Z7[:, 0]), learners=["svm"]))
int_rows("rnnlib.experiments.ch07.pattern_count_neuron", "k", lambda v: exp07.pattern_count_neuron(v), low=1)
real_rows("rnnlib.experiments.ch07.pattern_count_complexity", "R", lambda v: exp07.pattern_count_complexity(3, v), bad=(0.0, -1.0))
row("rnnlib.experiments.ch07.pattern_count_target", "malformed", "pattern", lambda: exp07.pattern_count_target(8, "12"))
T = "rnnlib.experiments.ch07.memorized_share"
row(T, "type", "split", lambda: exp07.memorized_share(None, _Z7))
row(T, "malformed", "z", lambda: exp07.memorized_share(SPLIT7, torch.zeros(2, 5, dtype=torch.int64)))
T = "rnnlib.experiments.ch07.memorizer"
row(T, "type", "fallback", lambda: exp07.memorizer(SPLIT7, fallback=0.5))
row("rnnlib.experiments.ch07.subset_rule_accuracy", "range", "k", lambda: exp07.subset_rule_accuracy(4, 5))
T = "rnnlib.experiments.ch07.mean_scores"
row(T, "empty", "runs", lambda: exp07.mean_scores([]))
int_rows("rnnlib.experiments.ch07.draw_strings", "min_length", lambda v: exp07.draw_strings("dl1", 10, 8, min_length=v, generator=0), low=1)

from rnnlib.experiments import ch05 as exp05  # noqa: E402

_X5 = torch.rand(3, 4, 5, generator=torch.Generator().manual_seed(0))
_Y5 = torch.rand(3, 1, generator=torch.Generator().manual_seed(1))
T = "rnnlib.experiments.ch05.kernel_convergence"
tensor_rows(T, "x", _X5, lambda v: exp05.kernel_convergence(v, [8], [1]), skip=("dtype",))
row(T, "empty", "widths", lambda: exp05.kernel_convergence(_X5, [], []))
row(T, "shape", "draws", lambda: exp05.kernel_convergence(_X5, [8, 16], [1]))
int_rows(T, "widths[i]", lambda v: exp05.kernel_convergence(_X5, [v], [1]), low=2)
T = "rnnlib.experiments.ch05.lazy_grid"
LG = dict(L=5, d=4, eps_x=0.5, n_train=4, n_eval=2, steps=2)
int_rows(T, "widths[i]", lambda v: exp05.lazy_grid([v], [1.0], [0], **LG), low=1)
real_rows(T, "out_scales[i]", lambda v: exp05.lazy_grid([8], [v], [0], **LG), bad=(0.0,))
int_rows(T, "seeds[i]", lambda v: exp05.lazy_grid([8], [1.0], [v], **LG), low=0)
T = "rnnlib.experiments.ch05.rnn_sweep"
int_rows(T, "widths[i]", lambda v: exp05.rnn_sweep([v], [0], out_scale=1.0, **LG), low=1)
int_rows(T, "seeds[i]", lambda v: exp05.rnn_sweep([8], [v], out_scale=1.0, **LG), low=0)
real_rows(T, "out_scale", lambda v: exp05.rnn_sweep([8], [0], out_scale=v, **LG), bad=(0.0,))
row(T, "empty", "widths", lambda: exp05.rnn_sweep([], [0], out_scale=1.0, **LG))
T = "rnnlib.experiments.ch05.limit_kernel_reference"
tensor_rows(T, "x", _X5, lambda v: exp05.limit_kernel_reference(v, _Y5, _X5, ridge=0.1), skip=("dtype",))
row(T, "shape", "y", lambda: exp05.limit_kernel_reference(_X5, _Y5[:2], _X5, ridge=0.1))
real_rows(T, "ridge", lambda v: exp05.limit_kernel_reference(_X5, _Y5, _X5, ridge=v), bad=(0.0, -1.0))
row(T, "type", "offset", lambda: exp05.limit_kernel_reference(_X5, _Y5, _X5, ridge=0.1, offset=[_Y5, _Y5]))
T = "rnnlib.experiments.ch05.limit_reference_sweep"
_SW = dict(L=3, d=4, eps_x=0.5, n_train=4, n_eval=4, out_scale=0.5, steps=5)
row(T, "empty", "widths", lambda: exp05.limit_reference_sweep([], [0], **_SW))
int_rows(T, "seeds[i]", lambda v: exp05.limit_reference_sweep([8], [v], **_SW), low=0)
real_rows(T, "out_scale", lambda v: exp05.limit_reference_sweep([8], [0], **{**_SW, "out_scale": v}), bad=(0.0,))
T = "rnnlib.experiments.ch05.limit_convergence"
row(T, "malformed", "widths", lambda: exp05.limit_convergence([7], [0], **_SW), note="even")
int_rows(T, "seeds[i]", lambda v: exp05.limit_convergence([8], [v], **_SW), low=0)
T = "rnnlib.experiments.ch06.limit_generalization_curve"
_LC = dict(L=3, d=4, eps_x=0.5, n_test=5)
row(T, "empty", "ns", lambda: exp06.limit_generalization_curve([], 0, **_LC))
int_rows(T, "ns[i]", lambda v: exp06.limit_generalization_curve([v], 0, **_LC), low=2)
int_rows(T, "n_test", lambda v: exp06.limit_generalization_curve([10], 0, **{**_LC, "n_test": v}), low=1)
real_rows(T, "epochs", lambda v: exp06.limit_generalization_curve([10], 0, epochs=v, **_LC), bad=(0.0,))
row(T, "malformed", "ns", lambda: exp06.limit_generalization_curve([10], 0, gram_size=5, **_LC))
row("rnnlib.plotting.plot_kernel_convergence", "type", "conv", lambda: plotting.plot_kernel_convergence(None))
row("rnnlib.plotting.plot_limit_convergence", "type", "doubled", lambda: plotting.plot_limit_convergence(None, None))
row("rnnlib.plotting.plot_limit_bound", "empty", "passes", lambda: plotting.plot_limit_bound([], []))
row("rnnlib.plotting.plot_limit_bound", "type", "fixed", lambda: plotting.plot_limit_bound([exp06.LimitRun(2, 1, 0, 0, 0, 0, 0, 0, 0, 1.0, 2, 2)], ["run"]))

row("rnnlib.experiments.ch11.train_models", "type", "music", lambda: exp11.train_models(None, generator=0))
row("rnnlib.experiments.ch11.train_models", "malformed", "device", lambda: exp11.train_models(rdata.load_jsb(), generator=0, device="gpu0"))
row("rnnlib.experiments.ch11.train_variant", "malformed", "name", lambda: exp11.train_variant("gru", ROLLS, None, generator=0, input_dim=88, hidden_dim=4, steps=1))
row("rnnlib.experiments.ch11.train_variant", "range", "generator", lambda: exp11.train_variant("rnn stable", ROLLS, None, generator=-1, input_dim=88, hidden_dim=4, steps=1))
row("rnnlib.experiments.ch11.measure_music", "type", "model", lambda: exp11.measure_music("rnn", ROLLS, ks=[1], jac_n=1, r_multi=1))
row("rnnlib.experiments.ch11.measure_music", "range", "jac_n", lambda: exp11.measure_music(NSM, ROLLS, ks=[1], jac_n=0, r_multi=1))
row("rnnlib.experiments.ch11.run_record", "type", "music", lambda: exp11.run_record(None, None))
row("rnnlib.experiments.ch11.run_record", "type", "text", lambda: exp11.run_record(rdata.load_jsb(), "abc"))
row("rnnlib.experiments.ch11.run_record", "type", "config", lambda: exp11.run_record(rdata.load_jsb(), None, [1]))
row("rnnlib.experiments.ch11.run_record", "malformed", "config", lambda: exp11.run_record(rdata.load_jsb(), None, {"seeds": [0]}))
row("rnnlib.experiments.ch11.fingerprint", "type", "music", lambda: exp11.fingerprint([], None))
row("rnnlib.experiments.ch11.make_record", "malformed", "path", lambda: exp11.make_record(None, smoke=True))
row("rnnlib.experiments.ch11.load_record", "type", "path", lambda: exp11.load_record(3))
row("rnnlib.experiments.ch11.check_record", "malformed", "record", lambda: exp11.check_record({}, rdata.load_jsb(), None))
row("rnnlib.experiments.ch11.paired", "shape", "a", lambda: exp11.paired([1.0, 2.0], [1.0]))
row("rnnlib.experiments.ch11.overlap", "malformed", "record", lambda: exp11.overlap({}, {}, 0))
row("rnnlib.experiments.ch11.overlap", "range", "generator", lambda: exp11.overlap({"results": {"music": {}}}, {}, -1))

row("rnnlib.experiments.ch11.seed_values", "malformed", "record", lambda: exp11.seed_values({}, "music", "rnn stable"))
row("rnnlib.experiments.ch11.seed_values", "malformed", "task", lambda: exp11.seed_values({"results": {}}, "speech", "rnn stable"))
row("rnnlib.experiments.ch11.sweep_values", "malformed", "record", lambda: exp11.sweep_values({}))

from rnnlib import records as rrec  # noqa: E402

row("rnnlib.records.record_path", "range", "chapter", lambda: rrec.record_path(0))
row("rnnlib.records.check_live_fingerprint", "malformed", "record", lambda: rrec.check_live_fingerprint({}, 6, lambda c: {}))
row("rnnlib.records.output_path", "malformed", "path", lambda: rrec.output_path(None, 6, smoke=True))
row("rnnlib.records.record_cli", "range", "chapter", lambda: rrec.record_cli(["--smoke"], chapter=0, make=lambda out, **kw: out, cost="seconds"))
row("rnnlib.experiments.ch07.walsh_spectrum", "range", "lengths", lambda: exp07.walsh_spectrum(["parity"], [4, 13], [0.5]))
row("rnnlib.experiments.ch07.walsh_spectrum", "malformed", "languages[i]", lambda: exp07.walsh_spectrum(["nope"], [4, 6], [0.5]))
row("rnnlib.experiments.ch05.against_limit", "type", "task", lambda: exp05.against_limit([1, 2], [8], 0, out_scale=0.5, steps=2))
row("rnnlib.experiments.ch05.against_limit", "malformed", "widths", lambda: exp05.against_limit(exp05.regression_task(3, 3, 0.5, 4, 4), [9], 0, out_scale=0.5, steps=2))
row("rnnlib.experiments.ch05.against_limit", "shape", "task.y", lambda: exp05.against_limit(exp05.RegressionTask(torch.ones(4, 3, 3), torch.ones(3, 1), torch.ones(2, 3, 3), torch.ones(2, 1)), [8], 0, out_scale=0.5, steps=2))
row("rnnlib.experiments.ch07.language_task", "range", "n_train", lambda: exp07.language_task("parity", 3, 6, 6, eps_x=0.5, generator=0))
row("rnnlib.experiments.ch07.language_task", "malformed", "language", lambda: exp07.language_task("nope", 3, 2, 2, eps_x=0.5, generator=0))
row("rnnlib.experiments.ch07.run_limit_record", "type", "config", lambda: exp07.run_limit_record([1]))
row("rnnlib.experiments.ch07.run_limit_record", "malformed", "config", lambda: exp07.run_limit_record({"seeds": [0]}))
row("rnnlib.experiments.ch07.limit_fingerprint", "malformed", "config['language']", lambda: exp07.limit_fingerprint({**exp07.RECORD, "language": "nope"}))
row("rnnlib.experiments.ch07.make_limit_record", "malformed", "path", lambda: exp07.make_limit_record(None, smoke=True))
row("rnnlib.experiments.ch07.check_limit_record", "malformed", "record", lambda: exp07.check_limit_record({}))
row("rnnlib.experiments.ch05.run_lazy_record", "type", "config", lambda: exp05.run_lazy_record([1]))
row("rnnlib.experiments.ch05.run_lazy_record", "malformed", "config", lambda: exp05.run_lazy_record({"seeds": [0]}))
row("rnnlib.experiments.ch05.lazy_fingerprint", "range", "config", lambda: exp05.lazy_fingerprint({**exp05.RECORD, "seeds": [-1]}))
row("rnnlib.experiments.ch05.make_lazy_record", "malformed", "path", lambda: exp05.make_lazy_record(None, smoke=True))
row("rnnlib.experiments.ch05.check_lazy_record", "malformed", "record", lambda: exp05.check_lazy_record({}))
row("rnnlib.experiments.ch05.recorded_sweep", "malformed", "record", lambda: exp05.recorded_sweep({"config": {}, "results": {}}))
row("rnnlib.experiments.ch05.recorded_limit", "type", "record", lambda: exp05.recorded_limit([], "iid"))
row("rnnlib.experiments.ch05.recorded_limit", "malformed", "init", lambda: exp05.recorded_limit({"config": {}, "results": {"limit": {}}}, "zero"))
row("rnnlib.experiments.ch06.run_width_record", "type", "config", lambda: exp06.run_width_record([1]))
row("rnnlib.experiments.ch06.run_width_record", "malformed", "config", lambda: exp06.run_width_record({"seeds": [0]}))
row("rnnlib.experiments.ch06.width_fingerprint", "malformed", "config", lambda: exp06.width_fingerprint({**exp06.RECORD, "initializations": ["zero"]}))
row("rnnlib.experiments.ch06.make_width_record", "malformed", "path", lambda: exp06.make_width_record(None, smoke=True))
row("rnnlib.experiments.ch06.check_width_record", "malformed", "record", lambda: exp06.check_width_record({}))
row("rnnlib.experiments.ch06.width_trends", "malformed", "record", lambda: exp06.width_trends({}))
row("rnnlib.experiments.ch06.width_trends", "malformed", "field", lambda: exp06.width_trends({"results": {}, "config": {}}, "loss"))
row("rnnlib.records.stale_message", "range", "chapter", lambda: rrec.stale_message(100))
row("rnnlib.records.provenance", "empty", "command", lambda: rrec.provenance("", device="cpu", wall_seconds=0, cpu_seconds=0))
row("rnnlib.records.provenance", "range", "wall_seconds", lambda: rrec.provenance("c", device="cpu", wall_seconds=math.nan, cpu_seconds=0))
row("rnnlib.records.write_record", "type", "path", lambda: rrec.write_record(3, config={}, results={}, fingerprint={}, provenance={}))
row("rnnlib.records.write_record", "type", "results", lambda: rrec.write_record("/tmp/x.json", config={}, results=[], fingerprint={}, provenance={}))
row("rnnlib.records.read_record", "type", "path", lambda: rrec.read_record(3))
row("rnnlib.records.fingerprint_difference", "type", "live", lambda: rrec.fingerprint_difference({}, [1.0]))
row("rnnlib.records.fingerprint_difference", "range", "rtol", lambda: rrec.fingerprint_difference({}, {}, rtol=-1.0))
row("rnnlib.records.check_fingerprint", "malformed", "record", lambda: rrec.check_fingerprint({}, {}, 11))
row("rnnlib.records.build_record", "range", "chapter", lambda: rrec.build_record(0, None, config={}, run=dict, fingerprint=dict, smoke=False))
row("rnnlib.records.build_record", "type", "run", lambda: rrec.build_record(6, "/tmp/x.json", config={}, run=3, fingerprint=dict, smoke=True))
row("rnnlib.records.provenance_line", "malformed", "record", lambda: rrec.provenance_line({}, 11))
row("rnnlib.experiments.ch11.inference_bound_at", "type", "model", lambda: exp11.inference_bound_at("rnn", [], 3))

from rnnlib import claims  # noqa: E402

T = "rnnlib.claims.Claim"
row(T, "malformed", "id", lambda: claims.Claim("two words", "P&G 2021", "Lemma 4.4", "paper", 4, "a claim"))
row(T, "malformed", "paper", lambda: claims.Claim("c", "P&G", "Lemma 4.4", "paper", 4, "a claim"))
row(T, "malformed", "kind", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "guess", 4, "a claim"))
row(T, "range", "chapter", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "paper", 12, "a claim"))
row(T, "empty", "text", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "paper", 4, " "))
row(T, "type", "closed_form", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "paper", 4, "a claim", "", 1))
row(T, "malformed", "untestable", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "paper", 0, "a claim"))
row(T, "malformed", "evidence", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "paper", 4, "a claim", evidence="pilot"))
row(T, "malformed", "evidence", lambda: claims.Claim("c", "P&G 2021", "Lemma 4.4", "paper", 0, "a claim", "no chapter", evidence="recorded"), note="recorded without a chapter")
row("rnnlib.claims.registry", "type", "path", lambda: claims.registry(3))
T = "rnnlib.claims.check"
row(T, "malformed", "verdict", lambda: claims.check("mh-word-level-lm", True, "1.0", verdict="fine"))
row(T, "empty", "figure", lambda: claims.check("mh-word-level-lm", True, ""))
row(T, "malformed", "verdict", lambda: claims.check("mh-word-level-lm", True, "1.0", verdict="checked (closed form)"), note="closed-form-verdict-for-a-measured-claim")
row(T, "type", "piloted", lambda: claims.check("mh-word-level-lm", True, "1.0", piloted="yes"))

# --- validators and draws made public so that no module imports another's private name ---------

T = "rnnlib.elman.check_true_sequence"
tensor_rows(T, "x_bar", XBAR, elman.check_true_sequence)
row(T, "malformed", "x_bar", lambda: elman.check_true_sequence(2 * XBAR), note="non-unit tokens")
T = "rnnlib.languages.check_strings"
row(T, "type", "z", lambda: languages.check_strings([[0, 1]]))
row(T, "shape", "z", lambda: languages.check_strings(Z[0]))
row(T, "malformed", "z", lambda: languages.check_strings(2 * Z), note="not binary")
T = "rnnlib.next_step.readout_loss"
row(T, "type", "model", lambda: nstep.readout_loss("rnn", LOG, torch.ones(2, 3, 88), torch.ones(2, 3, dtype=torch.bool)))
row(T, "shape", "targets", lambda: nstep.readout_loss(NSM, LOG, torch.ones(2, 3, 4), torch.ones(2, 3, dtype=torch.bool)))


# fmt: on


# --- names with nothing to validate -------------------------------------------------------------

NO_ARGUMENTS_TO_VALIDATE = {
    "rnnlib.claims.strict": "no arguments; reads the environment",
    "rnnlib.claims.registry_path": "no arguments; looks for the registry file",
    "rnnlib.languages.language_names": "takes no arguments",
    "rnnlib.plotting.use_book_style": "takes no arguments",
    "rnnlib.plotting.Table": "built by html_table, which validates",
    "rnnlib.data.load_jsb": "takes no arguments; reads the shipped file",
    "rnnlib.records.git_commit": "takes no arguments; asks git",
}


def public_names() -> dict[str, object]:
    """``module.name -> object`` for every name in ``__all__`` of every rnnlib module and subpackage module.

    ``benchmarks/validation_lines.py`` counts the declared share over these names too.
    """
    modules = ["rnnlib"] + [
        f"rnnlib.{m.name}"
        for m in pkgutil.iter_modules(rnnlib.__path__)
        if not m.name.startswith("_")
    ]
    out: dict[str, object] = {}
    for modname in modules:
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        assert names is not None, f"{modname} has no __all__ (list its public names)"
        for name in names:
            out[f"{modname}.{name}"] = getattr(module, name)
        if hasattr(module, "__path__"):  # a subpackage: its public modules too
            for sub in pkgutil.iter_modules(module.__path__):
                if not sub.name.startswith("_"):
                    submodule = importlib.import_module(f"{modname}.{sub.name}")
                    for name in getattr(submodule, "__all__", []):
                        out[f"{modname}.{sub.name}.{name}"] = getattr(submodule, name)
    return out


def _resolve(target: str) -> object:
    modname, _, name = target.rpartition(".")
    return getattr(importlib.import_module(modname), name)


def _names_the_argument(arg: str, message: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(arg)}(?!\w)", message) is not None


@pytest.mark.parametrize("case", ROWS, ids=[r.id for r in ROWS])
def test_bad_input_is_refused_naming_the_argument(case: Row):
    where = f"{case.target} ({case.kind} {case.arg})"
    with pytest.raises((ValueError, TypeError)) as info:
        case.call()
    message = str(info.value)
    assert isinstance(info.value, case.exc), (
        f"{where}: raised {type(info.value).__name__}, expected {case.exc.__name__}: {message}"
    )
    assert _names_the_argument(case.arg, message), (
        f"{where}: the message does not name {case.arg!r}: {message}"
    )
    assert re.search(KIND_WORDS[case.kind], message), (
        f"{where}: the message does not say what a {case.kind} error says ({KIND_WORDS[case.kind]}): {message}"
    )


def _needs_no_rows(obj: object) -> bool:
    """Constants, exception classes and result records (dataclasses without ``__post_init__``,
    NamedTuples: the records a function returns, which validate nothing)."""
    if not callable(obj):
        return True
    if inspect.isclass(obj):
        return (
            issubclass(obj, Exception)
            or (dataclasses.is_dataclass(obj) and not hasattr(obj, "__post_init__"))
            or (issubclass(obj, tuple) and hasattr(obj, "_fields"))
        )
    return False


def test_every_public_name_has_rows():
    covered = {id(_resolve(r.target)) for r in ROWS} | {
        id(_resolve(t)) for t, _, _ in declared_constraints()
    }
    allowed = {id(_resolve(name)) for name in NO_ARGUMENTS_TO_VALIDATE}
    missing = sorted(
        name
        for name, obj in public_names().items()
        if id(obj) not in covered | allowed and not _needs_no_rows(obj)
    )
    assert not missing, (
        "public rnnlib names without a bad-input row in tests/test_bad_input.py "
        "(add rows, or an entry with a reason in NO_ARGUMENTS_TO_VALIDATE):\n  "
        + "\n  ".join(missing)
    )
    for name, reason in NO_ARGUMENTS_TO_VALIDATE.items():
        assert reason, f"{name}: say why it has nothing to validate"


def test_divergent_training_stops_with_a_clear_error():
    """Gradient descent that blows up raises DivergenceError naming the cause, never returns NaN curves."""
    model = dynamical.SimpleRNN(N_IN, H, activation="relu", generator=0)
    x = 10 * torch.randn(4, 12, N_IN, generator=torch.Generator().manual_seed(1))
    y = torch.randn(4, 12, 1, generator=torch.Generator().manual_seed(2))
    with pytest.raises(
        truncation.DivergenceError, match=r"(?i)nan|inf|diverge"
    ) as info:
        truncation.train_full_and_truncated(
            model, x, y, 3, steps=50, lr=1e6, schedule="constant"
        )
    assert "lr" in str(info.value)
    with pytest.raises(truncation.DivergenceError):
        truncation.weight_distance_sweep(
            dynamical.SimpleRNN(N_IN, H, activation="relu", generator=0),
            x,
            y,
            [3],
            steps=50,
            lr=1e6,
            schedule="constant",
        )


def test_divergent_lds_fit_stops_with_a_clear_error():
    with pytest.raises(truncation.DivergenceError, match="lr"):
        stability.fit_lds_canonical(4, steps=200, lr=1e8)


#: The bad inputs refused, at least: the figure measured on 6 December 2026 (5,272;
#: issue 34 asks never fewer than 2,247); deleting rows or declarations in bulk fails here.
#: Raise it as declarations are added (benchmarks/validation_lines.py prints the count).
REFUSED_FLOOR = 5272


def test_refused_inputs_do_not_shrink():
    """The number of bad inputs tested (rows + generated cases) stays at or above the floor."""
    generated = len(list(_generated_params()))
    assert len(ROWS) + generated >= REFUSED_FLOOR, (
        f"{len(ROWS)} rows + {generated} generated < {REFUSED_FLOOR}"
    )


# --- generated: the declared scalar constraints (rnnlib._validation.validate_params) ------------

_UNUSED = object()  # stands for an argument the check of a declared one never reaches


def declared_constraints() -> list[tuple[str, str, object]]:
    """``(target, argument, constraint)`` for every public name whose constraints are declared.

    A function records them as ``__rnnlib_params__``, a class on its ``__init__``.
    """
    out = []
    for target, obj in sorted(public_names().items()):
        fn = obj.__init__ if inspect.isclass(obj) else obj
        for name, spec in getattr(fn, "__rnnlib_params__", {}).items():
            out.append((target, name, spec))
    return out


@dataclass(frozen=True)
class Bad:
    """A bad tensor or model, made at test time from the good one: ``Bad("nan")``."""

    kind: str

    def __repr__(self) -> str:
        return f"<{self.kind}>"

    def make(self, good):
        if isinstance(good, torch.nn.Module):  # "nan": a copy with a NaN weight
            return _with_nan_weight(good, next(iter(dict(good.named_parameters()))))
        return {
            "list": lambda: good.tolist(),
            "ndim": lambda: good.unsqueeze(0),
            "int64": lambda: good.to(torch.int64),
            "float": lambda: good.to(torch.float32),
            "nan": lambda: with_nan(good),
            "inf": lambda: with_nan(good, math.inf),
            "empty": lambda: good[:0],
            "values": lambda: torch.full_like(
                good, -0.5 if good.is_floating_point() else -2
            ),
        }[self.kind]()


#: The models a declared ``Model`` constraint is given when another argument is the bad one.
EXAMPLE_MODELS = [
    LIN,
    RNN,
    LSTM,
    ELMAN,
    INV_TARGET,
    NSM,
    nstep.Baseline(88, readout="bernoulli", previous=True),
    languages.held_out_split(
        torch.tensor([[0, 1, 1], [1, 0, 1], [1, 1, 0], [0, 0, 1]]),
        torch.tensor([1.0, 0.0, 1.0, 0.0]),
    ),
    {"a": 1.0},  # a Mapping (a record, a config)
    np.zeros(3),
]


def _bare_instance(kinds):
    """An instance of the first of ``kinds``, its fields unset: the declared checks only ask ``isinstance``.

    Another argument is the bad one and is refused before the body runs, so the
    fields are never read.
    """
    kind = kinds[0] if isinstance(kinds, tuple) else kinds
    if issubclass(kind, tuple):  # a NamedTuple
        return tuple.__new__(kind, (None,) * len(getattr(kind, "_fields", ())))
    return object.__new__(kind)


def bad_values(spec) -> list[object]:
    """Values a declared constraint refuses: a wrong type, NaN and inf (reals), each end when open, one past it when closed."""
    if isinstance(spec, _validation.Tensor):
        out = [Bad("list")]
        out += [Bad("ndim")] if spec.ndim or spec.shape else []
        out += [Bad("int64")] if spec.floating or spec.dtype_of else []
        out += [Bad("float")] if spec.integer else []
        out += [Bad("nan"), Bad("inf")] if spec.finite and not spec.integer else []
        out += [Bad("values")] if spec.values else []
        return out + ([Bad("empty")] if spec.nonempty else [])
    if isinstance(spec, _validation.Either):  # the wrong type, the scalar's bad values
        if not isinstance(spec.second, _validation.Int | _validation.Real):
            # two kinds of object: a third kind is refused, and the second's wrong types
            return [b"neither"] + [
                b for b in bad_values(spec.second) if not isinstance(b, (str, Bad))
            ]
        second = [b for b in bad_values(spec.second) if not isinstance(b, (str, Bad))]
        return [b"neither"] + second
    if isinstance(spec, _validation.Seq):  # a string, an empty list, one bad item
        items = [b for b in bad_values(spec.item) if not isinstance(b, Bad)]
        return ["3", []] + [[b] for b in items]
    if isinstance(spec, _validation.Model):
        return ["not a model"] + ([Bad("nan")] if spec.finite else [])
    if isinstance(spec, _validation.Ints):
        low = 1 if spec.low is None else spec.low
        return ["3", [], [2.5]] + ([] if spec.low is None else [[low - 1]])
    if isinstance(spec, _validation.DType):
        return [torch.int64, "float32"]
    if isinstance(spec, _validation.Choice):
        strings = all(isinstance(o, str) for o in spec.options)
        return ["no such option"] + ([1] if strings else [])
    if isinstance(spec, _validation.Bool):
        return [1, "yes"]
    if isinstance(spec, _validation.Seed):
        return ["3", 2.5, True, -1]
    if isinstance(spec, _validation.Str):
        return [3, None]
    if isinstance(spec, _validation.Function):
        return ["not callable", 3]
    if isinstance(spec, _validation.PathLike):
        return [3, None]
    if isinstance(spec, _validation.Int):  # a bound naming an argument: a row
        out: list[object] = [2.5, "3"]
        out += [spec.low - 1] if isinstance(spec.low, int) else []
        return out + ([spec.high + 1] if isinstance(spec.high, int) else [])
    out = ["0.1", math.nan] + ([] if spec.allow_inf else [math.inf])
    if spec.low is not None:
        out.append(spec.low if spec.low_open else spec.low - 1)
    if spec.high is not None:
        out.append(spec.high if spec.high_open else spec.high + 1)
    return out


def good_value(spec, kwargs: dict) -> object:
    """A value a declared constraint accepts (a tensor's sizes and dtype may come from the models in ``kwargs``)."""
    if isinstance(spec, _validation.Tensor):
        shape = spec.shape or (None,) * (spec.ndim or 1)
        sizes = [
            getattr(kwargs[s.split(".")[0]], s.split(".")[1])
            if isinstance(s, str) and "." in s
            else (s if isinstance(s, int) else 2)
            for s in shape
        ]
        if spec.integer:
            return torch.ones(sizes, dtype=torch.int64)
        if spec.values in ("binary", "sign"):
            return torch.ones(sizes)
        dtype = kwargs[spec.dtype_of].dtype if spec.dtype_of else torch.float32
        return torch.full(sizes, 0.5, dtype=dtype)
    if isinstance(spec, _validation.Model):
        example = next((m for m in EXAMPLE_MODELS if isinstance(m, spec.kinds)), None)
        return _bare_instance(spec.kinds) if example is None else example
    if isinstance(spec, _validation.Either):
        return good_value(spec.second, kwargs)
    if isinstance(spec, _validation.Seq):
        return [good_value(spec.item, kwargs)]
    if isinstance(spec, _validation.Ints):
        return [1 if spec.low is None else spec.low]
    if isinstance(spec, _validation.DType):
        return torch.float32
    if isinstance(spec, _validation.Choice):
        return spec.options[0]
    if isinstance(spec, _validation.Bool):
        return True
    if isinstance(spec, _validation.Seed):
        return 0
    if isinstance(spec, _validation.Str):
        return "x"
    if isinstance(spec, _validation.Function):
        return len
    if isinstance(spec, _validation.PathLike):
        return "."
    lo, hi = spec.low, spec.high
    if isinstance(
        spec, _validation.Int
    ):  # a bound naming an argument: that argument's value
        return lo if isinstance(lo, int) else kwargs.get(lo, 1) if lo else 0
    if lo is not None and hi is not None:
        return (lo + hi) / 2
    return lo + 1.0 if lo is not None else (0.0 if hi is None else hi - 1.0)


def _expected(name: str, spec, bad) -> tuple[type[Exception], str]:
    """The exception and what the message must say: the argument's name, then the range or type."""
    a = re.escape(name)
    if isinstance(spec, _validation.Tensor):
        return {
            "list": (TypeError, rf"^{a} must be a torch\.Tensor"),
            "ndim": (
                ValueError,
                rf"^{a} must have \d+ dimensions",
            ),
            "int64": (
                TypeError,
                rf"^{a} (must have a floating-point dtype|has dtype)",
            ),
            "float": (
                TypeError,
                rf"^{a} must be an integer tensor",
            ),
            "nan": (ValueError, rf"^{a} contains NaN or infinite"),
            "inf": (ValueError, rf"^{a} contains NaN or infinite"),
            "empty": (
                ValueError,
                rf"^{a} must (not be empty|have shape)",
            ),
            "values": (ValueError, rf"^{a} must have .* entries$"),
        }[bad.kind]
    if isinstance(spec, _validation.Either):
        if isinstance(bad, bytes):
            return TypeError, rf"^{a} must be .+ or .+, got bytes$"
        if not isinstance(spec.second, _validation.Int | _validation.Real):
            return TypeError, rf"^{a} must be .+ or .+, got {type(bad).__name__}$"
        return _expected(name, spec.second, bad)
    if isinstance(spec, _validation.Seq):
        if isinstance(bad, str) or not bad:
            return ValueError, rf"^{a} must be a non-empty sequence of "
        return _expected(f"{name}[i]", spec.item, bad[0])
    if isinstance(spec, _validation.Model):
        if isinstance(bad, Bad):
            return (
                ValueError,
                rf"^{a}\.\w+ contains NaN or infinite",
            )
        return TypeError, rf"^{a} must be an "
    if isinstance(spec, _validation.Ints):
        if isinstance(bad, str) or not bad:
            return (
                ValueError,
                rf"^{a} must be a non-empty sequence of integers",
            )
        if isinstance(bad[0], float):
            return TypeError, rf"^{a}\[i\] must be an integer"
        return ValueError, rf"^{a}\[i\] must be >= {spec.low}\b"
    if isinstance(spec, _validation.DType):
        return (
            TypeError,
            rf"^{a} must be torch\.float32 or torch\.float64",
        )
    if isinstance(spec, _validation.Choice):
        return (
            ValueError if isinstance(bad, str) else TypeError,
            rf"^{a} must be one of {re.escape(str(spec.options))}",
        )
    if isinstance(spec, _validation.Bool):
        return TypeError, rf"^{a} must be a bool"
    if isinstance(spec, _validation.Seed):
        if bad == -1:
            return ValueError, rf"^{a} must be a seed in \[0, 2\*\*63 - 1\]"
        return TypeError, rf"^{a} must be a torch\.Generator, an int seed or None"
    if isinstance(spec, _validation.Str):
        return TypeError, rf"^{a} must be a str"
    if isinstance(spec, _validation.Function):
        return TypeError, rf"^{a} must be callable\b"
    if isinstance(spec, _validation.PathLike):
        return TypeError, rf"^{a} must be a path \(str or pathlib\.Path\)"
    if (
        isinstance(bad, str)
        or isinstance(bad, float)
        and isinstance(spec, _validation.Int)
    ):
        kind = "an integer" if isinstance(spec, _validation.Int) else "a real number"
        return TypeError, rf"^{a} must be {kind}"
    if isinstance(spec, _validation.Int):
        if spec.low is not None and bad < spec.low:
            return ValueError, rf"^{a} must be >= {spec.low}\b"
        return ValueError, rf"^{a} must be <= {spec.high}\b"
    if not math.isfinite(bad):
        return ValueError, rf"^{a} must be finite\b"
    interval = (
        f"{'(' if spec.low_open else '['}{'-inf' if spec.low is None else spec.low}, "
        f"{'inf' if spec.high is None else spec.high}{')' if spec.high_open else ']'}"
    )
    return ValueError, rf"^{a} must lie in {re.escape(interval)}"


def _may_be_none(target: str, name: str) -> bool:
    """The argument may be ``None`` (its default, or its annotation says so): ``None`` is not a bad value."""
    obj = _resolve(target)
    fn = obj.__init__ if inspect.isclass(obj) else obj
    p = inspect.signature(fn).parameters[name]
    return p.default is None or "None" in str(p.annotation)


def _generated_params():
    for target, name, spec in declared_constraints():
        for bad in bad_values(spec):
            if bad is None and _may_be_none(target, name):
                continue
            yield pytest.param(
                target,
                name,
                spec,
                bad,
                id=f"{target.removeprefix('rnnlib.')}-{name}-{bad!r}",
            )


@pytest.mark.parametrize("target, name, spec, bad", list(_generated_params()))
def test_declared_constraint_is_refused(target, name, spec, bad):
    """Each declared constraint refuses each of its bad values, naming the argument and the range.

    The other arguments get a good value (declared ones) or a placeholder: the
    declared checks run before the body, so the placeholders are never read.
    """
    obj = _resolve(target)
    fn = obj.__init__ if inspect.isclass(obj) else obj
    declared = fn.__rnnlib_params__
    kwargs = {}
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    for p in sorted(  # tensors last: their sizes may read a model
        params,
        key=lambda p: isinstance(declared.get(p.name), _validation.Tensor),
    ):
        if p.name in declared:
            kwargs[p.name] = good_value(declared[p.name], kwargs)
        elif p.default is p.empty:
            kwargs[p.name] = _UNUSED
    good = kwargs[name]
    kwargs[name] = bad.make(good) if isinstance(bad, Bad) else bad
    exc, pattern = _expected(name, spec, bad)
    with pytest.raises(exc, match=pattern):
        obj(**kwargs)


def test_declarations_are_found():
    """The generated rows are not vacuous: the decorated functions are found, with their constraints."""
    found = {(t, n) for t, n, _ in declared_constraints()}
    assert ("rnnlib.elman.sample_true_sequence", "L") in found
    assert ("rnnlib.elman.ElmanRNN", "width") in found
    assert (
        "rnnlib.experiments.ch05.regression_task",
        "L",
    ) in found
    assert len(found) >= 10
