"""Claims measured in chapter 8 (stability; Miller & Hardt 2019).

The book has the authors' slides and the paper's abstract and introduction,
not its body: statements cite the slide titles ("Stability") or the abstract
and introduction; the LSTM condition is our reconstruction.
"""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-rnn-contraction",
        "M&H 2019",
        "slides 'Stability' (tanh RNN, ||A|| < 1, 'since tanh is 1-Lipschitz')",
        "paper",
        8,
        "A tanh RNN with ||W||_2 = lambda < 1 is lambda-contractive: two trajectories driven by the same "
        "inputs approach each other at least like lambda^t.",
    ),
    Claim(
        "mh-unstable-remembers",
        "M&H 2019",
        "slides 'Stability' (our illustration)",
        "heuristic",
        8,
        "A tanh RNN with ||W||_2 = 2 does not forget its initial state: its two trajectories stay an O(1) "
        "distance apart.",
    ),
    Claim(
        "mh-init-not-certified",
        "M&H 2019",
        "slides 'Stability' (our survey of initializations)",
        "heuristic",
        8,
        "The spectral norms of the standard initializations approach 2 sigma sqrt(m) (random matrix theory), "
        "so none of them (torch default, Gaussian, Elman) is certifiably stable at large width.",
    ),
    Claim(
        "mh-data-dependent-stability",
        "M&H 2019",
        "abstract ('models that are nominally unstable often operate in the stable regime on the "
        "data distribution'): one-step reading, on an untrained network",
        "heuristic",
        8,
        "One step at a time, on an untrained network: a default-initialized tanh RNN whose "
        "certificate ||W||_2 is just above 1 has ||d h_t / d h_(t-1)||_2 < 1 on almost every step "
        "of random inputs. The abstract's claim is about trained models; chapter 11 tests the same "
        "one-step reading on them (mh-unstable-local-contraction), where it does not hold.",
    ),
    Claim(
        "mh-lstm-condition",
        "M&H 2019",
        "slides 'Stability' ('LSTM is stable if ... holds', formula not shown)",
        "reconstruction",
        8,
        "An LSTM projected onto the row-sum conditions (forget gates <= f_max, ||W_i||, ||W_o|| < a, "
        "||W_z|| <= a/4, ||W_f|| < a^2) has lambda_inf < 1, and its measured forget gates and l_inf "
        "Jacobians stay below the certified constants.",
    ),
    Claim(
        "hmr-lds-projected-gd",
        "M&H 2019",
        "not M&H's: Hardt, Ma & Recht 2018 (JMLR), their main theorem",
        "paper",
        8,
        "Hardt, Ma & Recht's result (listed in Part II's table because chapter 8 tests it): projected "
        "gradient descent on the l1-ball ||a||_1 <= sqrt(2)/2 learns a SISO linear system in "
        "canonical form, every iterate stable (spectral radius < 1).",
    ),
)
