"""At n = 1024 the served heatmap's weights arrive as two-byte codes: the page draws the
model's weights within the code's precision, masked cells masked, and a temperature move
costs the page about two bytes per cell."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from app.page.weight_codes import STEPS_PER_UNIT
from app.simulation.model import SimulationModel
from app.simulation.spec import CONTROL_BY_NAME
from app.simulation.state import SimulationState

if TYPE_CHECKING:
    from conftest import AppPage

pytestmark = pytest.mark.browser

N = 1024
SAMPLES = 4099
"""Cells compared one by one: every k-th cell, k prime to n, so every row and column shows."""

RELATIVE_ERROR = math.expm1(0.51 / STEPS_PER_UNIT) + 1e-6
"""The code's precision (tests/model/test_weight_codes.py)."""

WEIGHTS_JS = """(count) => {
  const values = sdpaHeatmap().data.weight[0];
  const stride = Math.floor(values.length / count) | 1;
  const sample = [];
  for (let i = 0; i < count; i++) {
    const value = values[(i * stride) % values.length];
    sample.push(Number.isNaN(value) ? null : value);
  }
  let nan = 0;
  for (const value of values) if (Number.isNaN(value)) nan++;
  return {float32: values instanceof Float32Array, length: values.length, stride, sample, nan};
}"""
"""The page's weights image: whether it is float32, its length, how many cells are NaN,
and a sample of every ``stride``-th cell (NaN as null)."""


def model_weights(**controls: Any) -> np.ndarray:
    """The weights image the app computes for ``controls``, flat."""
    state = SimulationState()
    state.set_controls(**controls)
    return np.asarray(SimulationModel(state).weights.weights_image, dtype=np.float32).ravel()


def assert_page_shows(page_weights: dict, expected: np.ndarray) -> None:
    """The page's weights are ``expected`` within the code's precision, NaN where it is."""
    assert page_weights["float32"] and page_weights["length"] == expected.size
    assert page_weights["nan"] == int(np.isnan(expected).sum())
    indices = (np.arange(SAMPLES) * page_weights["stride"]) % expected.size
    shown = np.array([math.nan if v is None else v for v in page_weights["sample"]])
    wanted = expected[indices].astype(np.float64)
    assert np.array_equal(np.isnan(shown), np.isnan(wanted))
    finite = ~np.isnan(wanted)
    np.testing.assert_allclose(shown[finite], wanted[finite], rtol=RELATIVE_ERROR, atol=0)


def test_a_temperature_move_at_n_1024_draws_the_models_weights_for_two_bytes_a_cell(
    app_page: AppPage,
) -> None:
    received: list[int] = []

    def count(payload: str | bytes) -> None:
        received.append(len(payload.encode() if isinstance(payload, str) else payload))

    app_page.page.on("websocket", lambda socket: socket.on("framereceived", count))
    app_page.open(f"?n={N}&causal=true", lesson=False)
    assert_page_shows(app_page.page.evaluate(WEIGHTS_JS, SAMPLES), model_weights(n=N, causal=True))

    grid = CONTROL_BY_NAME["temperature"].grid
    hotter = grid[grid.index(1.0) + 1]
    app_page.mark("weight")
    received.clear()
    app_page.press("temperature", "ArrowRight")
    app_page.wait_changed("weight")
    app_page.wait_url(temperature=format(hotter, "g"))
    assert_page_shows(
        app_page.page.evaluate(WEIGHTS_JS, SAMPLES),
        model_weights(n=N, causal=True, temperature=hotter),
    )
    # The weights (2 bytes a cell), the output's small images, the URL and the messages
    # around them: well under the 4 MiB of float32 weights alone.
    assert N * N * 2 <= sum(received) <= N * N * 2.2, received
