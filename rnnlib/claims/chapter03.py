"""Claims tested in chapter 3 (the pseudo-network): eq. (4) and how close the RNN stays to it."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "pg-eq-4-taylor",
        "P&G 2021",
        "eq. (4) (Sec. 4.1)",
        "reconstruction",
        3,
        "The pseudo-network of eq. (4) is the directional derivative (Jacobian-vector product) of the "
        "RNN output in the weights (our lemma; checked against torch.func.jvp).",
    ),
    Claim(
        "pg-lemma-G.3",
        "P&G 2021",
        "Lemma G.3 (Sec. 4.1)",
        "paper",
        3,
        "The pseudo-network approximates F_rnn(W + W', A + A') - F_rnn(W, A) when the weights stay close "
        "to initialization (the lemma's radius and bound are in the unavailable appendix: trend only).",
    ),
    Claim(
        "pg-gap-random-rate",
        "P&G 2021",
        "Lemma G.3 (Sec. 4.1)",
        "heuristic",
        3,
        "Along random directions of spectral norm tau/sqrt(m), the flip fraction scales like tau/sqrt(m) "
        "and the relative RNN-pseudo-network gap like sqrt(tau) m^(-1/4) (our heuristic).",
    ),
    Claim(
        "pg-gap-aligned-rate",
        "P&G 2021",
        "Lemma G.3 (Sec. 4.1)",
        "heuristic",
        3,
        "Along B-aligned directions of the same size (the gradient, the construction's shape) the "
        "pseudo-network's output is O(tau) instead of O(tau/sqrt(m)), so the relative gap is smaller "
        "and falls like sqrt(tau) m^(-3/4) (our heuristic).",
    ),
)
