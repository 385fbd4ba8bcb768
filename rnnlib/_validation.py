"""Input validation shared by every public rnnlib function.

Every check raises a ``TypeError`` (wrong kind of object) or a ``ValueError``
(right kind, wrong shape/range/content) whose message starts with the name of
the offending argument and says what was expected. This is the
scikit-learn convention: validate at the public boundary, never return NaN
silently.

**Each scalar constraint is declared once.** :data:`PARAMS` is the table of the
named scalars of the book (``eps_x``, ``L``, ``d``, ``width``, ``lam``, ``lr``,
``steps``, ``batch_size``, ...), each with its range; ``@validate_params("L",
"d", "eps_x")`` on a public function checks those arguments by name before the
body runs (``check_int`` / ``check_real``, so the messages are theirs), passes
the converted values on (``int`` / ``float``), and records the constraints on
the function as ``fn.__rnnlib_params__``. An argument whose default is
``None``, or whose annotation admits ``None``, may be ``None``. A constraint
particular to one function is declared at its decorator
(``@validate_params("L", n=Int(1))``; ``Choice`` for a string option, ``Bool``
for a flag, ``Seq`` for a list of one kind, ``Either`` for an argument of two
kinds, ``Instance`` for an object of a class, ``Seed`` for a seed or a
generator, ``Function`` for a callable, ``PathLike`` for a path); a constraint between arguments is
a ``Relation`` over them, passed positionally and checked after every argument's
own (``@validate_params("n", Relation("n_train + n_eval <= 2 ** n"))``). Tensors and models are declared the same way
(``x=Tensor(shape=("batch", "T", "model.input_dim"), dtype_of="model")``,
``model=Model(RecurrentModel)``): a string dimension is a symbol that every
tensor of the call naming it must share, ``"arg.attr"`` another argument's
attribute. A declared function called by another skips an argument only
when it is the very object an enclosing call checked under the same
constraint: a value is checked once per call, and a derived one again.
The bad-input tests for declared constraints are generated from the records
(``tests/test_bad_input.py``), as scikit-learn's
``test_public_functions.py`` does from its ``validate_params``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import numbers
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ._rng import (
    as_generator,
)  # re-exported: the one definition is in _rng

__all__ = [
    "DivergenceError",
    "check_tensor",
    "check_sequence",
    "check_int",
    "check_real",
    "check_model",
    "as_generator",
    "Int",
    "Real",
    "DType",
    "Choice",
    "Bool",
    "Ints",
    "Str",
    "Seed",
    "Function",
    "PathLike",
    "Tensor",
    "Model",
    "Instance",
    "Either",
    "Seq",
    "Relation",
    "POSITIVE",
    "NONNEGATIVE",
    "OPEN_UNIT",
    "UNIT",
    "ANY_REAL",
    "ANY_INT",
    "PARAMS",
    "validate_params",
]


def _shape_str(shape: Sequence[int | str | None]) -> str:
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"


def check_tensor(
    x: object,
    name: str,
    *,
    ndim: int | None = None,
    shape: Sequence[int | str | None] | None = None,
    floating: bool = True,
    finite: bool = True,
    nonempty: bool = True,
    integer: bool = False,
) -> torch.Tensor:
    """Validate a tensor argument and return it (:class:`Tensor`, the declared form, does the work).

    Parameters
    ----------
    x : the object to check.
    name : argument name used in error messages.
    ndim : required number of dimensions.
    shape : required shape; an entry may be an int (must match), ``None``
        (any size) or a string (any size, named in the message; a string
        repeated within the shape must have one size).
    floating : require a floating-point dtype.
    finite : reject NaN and infinite entries.
    nonempty : reject tensors with zero elements.
    integer : require an integer dtype (not bool).
    """
    shape = None if shape is None else tuple(shape)
    spec = Tensor(ndim, shape, floating, finite, nonempty, integer)
    return spec.check(x, name)


def check_sequence(value: object, name: str, what: str) -> list:
    """Validate a non-empty sequence argument (not a string) and return it as a list.

    ``what`` describes the items in the message, e.g. ``"integers"``:
    ``widths must be a non-empty sequence of integers, got ...``. The items
    themselves are checked by the caller (``check_int``, ``check_real``).
    """
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
        or len(value) == 0
    ):
        raise ValueError(
            f"{name} must be a non-empty sequence of {what}, got {value!r}"
        )
    return list(value)


def check_int(
    value: object,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """Validate an integer argument (bools are rejected) and return it as ``int``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer, got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_ints(value: object, name: str, *, minimum: int | None = None) -> list[int]:
    """A non-empty sequence of integers, each ``>= minimum``: the list of them.

    The messages are :func:`check_sequence`'s for ``value`` and
    :func:`check_int`'s for an item, named ``name[i]``.
    """
    return [
        check_int(v, f"{name}[i]", minimum=minimum)
        for v in check_sequence(value, name, "integers")
    ]


def check_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Validate a real scalar in an interval and return it as ``float``.

    The interval is ``[low, high]``, with either end open when ``low_open`` /
    ``high_open`` is set; ``None`` means unbounded on that side.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__} {value!r}"
        )
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    below = low is not None and (value < low or low_open and value == low)
    above = high is not None and (value > high or high_open and value == high)
    if below or above:
        lo = f"{'(' if low_open else '['}{'-inf' if low is None else low}"
        hi = f"{'inf' if high is None else high}{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {value}")
    return value


def check_model(
    model: object,
    kinds: type | tuple[type, ...],
    *,
    finite: bool = False,
    name: str = "model",
):
    """Validate that ``model`` is an instance of one of ``kinds``; return it.

    With ``finite=True`` every parameter must also be finite (a NaN or inf
    weight would make a certificate or a projection NaN without a word); the
    message names the parameter, e.g. ``model.b contains NaN or infinite entries``.
    """
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(model, kinds):
        names = " or ".join(f"{k.__module__}.{k.__name__}" for k in kinds)
        raise TypeError(f"{name} must be an {names}, got {type(model).__name__}")
    if finite:
        for pname, p in model.named_parameters():
            if not bool(torch.isfinite(p.detach()).all()):
                raise ValueError(f"{name}.{pname} contains NaN or infinite entries")
    return model


class DivergenceError(RuntimeError):
    """Training stopped because the loss or the weights stopped being finite.

    Public name: :class:`rnnlib.train.DivergenceError` (defined here, at the bottom
    of the import chain, so that :mod:`rnnlib.truncation` can raise it too).
    """


# --- the declared scalar constraints ----------------------------------------------------------


@dataclass(frozen=True)
class Int:
    """An integer argument in ``[low, high]`` (``None``: unbounded); bools are refused.

    A bound may name another argument of the call (``n_logs=Int(1, "steps")``:
    ``1 <= n_logs <= steps``), which is then checked first; the message names it
    (``n_logs must be <= steps = 8, got 9``).
    """

    low: int | str | None = None
    high: int | str | None = None

    def refers_to(self) -> set[str]:
        """The other arguments a bound names."""
        return {b for b in (self.low, self.high) if isinstance(b, str)}

    def check(self, value: object, name: str) -> int:
        """The numeric bounds only (a bound naming an argument needs the call: :meth:`check_in`)."""
        return check_int(
            value,
            name,
            minimum=None if isinstance(self.low, str) else self.low,
            maximum=None if isinstance(self.high, str) else self.high,
        )

    def check_in(self, value: object, name: str, arguments: dict, dims: dict) -> int:
        """:meth:`check`, then the bounds that name another argument of ``arguments``."""
        value = self.check(value, name)
        if isinstance(self.low, str) and value < arguments[self.low]:
            raise ValueError(
                f"{name} must be >= {self.low} = {arguments[self.low]}, got {value}"
            )
        if isinstance(self.high, str) and value > arguments[self.high]:
            raise ValueError(
                f"{name} must be <= {self.high} = {arguments[self.high]}, got {value}"
            )
        return value


@dataclass(frozen=True)
class Real:
    """A finite real argument in an interval; ``None`` is unbounded, ``*_open`` excludes the end.

    ``allow_inf=True`` also accepts ``math.inf`` (an argument whose default is "no bound").
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    #: ``math.inf`` is accepted too (``radius=inf``: no bound), when the interval is unbounded above
    allow_inf: bool = False

    def check(self, value: object, name: str) -> float:
        if self.allow_inf and isinstance(value, float) and value == math.inf:
            return value
        return check_real(
            value,
            name,
            low=self.low,
            high=self.high,
            low_open=self.low_open,
            high_open=self.high_open,
        )


@dataclass(frozen=True)
class DType:
    """A model dtype: ``torch.float32`` or ``torch.float64``."""

    def check(self, value: object, name: str) -> torch.dtype:
        if value not in (torch.float32, torch.float64):
            raise TypeError(
                f"{name} must be torch.float32 or torch.float64, got {value}"
            )
        return value


@dataclass(frozen=True)
class Bool:
    """A flag: ``True`` or ``False`` (not ``1``, not ``"yes"``)."""

    def check(self, value: object, name: str) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        return value


class Choice:
    """One of a fixed set of options: ``Choice("tanh", "relu")`` (a non-string for string options is a ``TypeError``)."""

    def __init__(self, *options: object) -> None:
        self.options = tuple(options)

    def __repr__(self) -> str:
        return f"Choice{self.options!r}"

    def check(self, value: object, name: str) -> object:
        if all(isinstance(o, str) for o in self.options) and not (
            isinstance(value, str)
        ):
            raise TypeError(
                f"{name} must be one of {self.options}, got {type(value).__name__}"
            )
        if value not in self.options:
            raise ValueError(f"{name} must be one of {self.options}, got {value!r}")
        return value


@dataclass(frozen=True)
class Seed:
    """A source of randomness: ``None`` (seed 0), an int seed in [0, 2**63 - 1] or a ``torch.Generator``.

    The value is passed on unchanged (a generator keeps its state; the body turns it
    into a generator with :func:`rnnlib._rng.as_generator`).
    """

    def check(self, value: object, name: str) -> object:
        if not isinstance(value, torch.Generator):
            as_generator(value, name)  # raises the TypeError or ValueError
        return value


@dataclass(frozen=True)
class Str:
    """A string argument (a name, a format spec): ``TypeError`` for anything else."""

    def check(self, value: object, name: str) -> str:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        return value


@dataclass(frozen=True)
class Function:
    """A callable argument (a student's function, a learner, a run): ``TypeError`` for anything else.

    ``hint`` is said in the message (``Function("pass your function itself, not what it
    returns")``: ``student_fn must be callable (pass your function ...), got Tensor``).
    """

    hint: str = ""

    def check(self, value: object, name: str) -> Callable:
        if not callable(value):
            hint = f" ({self.hint})" if self.hint else ""
            got = (
                f"a tensor of shape {tuple(value.shape)}"
                if isinstance(value, torch.Tensor)
                else type(value).__name__
            )
            raise TypeError(f"{name} must be callable{hint}, got {got}")
        return value


@dataclass(frozen=True)
class PathLike:
    """A file or folder path: a ``str`` or an ``os.PathLike`` (``pathlib.Path``), passed on unchanged."""

    def check(self, value: object, name: str) -> str | os.PathLike:
        if not isinstance(value, str | os.PathLike):
            raise TypeError(
                f"{name} must be a path (str or pathlib.Path), got {type(value).__name__}"
            )
        return value


@dataclass(frozen=True)
class Ints:
    """A non-empty sequence of integers, each ``>= low`` (:func:`check_ints`); returned as a list."""

    low: int | None = None

    def check(self, value: object, name: str) -> list[int]:
        if hasattr(value, "tolist"):  # a NumPy array or a tensor
            value = value.tolist()
        return check_ints(value, name, minimum=self.low)


@dataclass(frozen=True)
class Tensor:
    """A tensor argument, declared: the checks of :func:`check_tensor`.

    An entry of ``shape`` is an int (that size), ``None`` (any size), a symbol
    (a string: any size, the same in every tensor of the call that names it,
    so ``shape=("m", "m")`` is a square matrix and ``x``, ``y`` declared with
    ``"batch"`` must agree), or ``"arg.attr"`` (an attribute of another
    declared argument, e.g. ``"model.input_dim"``). ``dtype_of="model"``: the
    dtype must be that argument's ``.dtype``. ``values``: what every entry must
    be (``"binary"``, ``"sign"`` for +-1 labels, ``"nonnegative"``, ``"strings"`` for
    rows of 0s and 1s left-padded with -1, the strings of chapter 7, 2-d). Checked in
    this order: type, dimensions, sizes, dtype, emptiness, NaN/inf, values.
    """

    ndim: int | None = None
    shape: tuple[int | str | None, ...] | None = None
    floating: bool = True
    finite: bool = True
    nonempty: bool = True
    integer: bool = False
    dtype_of: str | None = None
    #: what the entries must be: ``"binary"`` (0 or 1), ``"sign"`` (-1 or +1), ``"nonnegative"``
    values: str | None = None

    def refers_to(self) -> set[str]:
        """The other arguments this constraint reads (checked first)."""
        refs = {
            s.split(".")[0] for s in self.shape or () if isinstance(s, str) and "." in s
        }
        return refs | ({self.dtype_of} if self.dtype_of else set())

    def check(self, value: object, name: str) -> torch.Tensor:
        return self.check_in(value, name, {}, {})

    def check_in(
        self, x: object, name: str, arguments: dict, dims: dict
    ) -> torch.Tensor:
        """:meth:`check` within a call: ``arguments`` by name, ``dims`` the symbols' sizes so far."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        shape, got = self.shape, tuple(x.shape)
        ndim = self.ndim if shape is None else len(shape)
        expected = "" if shape is None else f" {_shape_str(shape)}"
        if ndim is not None and x.dim() != ndim:
            raise ValueError(
                f"{name} must have {ndim} dimensions{expected}, got shape {got}"
            )
        for axis, want in enumerate(shape or ()):
            if isinstance(want, str) and "." in want:
                arg, attr = want.split(".")
                want = getattr(arguments[arg], attr)
            elif isinstance(want, str):
                want = dims.setdefault(want, got[axis])
            if want is not None and want != got[axis]:
                raise ValueError(
                    f"{name} must have shape{expected}, got {got} (dimension {axis} should be {want})"
                )
        floating = x.is_floating_point()
        if self.integer and (floating or x.dtype == torch.bool):
            raise TypeError(f"{name} must be an integer tensor, got {x.dtype}")
        if self.floating and not floating:
            raise TypeError(f"{name} must have a floating-point dtype, got {x.dtype}")
        if self.nonempty and x.numel() == 0:
            raise ValueError(f"{name} must not be empty, got shape {got}")
        if self.finite and floating and not x.isfinite().all():
            raise ValueError(f"{name} contains NaN or infinite entries")
        other = arguments.get(self.dtype_of)
        if other is not None and x.dtype != other.dtype:
            raise TypeError(
                f"{name} has dtype {x.dtype} but {self.dtype_of}'s weights are {other.dtype}; "
                f"convert with {name}.to({other.dtype})"
            )
        if self.values is not None and not bool(_VALUES[self.values][1](x).all()):
            raise ValueError(f"{name} must have {_VALUES[self.values][0]} entries")
        return x


def _left_padded(x: torch.Tensor) -> torch.Tensor:
    """Rows of 0s and 1s left-padded with -1, a symbol in every row (chapter 7's strings)."""
    pad = x == -1
    symbols = ((x == 0) | (x == 1) | pad).all()
    return symbols & ~(pad[:, 1:] & ~pad[:, :-1]).any() & ~pad[:, -1].any()


#: The value constraints a :class:`Tensor` may declare: ``values -> (words, test)``.
_VALUES: dict[str, tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "binary": ("binary (0/1)", lambda x: (x == 0) | (x == 1)),
    "strings": (
        "0/1 string (left-padded with -1, a symbol in every row)",
        _left_padded,
    ),
    "sign": ("+-1", lambda x: (x == 1) | (x == -1)),
    "nonnegative": ("nonnegative (>= 0)", lambda x: x >= 0),
}


@dataclass(frozen=True)
class Model:
    """A model argument: an instance of ``kinds`` (:func:`check_model`), with finite parameters unless ``finite=False``."""

    kinds: type | tuple[type, ...]
    finite: bool = True

    def check(self, value: object, name: str) -> object:
        return check_model(value, self.kinds, finite=self.finite, name=name)


def Instance(kinds: type | tuple[type, ...]) -> Model:  # noqa: N802 - reads as a constraint
    """An argument that must be an instance of ``kinds`` (a target, a split, a record): ``TypeError`` otherwise."""
    return Model(kinds, finite=False)


@dataclass(frozen=True)
class Either:
    """One of two constraints, told apart by type: ``Either(Tensor(...), Real(0.0))``.

    The first whose type the value has decides (its ``ValueError`` is the
    message); a value of neither type is a ``TypeError`` naming both.
    """

    first: object
    second: object

    def refers_to(self) -> set[str]:
        """The other arguments either constraint reads."""
        return {
            r for c in (self.first, self.second) for r in getattr(c, "refers_to", set)()
        }

    def check_in(self, value: object, name: str, arguments: dict, dims: dict):
        """The constraint of the value's type, within a call (:meth:`Tensor.check_in`)."""
        messages = []
        for spec in (self.first, self.second):
            try:
                if hasattr(spec, "check_in"):
                    return spec.check_in(value, name, arguments, dims)
                return spec.check(value, name)
            except TypeError as err:
                what = str(err).removeprefix(f"{name} must be ").split(", got")[0]
                messages.append(what)
        raise TypeError(
            f"{name} must be {' or '.join(messages)}, got {type(value).__name__}"
        )

    def check(self, value: object, name: str):
        return self.check_in(value, name, {}, {})


@dataclass(frozen=True)
class Seq:
    """A non-empty sequence (not a string) whose every item meets ``item``; returned as a list.

    ``Seq(Real(0.0, low_open=True))`` is a list of positive reals,
    ``Seq(Choice("rnn", "lstm"))`` a list of options. An item's message names
    ``[i]`` (``eps_values[i] must lie in ...``, as :class:`Ints`).
    """

    item: object
    what: str = "items"

    def check(self, value: object, name: str) -> list:
        if hasattr(value, "tolist") and not isinstance(value, torch.Tensor):
            value = value.tolist()  # a NumPy array
        items = check_sequence(value, name, self.what)
        return [self.item.check(v, f"{name}[i]") for v in items]


#: The functions a :class:`Relation`'s expression may call.
_SCOPE = {"len": len, "min": min, "max": max}


@dataclass(frozen=True)
class Relation:
    """A constraint between arguments, as a Python expression over them: ``Relation("n_train + n_eval <= 2 ** n", "distinct strings")``.

    Declared positionally in :func:`validate_params` and checked after every
    argument's own constraint; a ``ValueError`` states the expression, the
    reason and the values of both sides of the comparison that failed. An
    expression ``A and B`` is checked conjunct by conjunct; one that reads an
    argument that is ``None`` is skipped (an optional argument left out) unless
    it speaks of ``None`` itself (``"patience is None or valid is not None"``).
    """

    expression: str
    why: str = ""

    def conjuncts(self) -> list[ast.expr]:
        tree = ast.parse(self.expression, mode="eval").body
        if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And):
            return list(tree.values)
        return [tree]

    def names(self) -> set[str]:
        """The arguments the expression reads."""
        return {
            n.id
            for n in ast.walk(ast.parse(self.expression, mode="eval"))
            if isinstance(n, ast.Name)
        } - set(_SCOPE)

    def check_in(self, arguments: dict) -> None:
        scope = dict(_SCOPE)
        for part in self.conjuncts():
            used = {n.id for n in ast.walk(part) if isinstance(n, ast.Name)}
            says_none = any(
                isinstance(n, ast.Constant) and n.value is None for n in ast.walk(part)
            )
            if not says_none and any(arguments.get(n, 0) is None for n in used):
                continue
            code = compile(ast.Expression(part), "<relation>", "eval")
            if eval(code, scope, dict(arguments)):  # noqa: S307 - the library's own declarations
                continue
            text = ast.unparse(part)
            got = ""
            if isinstance(part, ast.Compare) and len(part.ops) == 1:
                sides = [
                    eval(
                        compile(ast.Expression(e), "<relation>", "eval"),
                        scope,
                        dict(arguments),
                    )  # noqa: S307
                    for e in (part.left, part.comparators[0])
                ]
                shown = [
                    f"{ast.unparse(e)} = {v!r}"
                    for e, v in zip((part.left, part.comparators[0]), sides)
                    if not isinstance(e, ast.Constant)
                ]
                got = ", got " + " and ".join(shown) if shown else ""
            why = f" ({self.why})" if self.why else ""
            raise ValueError(f"{text} must hold{why}{got}")


#: Intervals many scalars share (the table below and the declarations of single functions use them).
POSITIVE = Real(0.0, low_open=True)
NONNEGATIVE = Real(0.0)
OPEN_UNIT = Real(0.0, 1.0, low_open=True, high_open=True)
UNIT = Real(0.0, 1.0)
ANY_REAL = Real()
ANY_INT = Int()

#: The named scalars of the book and their ranges: one declaration per name.
Constraint = (
    Int
    | Real
    | DType
    | Choice
    | Bool
    | Str
    | Seed
    | Function
    | PathLike
    | Ints
    | Tensor
    | Model
    | Either
    | Seq
)
PARAMS: dict[str, Constraint] = {
    # dimensions (chapters 1-7: d counts the input coordinates, L the positions)
    "L": Int(3),
    "d": Int(3),
    "input_dim": Int(1),
    "width": Int(1),
    "output_dim": Int(1),
    "hidden_dim": Int(1),
    "batch_size": Int(1),
    "n_networks": Int(1),
    "n_perturbations": Int(1),
    "n_test": Int(1),
    "n_eval": Int(1),
    "n_draws": Int(1),
    "n_trials": Int(1),
    "steps": Int(1),
    "iterations": Int(1),
    "window": Int(1),
    "log_every": Int(1),
    "eval_every": Int(1),
    "patience": Int(1),
    "seed": Int(0),
    "k": Int(1),
    "n": Int(1),
    "n_train": Int(1),
    # input scale of Definition 3.1, contraction constants, step sizes
    "eps_x": Real(0.0, 1.0, low_open=True),
    "lam": Real(0.0, 1.0, low_open=True),
    "lr": POSITIVE,
    "lr_scale": POSITIVE,
    "out_scale": POSITIVE,
    "ridge": POSITIVE,
    "clip": POSITIVE,
    "radius": POSITIVE,
    "x_bound": NONNEGATIVE,
    "tau": NONNEGATIVE,
    "R": NONNEGATIVE,
    "f_max": OPEN_UNIT,
    "dtype": DType(),
    "progress": Bool(),
    "generator": Seed(),
}


class _Depth(threading.local):
    depth = 0
    checked: dict = {}  # noqa: RUF012 - replaced, never mutated


#: In this thread: how many declared public calls are running (``depth``) and what they
#: checked (``checked``: name -> (the checked value, its constraint)). A declared call
#: inside them skips a name only when it receives that very object under the same
#: constraint: a value derived from it (``a * R``, ``min(batch_size, n)``) is checked again.
_INSIDE = _Depth()


def _already_checked(outer: dict, name: str, value: object, spec: object) -> bool:
    seen = outer.get(name)
    return seen is not None and seen[0] is value and seen[1] == spec


def validate_params(
    *names: str | Callable | Relation, **declared: Constraint
) -> Callable[[Callable], Callable]:
    """Check the named scalar arguments of a public function (or ``__init__``) before its body runs.

    ``names`` take their constraint from :data:`PARAMS`; ``declared`` gives a
    constraint of this function's own. The checked value replaces the argument
    (``check_int`` returns ``int``, ``check_real`` ``float``). The constraints
    are recorded as ``fn.__rnnlib_params__`` (``name -> constraint``), which the
    bad-input tests read. A public function that another declared one calls
    (``regression_task`` calls ``sample_task``, which calls
    ``sample_true_sequence``) trusts its callers for the values they checked: a
    parameter that receives the very object an enclosing call checked under the same
    constraint is not checked again, so it is checked once, at the boundary the user
    crossed; a value derived from it, or one under another constraint, is checked;
    a name no enclosing call declared (``dtype`` passed on by a sweep that does not
    declare it, ``ridge`` passed as ``fit_ridge``) is checked where it is declared.
    A declared function in ``names`` lends its constraints (a subclass's
    ``__init__`` declares ``_Base.__init__`` and its own additions once).
    Arguments are checked in the order of the signature, those that another
    constraint refers to (``"model.input_dim"``) first; a :class:`Relation` in
    ``names`` (a constraint between arguments) is checked after all of them, at
    every call, and recorded as ``fn.__rnnlib_relations__``.
    """
    specs: dict[str, Constraint] = {}
    relations: list[Relation] = []
    for name in names:
        if isinstance(name, Relation):
            relations.append(name)
        elif callable(name):
            specs.update(name.__rnnlib_params__)
            relations += getattr(name, "__rnnlib_relations__", [])
        else:
            specs[name] = PARAMS[name]
    specs.update(declared)

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        read = set().union(*(r.names() for r in relations))
        missing = sorted((set(specs) | read) - set(sig.parameters))
        if missing:
            raise TypeError(
                f"validate_params: {fn.__qualname__} has no argument {missing}"
            )
        refs = {  # a method's instance needs no declaration
            r
            for c in specs.values()
            if isinstance(c, Tensor | Int | Either)
            for r in c.refers_to()
        } - {"self"}
        if refs - set(specs):
            raise TypeError(
                f"validate_params: {fn.__qualname__} refers to undeclared {sorted(refs - set(specs))}"
            )
        params = list(sig.parameters)  # in this order, referred-to first
        order = sorted(specs, key=lambda n: (n not in refs, params.index(n)))
        may_be_none = {  # the default is None, or the annotation admits it
            n
            for n in specs
            if sig.parameters[n].default is None
            or "None" in str(sig.parameters[n].annotation)
        }

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            outer = _INSIDE.checked  # what the enclosing declared calls checked
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            todo = [
                n
                for n in order
                if not _already_checked(outer, n, arguments[n], specs[n])
            ]
            dims = {}  # the sizes the symbols of the shapes took
            for name in todo:
                value, spec = arguments[name], specs[name]
                if value is None and name in may_be_none:
                    continue
                arguments[name] = (
                    spec.check_in(value, name, arguments, dims)
                    if isinstance(spec, Tensor | Int | Either)
                    else spec.check(value, name)
                )
            for relation in relations:
                relation.check_in(arguments)
            _INSIDE.depth += 1
            _INSIDE.checked = outer | {n: (arguments[n], specs[n]) for n in specs}
            try:
                return fn(*bound.args, **bound.kwargs)
            finally:
                _INSIDE.depth -= 1
                _INSIDE.checked = outer

        wrapper.__rnnlib_params__ = dict(specs)
        wrapper.__rnnlib_relations__ = list(relations)
        return wrapper

    return decorate
