"""Claims measured in chapter 8 (stability; Miller & Hardt 2019, Sec. 1 and the slides).

The body of the paper was not available (see chapter 8's note): statement
numbers are the section of the notes' source (abstract, introduction, slides);
the LSTM condition is our reconstruction.
"""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-rnn-contraction",
        "M&H 2019",
        "Sec. 1 (slides: stable RNN, ||W|| < 1/L_rho)",
        "paper",
        8,
        "A tanh RNN with ||W||_2 = lambda < 1 is lambda-contractive: two trajectories driven by the same "
        "inputs approach each other at least like lambda^t.",
    ),
    Claim(
        "mh-unstable-remembers",
        "M&H 2019",
        "Sec. 1 (our illustration)",
        "heuristic",
        8,
        "A tanh RNN with ||W||_2 = 2 does not forget its initial state: its two trajectories stay an O(1) "
        "distance apart.",
    ),
    Claim(
        "mh-init-not-certified",
        "M&H 2019",
        "Sec. 1 (our survey of initializations)",
        "heuristic",
        8,
        "The spectral norms of the standard initializations approach 2 sigma sqrt(m) (random matrix theory), "
        "so none of them (torch default, Gaussian, Elman) is certifiably stable at large width.",
    ),
    Claim(
        "mh-data-dependent-stability",
        "M&H 2019",
        "Sec. 1 (introduction: stable in a data-dependent sense)",
        "paper",
        8,
        "A nominally unstable model (||W||_2 > 1) can contract along its data: the default-initialized tanh RNN "
        "has ||d h_t / d h_{t-1}||_2 < 1 on almost every step.",
    ),
    Claim(
        "mh-lstm-condition",
        "M&H 2019",
        "Sec. 1 (slides: 'LSTM is stable if ...', formula not shown)",
        "reconstruction",
        8,
        "An LSTM projected onto the row-sum conditions (forget gates <= f_max, ||W_i||, ||W_o|| < a, "
        "||W_z|| <= a/4, ||W_f|| < a^2) has lambda_inf < 1, and its measured forget gates and l_inf "
        "Jacobians stay below the certified constants.",
    ),
    Claim(
        "hmr-lds-projected-gd",
        "M&H 2019",
        "Sec. 1 (related work: Hardt, Ma & Recht 2018)",
        "paper",
        8,
        "Projected gradient descent on the l1-ball ||a||_1 <= sqrt(2)/2 learns a SISO linear system in "
        "canonical form, every iterate stable (spectral radius < 1).",
    ),
)
