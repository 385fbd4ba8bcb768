"""Claims tested in chapter 2 (the concept class): complexity measures, D_L1 and the additive class."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "pg-def-3.3-cross-token",
        "P&G 2021",
        "Def. 3.3",
        "paper",
        2,
        "A target of the concept class can couple any two tokens (a nonzero two-token interaction), "
        "which a sum of functions of single tokens cannot.",
    ),
    Claim(
        "pg-def-2.1-monomial",
        "P&G 2021",
        "Def. 2.1 (Sec. 2)",
        "paper",
        2,
        "For phi(z) = z^k, C_s(phi, R) = O(R^k) and C_eps(phi, R) = O(R^k log^(k/2)(1/eps)).",
        closed_form=True,
    ),
    Claim(
        "pg-def-2.1-entire-O1",
        "P&G 2021",
        "Def. 2.1 (Sec. 2)",
        "paper",
        2,
        "For sin and e^z, C_s = O(1) (at R = O(1)).",
        closed_form=True,
    ),
    Claim(
        "pg-def-2.1-entire-growth",
        "P&G 2021",
        "Def. 2.1 (Sec. 2)",
        "reconstruction",
        2,
        "For sin and e^z, C_s(phi, R) grows like e^(R(1 + o(1))) as R grows (our computation).",
        closed_form=True,
    ),
    Claim(
        "pg-def-2.1-tanh",
        "P&G 2021",
        "Def. 2.1 (Sec. 2)",
        "reconstruction",
        2,
        "tanh is not in the class at large radius: C_s(tanh, R) is infinite for R >= pi/2 (our computation).",
        closed_form=True,
    ),
    Claim(
        "pg-sec-2-cs-le-ceps",
        "P&G 2021",
        "Sec. 2",
        "paper",
        2,
        "C_s(phi, R) <= C_eps(phi, R) always.",
    ),
    Claim(
        "pg-thm-H.1-dl1-not-additive",
        "P&G 2021",
        "Thm. H.1 (Sec. 5)",
        "paper",
        2,
        "D_L1 (exactly one 1) is not representable in the additive concept class of Allen-Zhu & Li; "
        "measured as the best additive least-squares fit, whose loss stays at 2/9 at every length.",
    ),
    Claim(
        "pg-sec-5-dl1-one-neuron",
        "P&G 2021",
        "Sec. 5",
        "paper",
        2,
        "D_L1 is recognized by one neuron with a quadratic activation (explicit weights: our reconstruction).",
    ),
    Claim(
        "pg-sec-5-dl1-complexity",
        "P&G 2021",
        "Sec. 5",
        "paper",
        2,
        "The D_L1 neuron has complexity polynomial in the length (C_s linear in n at a fixed radius).",
        closed_form=True,
    ),
)
