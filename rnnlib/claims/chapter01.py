"""Claims tested in chapter 1 (RNNs as functions of sequences): the network at initialization."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "pg-init-norm-mean",
        "P&G 2021",
        "Def. 3.1-3.2",
        "heuristic",
        1,
        "At initialization E||h^(l)||^2 = sum_{j<=l} ||x^(j)||^2, i.e. the hidden-state norms stay near 1 "
        "along a normalized sequence (our fresh-rows heuristic).",
    ),
    Claim(
        "pg-init-norm-spread",
        "P&G 2021",
        "Def. 3.1-3.2",
        "heuristic",
        1,
        "The spread of ||h^(l)|| across networks shrinks with the width like m^(-1/2) and grows along "
        "the sequence (our heuristic).",
    ),
    Claim(
        "pg-init-half-active",
        "P&G 2021",
        "Def. 3.2",
        "heuristic",
        1,
        "At initialization each neuron is active with probability 1/2 at every step.",
    ),
    Claim(
        "pg-def-3.1-flips",
        "P&G 2021",
        "Def. 3.1",
        "heuristic",
        1,
        "Changing one true token flips a fraction of the activation patterns proportional to eps_x "
        "(our heuristic for the paper's remark that the normalization bounds pattern changes).",
    ),
)
