"""Claims measured in chapter 9 (truncation for inference; Miller & Hardt 2019, the slides
'Truncated model', 'Inference' and 'Proof of inference result')."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-inference-bound",
        "M&H 2019",
        "slides 'Inference' and 'Proof of inference result'",
        "paper",
        9,
        "For a lambda-contractive, L-Lipschitz model with phi(0, 0) = 0 and ||x_t|| <= B, "
        "||h_t - h^k_t|| <= lambda^k L B / (1 - lambda) for every t and k.",
    ),
    Claim(
        "mh-inference-rate",
        "M&H 2019",
        "slide 'Proof of inference result' (||h_t - h^k_t|| <= lambda^k ||h_(t-k)||)",
        "paper",
        9,
        "The truncation error of a lambda-contractive model decays geometrically in k at a rate at most lambda.",
    ),
    Claim(
        "mh-inference-k",
        "M&H 2019",
        "slide 'Inference' (k >> log(1/((1 - lambda) eps)); constants ours)",
        "reconstruction",
        9,
        "k = ceil(log(L_f L B / ((1 - lambda) eps)) / log(1 / lambda)) steps of context give a truncation "
        "error <= eps.",
    ),
    Claim(
        "mh-unstable-needs-recurrence",
        "M&H 2019",
        "slides 'Main result' ('either model is inherently feed-forward or it is unstable'): "
        "our illustration",
        "heuristic",
        9,
        "For this unstable network (a tanh RNN with ||W||_2 = 2) the truncation error does not decay "
        "with k: its recurrence is needed. (The paper states the converse direction: models that "
        "feed-forward networks cannot approximate are unstable; instability alone does not make a "
        "model need its recurrence.)",
    ),
)
