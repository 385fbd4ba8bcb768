"""Simple recurrent models for Part II (chapters 8-11): the objects of Miller & Hardt (2019).

Every model here is a recurrent map on a state vector ``s``::

    s_0 = 0,    s_t = phi_w(s_{t-1}, x_t),    y_t = C h_t,   t = 1..T

with a *fixed* linear read-out ``C`` (a frozen buffer: the paper's output map
``f`` is not trained; trainable read-out parameters "can be pushed into the
recurrent model"). Three maps are provided:

* :class:`LinearSystem`: ``phi(h, x) = W h + U x`` (a linear dynamical system);
* :class:`SimpleRNN`: ``phi(h, x) = rho(W h + U x)`` with ``rho`` = tanh or relu;
* :class:`LSTM`: the LSTM cell, state ``s = (c, h)`` stored as one vector of
  length ``2H`` (cell state first), weights packed in the order of
  ``torch.nn.LSTM`` (gates ``i, f, g = z, o``), cross-checked against it.

All shapes are ``batch_first``: inputs ``(batch, T, n)``, states
``(batch, T, state_dim)``. Every model exposes the one-step map
:meth:`RecurrentModel.step`, so truncation (:mod:`rnnlib.truncation`) and state
Jacobians (:mod:`rnnlib.stability`) work for all of them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from ._rng import as_generator
from ._validation import (
    ANY_REAL,
    NONNEGATIVE,
    Choice,
    Int,
    Model,
    Tensor,
    validate_params,
)

__all__ = [
    "RecurrentModel",
    "LinearSystem",
    "SimpleRNN",
    "LSTMGates",
    "LSTM",
    "recurrent_matrix",
    "INIT_SCHEMES",
]

#: The declared sizes and dtype every model's constructor takes.
_SIZES = ("input_dim", "hidden_dim", "output_dim", "dtype")

#: Initializations of a square recurrent matrix known to :func:`recurrent_matrix` (chapter 8).
INIT_SCHEMES = ("torch", "orthogonal", "elman", "gaussian")


@validate_params(
    "dtype",
    "generator",
    m=Int(1),
    scheme=Choice(*INIT_SCHEMES),
    spectral_norm=NONNEGATIVE,
)
def recurrent_matrix(
    m: int,
    scheme: str = "gaussian",
    *,
    spectral_norm: float | None = None,
    generator: torch.Generator | int | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """An ``m x m`` recurrent matrix drawn from a standard initialization (chapter 8).

    Schemes:

    * ``"torch"``: ``torch.nn.RNN``'s default, entries U(-1/sqrt(m), 1/sqrt(m));
    * ``"orthogonal"``: a uniformly random orthogonal matrix (``||W||_2 = 1``);
    * ``"elman"``: the Part I initialization, entries N(0, 2/m) (``||W||_2 -> 2 sqrt 2``);
    * ``"gaussian"``: entries N(0, 1/m) (``||W||_2 -> 2``).

    If ``spectral_norm`` is given, the matrix is rescaled to have exactly that
    largest singular value ``||W||_2``.
    """
    gen = as_generator(generator)
    if scheme == "torch":
        bound = 1.0 / math.sqrt(m)
        W = (torch.rand(m, m, generator=gen, dtype=dtype) * 2 - 1) * bound
    elif scheme == "orthogonal":
        q, r = torch.linalg.qr(torch.randn(m, m, generator=gen, dtype=torch.float64))
        W = (q * torch.sign(torch.diagonal(r))).to(dtype)  # Haar-distributed
    elif scheme == "elman":
        W = torch.randn(m, m, generator=gen, dtype=dtype) * math.sqrt(2.0 / m)
    else:
        W = torch.randn(m, m, generator=gen, dtype=dtype) / math.sqrt(m)
    if spectral_norm is not None:
        W = W * (spectral_norm / torch.linalg.matrix_norm(W, ord=2))
    return W


class RecurrentModel(nn.Module):
    """Base class: a recurrent map ``s_t = phi_w(s_{t-1}, x_t)`` with a frozen read-out ``C``.

    Subclasses define :meth:`step` (batched, no validation) and
    :meth:`hidden` (the part ``h`` of the state that the read-out sees).
    """

    state_dim: int
    input_dim: int

    def step(
        self, s: torch.Tensor, x_t: torch.Tensor
    ) -> torch.Tensor:  # pragma: no cover - abstract
        """One step ``phi_w(s, x_t)`` for ``s`` (batch, state_dim), ``x_t`` (batch, n)."""
        raise NotImplementedError

    def hidden(self, s: torch.Tensor) -> torch.Tensor:
        """The hidden part ``h`` of states ``s`` (..., state_dim); the whole state by default."""
        return s

    @property
    def dtype(self) -> torch.dtype:
        return self.C.dtype

    @property
    def output_dim(self) -> int:
        return self.C.shape[0]

    def initial_state(self, batch: int) -> torch.Tensor:
        """The zero state ``s_0 = 0``, shape (batch, state_dim)."""
        return torch.zeros(
            batch,
            self.state_dim,
            dtype=self.dtype,
            device=self.C.device,
        )

    @validate_params(
        x=Tensor(shape=("batch", "T", "self.input_dim"), dtype_of="self"),
        s0=Tensor(shape=("batch", "self.state_dim")),
    )
    def forward(self, x: torch.Tensor, s0: torch.Tensor | None = None) -> torch.Tensor:
        """States ``s_1, ..., s_T`` for inputs ``x`` (batch, T, n); returns (batch, T, state_dim).

        ``s0`` (batch, state_dim) is the initial state (default 0, as in the paper).
        """
        s = self.initial_state(x.shape[0]) if s0 is None else s0
        states = []
        for t in range(x.shape[1]):
            s = self.step(s, x[:, t])
            states.append(s)
        return torch.stack(states, dim=1)

    def output(self, states: torch.Tensor) -> torch.Tensor:
        """The read-out ``y_t = C h_t`` of states (..., state_dim); returns (..., output_dim)."""
        return self.hidden(states) @ self.C.transpose(0, 1)


class _MatrixRNN(RecurrentModel):
    """Shared constructor of :class:`LinearSystem` and :class:`SimpleRNN` (``W``, ``U``, ``C``): its constraints are declared once, here."""

    @validate_params(
        *_SIZES,
        "generator",
        init=Choice(*INIT_SCHEMES),
        spectral_norm=NONNEGATIVE,
    )
    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        output_dim: int = 1,
        *,
        init: str = "gaussian",
        spectral_norm: float | None = None,
        generator: torch.Generator | int | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        n, m, d_out = input_dim, hidden_dim, output_dim
        gen = as_generator(generator)
        self.input_dim, self.state_dim = n, m
        self.W = nn.Parameter(
            recurrent_matrix(
                m,
                init,
                spectral_norm=spectral_norm,
                generator=gen,
                dtype=dtype,
            )
        )
        self.U = nn.Parameter(
            torch.randn(m, n, generator=gen, dtype=dtype) / math.sqrt(n)
        )
        self.register_buffer(
            "C",
            torch.randn(d_out, m, generator=gen, dtype=dtype) / math.sqrt(m),
        )

    @property
    def hidden_dim(self) -> int:
        return self.state_dim

    def extra_repr(self) -> str:
        return f"input_dim={self.input_dim}, hidden_dim={self.state_dim}, output_dim={self.output_dim}"


class LinearSystem(_MatrixRNN):
    """Linear dynamical system ``h_t = W h_{t-1} + U x_t``, ``y_t = C h_t`` (chapters 8-10).

    ``W`` (m, m) is drawn by :func:`recurrent_matrix` with scheme ``init``
    (rescaled to ``||W||_2 = spectral_norm`` if given), ``U`` (m, n) has
    N(0, 1/n) entries, the frozen read-out ``C`` (d_out, m) N(0, 1/m) entries.
    """

    activation = "identity"

    def step(self, s: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
        """``W s + U x_t``."""
        return s @ self.W.transpose(0, 1) + x_t @ self.U.transpose(0, 1)


class SimpleRNN(_MatrixRNN):
    """Vanilla RNN ``h_t = rho(W h_{t-1} + U x_t)``, ``y_t = C h_t``, rho = tanh or relu (chapters 8-11).

    No bias, so that ``phi(0, 0) = 0`` as the truncation theorems assume.
    Initialization as in :class:`LinearSystem`.
    """

    @validate_params(
        _MatrixRNN.__init__, "generator", activation=Choice("tanh", "relu")
    )
    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        output_dim: int = 1,
        *,
        activation: str = "tanh",
        init: str = "gaussian",
        spectral_norm: float | None = None,
        generator: torch.Generator | int | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__(
            input_dim,
            hidden_dim,
            output_dim,
            init=init,
            spectral_norm=spectral_norm,
            generator=generator,
            dtype=dtype,
        )
        self.activation = activation
        self._rho = torch.tanh if activation == "tanh" else torch.relu

    def step(self, s: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
        """``rho(W s + U x_t)``."""
        return self._rho(s @ self.W.transpose(0, 1) + x_t @ self.U.transpose(0, 1))

    def extra_repr(self) -> str:
        return super().extra_repr() + f", activation={self.activation!r}"


class LSTMGates(NamedTuple):
    """:meth:`LSTM.gates` results: the four gate values, each (batch, H)."""

    #: the input gate
    i: torch.Tensor
    #: the forget gate
    f: torch.Tensor
    #: the candidate state (tanh)
    z: torch.Tensor
    #: the output gate
    o: torch.Tensor


class LSTM(RecurrentModel):
    """LSTM cell in the notation of Miller & Hardt, state ``s = (c, h)`` (chapters 8-11).

    With ``W`` (4H, H), ``U`` (4H, n), ``b`` (4H) packed in ``torch.nn.LSTM``'s
    gate order ``(i, f, z, o)`` (torch calls ``z`` the gate ``g``)::

        i = sigma(W_i h + U_i x + b_i)    f = sigma(W_f h + U_f x + b_f)
        z = tanh(W_z h + U_z x + b_z)     o = sigma(W_o h + U_o x + b_o)
        c_t = i * z + f * c_{t-1}         h_t = o * tanh(c_t)

    The state vector is ``torch.cat([c, h])`` of length ``2H``. ``W`` and ``U``
    start as ``torch.nn.LSTM`` does (U(-1/sqrt(H), 1/sqrt(H))), ``b`` at 0
    (plus ``forget_bias`` on the forget gate). :meth:`to_torch` /
    :meth:`from_torch` convert to and from a 1-layer ``batch_first`` ``nn.LSTM``
    (whose two bias vectors add up to ``b``).
    """

    @validate_params(*_SIZES, "generator", forget_bias=ANY_REAL)
    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        output_dim: int = 1,
        *,
        forget_bias: float = 0.0,
        generator: torch.Generator | int | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        n = input_dim
        H = hidden_dim
        d_out = output_dim
        gen = as_generator(generator)
        bound = 1.0 / math.sqrt(H)
        self.input_dim, self.hidden_dim, self.state_dim = (
            n,
            H,
            2 * H,
        )
        self.W = nn.Parameter(
            (torch.rand(4 * H, H, generator=gen, dtype=dtype) * 2 - 1) * bound
        )
        self.U = nn.Parameter(
            (torch.rand(4 * H, n, generator=gen, dtype=dtype) * 2 - 1) * bound
        )
        b = torch.zeros(4 * H, dtype=dtype)
        b[H : 2 * H] = forget_bias
        self.b = nn.Parameter(b)
        self.register_buffer(
            "C",
            torch.randn(d_out, H, generator=gen, dtype=dtype) / math.sqrt(H),
        )

    def extra_repr(self) -> str:
        return f"input_dim={self.input_dim}, hidden_dim={self.hidden_dim}, output_dim={self.output_dim}"

    def gates(self, s: torch.Tensor, x_t: torch.Tensor) -> LSTMGates:
        """The gate values ``(i, f, z, o)`` at state ``s`` and input ``x_t``, each (batch, H)."""
        h = s[:, self.hidden_dim :]
        pre = h @ self.W.transpose(0, 1) + x_t @ self.U.transpose(0, 1) + self.b
        pi, pf, pz, po = pre.chunk(4, dim=1)
        return LSTMGates(
            torch.sigmoid(pi),
            torch.sigmoid(pf),
            torch.tanh(pz),
            torch.sigmoid(po),
        )

    def step(self, s: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
        """``(c_t, h_t)`` from ``s = (c_{t-1}, h_{t-1})``."""
        i, f, z, o = self.gates(s, x_t)
        c = i * z + f * s[:, : self.hidden_dim]
        return torch.cat([c, o * torch.tanh(c)], dim=1)

    def hidden(self, s: torch.Tensor) -> torch.Tensor:
        """``h`` = the second half of the state."""
        return s[..., self.hidden_dim :]

    def gate_matrices(self) -> dict[str, torch.Tensor]:
        """Views ``{"W_i", "W_f", "W_z", "W_o", "U_i", ..., "b_f", ...}`` of the packed weights."""
        out = {}
        for name, full in (
            ("W", self.W),
            ("U", self.U),
            ("b", self.b),
        ):
            for gate, block in zip("ifzo", full.chunk(4, dim=0)):
                out[f"{name}_{gate}"] = block
        return out

    def to_torch(self) -> nn.LSTM:
        """An equivalent 1-layer ``torch.nn.LSTM(batch_first=True)`` (bias in ``bias_ih``, ``bias_hh = 0``)."""
        # built on the meta device: every weight is overwritten below, so draw nothing from torch's global generator
        lstm = nn.LSTM(
            self.input_dim,
            self.hidden_dim,
            batch_first=True,
            dtype=self.dtype,
            device="meta",
        ).to_empty(device="cpu")
        with torch.no_grad():
            lstm.weight_hh_l0.copy_(self.W)
            lstm.weight_ih_l0.copy_(self.U)
            lstm.bias_ih_l0.copy_(self.b)
            lstm.bias_hh_l0.zero_()
        return lstm

    @classmethod
    def from_torch(
        cls,
        lstm: nn.LSTM,
        output_dim: int = 1,
        *,
        generator: torch.Generator | int | None = None,
    ) -> LSTM:
        """The :class:`LSTM` with the weights of a 1-layer ``nn.LSTM`` (biases summed; new read-out ``C``)."""
        if not isinstance(lstm, nn.LSTM):
            raise TypeError(f"lstm must be a torch.nn.LSTM, got {type(lstm).__name__}")
        if lstm.num_layers != 1 or lstm.bidirectional or lstm.proj_size:
            raise ValueError(
                "lstm must have one layer, one direction and no projection"
            )
        dtype = lstm.weight_hh_l0.dtype
        model = cls(
            lstm.input_size,
            lstm.hidden_size,
            output_dim,
            generator=generator,
            dtype=dtype,
        )
        with torch.no_grad():
            model.W.copy_(lstm.weight_hh_l0)
            model.U.copy_(lstm.weight_ih_l0)
            b = torch.zeros_like(model.b)
            if lstm.bias:
                b = lstm.bias_ih_l0 + lstm.bias_hh_l0
            model.b.copy_(b)
        return model


#: Declared arguments of the functions on these models (:mod:`rnnlib.stability`, :mod:`rnnlib.truncation`):
#: a model with finite weights, a batch of its input sequences (its dtype), of its states, of targets.
MODEL = Model(RecurrentModel)
MATRIX_RNN = Model((LinearSystem, SimpleRNN))
INPUTS = Tensor(shape=("batch", "T", "model.input_dim"), dtype_of="model")
STATES = Tensor(shape=("batch", "model.state_dim"))
OUTPUTS = Tensor(shape=("batch", "T", "model.output_dim"))
