"""Checkers for the exercises of chapter 7 (regular languages)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..languages import DFA, all_strings
from ._core import ExerciseCheckFailed, register

__all__ = ["check_exercise_7_1"]


def _every_one_followed_by_zero(z: torch.Tensor) -> torch.Tensor:
    """The language (0 | 10)*: no two adjacent 1s and no final 1 (by windows, not by an automaton)."""
    double = ((z[:, :-1] == 1) & (z[:, 1:] == 1)).any(dim=1)
    return (~double & (z[:, -1] == 0)).to(torch.float32)


@register("7.1")
def check_exercise_7_1(build_automaton: Callable[[], DFA]) -> None:
    """Exercise 7.1: ``build_automaton()`` must return a :class:`rnnlib.languages.DFA` for (0 | 10)*.

    The language: binary strings in which every 1 is immediately followed by a 0.
    The automaton is run on every string of length 1 to 12 (8190 strings) and
    compared with the language; the first disagreement is reported.
    """
    if not callable(build_automaton):
        raise TypeError(f"Exercise 7.1: pass your function itself (it returns a DFA), got {type(build_automaton).__name__}")
    try:
        dfa = build_automaton()
    except NotImplementedError:
        raise
    except Exception as exc:  # report the student's error
        raise ExerciseCheckFailed(f"Exercise 7.1: your function raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(dfa, DFA):
        raise ExerciseCheckFailed(
            f"Exercise 7.1: expected an rnnlib.languages.DFA (build it with dfa_from_table), got {type(dfa).__name__}"
        )
    n_checked = 0
    for n in range(1, 13):
        z = all_strings(n)
        got, want = dfa.accepts(z), _every_one_followed_by_zero(z)
        wrong = torch.nonzero(got != want)
        if len(wrong):
            s = "".join(map(str, z[wrong[0, 0]].tolist()))
            verdict = "accepts" if got[wrong[0, 0]] == 1 else "rejects"
            should = "is not" if verdict == "accepts" else "is"
            raise ExerciseCheckFailed(
                f"Exercise 7.1: your automaton {verdict} the string {s} (length {n}), which {should} in the language; "
                f"{len(wrong)} of the {len(z)} strings of length {n} are misclassified"
            )
        n_checked += len(z)
    print(f"Exercise 7.1: all {n_checked} strings of length 1 to 12 classified correctly.")
