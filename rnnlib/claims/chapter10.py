"""Claims measured in chapter 10 (truncation for training; Miller & Hardt 2019, the slides
'Training with gradient descent', 'Proof of training result' and 'Connection to algorithmic
stability')."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-gradient-difference",
        "M&H 2019",
        "slide 'Proof of training result' ('stable models have vanishing gradients'; form gamma k lambda^k ours)",
        "reconstruction",
        10,
        "For a lambda-stable model, ||grad p_T - grad p^k_T|| <= gamma k lambda^k with gamma independent of k.",
    ),
    Claim(
        "mh-unstable-gradient-difference",
        "M&H 2019",
        "slide 'Proof of training result' (our illustration of its step 1 without stability)",
        "heuristic",
        10,
        "For this unstable network (a tanh RNN with ||W||_2 = 2) the truncated gradient does not "
        "approach the full gradient as k grows.",
    ),
    Claim(
        "mh-training-truncation",
        "M&H 2019",
        "slide 'Training with gradient descent' (||w_N - w^k_N|| <= eps if k >> log(N / eps))",
        "paper",
        10,
        "Gradient descent with step alpha / i on a stable model and on its k-step truncation, from the same "
        "start, ends at weights whose distance falls by orders of magnitude as k grows.",
    ),
    Claim(
        "mh-decaying-step-needed",
        "M&H 2019",
        "slide 'Connection to algorithmic stability' ('Decaying learning rate necessary for analysis "
        "in both cases. Here, even necessary in experiment.')",
        "paper",
        10,
        "With a constant step the full and truncated runs drift apart where a decaying step keeps them close.",
    ),
)
