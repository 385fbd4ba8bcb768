"""The machinery shared by the exercise checkers of every chapter, and the grader's half of it.

An exercise is an :class:`Exercise`: its number, a function that makes its test
inputs from a seed (:class:`Case` objects), rnnlib's reference, the tolerances of
the comparison and the library functions the student must not call. The same
object serves two runs:

* **the student's own check**, ``check_exercise_N_M(student_fn)`` in the
  notebook: the cases of the exercise's fixed seed, the student's function run
  in the student's kernel, each result compared with the reference; it prints a
  pass or raises :class:`ExerciseCheckFailed` with a message that says which
  input went wrong and how (shape, dtype, how many entries differ, where the
  largest difference is and its order of magnitude, the tolerances), never the
  expected values or the reference's code;
* **the grader** (``booktools.grade``): the cases of a *fresh* seed drawn at
  grading time, their expected values computed in the grader's own process;
  only the inputs are handed to the student's kernel, where :func:`run_cases`
  calls the student's function and saves what it returns as plain arrays; the
  grader compares those arrays with :func:`mismatch` in its own process. Nothing
  a student's cell patches (torch, numpy, this module) takes part in the
  comparison, and a table of answers to the fixed seed's inputs answers none
  of the fresh ones. Each case scores on its own (partial credit).

While the student's function runs, the reference and every library function
the exercise asks the student to write (``forbidden``) are *sealed*: their
code is swapped for code that raises, so ``my_kernel = _reference_kernel`` or
a call of ``rnnlib.ntk.tangent_kernel`` fails with a message that says so,
however the student imported it. (Sealing runs in the student's kernel: a
student who copies a function's code object before the grader's cell runs can
get round it; that is cheating in the ordinary sense, for a human to find.)

A failure is raised from the checker's entry point with the checker's own
frames cut from its traceback: what a student sees ends at their call (and,
for an error of their function, at the line of their function that raised).
"""

from __future__ import annotations

import functools
import json
import math
import time
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .._validation import (
    NONNEGATIVE,
    Function,
    Instance,
    Int,
    PathLike,
    Str,
    validate_params,
)

__all__ = [
    "ExerciseCheckFailed",
    "Case",
    "Exercise",
    "compare_with_reference",
    "mismatch",
    "read_results",
    "register",
    "run_cases",
    "CHECKERS",
    "EXERCISES",
]

#: The constraint of a student's function, the argument of every checker.
STUDENT_FUNCTION = Function("pass your function itself, not what it returns")


def student_function(number: str, returns: str = "") -> Function:
    """:data:`STUDENT_FUNCTION` for exercise ``number``, its message naming the exercise (and what the function returns)."""
    what = f", which returns {returns}" if returns else ", not what it returns"
    return Function(f"Exercise {number}: pass your function itself{what}")


#: Every checker by exercise number ("N.M"), filled by :func:`register`.
CHECKERS: dict[str, Callable] = {}
#: Every exercise by number, filled by :func:`register` (the grader reads it).
EXERCISES: dict[str, Exercise] = {}

_HERE = str(Path(__file__).resolve().parent)
_VALIDATION = Path(validate_params.__code__.co_filename).resolve()


def _trimmed(tb: types.TracebackType | None):
    """``tb`` without its leading frames in rnnlib/homework or its argument checks (the checker's own)."""
    while tb is not None and _is_checker_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _is_checker_frame(filename: str) -> bool:
    path = Path(filename).resolve()
    return str(path.parent).startswith(_HERE) or path == _VALIDATION


class ExerciseCheckFailed(AssertionError):
    """A student's answer disagrees with the reference on some input."""


class _SealedCall(BaseException):
    """Raised by a sealed function (a BaseException: ``except Exception`` in a student's code does not hide it)."""


@dataclass
class Case:
    """One test input: positional ``args`` and a human description of them."""

    description: str
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __post_init__(
        self,
    ) -> None:  # kwargs' default factory is not a value to declare
        if not isinstance(self.kwargs, dict):
            raise TypeError(
                f"kwargs must be a dict of keyword arguments, got {type(self.kwargs).__name__}"
            )


Case.__init__ = validate_params(description=Str(), args=Instance(tuple))(Case.__init__)


def _call_directly(student: Callable, *args, **kwargs):
    return student(*args, **kwargs)


@dataclass(frozen=True)
class Exercise:
    """One code exercise: how to make its inputs, its reference, and how results are compared.

    ``cases(seed)`` returns the test inputs for an integer seed (the same seed,
    the same inputs); ``seed`` is the one of the student's own check (the grader
    draws a fresh one). ``reference(*case.args, **case.kwargs)`` is the expected
    result, a tensor; results are compared in its dtype with ``atol`` and
    ``rtol``. ``forbidden`` are the library functions the exercise asks the
    student to write (sealed while the student's function runs). ``call(student,
    *args, **kwargs)`` turns the student's object into a result (default: call
    it; exercise 7.1 calls the builder, then the automaton it returns).
    """

    number: str
    cases: Callable[[int], list[Case]]
    reference: Callable[..., torch.Tensor]
    seed: int
    atol: float = 1e-5
    rtol: float = 1e-4
    forbidden: tuple[Callable, ...] = ()
    call: Callable = _call_directly

    def __post_init__(self) -> None:
        parts = self.number.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(
                f"number must be an exercise number 'N.M', got {self.number!r}"
            )
        for fn in self.forbidden:
            if not _functions_of(fn):
                raise TypeError(
                    "forbidden must hold Python functions (they are sealed while the student's "
                    f"function runs), got {_describe(fn)}"
                )

    def check(self, student: Callable, generator: int | None = None) -> None:
        """The student's check: :func:`compare_with_reference` on the cases of the seed ``generator`` (default: the exercise's ``seed``)."""
        compare_with_reference(
            self.number,
            student,
            self.reference,
            self.cases(self.seed if generator is None else generator),
            atol=self.atol,
            rtol=self.rtol,
            forbidden=self.forbidden,
            call=self.call,
        )

    def expected(self, cases: Iterable[Case]) -> list[np.ndarray]:
        """The reference's result on each case, as a plain array (computed where this runs)."""
        return [_plain(self.reference(*c.args, **c.kwargs))[0] for c in cases]

    def sealed_names(self) -> dict[str, Callable]:
        """The functions sealed while the student's function runs, by the name a message gives them."""
        return {
            (
                f"the checker's reference ({_qualified(fn)})"
                if _qualified(fn).startswith(__name__.rpartition(".")[0])
                else f"{_qualified(fn)}, a library function that does what "
                "this exercise asks you to write"
            ): fn
            for fn in (self.reference, *self.forbidden)
        }


Exercise.__init__ = validate_params(
    number=Str(),
    cases=Function(),
    reference=Function(),
    seed=Int(),
    atol=NONNEGATIVE,
    rtol=NONNEGATIVE,
    forbidden=Instance(tuple),
    call=Function(),
)(Exercise.__init__)


@validate_params(exercise=Instance(Exercise))
def register(exercise: Exercise) -> Callable[[Callable], Callable]:
    """Decorator: record a checker for ``exercise`` in :data:`CHECKERS` and the exercise in :data:`EXERCISES`.

    The registered checker re-raises a failure (``ExerciseCheckFailed``) or the
    stub's ``NotImplementedError`` from one frame, with the checker's frames cut
    from the traceback (IPython hides that frame too: ``__tracebackhide__``).
    """
    if not isinstance(exercise, Exercise):
        raise TypeError(f"exercise must be an Exercise, got {_describe(exercise)}")
    number = exercise.number
    if number in CHECKERS:
        raise ValueError(
            f"exercise {number} already has a checker ({CHECKERS[number].__name__})"
        )

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def checker(*args, **kwargs):
            __tracebackhide__ = True  # noqa: F841 (read by IPython)
            try:
                return fn(*args, **kwargs)
            except (
                ExerciseCheckFailed,
                NotImplementedError,
            ) as exc:
                failure = exc
            tb = _trimmed(failure.__traceback__)
            if tb is None and failure.__cause__ is not None:
                # "your function raised ...": point at the student's line
                tb = _trimmed(failure.__cause__.__traceback__)
            raise failure.with_traceback(tb) from None

        CHECKERS[number] = checker
        EXERCISES[number] = exercise
        return checker

    return wrap


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"


def _qualified(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


_CALLED: list[
    str
] = []  #: the sealed functions called while sealed (read by the checker)


def _sealed_code(name: str, n_free: int = 0) -> types.CodeType:
    """The code of a function that records and refuses its call, with ``n_free`` free variables.

    A closure's code may only be swapped for code with as many free variables
    as the closure has cells (a ``validate_params`` wrapper has some); the
    sealed body never reads them.
    """
    free = [f"_free{i}" for i in range(n_free)]
    body = (
        "def sealed(*args, **kwargs):\n"
        + "".join(f"    {v}\n" for v in free)
        + "    import rnnlib.homework._core as core\n"
        f"    core._CALLED.append({name!r})\n"
        f"    raise core._SealedCall({name!r})\n"
    )
    source = "def outer():\n" + "".join(f"    {v} = None\n" for v in free)
    source += "".join(f"    {line}\n" for line in body.splitlines())
    source += "    return sealed\n"
    namespace: dict = {}
    # runs with the sealed function's globals: it reaches this module by import
    exec(compile(source, f"<sealed {name}>", "exec"), namespace)
    return namespace["outer"]().__code__


def _functions_of(fn: Callable) -> list[types.FunctionType]:
    """The Python function objects behind ``fn``: a function, a method's function, every level of a ``functools.wraps`` chain."""
    fn = getattr(fn, "__func__", fn)
    chain = []
    while isinstance(fn, types.FunctionType):
        chain.append(fn)
        fn = getattr(fn, "__wrapped__", None)
    return chain


@contextmanager
def _sealed(
    functions: dict[str, Callable],
) -> Iterator[None]:
    """While inside, each of ``functions`` (name -> function) raises when called, however it was imported.

    Every level of a wrapper chain is sealed, so the call is refused before a
    wrapper's own checks could raise an error of their own.
    """
    saved = []
    try:
        for name, fn in functions.items():
            for target in _functions_of(fn):
                saved.append((target, target.__code__))
                target.__code__ = _sealed_code(name, len(target.__code__.co_freevars))
        yield
    finally:
        for target, code in reversed(saved):
            target.__code__ = code


#: Tolerances at which a float32 computation of a float64 answer agrees with it.
FLOAT32_RTOL, FLOAT32_ATOL = 1e-4, 1e-5


def _plain(value: torch.Tensor) -> tuple[np.ndarray, str]:
    """A tensor as a plain numpy array, and its torch dtype's name (``float64``)."""
    dtype = str(value.dtype).removeprefix("torch.")
    value = value.detach().cpu()
    if value.dtype in (torch.bfloat16, torch.float16):
        value = value.to(torch.float32)
    if value.is_complex() or value.dtype not in (
        torch.float32,
        torch.float64,
        torch.bool,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
    ):
        value = value.to(torch.float64)
    return np.array(value.numpy(), copy=True), dtype


def _order(x: float) -> str:
    return "0" if x == 0 else f"1e{math.floor(math.log10(x)):+03d}"


@validate_params(
    description=Str(),
    exercise=Str(),
    got_dtype=Str(),
    atol=NONNEGATIVE,
    rtol=NONNEGATIVE,
)
def mismatch(
    exercise: str,
    description: str,
    got: np.ndarray,
    got_dtype: str,
    expected: np.ndarray,
    atol: float,
    rtol: float,
) -> str | None:
    """Why the array ``got`` (the student's result, of torch dtype ``got_dtype``) is not ``expected``; None when it is.

    Compared in ``expected``'s dtype: ``|got - expected| <= atol + rtol |expected|``
    entry by entry (``numpy.isclose``, NaN never close). The message names the
    input (``description``), the shape, how many entries differ, where the
    largest difference is and its order of magnitude, and the tolerances, but
    not the expected values: a student cannot read the answers off the messages.
    """
    for name, value in (("atol", atol), ("rtol", rtol)):
        if not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return (
            f"Exercise {exercise}: wrong output shape {tuple(got.shape)}, expected {tuple(expected.shape)}\n"
            f"  on input: {description}"
        )
    try:
        got_as = got.astype(expected.dtype)
    except (TypeError, ValueError):
        return f"Exercise {exercise}: your result (dtype {got_dtype}) cannot be compared as numbers\n  on input: {description}"
    close = np.isclose(got_as, expected, atol=atol, rtol=rtol)
    if close.all():
        return None
    diff = np.abs(got_as.astype(np.float64) - expected.astype(np.float64))
    if np.isnan(diff).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(diff))[0])
        largest = f"your result is NaN at index {where}"
    else:
        where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
        largest = (
            f"the largest difference, of order {_order(float(diff.max()))}, "
            f"is at index {where}"
        )
    expected_dtype = str(expected.dtype)
    message = (
        f"Exercise {exercise}: wrong values on input: {description}\n"
        f"  {int((~close).sum())} of {close.size} entries differ beyond the tolerance; {largest}\n"
        f"  (compared in {expected_dtype} with atol = {atol:g}, "
        f"rtol = {rtol:g}; your result has dtype {got_dtype})"
    )
    scale = float(np.abs(expected).max()) if expected.size else 0.0
    if (
        expected.dtype == np.float64
        and rtol < FLOAT32_RTOL
        and np.allclose(
            got_as,
            expected,
            rtol=FLOAT32_RTOL,
            atol=max(atol, FLOAT32_ATOL * max(scale, 1.0)),
        )
    ):
        message += "\n  your result matches to float32 precision; compute in float64"
    return message


def _run_student(
    exercise: str,
    student: Callable,
    call: Callable,
    case: Case,
    sealed: dict[str, Callable],
) -> tuple[np.ndarray, str]:
    """The student's result on ``case`` as a plain array and its dtype; raises ExerciseCheckFailed (or the stub's error)."""
    del _CALLED[:]
    try:
        with _sealed(sealed):
            got = call(
                student,
                *(a.clone() if isinstance(a, torch.Tensor) else a for a in case.args),
                **case.kwargs,
            )
    except NotImplementedError:
        raise
    except _SealedCall as exc:
        raise ExerciseCheckFailed(
            f"Exercise {exercise}: your function calls {exc.args[0]}\n"
            f"  on input: {case.description}"
        ) from None
    except Exception as exc:  # report the student's error with the input that caused it
        raise ExerciseCheckFailed(
            f"Exercise {exercise}: your function raised {type(exc).__name__}: {exc}\n"
            f"  on input: {case.description}"
        ) from exc
    if _CALLED:  # the student's code caught the sealed call's error
        raise ExerciseCheckFailed(
            f"Exercise {exercise}: your function calls {_CALLED[0]}\n"
            f"  on input: {case.description}"
        )
    if not isinstance(got, torch.Tensor):
        raise ExerciseCheckFailed(
            f"Exercise {exercise}: expected a torch.Tensor, got {_describe(got)}\n  on input: {case.description}"
        )
    try:
        return _plain(got)
    except Exception as exc:  # a sparse or otherwise unreadable tensor
        raise ExerciseCheckFailed(
            f"Exercise {exercise}: your result ({_describe(got)}) cannot be read as an array "
            f"({type(exc).__name__}: {exc})\n  on input: {case.description}"
        ) from None


@validate_params(
    exercise=Str(),
    student_fn=STUDENT_FUNCTION,
    reference_fn=Function(),
    atol=NONNEGATIVE,
    rtol=NONNEGATIVE,
    call=Function(),
)
def compare_with_reference(
    exercise: str,
    student_fn: Callable,
    reference_fn: Callable,
    cases: Iterable[Case],
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    forbidden: Iterable[Callable] = (),
    call: Callable = _call_directly,
) -> None:
    """Run ``student_fn`` and ``reference_fn`` on each case and compare the tensors they return.

    The expected values are computed first; the student's function then runs
    (through ``call(student_fn, *args, **kwargs)``) with ``reference_fn`` and
    each function of ``forbidden`` (the library functions the exercise asks the
    student to write) sealed: calling one, by any name, fails with a message
    that names it. Results are compared by :func:`mismatch`. Prints a one-line
    pass with the number of cases checked; raises :class:`ExerciseCheckFailed`
    on the first disagreement.
    """
    spec = Exercise(
        exercise,
        lambda seed: [],
        reference_fn,
        seed=0,
        atol=atol,
        rtol=rtol,
        forbidden=tuple(forbidden),
        call=call,
    )
    cases = list(cases)
    if not cases:
        raise ValueError(f"Exercise {exercise}: the checker has no test cases")
    expected_values = spec.expected(cases)
    sealed = spec.sealed_names()
    for case, expected in zip(cases, expected_values):
        got, got_dtype = _run_student(exercise, student_fn, call, case, sealed)
        message = mismatch(
            exercise,
            case.description,
            got,
            got_dtype,
            expected,
            atol,
            rtol,
        )
        if message:
            raise ExerciseCheckFailed(message)
    print(f"Exercise {exercise}: all {len(cases)} checks passed.")


#: Name of the file of a case's result, and of the status file, in :func:`run_cases`'s folder.
RESULT_FILE, STATUS_FILE = "result_{index}.npy", "status.json"


@validate_params(
    number=Str(), student=STUDENT_FUNCTION, inputs=PathLike(), folder=PathLike()
)
def run_cases(
    number: str,
    student: Callable,
    inputs: str | Path,
    folder: str | Path,
) -> None:
    """The grader's cell in the student's kernel: run ``student`` on the inputs the grader saved; save what it returns.

    ``inputs`` is a file of ``[(description, args, kwargs), ...]`` written by the grader with
    ``torch.save`` (read back with ``weights_only=True``); for each case in turn
    the student's function runs (through the exercise's ``call``, with the
    exercise's functions sealed) and its result goes to
    ``folder/result_<index>.npy`` as a plain array, with one entry per case in
    ``folder/status.json`` (rewritten after every case, so a case that never
    ends leaves the earlier ones): ``{"status": "ok", "dtype", "seconds"}``, or
    ``"failed"`` / ``"not done"`` with the message. The expected values are not
    here: the grader keeps them in its own process and compares there.
    """
    if number not in EXERCISES:
        raise ValueError(
            f"number: no exercise {number!r} (registered: {', '.join(sorted(EXERCISES))})"
        )
    exercise = EXERCISES[number]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    loaded = torch.load(inputs, weights_only=True)
    sealed = exercise.sealed_names()
    statuses: list[dict] = []
    for index, (description, args, kwargs) in enumerate(loaded):
        case = Case(str(description), tuple(args), dict(kwargs))
        started = time.perf_counter()
        entry: dict = {}
        try:
            got, dtype = _run_student(number, student, exercise.call, case, sealed)
            np.save(
                folder / RESULT_FILE.format(index=index),
                got,
                allow_pickle=False,
            )
            entry = {"status": "ok", "dtype": dtype}
        except NotImplementedError as exc:
            entry = {"status": "not done", "message": str(exc)}
        except ExerciseCheckFailed as exc:
            entry = {"status": "failed", "message": str(exc)}
        entry["seconds"] = round(time.perf_counter() - started, 4)
        statuses.append(entry)
        (folder / STATUS_FILE).write_text(json.dumps(statuses))
    (folder / STATUS_FILE).write_text(json.dumps(statuses))


@dataclass
class Result:
    """What the student's kernel returned on one case (read by the grader, :func:`read_results`)."""

    status: str  #: "ok", "failed", "not done", or "missing" (the run stopped before it)
    value: np.ndarray | None = None
    dtype: str = ""
    message: str = ""


@validate_params(folder=PathLike(), count=Int(0))
def read_results(folder: str | Path, count: int) -> list[Result]:
    """The results :func:`run_cases` saved in ``folder`` for ``count`` cases, read as data only.

    The status file is JSON and the arrays are ``.npy`` files read without
    pickles (``numpy.load(allow_pickle=False)``): a file written by a student's
    code can make a case fail, never run code in the grader. A case with no
    entry, or an unreadable one, is "missing".
    """
    if not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an int >= 0, got {count!r}")
    folder = Path(folder)
    try:
        statuses = json.loads((folder / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        statuses = []
    if not isinstance(statuses, list):
        statuses = []
    out = []
    for index in range(count):
        entry = statuses[index] if index < len(statuses) else None
        if not isinstance(entry, dict):
            out.append(
                Result(
                    "missing",
                    message="the run stopped before this case",
                )
            )
            continue
        status = str(entry.get("status"))
        if status != "ok":
            out.append(
                Result(
                    status,
                    message=str(entry.get("message", status)),
                )
            )
            continue
        try:
            value = np.load(
                folder / RESULT_FILE.format(index=index),
                allow_pickle=False,
            )
        except (OSError, ValueError) as exc:
            out.append(
                Result(
                    "missing",
                    message=f"no readable result ({exc})",
                )
            )
            continue
        out.append(Result("ok", value, str(entry.get("dtype", value.dtype))))
    return out
