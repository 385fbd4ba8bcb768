"""The machinery shared by the exercise checkers of every chapter.

A checker ``check_exercise_N_M(student_fn)`` runs the student's function and
rnnlib's reference on seeded random inputs and either prints a pass, or raises
:class:`ExerciseCheckFailed` with a message that says which input went wrong
and what was expected (shapes, the largest difference, the dtype and the
tolerances of the comparison), never the reference's code. Checkers work
offline and in Colab: they only need rnnlib and torch.

Three things keep a checker honest and its messages readable:

* the expected values are computed first; then the student's function runs
  with the reference, and every library function the exercise asks the
  student to write (``forbidden``), *sealed*: their code is swapped for code
  that raises, so ``my_kernel = _reference_kernel`` or a call of
  ``rnnlib.ntk.tangent_kernel`` fails with a message that says so, however
  the student imported it;
* a result that is wrong at the checker's tolerance but right at float32's
  says "your result matches to float32 precision; compute in float64";
* a failure is raised from the checker's entry point with the checker's own
  frames cut from its traceback: what a student sees ends at their call (and,
  for an error of their function, at the line of their function that raised).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch

__all__ = [
    "ExerciseCheckFailed",
    "Case",
    "compare_with_reference",
    "register",
    "CHECKERS",
]

#: Every checker by exercise number ("N.M"), filled by :func:`register`.
CHECKERS: dict[str, Callable] = {}

_HERE = str(Path(__file__).resolve().parent)


def _trimmed(tb: types.TracebackType | None):
    """``tb`` without its leading frames in rnnlib/homework (the checker's own)."""
    while tb is not None and str(
        Path(tb.tb_frame.f_code.co_filename).resolve().parent
    ).startswith(_HERE):
        tb = tb.tb_next
    return tb


def register(number: str) -> Callable[[Callable], Callable]:
    """Decorator: record a checker under its exercise number ``"N.M"`` in :data:`CHECKERS`.

    The registered checker re-raises a failure (``ExerciseCheckFailed``) or the
    stub's ``NotImplementedError`` from one frame, with the checker's frames cut
    from the traceback (IPython hides that frame too: ``__tracebackhide__``).
    """

    def wrap(fn: Callable) -> Callable:
        if number in CHECKERS:
            raise ValueError(
                f"exercise {number} already has a checker ({CHECKERS[number].__name__})"
            )

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
        return checker

    return wrap


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

    def __post_init__(self) -> None:
        if not isinstance(self.description, str):
            raise TypeError(
                f"description must be a string, got {type(self.description).__name__}"
            )
        if not isinstance(self.args, tuple):
            raise TypeError(
                f"args must be a tuple of positional arguments, got {type(self.args).__name__}"
            )
        if not isinstance(self.kwargs, dict):
            raise TypeError(
                f"kwargs must be a dict of keyword arguments, got {type(self.kwargs).__name__}"
            )


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"


def _qualified(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


_CALLED: list[
    str
] = []  #: the sealed functions called while sealed (read by the checker)


def _sealed_code(name: str) -> types.CodeType:
    # runs with the sealed function's globals: it reaches this module by import
    source = (
        "def sealed(*args, **kwargs):\n"
        "    import rnnlib.homework._core as core\n"
        f"    core._CALLED.append({name!r})\n"
        f"    raise core._SealedCall({name!r})\n"
    )
    namespace: dict = {}
    exec(compile(source, f"<sealed {name}>", "exec"), namespace)
    return namespace["sealed"].__code__


def _function_of(fn: Callable) -> types.FunctionType | None:
    """The Python function object behind ``fn`` (a function, a method, a ``functools.wraps`` wrapper)."""
    fn = getattr(fn, "__func__", fn)
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    if (
        isinstance(fn, types.FunctionType)
        and not fn.__code__.co_freevars
    ):
        return fn
    return None


@contextmanager
def _sealed(
    functions: dict[str, Callable],
) -> Iterator[None]:
    """While inside, each of ``functions`` (name -> function) raises when called, however it was imported."""
    saved = []
    try:
        for name, fn in functions.items():
            target = _function_of(fn)
            if target is not None:
                saved.append((target, target.__code__))
                target.__code__ = _sealed_code(name)
        yield
    finally:
        for target, code in saved:
            target.__code__ = code


#: Tolerances at which a float32 computation of a float64 answer agrees with it.
FLOAT32_RTOL, FLOAT32_ATOL = 1e-4, 1e-5


def _values_message(
    exercise: str,
    case: Case,
    got: torch.Tensor,
    got_dtype: torch.dtype,
    expected: torch.Tensor,
    atol: float,
    rtol: float,
) -> str:
    diff = (got - expected).abs()
    if torch.isnan(diff).any():
        where = tuple(
            int(i) for i in torch.nonzero(torch.isnan(diff))[0]
        )
        largest = "a NaN"
    else:
        where = tuple(
            int(i) for i in torch.nonzero(diff == diff.max())[0]
        )
        largest = f"largest difference {float(diff.max()):.3g}"
    digits = 6
    while (
        digits < 17
        and f"{float(got[where]):.{digits}g}"
        == f"{float(expected[where]):.{digits}g}"
    ):
        digits += 3
    message = (
        f"Exercise {exercise}: wrong values on input: {case.description}\n"
        f"  {largest} at index {where}: got {float(got[where]):.{digits}g}, "
        f"expected {float(expected[where]):.{digits}g}\n"
        f"  (compared in {str(expected.dtype).removeprefix('torch.')} with atol = {atol:g}, "
        f"rtol = {rtol:g}; your result has dtype {str(got_dtype).removeprefix('torch.')})"
    )
    scale = (
        float(expected.abs().max()) if expected.numel() else 0.0
    )
    if (
        expected.dtype == torch.float64
        and rtol < FLOAT32_RTOL
        and torch.allclose(
            got,
            expected,
            rtol=FLOAT32_RTOL,
            atol=max(atol, FLOAT32_ATOL * max(scale, 1.0)),
        )
    ):
        message += "\n  your result matches to float32 precision; compute in float64"
    return message


def compare_with_reference(
    exercise: str,
    student_fn: Callable,
    reference_fn: Callable,
    cases: Iterable[Case],
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    forbidden: Iterable[Callable] = (),
) -> None:
    """Run ``student_fn`` and ``reference_fn`` on each case and compare the tensors they return.

    The expected values are computed first; the student's function then runs
    with ``reference_fn`` and each function of ``forbidden`` (the library
    functions the exercise asks the student to write) sealed: calling one, by
    any name, fails with a message that names it. Results are compared in the
    reference's dtype with ``atol`` and ``rtol``. Prints a one-line pass with
    the number of cases checked; raises :class:`ExerciseCheckFailed` on the
    first disagreement.
    """
    if not callable(student_fn):
        raise TypeError(
            f"Exercise {exercise}: pass your function itself, got {_describe(student_fn)}"
        )
    forbidden = tuple(forbidden)
    for fn in forbidden:
        if _function_of(fn) is None:
            raise TypeError(
                f"forbidden must hold Python functions (they are sealed while the student's "
                f"function runs), got {_describe(fn)}"
            )
    cases = list(cases)
    if not cases:
        raise ValueError(
            f"Exercise {exercise}: the checker has no test cases"
        )
    expected_values = [
        reference_fn(*case.args, **case.kwargs) for case in cases
    ]
    sealed = {
        (
            f"the checker's reference ({_qualified(fn)})"
            if _qualified(fn).startswith(
                __name__.rpartition(".")[0]
            )
            else f"{_qualified(fn)}, a library function that does what "
            "this exercise asks you to write"
        ): fn
        for fn in (reference_fn, *forbidden)
    }
    for case, expected in zip(cases, expected_values):
        del _CALLED[:]
        try:
            with _sealed(sealed):
                got = student_fn(
                    *(
                        a.clone()
                        if isinstance(a, torch.Tensor)
                        else a
                        for a in case.args
                    ),
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
        if (
            _CALLED
        ):  # the student's code caught the sealed call's error
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: your function calls {_CALLED[0]}\n"
                f"  on input: {case.description}"
            )
        if not isinstance(got, torch.Tensor):
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: expected a torch.Tensor, got {_describe(got)}\n  on input: {case.description}"
            )
        if got.shape != expected.shape:
            raise ExerciseCheckFailed(
                f"Exercise {exercise}: wrong output shape {tuple(got.shape)}, expected {tuple(expected.shape)}\n"
                f"  on input: {case.description}"
            )
        got_dtype = got.dtype
        got = got.detach().to(expected.dtype)
        if not torch.allclose(got, expected, atol=atol, rtol=rtol):
            raise ExerciseCheckFailed(
                _values_message(
                    exercise,
                    case,
                    got,
                    got_dtype,
                    expected,
                    atol,
                    rtol,
                )
            )
    print(f"Exercise {exercise}: all {len(cases)} checks passed.")
