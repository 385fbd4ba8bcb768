"""Claims measured in chapter 9 (truncation for inference; Miller & Hardt 2019, Sec. 2 and the slides)."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-inference-bound",
        "M&H 2019",
        "Sec. 2 (slides: truncation for inference)",
        "paper",
        9,
        "For a lambda-contractive, L-Lipschitz model with phi(0, 0) = 0 and ||x_t|| <= B, "
        "||h_t - h^k_t|| <= lambda^k L B / (1 - lambda) for every t and k.",
    ),
    Claim(
        "mh-inference-rate",
        "M&H 2019",
        "Sec. 2 (slides: proof, ||h_t - h^k_t|| <= lambda^k ||h_{t-k}||)",
        "paper",
        9,
        "The truncation error of a lambda-contractive model decays geometrically in k at a rate at most lambda.",
    ),
    Claim(
        "mh-inference-k",
        "M&H 2019",
        "Sec. 2 (slides: k >> log(1/((1 - lambda) eps)); constants ours)",
        "reconstruction",
        9,
        "k = ceil(log(L_f L B / ((1 - lambda) eps)) / log(1 / lambda)) steps of context give a truncation "
        "error <= eps.",
    ),
    Claim(
        "mh-unstable-needs-recurrence",
        "M&H 2019",
        "Sec. 1 (introduction: models feed-forward networks cannot approximate are unstable)",
        "paper",
        9,
        "For an unstable model the truncation error does not decay with k: the recurrence is needed.",
    ),
)
