"""Training loops (chapters 5-7 and 11).

Placeholder of the house issue: the loops of chapters 5-7 (Part I, SGD in the
lazy regime) and chapter 11 (Part II) are added here. It already holds the one
error every training loop raises when the loss or the weights stop being finite.
"""

from __future__ import annotations

from ._validation import DivergenceError

__all__ = ["DivergenceError"]
