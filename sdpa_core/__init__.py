"""sdpa_core: the NumPy core of sdpa-sim, the single source of its numbers.

Scaled dot-product attention ``softmax(QKᵀ/√d_k)·V`` with temperature, masks and bias,
seeded nested sampling of Q and K, and the statistics the app draws; what happens when the
lesson's assumptions break (other variances, correlated q and k, low-precision formats);
the exact backward pass and a small retrieval task trained with and without the scale.
NumPy (and ml_dtypes for bfloat16) only.
"""

from sdpa_core.attention import attention, causal_mask, qk_normalise, scores_logits, softmax
from sdpa_core.backward import attention_backward
from sdpa_core.metrics import (
    Band,
    CollapseCurve,
    collapse_curve,
    histogram,
    max_weight,
    normal_pdf,
    row_entropy,
    softmax_jacobian_norm,
)
from sdpa_core.moments import dot_product_moments
from sdpa_core.precision import (
    PRECISIONS,
    PrecisionReport,
    accumulator_dtype,
    exp_overflow_threshold,
    precision_report,
    resolve_dtype,
    round_to_format,
)
from sdpa_core.sampling import (
    dot_product_pool,
    dot_product_pool_ready,
    sample_dot_products,
    sample_qk,
    sample_values,
)
from sdpa_core.training import (
    GridCell,
    GridSummary,
    ScaleComparison,
    TrainingGrid,
    TrainingRun,
    TrainingSettings,
    TrainingStep,
    describe_summary,
    grid_of_cells,
    iter_training,
    train_retrieval,
    training_grid,
)

__all__ = [
    "PRECISIONS",
    "Band",
    "CollapseCurve",
    "GridCell",
    "GridSummary",
    "PrecisionReport",
    "ScaleComparison",
    "TrainingGrid",
    "TrainingRun",
    "TrainingSettings",
    "TrainingStep",
    "accumulator_dtype",
    "attention",
    "attention_backward",
    "causal_mask",
    "collapse_curve",
    "describe_summary",
    "dot_product_moments",
    "dot_product_pool",
    "dot_product_pool_ready",
    "exp_overflow_threshold",
    "grid_of_cells",
    "histogram",
    "iter_training",
    "max_weight",
    "normal_pdf",
    "precision_report",
    "qk_normalise",
    "resolve_dtype",
    "round_to_format",
    "row_entropy",
    "sample_dot_products",
    "sample_qk",
    "sample_values",
    "scores_logits",
    "softmax",
    "softmax_jacobian_norm",
    "train_retrieval",
    "training_grid",
]

__version__ = "0.1.0"
