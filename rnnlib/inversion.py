"""RNN inversion and the existence construction of Panigrahi & Goyal (2021), Secs. 4.2-4.4 (chapter 4).

The existence step of the paper's proof builds weights ``(W*, A*)`` whose
pseudo-network (eq. (4), :mod:`rnnlib.pseudo`) approximates a target
``F*(xbar) = Phi*(<w_dagger, xbar>)`` of the concept class. Its three tools,
each a function here:

**Lemma 4.4 (linear through ReLU), corrected.** For ``T`` (m x d) with i.i.d.
N(0, 1) entries, ``E[w w^T 1[w^T x >= 0]] = I/2`` gives::

    p^T relu(T x) ~ v^T x      with   p = (2/m) T v,

with standard deviation ``sqrt((2 |v|^2 |x|^2 + 3 (v^T x)^2) / m)``
(:func:`relu_identity`, :func:`relu_identity_std`). The
paper prints ``p = 2 T v`` (then the error grows like m) and the bound
``|v|.|x| / sqrt(m)`` without a constant or a probability.

**Theorem 4.5 (inversion).** Applied to the cell ``h = relu([W, A] [h_prev, x])``
with N(0, 2/m) entries, the identity reads ``A^T h^(l) ~ x^(l)`` and
``W^T h^(l) ~ h^(l-1)``; unrolled, the *naive* inverse
``xhat^(L-k) = A^T (W^T)^k h^(L)`` (:func:`naive_decode`), whose error grows
geometrically with the depth k. A linear decoder fitted by ridge least squares
on sampled sequences (:func:`fit_linear_decoder`) is our empirical stand-in for
the paper's ``Wbar^[L]`` (which depends on W, A only). Our reconstruction
of a map that depends on (W, A) only is :func:`analytic_inverse`: freeze the
ReLU patterns of a base sequence, so that ``h^(L) = J [x^(1), ..., x^(L)]``
is linear with the stacked step Jacobians ``J`` (:func:`step_jacobians`), and
invert with the pseudo-inverse ``J^+``. :func:`decoding_errors` measures the
three per position.

**Lemma 4.1 (random step features, Allen-Zhu, Li & Liang 2019, Lemma 6.2).**
A smooth ``phi`` on [-1, 1] is ``E[H(alpha, b0) 1[alpha u + beta sqrt(1 - u^2) + b0 >= 0]]``
for some ``H``; we fit ``H`` on an orthonormal Hermite basis, so that
``E[H^2]`` is the squared norm of its coefficients, against the expectation
computed exactly by Gauss-Hermite quadrature (:func:`fit_step_features`), and
average ``m`` random features (:func:`step_feature_average`).

**Lemma F.11** (as the main text uses it): ``c_i = (1/m) sum_r b_r Back_{i->L, r}``
tends to ``Var(b) = 2`` for ``i = L`` and to 0 for ``i < L``
(:func:`backprop_correlations`).

**Lemma 4.2 and Theorem 4.3 (the construction).** ``W* = 0`` and ``A*`` on
the bias column only::

    a*_r = (1/m) b_r H( sqrt(m/2) <w_r, v/|v|>,  sqrt(m/2) a_{r,d} ) e_d,

where ``v = Wbar w_dagger`` decodes ``<w_dagger, xbar>`` from ``h^(L-1)``
(:func:`construct_existence`, :func:`evaluate_construction`).

Chapter 4's sweeps of these over widths, lengths and scales are in
``rnnlib.experiments.ch04``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ._rng import derive
from ._validation import (
    NONNEGATIVE,
    POSITIVE,
    UNIT,
    Choice,
    Instance,
    Int,
    Model,
    Relation,
    Tensor,
    as_generator,
    check_int,
    check_real,
    check_tensor,
    validate_params,
)
from .concepts import ConceptTarget, SmoothFunction, get_function
from .elman import (
    INPUTS,
    ElmanRNN,
    elman_hidden_states,
    normalize_sequence,
    sample_true_sequence,
)
from .pseudo import back_matrices, pseudo_network

__all__ = [
    "relu_identity",
    "relu_identity_std",
    "naive_decode",
    "LinearDecoder",
    "fit_linear_decoder",
    "base_sequence",
    "step_jacobians",
    "AnalyticInverse",
    "analytic_inverse",
    "DecodingErrors",
    "decoding_errors",
    "StepFeatureFit",
    "fit_step_features",
    "step_feature_average",
    "backprop_correlations",
    "Construction",
    "check_target",
    "construct_existence",
    "ConstructionErrors",
    "evaluate_construction",
]


def _check_model(model: object) -> ElmanRNN:
    if not isinstance(model, ElmanRNN):
        raise TypeError(
            f"model must be an rnnlib.elman.ElmanRNN, got {type(model).__name__}"
        )
    return model


# --- Lemma 4.4 ----------------------------------------------------------------------------------


@validate_params(
    scaling=Choice("corrected", "printed"),
    T=Tensor(shape=("m", "d")),
    v=Tensor(shape=("d",)),
    x=Tensor(shape=("d",)),
)
def relu_identity(
    v: torch.Tensor,
    x: torch.Tensor,
    T: torch.Tensor,
    *,
    scaling: str = "corrected",
) -> torch.Tensor:
    """``p^T relu(T x)`` of Lemma 4.4, an estimate of ``v^T x`` (chapter 4); returns a 0-d tensor.

    ``T`` is (m, d) with i.i.d. N(0, 1) entries, ``v`` and ``x`` are (d,).
    ``scaling="corrected"`` uses ``p = (2/m) T v``, for which
    ``E[p^T relu(T x)] = v^T x`` because ``E[w w^T 1[w^T x >= 0]] = I/2``;
    ``scaling="printed"`` uses the paper's ``p = 2 T v`` (eq. (8)), which
    estimates ``m v^T x`` instead.
    """
    factor = 2.0 / T.shape[0] if scaling == "corrected" else 2.0
    return factor * (T @ v) @ torch.relu(T @ x)


@validate_params("width", v=Tensor(shape=("d",)), x=Tensor(shape=("d",)))
def relu_identity_std(v: torch.Tensor, x: torch.Tensor, width: int) -> float:
    """Standard deviation of the corrected estimate of Lemma 4.4 over ``T`` (chapter 4).

    One term ``2 (w^T v) relu(w^T x)`` has second moment
    ``2 (|v|^2 |x|^2 + 2 (v^T x)^2)`` (Isserlis, halved by the indicator) and
    mean ``v^T x``, so the average of m terms has standard deviation
    ``sqrt((2 |v|^2 |x|^2 + 3 (v^T x)^2) / m)``: at least ``sqrt(2) |v| |x| / sqrt(m)``,
    above the paper's bound ``|v| |x| / sqrt(m)``.
    """
    m = width
    vx = float(v @ x)
    return math.sqrt((2.0 * float(v @ v) * float(x @ x) + 3.0 * vx * vx) / m)


# --- Theorem 4.5: decoding tokens from h^(L) ---------------------------------------------------------


@validate_params(
    L=Int(1),
    W=Tensor(shape=("m", "m")),
    A=Tensor(shape=("m", "d")),
    h=Tensor(shape=("batch", "m")),
)
def naive_decode(
    W: torch.Tensor, A: torch.Tensor, h: torch.Tensor, L: int
) -> torch.Tensor:
    """The naive inverse ``xhat^(L-k) = A^T (W^T)^k h^(L)``, k = 0..L-1 (chapter 4, Theorem 4.5).

    Unrolls Lemma 4.4 through the cell ``h^(l) = relu(W h^(l-1) + A x^(l))``
    (N(0, 2/m) entries, so ``[W, A]^T h^(l) ~ [h^(l-1), x^(l)]``). ``W`` is
    (m, m), ``A`` (m, d), ``h`` the last hidden states (batch, m). Returns
    (batch, L, d), position l = 1..L along dimension 1.
    """
    out = []
    y = h  # rows: (W^T)^k h^(L), written as h^T W^k
    for _ in range(L):
        out.append(y @ A)
        y = y @ W
    return torch.stack(out[::-1], dim=1)


@dataclass(frozen=True)
class LinearDecoder:
    """A linear map from hidden states to targets, ``targets ~ h @ matrix`` (chapter 4)."""

    matrix: torch.Tensor  # (m, n_out)
    ridge: float

    def __call__(self, h: torch.Tensor) -> torch.Tensor:
        """Decode hidden states ``h`` (batch, m); returns (batch, n_out)."""
        h = check_tensor(h, "h", shape=("batch", self.matrix.shape[0]))
        return (h.to(self.matrix.dtype) @ self.matrix).to(h.dtype)


@validate_params("ridge", h=Tensor(shape=("n", None)), targets=Tensor(shape=("n", "k")))
def fit_linear_decoder(
    h: torch.Tensor, targets: torch.Tensor, *, ridge: float = 1e-3
) -> LinearDecoder:
    """Ridge least squares ``argmin_D |h D - targets|^2 + ridge |D|^2`` (chapter 4).

    ``h`` is (n, m) (hidden states of n sampled sequences), ``targets`` (n, k).
    No intercept: the decoder is linear, like the paper's ``Wbar^[L]``; the
    nearly constant part of ``h`` plays the role of one. Solved in float64,
    in the dual form ``h^T (h h^T + ridge I)^(-1) targets`` when n < m and in
    the primal form ``(h^T h + ridge I)^(-1) h^T targets`` otherwise (equal).
    """
    H, Y = h.double(), targets.double()
    n, m = H.shape
    if n < m:
        matrix = H.T @ torch.linalg.solve(
            H @ H.T + ridge * torch.eye(n, dtype=H.dtype), Y
        )
    else:
        matrix = torch.linalg.solve(
            H.T @ H + ridge * torch.eye(m, dtype=H.dtype), H.T @ Y
        )
    return LinearDecoder(matrix, ridge)


# --- Theorem 4.5: the analytic inverse (ours), a map of (W, A) only ----------------------------


@validate_params("dtype", L=Int(3), d=Int(1))
def base_sequence(
    L: int, d: int, *, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """The zero-token sequence, (L, d): start and end tokens ``e_d``, zeros between (chapter 4).

    It is the limit ``eps_x -> 0`` of every normalized sequence of
    Definition 3.1 (:func:`rnnlib.elman.normalize_sequence`), and it depends
    on no data: the base point at which :func:`analytic_inverse` freezes the
    ReLU patterns.
    """
    x0 = torch.zeros(L, d, dtype=dtype)
    x0[0, -1] = 1.0
    x0[-1, -1] = 1.0
    return x0


def _check_weights(W: object, A: object) -> tuple[torch.Tensor, torch.Tensor]:
    W = check_tensor(W, "W", ndim=2)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square (m, m), got shape {tuple(W.shape)}")
    A = check_tensor(A, "A", shape=(W.shape[0], "d"))
    return W, A


def _check_base(base: object, L: int, d: int, dtype: torch.dtype) -> torch.Tensor:
    if base is None:
        return base_sequence(L, d, dtype=dtype)
    return check_tensor(base, "base", shape=(L, d)).to(dtype)


@validate_params(L=Int(1))
def step_jacobians(
    W: torch.Tensor,
    A: torch.Tensor,
    L: int,
    *,
    base: torch.Tensor | None = None,
) -> torch.Tensor:
    """The step Jacobians ``J_l = D^(L) W D^(L-1) W ... D^(l) A`` at a base sequence, (L, m, d) (chapter 4).

    ``D^(l) = diag(1[W h0^(l-1) + A x0^(l) > 0])`` are the ReLU patterns of
    the base run ``h0`` on ``base`` (shape (L, d); default
    :func:`base_sequence`, which needs ``L >= 3``). ``J_l`` is the Jacobian
    of ``h^(L)`` in ``x^(l)`` at the base. With the patterns frozen the
    recurrence is linear, ``h^(L) = sum_l J_l x^(l)`` for *every* input
    sequence (``h^(0) = 0``: no constant term), exactly. Float64.
    """
    W, A = _check_weights(W, A)
    m, d = A.shape
    W, A = W.detach().double(), A.detach().double()
    x0 = _check_base(base, L, d, torch.float64)
    h = torch.zeros(m, dtype=torch.float64)
    G = torch.zeros(m, L, d, dtype=torch.float64)  # dh^(k)/dx^(l)
    for step in range(L):
        pre = W @ h + A @ x0[step]
        D = (pre > 0).double()
        G = D[:, None, None] * (W @ G.reshape(m, L * d)).reshape(m, L, d)
        G[:, step] = D[:, None] * A
        h = torch.relu(pre)
    return G.permute(1, 0, 2).contiguous()


@dataclass(frozen=True)
class AnalyticInverse:
    """``Wbar^[L]`` rebuilt from (W, A) alone: ``[x^(1), ..., x^(L)] ~ Wbar^T h^(L)`` (chapter 4, ours).

    ``matrix`` (m, L d) is ``Wbar = (J^+)^T``, the transpose of the
    pseudo-inverse of the stacked step Jacobians ``jacobian = J`` (m, L d,
    column block l is :func:`step_jacobians`' ``J_l``); ``base`` (L, d) is the
    sequence whose ReLU patterns ``J`` freezes; ``singular_values`` of ``J``
    (descending; the smallest sets how much an error in ``h`` is amplified);
    ``rank``: the number kept by the pseudo-inverse.
    """

    matrix: torch.Tensor
    jacobian: torch.Tensor
    base: torch.Tensor
    singular_values: torch.Tensor
    rank: int

    def __call__(self, h: torch.Tensor) -> torch.Tensor:
        """Decode hidden states ``h^(L)`` (batch, m); returns (batch, L, d)."""
        h = check_tensor(h, "h", shape=("batch", self.matrix.shape[0]))
        L, d = self.base.shape
        out = h.to(self.matrix.dtype) @ self.matrix
        return out.reshape(h.shape[0], L, d).to(h.dtype)


@validate_params(L=Int(1), rcond=UNIT)
def analytic_inverse(
    W: torch.Tensor,
    A: torch.Tensor,
    L: int,
    *,
    base: torch.Tensor | None = None,
    rcond: float | None = None,
) -> AnalyticInverse:
    """Our reconstruction of Theorem 4.5's ``Wbar^[L]``: the pseudo-inverse of the linearized recurrence (chapter 4).

    Freeze the ReLU patterns ``D^(l)`` of a base sequence ``x0`` (``base``;
    default :func:`base_sequence`, the start and end tokens with zero tokens
    between, i.e. the limit ``eps_x -> 0``). Then
    ``h^(L) = J [x^(1); ...; x^(L)]`` with ``J = [J_1, ..., J_L]`` (m, L d)
    of :func:`step_jacobians`, exactly, for every sequence that keeps those
    patterns; for ``m >= L d`` ``J`` has full column rank (generically) and
    ``J^+ = (J^T J)^(-1) J^T`` inverts it. A normalized sequence moves each
    pre-activation by ``O(eps_x)``, which flips a fraction of the patterns;
    the error of ``J^+ h^(L)`` is that of the flips, seen through ``J^+``.
    The map depends on ``W``, ``A`` (and the fixed base) only, not on sampled
    sequences, as the paper's ``Wbar^[L]`` does; the paper gives no formula
    (its appendix has one we could not obtain), so this one is ours.
    ``rcond``: relative cut-off of the singular values (``torch.linalg.pinv``'s
    default when None). Float64.
    """
    J = step_jacobians(W, A, L, base=base)  # (L, m, d)
    Lq, m, d = J.shape
    stacked = J.permute(1, 0, 2).reshape(m, Lq * d)
    U, S, Vh = torch.linalg.svd(stacked, full_matrices=False)
    cut = (
        S.max() * rcond
        if rcond is not None
        else S.max() * max(m, Lq * d) * torch.finfo(S.dtype).eps
    )
    keep = S > cut
    pinv = (Vh[keep].T / S[keep]) @ U[:, keep].T  # (L d, m)
    x0 = _check_base(base, Lq, d, torch.float64)
    return AnalyticInverse(pinv.T.contiguous(), stacked, x0, S, int(keep.sum()))


@dataclass(frozen=True)
class DecodingErrors:
    """Per-position decoding errors of one network (chapter 4).

    ``positions``: l = 2..L-1 (the true tokens); ``naive``, ``fitted`` and
    ``analytic``: the mean over test sequences of
    ``max_j |xhat^(l)_j - x^(l)_j| / eps_x``, the error on the true token
    ``xbar^(l)`` (1 means no information), for :func:`naive_decode`, the
    fitted :class:`LinearDecoder` (NaN when ``n_train = 0``) and the
    :class:`AnalyticInverse`; ``n_train``: the fitted decoder's sequences.
    """

    width: int
    L: int
    eps_x: float
    positions: np.ndarray
    naive: np.ndarray
    fitted: np.ndarray
    analytic: np.ndarray
    n_train: int


def _token_errors(xhat: torch.Tensor, x: torch.Tensor, eps_x: float) -> np.ndarray:
    return ((xhat - x)[:, 1:-1].abs().amax(dim=2).mean(dim=0) / eps_x).double().numpy()


@validate_params(
    "L", "eps_x", "n_test", "ridge", "generator", n_train=Int(0), model=Model(ElmanRNN)
)
def decoding_errors(
    model: ElmanRNN,
    L: int,
    eps_x: float,
    *,
    n_train: int = 512,
    n_test: int = 128,
    ridge: float = 1e-3,
    generator: torch.Generator | int | None = None,
) -> DecodingErrors:
    """Decode every token from ``h^(L)``: naive inverse, fitted linear decoder, analytic inverse (chapter 4, Theorem 4.5).

    Draws ``n_train`` and ``n_test`` normalized sequences of length ``L``; the
    fitted decoder maps ``h^(L)`` to all of ``[x^(1), ..., x^(L)]`` and is
    fitted on the training sequences only (``n_train = 0``: not fitted, its
    errors NaN); :func:`analytic_inverse` (at :func:`base_sequence`) uses no
    sequence. Errors are on the test sequences.
    """
    model = _check_model(model)
    d, dtype = model.input_dim, model.W.dtype
    if d < 3:
        raise ValueError(
            f"model.input_dim must be >= 3 for normalized sequences, got {d}"
        )
    W, A = model.W.detach(), model.A.detach()
    x_bar = sample_true_sequence(
        n_train + n_test,
        L,
        d,
        generator=derive(generator, "decode-data"),
        dtype=dtype,
    )
    x = normalize_sequence(x_bar, eps_x)
    with torch.no_grad():
        h = elman_hidden_states(W, A, x)[:, -1]
    x_test, h_test = x[n_train:], h[n_train:]
    if n_train > 0:
        decoder = fit_linear_decoder(
            h[:n_train],
            x[:n_train].reshape(n_train, -1),
            ridge=ridge,
        )
        fitted = _token_errors(decoder(h_test).reshape(n_test, L, d), x_test, eps_x)
    else:
        fitted = np.full(L - 2, np.nan)
    with torch.no_grad():
        naive = naive_decode(W, A, h_test, L)
    analytic = analytic_inverse(W, A, L)(h_test)
    return DecodingErrors(
        model.width,
        L,
        eps_x,
        np.arange(2, L),
        _token_errors(naive, x_test, eps_x),
        fitted,
        _token_errors(analytic, x_test, eps_x),
        n_train,
    )


# --- Lemma 4.1: random step features --------------------------------------------------------------


def _hermite(t: torch.Tensor, degree: int) -> torch.Tensor:
    """Orthonormal probabilists' Hermite functions He_j(t) / sqrt(j!), j = 0..degree; (..., degree + 1)."""
    out = [torch.ones_like(t), t]
    for j in range(2, degree + 1):
        out.append(t * out[-1] - (j - 1) * out[-2])
    out = torch.stack(out[: degree + 1], dim=-1)
    norms = torch.tensor(
        [math.sqrt(math.factorial(j)) for j in range(degree + 1)],
        dtype=t.dtype,
    )
    return out / norms


def _indicator_mean(
    u: torch.Tensor,
    alpha: torch.Tensor,
    b0: torch.Tensor,
    radius: float,
) -> torch.Tensor:
    """``P_beta[radius (alpha u + beta sqrt(1-u^2)) + b0 >= 0] = Phi((radius alpha u + b0) / (radius sqrt(1-u^2)))``."""
    s = torch.sqrt(torch.clamp(1 - u * u, min=1e-24))
    return torch.special.ndtr((radius * alpha * u + b0) / (radius * s))


@dataclass(frozen=True)
class StepFeatureFit:
    """A function ``H(alpha, b0) = sum_jk theta_jk He_j(alpha) He_k(b0)`` for Lemma 4.1 (chapter 4).

    ``He_j`` are the orthonormal Hermite polynomials of N(0, 1), so
    ``E[H^2] = |theta|^2`` (:attr:`norm` is its square root). The step
    features realize ``g(u) = E[H(alpha, b0) 1[r (alpha u + beta sqrt(1-u^2)) + b0 >= 0]]``
    (r = ``radius``, 1 in Lemma 4.1), fitted to ``phi`` on ``interval``;
    ``fit_error`` is ``max |g - phi|`` on the fitting grid.
    """

    theta: torch.Tensor  # (J + 1, K + 1), float64
    radius: float
    interval: tuple[float, float]
    fit_error: float
    n_quad: int

    @property
    def norm(self) -> float:
        """``sqrt(E[H(alpha, b0)^2])`` for alpha, b0 ~ N(0, 1)."""
        return float(self.theta.norm())

    def H(self, alpha: torch.Tensor, b0: torch.Tensor) -> torch.Tensor:
        """``H`` at points ``(alpha, b0)`` of equal shape; float64."""
        alpha = check_tensor(alpha, "alpha", finite=True).double()
        b0 = check_tensor(b0, "b0", shape=tuple(alpha.shape)).double()
        J, K = self.theta.shape[0] - 1, self.theta.shape[1] - 1
        return torch.einsum(
            "...j,jk,...k->...",
            _hermite(alpha, J),
            self.theta,
            _hermite(b0, K),
        )

    def expectation(self, u: torch.Tensor) -> torch.Tensor:
        """``g(u)``, the infinite-width limit, by Gauss-Hermite quadrature; ``u`` in [-1, 1], float64."""
        u = _check_u(u)
        return _design(
            u,
            self.theta.shape[0] - 1,
            self.theta.shape[1] - 1,
            self.radius,
            self.n_quad,
        ) @ self.theta.reshape(-1)


def _check_u(u: object) -> torch.Tensor:
    u = check_tensor(u, "u", ndim=1).double()
    if bool((u.abs() > 1).any()):
        raise ValueError(
            f"u must lie in [-1, 1], got values up to {float(u.abs().max()):.3g}"
        )
    return u


def _design(
    u: torch.Tensor, J: int, K: int, radius: float, n_quad: int
) -> torch.Tensor:
    """``E[He_j(alpha) He_k(b0) 1[...]]`` for each u: (len(u), (J+1)(K+1)), by n_quad^2-point quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_quad)
    nodes = torch.tensor(nodes, dtype=torch.float64)
    weights = torch.tensor(weights / math.sqrt(2 * math.pi), dtype=torch.float64)
    pa = _hermite(nodes, J) * weights[:, None]  # (n, J+1)
    pb = _hermite(nodes, K) * weights[:, None]  # (n, K+1)
    P = _indicator_mean(
        u[None, None, :],
        nodes[:, None, None],
        nodes[None, :, None],
        radius,
    )  # (n, n, U)
    return torch.einsum("aj,bk,abu->ujk", pa, pb, P).reshape(len(u), -1)


def _as_callable(
    phi: object,
) -> Callable[[torch.Tensor], torch.Tensor]:
    if isinstance(phi, (str, SmoothFunction)):
        return get_function(phi)
    if not callable(phi):
        raise TypeError(
            f"phi must be callable (a function of a tensor), a SmoothFunction or a name, got {type(phi).__name__}"
        )
    return phi


@validate_params("radius", "ridge", n_grid=Int(2), n_quad=Int(2))
def fit_step_features(
    phi: Callable[[torch.Tensor], torch.Tensor] | SmoothFunction | str,
    *,
    interval: tuple[float, float] = (-1.0, 1.0),
    radius: float = 1.0,
    degree: tuple[int, int] = (10, 6),
    ridge: float = 1e-6,
    n_grid: int = 201,
    n_quad: int = 64,
) -> StepFeatureFit:
    """Fit ``H`` so that the step features of Lemma 4.1 realize ``phi`` on ``interval`` (chapter 4).

    Minimizes ``mean_u (g(u) - phi(u))^2 + ridge |theta|^2`` over a grid of
    ``n_grid`` points u in ``interval`` (a sub-interval of [-1, 1]), where
    ``g(u) = E[H(alpha, b0) Phi((r alpha u + b0) / (r sqrt(1 - u^2)))]`` is the
    expectation over beta written in closed form (Phi the normal CDF) and the
    expectation over (alpha, b0) is a ``n_quad x n_quad`` Gauss-Hermite
    quadrature (accurate to ~1e-8 for |u| <= 0.9, ~1e-3 at |u| = 0.99, where the
    integrand becomes a step); ``H`` has Hermite degrees ``degree = (J, K)`` in (alpha, b0).
    The ridge term is ``E[H^2]``: the smaller it is, the fewer features the
    average of :func:`step_feature_average` needs (its variance is below
    ``E[H^2] / m``).
    """
    f = _as_callable(phi)
    if not isinstance(interval, (tuple, list)) or len(interval) != 2:
        raise ValueError(f"interval must be a pair (low, high), got {interval!r}")
    lo = check_real(interval[0], "interval[0]", low=-1.0, high=1.0)
    hi = check_real(interval[1], "interval[1]", low=-1.0, high=1.0)
    if not lo < hi:
        raise ValueError(f"interval must have low < high, got {interval!r}")
    if not isinstance(degree, (tuple, list)) or len(degree) != 2:
        raise ValueError(
            f"degree must be a pair (J, K) of Hermite degrees, got {degree!r}"
        )
    J, K = (
        check_int(degree[0], "degree[0]", minimum=0),
        check_int(degree[1], "degree[1]", minimum=0),
    )
    u = torch.linspace(lo, hi, n_grid, dtype=torch.float64)
    y = f(u).double()
    if y.shape != u.shape or not bool(torch.isfinite(y).all()):
        raise ValueError(
            "phi must map a 1-d tensor of u values to finite values of the same shape"
        )
    G = _design(u, J, K, radius, n_quad)
    theta = torch.linalg.solve(
        G.T @ G / n_grid + ridge * torch.eye(G.shape[1], dtype=G.dtype),
        G.T @ y / n_grid,
    )
    fit_error = float((G @ theta - y).abs().max())
    return StepFeatureFit(
        theta.reshape(J + 1, K + 1),
        radius,
        (lo, hi),
        fit_error,
        n_quad,
    )


@validate_params("width", "generator", fit=Instance(StepFeatureFit))
def step_feature_average(
    fit: StepFeatureFit,
    u: torch.Tensor,
    width: int,
    *,
    generator: torch.Generator | int | None = None,
) -> torch.Tensor:
    """``(1/m) sum_r H(alpha_r, b0_r) 1[r (alpha_r u + beta_r sqrt(1-u^2)) + b0_r >= 0]`` (chapter 4, Lemma 4.1).

    ``alpha_r, beta_r, b0_r`` i.i.d. N(0, 1), r = 1..m (= ``width``); one draw
    shared by all ``u`` (in [-1, 1]). Returns (len(u),), float64. Its mean is
    ``fit.expectation(u)``.
    """
    if not isinstance(fit, StepFeatureFit):
        raise TypeError(f"fit must be a StepFeatureFit, got {type(fit).__name__}")
    u = _check_u(u)
    m = width
    gen = as_generator(generator)
    alpha, beta, b0 = torch.randn(3, m, generator=gen, dtype=torch.float64)
    s = torch.sqrt(torch.clamp(1 - u * u, min=0.0))
    active = fit.radius * (alpha[:, None] * u + beta[:, None] * s) + b0[:, None] >= 0
    return fit.H(alpha, b0) @ active.double() / m


# --- Lemma F.11 ----------------------------------------------------------------------------------------


@validate_params(model=Model(ElmanRNN), x=INPUTS)
def backprop_correlations(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    """``c_i = (1/m) sum_r B_{s,r} (Back_{i->L})_{s,r}`` for i = 1..L (chapter 4, Lemma F.11).

    ``Back_{L->L} = B``, so ``c_L = (1/m) sum_r b_r^2 -> Var(b) = 2/d_out``;
    for i < L the main text's Lemma F.11 says ``B`` and ``Back_{i->L}`` are
    only weakly correlated, ``c_i -> 0``. Returns (batch, L, d_out).
    """
    model = _check_model(model)
    back = back_matrices(model, x)  # (batch, L, d_out, m)
    return torch.einsum("blsm,sm->bls", back, model.B) / model.width


# --- Lemma 4.2 and Theorem 4.3: the construction ------------------------------------------------------


@dataclass(frozen=True)
class Construction:
    """The weights of Lemma 4.2 / Theorem 4.3 for one network and one target (chapter 4).

    ``dA`` is ``A*`` (m, d), nonzero on the bias column only (``W* = 0``);
    ``v = Wbar w_dagger`` (m,) decodes ``<w_dagger, xbar>`` as ``<v, h^(L-1)>``;
    ``R = |v| r`` with ``r`` (``radius``) the mean of ``|h^(L-1)|``: the
    construction realizes ``Phi*(R u)``, ``u = <v/|v|, h/|h|>``, so the
    complexity that counts is at radius R; ``fit`` is the fitted ``H``.
    """

    dA: torch.Tensor
    v: torch.Tensor
    R: float
    radius: float
    fit: StepFeatureFit


@validate_params(
    "L",
    "d",
    Relation(
        "target.output_dim == 1 and target.width == 1",
        "one output and one neuron, d_out = p = 1",
    ),
    Relation(
        "(target.n_tokens, target.token_dim) == (L - 2, d - 1)",
        "the target reads L - 2 tokens of dimension d - 1",
    ),
    target=Instance(ConceptTarget),
)
def check_target(target: object, L: int, d: int) -> ConceptTarget:
    """``target`` as the construction reads it: a :class:`rnnlib.concepts.ConceptTarget` with ``d_out = p = 1`` on sequences of length ``L`` and dimension ``d`` (chapter 4)."""
    return target


def _last_states(model: ElmanRNN, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return elman_hidden_states(model.W.detach(), model.A.detach(), x)


@validate_params(
    "eps_x",
    "generator",
    n_fit=Int(2),
    decoder_ridge=POSITIVE,
    margin=NONNEGATIVE,
    model=Model(ElmanRNN),
    target=Instance(ConceptTarget),
    fit_ridge=POSITIVE,
)
def construct_existence(
    model: ElmanRNN,
    target: ConceptTarget,
    eps_x: float,
    *,
    n_fit: int = 256,
    decoder_ridge: float = 1e-3,
    degree: tuple[int, int] = (8, 6),
    fit_ridge: float = 1e-4,
    margin: float = 0.25,
    generator: torch.Generator | int | None = None,
) -> Construction:
    """Build ``(W*, A*) = (0, A*)`` of Lemma 4.2 / Theorem 4.3 for ``target`` (chapter 4).

    1. Decoder (Theorem 4.5, fitted): ``v`` minimizes
       ``sum (<v, h^(L-1)> - <w_dagger, xbar>)^2 + decoder_ridge |v|^2`` over
       ``n_fit`` sampled sequences (:func:`fit_linear_decoder`); this is
       ``Wbar w_dagger`` for the fitted decoder ``Wbar``.
    2. Step features (Lemma 4.1): ``H`` is fitted (:func:`fit_step_features`,
       radius ``r = mean |h^(L-1)|``) to ``u -> Phi*(R u) / Var(b)`` with
       ``R = |v| r`` and ``Var(b) = 2/d_out`` (the ``c_L`` of Lemma F.11;
       ours: the paper's informal statement absorbs this factor), on the
       range of ``u = <v/|v|, h/|h|>`` seen on the samples, widened by
       ``margin`` of its length on both sides.
    3. ``a*_r = (1/m) b_r H(sqrt(m/2) <w_r, v/|v|>, sqrt(m/2) a_{r,d}) e_d``.
    """
    model = _check_model(model)
    if model.output_dim != 1:
        raise ValueError(
            f"model must have one output (d_out = 1), got output_dim = {model.output_dim}"
        )
    d, m, dtype = model.input_dim, model.width, model.W.dtype
    if not isinstance(target, ConceptTarget):
        raise TypeError(
            f"target must be an rnnlib.concepts.ConceptTarget, got {type(target).__name__}"
        )
    L = check_target(target, target.n_tokens + 2, d).n_tokens + 2
    x_bar = sample_true_sequence(
        n_fit,
        L,
        d,
        generator=derive(generator, "construction-data"),
        dtype=dtype,
    )
    h = _last_states(model, normalize_sequence(x_bar, eps_x))[:, -2].double()  # h^(L-1)
    z = target.preactivations(x_bar)[:, 0, 0].double()
    v = fit_linear_decoder(h, z[:, None], ridge=decoder_ridge).matrix[:, 0]
    radius = float(h.norm(dim=1).mean())
    v_hat = v / v.norm()
    R = float(v.norm()) * radius
    u = (h @ v_hat) / h.norm(dim=1)
    lo, hi = float(u.min()), float(u.max())
    lo, hi = (
        max(-1.0, lo - margin * (hi - lo)),
        min(1.0, hi + margin * (hi - lo)),
    )
    phi = target.phis[0][0]
    var_b = 2.0 / model.output_dim
    b_dagger = float(target.b[0, 0])
    fit = fit_step_features(
        lambda t: b_dagger * phi(R * t) / var_b,
        interval=(lo, hi),
        radius=radius,
        degree=degree,
        ridge=fit_ridge,
    )
    W, A, B = (
        model.W.detach().double(),
        model.A.detach().double(),
        model.B.double(),
    )
    scale = math.sqrt(m / 2)
    coef = B[0] * fit.H(scale * (W @ v_hat), scale * A[:, -1]) / m
    dA = torch.zeros(m, d, dtype=torch.float64)
    dA[:, -1] = coef
    return Construction(dA.to(dtype), v.to(dtype), R, radius, fit)


@dataclass(frozen=True)
class ConstructionErrors:
    """:func:`evaluate_construction` results on test sequences (chapter 4).

    ``error``: mean ``|F(x; 0, A*) - F*(xbar)|`` (the full pseudo-network, all
    steps); ``terms``: mean ``|Back_{i->L} D^(i) A* x^(i)|`` per step i = 1..L
    (exactly 0 for the true tokens, which have no bias coordinate);
    ``decoding``: mean ``|<v, h^(L-1)> - <w_dagger, xbar>|``; ``norm_A``:
    ``|A*|_F``; ``target_std``: the standard deviation of ``F*`` (the error of
    the best constant predictor, for scale); ``centred``: the mean error once
    both sides are centred on their means (what is left when a constant
    offset is forgiven); ``F``, ``F_star``: the values.
    """

    error: float
    centred: float
    terms: np.ndarray
    decoding: float
    norm_A: float
    target_std: float
    F: np.ndarray
    F_star: np.ndarray


@validate_params(
    "eps_x",
    model=Model(ElmanRNN),
    construction=Instance(Construction),
    target=Instance(ConceptTarget),
)
def evaluate_construction(
    model: ElmanRNN,
    construction: Construction,
    target: ConceptTarget,
    x_bar: torch.Tensor,
    eps_x: float,
) -> ConstructionErrors:
    """Evaluate the constructed pseudo-network ``F(x; 0, A*)`` against ``F*(xbar)`` (chapter 4, Theorem 4.3)."""
    model = _check_model(model)
    if not isinstance(construction, Construction):
        raise TypeError(
            f"construction must be an rnnlib.inversion.Construction, got {type(construction).__name__}"
        )
    m, d = model.width, model.input_dim
    if construction.dA.shape != (m, d):
        raise ValueError(
            f"construction has A* of shape {tuple(construction.dA.shape)}, the model needs {(m, d)}"
        )
    x = normalize_sequence(x_bar, eps_x)
    target = check_target(target, x.shape[1], d)
    dA = construction.dA.to(model.W.dtype)
    F = pseudo_network(model, torch.zeros(m, m, dtype=model.W.dtype), dA, x)[
        :, 0
    ].double()
    F_star = target(x_bar)[:, 0].double()
    h = _last_states(model, x)
    back = back_matrices(model, x)[:, :, 0]  # (batch, L, m)
    terms = (
        ((back * (h > 0).to(x.dtype) * (x @ dA.T)).sum(dim=2))
        .double()
        .abs()
        .mean(dim=0)
    )
    z = target.preactivations(x_bar)[:, 0, 0].double()
    decoding = float((h[:, -2].double() @ construction.v.double() - z).abs().mean())
    return ConstructionErrors(
        float((F - F_star).abs().mean()),
        float(((F - F.mean()) - (F_star - F_star.mean())).abs().mean()),
        terms.numpy(),
        decoding,
        float(construction.dA.double().norm()),
        float(F_star.std()),
        F.numpy(),
        F_star.numpy(),
    )
