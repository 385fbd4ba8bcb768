"""Claims of both papers that no chapter can test here, with the reason (the ledger lists them).

Sources: the course's notes on the two papers (``reference/paper-panigrahi-goyal-2021.md``
and ``reference/paper-miller-hardt-2019.md``). Claims a chapter measures are registered in
that chapter's module (``chapterNN.py``), not here. Used by the ledger appendix.
"""

from __future__ import annotations

from . import register, untestable

_PG_APPENDIX = "the paper's appendix (Secs. A-I) is not available; only the main text is"
_MH_BODY = "the body of the paper is not available; only its abstract and introduction, the authors' slides and blog posts"

register(
    # --- Panigrahi & Goyal (2021) ---------------------------------------------------------------
    untestable(
        "pg-appendix-formal-bounds",
        "P&G 2021",
        "Thms D.1, D.2, D.5; Lemma G.3",
        "paper",
        "The formal versions of Theorems 4.5, 4.3 and 3.1, and Lemma G.3, bound the inversion "
        "error, the existence error, the width, the number of samples and the RNN-pseudo-network "
        "gap by explicit polynomials.",
        f"{_PG_APPENDIX}: the main text hides every degree and constant in poly(.), so there is "
        "no number to compare with; chapters 3-6 test the trends these bounds imply",
    ),
    untestable(
        "pg-sec-i-experiments",
        "P&G 2021",
        "Sec. I, Fig. 4",
        "paper",
        "The paper's experiments report the inversion error at initialization against the width "
        "and the sequence length (Fig. 4), and accuracies of RNNs on regular-language tasks.",
        f"{_PG_APPENDIX}: the tasks, sizes, optimizer and every number of Sec. I are unknown, so "
        "chapters 4 and 7 test the main text's qualitative sentences, not these results",
    ),
    untestable(
        "pg-no-normalization",
        "P&G 2021",
        "Sec. 3.1",
        "paper",
        "Without the normalized input sequence the method still applies, but its error bound "
        "depends exponentially on the length of the sequence.",
        f"a statement about a bound of the proof, which no measurement can check; {_PG_APPENDIX}, "
        "so the unnormalized bound itself is not known",
    ),
    untestable(
        "pg-multistep-wlog",
        "P&G 2021",
        "Sec. 3, Remark",
        "paper",
        "Fixed length and an output at the last step only are without loss of generality: with "
        "outputs at several steps the objective gains one term per step, each analysed the same way.",
        "a statement about the analysis (its proof), not about a measurable quantity",
    ),
    untestable(
        "pg-general-regular-languages",
        "P&G 2021",
        "Sec. 5 (Sec. H)",
        "paper",
        "Every regular language is expressible in the concept class, at a complexity that may "
        "grow super-polynomially with the sequence length, depending on the language.",
        f"{_PG_APPENDIX} (Sec. H has the construction); a complexity that 'may' grow is a "
        "statement about representations, not about a measurement",
    ),
    # --- Miller & Hardt (2019) ------------------------------------------------------------------
    untestable(
        "mh-word-level-lm",
        "M&H 2019",
        "slide 'Word-level language modeling'; BAIR blog post",
        "paper",
        "On word-level language modelling (Wikitext-2; Penn Treebank is also listed) stable models "
        "perform about as well as unstable ones: the stable tanh-RNN slightly better, the stable "
        "LSTM slightly worse (the authors' blog: perplexity 146.7 vs 143.5 and 92.3 vs 95.1).",
        "needs word-level corpora (Penn Treebank, Wikitext-2) that are not available offline, and "
        "training at the paper's scale is far beyond the book's CPU budget",
    ),
    untestable(
        "mh-char-level-lm",
        "M&H 2019",
        "slide 'Character-level language modeling'",
        "paper",
        "On character-level language modelling of Tolstoy's War and Peace, stable models are "
        "worse than unstable ones, with no difference between LSTMs and RNNs.",
        "the corpus is not available offline (no installable package ships it); chapter 11 makes "
        "the comparison on a character-level corpus that is, which is not this claim",
    ),
    untestable(
        "mh-results-table",
        "M&H 2019",
        "the paper's table of results (not among the book's sources)",
        "paper",
        "The paper's table of test results for stable and unstable RNNs and LSTMs on polyphonic "
        "music and on the language-modelling tasks, with its model sizes and training schedules.",
        f"{_MH_BODY}; the numbers, sizes and schedules are unknown, so chapter 11's measurements "
        "cannot be put side by side with them",
    ),
    untestable(
        "mh-unstable-gd-fails",
        "M&H 2019",
        "BAIR blog post (2018)",
        "paper",
        "Outside the stable regime gradient descent cannot be expected to work: even for very "
        "simple unstable models it fails to converge to a stationary point.",
        f"{_MH_BODY}: the 'very simple unstable model' and the argument are not known, so there is "
        "no construction to run",
    ),
    untestable(
        "mh-unstable-necessary",
        "M&H 2019",
        "introduction",
        "paper",
        "Recurrent models that feed-forward networks cannot approximate are inevitably unstable, "
        "and so have exploding gradients.",
        f"{_MH_BODY}: the precise statement and its proof are not known, and 'cannot be "
        "approximated by any feed-forward network' is not something a finite experiment measures",
    ),
)
