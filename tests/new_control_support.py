"""A throwaway control, added to the app's spec through its public API: the tests of
``tests/model/test_new_control.py`` and the browser tests that serve and export it check
that one entry reaches the URL, both pages and the recompute graph."""

from __future__ import annotations

from app.simulation.spec import SPEC, WEIGHTS, Control

GAIN = Control(
    "gain",
    label="throwaway gain",
    doc="A control only the tests add: it feeds the weights and nothing reads it.",
    kind="number",
    default=1.0,
    bounds=(0.5, 2.0),
    grid=(0.5, 0.75, 1.0, 1.5, 2.0),
    widget="slider",
    url_format="general",
    feeds=frozenset({WEIGHTS}),
    # Nothing reads it, in Python or in the file: both compute the same at every value.
    mirror=True,
)
"""The throwaway control: a slider under "More controls" on both pages."""

SPEC_WITH_GAIN = SPEC.with_control(GAIN)
"""The app's controls and :data:`GAIN`, last."""
