"""Two-byte weight codes: every weight within 0.09 % of itself, the special values exact, and
the page's decoder (app/page/web/served/embedding.js, under Node.js) reading what Python wrote."""

from __future__ import annotations

import base64
import json
import math
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app.page.bundle import WEB
from app.page.frames import PACK_LIMIT, numbers_frame, packed_frame, unpacked_frame
from app.page.weight_codes import STEPS_PER_UNIT, code_spec, decode_weights, encode_weights
from app.served.components.figures import DRAWN_PARTS
from app.simulation.model import SimulationModel
from app.simulation.spec import CONTROL_BY_NAME, WEIGHTS
from app.simulation.state import SimulationState

RELATIVE_ERROR = math.expm1(0.51 / STEPS_PER_UNIT) + 1e-6
"""Half a step of the grid, plus the float32 logarithm's rounding (under 0.01 step down to
ln w = −104) and the decoded value's."""

WEIGHTS_ = hnp.arrays(
    np.float32,
    st.integers(1, 300),
    elements=st.floats(
        min_value=float(np.float32(1.2e-38)),
        max_value=140.0,
        width=32,
        allow_nan=False,
        allow_infinity=False,
    ),
)


@given(weights=WEIGHTS_)
def test_every_normal_weight_comes_back_within_half_a_step(weights: np.ndarray) -> None:
    codes = encode_weights(weights)
    assert codes.dtype == np.uint16 and codes.shape == (weights.size,)
    back = decode_weights(codes)
    assert back.dtype == np.float32
    np.testing.assert_allclose(back, weights, rtol=RELATIVE_ERROR, atol=0)


@given(weights=WEIGHTS_)
def test_a_larger_weight_never_gets_a_larger_value_back(weights: np.ndarray) -> None:
    order = np.argsort(weights, kind="stable")
    assert np.all(np.diff(decode_weights(encode_weights(weights))[order]) >= 0)


def test_one_zero_and_the_non_finite_come_back_exactly() -> None:
    weights = np.array([1.0, 0.0, -0.0, -3.0, np.nan, np.inf, -np.inf, 1e-45, 1e9], np.float32)
    back = decode_weights(encode_weights(weights))
    assert back[0] == 1.0
    assert list(back[1:4]) == [0.0, 0.0, 0.0]
    assert math.isnan(back[4]) and back[5] == np.inf and back[6] == 0.0
    # The smallest subnormal keeps its order of magnitude; a weight no softmax gives is capped.
    assert 0 < back[7] < 1e-44
    assert back[8] == pytest.approx(math.exp(5.0), rel=1e-6)


def test_a_temperature_move_at_n_1024_sends_two_bytes_per_weight() -> None:
    state = SimulationState()
    state.set_controls(n=1024, causal=True)
    model = SimulationModel(state)
    state.set_controls(temperature=CONTROL_BY_NAME["temperature"].grid[0])
    parts = model.refresh({"temperature"})
    frame = numbers_frame(model, parts, 2)
    packed = packed_frame(frame)
    reference = json.loads(packed["text"])["numbers"][WEIGHTS]["weightsImage"]
    assert reference["code"] == code_spec()
    codes = packed["packed"][reference["alone"]]
    assert codes.dtype == np.uint16 and codes.nbytes == 2 * 1024 * 1024
    # The frame itself keeps its float32 image; the page's copy is within half a step.
    original = frame["numbers"][WEIGHTS]["weightsImage"]
    assert original.dtype == np.float32
    back = unpacked_frame(packed)["numbers"][WEIGHTS]["weightsImage"]
    masked = np.isnan(original)
    assert masked.any() and np.array_equal(np.isnan(back), masked)
    np.testing.assert_allclose(back[~masked], original[~masked], rtol=RELATIVE_ERROR, atol=0)
    assert sum(array.nbytes for array in packed["packed"].values()) < 2.2 * 1024 * 1024


@pytest.mark.parametrize("n", [32, 256])
def test_up_to_the_pack_limit_weights_travel_as_float32(n: int) -> None:
    state = SimulationState()
    state.set_controls(n=n)
    assert n * n <= PACK_LIMIT
    frame = numbers_frame(SimulationModel(state), DRAWN_PARTS, 1)
    reference = json.loads(packed_frame(frame)["text"])["numbers"][WEIGHTS]["weightsImage"]
    assert set(reference) == {"packed", "start", "length"}


UNPACK_JS = """
const fs = require("node:fs"), { pathToFileURL } = require("node:url");
import(pathToFileURL(process.argv[1]).href).then(({ unpack }) => {
const message = JSON.parse(fs.readFileSync(0, "utf8"));
const TYPES = { uint16: Uint16Array, float32: Float32Array, float64: Float64Array };
const packed = {};
for (const [key, [dtype, bytes]] of Object.entries(message.packed)) {
  const copy = new Uint8Array(Buffer.from(bytes, "base64")).slice().buffer;
  packed[key] = new TYPES[dtype](copy);
}
const frame = unpack({ ...message, packed });
// Every typed array as [its type, its bytes]: what the drawing code receives.
const out = JSON.stringify(frame.numbers, (key, value) =>
  ArrayBuffer.isView(value)
    ? { type: value.constructor.name,
        bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") }
    : Number.isNaN(value) ? { float: "NaN" } : value);
process.stdout.write(out);
});
"""
"""Imports app/page/web/served/embedding.js in Node.js, unpacks the packed frame on stdin with
the page's ``unpack`` and writes its numbers, each typed array as its type and bytes."""

PAGE_TYPES = {"Float32Array": "<f4", "Float64Array": "<f8"}


def unpacked_by_the_page(packed: dict) -> dict:
    """The numbers of ``packed`` as the page's ``unpack`` (app/page/web/served/embedding.js)
    gives them, typed arrays as NumPy arrays of the same type."""
    node = shutil.which("node")
    assert node is not None, "Node.js is needed: scripts/test.sh installs Debian's nodejs"
    message = {
        "sequence": packed["sequence"],
        "parts": packed["parts"],
        "text": packed["text"],
        "packed": {
            key: [
                array.dtype.name,
                base64.b64encode(array.astype(array.dtype.newbyteorder("<")).tobytes()).decode(),
            ]
            for key, array in packed["packed"].items()
        },
    }
    result = subprocess.run(
        [node, "-e", UNPACK_JS, str(WEB / "served" / "embedding.js")],
        input=json.dumps(message),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )

    def typed(value: dict) -> object:
        if set(value) == {"type", "bytes"}:
            return np.frombuffer(base64.b64decode(value["bytes"]), dtype=PAGE_TYPES[value["type"]])
        if set(value) == {"float"}:
            return math.nan
        return value

    return json.loads(result.stdout, object_hook=typed)


def assert_same_numbers(page: object, python: object, path: str = "numbers") -> None:
    """Every array of the page's numbers has the type and the bits of Python's."""
    if isinstance(python, dict):
        assert isinstance(page, dict) and page.keys() == python.keys(), path
        for key in python:
            assert_same_numbers(page[key], python[key], f"{path}.{key}")
    elif isinstance(python, np.ndarray):
        assert isinstance(page, np.ndarray), path
        assert page.dtype == python.dtype.newbyteorder("<"), path
        assert page.tobytes() == python.astype(page.dtype).tobytes(), path
    elif isinstance(python, float) and math.isnan(python):
        assert isinstance(page, float) and math.isnan(page), path
    else:
        assert page == python, path


def test_the_pages_decoder_reads_what_python_wrote() -> None:
    weights = np.concatenate(
        [
            np.geomspace(1e-44, 1.0, 5000, dtype=np.float32),
            np.array([np.nan, np.inf, 0.0, 1.0, 0.5, 1 / 32], np.float32),
        ]
    )
    frame = {
        "sequence": 4,
        "state": {"n": 1},
        "parts": [WEIGHTS],
        "numbers": {WEIGHTS: {"weightsImage": weights, "maxLogit": 1.5}},
    }
    packed = packed_frame(frame, limit=100)
    # The same table: Math.exp and NumPy's exp agree to float32 on every code used here.
    assert_same_numbers(unpacked_by_the_page(packed), unpacked_frame(packed)["numbers"])


@pytest.mark.parametrize(
    "controls",
    [{"n": 32}, {"n": 32, "causal": True, "d_k": 1024}, {"n": 1024, "causal": True, "d_k": 3}],
    ids=["n=32", "n=32-causal-d_k=1024", "n=1024-causal-d_k=3"],
)
def test_the_page_unpacks_a_first_screen_frame_to_the_bit(controls: dict) -> None:
    """The scaled scores rebuilt from the raw ones, the weights decoded, the rest as sent:
    the page draws exactly the numbers Python's unpacked frame holds."""
    state = SimulationState()
    state.set_controls(**controls)
    frame = numbers_frame(SimulationModel(state), DRAWN_PARTS, 9)
    packed = packed_frame(frame)
    reference = json.loads(packed["text"])["numbers"]["scores"]["scaledImage"]
    assert "times" in reference, "the scaled scores travel as a product of the raw ones"
    python = unpacked_frame(packed)["numbers"]
    scores = frame["numbers"]["scores"]
    assert np.array_equal(python["scores"]["scaledImage"], scores["scaledImage"], equal_nan=True)
    assert_same_numbers(unpacked_by_the_page(packed), python)
