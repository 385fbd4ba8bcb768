"""The concept class of Panigrahi & Goyal (2021) and its complexity measures (chapters 2, 4, 5).

**Targets** (eq. (2)). A target reads the whole concatenated true sequence
``xbar = [xbar^(2), ..., xbar^(L-1)]`` (a vector of (L-2)(d-1) numbers)::

    F_s(xbar) = sum_{r <= p} b_{r,s} phi_{r,s}( <w_{r,s}, xbar> ),   s = 1..d_out,

with unit vectors ``w_{r,s}``, ``|b_{r,s}| <= 1`` and smooth ``phi_{r,s}`` with
``phi(0) = 0`` (:class:`ConceptTarget`, :func:`sample_target`).

**Complexity** (Definition 2.1, from Allen-Zhu, Li & Liang 2019). For
``phi(z) = sum_i c_i z^i``, ``C* = 10^4``::

    C_eps(phi, R) = sum_i ( (C* R)^i + (sqrt(log(1/eps)) / sqrt(i) * C* R)^i ) |c_i|
    C_s(phi, R)   = C* sum_i (i + 1)^1.75 R^i |c_i|

computed from the Taylor coefficients (closed forms in :data:`STANDARD_FUNCTIONS`,
any polynomial through :func:`polynomial`), in log space because ``C_eps`` of
``sin`` at ``R = 1`` is about ``e^(10^4)`` (:func:`complexity_s`,
:func:`complexity_eps`).

**The additive class** of Allen-Zhu & Li (2019): sums ``c + sum_i f_i(z_i)``
of functions of single tokens. Over a finite alphabet every ``f_i`` is a
table, so the best additive least-squares fit is a linear least-squares
problem on one-hot features (:func:`fit_additive`); chapter 2 uses it to show
that ``D_L1`` is not additive, while one quadratic neuron of the concept class
represents it (:func:`dl1_neuron`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from ._rng import derive
from ._validation import (
    ANY_REAL,
    OPEN_UNIT,
    POSITIVE,
    Bool,
    Either,
    Function,
    Instance,
    Int,
    Real,
    Seq,
    Str,
    Tensor,
    as_generator,
    check_int,
    check_real,
    check_tensor,
    validate_params,
)
from .elman import (
    check_true_sequence,
    normalize_sequence,
    sample_true_sequence,
)

__all__ = [
    "C_STAR",
    "SmoothFunction",
    "STANDARD_FUNCTIONS",
    "get_function",
    "polynomial",
    "monomial",
    "taylor_coefficients",
    "complexity_s",
    "complexity_eps",
    "ConceptTarget",
    "sample_target",
    "TaskSample",
    "sample_task",
    "token_circle",
    "mixed_difference",
    "AdditiveFit",
    "fit_additive",
    "dl1_neuron",
]

#: The absolute constant C* = 10^4 of Definition 2.1.
C_STAR: float = 1e4


@dataclass(frozen=True)
class SmoothFunction:
    """A smooth ``phi: R -> R`` with its Taylor coefficients at 0 (chapter 2).

    ``fn`` evaluates phi on a tensor; ``log_abs_coef(n)`` returns
    ``log|c_i|`` for i = 0..n-1 (``-inf`` where ``c_i = 0``); ``radius`` is the
    radius of convergence of the Taylor series (``inf`` for entire functions);
    ``degree`` is the degree for a polynomial, ``None`` otherwise.
    """

    name: str
    fn: Callable[[torch.Tensor], torch.Tensor]
    log_abs_coef: Callable[[int], np.ndarray]
    radius: float = math.inf
    degree: int | None = None
    latex: str = ""

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        return self.fn(z)

    def __repr__(self) -> str:
        return f"SmoothFunction({self.name!r})"


SmoothFunction.__init__ = validate_params(
    name=Str(),
    fn=Function(),
    log_abs_coef=Function(),
    radius=Real(0.0, low_open=True, allow_inf=True),
    degree=Int(0),
    latex=Str(),
)(SmoothFunction.__init__)

#: A function argument: a :class:`SmoothFunction` or the name of one (:func:`get_function`).
PHI = Either(Instance(SmoothFunction), Str())


def _log_factorial_series(n: int, parity: int | None) -> np.ndarray:
    """log(1/i!) for i < n, -inf where i has the wrong parity (None: all i)."""
    out = -_lgamma_vec(np.arange(n, dtype=float) + 1.0)
    if parity is not None:
        out[(np.arange(n) % 2) != parity] = -np.inf
    return out


def _lgamma_vec(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) for x >= 1 (Stirling series, accurate to ~1e-10 for x >= 10; exact lgamma below)."""
    out = np.empty_like(x)
    small = x < 10
    out[small] = [math.lgamma(v) for v in x[small]]
    y = x[~small]
    out[~small] = (
        (y - 0.5) * np.log(y)
        - y
        + 0.5 * math.log(2 * math.pi)
        + 1 / (12 * y)
        - 1 / (360 * y**3)
    )
    return out


def _zeta_even(n: np.ndarray) -> np.ndarray:
    """zeta(2n) for integers n >= 1 (direct sum of 2000 terms plus the Euler-Maclaurin tail)."""
    k = np.arange(1, 2001, dtype=float)
    K = 2000.0
    out = np.empty(len(n))
    for j, nn in enumerate(n):
        s = 2.0 * nn
        out[j] = np.sum(k**-s) + K ** (1 - s) / (s - 1) - 0.5 * K**-s
    return out


def _tanh_log_coef(n: int) -> np.ndarray:
    """log|c_i| of tanh: |c_{2k-1}| = 2 (2/pi)^{2k} (1 - 4^{-k}) zeta(2k); even coefficients vanish."""
    out = np.full(n, -np.inf)
    odd = np.arange(1, n, 2)
    k = (odd + 1) // 2
    out[odd] = (
        math.log(2.0)
        + 2 * k * math.log(2 / math.pi)
        + np.log1p(-(4.0 ** (-k.astype(float))))
        + np.log(_zeta_even(k))
    )
    return out


def _with_zero_constant(
    f: Callable[[int], np.ndarray],
) -> Callable[[int], np.ndarray]:
    def g(n: int) -> np.ndarray:
        out = f(n)
        if n > 0:
            out[0] = -np.inf
        return out

    return g


#: The standard smooth functions of the chapters, by name. ``phi(0) = 0`` for
#: all but ``exp`` and ``cos`` (listed for the paper's complexity table only).
STANDARD_FUNCTIONS: dict[str, SmoothFunction] = {
    "sin": SmoothFunction(
        "sin",
        torch.sin,
        lambda n: _log_factorial_series(n, 1),
        latex=r"\sin z",
    ),
    "sinh": SmoothFunction(
        "sinh",
        torch.sinh,
        lambda n: _log_factorial_series(n, 1),
        latex=r"\sinh z",
    ),
    "expm1": SmoothFunction(
        "expm1",
        torch.expm1,
        _with_zero_constant(lambda n: _log_factorial_series(n, None)),
        latex=r"e^z - 1",
    ),
    "exp": SmoothFunction(
        "exp",
        torch.exp,
        lambda n: _log_factorial_series(n, None),
        latex=r"e^z",
    ),
    "cos": SmoothFunction(
        "cos",
        torch.cos,
        lambda n: _log_factorial_series(n, 0),
        latex=r"\cos z",
    ),
    "tanh": SmoothFunction(
        "tanh",
        torch.tanh,
        _tanh_log_coef,
        radius=math.pi / 2,
        latex=r"\tanh z",
    ),
}


@validate_params(name=Str(), coefficients=Seq(ANY_REAL, "coefficients"))
def polynomial(
    coefficients: Sequence[float], name: str | None = None
) -> SmoothFunction:
    """The polynomial ``phi(z) = sum_i c_i z^i`` with ``coefficients = (c_0, c_1, ...)`` (chapter 2)."""
    if isinstance(coefficients, (str, bytes)) or not isinstance(
        coefficients, (Sequence, np.ndarray)
    ):
        raise TypeError(
            f"coefficients must be a sequence of real numbers, got {type(coefficients).__name__}"
        )
    coefs = [check_real(c, f"coefficients[{i}]") for i, c in enumerate(coefficients)]
    if len(coefs) == 0:
        raise ValueError("coefficients must contain at least one number")
    while len(coefs) > 1 and coefs[-1] == 0.0:
        coefs.pop()
    degree = len(coefs) - 1
    log_abs = np.array([math.log(abs(c)) if c != 0 else -np.inf for c in coefs])

    def fn(z: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(z) + coefs[-1]
        for c in reversed(coefs[:-1]):
            out = out * z + c
        return out

    def log_abs_coef(n: int) -> np.ndarray:
        out = np.full(n, -np.inf)
        k = min(n, len(log_abs))
        out[:k] = log_abs[:k]
        return out

    if name is None:
        terms = [f"{c:g} z^{i}" for i, c in enumerate(coefs) if c != 0]
        name = " + ".join(terms) if terms else "0"
    latex = " + ".join(f"{c:g} z^{{{i}}}" for i, c in enumerate(coefs) if c != 0) or "0"
    return SmoothFunction(name, fn, log_abs_coef, degree=degree, latex=latex)


@validate_params("k")
def monomial(k: int) -> SmoothFunction:
    """``phi(z) = z^k`` (chapter 2); ``k >= 1`` so that ``phi(0) = 0``."""
    f = polynomial([0.0] * k + [1.0], name=f"z^{k}")
    return SmoothFunction(
        f"z^{k}",
        f.fn,
        f.log_abs_coef,
        degree=k,
        latex=f"z^{{{k}}}",
    )


@validate_params(phi=PHI)
def get_function(phi: SmoothFunction | str) -> SmoothFunction:
    """Resolve a name (``"sin"``, ``"z^3"``, ...) or a :class:`SmoothFunction` to a :class:`SmoothFunction`."""
    if isinstance(phi, SmoothFunction):
        return phi
    if isinstance(phi, str):
        if phi in STANDARD_FUNCTIONS:
            return STANDARD_FUNCTIONS[phi]
        if phi.startswith("z^") and phi[2:].isdigit():
            return monomial(int(phi[2:]))
        known = ", ".join(list(STANDARD_FUNCTIONS) + ["z^k"])
        raise ValueError(f"phi: unknown function name {phi!r}; known names are {known}")
    raise TypeError(
        f"phi must be a SmoothFunction or a function name, got {type(phi).__name__}"
    )


@validate_params("n", phi=PHI)
def taylor_coefficients(phi: SmoothFunction | str, n: int) -> np.ndarray:
    """The first ``n`` Taylor coefficients ``|c_0|, ..., |c_{n-1}|`` of ``phi`` at 0, in absolute value."""
    phi = get_function(phi)
    return np.exp(phi.log_abs_coef(n))


def _n_terms(phi: SmoothFunction, scale: float) -> int:
    """Enough terms for a series whose i-th term is at most scale^i |c_i| (scale < radius)."""
    if phi.degree is not None:
        return phi.degree + 1
    if math.isfinite(phi.radius):  # geometric decay with ratio scale / radius
        q = scale / phi.radius
        return int(min(200_000, 60 + 60 / max(1e-12, -math.log(q)))) if scale > 0 else 1
    return int(2 * scale + 12 * math.sqrt(scale) + 80)


def _logsumexp(a: np.ndarray) -> float:
    m = np.max(a)
    if not np.isfinite(m):
        return float(m)
    return float(m + np.log(np.sum(np.exp(a - m))))


def _result(log_value: float, log10: bool) -> float:
    value10 = log_value / math.log(10)
    if log10:
        return value10
    return math.inf if value10 > 308 else 10.0**value10


@validate_params("R", log10=Bool(), phi=PHI)
def complexity_s(phi: SmoothFunction | str, R: float, *, log10: bool = False) -> float:
    """The sample complexity ``C_s(phi, R) = C* sum_i (i+1)^1.75 R^i |c_i|`` (Definition 2.1; chapter 2).

    Returns ``inf`` when the series diverges (``R >= radius``, e.g. ``R >= pi/2``
    for tanh) or overflows a float; with ``log10=True`` returns
    ``log10 C_s`` instead (finite whenever the series converges).
    """
    phi = get_function(phi)
    if R >= phi.radius:
        return math.inf
    n = _n_terms(phi, R)
    i = np.arange(n, dtype=float)
    with np.errstate(invalid="ignore"):
        log_r = np.where(i == 0, 0.0, i * (math.log(R) if R > 0 else -np.inf))
    terms = math.log(C_STAR) + 1.75 * np.log1p(i) + log_r + phi.log_abs_coef(n)
    return _result(_logsumexp(terms), log10)


@validate_params("R", eps=OPEN_UNIT, log10=Bool(), phi=PHI)
def complexity_eps(
    phi: SmoothFunction | str,
    R: float,
    eps: float,
    *,
    log10: bool = False,
) -> float:
    """The network-size complexity ``C_eps(phi, R)`` of Definition 2.1 (chapter 2).

    ``C_eps = sum_i ((C* R)^i + (sqrt(log(1/eps)/i) C* R)^i) |c_i|``, with the
    i = 0 term ``2|c_0|``. ``eps`` must lie in (0, 1). Returns ``inf`` when the
    series diverges (``C* R >= radius``) or overflows; ``log10=True`` returns
    ``log10 C_eps`` (about 4343 for sin at R = 1: ``C_eps`` is ``e^(C* R)``-large).
    """
    phi = get_function(phi)
    a = C_STAR * R
    lg = math.sqrt(math.log(1.0 / eps))
    if (
        a >= phi.radius
    ):  # the (C* R)^i |c_i| series diverges; the other one always converges
        return math.inf
    if math.isfinite(phi.radius):
        n = _n_terms(phi, a) + int((lg * a / phi.radius) ** 2)
    else:
        n = _n_terms(phi, a * max(1.0, lg))
    i = np.arange(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_a = math.log(a) if a > 0 else -np.inf
        first = np.where(i == 0, 0.0, i * log_a)
        second = np.where(
            i == 0,
            0.0,
            i * (math.log(lg) - 0.5 * np.log(np.maximum(i, 1.0)) + log_a)
            if lg > 0
            else -np.inf,
        )
    terms = np.logaddexp(first, second) + phi.log_abs_coef(n)
    return _result(_logsumexp(terms), log10)


@dataclass
class ConceptTarget:
    """A target of the concept class, eq. (2) of Panigrahi & Goyal (chapters 2, 4, 5).

    ``F_s(xbar) = sum_r b[s, r] phi[s][r](<w[s, r], xbar>)`` for true sequences
    ``xbar`` of shape (batch, n_tokens, token_dim), flattened to
    (batch, n_tokens * token_dim). Here ``n_tokens = L - 2`` and
    ``token_dim = d - 1``.

    Attributes
    ----------
    phis : d_out lists of p :class:`SmoothFunction` each, with ``phi(0) = 0``.
    w : (d_out, p, n_tokens * token_dim), unit rows.
    b : (d_out, p), entries in [-1, 1].
    n_tokens, token_dim : the shape of one true sequence.
    """

    phis: list[list[SmoothFunction]]
    w: torch.Tensor
    b: torch.Tensor
    n_tokens: int
    token_dim: int
    _tol: float = field(default=1e-5, repr=False)

    def __post_init__(self) -> None:
        d_out, p, dim = self.w.shape
        if dim != self.n_tokens * self.token_dim:
            raise ValueError(
                f"w must have shape (d_out, p, {self.n_tokens * self.token_dim}), got {tuple(self.w.shape)}"
            )
        if not bool(((self.w.norm(dim=2) - 1).abs() <= self._tol).all()):
            raise ValueError(
                "w must have unit rows: every w_{r,s} lies on the unit sphere (Definition 3.3)"
            )
        if not bool((self.b.abs() <= 1 + self._tol).all()):
            raise ValueError("b must have entries in [-1, 1] (Definition 3.3)")
        if len(self.phis) != d_out or any(len(row) != p for row in self.phis):
            raise ValueError(
                f"phis must be {d_out} lists of {p} functions, matching w and b"
            )
        self.phis = [[get_function(f) for f in row] for row in self.phis]
        for row in self.phis:
            for f in row:
                if abs(float(f(torch.zeros(1, dtype=torch.float64)))) > 1e-12:
                    raise ValueError(
                        f"phis: every function must satisfy phi(0) = 0 (Definition 3.3); {f.name} does not"
                    )

    @property
    def output_dim(self) -> int:
        """d_out."""
        return self.w.shape[0]

    @property
    def width(self) -> int:
        """p, the number of neurons per output."""
        return self.w.shape[1]

    def preactivations(self, x_bar: torch.Tensor) -> torch.Tensor:
        """``<w_{r,s}, xbar>`` for each sequence; returns (batch, d_out, p)."""
        x_bar = check_true_sequence(x_bar)
        if tuple(x_bar.shape[1:]) != (
            self.n_tokens,
            self.token_dim,
        ):
            raise ValueError(
                f"x_bar must have shape (batch, {self.n_tokens}, {self.token_dim}) for this target, "
                f"got {tuple(x_bar.shape)}"
            )
        flat = x_bar.reshape(x_bar.shape[0], -1)
        return torch.einsum("bk,spk->bsp", flat, self.w.to(x_bar.dtype))

    def __call__(self, x_bar: torch.Tensor) -> torch.Tensor:
        """``F(xbar)`` for true sequences ``x_bar`` (batch, n_tokens, token_dim); returns (batch, d_out)."""
        z = self.preactivations(x_bar)
        cols = []
        for s in range(self.output_dim):
            vals = torch.stack(
                [self.phis[s][r](z[:, s, r]) for r in range(self.width)],
                dim=1,
            )
            cols.append((vals * self.b[s].to(x_bar.dtype)).sum(dim=1))
        return torch.stack(cols, dim=1)

    def complexity_s(self, R: float, *, log10: bool = False) -> float:
        """``C_s(Phi, R) = max_phi C_s(phi, R)`` over the functions of the target (``log10``: its log10)."""
        return max(complexity_s(f, R, log10=log10) for row in self.phis for f in row)

    def complexity_eps(self, R: float, eps: float, *, log10: bool = False) -> float:
        """``C_eps(Phi, R) = max_phi C_eps(phi, R)`` over the functions of the target (``log10``: its log10)."""
        return max(
            complexity_eps(f, R, eps, log10=log10) for row in self.phis for f in row
        )


ConceptTarget.__init__ = validate_params(
    phis=Seq(Seq(PHI, "functions"), "rows"),
    w=Tensor(shape=("d_out", "p", None)),
    b=Tensor(shape=("d_out", "p")),
    n_tokens=Int(1),
    token_dim=Int(2),
    _tol=POSITIVE,
)(ConceptTarget.__init__)


@validate_params(
    "L",
    "d",
    "output_dim",
    "generator",
    "dtype",
    p=Int(1),
    radius=Real(0.0, low_open=True, allow_inf=True),
)
def sample_target(
    L: int,
    d: int,
    *,
    p: int = 4,
    output_dim: int = 1,
    functions: Sequence[SmoothFunction | str] = (
        "sin",
        "expm1",
        "z^2",
        "z^3",
    ),
    radius: float = math.inf,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> ConceptTarget:
    """A random target of the concept class for sequences of length ``L`` and dimension ``d`` (chapter 2).

    Each of the ``p * output_dim`` neurons gets a function drawn uniformly from
    ``functions`` (each with ``phi(0) = 0``), a weight ``w`` uniform on the unit
    sphere of R^((L-2)(d-1)) and a coefficient ``b`` uniform in [-1, 1].

    Membership in the class is checked, not assumed: Theorem 3.1 of Panigrahi &
    Goyal evaluates the complexity at the radius ``R = O(1/eps_x)``, so every
    function must have finite ``C_s(phi, radius)`` and ``C_eps(phi, radius)``
    (Definition 2.1), i.e. a Taylor series that converges on ``|z| <= C* radius``.
    The default ``radius = inf`` asks for entire functions (finite complexity at
    every radius, as ``eps_x -> 0`` requires); ``tanh``, whose series stops
    converging at ``pi/2``, is refused unless ``radius < pi / (2 C*)``.
    """
    if isinstance(functions, (str, bytes)) or len(functions) == 0:
        raise ValueError(
            f"functions must be a non-empty sequence of functions or names, got {functions!r}"
        )
    funcs = [get_function(f) for f in functions]
    for f in funcs:
        if not (f.radius == math.inf or C_STAR * radius < f.radius):
            raise ValueError(
                f"functions: {f.name} is not in the concept class at radius {radius:g}: its Taylor series "
                f"converges only for |z| < {f.radius:.4g}, so C_eps({f.name}, {radius:g}) is infinite "
                f"(Definition 2.1); use entire functions (sin, expm1, polynomials) or a smaller radius"
            )
    gen = as_generator(generator)
    dim = (L - 2) * (d - 1)
    w = torch.randn(output_dim, p, dim, generator=gen, dtype=dtype)
    w = w / w.norm(dim=2, keepdim=True)
    b = 2 * torch.rand(output_dim, p, generator=gen, dtype=dtype) - 1
    idx = torch.randint(0, len(funcs), (output_dim, p), generator=gen)
    phis = [[funcs[int(idx[s, r])] for r in range(p)] for s in range(output_dim)]
    return ConceptTarget(phis, w, b, L - 2, d - 1)


class TaskSample(NamedTuple):
    """:func:`sample_task` results: the normalized sequences and the target's values."""

    #: the normalized sequences ``x`` (n, L, d)
    x: torch.Tensor
    #: the target's values ``F*(x_bar)`` (n, 1)
    y: torch.Tensor


@validate_params("L", "d", "eps_x", "n", "generator", "dtype", p=Int(1))
def sample_task(
    L: int,
    d: int,
    eps_x: float,
    n: int,
    *,
    p: int = 4,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> TaskSample:
    """``(x, F*(x_bar))``: ``n`` normalized sequences and the values of a random concept-class target (chapters 5-6).

    ``x_bar`` is :func:`rnnlib.elman.sample_true_sequence` on the stream
    ``derive(generator, "data")``, ``F*`` is :func:`sample_target` (``p``
    neurons) on the stream ``"target"``, and ``x`` is ``x_bar`` normalized
    (Definition 3.1). The one draw behind ``rnnlib.experiments.ch05.regression_task``
    (chapter 5) and :func:`rnnlib.generalization.classification_task` (chapter 6).
    """
    x_bar = sample_true_sequence(
        n, L, d, generator=derive(generator, "data"), dtype=dtype
    )
    target = sample_target(
        L,
        d,
        p=p,
        generator=derive(generator, "target"),
        dtype=dtype,
    )
    return TaskSample(normalize_sequence(x_bar, eps_x), target(x_bar))


#: One true sequence (n_tokens, token_dim) and a grid of angles (k,), for the token circles of chapter 2.
_TOKENS, _ANGLES = Tensor(ndim=2), Tensor(ndim=1)
#: Integer tokens (batch, n) for :func:`fit_additive`.
_INTEGER_TOKENS = Tensor(shape=("batch", None), floating=False, integer=True)


@validate_params(x_bar=_TOKENS, thetas=_ANGLES)
def token_circle(
    x_bar: torch.Tensor, position: int, thetas: torch.Tensor
) -> torch.Tensor:
    """Copies of one true sequence with the token at ``position`` moved along a circle (chapter 2).

    ``x_bar`` is one true sequence (n_tokens, token_dim); token ``position``
    (0-based) is replaced by ``(sqrt(3)/2 cos theta, sqrt(3)/2 sin theta, 0, ..., 0, 1/2)``
    for each angle in ``thetas`` (k,). Returns (k, n_tokens, token_dim), still
    true sequences. Needs ``token_dim >= 3``.
    """
    if x_bar.shape[1] < 3:
        raise ValueError(
            f"x_bar tokens need token_dim >= 3 to move on a circle, got shape {tuple(x_bar.shape)}"
        )
    position = check_int(
        position,
        "position",
        minimum=-x_bar.shape[0],
        maximum=x_bar.shape[0] - 1,
    )
    out = x_bar.expand(len(thetas), -1, -1).clone()
    c = math.sqrt(3.0) / 2.0
    tok = torch.zeros(len(thetas), x_bar.shape[1], dtype=x_bar.dtype)
    tok[:, 0] = c * torch.cos(thetas.to(x_bar.dtype))
    tok[:, 1] = c * torch.sin(thetas.to(x_bar.dtype))
    tok[:, -1] = 0.5
    out[:, position] = tok
    return out


@validate_params(x_bar=_TOKENS, thetas=_ANGLES, f=Function())
def mixed_difference(
    f: Callable[[torch.Tensor], torch.Tensor],
    x_bar: torch.Tensor,
    thetas: torch.Tensor,
    positions: tuple[int, int] = (0, -1),
) -> torch.Tensor:
    """The interaction ``f(t1, t2) - f(t1, 0) - f(0, t2) + f(0, 0)`` of two tokens on a grid (chapter 2).

    Tokens ``positions[0]`` and ``positions[1]`` of the single true sequence
    ``x_bar`` (n_tokens, token_dim) move along circles (:func:`token_circle`)
    with angles ``thetas`` (k,); ``f`` maps (batch, n_tokens, token_dim) to
    (batch, d_out) and the first output is used. Returns (k, k): identically 0
    exactly when ``f`` restricted to those two tokens is additive
    ``g_1(t1) + g_2(t2)``; ``[i, j]`` is the value at ``(thetas[i], thetas[j])``.
    """
    if not callable(f):
        raise TypeError(
            f"f must be callable (a model or a target), got {type(f).__name__}"
        )
    if len(positions) != 2:
        raise ValueError(f"positions must be two token indices, got {positions!r}")
    k = len(thetas)
    grid = []
    for t1 in thetas:
        first = token_circle(x_bar, positions[0], t1.reshape(1))[0]
        grid.append(token_circle(first, positions[1], thetas))
    values = f(torch.cat(grid))[:, 0].reshape(k, k)
    return values - values[:, :1] - values[:1, :] + values[:1, :1]


@dataclass(frozen=True)
class AdditiveFit:
    """The best additive function ``c + sum_i f_i(z_i)`` in least squares (chapter 2).

    ``table[i, a]`` is ``f_i(a)`` (with ``intercept`` absorbed: the
    decomposition is not unique, ``predict`` is), ``mse`` the mean squared
    error on the fitted data.
    """

    table: torch.Tensor
    intercept: float
    mse: float

    def predict(self, tokens: torch.Tensor) -> torch.Tensor:
        """``c + sum_i f_i(tokens[:, i])`` for integer tokens (batch, n); returns (batch,)."""
        tokens = check_tensor(
            tokens,
            "tokens",
            shape=("batch", self.table.shape[0]),
            floating=False,
            integer=True,
        )
        if bool((tokens < 0).any()) or bool((tokens >= self.table.shape[1]).any()):
            raise ValueError(
                f"tokens must lie in {{0, ..., {self.table.shape[1] - 1}}} (the fitted alphabet)"
            )
        gathered = torch.gather(
            self.table.expand(tokens.shape[0], -1, -1),
            2,
            tokens.long()[:, :, None],
        )
        return self.intercept + gathered[:, :, 0].sum(dim=1)


@validate_params(
    alphabet_size=Int(1),
    tokens=_INTEGER_TOKENS,
    y=Tensor(shape=("batch",)),
)
def fit_additive(
    tokens: torch.Tensor,
    y: torch.Tensor,
    *,
    alphabet_size: int | None = None,
) -> AdditiveFit:
    """Least-squares fit of ``y`` by ``c + sum_i f_i(tokens_i)`` over all functions ``f_i`` (chapter 2).

    ``tokens`` is an integer tensor (batch, n) with values in
    {0, ..., alphabet_size - 1}; ``y`` is (batch,). Over a finite alphabet a
    function of one token is a table of ``alphabet_size`` numbers, so the
    additive class of Allen-Zhu & Li (one output, single-token functions) is a
    linear space spanned by the one-hot features ``1[z_i = a]`` and the best
    fit in the whole class is one linear least-squares problem (solved in
    float64). Returns an :class:`AdditiveFit`.
    """
    batch, n = tokens.shape
    if bool((tokens < 0).any()):
        raise ValueError("tokens must be non-negative integers")
    k = int(tokens.max()) + 1 if alphabet_size is None else alphabet_size
    if bool((tokens >= k).any()):
        raise ValueError(
            f"tokens must lie in {{0, ..., {k - 1}}} (alphabet_size = {k})"
        )
    onehot = (
        torch.nn.functional.one_hot(tokens.long(), k)
        .to(torch.float64)
        .reshape(batch, n * k)
    )
    X = torch.cat([torch.ones(batch, 1, dtype=torch.float64), onehot], dim=1)
    yy = y.to(torch.float64)
    sol = torch.linalg.lstsq(X, yy[:, None], driver="gelsd").solution[:, 0]
    mse = float(((X @ sol - yy) ** 2).mean())
    return AdditiveFit(sol[1:].reshape(n, k), float(sol[0]), mse)


@validate_params("n", "dtype")
def dl1_neuron(n: int, *, dtype: torch.dtype = torch.float64) -> ConceptTarget:
    """One quadratic neuron of the concept class that computes ``s(2 - s)`` on embedded strings (chapter 2).

    With the embedding of :func:`rnnlib.languages.embed_binary` and
    ``w = (e_1, e_1, ..., e_1) / sqrt(n)`` (unit), ``<w, xbar> = c s`` with
    ``c = sqrt(3) / (2 sqrt(n))`` and ``s`` the number of 1s; the polynomial
    ``phi(t) = 2 t / c - t^2 / c^2`` (``phi(0) = 0``) gives ``phi = s (2 - s)``:
    1 on ``D_L1``, 0 for s in {0, 2}, <= -3 for s >= 3. So ``1[F > 1/2]`` is
    the indicator of ``D_L1`` on every string. A reconstruction for the book
    (the paper's Sec. H is not available), following its one-neuron remark.
    """
    c = math.sqrt(3.0) / (2.0 * math.sqrt(n))
    phi = polynomial([0.0, 2.0 / c, -1.0 / c**2], name="s(2-s)")
    w = torch.zeros(1, 1, n, 3, dtype=dtype)
    w[..., 0] = 1.0 / math.sqrt(n)
    return ConceptTarget(
        [[phi]],
        w.reshape(1, 1, 3 * n),
        torch.ones(1, 1, dtype=dtype),
        n,
        3,
    )
