"""Checkers for the exercises of chapter 7 (regular languages)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..languages import DFA, all_strings
from ._core import Case, compare_with_reference, register

__all__ = ["check_exercise_7_1"]


def _every_one_followed_by_zero(z: torch.Tensor) -> torch.Tensor:
    """The language (0 | 10)*: no two adjacent 1s and no final 1 (by windows, not by an automaton)."""
    double = ((z[:, :-1] == 1) & (z[:, 1:] == 1)).any(dim=1)
    return (~double & (z[:, -1] == 0)).to(torch.float32)


@register("7.1")
def check_exercise_7_1(build_automaton: Callable[[], DFA]) -> None:
    """Exercise 7.1: ``build_automaton()`` must return a :class:`rnnlib.languages.DFA` for (0 | 10)*.

    The language: binary strings in which every 1 is immediately followed by a 0.
    The automaton's labels ``dfa.accepts(z)`` on every string of length 1 to 12
    (row i of a case is i written in binary) are compared with the language's.
    """
    if not callable(build_automaton):
        raise TypeError(
            f"Exercise 7.1: pass your function itself (it returns a DFA), got {type(build_automaton).__name__}"
        )

    def student_labels(z: torch.Tensor) -> torch.Tensor:
        dfa = build_automaton()
        if not isinstance(dfa, DFA):
            return dfa  # reported as "expected a torch.Tensor, got ..." with the input
        return dfa.accepts(z)

    cases = [
        Case(
            f"all {2**n} strings of length {n} (row i is i written in binary with {n} bits; "
            "build_automaton() must return dfa_from_table(...))",
            (all_strings(n),),
        )
        for n in range(1, 13)
    ]
    compare_with_reference(
        "7.1",
        student_labels,
        _every_one_followed_by_zero,
        cases,
        atol=0.0,
        rtol=0.0,
    )
