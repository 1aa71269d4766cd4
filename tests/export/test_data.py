"""What an exported page embeds is the core's own samples, on the documented grids."""

from __future__ import annotations

import base64

import numpy as np
import pytest

import sdpa_core
from app.page.kernel_data import (
    build_export_data,
    check_limits,
    d_k_positions,
    encode_float32,
    n_positions,
    payload,
)
from app.simulation.spec import D_K_GRID, N_GRID


def test_default_d_k_steps_are_every_other_served_position_up_to_512() -> None:
    positions = d_k_positions(512)
    assert len(positions) == 32
    assert set(positions) <= set(D_K_GRID)
    assert positions[0] == 1 and positions[-1] == 512
    assert {2**p for p in range(10)} <= set(positions)
    # Four steps per octave: each step is about 2^(1/4) = 1.19 times the one before (below
    # 32, rounding to whole numbers makes the steps uneven).
    large = positions[positions.index(32) :]
    ratios = np.array(large[1:]) / np.array(large[:-1])
    assert np.all((ratios > 1.1) & (ratios < 1.3))


def test_limits_off_the_grids_become_the_last_positions() -> None:
    assert d_k_positions(100)[-2:] == [91, 100]
    assert n_positions(100)[-2:] == [99, 100]
    assert n_positions(128) == [n for n in N_GRID if n <= 128]


def test_embedded_samples_are_the_cores() -> None:
    data = build_export_data(40, 70, seed=3)
    q, k = sdpa_core.sample_qk(40, 70, 3)
    np.testing.assert_array_equal(data.q, q.astype(np.float32))
    np.testing.assert_array_equal(data.k, k.astype(np.float32))
    assert data.dot.shape == (len(data.d_values), 10_000)
    for row, d in zip(data.dot, data.d_values, strict=True):
        np.testing.assert_array_equal(row, sdpa_core.dot_product_pool(d, 3))


def test_payload_encodes_little_endian_float32() -> None:
    data = build_export_data(3, 2, seed=0)
    encoded = payload(data)
    decoded = np.frombuffer(base64.b64decode(encoded["q"]), dtype="<f4").reshape(3, 2)
    np.testing.assert_array_equal(decoded, data.q)
    assert encoded["d_values"] == [1, 2]
    assert encoded["n_values"] == [2, 3]
    assert encode_float32(np.array([1.0])) == base64.b64encode(np.float32(1.0).tobytes()).decode()


@pytest.mark.parametrize("causal", [False, True])
def test_float32_samples_keep_the_weights_within_1e_5_of_the_server(causal: bool) -> None:
    # The sharpest states the page offers: unscaled, temperature 0.05, the largest d_k.
    data = build_export_data(128, 512, seed=0)
    mask = "causal" if causal else None
    for d in data.d_values[-4:]:
        q, k = sdpa_core.sample_qk(128, d, 0)
        q32, k32 = (a[:, :d].astype(np.float64) for a in (data.q, data.k))
        _, server = sdpa_core.attention(q, k, k, scale=1.0, temperature=0.05, mask=mask)
        _, page = sdpa_core.attention(q32, k32, k32, scale=1.0, temperature=0.05, mask=mask)
        assert np.abs(page - server).max() < 1e-5


@pytest.mark.parametrize(
    ("n_max", "d_max", "seed", "message"),
    [
        (2, 512, 0, "n_max must be a whole number from 3 to 1024"),
        (128, 1025, 0, "d_max must be a whole number from 2 to 1024"),
        (128, 512, -1, "seed must be a whole number from 0"),
        (128.0, 512, 0, "n_max must be a whole number"),
        (True, 512, 0, "n_max must be a whole number"),
    ],
)
def test_bad_limits_are_refused(n_max: object, d_max: object, seed: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_limits(n_max, d_max, seed)
