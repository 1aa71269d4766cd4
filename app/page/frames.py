"""The numbers the page draws, as frames: the Python side of the page's number sources.

The page's drawing code (``app/page/assets/controller.js``, ``ExportPage``) draws from frames of
numbers that a *source* delivers; it never computes them itself. The offline file's source is
``app/page/assets/kernel_source.js`` (kernel.js computing in the browser); a served session will be
the other, computing with :mod:`sdpa_core` through :class:`app.simulation.model.SimulationModel` and
sending what :func:`numbers_frame` returns. A frame is::

    {"sequence": int, "state": {control: value}, "parts": [part, ...],
     "numbers": {part: {field: value}}}

``parts`` names the model parts the frame answers (the keys of :data:`app.simulation.model.INPUTS`);
``numbers`` holds, for each part that has numbers, exactly the fields of
:data:`FRAME_FIELDS` (``view`` has none: it is named in ``parts`` only). Images are
row-major, flat, contiguous float32 (what Bokeh and Panel send as binary buffers), n×n or
n×d_v with n the frame state's; the other arrays keep the dtype their numbers have (the
histograms' edges float32, their densities and curves float64, which the CSV download
writes digit for digit); on the way to the page, :func:`packed_frame` sends a weights
image larger than :data:`PACK_LIMIT` as two-byte codes (app/page/weight_codes.py) the page
decodes back to float32. The field names are the drawing code's (camelCase), so a frame
reaches it as it is; the page receives :data:`FRAME_FIELDS` in its config, and the offline
source keeps exactly these fields of what kernel.js computes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import numpy as np

from app.page.weight_codes import CODE_NAME, code_spec, decode_weights, encode_weights
from app.simulation.model import SimulationModel
from app.simulation.parts import HistogramFrame, WeightsFrame, scale_factor
from app.simulation.spec import HISTOGRAMS, OUTPUT, ROW, SCORES, WEIGHTS

HISTOGRAM_FIELDS = (
    "left",
    "right",
    "density",
    "curveX",
    "curveY",
    "std",
    "expectedStd",
    "expectedMean",
    "count",
)
"""One histogram's numbers: bin edges, density, the normal curve and the spread readouts."""

REPORT_FIELDS = ("size", "nan", "inf", "nonFinite", "maxAbsError")
"""The softmax's precision report against float64 (sdpa_core.PrecisionReport)."""

FRAME_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        SCORES: ("rawImage", "scaledImage", "rawLimit", "scaledLimit"),
        WEIGHTS: (
            "weightsImage",
            "overflowImage",
            "meanMaxWeight",
            "meanEntropy",
            "uniformEntropy",
            "uniformMaxWeight",
            "maxLogit",
            "precision",
            "stable",
            "report",
        ),
        HISTOGRAMS: ("raw", "scaled"),
        ROW: ("row", "keys", "scaled", "unscaled", "scaledEntropy", "unscaledEntropy"),
        OUTPUT: ("valuesImage", "outputImage", "limit"),
    }
)
"""Each model part with numbers → the fields of its numbers in a frame. ``raw`` and
``scaled`` of the histograms hold :data:`HISTOGRAM_FIELDS` each, ``report`` of the weights
:data:`REPORT_FIELDS`; ``overflowImage`` is None when every weight is finite, else 1 where a
weight is inf or NaN and NaN elsewhere; ``keys`` of the row is how many keys the row sees."""


def frame_fields_spec() -> dict[str, object]:
    """The frame's field names as data for the page's scripts: ``parts`` (:data:`FRAME_FIELDS`),
    ``histogram`` (:data:`HISTOGRAM_FIELDS`) and ``report`` (:data:`REPORT_FIELDS`)."""
    return {
        "parts": {part: list(fields) for part, fields in FRAME_FIELDS.items()},
        "histogram": list(HISTOGRAM_FIELDS),
        "report": list(REPORT_FIELDS),
    }


def _flat_float32(array: np.ndarray) -> np.ndarray:
    """``array`` as flat, contiguous float32 (no copy when it already is)."""
    return np.ascontiguousarray(array, dtype=np.float32).reshape(-1)


def _histogram_numbers(frame: HistogramFrame) -> dict[str, object]:
    return {
        "left": np.ascontiguousarray(frame.left),
        "right": np.ascontiguousarray(frame.right),
        "density": np.ascontiguousarray(frame.density),
        "curveX": np.ascontiguousarray(frame.curve_x),
        "curveY": np.ascontiguousarray(frame.curve_y),
        "std": frame.std,
        "expectedStd": frame.expected_std,
        "expectedMean": frame.expected_mean,
        "count": frame.count,
    }


def _overflow_image(frame: WeightsFrame) -> np.ndarray | None:
    if frame.overflow is None:
        return None
    return _flat_float32(np.where(frame.overflow, 1.0, math.nan))


def _weights_numbers(frame: WeightsFrame) -> dict[str, object]:
    report = frame.precision_report
    return {
        "weightsImage": _flat_float32(frame.weights_image),
        "overflowImage": _overflow_image(frame),
        "meanMaxWeight": frame.mean_max_weight,
        "meanEntropy": frame.mean_entropy,
        "uniformEntropy": frame.uniform_entropy,
        "uniformMaxWeight": frame.uniform_max_weight,
        "maxLogit": frame.max_logit,
        "precision": frame.precision,
        "stable": frame.stable,
        "report": {
            "size": report.size,
            "nan": report.nan,
            "inf": report.inf,
            "nonFinite": report.non_finite,
            "maxAbsError": report.max_abs_error,
        },
    }


def part_numbers(model: SimulationModel, part: str) -> dict[str, object] | None:
    """The numbers of one model part as a frame carries them (:data:`FRAME_FIELDS`), or None
    for a part the page draws without numbers (``view``)."""
    if part == SCORES:
        scores = model.scores
        return {
            "rawImage": _flat_float32(scores.raw_image),
            "scaledImage": _flat_float32(scores.scaled_image),
            "rawLimit": scores.raw_limit,
            "scaledLimit": scores.scaled_limit,
        }
    if part == WEIGHTS:
        return _weights_numbers(model.weights)
    if part == HISTOGRAMS:
        return {
            "raw": _histogram_numbers(model.raw_histogram),
            "scaled": _histogram_numbers(model.scaled_histogram),
        }
    if part == ROW:
        row = model.row
        return {
            "row": row.row,
            "keys": int(row.keys.size),
            "scaled": np.ascontiguousarray(row.scaled),
            "unscaled": np.ascontiguousarray(row.unscaled),
            "scaledEntropy": row.scaled_entropy,
            "unscaledEntropy": row.unscaled_entropy,
        }
    if part == OUTPUT:
        output = model.output
        return {
            "valuesImage": _flat_float32(output.values_image),
            "outputImage": _flat_float32(output.output_image),
            "limit": output.limit,
        }
    return None


def frame_numbers(model: SimulationModel, parts: Iterable[str]) -> dict[str, dict[str, object]]:
    """The ``numbers`` of a frame for ``parts`` (what ``model.refresh(changed)`` returned):
    each part that has numbers, by part name."""
    numbers = {}
    for part in sorted(parts):
        values = part_numbers(model, part)
        if values is not None:
            numbers[part] = values
    return numbers


def frame_state(model: SimulationModel) -> dict[str, object]:
    """The controls' values a frame was computed for, by control name (those of the model's
    last refresh, which a refresh off the event loop took before the state moved on)."""
    values = model.computed_for
    return {name: values[name] for name in model.state.spec.names}


def numbers_frame(model: SimulationModel, parts: Iterable[str], sequence: int) -> dict:
    """The frame a source delivers for request ``sequence`` once ``model`` has been refreshed
    with its changes and ``parts`` (the parts refresh named, or the union over the requests
    it answers) recomputed: the state, the parts and their numbers."""
    parts = sorted(set(parts))
    return {
        "sequence": sequence,
        "state": frame_state(model),
        "parts": parts,
        "numbers": frame_numbers(model, parts),
    }


PACKED_DTYPES = ("float32", "float64")
"""The dtypes whose small arrays :func:`packed_frame` packs, one shared array each."""

PACK_LIMIT = 65_536
"""Arrays of at most this many elements are packed; a larger one travels alone (one buffer
of its own costs nothing next to its size, and packing it would copy it)."""

CODED_IMAGES: Mapping[str, tuple[str, ...]] = MappingProxyType({WEIGHTS: ("weightsImage",)})
"""Each part → its images that travel as two-byte codes (app/page/weight_codes.py) once larger
than the pack limit: a temperature move at n = 1024 then sends 2 MiB, not 4."""

NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
"""How a packed frame's text writes a float JSON has no number for: ``{"float": name}``
(JavaScript's ``Number(name)`` reads each name back)."""


def _float_text(value: float) -> object:
    if math.isfinite(value):
        return value
    return {"float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}


def packed_frame(frame: Mapping[str, object], limit: int = PACK_LIMIT) -> dict:
    """``frame`` as a session sends it: ``{"sequence", "parts", "text", "packed"}``.

    ``text`` is the JSON of the frame's ``state`` and ``numbers``, with each small float array
    moved into one array per dtype (``packed[dtype]``) and written as ``{"packed": dtype,
    "start": i, "length": k}``, each larger or other array kept whole (``packed["alone-j"]``,
    written ``{"alone": "alone-j"}``) and each non-finite float written ``{"float": name}``
    (:data:`NON_FINITE`). Two images travel lighter: the scaled scores as a reference to the
    raw ones with the float32 factor that gives them exactly (``{…reference, "times": f}``,
    :data:`SCALED_SCORES`), and a weights image larger than ``limit`` as uint16 codes
    (``{"alone": "alone-j", "code": spec}``, :data:`CODED_IMAGES`, app/page/weight_codes.py).

    Why one string and a few arrays: each array Bokeh sends is a binary buffer of its own,
    two websocket messages and a write (a move at n = 32 carried 15), and every key and
    value of a dict property is walked by Bokeh when it is set and again when it is
    serialised (~300 per frame, docs/performance.md "CPU per move"); one string is walked
    once. ``sequence`` and ``parts`` stay outside, for who only needs to know what a frame
    answers. :func:`unpacked_frame` and the page's drawing code (app/page/assets/embedding.js,
    ``unpack``) restore the frame."""
    numbers = _as_sent(frame["numbers"], frame["state"], limit)
    pieces: dict[str, list[np.ndarray]] = {dtype: [] for dtype in PACKED_DTYPES}
    sizes = dict.fromkeys(PACKED_DTYPES, 0)
    alone: dict[str, np.ndarray] = {}
    references: dict[int, dict[str, object]] = {}
    """By array id: where an array already packed is (one array referred to twice travels
    once)."""

    def reference(array: np.ndarray) -> dict[str, object]:
        known = references.get(id(array))
        if known is not None:
            return known
        dtype = array.dtype.name
        if dtype in pieces and array.size <= limit:
            where: dict[str, object] = {
                "packed": dtype,
                "start": sizes[dtype],
                "length": int(array.size),
            }
            pieces[dtype].append(array.reshape(-1))
            sizes[dtype] += array.size
        else:
            where = {"alone": f"alone-{len(alone)}"}
            alone[where["alone"]] = array
        references[id(array)] = where
        return where

    def pack(value: object) -> object:
        if isinstance(value, _Coded):
            # uint16 is no packed dtype: the codes travel alone.
            return {**reference(value.codes), "code": value.spec}
        if isinstance(value, _Scaled):
            return {**reference(value.source), "times": value.factor}
        if isinstance(value, Mapping):
            return {str(key): pack(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [pack(item) for item in value]
        if isinstance(value, np.ndarray):
            return dict(reference(value))
        if isinstance(value, bool | str) or value is None:
            return value
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float):
            return _float_text(value)
        return value

    text = json.dumps(
        {"state": pack(frame["state"]), "numbers": pack(numbers)},
        allow_nan=False,
        separators=(",", ":"),
    )
    packed = {dtype: np.concatenate(arrays) for dtype, arrays in pieces.items() if arrays}
    return {
        "sequence": frame["sequence"],
        "parts": list(frame["parts"]),
        "text": text,
        "packed": {**packed, **alone},
    }


def unpacked_frame(frame: Mapping[str, object]) -> dict:
    """The frame :func:`packed_frame` packed, its arrays views into the packed ones, its
    scaled images computed and its coded images decoded to float32 (a frame without
    ``text`` comes back as it is)."""
    text = frame.get("text")
    if not isinstance(text, str):
        return dict(frame)
    packed = frame.get("packed") or {}

    def array_at(value: Mapping[str, object]) -> np.ndarray | None:
        if set(value) == {"packed", "start", "length"}:
            start = value["start"]
            return packed[value["packed"]][start : start + value["length"]]
        if set(value) == {"alone"}:
            return packed[value["alone"]]
        return None

    def restore(value: dict) -> object:
        array = array_at(value)
        if array is not None:
            return array
        times = value.get("times")
        if isinstance(times, float | int) and not isinstance(times, bool):
            source = array_at({key: item for key, item in value.items() if key != "times"})
            if source is not None:
                return np.multiply(source, np.float32(times), dtype=np.float32)
        code = value.get("code")
        if (
            set(value) == {"alone", "code"}
            and isinstance(code, dict)
            and code.get("name") == CODE_NAME
        ):
            return decode_weights(packed[value["alone"]], code)
        if set(value) == {"float"} and value["float"] in NON_FINITE:
            return NON_FINITE[value["float"]]
        return value

    body = json.loads(text, object_hook=restore)
    return {
        "sequence": frame["sequence"],
        "state": body["state"],
        "parts": list(frame["parts"]),
        "numbers": body["numbers"],
    }


SCALED_SCORES = ("rawImage", "scaledImage")
"""The scores' raw image and the scaled one it gives, times
:func:`app.simulation.parts.scale_factor`
of the frame's d_k, in float32 (exactly what the page's float32 product gives too: the
product of two float32 is exact in float64, then rounded once)."""

SCALE_CHECKS = 64
"""Cells of the scaled image checked against raw × factor before it is sent as that
product (a change to how the model scales would otherwise go unseen on the page)."""


class _Coded:
    """An image's two-byte codes and the spec that decodes them, for :func:`packed_frame`."""

    __slots__ = ("codes", "spec")

    def __init__(self, codes: np.ndarray, spec: dict[str, object]) -> None:
        self.codes = codes
        self.spec = spec


class _Scaled:
    """An image sent as ``source`` times ``factor`` (float32), for :func:`packed_frame`."""

    __slots__ = ("factor", "source")

    def __init__(self, source: np.ndarray, factor: float) -> None:
        self.source = source
        self.factor = factor


def _scaled_of(scores: Mapping[str, object], state: Mapping[str, object]) -> _Scaled | None:
    """The scores' scaled image as the raw one times the frame's factor, or None when it
    is not exactly that (checked on :data:`SCALE_CHECKS` cells)."""
    raw_field, scaled_field = SCALED_SCORES
    raw, scaled, d_k = scores.get(raw_field), scores.get(scaled_field), state.get("d_k")
    if not (isinstance(raw, np.ndarray) and isinstance(scaled, np.ndarray)):
        return None
    if raw.dtype != np.float32 or scaled.dtype != np.float32 or raw.shape != scaled.shape:
        return None
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        return None
    factor = scale_factor(d_k)
    step = max(1, raw.size // SCALE_CHECKS)
    if not np.array_equal(raw[::step] * factor, scaled[::step], equal_nan=True):
        return None
    return _Scaled(raw, float(factor))


def _as_sent(
    numbers: Mapping[str, object], state: Mapping[str, object], limit: int
) -> Mapping[str, object]:
    """``numbers`` as :func:`packed_frame` sends them: the scaled scores as a product of
    the raw ones, each image of :data:`CODED_IMAGES` larger than ``limit`` elements as its
    codes (a copy of the parts it changes; the frame stays as it was)."""
    sent = dict(numbers)
    scores = numbers.get(SCORES)
    if isinstance(scores, Mapping):
        scaled = _scaled_of(scores, state)
        if scaled is not None:
            sent[SCORES] = {**scores, SCALED_SCORES[1]: scaled}
    for part, fields in CODED_IMAGES.items():
        values = numbers.get(part)
        if not isinstance(values, Mapping):
            continue
        for field in fields:
            image = values.get(field)
            if isinstance(image, np.ndarray) and image.size > limit:
                sent[part] = {**sent[part], field: _Coded(encode_weights(image), code_spec())}
    return sent
