"""Exact moments of the dot product q·k when the lesson's unit-variance, independent
assumption is relaxed to any standard deviations and a correlation between q and k."""

from __future__ import annotations

from sdpa_core.validation import positive_int, qk_law


def dot_product_moments(
    d_k: int, *, sigma_q: float = 1.0, sigma_k: float = 1.0, rho: float = 0.0
) -> tuple[float, float]:
    """Mean and variance of q·k over ``d_k`` dimensions, each pair (q_i, k_i) jointly normal.

    Each pair has standard deviations ``sigma_q`` and ``sigma_k`` and correlation ``rho``,
    pairs independent across dimensions, so E[q·k] = ρ·d_k·σ_q·σ_k and
    Var[q·k] = d_k·σ_q²·σ_k²·(1 + ρ²). At σ = 1, ρ = 0 this is the lesson's (0, d_k): the
    1/√d_k scale only normalises the spread when those assumptions hold.

    Raises:
        ValueError: if ``d_k`` is not an integer ≥ 1, a sigma is not a positive finite
            number or ``rho`` is not a number in [-1, 1].
    """
    d_k = positive_int("d_k", d_k)
    sigma_q, sigma_k, rho = qk_law(sigma_q, sigma_k, rho)
    scale = sigma_q * sigma_k
    return rho * d_k * scale, d_k * scale * scale * (1.0 + rho * rho)
