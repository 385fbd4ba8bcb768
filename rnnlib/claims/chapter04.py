"""Claims of chapter 4: RNN inversion and the existence construction (Panigrahi & Goyal 2021, Secs. 4.2-4.4)."""

from __future__ import annotations

from . import Claim, register

_PG = "P&G 2021"

register(
    Claim(
        "pg-lemma-4.4-rate",
        _PG,
        "Lemma 4.4",
        "reconstruction",
        4,
        "With the corrected scaling p = (2/m) T v, |v.x - p.relu(T x)| falls like m^(-1/2).",
    ),
    Claim(
        "pg-lemma-4.4-printed",
        _PG,
        "Lemma 4.4",
        "paper",
        4,
        "As printed (p = 2 T v, error at most |v||x|/sqrt(m) with no constant or probability) the lemma holds.",
    ),
    Claim(
        "pg-thm-4.5-width",
        _PG,
        "Theorem 4.5, Fig. 4",
        "paper",
        4,
        "The error of recovering the tokens linearly from h^(L) decreases with the number of neurons m.",
    ),
    Claim(
        "pg-thm-4.5-length",
        _PG,
        "Theorem 4.5, Fig. 4",
        "paper",
        4,
        "The error of recovering the tokens linearly from h^(L) increases with the sequence length L.",
    ),
    Claim(
        "pg-thm-4.5-eps",
        _PG,
        "Theorem 4.5",
        "reconstruction",
        4,
        "The inversion error bound poly(L, rho, 1/m, eps_x) falls with eps_x: smaller tokens decode better. "
        "Measured (ours): a data-fitted linear decoder's error in units of the true token x_bar, not the paper's "
        "bound in units of x; the proof needs the inversion error to be small against eps_x.",
    ),
    Claim(
        "pg-sec-4.4-naive-blowup",
        _PG,
        "Sec. 4.4",
        "paper",
        4,
        "Applying Lemma 4.4 naively step after step makes the inversion error blow up with the depth.",
    ),
    Claim(
        "pg-lemma-4.1-rate",
        _PG,
        "Lemma 4.1",
        "paper",
        4,
        "An average of m random step features H(alpha, b0) 1[alpha u + beta sqrt(1-u^2) + b0 >= 0] "
        "approximates a smooth phi, with an error that falls like m^(-1/2) and grows with phi's complexity.",
    ),
    Claim(
        "pg-lemma-F.11",
        _PG,
        "Lemma F.11 (as used in Sec. 4.2)",
        "reconstruction",
        4,
        "c_i = (1/m) sum_r b_r Back_{i->L,r} tends to Var(b) = 2 for i = L and to 0 for i < L.",
    ),
    Claim(
        "pg-thm-4.3-width",
        _PG,
        "Lemma 4.2, Theorem 4.3",
        "paper",
        4,
        "The pseudo-network with W* = 0 and A* on the bias column approximates the target, "
        "with an error that falls as m grows.",
    ),
    Claim(
        "pg-thm-4.3-start-token",
        _PG,
        "Lemma 4.2 (proof)",
        "paper",
        4,
        "In the constructed pseudo-network the start token's term (i = 1) vanishes as m grows (Lemma F.11).",
    ),
    Claim(
        "pg-thm-4.3-norm",
        _PG,
        "Theorem 4.3",
        "reconstruction",
        4,
        "The constructed A* has Frobenius norm O(1/sqrt(m)): a radius tau = sqrt(m) ||A*||_2 that does not grow "
        "with m (SGD's comparator is A*/out_scale, larger by 1/out_scale).",
        closed_form=True,
    ),
    Claim(
        "pg-thm-4.3-radius",
        _PG,
        "Theorem 4.3",
        "reconstruction",
        4,
        "Smaller eps_x makes the target a function of larger radius R = |Wbar w_dagger| |h| (more complex).",
    ),
)
