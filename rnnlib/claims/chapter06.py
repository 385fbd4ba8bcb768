"""Claims of chapter 6 (generalization, Panigrahi & Goyal 2021, Lemma D.4 and Theorem D.5)."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "pg-rademacher-closed-form",
        "P&G 2021",
        "Lemma D.4",
        "reconstruction",
        6,
        "For the linear class {out_scale <theta, grad F> : ||theta|| <= B} the empirical Rademacher complexity "
        "lies between out_scale B sqrt(sum_n K(x_n, x_n)) / (sqrt(2) N) and out_scale B sqrt(sum_n K(x_n, x_n)) / N.",
        closed_form=True,
    ),
    Claim(
        "pg-gap-below-bound",
        "P&G 2021",
        "Theorem D.5",
        "reconstruction",
        6,
        "The train/test gap of the trained RNN never exceeds the uniform bound 2 R_Z + 4 b sqrt(2 log(4/delta) / N) "
        "(empirical complexity). At the book's sizes the bound exceeds log 2, above any gap the test loss allows, "
        "so the comparison cannot fail: not testable here.",
    ),
    Claim(
        "pg-gap-shrinks-with-n",
        "P&G 2021",
        "Theorem 3.1",
        "heuristic",
        6,
        "At a fixed number of passes over the data (T = epochs N steps), the train/test gap shrinks as N grows.",
    ),
    Claim(
        "pg-complexity-independent-of-m",
        "P&G 2021",
        "Theorem 3.1",
        "reconstruction",
        6,
        "The complexity term out_scale ||theta_T|| sqrt(sum K(x_n, x_n)) / N of the trained network is roughly "
        "independent of the width m (m enters the theorem only through log m).",
    ),
    Claim(
        "pg-gap-width",
        "P&G 2021",
        "Theorem 3.1",
        "heuristic",
        6,
        "The train/test gap of the trained RNN does not grow with the width m.",
    ),
)

register(
    Claim(
        "pg-bound-nonvacuous-passes",
        "P&G 2021",
        "Theorem D.5",
        "reconstruction",
        6,
        "The Rademacher bound of the lazy learner becomes non-vacuous (below log 2) once N is large enough, "
        "for SGD with a fixed number of passes over the data (T = epochs N), evaluated at infinite width "
        "with the limit tangent kernel up to N = 10^4.",
    ),
    Claim(
        "pg-bound-nonvacuous-fixed-t",
        "P&G 2021",
        "Theorem D.5",
        "reconstruction",
        6,
        "With T fixed (Theorem 3.1's T depends on eps only), the Rademacher bound of the lazy learner at "
        "infinite width falls like N^(-1/2) and drops below log 2 at a finite N, measured on a grid up to "
        "N = 10^5.",
    ),
)
