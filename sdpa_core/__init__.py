"""sdpa_core: the NumPy core of sdpa-sim, the single source of its numbers.

Scaled dot-product attention ``softmax(QKᵀ/√d_k)·V`` with temperature, masks and bias,
seeded nested sampling of Q and K, and the statistics the app draws. NumPy only.
"""

from sdpa_core.attention import attention, causal_mask, scores_logits, softmax
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
from sdpa_core.sampling import dot_product_pool, sample_dot_products, sample_qk, sample_values

__all__ = [
    "Band",
    "CollapseCurve",
    "attention",
    "causal_mask",
    "collapse_curve",
    "dot_product_pool",
    "histogram",
    "max_weight",
    "normal_pdf",
    "row_entropy",
    "sample_dot_products",
    "sample_qk",
    "sample_values",
    "scores_logits",
    "softmax",
    "softmax_jacobian_norm",
]

__version__ = "0.1.0"
