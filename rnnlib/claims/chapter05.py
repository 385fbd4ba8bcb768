"""Claims of chapter 5 (SGD in the lazy regime, Panigrahi & Goyal 2021, Sec. 3 and Theorem 3.1)."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "pg-thm-3.1-constants",
        "P&G 2021",
        "Theorem 3.1",
        "paper",
        5,
        "SGD with out_scale = eps/(10 L rho) and eta = Theta(1/(eps rho^2 m)) reaches OPT + eps on average "
        "over its iterates; the prescribed constants are far outside what a CPU run can use.",
    ),
    Claim(
        "pg-lazy-relative-movement",
        "P&G 2021",
        "Sec. 4.1",
        "heuristic",
        5,
        "Trained to the same function-space progress, the relative weight movement ||W_T - W_0||_F / ||W_0||_F "
        "falls like 1/m while sqrt(m) ||W_T - W_0||_2 stays roughly constant. (Largely implied by the book's "
        "step eta = c / (out_scale^2 mean K) with K proportional to m: a test of the scaling argument, not of "
        "a prediction of the paper.)",
    ),
    Claim(
        "pg-lazy-flips",
        "P&G 2021",
        "Sec. 4.1",
        "heuristic",
        5,
        "The fraction of activation patterns that flip during training falls as the width m grows.",
    ),
    Claim(
        "pg-lemma-d3-coupling",
        "P&G 2021",
        "Lemma D.3",
        "reconstruction",
        5,
        "Under identical SGD the RNN stays close to its pseudo-network, and closer the wider it is "
        "(the coupling error of the optimization argument).",
    ),
    Claim(
        "pg-out-scale-tradeoff",
        "P&G 2021",
        "Sec. 4.1",
        "heuristic",
        5,
        "A large output scale lets the random output at initialization swamp the target; a small one makes "
        "the weights move far and many activation patterns flip.",
    ),
    Claim(
        "pg-lemma-d3-kernel-reference",
        "P&G 2021",
        "Lemma D.3",
        "reconstruction",
        5,
        "The RNN's training loss follows that of the linearized RNN trained by the same SGD, a convex problem "
        "whose kernel-ridge solution is a reference.",
    ),
    Claim(
        "pg-lemma-d3-convexity-gap",
        "P&G 2021",
        "Lemma D.3",
        "reconstruction",
        5,
        "Along the RNN's own SGD iterates theta_t, the loss is approximately convex towards a fixed comparator "
        "theta* (the kernel-ridge solution): the linearization error delta_t = out_scale |F(theta*) - F(theta_t) "
        "- <grad F(theta_t), theta* - theta_t>|, the additive error of the regret bound, shrinks as m grows.",
    ),
)

register(
    Claim(
        "pg-ntk-limit-rate",
        "P&G 2021",
        "Theorem 3.1",
        "reconstruction",
        5,
        "The tangent kernel of the Elman RNN divided by the width m converges to the infinite-width limit "
        "kernel (rnnlib.ntk.limit_tangent_kernel, derivation ours), with a relative error of one network that "
        "falls like m^(-1/2) (a fitted slope in [-0.8, -0.3] over m = 128..2048).",
    ),
    Claim(
        "pg-ntk-limit-predictor",
        "P&G 2021",
        "Theorem 3.1",
        "reconstruction",
        5,
        "The kernel reference of the lazy learner (kernel ridge with the finite tangent kernel) approaches the "
        "limit-kernel predictor fitted around the same initial output as m grows (RMS difference at m = 1024 "
        "below 0.8 of that at m = 128 on every seed).",
    ),
)
