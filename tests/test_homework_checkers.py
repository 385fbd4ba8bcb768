"""Every exercise checker (rnnlib.homework) fails wrong answers with a message naming the exercise.

The checkers are library code: these tests start no kernel. (The machinery that
grades notebooks with them is tested in booktools/tests/test_homework_tools.py.)
"""

from __future__ import annotations

import re
import sys

import pytest
import torch

from rnnlib import homework

CHECKER_NUMBERS = sorted(
    homework.CHECKERS, key=lambda n: tuple(map(int, n.split(".")))
)


def _spy_reference(monkeypatch, checker, make_wrong):
    """Make ``checker`` compare ``make_wrong(reference_fn)`` (not the student's function) with its reference."""
    module = sys.modules[checker.__module__]
    if not hasattr(module, "compare_with_reference"):
        pytest.skip(
            f"{checker.__name__} does not use compare_with_reference; give it its own wrong-answer test"
        )
    real = module.compare_with_reference

    def spy(exercise, student_fn, reference_fn, cases, **kwargs):
        return real(
            exercise,
            make_wrong(reference_fn),
            reference_fn,
            cases,
            **kwargs,
        )

    monkeypatch.setattr(module, "compare_with_reference", spy)


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
    number, wrong, expected, monkeypatch, capsys
):
    checker = homework.CHECKERS[number]

    def raises(*args, **kwargs):
        raise RuntimeError("deliberately wrong")

    student = {
        "raises": raises,
        "returns None": lambda *a, **k: None,
    }.get(wrong, raises)
    if wrong == "zeros of the right shape":
        _spy_reference(monkeypatch, checker, _zeros)
    elif wrong == "slightly off":
        _spy_reference(monkeypatch, checker, _slightly_off)
    with pytest.raises(homework.ExerciseCheckFailed) as info:
        checker(student)
    message = str(info.value)
    assert message.startswith(f"Exercise {number}: "), message
    assert expected in message
    assert (
        "on input: " in message
        or "wrong values on input" in message
    ), "the message says which input went wrong"
    assert "passed" not in capsys.readouterr().out


@pytest.mark.parametrize("number", CHECKER_NUMBERS)
def test_every_checker_lets_the_stub_error_through(number):
    def stub(*args, **kwargs):
        raise NotImplementedError(
            f"Exercise {number}: replace this line by your solution"
        )

    with pytest.raises(
        NotImplementedError, match=re.escape(f"Exercise {number}")
    ):
        homework.CHECKERS[number](stub)
