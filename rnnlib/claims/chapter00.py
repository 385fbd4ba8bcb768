"""Claims of both papers that no chapter can test here, with the reason (the ledger lists them)."""

from __future__ import annotations

from . import register, untestable

register(
    untestable(
        "mh-word-level-lm",
        "M&H 2019",
        "Sec. 4",
        "paper",
        "Stable LSTMs reach word-level language-modelling perplexity close to unstable ones.",
        "needs word-level corpora (Penn Treebank, WikiText-2) that are not available offline",
    ),
)
