"""Claims tested in chapter 11 (stable and unstable models on real music and text).

The paper's results on these tasks are known from the authors' slides only
(slide titles 'Polyphonic music modeling', 'Character-level language
modeling'); its table of numbers is not among the book's sources.
"""

from __future__ import annotations

from . import Claim, register

register(
    Claim(
        "mh-music-stable-close",
        "M&H 2019",
        "slide 'Polyphonic music modeling'",
        "paper",
        11,
        "On polyphonic music (Bach chorales), 'stable/unstable LSTMs and RNNs have very similar "
        "performance. Stable slightly better.' The check asserts the closeness (|stable - unstable| "
        "< 0.1 nats per frame for both cores) on every seed of the chapter's committed pilot "
        "(seeds 0-2, rnnlib/_data/ch11_seeds.json, re-measured by the chapter for its own seed); "
        "the chapter counts the seeds on which each stable model is the better one.",
    ),
    Claim(
        "mh-text-stable-lstm-worse",
        "M&H 2019",
        "slide 'Character-level language modeling' ('Stable worse than unstable'), for the LSTM",
        "paper",
        11,
        "On character-level language modelling the stable LSTM is worse than the unstable one "
        "(on every seed of the chapter's pilot). "
        "(Here the cause is measurable: this book's stable set bounds the forget gates by "
        "f_max = 0.605, which the authors' code did not impose; it left the biases free with the "
        "forget bias at 10; the book did not train that variant.)",
    ),
    Claim(
        "mh-text-stable-rnn-worse",
        "M&H 2019",
        "slide 'Character-level language modeling' ('Stable worse than unstable'), for the RNN",
        "paper",
        11,
        "On character-level language modelling the stable tanh RNN is worse than the unstable one.",
    ),
    Claim(
        "mh-text-lstm-rnn-same",
        "M&H 2019",
        "slide 'Character-level language modeling' ('No difference between LSTM and RNN')",
        "paper",
        11,
        "On character-level language modelling there is no difference between LSTM and RNN.",
    ),
    Claim(
        "ch11-rnn-beats-baselines",
        "M&H 2019",
        "slide 'Polyphonic music modeling' (our sanity check)",
        "heuristic",
        11,
        "Every trained music model beats a logistic regression on the previous frame by at least "
        "0.3 nats per frame on every seed, and the text RNN beats the bigram model, so the "
        "comparison of stable and unstable models is between models that use their context.",
    ),
    Claim(
        "mh-stable-truncation-flat",
        "M&H 2019",
        "slide 'Inference' (its bound is vacuous here: our measurement)",
        "heuristic",
        11,
        "A trained stable model loses almost nothing when truncated to its last 16 inputs. The "
        "inference theorem's bound is vacuous at the trained models' constants, so this is "
        "measured, data-dependent forgetting, not the theorem applied.",
    ),
    Claim(
        "mh-unstable-data-dependent",
        "M&H 2019",
        "abstract ('models that are nominally unstable often operate in the stable regime on the data distribution')",
        "paper",
        11,
        "Models that are nominally unstable often operate in the stable regime on the data "
        "distribution: they forget like stable models (their truncated NLL flattens at small k).",
    ),
    Claim(
        "mh-unstable-local-contraction",
        "M&H 2019",
        "abstract (same claim): one-step reading, on trained models",
        "heuristic",
        11,
        "Read one step at a time, the stable regime on the data would mean that most single steps "
        "of a nominally unstable trained model contract: ||d s_t / d s_(t-1)||_2 < 1. The same "
        "reading holds for an untrained network barely above the boundary (chapter 8, "
        "mh-data-dependent-stability), but is tested here on the trained models.",
    ),
)
