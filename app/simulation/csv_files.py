"""Data out: the heatmap's matrix and the histograms as CSV, named after the state.

The values are the page's own: the float32 images the heatmap draws (written with nine
significant digits, which give back each float32 exactly) and the histograms' bars, so a
student's spreadsheet holds what the page showed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.simulation.model import SimulationModel
from app.simulation.parts import HistogramFrame
from app.simulation.spec import CONTROL_BY_NAME

MATRIX_COLUMNS = ("query", "key", "raw", "scaled", "weight")
HISTOGRAM_COLUMNS = ("histogram", "left", "right", "count", "density", "reference_density")
HISTOGRAM_ROW_NAMES = ("raw", "scaled")
"""The ``histogram`` column's value in the raw histogram's rows and in the scaled one's."""

MATRIX_LABEL = "Download CSV: heatmap matrix"
HISTOGRAM_LABEL = "Download CSV: histograms"

LAW_CONTROLS = ("sigma_q", "sigma_k", "rho", "qk_norm")
"""Controls of the law of q and k: a file name carries those not at their defaults."""
SOFTMAX_CONTROLS = ("precision", "subtract_max")
"""Controls of how the softmax computes: the matrix file's name carries those changed."""
MATRIX_NAME_CONTROLS = ("seed", *LAW_CONTROLS, *SOFTMAX_CONTROLS)
"""What :func:`matrix_filename` adds after d_k, T, n and the scale, when not the default."""
HISTOGRAM_NAME_CONTROLS = ("seed", *LAW_CONTROLS)
"""What :func:`histogram_filename` adds after d_k, when not the default."""


FILE_NAME_TEXTS = {
    "start": "sdpa",
    "d_k": "d_k-{d_k}",
    "temperature": "T-{temperature:.6g}",
    "n": "n-{n}",
    "scaled": "scaled",
    "unscaled": "unscaled",
    "causal": "causal",
    "control": "{name}-{value}",
    "on": "on",
    "off": "off",
    "number": "{value:.6g}",
    "histogram": "histogram",
    "join": "_",
    "end": ".csv",
}
"""The words and ``str.format`` templates of the CSV files' names: both pages name their
files from here (the offline page's assumptions.js with text.js's ``fill``)."""


def _short(value: object) -> str:
    if isinstance(value, bool):
        return FILE_NAME_TEXTS["on" if value else "off"]
    if isinstance(value, float):
        return FILE_NAME_TEXTS["number"].format(value=value)
    return str(value)


def _changed(model: SimulationModel, names: tuple[str, ...]) -> list[str]:
    """``name-value`` for each of ``names`` whose control is not at its default."""
    state = model.state
    return [
        FILE_NAME_TEXTS["control"].format(name=name, value=_short(getattr(state, name)))
        for name in names
        if getattr(state, name) != CONTROL_BY_NAME[name].default
    ]


def matrix_filename(model: SimulationModel) -> str:
    """``sdpa_d_k-64_T-1_n-32_scaled.csv``, with the mask, seed, law of q and k and the
    softmax's settings added when they are not the defaults."""
    state = model.state
    words = FILE_NAME_TEXTS
    parts = [
        words["start"],
        words["d_k"].format(d_k=state.d_k),
        words["temperature"].format(temperature=state.temperature),
        words["n"].format(n=state.n),
        words["scaled" if state.scaled else "unscaled"],
    ]
    if state.causal:
        parts.append(words["causal"])
    parts += _changed(model, MATRIX_NAME_CONTROLS)
    return words["join"].join(parts) + words["end"]


def histogram_filename(model: SimulationModel) -> str:
    """``sdpa_d_k-64_histogram.csv``, with the seed and law added when not the defaults."""
    words = FILE_NAME_TEXTS
    parts = [
        words["start"],
        words["d_k"].format(d_k=model.state.d_k),
        *_changed(model, HISTOGRAM_NAME_CONTROLS),
        words["histogram"],
    ]
    return words["join"].join(parts) + words["end"]


def _matrix_text(causal: bool, raw: np.ndarray, scaled: np.ndarray, weight: np.ndarray) -> str:
    n = raw.shape[0]
    raw_rows, scaled_rows, weight_rows = raw.tolist(), scaled.tolist(), weight.tolist()
    lines = [",".join(MATRIX_COLUMNS)]
    for i in range(n):
        r, s, w = raw_rows[i], scaled_rows[i], weight_rows[i]
        visible = i + 1 if causal else n
        lines.extend(f"{i},{j},{r[j]:.9g},{s[j]:.9g},{w[j]:.9g}" for j in range(visible))
        lines.extend(f"{i},{j},,," for j in range(visible, n))
    return "\n".join(lines) + "\n"


def _matrix_snapshot(model: SimulationModel) -> tuple:
    """What :func:`matrix_csv` writes, taken from the model as it is now (read-only arrays)."""
    scores, weights = model.scores, model.weights
    return (
        bool(model.state.causal),
        scores.raw_image,
        scores.scaled_image,
        weights.weights_image,
    )


def matrix_csv(model: SimulationModel) -> str:
    """Every cell of the heatmap, row by row: query i, key j, raw score, scaled score and
    weight as the page draws them (float32). Masked cells have empty values; an overflowed
    weight is ``nan``."""
    return _matrix_text(*_matrix_snapshot(model))


def histogram_rows(name: str, frame: HistogramFrame) -> list[str]:
    """One histogram's CSV rows, named ``name``: each bin's edges, count, density and the
    normal law's density at its centre (assumptions.js writes the same rows)."""
    centres = (frame.left.astype(np.float64) + frame.right) / 2
    variance = frame.expected_std**2
    reference = np.exp(-0.5 * (centres - frame.expected_mean) ** 2 / variance) / np.sqrt(
        2 * np.pi * variance
    )
    return [
        f"{name},{left!r},{right!r},{count},{density!r},{curve!r}"
        for left, right, count, density, curve in zip(
            frame.left.tolist(),
            frame.right.tolist(),
            frame.counts.tolist(),
            frame.density.tolist(),
            reference.tolist(),
            strict=True,
        )
    ]


def _histogram_text(raw: HistogramFrame, scaled: HistogramFrame) -> str:
    raw_name, scaled_name = HISTOGRAM_ROW_NAMES
    rows = [*histogram_rows(raw_name, raw), *histogram_rows(scaled_name, scaled)]
    return ",".join(HISTOGRAM_COLUMNS) + "\n" + "\n".join(rows) + "\n"


def _histogram_snapshot(model: SimulationModel) -> tuple[HistogramFrame, HistogramFrame]:
    return model.raw_histogram, model.scaled_histogram


def histogram_csv(model: SimulationModel) -> str:
    """Both histograms' bins: edges, counts, density (as drawn) and the reference normal
    density at each bin's centre (the curve's law), raw first, then scaled."""
    return _histogram_text(*_histogram_snapshot(model))


CSV_FILES = ("matrix", "histogram")
"""The files the assumptions section offers, by the name its buttons send."""


def csv_file(model: SimulationModel, which: str) -> tuple[str, Callable[[], str]]:
    """The CSV file ``which`` (one of :data:`CSV_FILES`) of ``model`` as it is now: its
    name, and a function that writes its text from the numbers taken now (read-only
    arrays), which may run in another thread while the model moves on (1.4 s at n = 1024
    for the matrix)."""
    if which == "matrix":
        name, numbers, text = matrix_filename(model), _matrix_snapshot(model), _matrix_text
    elif which == "histogram":
        name, numbers, text = histogram_filename(model), _histogram_snapshot(model), _histogram_text
    else:
        raise ValueError(f"no CSV file {which!r}: one of {CSV_FILES}")
    return name, lambda: text(*numbers)
