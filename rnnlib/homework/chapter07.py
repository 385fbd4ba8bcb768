"""Checkers for the exercises of chapter 7 (regular languages)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._validation import validate_params
from ..languages import DFA, all_strings
from ._core import Case, Exercise, register, student_function

__all__ = ["check_exercise_7_1"]


def _every_one_followed_by_zero(z: torch.Tensor) -> torch.Tensor:
    """The language (0 | 10)*: no two adjacent 1s and no final 1 (by windows, not by an automaton)."""
    double = ((z[:, :-1] == 1) & (z[:, 1:] == 1)).any(dim=1)
    return (~double & (z[:, -1] == 0)).to(torch.float32)


def _labels_of_automaton(build_automaton: Callable[[], DFA], z: torch.Tensor):
    """How exercise 7.1 is called: build the student's automaton, then label the strings ``z`` with it."""
    dfa = build_automaton()
    if not isinstance(dfa, DFA):
        return dfa  # reported as "expected a torch.Tensor, got ..." with the input
    return dfa.accepts(z)


def _near_language(n: int, count: int, gen: torch.Generator) -> torch.Tensor:
    """``count`` strings of length ``n``: words of (0 | 10)* cut to length ``n``, every other one with one bit flipped."""
    rows = []
    for i in range(count):
        tokens: list[int] = []
        while len(tokens) < n:
            tokens += [1, 0] if torch.rand(1, generator=gen) < 0.4 else [0]
        row = torch.tensor(tokens[:n], dtype=torch.int64)
        if i % 2:
            flip = int(torch.randint(0, n, (1,), generator=gen))
            row[flip] = 1 - row[flip]
        rows.append(row)
    return torch.stack(rows)


def _cases_7_1(generator: int) -> list[Case]:
    """The inputs of exercise 7.1 for the seed ``generator``: every string of length 1 to 10, then strings near the language, lengths 11 to 40."""
    gen = torch.Generator().manual_seed(generator)
    cases = [
        Case(
            f"all {2**n} strings of length {n} (row i is i written in binary with {n} bits; "
            "build_automaton() must return dfa_from_table(...))",
            (all_strings(n),),
        )
        for n in range(1, 11)
    ]
    for _ in range(3):
        n = int(torch.randint(11, 41, (1,), generator=gen))
        cases.append(
            Case(
                f"256 strings of length {n}, half of them in the language",
                (_near_language(n, 256, gen),),
            )
        )
    return cases


EXERCISE_7_1 = Exercise(
    "7.1",
    _cases_7_1,
    _every_one_followed_by_zero,
    seed=71,
    atol=0.0,
    rtol=0.0,
    call=_labels_of_automaton,
)


@register(EXERCISE_7_1)
@validate_params(build_automaton=student_function("7.1", "a DFA"))
def check_exercise_7_1(build_automaton: Callable[[], DFA]) -> None:
    """Exercise 7.1: ``build_automaton()`` must return a :class:`rnnlib.languages.DFA` for (0 | 10)*.

    The language: binary strings in which every 1 is immediately followed by a 0.
    The automaton's labels ``dfa.accepts(z)`` on every string of length 1 to 10
    (row i of a case is i written in binary) and on longer strings near the
    language are compared with the language's.
    """
    EXERCISE_7_1.check(build_automaton)
