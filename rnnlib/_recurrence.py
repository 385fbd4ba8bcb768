"""Unvalidated kernels of the Elman recurrence, shared by the modules that linearize it (chapters 1, 3, 5-7, 11).

Package-internal: the public functions that call these check their inputs once, at their
boundary, and the training loops call the kernels directly.

* :func:`previous_states`: ``h^(l-1)`` for ``l = 1..L`` from the states ``h^(1..L)``, the
  zero state ``h^(0) = 0`` first (used by ``elman``, ``pseudo``, ``train``, ``ntk``,
  ``next_step``);
* :func:`tangent`: the pseudo-network of eq. (4) by tangent propagation (used by
  ``pseudo`` and ``train``; chapter 3 derives it).
"""

from __future__ import annotations

import torch

__all__ = ["previous_states", "tangent"]


def previous_states(h: torch.Tensor) -> torch.Tensor:
    """``(h^(0), h^(1), ..., h^(L-1))`` from ``h = (h^(1), ..., h^(L))``, shape (batch, L, m); ``h^(0) = 0``."""
    return torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)


def tangent(
    W: torch.Tensor,
    B: torch.Tensor,
    h_prev: torch.Tensor,
    D: torch.Tensor,
    x: torch.Tensor,
    dW: torch.Tensor,
    dA: torch.Tensor,
) -> torch.Tensor:
    """``B g^(L)`` with ``g^(l) = D^(l) (W g^(l-1) + dW h^(l-1) + dA x^(l))``, ``g^(0) = 0`` (chapter 3, eq. (4)).

    ``h_prev`` (batch, L, m) are the states ``h^(l-1)`` (:func:`previous_states`), ``D``
    (batch, L, m) the activation patterns as floats, ``x`` (batch, L, d) the inputs; returns
    (batch, d_out), differentiable in ``(dW, dA)``. No validation.
    """
    drive = h_prev @ dW.transpose(0, 1) + x @ dA.transpose(
        0, 1
    )  # dW h^(l-1) + dA x^(l), (batch, L, m)
    Wt = W.transpose(0, 1)
    g = D[:, 0] * drive[:, 0]
    for step in range(1, x.shape[1]):
        g = D[:, step] * torch.addmm(drive[:, step], g, Wt)
    return g @ B.transpose(0, 1)
