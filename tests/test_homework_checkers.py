"""Every exercise checker (rnnlib.homework) fails wrong answers with a message naming the exercise.

The checkers are library code: these tests start no kernel. (The machinery that
grades notebooks with them is tested in booktools/tests/test_homework_tools.py.)
"""

from __future__ import annotations

import inspect
import re

import pytest
import torch

from rnnlib import homework

CHECKER_NUMBERS = sorted(homework.CHECKERS, key=lambda n: tuple(map(int, n.split("."))))


def _lookup(spec, make_wrong):
    """A student function that answers ``make_wrong(reference)`` on the cases of ``spec``'s own seed.

    The reference is sealed while the student's function runs: its values are
    looked up in a table made beforehand.
    """
    table = [
        (c.args, spec.reference(*c.args, **c.kwargs)) for c in spec.cases(spec.seed)
    ]

    def same(a, b):
        if isinstance(a, torch.Tensor):
            return isinstance(b, torch.Tensor) and torch.equal(a, b)
        return a == b

    def lookup(*args, **kwargs):
        for known, out in table:
            if all(same(a, b) for a, b in zip(known, args)):
                return out.clone()
        raise AssertionError("an input the checker did not list")

    return make_wrong(lookup)


def _compare(spec, student):
    """What the checker of ``spec`` says of ``student``, a function of the exercise's arguments."""
    homework.compare_with_reference(
        spec.number,
        student,
        spec.reference,
        spec.cases(spec.seed),
        atol=spec.atol,
        rtol=spec.rtol,
        forbidden=spec.forbidden,
    )


def _zeros(reference):
    return lambda *a, **k: torch.zeros_like(reference(*a, **k))


def _slightly_off(reference):
    def wrong(*a, **k):
        out = reference(*a, **k)
        return out * 1.01 + 1e-3

    return wrong


@pytest.mark.parametrize("number", CHECKER_NUMBERS)
@pytest.mark.parametrize(
    "wrong, expected",
    [
        (
            "raises",
            "your function raised RuntimeError: deliberately wrong",
        ),
        (
            "returns None",
            "expected a torch.Tensor, got NoneType None",
        ),
        ("zeros of the right shape", "wrong values on input: "),
        ("slightly off", "wrong values on input: "),
    ],
)
def test_every_checker_fails_a_wrong_answer_naming_the_exercise(
    number, wrong, expected, capsys
):
    spec = homework.EXERCISES[number]

    def raises(*args, **kwargs):
        raise RuntimeError("deliberately wrong")

    student = {
        "raises": raises,
        "returns None": lambda *a, **k: None,
        "zeros of the right shape": _lookup(spec, _zeros),
        "slightly off": _lookup(spec, _slightly_off),
    }[wrong]
    with pytest.raises(homework.ExerciseCheckFailed) as info:
        _compare(spec, student)
    message = str(info.value)
    assert message.startswith(f"Exercise {number}: "), message
    assert expected in message
    assert "on input: " in message or "wrong values on input" in message, (
        "the message says which input went wrong"
    )
    assert "passed" not in capsys.readouterr().out


@pytest.mark.parametrize("number", CHECKER_NUMBERS)
def test_every_checker_lets_the_stub_error_through(number):
    def stub(*args, **kwargs):
        raise NotImplementedError(
            f"Exercise {number}: replace this line by your solution"
        )

    with pytest.raises(NotImplementedError, match=re.escape(f"Exercise {number}")):
        homework.CHECKERS[number](stub)


def _float32(reference):
    def wrong(*a, **k):
        return (reference(*a, **k).float() * (1 + 5e-6)).double()

    return wrong


@pytest.mark.parametrize("number", CHECKER_NUMBERS)
def test_a_wrong_value_names_the_dtype_and_tolerance_and_float32(
    number,
):
    """A result right to float32 precision only is told to compute in float64."""
    spec = homework.EXERCISES[number]
    try:
        _compare(spec, _lookup(spec, _float32))
    except homework.ExerciseCheckFailed as exc:
        message = str(exc)
    else:
        pytest.skip(f"{number}: a float32 answer passes its tolerance")
    if "wrong values" not in message:
        pytest.skip(f"{number}: compares no floating-point values")
    assert re.search(
        r"\(compared in \w+ with atol = \S+, rtol = \S+; your result has dtype float64\)",
        message,
    ), message
    if "compared in float64" in message:
        assert (
            "your result matches to float32 precision; compute in float64" in message
        ), message


@pytest.mark.parametrize("number", CHECKER_NUMBERS)
def test_the_checkers_reference_cannot_be_handed_in(
    number,
):
    """``my_fn = _reference_...`` (or calling it inside) fails, however it was imported."""
    spec = homework.EXERCISES[number]
    with pytest.raises(homework.ExerciseCheckFailed, match="your function calls "):
        _compare(spec, lambda *a, **k: spec.reference(*a, **k))
    # unsealed again afterwards
    assert not spec.reference.__code__.co_filename.startswith("<sealed")


def test_calling_the_library_function_the_exercise_reimplements_fails():
    from rnnlib.homework.chapter05 import _reference_kernel
    from rnnlib.ntk import tangent_kernel

    def calls_library(W, A, B, x):
        return _reference_kernel(W, A, B, x)

    for student in (_reference_kernel, calls_library):
        with pytest.raises(
            homework.ExerciseCheckFailed,
            match=r"your function calls the checker's reference \(rnnlib\.homework\.chapter05\._reference_kernel\)",
        ):
            homework.check_exercise_5_2(student)

    def swallowing(W, A, B, x):  # catching the sealed call does not help
        try:
            return tangent_kernel(None, x)
        except BaseException:
            return torch.zeros(x.shape[0], x.shape[0], dtype=x.dtype)

    with pytest.raises(
        homework.ExerciseCheckFailed,
        match=r"your function calls rnnlib\.ntk\.tangent_kernel, a library function",
    ):
        homework.check_exercise_5_2(swallowing)
    # every level of the validating wrapper is restored
    assert not tangent_kernel.__code__.co_filename.startswith("<sealed")
    assert inspect.unwrap(tangent_kernel).__code__.co_name == "tangent_kernel"


def test_a_checker_traceback_ends_at_the_students_code():
    """Only the checker's entry frame (hidden in IPython) stays; the rest is the student's."""

    def student(W, A, B, x):
        return W[10_000]  # IndexError in the student's own line

    for fn, last in (
        (student, "student"),
        (lambda *a: None, None),
    ):
        with pytest.raises(homework.ExerciseCheckFailed) as info:
            homework.check_exercise_5_2(fn)
        frames = []
        tb = info.value.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        in_homework = [f for f in frames if "rnnlib/homework" in f.f_code.co_filename]
        assert len(in_homework) == 1
        assert in_homework[0].f_locals.get("__tracebackhide__")
        if last:
            assert frames[-1].f_code.co_name == last
        assert info.value.__suppress_context__
