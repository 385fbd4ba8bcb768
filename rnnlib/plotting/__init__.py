"""One figure style for the whole book, and the figures of each chapter.

Every function takes numbers (the result of an rnnlib measurement) and returns
a ``matplotlib.figure.Figure``; none of them computes anything of its own, so
the figures in the book and in the explorers (:mod:`rnnlib.widgets`) are the
same pictures of the same measurements.

The style and shared helpers are in ``_style.py``; each chapter's figures are in
``chapterNN.py`` and are re-exported here, so a chapter writes
``plotting.plot_x(...)``.
"""

from __future__ import annotations

from ._style import (
    STYLE,
    BookFigure,
    loglog_slope,
    new_figure,
    use_book_style,
)
from .chapter01 import (
    plot_flip_fraction,
    plot_norm_profile,
    plot_sequence_norms,
)
from .chapter02 import plot_complexity, plot_dl1, plot_targets
from .chapter03 import (
    plot_direction_gap,
    plot_linearization,
    plot_pseudo_gap,
)
from .chapter04 import (
    plot_construction,
    plot_correlations,
    plot_decoding,
    plot_decoding_profile,
    plot_inversion,
    plot_relu_identity,
    plot_step_features,
)
from .chapter05 import (
    plot_kernel_convergence,
    plot_laziness,
    plot_limit_convergence,
    plot_out_scale,
    plot_pair,
)
from .chapter06 import (
    plot_complexity_vs_width,
    plot_gap_vs_n,
    plot_gap_vs_width_record,
    plot_limit_bound,
    plot_theorem_terms,
)
from .chapter07 import (
    plot_accuracy_grid,
    plot_eps_effect,
    plot_kernel_curves,
    plot_learnability_atlas,
    plot_learner_accuracy,
    plot_length_sweep,
    plot_representation_complexity,
    plot_walsh_spectrum,
)
from .chapter08 import (
    plot_init_norms,
    plot_jacobian_hist,
    plot_lds_fit,
    plot_state_distance,
)
from .chapter09 import (
    plot_truncation_errors,
    plot_truncation_over_time,
)
from .chapter10 import (
    plot_gradient_difference,
    plot_k_star,
    plot_scalar_smoothness,
    plot_weight_distance,
)
from .chapter11 import (
    plot_local_contraction,
    plot_price_of_stability,
    plot_truncated_nll,
    plot_validation_curves,
)
from .tables import Table, html_table

__all__ = [
    "STYLE",
    "Table",
    "html_table",
    "loglog_slope",
    "BookFigure",
    "new_figure",
    "use_book_style",
    "plot_flip_fraction",
    "plot_norm_profile",
    "plot_sequence_norms",
    "plot_complexity",
    "plot_dl1",
    "plot_targets",
    "plot_linearization",
    "plot_pseudo_gap",
    "plot_relu_identity",
    "plot_decoding",
    "plot_decoding_profile",
    "plot_inversion",
    "plot_step_features",
    "plot_correlations",
    "plot_construction",
    "plot_direction_gap",
    "plot_laziness",
    "plot_out_scale",
    "plot_pair",
    "plot_kernel_convergence",
    "plot_limit_convergence",
    "plot_gap_vs_n",
    "plot_limit_bound",
    "plot_complexity_vs_width",
    "plot_gap_vs_width_record",
    "plot_theorem_terms",
    "plot_accuracy_grid",
    "plot_eps_effect",
    "plot_kernel_curves",
    "plot_learnability_atlas",
    "plot_walsh_spectrum",
    "plot_learner_accuracy",
    "plot_length_sweep",
    "plot_representation_complexity",
    "plot_init_norms",
    "plot_jacobian_hist",
    "plot_lds_fit",
    "plot_state_distance",
    "plot_truncation_errors",
    "plot_truncation_over_time",
    "plot_gradient_difference",
    "plot_weight_distance",
    "plot_k_star",
    "plot_scalar_smoothness",
    "plot_truncated_nll",
    "plot_local_contraction",
    "plot_validation_curves",
    "plot_price_of_stability",
]
