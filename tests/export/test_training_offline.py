"""The offline page's "Does the scale matter for learning?": the default grid, precomputed.

The embedded data against :mod:`sdpa_core`'s grid (no browser); the bands lesson.js draws
from it under Node.js; and the section in Chromium from file:// with the network blocked,
against the served view for the same state, before and after d_k moves.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import expect

from app.page.kernel_data import d_k_positions
from app.page.training import (
    CURVE_COLUMNS,
    band_table,
    default_grid,
    training_spec,
)
from app.page.views.training_grid import (
    TRAIN_NEEDS_SERVER,
    TRAINING_TITLE,
    band_data,
    grid_note,
    nearest_grid_d_k,
    summary_data,
)
from app.served.components.training import training_figures
from app.served.components.training_session import TRAIN_LABEL, TrainingSession
from app.simulation.model import SimulationModel
from app.simulation.state import SimulationState
from app.simulation.training import SHARED_GRID
from sdpa_core import describe_summary
from sdpa_core.training import GRID_D_VALUES

from .conftest import FIND_MODEL, OfflinePage
from .js_harness import Runner
from .test_lesson import LABEL, press, source_data

PAGE_D_VALUES = d_k_positions(512)
"""The d_k steps of the default export."""

MAX_PAYLOAD_BYTES = 120_000
"""What the section's data may add to the file: it must stay under app.export.MAX_BYTES."""


def decoded_table(spec: dict) -> np.ndarray:
    """The spec's band table as the page decodes it: float32, (grid d_k, scale, column, step)."""
    table = np.frombuffer(base64.b64decode(spec["table"]), dtype="<f4")
    shape = (len(spec["grid_d_values"]), 2, len(spec["columns"]), len(spec["steps"]))
    return table.reshape(shape)


def test_the_page_carries_the_default_grid_of_sdpa_core() -> None:
    grid = default_grid()
    assert default_grid() is grid is SHARED_GRID.grid, "computed once per process"
    spec = training_spec(grid, PAGE_D_VALUES)
    assert spec["grid_d_values"] == list(GRID_D_VALUES)
    assert spec["columns"] == list(CURVE_COLUMNS)
    table = decoded_table(spec)
    for g, d_k in enumerate(GRID_D_VALUES):
        for s, scaled in enumerate((True, False)):
            bands = band_data(grid.cell(d_k, scaled))
            np.testing.assert_array_equal(spec["steps"], bands["step"])
            for c, column in enumerate(CURVE_COLUMNS):
                np.testing.assert_array_equal(table[g, s, c], bands[column].astype(np.float32))
    np.testing.assert_array_equal(band_table(grid).astype(np.float32), table)
    # For each d_k the page offers: the grid d_k the served view shows, and its note.
    assert [spec["grid_d_values"][i] for i in spec["shown"]] == [
        nearest_grid_d_k(d) for d in PAGE_D_VALUES
    ]
    assert spec["notes"] == [grid_note(grid, d) for d in PAGE_D_VALUES]
    assert len(json.dumps(spec, separators=(",", ":"))) <= MAX_PAYLOAD_BYTES


def test_lesson_js_draws_the_served_bands_from_the_table(node: Runner) -> None:
    grid = default_grid()
    spec = training_spec(grid, PAGE_D_VALUES)
    table = decoded_table(spec).ravel()
    calls = [("lesson", "trainingBands", [spec, table, g]) for g in range(len(GRID_D_VALUES))]
    calls += [("lesson", "trainingIndex", [PAGE_D_VALUES, d]) for d in (1, 64, 512, 700)]
    *bands, first, middle, last, off_steps = node(calls)
    for d_k, pair in zip(GRID_D_VALUES, bands, strict=True):
        for scaled, shown in zip((True, False), pair, strict=True):
            expected = band_data(grid.cell(d_k, scaled))
            assert set(shown) == set(expected)
            for column, values in expected.items():
                np.testing.assert_array_equal(shown[column], values.astype(np.float32))
    assert (first, middle, last) == (0, PAGE_D_VALUES.index(64), len(PAGE_D_VALUES) - 1)
    assert off_steps == len(PAGE_D_VALUES) - 1


FIGURE_WIDTH = f"""(name) => {{
    const model = {FIND_MODEL};
    const view = Bokeh.index.find_one(model);
    return view !== null && view.el.getBoundingClientRect().width > 200;
}}"""
"""Whether the named figure is drawn on the page at a readable width."""


class ServedSection:
    """What the served section sends its page for an offline page's state (the whole of
    each send), drawn from the process's grid."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.sent: dict[str, Any] = {}
        model = SimulationModel(SimulationState(**state))
        self.session = TrainingSession(model, self.take, training_figures, background=False)

    def take(self, changes: dict[str, Any], whole: dict[str, Any]) -> None:
        self.sent.update(whole)


def assert_training_matches_served(opened: OfflinePage) -> int:
    """The bands, the marked d_k, the note and the summary as the served section has them
    for the page's state; returns the grid d_k shown."""
    state = opened.snapshot()["state"]
    served = ServedSection(state)
    grid = served.session.grid
    view = served.sent["view"]
    spec = json.loads(served.sent["figures"])["spec"]
    shown = nearest_grid_d_k(state["d_k"])
    assert spec["grid_d_values"][view["bands"]] == shown
    for name, scaled in (("training_scaled", True), ("training_unscaled", False)):
        page = source_data(opened, name)
        expected = band_data(grid.cell(shown, scaled))
        assert set(page) == set(expected)
        for column, values in expected.items():
            np.testing.assert_array_equal(page[column], np.asarray(values, dtype=np.float32))
    assert opened.model("training_summary", "m.renderers.length") >= 5
    span = opened.page.evaluate("() => SdpaExport.page.models.training_span.location")
    assert span == shown
    note = opened.page.locator("#sdpa-training-note").inner_html()
    assert note == view["note"]
    summary = opened.page.get_by_test_id("training-summary").inner_text()
    assert summary == served.session.summary_sentence == describe_summary(grid.summary)
    return shown


@pytest.mark.browser
def test_the_section_shows_the_served_grid_and_follows_d_k(open_export) -> None:
    opened = open_export()
    page = opened.page
    button = page.get_by_role("button", name=TRAINING_TITLE)
    summary = page.get_by_test_id("training-summary")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(summary).to_be_hidden()
    button.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(summary).to_be_visible()
    section = page.get_by_test_id("training")
    for name in ("training_loss", "training_accuracy", "training_summary"):
        page.wait_for_function(FIGURE_WIDTH, arg=name)
    needs_server = page.get_by_test_id("training-needs-server").inner_text()
    assert needs_server == TRAIN_NEEDS_SERVER.replace("**", "").replace("`", "")
    assert section.get_by_role("button", name=TRAIN_LABEL, exact=True).count() == 0
    # The summary plot's points are the served ones (drawn at export time).
    for name, scaled in (("training_scaled_summary", True), ("training_unscaled_summary", False)):
        page_data = opened.model(
            name, "Object.fromEntries(Object.entries(m.data).map(([k, v]) => [k, Array.from(v)]))"
        )
        assert page_data == summary_data(default_grid().summary, scaled=scaled)
    assert assert_training_matches_served(opened) == 64
    press(opened, "slider", LABEL["d_k"], "End")
    assert opened.snapshot()["state"]["d_k"] == 512
    assert assert_training_matches_served(opened) == 256
    press(opened, "slider", LABEL["d_k"], "Home")
    assert assert_training_matches_served(opened) == 4
    button.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(summary).to_be_hidden()
