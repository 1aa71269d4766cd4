"""Two-byte weight codes: every weight within 0.09 % of itself, the special values exact, and
the page's decoder (app/views/embedding.js, under Node.js) reading what Python wrote."""

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

from app.controls_spec import CONTROL_BY_NAME, WEIGHTS
from app.model import SimulationModel
from app.numbers_out import PACK_LIMIT, numbers_frame, packed_frame, unpacked_frame
from app.state import SimulationState
from app.views.drawn_figures import DRAWN_PARTS, EMBEDDING_JS
from app.weight_codes import STEPS_PER_UNIT, code_spec, decode_weights, encode_weights

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


def test_the_pages_decoder_reads_what_python_wrote() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed: scripts/test.sh installs Debian's nodejs"
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
    script = f"""
const vm = require("vm"), fs = require("fs");
vm.runInThisContext(fs.readFileSync({json.dumps(str(EMBEDDING_JS))}, "utf8"));
const message = JSON.parse(fs.readFileSync(0, "utf8"));
const TYPES = {{ uint16: Uint16Array, float32: Float32Array, float64: Float64Array }};
const packed = {{}};
for (const [key, [dtype, bytes]] of Object.entries(message.packed)) {{
  const buffer = Buffer.from(bytes, "base64");
  const copy = new Uint8Array(buffer).slice().buffer;
  packed[key] = new TYPES[dtype](copy);
}}
const frame = unpack({{ ...message, packed }});
const image = frame.numbers.weights.weightsImage;
process.stdout.write(JSON.stringify({{
  type: image.constructor.name,
  bytes: Buffer.from(image.buffer, image.byteOffset, image.byteLength).toString("base64"),
  maxLogit: frame.numbers.weights.maxLogit,
}}));
"""
    result = subprocess.run(
        [node, "-e", script],
        input=json.dumps(message),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    page = json.loads(result.stdout)
    assert page["type"] == "Float32Array" and page["maxLogit"] == 1.5
    drawn = np.frombuffer(base64.b64decode(page["bytes"]), dtype="<f4")
    python = unpacked_frame(packed)["numbers"][WEIGHTS]["weightsImage"]
    # The same table: Math.exp and NumPy's exp agree to float32 on every code used here.
    np.testing.assert_array_equal(drawn, python)
