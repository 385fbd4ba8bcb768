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
        assert fn.__name__ == "check_exercise_" + number.replace(".", "_")
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
            "entries differ beyond the tolerance; the largest difference, of order",
        ),
        (
            homework.check_exercise_1_2,
            lambda W, A, x: elman_hidden_states(W, A, x)[:, -1],
            "wrong output shape",
        ),
    ],
)
def test_wrong_answers_fail_with_a_useful_message(unsealed, checker, wrong, expected):
    with pytest.raises(homework.ExerciseCheckFailed, match=expected) as info:
        checker(wrong)
    message = str(info.value)
    # the message shows inputs and numbers, never the reference implementation's code
    for ref in (normalize_sequence, elman_hidden_states):
        for line in inspect.getsource(ref).splitlines():
            if len(line.strip()) > 25 and not line.strip().startswith(('"', "#")):
                assert line.strip() not in message


def test_unimplemented_stub_propagates_not_implemented():
    def stub(x_bar, eps_x):
        raise NotImplementedError("Exercise 1.1")

    with pytest.raises(NotImplementedError):
        homework.check_exercise_1_1(stub)


def test_register_refuses_duplicates():
    with pytest.raises(ValueError, match="already has a checker"):
        homework.register(homework.EXERCISES["1.1"])(lambda f: f)


def test_messages_never_show_the_expected_values(unsealed):
    """A student cannot read the answers off the messages, case by case."""
    spec = homework.EXERCISES["8.1"]
    cases = spec.cases(spec.seed)
    expected = spec.expected(cases)

    def off(W, radius):
        return W * 0.5

    with pytest.raises(homework.ExerciseCheckFailed) as info:
        homework.check_exercise_8_1(off)
    message = str(info.value)
    assert "entries differ beyond the tolerance" in message
    for value in expected[0].ravel()[:20]:
        for digits in (3, 4, 6):
            assert (
                f"{value:.{digits}g}" not in message.replace("1e", "")
                or abs(value) < 1e-3
            )


def test_a_fresh_seed_gives_fresh_inputs_and_the_same_kinds_of_case():
    for number, spec in homework.EXERCISES.items():
        a, b = spec.cases(spec.seed), spec.cases(2**61 + 17)
        assert len(a) == len(b) >= 3, number
        assert [c.description for c in spec.cases(spec.seed)] == [
            c.description for c in a
        ], f"{number}: the same seed, the same inputs"
        differ = any(
            not torch.equal(x, y)
            for ca, cb in zip(a, b)
            for x, y in zip(ca.args, cb.args)
            if isinstance(x, torch.Tensor)
            and isinstance(y, torch.Tensor)
            and x.shape == y.shape
        ) or any(ca.description != cb.description for ca, cb in zip(a, b))
        assert differ, f"{number}: another seed gives the same inputs"


def test_mismatch_compares_plain_arrays_without_torch():
    import numpy as np

    expected = np.array([1.0, 2.0, 3.0])
    assert (
        homework.mismatch(
            "9.9",
            "x",
            expected + 1e-9,
            "float64",
            expected,
            1e-8,
            1e-6,
        )
        is None
    )
    message = homework.mismatch(
        "9.9", "x", expected * 2, "float64", expected, 1e-8, 1e-6
    )
    assert "3 of 3 entries differ" in message and "of order 1e+00" in message
    assert "wrong output shape (2,)" in homework.mismatch(
        "9.9", "x", expected[:2], "float64", expected, 1e-8, 1e-6
    )
    nan = homework.mismatch(
        "9.9",
        "x",
        np.array([1.0, np.nan, 3.0]),
        "float64",
        expected,
        1e-8,
        1e-6,
    )
    assert "NaN at index (1,)" in nan
