"""A frame's small arrays packed into one array per dtype, and restored exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app.controls_spec import CONTROL_BY_NAME
from app.model import SimulationModel
from app.numbers_out import PACK_LIMIT, numbers_frame, packed_frame, unpacked_frame
from app.state import SimulationState
from app.views.drawn_figures import DRAWN_PARTS


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
    return a == b


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
    # What stays outside the packed arrays: the arrays too large to copy.
    assert all(array.size > PACK_LIMIT for array in arrays_in(packed["numbers"]))
    assert packed["sequence"] == 7 and packed["parts"] == frame["parts"]
    assert packed["state"] == frame["state"]
    assert same(unpacked_frame(packed), frame)


def test_at_n_1024_the_images_travel_alone() -> None:
    state = SimulationState()
    state.set_controls(n=1024)
    frame = numbers_frame(SimulationModel(state), DRAWN_PARTS, 1)
    packed = packed_frame(frame)
    image = packed["numbers"]["scores"]["rawImage"]
    assert isinstance(image, np.ndarray) and image.size == 1024 * 1024
    assert same(unpacked_frame(packed), frame)


def test_a_frame_without_packing_comes_back_as_it_is() -> None:
    frame = numbers_frame(SimulationModel(SimulationState()), DRAWN_PARTS, 3)
    assert same(unpacked_frame(frame), frame)


NUMBERS = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]),
    st.one_of(
        hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32]), st.integers(0, 40)),
        st.floats(allow_nan=False),
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
    assert set(packed["packed"]) <= {"float32", "float64"}
    assert same(unpacked_frame(packed), frame)
