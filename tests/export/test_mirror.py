"""Every control that changes numbers is either computed by the offline file or marked
served-only in the spec (:attr:`app.simulation.spec.Control.mirror`).

A spec refuses a control that feeds numbers and leaves ``mirror`` unsaid, and a served-only
one the file would offer. For each control marked as mirrored, the offline kernel (under
Node) must give another frame when the control moves: one it ignores would do nothing in
the file, silently. The throwaway control of tests/new_control_support.py, which nothing
reads, is the check's own test: it is caught.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

import numpy as np
import pytest
from new_control_support import GAIN, SPEC_WITH_GAIN

from app.export.page import DRAWN_PARTS, initial_state, source_config
from app.page.bundle import WEB
from app.page.kernel_data import ExportData, build_export_data, slider_grids
from app.simulation.spec import NUMERIC_PARTS, SPEC, SimulationSpec

from .js_harness import node_available, run_node
from .spec_states import extremes
from .test_spec import code_of

CURVE_POINTS = 61


@functools.cache
def small_data() -> ExportData:
    """Samples small enough to run quickly, with several slider positions of each control."""
    return build_export_data(48, 128, 0)


def test_every_control_that_feeds_numbers_says_whether_the_file_computes_it() -> None:
    for control in SPEC.controls:
        if control.feeds & NUMERIC_PARTS:
            assert control.mirror in (True, False), control.name
            # Served-only: the file keeps the exported value and offers no widget for it.
            assert control.mirror or not control.offline, control.name
        else:
            assert control.mirror is None, control.name
    assert set(SPEC.served_only) == {"seed", "rho", "qk_norm"}


def test_a_spec_refuses_a_numeric_control_left_unsaid_or_offered_but_not_computed() -> None:
    with pytest.raises(ValueError, match="feeds numbers: say whether the offline kernel"):
        SPEC.with_control(dataclasses.replace(GAIN, mirror=None))
    with pytest.raises(ValueError, match=r"served-only .* cannot offer it"):
        SPEC.with_control(dataclasses.replace(GAIN, mirror=False))
    served_only = SPEC.with_control(dataclasses.replace(GAIN, mirror=False, offline=False))
    assert served_only.served_only[-1] == "gain"


KERNEL_MODULES = sorted([*WEB.glob("shared/*.js"), *WEB.glob("offline/*.js")])
"""The browser modules the offline file computes its numbers with."""


def test_the_kernel_reads_every_mirrored_control_by_its_spec_name() -> None:
    code = "\n".join(code_of(path) for path in KERNEL_MODULES)
    for name in SPEC.mirrored:
        # Read from the state: `state.name`, or a key of a destructuring `{ name: … }`.
        assert re.search(rf"\.{name}\b|[{{,]\s*{name}\b", code), name


def _same(first: Any, second: Any) -> bool:
    """Whether two decoded frames' numbers are the same, bit for bit (NaN where NaN)."""
    if isinstance(first, dict):
        return set(first) == set(second) and all(_same(first[k], second[k]) for k in first)
    if isinstance(first, np.ndarray):
        return first.shape == second.shape and np.array_equal(first, second, equal_nan=True)
    if isinstance(first, float) and isinstance(second, float):
        return first == second or (np.isnan(first) and np.isnan(second))
    return first == second


def unmoved_controls(spec: SimulationSpec) -> list[str]:
    """The controls ``spec`` marks as mirrored whose every value gives the offline kernel
    the same numbers for the parts they feed, at the file's default state and at the state
    with every mirrored control at its largest extreme (a control may matter only there:
    the max subtraction, in a coarse format)."""
    data = small_data()
    grids = slider_grids(data)
    default = initial_state(data, spec).control_values()
    high = {
        **default,
        **{name: extremes(spec.by_name[name], grids)[-1] for name in spec.mirrored},
    }
    drawn = set(DRAWN_PARTS.values()) & NUMERIC_PARTS
    requests: list[dict] = []
    asked: list[tuple[str, int]] = []
    for name in spec.mirrored:
        values = (default[name], *extremes(spec.by_name[name], grids))
        parts = sorted(spec.parts_fed_by({name}) & drawn)
        for base_index, base in enumerate((default, high)):
            for value in values:
                requests.append(
                    {"sequence": len(requests) + 1, "state": {**base, name: value}, "parts": parts}
                )
                asked.append((name, base_index))
    config = source_config(data, CURVE_POINTS, spec)
    (frames,) = run_node([("kernel_source", "framesFor", [config, requests])])
    numbers: dict[tuple[str, int], list] = {}
    for key, frame in zip(asked, frames, strict=True):
        numbers.setdefault(key, []).append(frame["numbers"])
    moved = {
        name for (name, _), seen in numbers.items() if not all(_same(seen[0], n) for n in seen)
    }
    return [name for name in spec.mirrored if name not in moved]


@pytest.fixture(scope="module")
def node_needed() -> None:
    """Skip when Node is missing: the kernel runs under it."""
    if not node_available():
        pytest.skip("node is not installed: the kernel tests run it")


def test_the_kernel_follows_every_control_the_spec_says_it_mirrors(node_needed: None) -> None:
    assert unmoved_controls(SPEC) == []


def test_a_mirrored_control_the_kernel_ignores_is_caught(node_needed: None) -> None:
    # The throwaway gain feeds the weights but nothing reads it: in the file, a slider that
    # changes nothing. Marked as mirrored, it is what the check above must refuse.
    assert GAIN.mirror is True
    assert unmoved_controls(SPEC_WITH_GAIN) == ["gain"]
