"""Recurrent models in the parametrization of the papers (chapter 1 onwards).

The Elman ReLU RNN of Panigrahi & Goyal (2021), Definition 3.2::

    h^(0) = 0,   h^(l) = relu(W h^(l-1) + A x^(l)),   l = 1..L,   y = B h^(L)

with ``W`` (m x m) and ``A`` (m x d) drawn i.i.d. N(0, 2/m), ``B`` (d_out x m)
drawn i.i.d. N(0, 2/d_out) and kept frozen: only ``W`` and ``A`` are trained.

The inputs are *normalized sequences* (Definition 3.1): a start token
``(0, ..., 0, 1)``, then the ``L - 2`` true tokens scaled by ``eps_x`` with a 0
appended, then an end token ``(0, ..., 0, 1)``. A true token is a unit vector
in R^(d-1) whose last coordinate is 1/2.

Shapes follow ``batch_first``: a batch of sequences is ``(batch, L, d)``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._recurrence import previous_states
from ._rng import as_generator
from ._validation import (
    Bool,
    Str,
    Tensor,
    check_tensor,
    validate_params,
)

__all__ = [
    "ElmanRNN",
    "elman_hidden_states",
    "elman_last_state",
    "normalize_sequence",
    "sample_true_sequence",
    "sample_normalized_sequence",
    "true_token_tolerance",
    "check_true_sequence",
]


def _elman_scan(
    W: torch.Tensor,
    A: torch.Tensor,
    x: torch.Tensor,
    keep_all: bool,
) -> torch.Tensor:
    """The recurrence itself: every h^(l) stacked as (batch, L, m) if ``keep_all``, else h^(L).

    The one Elman scan of rnnlib: :class:`ElmanRNN`, :func:`elman_hidden_states`,
    :func:`elman_last_state` and the SGD loops of :mod:`rnnlib.train` all run it. Each
    step does one small product ``x^(l) A^T``, one ``addmm`` and one ``relu``. The
    input is sliced per step, never a projection that requires grad: slicing one
    product of all steps would make autograd allocate a full-size zero tensor per
    step in the backward pass. (One product for all steps, split time-major, gives
    the same forward values bit for bit; on the one-sample batches of chapter 5's SGD
    steps, forward and backward, the two took the same time within noise.)
    """
    At, Wt = A.transpose(0, 1), W.transpose(0, 1)
    h = torch.relu(x[:, 0] @ At)  # h^(0) = 0, so the first step has no W term
    states = [h] if keep_all else None
    for step in range(1, x.shape[1]):
        h = torch.relu(torch.addmm(x[:, step] @ At, h, Wt))
        if keep_all:
            states.append(h)
    return torch.stack(states, dim=1) if keep_all else h


def _check_scan_args(W: object, A: object, x: object) -> None:
    """Types, shapes and dtypes only: no value checks, so that torch.func transforms still apply."""
    W = check_tensor(W, "W", ndim=2, finite=False)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square (m, m), got shape {tuple(W.shape)}")
    A = check_tensor(A, "A", shape=(W.shape[0], "d"), finite=False)
    x = check_tensor(x, "x", shape=("batch", "L", A.shape[1]), finite=False)
    if not (W.dtype == A.dtype == x.dtype):
        raise TypeError(
            f"W, A and x must share a dtype, got {W.dtype}, {A.dtype} and {x.dtype}"
        )


def elman_hidden_states(
    W: torch.Tensor, A: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """Hidden states h^(1..L) of the ReLU Elman recurrence, as a pure function.

    Computes ``h^(l) = relu(W h^(l-1) + A x^(l))`` from ``h^(0) = 0`` for
    ``x`` of shape (batch, L, d) and returns the stack ``(batch, L, m)``. A
    pure function of the weights, so that ``torch.func`` transforms (``jvp``,
    ``vjp``, ``jacrev``) apply to it directly (chapter 3 checks the
    pseudo-network against ``torch.func.jvp``). Only types, shapes and dtypes are
    checked here (value checks would stop the transforms): :class:`ElmanRNN`
    also refuses NaN/inf inputs at its public methods.
    """
    _check_scan_args(W, A, x)
    return _elman_scan(W, A, x, keep_all=True)


def elman_last_state(W: torch.Tensor, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """h^(L) alone, (batch, m): the same recurrence as :func:`elman_hidden_states` without the stack."""
    _check_scan_args(W, A, x)
    return _elman_scan(W, A, x, keep_all=False)


class ElmanRNN(nn.Module):
    """The Elman ReLU RNN of Panigrahi & Goyal (2021), eq. (1) (chapters 1-7).

    ``h^(l) = relu(W h^(l-1) + A x^(l))``, ``h^(0) = 0``, output ``B h^(L)``.

    Parameters
    ----------
    input_dim : d, the dimension of each (normalized) input token, >= 1.
    width : m, the number of neurons, >= 1.
    output_dim : d_out, the output dimension, >= 1.
    generator : a ``torch.Generator`` or an int seed for the initialization
        (``None`` means seed 0, so models are reproducible by default).
    dtype : ``torch.float32`` (default) or ``torch.float64``.
    doubled : the antisymmetric ("doubled") initialization of lazy-training work
        (chapters 5-6), a deviation from the paper's i.i.d. one: the m neurons are
        two copies of m/2 (``width`` must be even), so that the initial output is
        zero (up to floating-point rounding, about 1e-15 in float64). With ``W_1`` (m/2, m/2) entries N(0, 2/(m/2)), ``A_1``
        (m/2, d) entries N(0, 2/m) and ``B_1`` (d_out, m/2) entries N(0, 2/d_out),

            W = [[W_1, 0], [0, W_1]],   A = [A_1; A_1],   B = [B_1, -B_1].

        Both copies have the same hidden states, so ``F_rnn = B_1 h_1 - B_1 h_1 = 0``
        on every input (summed in one product: zero up to rounding). Each row of ``W`` and ``A`` has the same expected squared norm
        as in the i.i.d. initialization, and the hidden and backward vectors have the
        same per-neuron statistics, so ``K_m / m`` has the same limit
        :func:`rnnlib.ntk.limit_tangent_kernel` (checked in ``tests/test_elman.py``);
        the off-diagonal blocks of ``W`` start at 0 and are trained like the rest.

    Attributes
    ----------
    W : ``nn.Parameter`` (m, m), entries N(0, 2/m) at initialization.
    A : ``nn.Parameter`` (m, d), entries N(0, 2/m) at initialization.
    B : buffer (d_out, m), entries N(0, 2/d_out); frozen, never trained.
    doubled : whether the initialization was the doubled one.
    """

    @validate_params(
        "input_dim", "width", "output_dim", "dtype", "generator", doubled=Bool()
    )
    def __init__(
        self,
        input_dim: int,
        width: int,
        output_dim: int = 1,
        *,
        generator: torch.Generator | int | None = None,
        dtype: torch.dtype = torch.float32,
        doubled: bool = False,
    ) -> None:
        super().__init__()
        d = input_dim
        m = width
        d_out = output_dim
        if doubled and m % 2:
            raise ValueError(
                f"width must be even with doubled=True (two copies of width / 2 neurons), got {m}"
            )
        self.doubled = doubled
        gen = as_generator(generator)
        if doubled:
            self._init_doubled(d, m, d_out, gen, dtype)
            return
        std_hidden = math.sqrt(2.0 / m)
        std_out = math.sqrt(2.0 / d_out)
        self.W = nn.Parameter(
            torch.randn(m, m, generator=gen, dtype=dtype) * std_hidden
        )
        self.A = nn.Parameter(
            torch.randn(m, d, generator=gen, dtype=dtype) * std_hidden
        )
        self.register_buffer(
            "B",
            torch.randn(d_out, m, generator=gen, dtype=dtype) * std_out,
        )

    def _init_doubled(
        self,
        d: int,
        m: int,
        d_out: int,
        gen: torch.Generator,
        dtype: torch.dtype,
    ) -> None:
        """The doubled initialization of the class docstring: two copies of m/2 neurons, read out as +B_1 and -B_1."""
        k = m // 2
        W1 = torch.randn(k, k, generator=gen, dtype=dtype) * math.sqrt(2.0 / k)
        A1 = torch.randn(k, d, generator=gen, dtype=dtype) * math.sqrt(2.0 / m)
        B1 = torch.randn(d_out, k, generator=gen, dtype=dtype) * math.sqrt(2.0 / d_out)
        self.W = nn.Parameter(torch.block_diag(W1, W1))
        self.A = nn.Parameter(torch.cat([A1, A1]))
        self.register_buffer("B", torch.cat([B1, -B1], dim=1))

    @property
    def input_dim(self) -> int:
        """d, the token dimension."""
        return self.A.shape[1]

    @property
    def width(self) -> int:
        """m, the number of neurons."""
        return self.W.shape[0]

    @property
    def output_dim(self) -> int:
        """d_out, the output dimension."""
        return self.B.shape[0]

    @property
    def dtype(self) -> torch.dtype:
        """The weights' dtype (what a declared input ``dtype_of="model"`` must share)."""
        return self.W.dtype

    def extra_repr(self) -> str:
        text = f"input_dim={self.input_dim}, width={self.width}, output_dim={self.output_dim}"
        return text + (", doubled=True" if self.doubled else "")

    def check_input(self, x: object, name: str = "x") -> torch.Tensor:
        """``x`` checked as a batch of inputs for this model: a finite, non-empty floating-point tensor (batch, L, d) in the weights' dtype.

        The one input check of the functions that take an Elman RNN and its inputs
        (:mod:`rnnlib.pseudo`, :mod:`rnnlib.ntk`, :mod:`rnnlib.train`,
        :mod:`rnnlib.inversion`); errors name the argument ``name``.
        """
        x = check_tensor(x, name, shape=("batch", "L", self.input_dim))
        if x.dtype != self.W.dtype:
            raise TypeError(
                f"{name} has dtype {x.dtype} but the model's weights are {self.W.dtype}; "
                f"convert with {name}.to({self.W.dtype}) or build the model with dtype={x.dtype}"
            )
        return x

    def hidden_states(self, x: torch.Tensor) -> torch.Tensor:
        """h^(1), ..., h^(L) for a batch ``x`` of shape (batch, L, d); returns (batch, L, m)."""
        x = self.check_input(x)
        return _elman_scan(self.W, self.A, x, keep_all=True)  # validated once, here

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """F_rnn(x) = B h^(L) for ``x`` of shape (batch, L, d); returns (batch, d_out)."""
        x = self.check_input(x)
        return _elman_scan(self.W, self.A, x, keep_all=False) @ self.B.transpose(0, 1)

    def preactivations(self, x: torch.Tensor) -> torch.Tensor:
        """W h^(l-1) + A x^(l) for l = 1..L; returns (batch, L, m)."""
        x = self.check_input(x)
        with torch.no_grad():
            h = _elman_scan(self.W, self.A, x, keep_all=True)
            h_prev = previous_states(h)
            return h_prev @ self.W.transpose(0, 1) + x @ self.A.transpose(0, 1)

    def activation_patterns(self, x: torch.Tensor) -> torch.Tensor:
        """The diagonals of D^(l): ``1[w_r . h^(l-1) + a_r . x^(l) >= 0]``; bool (batch, L, m)."""
        return self.preactivations(x) >= 0


#: A batch of inputs of the Elman RNN ``model`` of the call, declared
#: (:meth:`ElmanRNN.check_input`'s checks): (batch, L, d) in the weights' dtype.
INPUTS = Tensor(shape=("batch", "L", "model.input_dim"), dtype_of="model")


@validate_params("dtype")
def true_token_tolerance(dtype: torch.dtype) -> float:
    """Tolerance used to decide that a token is a unit vector with last coordinate 1/2."""
    return 1e-4 if dtype == torch.float32 else 1e-10


@validate_params(name=Str())
def check_true_sequence(x_bar: object, name: str = "x_bar") -> torch.Tensor:
    """Validate true tokens of Definition 3.1 and return them: shape (batch, L-2, d-1), unit norm, last coordinate 1/2.

    The tolerance is :func:`true_token_tolerance` of the dtype. Used by every
    function that takes ``x_bar`` (here and in :mod:`rnnlib.concepts`).
    """
    x_bar = check_tensor(x_bar, name, shape=("batch", "L-2", "d-1"))
    if x_bar.shape[2] < 2:
        raise ValueError(
            f"{name} tokens must have d-1 >= 2 coordinates (a unit vector with last coordinate 1/2 "
            f"needs another coordinate), got shape {tuple(x_bar.shape)}"
        )
    tol = true_token_tolerance(x_bar.dtype)
    norms = x_bar.norm(dim=2)
    if not bool(((norms - 1).abs() <= tol).all()):
        worst = float((norms - 1).abs().max())
        raise ValueError(
            f"{name} tokens must be unit vectors (Definition 3.1); the largest |norm - 1| is {worst:.3g}"
        )
    if not bool(((x_bar[..., -1] - 0.5).abs() <= tol).all()):
        worst = float((x_bar[..., -1] - 0.5).abs().max())
        raise ValueError(
            f"{name} tokens must have last coordinate 1/2 (Definition 3.1); the largest deviation is {worst:.3g}"
        )
    return x_bar


@validate_params("eps_x")
def normalize_sequence(x_bar: torch.Tensor, eps_x: float) -> torch.Tensor:
    """The normalized input sequence of Definition 3.1 (chapter 1).

    Maps true sequences ``x_bar`` of shape (batch, L-2, d-1), each token a unit
    vector with last coordinate 1/2, to RNN inputs of shape (batch, L, d)::

        x^(1) = (0, ..., 0, 1)                       start token
        x^(l) = (eps_x * x_bar^(l), 0)   l = 2..L-1  scaled true tokens
        x^(L) = (0, ..., 0, 1)                       end token

    ``eps_x`` must lie in (0, 1].
    """
    x_bar = check_true_sequence(x_bar)
    batch, n_tokens, d_minus_1 = x_bar.shape
    x = x_bar.new_zeros(batch, n_tokens + 2, d_minus_1 + 1)
    x[:, 0, -1] = 1.0
    x[:, -1, -1] = 1.0
    x[:, 1:-1, :-1] = eps_x * x_bar
    return x


@validate_params("batch_size", "L", "d", "dtype", "generator")
def sample_true_sequence(
    batch_size: int,
    L: int,
    d: int,
    *,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Random true sequences for an RNN with sequence length ``L`` and input dimension ``d``.

    Returns (batch_size, L-2, d-1): each token is uniform on the sphere of unit
    vectors in R^(d-1) whose last coordinate is 1/2 (the first d-2 coordinates
    are uniform on the sphere of radius sqrt(3)/2). Needs ``L >= 3`` and ``d >= 3``.
    """
    gen = as_generator(generator)
    g = torch.randn(batch_size, L - 2, d - 2, generator=gen, dtype=dtype)
    g = g / g.norm(dim=2, keepdim=True) * (math.sqrt(3.0) / 2.0)
    half = torch.full((batch_size, L - 2, 1), 0.5, dtype=dtype)
    return torch.cat([g, half], dim=2)


@validate_params("batch_size", "L", "d", "eps_x", "dtype", "generator")
def sample_normalized_sequence(
    batch_size: int,
    L: int,
    d: int,
    eps_x: float,
    *,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """``normalize_sequence(sample_true_sequence(...), eps_x)``: RNN inputs (batch_size, L, d)."""
    return normalize_sequence(
        sample_true_sequence(batch_size, L, d, generator=generator, dtype=dtype),
        eps_x,
    )
