"""Stability of recurrent models (chapters 8 and 11; Miller & Hardt 2019, Sections 1 and 3).

A recurrent map ``phi_w`` is *lambda-contractive* in the state if
``||phi_w(h, x) - phi_w(h', x)|| <= lambda ||h - h'||`` for all ``h, h', x``,
and *stable* if ``lambda < 1``. This module computes certified values of
lambda, enforces stability by projection, and measures the data-dependent
contraction ``||d s_t / d s_{t-1}||_2`` along a sequence.

* Linear system ``W h + U x``: ``lambda = ||W||_2``.
* RNN ``rho(W h + U x)`` with an ``L_rho``-Lipschitz ``rho``: ``lambda = L_rho ||W||_2``
  (tanh, relu: ``L_rho = 1``).
* LSTM: a sufficient condition that we reconstruct (chapter 8; the paper's
  own condition is not shown in the sources the book has, the authors' slides
  and the abstract and introduction), whose constants match the radii in the
  authors' code (their fork of the TCN repository, locuslab/TCN). With ``fbar`` a bound on every forget gate and ``a = 1 - fbar``,
  the one-step map is contractive in the max-norm over ``(c, h)`` with::

      lambda_inf = fbar + ||W_i||_inf / 4 + ||W_z||_inf + ||W_o||_inf / 4 + ||W_f||_inf / (4 a)

  (``||.||_inf`` = the largest absolute *row* sum), which is ``< 1`` under
  ``||W_i||, ||W_o|| < a``, ``||W_z|| <= a/4``, ``||W_f|| < a^2``.

Every certified ``lambda`` is a guaranteed upper bound (exact singular values,
rounded up; never a power-iteration estimate), and models with NaN/inf weights
are refused. The module is laid out in the order of the chapters it serves:

1. chapter 8, section 1, certificates: :func:`activation_lipschitz`, :func:`inf_norm`,
   :func:`state_lipschitz`, :func:`input_lipschitz` (also chapter 9), :func:`lstm_forget_bound`,
   :func:`lstm_lambda_inf`, :func:`lstm_radii`, :func:`certify`;
2. chapter 8, section 2, projections onto the stable sets (also chapters 10, 11):
   :func:`project_spectral`, :func:`project_spectral_`, :func:`project_l1_rows`, :func:`project_lstm_`;
3. chapter 8, section 3, the spectral norm at initialization: :func:`initialization_norms`;
4. chapter 8 sidebar (Hardt, Ma & Recht): :func:`lds_markov_parameters`, :func:`fit_lds_canonical`;
5. chapters 8 and 11, the data-dependent contraction along a trajectory:
   :func:`state_jacobians`, :func:`jacobian_norms`, :func:`state_distance`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._linalg import spectral_norm, spectral_norm_bound
from ._rng import as_generator
from ._validation import (
    NONNEGATIVE,
    Choice,
    DivergenceError,
    Either,
    Int,
    Ints,
    Model,
    Real,
    Seq,
    Str,
    Tensor,
    validate_params,
)
from .dynamical import (
    INIT_SCHEMES,
    INPUTS,
    LSTM,
    MATRIX_RNN,
    MODEL,
    STATES,
    LinearSystem,
    RecurrentModel,
    SimpleRNN,
    recurrent_matrix,
)

__all__ = [
    # chapter 8, section 1: certificates
    "activation_lipschitz",
    "spectral_norm",
    "state_lipschitz",
    "input_lipschitz",
    "inf_norm",
    "lstm_forget_bound",
    "lstm_lambda_inf",
    "lstm_radii",
    "StabilityCertificate",
    "certify",
    # chapter 8, section 2: projections onto the stable set
    "project_spectral",
    "project_spectral_",
    "project_l1_rows",
    "project_lstm_",
    "AUTHORS_LSTM_RADII",
    "rescale_lstm_columns_",
    # chapter 8, section 3: the spectral norm at initialization
    "initialization_norms",
    # chapter 8, sidebar: a stable linear dynamical system learned by projected GD
    "lds_markov_parameters",
    "LDSFit",
    "fit_lds_canonical",
    # chapters 8 and 11: the data-dependent contraction along a trajectory
    "state_jacobians",
    "jacobian_norms",
    "state_distance",
]

_LIPSCHITZ = {
    "identity": 1.0,
    "tanh": 1.0,
    "relu": 1.0,
    "sigmoid": 0.25,
}
_EPS64 = float(torch.finfo(torch.float64).eps)

#: The smallest ``margin`` :func:`project_lstm_` accepts: below it, float rounding of
#: the stored weights could eat the margin and leave ``lambda_inf`` at 1.
MIN_LSTM_MARGIN = 1e-6


# --- Chapter 8, section 1: certificates ---------------------------------------------------------


@validate_params(activation=Choice(*_LIPSCHITZ))
def activation_lipschitz(activation: str) -> float:
    """The Lipschitz constant ``L_rho`` of an activation: 1 for identity, tanh, relu; 1/4 for sigmoid."""
    return _LIPSCHITZ[activation]


@validate_params(W=Tensor(ndim=2))
def inf_norm(W: torch.Tensor) -> float:
    """``||W||_inf = max_i sum_j |W_ij|``, the largest absolute **row** sum, in float64 (chapter 8)."""
    return float(W.detach().double().abs().sum(dim=1).max())


@validate_params(model=MATRIX_RNN)
def state_lipschitz(model: LinearSystem | SimpleRNN) -> float:
    """The certified contraction constant ``lambda = L_rho ||W||_2`` of a linear system or RNN (chapter 8).

    ``||W||_2`` comes from :func:`rnnlib._linalg.spectral_norm_bound`: exact up to
    float64 rounding and rounded *up*, at every width, so the value is a
    guaranteed upper bound (never a power-iteration estimate from below).
    For the LSTM use :func:`lstm_lambda_inf` (a max-norm constant) or :func:`certify`.
    """
    return activation_lipschitz(model.activation) * spectral_norm_bound(model.W)


@validate_params(model=MATRIX_RNN)
def input_lipschitz(model: LinearSystem | SimpleRNN) -> float:
    """``L = L_rho ||U||_2`` (an upper bound, as in :func:`state_lipschitz`): the L of chapter 9's bound."""
    return activation_lipschitz(model.activation) * spectral_norm_bound(model.U)


@validate_params("x_bound", model=Model(LSTM))
def lstm_forget_bound(model: LSTM, x_bound: float = 1.0) -> float:
    """An upper bound ``fbar`` on every forget gate of an LSTM on reachable states (chapter 8).

    Since ``|h|_inf <= 1`` and ``|x_t|_inf <= x_bound``,
    ``f_j <= sigma(||W_f,j||_1 + x_bound ||U_f,j||_1 + b_f,j)``; returns the
    maximum over rows j, computed in float64. Refuses NaN/inf weights.
    """
    return _forget_bound(model, x_bound)


def _forget_bound(model: LSTM, x_bound: float) -> float:
    g = model.gate_matrices()
    with torch.no_grad():
        pre = (
            g["W_f"].double().abs().sum(1)
            + x_bound * g["U_f"].double().abs().sum(1)
            + g["b_f"].double()
        )
        return float(torch.sigmoid(pre.max()))


@validate_params(
    "x_bound",
    model=Model(LSTM),
    f_bound=Real(0.0, 1.0, high_open=True),
)
def lstm_lambda_inf(
    model: LSTM,
    x_bound: float = 1.0,
    *,
    f_bound: float | None = None,
) -> float:
    """The max-norm contraction constant of an LSTM cell, by the reconstructed bound of chapter 8.

    ``lambda_inf = fbar + ||W_i||_inf/4 + ||W_z||_inf + ||W_o||_inf/4 + ||W_f||_inf / (4 (1 - fbar))``
    with ``fbar = f_bound`` if given, else :func:`lstm_forget_bound` ``(model, x_bound)``.
    Valid on reachable states (``c_0 = h_0 = 0``, ``|x_t|_inf <= x_bound``). Returns ``inf`` if ``fbar = 1``.
    Refuses NaN/inf weights.
    """
    return _lambda_inf(model, x_bound, f_bound)


def _lambda_inf(model: LSTM, x_bound: float, f_bound: float | None) -> float:
    fbar = _forget_bound(model, x_bound) if f_bound is None else f_bound
    if fbar >= 1.0:
        return math.inf
    g = model.gate_matrices()
    n = {
        k: float(g[k].detach().double().abs().sum(1).max())
        for k in ("W_i", "W_f", "W_z", "W_o")
    }
    return fbar + n["W_i"] / 4 + n["W_z"] + n["W_o"] / 4 + n["W_f"] / (4 * (1 - fbar))


@validate_params("f_max")
def lstm_radii(f_max: float) -> dict[str, float]:
    """The row-sum limits of the LSTM condition for a forget-gate bound ``f_max`` (chapter 8).

    With ``a = 1 - f_max``: ``W_i, W_o -> a``, ``W_z -> a/4``, ``W_f -> a^2``.
    """
    a = 1.0 - f_max
    return {"W_i": a, "W_f": a * a, "W_z": a / 4, "W_o": a}


@dataclass(frozen=True)
class StabilityCertificate:
    """What :func:`certify` found: is the model certifiably stable, with which lambda, in which norm.

    ``lam`` is a guaranteed upper bound on the model's contraction constant in
    ``norm`` (never an estimate). ``l2_iterations`` is, for an LSTM, the number
    r of steps after which the iterated map is a contraction in the Euclidean
    norm (``sqrt(2H) lambda_inf^r < 1``); 1 for the other models.
    """

    stable: bool
    lam: float
    norm: str
    condition: str
    l2_iterations: int | None = 1


@validate_params("x_bound", model=MODEL)
def certify(model: RecurrentModel, *, x_bound: float = 1.0) -> StabilityCertificate:
    """Does ``model`` satisfy its sufficient stability condition, and with which lambda? (chapter 8)

    * :class:`LinearSystem`: ``lambda = ||W||_2`` in the Euclidean norm;
    * :class:`SimpleRNN`: ``lambda = L_rho ||W||_2``;
    * :class:`LSTM`: ``lambda = lambda_inf`` of :func:`lstm_lambda_inf` in the max-norm over
      ``(c, h)``, for inputs with ``|x_t|_inf <= x_bound``.

    ``stable`` is ``lambda < 1``. ``lambda`` is an upper bound at every width
    (:func:`state_lipschitz`); a model with NaN or infinite weights is refused.
    """
    if isinstance(model, (LinearSystem, SimpleRNN)):
        lam = activation_lipschitz(model.activation) * spectral_norm_bound(model.W)
        return StabilityCertificate(
            lam < 1,
            lam,
            "l2",
            f"L_rho ||W||_2 < 1 ({model.activation})",
        )
    if isinstance(model, LSTM):
        lam = _lambda_inf(model, x_bound, None)
        r = None
        if lam < 1:
            r = (
                max(
                    1,
                    math.floor(math.log(2 * model.hidden_dim) / (2 * math.log(1 / lam)))
                    + 1,
                )
                if lam > 0
                else 1
            )
        return StabilityCertificate(
            lam < 1,
            lam,
            "max over (c, h)",
            "LSTM row-sum condition (reconstruction)",
            r,
        )
    raise TypeError(
        f"model: no stability condition is known for {type(model).__name__}"
    )


# --- Chapter 8, section 2: projections onto the stable set ---------------------------------------


@validate_params("radius", W=Tensor(shape=("m", "m")))
def project_spectral(W: torch.Tensor, radius: float) -> torch.Tensor:
    """The nearest matrix to ``W`` with ``||W||_2 <= radius``: clip the singular values at ``radius`` (chapter 8).

    ``W = U diag(s) V^T  ->  U diag(min(s, radius)) V^T``; this is the Euclidean
    (Frobenius) projection onto the spectral-norm ball and also a nearest point
    in spectral norm. Computed in float64 as ``W - U diag(s - radius)_+ V^T``, so a
    matrix already inside the ball is returned unchanged (bit for bit).
    """
    with torch.no_grad():
        U, s, Vh = torch.linalg.svd(W.detach().double(), full_matrices=False)
        excess = (s - radius).clamp_min(0.0)
        if not bool((excess > 0).any()):
            return W.detach().clone()
        keep = excess > 0
        correction = (U[:, keep] * excess[keep]) @ Vh[keep]
        return (W.detach().double() - correction).to(W.dtype)


@validate_params("lam", model=MATRIX_RNN)
def project_spectral_(
    model: LinearSystem | SimpleRNN, lam: float
) -> LinearSystem | SimpleRNN:
    """Make ``model`` lambda-contractive in place: ``W <- project_spectral(W, lam / L_rho)`` (chapters 8, 11).

    ``lam`` in (0, 1]. Call after each optimizer step (projected gradient descent). Returns the model.
    """
    with torch.no_grad():
        model.W.copy_(
            project_spectral(
                model.W,
                lam / activation_lipschitz(model.activation),
            )
        )
    return model


def _toward_zero(x64: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``x64`` converted to ``dtype``, rounded toward zero (so ``|result| <= |x64|`` entrywise)."""
    y = x64.to(dtype)
    if dtype == torch.float64:
        return y
    over = y.double().abs() > x64.abs()
    return torch.where(over, torch.nextafter(y, torch.zeros_like(y)), y)


@validate_params(
    W=Tensor(shape=("rows", None)),
    radius=Either(Tensor(shape=("rows",), values="nonnegative"), Real(0.0)),
)
def project_l1_rows(W: torch.Tensor, radius: float | torch.Tensor) -> torch.Tensor:
    """Project every **row** of ``W`` onto the l1-ball of ``radius`` (Duchi et al. 2008) (chapter 8).

    The set ``{W : ||W||_inf <= r}`` is a product of l1-balls, one per row, so
    this is the Euclidean projection onto it. Rows already inside are returned
    unchanged. ``radius`` is a positive number or a tensor with one radius per row.
    For a row ``v`` outside: sort ``u = |v|`` decreasingly, ``rho = max{j : u_j > (sum_{i<=j} u_i - r)/j}``,
    ``theta = (sum_{i<=rho} u_i - r)/rho`` and return ``sign(v) max(|v| - theta, 0)``.

    Computed in float64 whatever the dtype of ``W``, and converted back rounding
    toward zero; a row whose float64 l1-norm still exceeds ``r`` after that (by
    rounding) is shrunk by a factor ``< 1``, so every row of the result has
    float64 l1-norm ``<= r`` (the quantity :func:`inf_norm` computes).
    """
    if isinstance(radius, torch.Tensor):
        r = radius.detach().double()
    else:
        r = torch.full((W.shape[0],), radius, dtype=torch.float64)
    with torch.no_grad():
        W = W.detach()
        absW = W.double().abs()
        outside = absW.sum(dim=1) > r
        if not bool(outside.any()):
            return W.clone()
        u, _ = absW[outside].sort(dim=1, descending=True)
        css = u.cumsum(dim=1)
        j = torch.arange(1, u.shape[1] + 1, dtype=torch.float64)
        ro = r[outside].unsqueeze(1)
        cond = u * j > (css - ro)
        rho = (cond * j).argmax(
            dim=1, keepdim=True
        )  # 0-based index of the last j where cond holds
        theta = (css.gather(1, rho) - ro) / (rho + 1).double()
        rows = torch.sign(W[outside].double()) * (absW[outside] - theta).clamp_min(0.0)
        rows = _toward_zero(rows, W.dtype)
        for _ in range(4):  # rounding can leave a row a few ulps outside: shrink it
            sums = rows.double().abs().sum(dim=1, keepdim=True)
            over = (sums > ro).squeeze(1)
            if not bool(over.any()):
                break
            factor = ro[over] / sums[over] * (1 - 4 * u.shape[1] * _EPS64)
            rows[over] = _toward_zero(rows[over].double() * factor, W.dtype)
        else:  # pragma: no cover - four shrinks by a factor < 1 always suffice
            raise RuntimeError("project_l1_rows: rounding left a row outside the ball")
        out = W.clone()
        out[outside] = rows
        return out


@validate_params(
    "f_max",
    "x_bound",
    u_f_radius=NONNEGATIVE,
    margin=Real(MIN_LSTM_MARGIN, 1.0, high_open=True),
    model=Model(LSTM),
)
def project_lstm_(
    model: LSTM,
    f_max: float = 0.605,
    *,
    x_bound: float = 1.0,
    u_f_radius: float = 0.25,
    margin: float = 0.01,
) -> LSTM:
    """Project an LSTM in place onto the (reconstructed) stable set of chapter 8.

    With ``a = 1 - f_max`` and ``q = 1 - margin``, each **row** of
    ``W_i``, ``W_o`` goes to the l1-ball of radius ``q a``, of ``W_z`` to ``q a / 4``,
    of ``W_f`` to ``q a^2``, of ``U_f`` to ``u_f_radius``; then the forget bias is
    clamped, ``b_f <= logit(f_max) - q a^2 - u_f_radius x_bound`` (rounded down in
    the model's dtype), so that every forget gate stays ``<= f_max`` for inputs
    with ``|x_t|_inf <= x_bound``. The result has ``lambda_inf <= 1 - margin a < 1``.
    The conditions are strict inequalities, so ``margin`` must lie in
    ``[MIN_LSTM_MARGIN, 1)``: ``margin = 0`` would land on the boundary
    (``lambda_inf = 1``, not certified). Each piece is a Euclidean projection
    onto a convex set (a product of balls and a half-line), so the map is
    idempotent and leaves models already inside unchanged. NaN/inf weights are refused.

    Unlike the authors' code (``stabilize()`` in ``poly_music/model.py`` of their
    fork of the TCN repository, locuslab/TCN), rows are projected, not columns
    rescaled, and the forget-gate input weights and bias are constrained (that
    code leaves the biases free and initializes the forget bias to 10).
    """
    q = 1.0 - margin
    radii = {k: q * v for k, v in lstm_radii(f_max).items()}
    bias_cap = math.log(f_max / (1 - f_max)) - radii["W_f"] - u_f_radius * x_bound
    cap = torch.tensor(bias_cap, dtype=torch.float64).to(model.dtype)
    if float(cap) > bias_cap:  # round the cap down, never up
        cap = torch.nextafter(cap, torch.tensor(-math.inf, dtype=model.dtype))
    H = model.hidden_dim
    with torch.no_grad():
        for gate_index, gate in enumerate("ifzo"):
            rows = slice(gate_index * H, (gate_index + 1) * H)
            model.W[rows] = project_l1_rows(model.W[rows], radii[f"W_{gate}"])
        f_rows = slice(H, 2 * H)
        model.U[f_rows] = project_l1_rows(model.U[f_rows], u_f_radius)
        model.b[f_rows] = model.b[f_rows].clamp_max(cap)
    return model


#: The radii hard-coded in ``stabilize()`` of Miller & Hardt's fork of the TCN code
#: (``poly_music/model.py``, commit ecfd231): ``1 - fbar``, ``(1 - fbar)^2``,
#: ``(1 - fbar)/4`` at ``fbar = 0.605``, and 0.25 for the forget gate's input weights.
AUTHORS_LSTM_RADII = {
    "W_i": 0.395,
    "W_f": 0.155,
    "W_z": 0.099,
    "W_o": 0.395,
    "U_f": 0.25,
}


@validate_params(model=Model(LSTM))
def rescale_lstm_columns_(model: LSTM) -> LSTM:
    """The LSTM constraint of Miller & Hardt's code, in place: every column rescaled to a radius (chapter 11).

    ``stabilize()`` in ``poly_music/model.py`` of the authors' fork of the TCN code
    sets, for each gate block ``W_g`` of the recurrent weights and for ``U_f``,
    ``W_g[:, j] <- W_g[:, j] * r_g / sum_i |W_g[i, j]|`` with the radii of
    :data:`AUTHORS_LSTM_RADII`: every **column** gets l1 norm ``r_g`` exactly
    (small columns are inflated, not only large ones shrunk), which bounds
    ``||W_g||_1`` (the largest column sum), not the row sums ``||W_g||_inf`` that
    chapter 8's condition needs. The biases are left free. It is a normalisation,
    not a projection, and certifies nothing (:func:`certify` may give any
    ``lambda_inf``). A column that is exactly zero is left at zero (the fork would
    divide by zero). NaN/inf weights are refused.
    """
    H = model.hidden_dim
    with torch.no_grad():
        if not bool(torch.isfinite(model.W).all() and torch.isfinite(model.U).all()):
            raise ValueError("model has NaN or infinite weights")
        blocks = [
            (model.W, slice(g * H, (g + 1) * H), f"W_{name}")
            for g, name in enumerate("ifzo")
        ] + [(model.U, slice(H, 2 * H), "U_f")]
        for weight, rows, name in blocks:
            block = weight[rows]
            sums = block.abs().sum(0)
            scale = torch.where(
                sums > 0,
                AUTHORS_LSTM_RADII[name] / sums.clamp_min(1e-300),
                torch.ones_like(sums),
            )
            weight[rows] = block * scale
    return model


# --- Chapter 8, section 3: the spectral norm at initialization -----------------------------------


@validate_params(
    "n_draws", "generator", widths=Ints(1), schemes=Seq(Str(), "scheme names")
)
def initialization_norms(
    widths: Sequence[int],
    schemes: Sequence[str] = INIT_SCHEMES,
    *,
    n_draws: int = 5,
    generator: torch.Generator | int | None = None,
) -> dict[str, np.ndarray]:
    """``||W||_2`` of recurrent matrices drawn by each initialization scheme (chapter 8).

    Returns ``{scheme: array (len(widths), n_draws)}`` (see :func:`rnnlib.dynamical.recurrent_matrix`).
    A measurement, by :func:`spectral_norm` (power iteration above width 512,
    within about 1%, from below). All matrices are drawn from one stream, ``generator``.
    """
    for s in schemes:
        if s not in INIT_SCHEMES:
            raise ValueError(f"schemes must be among {INIT_SCHEMES}, got {s!r}")
    gen = as_generator(generator)
    return {
        s: np.array(
            [
                [
                    spectral_norm(recurrent_matrix(m, s, generator=gen))
                    for _ in range(n_draws)
                ]
                for m in widths
            ]
        )
        for s in schemes
    }


# --- Sidebar: gradient descent learns a stable linear dynamical system (Hardt, Ma & Recht) ---


@validate_params(
    K=Int(1),
    a=Tensor(shape=("n",)),
    c=Tensor(shape=("n",)),
    d=Tensor(),
)
def lds_markov_parameters(
    a: torch.Tensor, c: torch.Tensor, d: torch.Tensor, K: int
) -> torch.Tensor:
    """Impulse response ``(D, C B, C A B, ..., C A^(K-2) B)`` of a SISO system in controllable canonical form.

    ``A`` has ones on the superdiagonal and last row ``(-a_n, ..., -a_1)``, ``B = e_n``,
    so that ``det(zI - A) = z^n + a_1 z^(n-1) + ... + a_n`` (chapter 8 sidebar). Differentiable; returns (K,).
    """
    if d.numel() != 1:
        raise ValueError(
            f"d must be a scalar (the feedthrough D), got shape {tuple(d.shape)}"
        )
    # the columns A^j B, j < K - 1, by doubling: [V, A^m V] with m = the columns so far
    V = torch.zeros(a.shape[0], 1, dtype=a.dtype)
    V[-1] = 1.0  # B = e_n
    P = _companion(a)
    while V.shape[1] < K - 1:
        V = torch.cat([V, P @ V], dim=1)
        P = P @ P
    return torch.cat([d.reshape(1), c @ V[:, : K - 1]])


def _companion(a: torch.Tensor) -> torch.Tensor:
    """The canonical-form ``A`` (..., n, n) of coefficients ``a`` (..., n): ones above the diagonal, last row ``-a`` reversed.

    Its characteristic polynomial is ``z^n + a_1 z^(n-1) + ... + a_n``
    (chapter 8 sidebar); batched over the leading dimensions, differentiable.
    """
    n = a.shape[-1]
    ones = torch.ones(*a.shape[:-1], n - 1, dtype=a.dtype)
    A = torch.diag_embed(ones, offset=1)
    return torch.cat([A[..., :-1, :], -a.flip(-1).unsqueeze(-2)], dim=-2)


@dataclass(frozen=True)
class LDSFit:
    """History of :func:`fit_lds_canonical`: risk per step, final ``a``, and the teacher's ``a``."""

    risk: np.ndarray
    a: np.ndarray
    a_teacher: np.ndarray
    spectral_radius: np.ndarray


@validate_params("n", "radius", "lr", "steps", "generator", K=Int(1))
def fit_lds_canonical(
    n: int = 4,
    *,
    K: int = 60,
    steps: int = 1500,
    lr: float = 0.02,
    radius: float = math.sqrt(2) / 2,
    generator: torch.Generator | int | None = None,
) -> LDSFit:
    """Projected gradient descent on the idealized risk of Hardt, Ma & Recht (chapter 8 sidebar).

    The teacher is a random SISO system in canonical form with ``||a||_1 = 0.6 radius``.
    The student ``(a, c, d)`` starts at ``a = 0`` and minimizes
    ``sum_k (student Markov parameter_k - teacher's)^2`` over ``K`` terms by gradient
    descent, projecting ``a`` onto the closed l1-ball of ``radius`` after each step
    (``sqrt(2)/2``: the open ball ``||a||_1 < sqrt(2)/2`` lies in the Pac-Man region, whose
    strict inequality can fail on the sphere ``||a||_1 = sqrt(2)/2``; every system with
    ``||a||_1 < 1`` is stable, so every iterate is).
    Records the risk and the spectral radius of the student's ``A`` (all
    iterates' at once, after the run). Raises
    :class:`~rnnlib.train.DivergenceError` if the risk or a weight stops
    being finite.
    """
    gen = as_generator(generator)
    a_t = torch.randn(n, generator=gen, dtype=torch.float64)
    a_t = a_t / a_t.abs().sum() * 0.6 * radius
    c_t = torch.randn(n, generator=gen, dtype=torch.float64)
    d_t = torch.randn((), generator=gen, dtype=torch.float64)
    target = lds_markov_parameters(a_t, c_t, d_t, K)
    a = torch.zeros(n, dtype=torch.float64, requires_grad=True)
    c = torch.zeros(n, dtype=torch.float64)
    c[0] = 0.1
    c.requires_grad_(True)
    d = torch.zeros((), dtype=torch.float64, requires_grad=True)
    risk = np.empty(steps)
    history = torch.empty(steps, n, dtype=torch.float64)
    for step in range(steps):
        loss = ((lds_markov_parameters(a, c, d, K) - target) ** 2).sum()
        if not torch.isfinite(loss):
            raise DivergenceError(
                f"the LDS fit diverged at step {step} (the risk is not finite); lower lr (got {lr})"
            )
        risk[step] = float(loss.detach())
        history[step] = a.detach()
        grads = torch.autograd.grad(loss, (a, c, d))
        with torch.no_grad():
            for p, g in zip((a, c, d), grads):
                p -= lr * g
                if not bool(torch.isfinite(p).all()):
                    raise DivergenceError(
                        f"the LDS fit diverged at step {step} (the weights are not finite); lower lr (got {lr})"
                    )
            a.copy_(project_l1_rows(a.unsqueeze(0), radius)[0])
    # the spectral radius of every iterate's A, in one batched eigenvalue call
    rho = torch.linalg.eigvals(_companion(history)).abs()
    return LDSFit(
        risk,
        a.detach().numpy().copy(),
        a_t.numpy(),
        rho.amax(dim=-1).numpy(),
    )


# --- The data-dependent contraction along a trajectory (chapters 8 and 11) ---


@validate_params(model=MODEL, x=INPUTS)
def state_jacobians(model: RecurrentModel, x: torch.Tensor) -> torch.Tensor:
    """The state Jacobians ``J_t = d s_t / d s_{t-1}`` along the trajectory of ``x`` (chapters 8, 11).

    Evaluated at the model's own states ``s_0 = 0, s_1, ..., s_{T-1}``; returns
    (batch, T, state_dim, state_dim). Computed with ``torch.func.vmap(jacrev(step))``
    over all (batch, t) pairs at once.
    """
    batch, T, n = x.shape
    S = model.state_dim
    with torch.no_grad():
        states = model(x)
    prev = torch.cat(
        [model.initial_state(batch).unsqueeze(1), states[:, :-1]],
        dim=1,
    ).reshape(-1, S)

    def one_step(s: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
        return model.step(s.unsqueeze(0), x_t.unsqueeze(0)).squeeze(0)

    J = torch.func.vmap(torch.func.jacrev(one_step, argnums=0))(
        prev.detach(), x.reshape(-1, n).detach()
    )
    return J.detach().reshape(batch, T, S, S)


@validate_params(model=MODEL, x=INPUTS)
def jacobian_norms(model: RecurrentModel, x: torch.Tensor) -> torch.Tensor:
    """``||d s_t / d s_{t-1}||_2`` along each sequence of ``x``: the data-dependent contraction (chapter 8).

    Returns (batch, T). A model with ``lambda = ||W||_2 > 1`` can still have all
    of these below 1 on its data ("stable in a data-dependent sense").
    """
    return torch.linalg.matrix_norm(state_jacobians(model, x), ord=2)


@validate_params(model=MODEL, x=INPUTS, s0=STATES, s0_prime=STATES)
def state_distance(
    model: RecurrentModel,
    x: torch.Tensor,
    s0: torch.Tensor,
    s0_prime: torch.Tensor,
) -> torch.Tensor:
    """``||s_t - s'_t||_2`` for two trajectories driven by the same inputs from ``s0`` and ``s0_prime`` (chapter 8).

    For a lambda-contractive model this is at most ``lambda^t ||s0 - s0'||``. Returns (batch, T).
    """
    with torch.no_grad():
        return (model(x, s0) - model(x, s0_prime)).norm(dim=2)
