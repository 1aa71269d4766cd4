"""A frame's small arrays packed into one array per dtype, and restored exactly."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app.page.frames import PACK_LIMIT, numbers_frame, packed_frame, unpacked_frame
from app.served.components.figures import DRAWN_PARTS
from app.simulation.model import SimulationModel
from app.simulation.spec import CONTROL_BY_NAME
from app.simulation.state import SimulationState


def same(a: object, b: object) -> bool:
    """Equal frames: the same keys and values, arrays of the same dtype and numbers."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a.reshape(-1), b.reshape(-1), equal_nan=True)
        )
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def text_of(packed: dict) -> dict:
    """The state and numbers a packed frame's text holds, as JSON reads them."""
    return json.loads(packed["text"])


def references_in(value: object) -> list[dict]:
    """Every array reference of a packed frame's text (``packed`` or ``alone``)."""
    if isinstance(value, dict):
        if "packed" in value or "alone" in value:
            return [value]
        return [ref for item in value.values() for ref in references_in(item)]
    return []


def arrays_in(value: object) -> list[np.ndarray]:
    """Every array of a frame, in order."""
    if isinstance(value, dict):
        return [array for item in value.values() for array in arrays_in(item)]
    return [value] if isinstance(value, np.ndarray) else []


@pytest.mark.parametrize("n", [2, 32, 256])
@pytest.mark.parametrize("scaled", [True, False])
def test_a_first_screen_frame_packs_into_one_array_per_dtype(n: int, scaled: bool) -> None:
    state = SimulationState()
    state.set_controls(n=n, scaled=scaled, d_k=CONTROL_BY_NAME["d_k"].grid[-1])
    frame = numbers_frame(SimulationModel(state), DRAWN_PARTS, 7)
    packed = packed_frame(frame)
    small = [array for array in arrays_in(frame["numbers"]) if array.size <= PACK_LIMIT]
    assert set(packed["packed"]) == {array.dtype.name for array in small}
    # One string and at most one array per dtype: nothing else for Bokeh to walk.
    assert set(packed) == {"sequence", "parts", "text", "packed"}
    assert isinstance(packed["text"], str)
    assert len(references_in(text_of(packed)["numbers"])) == len(arrays_in(frame["numbers"]))
    assert packed["sequence"] == 7 and packed["parts"] == frame["parts"]
    assert text_of(packed)["state"] == frame["state"]
    assert same(unpacked_frame(packed), frame)


def test_at_n_1024_the_images_travel_alone() -> None:
    state = SimulationState()
    state.set_controls(n=1024)
    frame = numbers_frame(SimulationModel(state), DRAWN_PARTS, 1)
    packed = packed_frame(frame)
    reference = text_of(packed)["numbers"]["scores"]["rawImage"]
    image = packed["packed"][reference["alone"]]
    assert isinstance(image, np.ndarray) and image.size == 1024 * 1024
    assert image is frame["numbers"]["scores"]["rawImage"]  # not copied
    # The weights travel as two-byte codes (test_weight_codes.py); all else comes back as is.
    assert "code" in text_of(packed)["numbers"]["weights"]["weightsImage"]
    back = unpacked_frame(packed)
    del back["numbers"]["weights"]["weightsImage"]
    expected = {
        **frame,
        "numbers": {**frame["numbers"], "weights": dict(frame["numbers"]["weights"])},
    }
    del expected["numbers"]["weights"]["weightsImage"]
    assert same(back, expected)


def test_non_finite_numbers_travel_as_json_can_write_them() -> None:
    numbers = {"w": {"maxLogit": math.inf, "low": -math.inf, "error": math.nan, "count": 3}}
    frame = {"sequence": 2, "state": {"temperature": 0.5}, "parts": ["w"], "numbers": numbers}
    packed = packed_frame(frame)
    # Strict JSON: no bare NaN, Infinity or -Infinity for a reader to refuse.
    json.loads(packed["text"], parse_constant=lambda name: pytest.fail(f"bare {name}"))
    assert same(unpacked_frame(packed), frame)


def test_a_frame_without_packing_comes_back_as_it_is() -> None:
    frame = numbers_frame(SimulationModel(SimulationState()), DRAWN_PARTS, 3)
    assert same(unpacked_frame(frame), frame)


NUMBERS = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]),
    st.one_of(
        hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32]), st.integers(0, 40)),
        st.floats(),
        st.none(),
        st.dictionaries(
            st.sampled_from(["x", "y"]),
            hnp.arrays(st.sampled_from([np.float32, np.float64]), st.integers(0, 40)),
        ),
    ),
)


@given(numbers=NUMBERS, limit=st.integers(0, 50))
def test_any_numbers_round_trip(numbers: dict, limit: int) -> None:
    frame = {"sequence": 1, "state": {}, "parts": [], "numbers": numbers}
    packed = packed_frame(frame, limit=limit)
    shared = {key for key in packed["packed"] if not key.startswith("alone-")}
    assert shared <= {"float32", "float64"}
    assert same(unpacked_frame(packed), frame)
