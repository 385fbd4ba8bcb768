"""The exercise checkers pass the reference, fail wrong answers with a useful message, never leak code."""

import inspect

import pytest
import torch

import rnnlib
from rnnlib import homework
from rnnlib.elman import elman_hidden_states, normalize_sequence


def test_every_checker_is_registered_and_exported():
    assert homework.CHECKERS, "no checkers registered"
    for number, fn in homework.CHECKERS.items():
        assert fn.__name__ == "check_exercise_" + number.replace(
            ".", "_"
        )
        assert getattr(homework, fn.__name__) is fn
    assert rnnlib.homework is homework


def test_chapter1_references_pass(unsealed, capsys):
    homework.check_exercise_1_1(normalize_sequence)
    homework.check_exercise_1_2(elman_hidden_states)
    out = capsys.readouterr().out
    assert (
        "Exercise 1.1: all 3 checks passed." in out
        and "Exercise 1.2: all 3 checks passed." in out
    )


def _forgot_end_token(x_bar, eps_x):
    x = normalize_sequence(x_bar, eps_x)
    x[:, -1] = 0
    return x


def _tanh_instead_of_relu(W, A, x):
    h = torch.zeros(x.shape[0], W.shape[0])
    out = []
    for t in range(x.shape[1]):
        h = torch.tanh(h @ W.T + x[:, t] @ A.T)
        out.append(h)
    return torch.stack(out, 1)


@pytest.mark.parametrize(
    "checker, wrong, expected",
    [
        (
            homework.check_exercise_1_1,
            _forgot_end_token,
            "wrong values on input: x_bar of shape",
        ),
        (
            homework.check_exercise_1_1,
            lambda x_bar, eps: x_bar,
            "wrong output shape",
        ),
        (
            homework.check_exercise_1_1,
            lambda x_bar, eps: 1 / 0,
            "your function raised ZeroDivisionError",
        ),
        (
            homework.check_exercise_1_1,
            lambda x_bar, eps: x_bar.numpy(),
            "expected a torch.Tensor",
        ),
        (
            homework.check_exercise_1_2,
            _tanh_instead_of_relu,
            "largest difference",
        ),
        (
            homework.check_exercise_1_2,
            lambda W, A, x: elman_hidden_states(W, A, x)[:, -1],
            "wrong output shape",
        ),
    ],
)
def test_wrong_answers_fail_with_a_useful_message(
    unsealed, checker, wrong, expected
):
    with pytest.raises(
        homework.ExerciseCheckFailed, match=expected
    ) as info:
        checker(wrong)
    message = str(info.value)
    # the message shows inputs and numbers, never the reference implementation's code
    for ref in (normalize_sequence, elman_hidden_states):
        for line in inspect.getsource(ref).splitlines():
            if len(
                line.strip()
            ) > 25 and not line.strip().startswith(('"', "#")):
                assert line.strip() not in message


def test_unimplemented_stub_propagates_not_implemented():
    def stub(x_bar, eps_x):
        raise NotImplementedError("Exercise 1.1")

    with pytest.raises(NotImplementedError):
        homework.check_exercise_1_1(stub)


def test_register_refuses_duplicates():
    with pytest.raises(ValueError, match="already has a checker"):
        homework.register("1.1")(lambda f: f)
