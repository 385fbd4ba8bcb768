"""Claims tested in chapter 11 (stable and unstable models on real music and text)."""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-music-stable-close",
        "M&H 2019",
        "Sec. 4 (polyphonic music)",
        "paper",
        11,
        "On polyphonic music (JSB chorales), stable and unstable RNNs and LSTMs have very similar "
        "test NLL (the slides add 'stable slightly better'; the check asserts only the closeness).",
    ),
    Claim(
        "mh-text-stable-worse",
        "M&H 2019",
        "Sec. 4 (character-level LM)",
        "paper",
        11,
        "On character-level language modelling, stable models are worse than unstable ones, "
        "and there is no difference between LSTM and RNN.",
    ),
    Claim(
        "ch11-rnn-beats-baselines",
        "M&H 2019",
        "Sec. 4 (our sanity check)",
        "heuristic",
        11,
        "A trained recurrent model beats the per-key marginal frequencies and a logistic regression "
        "on the previous frame, so the comparison of stable and unstable models is between models "
        "that use their context.",
    ),
    Claim(
        "mh-stable-truncation-flat",
        "M&H 2019",
        "Sec. 2 (truncation for inference) applied in Sec. 4",
        "reconstruction",
        11,
        "A trained stable model loses almost nothing when truncated to its last 16 inputs: "
        "its truncated test NLL at k = 16 is within a small margin of its full-context NLL.",
    ),
    Claim(
        "mh-unstable-data-dependent",
        "M&H 2019",
        "abstract; Sec. 4 (data-dependent stability)",
        "paper",
        11,
        "Models that are nominally unstable often operate in the stable regime on the data "
        "distribution: they forget like stable models (their truncated NLL flattens at small k).",
    ),
    Claim(
        "mh-unstable-local-contraction",
        "M&H 2019",
        "abstract; Sec. 4 (data-dependent stability)",
        "reconstruction",
        11,
        "Read one step at a time, the stable regime on the data would mean that most single steps "
        "of a nominally unstable trained model contract: ||d s_t / d s_(t-1)||_2 < 1.",
    ),
)
