"""Claims of chapter 7 (regular languages): Sec. 5 and Sec. I of Panigrahi & Goyal (2021)."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "pg-sec5-dl1-learned",
        "P&G 2021",
        "Sec. 5, Thm H.1",
        "paper",
        7,
        "D_L1 lies outside the additive class of Allen-Zhu & Li but inside the new concept class, so the "
        "overparametrized RNN learns it: held-out accuracy well above the best additive predictor.",
    ),
    Claim(
        "pg-sec5-eps-budget",
        "P&G 2021",
        "Thm 3.1 (eps_x)",
        "heuristic",
        7,
        "At a fixed training budget the accuracy of the fast SGD run on fresh D_L1 draws rises with eps_x "
        "over the range tested (a finite-budget observation of ours; the theorem's radius R = O(1/eps_x) "
        "points the same way).",
    ),
    Claim(
        "pg-sec5-parity-complexity",
        "P&G 2021",
        "Sec. 5",
        "reconstruction",
        7,
        "The natural PARITY neuron (1 - cos(pi s))/2 has complexity C_s = e^(Theta(sqrt(n) R)), "
        "super-polynomial in the length n.",
        closed_form=True,
    ),
    Claim(
        "pg-sec5-parity",
        "P&G 2021",
        "Sec. 5 (camera-ready)",
        "paper",
        7,
        "PARITY is easily expressible by the concept class with small complexity (so, by Thm 3.1, "
        "the overparametrized RNN learns it from polynomially many samples).",
    ),
    Claim(
        "pg-sec5-pattern-complexity",
        "P&G 2021",
        "Sec. 5",
        "reconstruction",
        7,
        "Pattern matching is efficiently representable: one neuron per offset, with complexity polynomial "
        "in the length for a fixed pattern and radius (exponential neurons: a polynomial of large degree; "
        "our counting neurons: independent of the length).",
        closed_form=True,
    ),
    Claim(
        "pg-sec5-pattern-learned",
        "P&G 2021",
        "Sec. 5",
        "paper",
        7,
        "Pattern matching (contains a fixed substring) is learned by the overparametrized RNN at both "
        "lengths tested, on held-out strings.",
    ),
    Claim(
        "pg-sec-i-tomita",
        "P&G 2021",
        "Sec. I",
        "paper",
        7,
        "RNNs perform well on regular language recognition (the Tomita grammars, held-out strings; "
        "measured with the fast SGD run, balanced accuracy on distinct strings).",
    ),
    Claim(
        "ch7-length-generalization",
        "P&G 2021",
        "Thm 3.1 (scope)",
        "heuristic",
        7,
        "Outside the theory: trained on lengths up to n, the wide RNN keeps its accuracy (above 0.75) at "
        "length 2n on the Tomita grammars it learned (an observation of ours).",
    ),
    Claim(
        "ch7-fast-dl1",
        "P&G 2021",
        "Thm 3.1 (scope)",
        "heuristic",
        7,
        "Outside the theory: SGD on W, A with B frozen at a step far above chapter 5's lazy step (activation "
        "patterns flip, the run leaves its pseudo-network) learns D_L1: on fresh i.i.d. draws it scores well "
        "above the best additive classifier and the best constant (an observation of ours, not Theorem "
        "3.1's learner).",
    ),
    Claim(
        "ch7-fast-parity",
        "P&G 2021",
        "Thm 3.1 (scope)",
        "heuristic",
        7,
        "Outside the theory: the same fast SGD run does not beat the best constant on distinct held-out "
        "PARITY strings, nor chance on unseen fresh draws, at any length tested (an observation of ours).",
    ),
    Claim(
        "ch7-fast-pattern",
        "P&G 2021",
        "Thm 3.1 (scope)",
        "heuristic",
        7,
        "Outside the theory: the fast SGD run learns pattern matching at both lengths tested, well above "
        "the best constant on distinct held-out strings (an observation of ours).",
    ),
)
