"""The app model: the state and the data derived from it, recomputed only where it changed."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

import param

from app.simulation.parts import (
    HistogramFrame,
    OutputFrame,
    RowComparison,
    ScoreImages,
    Values,
    WeightsFrame,
    histograms_for,
    histograms_ready,
    images_for,
    law_of,
    output_frame,
    row_comparison,
    scores_of,
    weights_frame,
)
from app.simulation.spec import (
    HISTOGRAMS,
    INPUTS,
    OUTPUT,
    ROW,
    SCORES,
    SPEC,
    VIEW,
    WEIGHTS,
    SimulationSpec,
)
from app.simulation.state import SimulationState

__all__ = [
    "HISTOGRAMS",
    "INPUTS",
    "OUTPUT",
    "ROW",
    "SCORES",
    "VIEW",
    "WEIGHTS",
    "SimulationModel",
]
"""The model, and the names of its parts (from app.simulation.spec) that views look for."""

SHARED_WEIGHTS_MAX_N = 256
"""Up to this n, the weights of a state are computed once and shared by the sessions that
show the same state (a class following its instructor: each student's session would
otherwise compute the same softmax). Larger ones are computed per session: a few entries
of n = 1024 would hold tens of MiB."""


def _weights_of(values: Values) -> WeightsFrame:
    """The weights part of the controls' ``values`` (computed, not shared)."""
    return weights_frame(scores_of(values), values)


@functools.lru_cache(maxsize=16)
def _shared_weights(spec: SimulationSpec, key: tuple) -> WeightsFrame:
    # The key holds every control the weights depend on, so it alone gives their values.
    frame = _weights_of(dict(zip(spec.ordered_inputs[WEIGHTS], key, strict=True)))
    for array in (frame.weights, frame.weights_image, frame.overflow):
        if array is not None:
            array.flags.writeable = False
    return frame


def shared_weights(values: Mapping[str, object], spec: SimulationSpec = SPEC) -> WeightsFrame:
    """The weights of the controls' ``values``, computed once for every session that shows
    them (the most recent 16 states, n ≤ :data:`SHARED_WEIGHTS_MAX_N`); their arrays are
    read-only. Keyed by ``spec``'s :meth:`~SimulationSpec.part_key`: the values of the
    controls the weights depend on, in the spec's order."""
    return _shared_weights(spec, spec.part_key(WEIGHTS, values))


class SimulationModel(param.Parameterized):
    """The simulation without a server: a :class:`SimulationState` and what it implies.

    :meth:`refresh` recomputes only the parts that depend on the controls that changed and
    names them, so the views send only those to the browser.
    """

    state = param.ClassSelector(
        class_=SimulationState, constant=True, doc="The controls the student has set."
    )
    scores = param.ClassSelector(
        class_=ScoreImages,
        doc="Raw and scaled score images (depend on n, d_k, seed, mask and the law of Q, K).",
    )
    weights = param.ClassSelector(
        class_=WeightsFrame, doc="Attention weights and collapse readouts of the state."
    )
    row = param.ClassSelector(
        class_=RowComparison, doc="The chosen query's weights with and without the scale."
    )
    output = param.ClassSelector(
        class_=OutputFrame, doc="The values V and the attention output weights·V."
    )
    raw_histogram = param.ClassSelector(
        class_=HistogramFrame,
        doc="Histogram of the raw dot products against their normal law (Normal(0, d_k) in "
        "the lesson).",
    )
    scaled_histogram = param.ClassSelector(
        class_=HistogramFrame,
        doc="Histogram of the dot products / √d_k against their law (Normal(0, 1) in the lesson).",
    )

    computed_for = param.Dict(
        default={},
        doc="The controls' values the parts were last computed for, by name (what a frame "
        "says it shows; the state may have moved on since).",
    )

    def __init__(self, state: SimulationState | None = None, **params: object) -> None:
        super().__init__(state=state or SimulationState(), **params)
        self.refresh(self.state.spec.names)

    def builds_tables(self, changed: Iterable[str], values: Mapping[str, object]) -> bool:
        """Whether :meth:`refresh` for the ``changed`` controls at ``values`` would first
        build a seed's tables of pooled pairs (~0.5 s, the GIL released: Resample, or a
        link's seed, that no session of the process has drawn lately), which a server runs
        off the thread that serves every other student."""
        if HISTOGRAMS not in self.state.spec.parts_fed_by(changed):
            return False
        return not histograms_ready(int(values["seed"]), law_of(values))

    def refresh(
        self, changed: Iterable[str], values: Mapping[str, object] | None = None
    ) -> set[str]:
        """Recompute what depends on the ``changed`` controls; return the parts that changed.

        The parts are those the state's spec says depend on them
        (:meth:`app.simulation.spec.SimulationSpec.parts_fed_by`; the app's graph is
        :data:`INPUTS`); ``"view"`` (the heatmap's view changed)
        needs no new data. ``values`` are the controls' values to compute for (default: the
        state's now, :meth:`SimulationState.control_values`): a refresh run in another
        thread is given them, taken on the event loop, since the state may move meanwhile.
        One refresh at a time per model.
        """
        spec = self.state.spec
        parts = spec.parts_fed_by(changed)
        values = dict(values) if values is not None else self.state.control_values()
        # Every part function reads the one mapping by the spec's names: a new control
        # reaches the part that uses it with no change here.
        if SCORES in parts:
            self.scores = images_for(values)
        if WEIGHTS in parts:
            small = int(values["n"]) <= SHARED_WEIGHTS_MAX_N
            self.weights = shared_weights(values, spec) if small else _weights_of(values)
        if ROW in parts:
            self.row = row_comparison(scores_of(values), values)
        if OUTPUT in parts:
            self.output = output_frame(self.weights.weights, values)
        if HISTOGRAMS in parts:
            self.raw_histogram, self.scaled_histogram = histograms_for(values)
        self.computed_for = values
        return parts
