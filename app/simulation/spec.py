"""The one description of every control and of the words both pages share.

Each :class:`Control` entry gives a control's name (also its URL parameter and state parameter),
label, kind, bounds or slider grid, default, help and the model parts that depend on it.
:class:`SimulationSpec` holds a set of them and what follows (the recompute graph, the URL
order); :data:`SPEC` is the app's, from :data:`CONTROLS`. The state's parameters
(app/simulation/state.py), the served widgets (app/page/controls.py), the offline page's
widgets (app/page/offline_controls.py), both URL parsers (app/simulation/query.py and, through
:func:`page_spec`, app/page/assets/query.js) and the recompute graph (app/simulation/model.py)
all read a spec. A new control is one entry here plus the view that draws it
(``tests/model/test_new_control.py`` adds one through :meth:`SimulationSpec.with_control`);
one that changes numbers also says whether the offline file computes them
(:attr:`Control.mirror`), and is read, by its name, by the part function that uses it
(app/simulation/parts.py) and, when mirrored, by the offline kernel (app/page/web/offline/).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal


def _log_int_grid(low: int, high: int, per_octave: int) -> tuple[int, ...]:
    """Integers from ``low`` to ``high``, evenly spaced on a log scale, with every power of two."""
    octaves = math.log2(high / low)
    steps = round(octaves * per_octave)
    values = {round(low * 2 ** (i / per_octave)) for i in range(steps + 1)}
    values |= {2**p for p in range(math.ceil(math.log2(low)), int(math.log2(high)) + 1)}
    return tuple(sorted(v for v in values if low <= v <= high))


def nearest_on_grid(value: float, grid: tuple | list) -> float:
    """The grid position closest to ``value``: on a log scale when every position is
    positive (d_k, n, temperature, σ), on a linear one otherwise (ρ, which spans 0)."""
    if min(grid) <= 0:
        return min(grid, key=lambda option: abs(option - value))
    target = math.log(value)
    return min(grid, key=lambda option: abs(math.log(option) - target))


# The model's parts: each is recomputed when a control it depends on changes.
SCORES = "scores"
"""Raw and scaled score images (the heatmap's raw and scaled views)."""
WEIGHTS = "weights"
"""Attention weights and the collapse readouts."""
HISTOGRAMS = "histograms"
"""Histograms of the raw and scaled dot products."""
VIEW = "view"
"""Which matrix the heatmap shows (no new data)."""
ROW = "row"
"""One query's weights, scaled vs unscaled."""
OUTPUT = "output"
"""The values V and the attention output weights·V."""

ALL_PARTS = (SCORES, WEIGHTS, HISTOGRAMS, VIEW, ROW, OUTPUT)

_SAMPLES = frozenset({SCORES, WEIGHTS, HISTOGRAMS, ROW, OUTPUT})
"""What a new draw of Q and K changes: everything that shows data."""

NUMERIC_PARTS = _SAMPLES
"""The parts with numbers (every part but the view): both pages' number sources compute
them, the server's model and the offline file's kernel (app/page/web/offline/)."""


@dataclass(frozen=True)
class Control:
    """One control of the simulation: what it is called, what it takes, what it changes."""

    name: str
    """State parameter, URL parameter and widget name."""
    label: str
    """The widget's label, also its accessible name."""
    doc: str
    """What the control means (the state parameter's ``doc``)."""
    kind: Literal["integer", "number", "boolean", "choice"]
    default: object
    feeds: frozenset[str]
    """The model parts (:data:`ALL_PARTS`) that depend on it."""
    widget: Literal["slider", "switch", "buttons", "whole_number", "none"]
    """How the served page offers it (``none``: set by a view, e.g. a click on the heatmap)."""
    bounds: tuple[float, float] | None = None
    """Smallest and largest value of a number."""
    grid: tuple[float, ...] = ()
    """Slider positions, on a log scale (any value within bounds may still be set)."""
    choices: Mapping[str, str] = field(default_factory=dict)
    """A choice's values → the words its buttons show."""
    exact_label: str = ""
    """Label of a box under the slider that takes any value within bounds ('' for none)."""
    help: str = ""
    """One sentence shown with the widget ('' for none)."""
    offline: bool = True
    """Whether the exported page offers it (it keeps the others as exported)."""
    mirror: bool | None = None
    """For a control that feeds a part with numbers (:data:`NUMERIC_PARTS`): whether the
    offline file's kernel computes them at any of its values (True), or only the served
    page can and the file keeps the exported value (False: served-only, so ``offline``
    must be False too). It must be said: a spec refuses such a control left at None
    (tests/export/test_mirror.py checks that the kernel's frames follow each mirrored one)."""
    first_screen: bool = False
    """Whether its widget sits with the plots on the first screen; the others are under
    "More controls", unless a lesson section offers them (:attr:`lesson_section`)."""
    lesson_section: str = ""
    """The lesson section whose view offers its widget ('' for none)."""
    url_format: Literal["plain", "general"] = "plain"
    """How the URL writes the value: ``general`` is ``%g`` (``0.25``, ``1``, ``20``)."""


D_K_BOUNDS = (1, 1024)
TEMPERATURE_BOUNDS = (0.05, 20.0)
N_BOUNDS = (2, 1024)
SEED_BOUNDS = (0, 2**32 - 1)
ROW_BOUNDS = (0, 1023)

D_K_GRID = _log_int_grid(*D_K_BOUNDS, per_octave=8)
"""d_k slider positions: eight per octave on a log scale, with every power of two."""

N_GRID = _log_int_grid(*N_BOUNDS, per_octave=8)
"""Sequence-length slider positions: eight per octave on a log scale."""

TEMPERATURE_GRID = (
    0.05, 0.06, 0.07, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0,
)  # fmt: skip
"""Temperature slider positions: round numbers on a roughly log scale from 0.05 to 20."""

SIGMA_BOUNDS = (0.25, 4.0)
RHO_BOUNDS = (-0.95, 0.95)

SIGMA_GRID = (
    0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 1.2, 1.4, 1.7, 2.0, 2.4, 2.8, 3.4, 4.0,
)  # fmt: skip
"""σ_q and σ_k slider positions: four round numbers per octave on a log scale, 0.25 to 4."""

RHO_GRID = tuple(round(0.05 * i - 0.95, 2) + 0.0 for i in range(39))
"""ρ slider positions: every 0.05 from −0.95 to 0.95, on a linear scale."""

PRECISION_CHOICES = MappingProxyType(
    {"float64": "float64", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}
)
"""Formats the softmax can compute in (sdpa_core.PRECISIONS): URL value → button text."""

VIEWS = MappingProxyType(
    {"weights": "attention weights", "scaled": "scaled scores", "raw": "raw scores"}
)
"""Heatmap views: URL value → what it shows, in words."""

CONTROLS: tuple[Control, ...] = (
    Control(
        "d_k",
        label="d_k (key dimension)",
        first_screen=True,
        doc="Key (and query) dimension d_k.",
        kind="integer",
        default=64,
        bounds=D_K_BOUNDS,
        grid=D_K_GRID,
        widget="slider",
        exact_label="exact d_k",
        help="Type any whole number from 1 to 1024; the slider moves in log steps.",
        feeds=_SAMPLES,
        mirror=True,
    ),
    Control(
        "temperature",
        label="temperature",
        first_screen=True,
        doc="Softmax temperature: logits are divided by it; higher is flatter, lower sharper.",
        kind="number",
        default=1.0,
        bounds=TEMPERATURE_BOUNDS,
        grid=TEMPERATURE_GRID,
        widget="slider",
        url_format="general",
        feeds=frozenset({WEIGHTS, ROW, OUTPUT}),
        mirror=True,
    ),
    Control(
        "n",
        label="sequence length n",
        first_screen=True,
        doc="Sequence length: number of queries and keys.",
        kind="integer",
        default=32,
        bounds=N_BOUNDS,
        grid=N_GRID,
        widget="slider",
        feeds=frozenset({SCORES, WEIGHTS, ROW, OUTPUT}),
        mirror=True,
    ),
    Control(
        "scaled",
        label="scale by 1/√d_k",
        first_screen=True,
        doc="Divide the raw scores by √d_k before the softmax.",
        kind="boolean",
        default=True,
        widget="switch",
        feeds=frozenset({WEIGHTS, OUTPUT}),
        mirror=True,
    ),
    Control(
        "view",
        label="heatmap view",
        doc="What the heatmap shows.",
        kind="choice",
        default="weights",
        choices=VIEWS,
        widget="buttons",
        feeds=frozenset({VIEW}),
    ),
    Control(
        "causal",
        label="causal mask",
        doc="Causal mask: query i may attend only to keys j ≤ i.",
        kind="boolean",
        default=False,
        widget="switch",
        feeds=frozenset({SCORES, WEIGHTS, ROW, OUTPUT}),
        mirror=True,
    ),
    Control(
        "seed",
        label="seed",
        doc="Seed of the sampled queries and keys.",
        kind="integer",
        default=0,
        bounds=SEED_BOUNDS,
        widget="whole_number",
        offline=False,
        feeds=_SAMPLES,
        mirror=False,
    ),
    Control(
        "row",
        label="query i",
        doc="Query i whose weights are compared scaled vs unscaled (clamped to n − 1).",
        kind="integer",
        default=0,
        bounds=ROW_BOUNDS,
        widget="none",
        offline=False,
        feeds=frozenset({ROW}),
        mirror=True,
    ),
    # When the lesson's assumptions break (the lesson's "When the assumptions break"
    # section shows them). The offline page leaves out ρ and QK-norm: their histograms need
    # two more tables of the 10,000 pooled pairs (q·q and k·k for every d_k step), 1.7 MB
    # each, past the file's 5 MB.
    Control(
        "sigma_q",
        lesson_section="assumptions",
        label="σ_q (query std)",
        doc="Standard deviation of each query entry (the lesson assumes 1).",
        kind="number",
        default=1.0,
        bounds=SIGMA_BOUNDS,
        grid=SIGMA_GRID,
        widget="slider",
        url_format="general",
        feeds=_SAMPLES,
        mirror=True,
    ),
    Control(
        "sigma_k",
        lesson_section="assumptions",
        label="σ_k (key std)",
        doc="Standard deviation of each key entry (the lesson assumes 1).",
        kind="number",
        default=1.0,
        bounds=SIGMA_BOUNDS,
        grid=SIGMA_GRID,
        widget="slider",
        url_format="general",
        feeds=_SAMPLES,
        mirror=True,
    ),
    Control(
        "rho",
        lesson_section="assumptions",
        label="ρ (q–k correlation)",
        doc="Correlation between q_i and k_i of the same token and dimension (the lesson "
        "assumes 0).",
        kind="number",
        default=0.0,
        bounds=RHO_BOUNDS,
        grid=RHO_GRID,
        widget="slider",
        url_format="general",
        offline=False,
        feeds=_SAMPLES,
        mirror=False,
    ),
    Control(
        "qk_norm",
        lesson_section="assumptions",
        label="normalise q and k",
        doc="QK-norm: scale each query and key to unit length times √d_k before the dot product.",
        kind="boolean",
        default=False,
        widget="switch",
        offline=False,
        feeds=_SAMPLES,
        mirror=False,
    ),
    Control(
        "precision",
        lesson_section="assumptions",
        label="softmax precision",
        doc="The floating-point format the softmax computes in.",
        kind="choice",
        default="float64",
        choices=PRECISION_CHOICES,
        widget="buttons",
        feeds=frozenset({WEIGHTS, OUTPUT}),
        mirror=True,
    ),
    Control(
        "subtract_max",
        lesson_section="assumptions",
        label="subtract the row max",
        doc="Subtract each row's largest logit before exponentiating (the stable softmax).",
        kind="boolean",
        default=True,
        widget="switch",
        feeds=frozenset({WEIGHTS, OUTPUT}),
        mirror=True,
    ),
)
"""Every control, in the order the URL writes them (after ``preset``)."""


@dataclass(frozen=True, eq=False)
class SimulationSpec:
    """A set of controls and what follows from it: the recompute graph, the URL's order,
    the widgets a link may name.

    The app's is :data:`SPEC`. The state (:meth:`app.simulation.state.SimulationState.for_spec`),
    the URL rules (:func:`app.simulation.query.query_parameters`), the recompute graph
    (:class:`app.simulation.model.SimulationModel`), both pages' widgets and the offline page's
    data all read a spec, so that a new control (:meth:`with_control`) reaches each of them
    from its one entry. Compared and hashed by identity: a spec is built once and kept.
    """

    controls: tuple[Control, ...]
    """Every control, in the order the URL writes them (after ``preset``)."""

    def __post_init__(self) -> None:
        names = [control.name for control in self.controls]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"controls named more than once: {', '.join(repeated)}")
        for control in self.controls:
            if not control.feeds or not control.feeds <= set(ALL_PARTS):
                raise ValueError(
                    f"control {control.name!r} must feed some of the parts {', '.join(ALL_PARTS)}"
                )
            # A numeric control left unsaid would do nothing in the file, silently.
            if control.feeds & NUMERIC_PARTS and control.mirror is None:
                raise ValueError(
                    f"control {control.name!r} feeds numbers: say whether the offline kernel "
                    "computes them (mirror=True) or only the served page does "
                    "(mirror=False, offline=False)"
                )
            if control.mirror is False and control.offline:
                raise ValueError(
                    f"control {control.name!r} is served-only (mirror=False): the file "
                    "cannot offer it (offline=False)"
                )

    def with_control(self, control: Control, *, after: str | None = None) -> SimulationSpec:
        """This spec with ``control`` added, last or right after the control named ``after``.

        Raises:
            ValueError: if a control of that name exists, ``after`` names none, or the
                control feeds no part of the model.
        """
        controls = list(self.controls)
        position = len(controls)
        if after is not None:
            if after not in self.by_name:
                raise ValueError(f"no control is called {after!r}")
            position = self.names.index(after) + 1
        controls.insert(position, control)
        return SimulationSpec(tuple(controls))

    @functools.cached_property
    def by_name(self) -> Mapping[str, Control]:
        """Each control by its name."""
        return MappingProxyType({control.name: control for control in self.controls})

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """The controls' names, in the spec's order: the parameters a preset sets."""
        return tuple(control.name for control in self.controls)

    @functools.cached_property
    def inputs(self) -> Mapping[str, frozenset[str]]:
        """Each model part → the controls it depends on (the recompute graph)."""
        return MappingProxyType(
            {
                part: frozenset(c.name for c in self.controls if part in c.feeds)
                for part in ALL_PARTS
            }
        )

    @functools.cached_property
    def ordered_inputs(self) -> Mapping[str, tuple[str, ...]]:
        """Each model part → the controls it depends on, in the spec's order."""
        return MappingProxyType(
            {
                part: tuple(n for n in self.names if n in inputs)
                for part, inputs in self.inputs.items()
            }
        )

    def part_key(self, part: str, values: Mapping[str, object]) -> tuple:
        """The values of the controls ``part`` depends on, in the spec's order: a cache key
        that is exact (every input, nothing else) and hashable."""
        return tuple(values[name] for name in self.ordered_inputs[part])

    @functools.cached_property
    def mirrored(self) -> tuple[str, ...]:
        """The controls feeding numbers that the offline file's kernel computes at any value."""
        return tuple(c.name for c in self.controls if c.mirror)

    @functools.cached_property
    def served_only(self) -> tuple[str, ...]:
        """The controls feeding numbers that only the served page computes (the file keeps
        their exported values)."""
        return tuple(c.name for c in self.controls if c.mirror is False)

    def parts_fed_by(self, changed: Iterable[str]) -> set[str]:
        """The model parts to recompute when the controls ``changed`` change."""
        changed = set(changed)
        return {part for part, inputs in self.inputs.items() if changed & inputs}

    @functools.cached_property
    def first_screen(self) -> tuple[str, ...]:
        """The controls a student moves most, beside the plots on every layout."""
        return tuple(c.name for c in self.controls if c.first_screen)

    @functools.cached_property
    def showable(self) -> tuple[str, ...]:
        """What ``?controls=`` may name: the preset selector and every control with a widget."""
        return ("preset", *(c.name for c in self.controls if c.widget != "none"))

    def in_section(self, section: str) -> tuple[str, ...]:
        """The controls a lesson section offers (:attr:`Control.lesson_section`), in order."""
        return tuple(c.name for c in self.controls if c.lesson_section == section)


SPEC = SimulationSpec(CONTROLS)
"""The app's controls: what every page serves and exports."""

ASSUMPTION_CONTROLS = SPEC.in_section("assumptions")
"""The controls of the lesson's "When the assumptions break" section, top to bottom; at
their defaults the page is the lesson's, number for number."""

CONTROL_BY_NAME: Mapping[str, Control] = SPEC.by_name

CONTROL_NAMES = SPEC.names
"""The controls' names: the parameters a preset sets."""

D_K_DEFAULT = CONTROL_BY_NAME["d_k"].default
TEMPERATURE_DEFAULT = CONTROL_BY_NAME["temperature"].default
N_DEFAULT = CONTROL_BY_NAME["n"].default

INPUTS: Mapping[str, frozenset[str]] = SPEC.inputs
"""Each model part → the controls it depends on (the recompute graph)."""

FIRST_SCREEN_CONTROLS = SPEC.first_screen
"""The controls a student moves most, beside the plots on every layout."""

SHOWABLE_CONTROLS = SPEC.showable
"""What ``?controls=`` may name: the preset selector and every control with a widget."""

PRESET_LABEL = "preset scene"
NO_PRESET_LABEL = "(none)"
"""The preset selector's first choice: no scene. Short, so it fits the narrowest column of
the controls (170 px) without being cut."""

TITLE = "Scaled Dot-Product Attention: Score Matrix & √d_k Distribution"
"""The page's title, served and offline."""

INTRO = (
    "Each cell is one query·key dot product. With random vectors those products have "
    "variance d_k, so as d_k grows the raw scores spread out and the softmax piles all "
    "weight onto one key. Dividing by √d_k keeps their spread at 1. Raise **d_k**, then "
    "switch **scale by 1/√d_k** off and watch the rows turn one-hot."
)
"""The paragraph above the plots (Markdown: ``**bold**`` only), served and offline."""

ONE_HOT_THRESHOLD = 0.9
"""Mean max weight at or above which the rows are called nearly one-hot."""

UNIFORM_ENTROPY_FRACTION = 0.95
"""Mean row entropy, as a fraction of the uniform rows' entropy, at or above which the
rows are called nearly uniform."""


def page_spec(spec: SimulationSpec = SPEC, *, offline_only: bool = False) -> dict:
    """The controls of ``spec``, the texts and thresholds as JSON-ready data, for the
    offline page's scripts.

    ``offline_only`` keeps only the controls the exported page offers; the recompute graph
    then names only those.
    """
    controls = [c for c in spec.controls if c.offline or not offline_only]
    names = {c.name for c in controls}
    return {
        "controls": [
            {
                "name": c.name,
                "label": c.label,
                "kind": c.kind,
                "default": c.default,
                "widget": c.widget,
                "bounds": list(c.bounds) if c.bounds else None,
                "grid": list(c.grid),
                "choices": dict(c.choices),
                "url_format": c.url_format,
                "first_screen": c.first_screen,
            }
            for c in controls
        ],
        "inputs": {
            part: sorted(inputs & names) for part, inputs in spec.inputs.items() if inputs & names
        },
        "title": TITLE,
        "intro": INTRO,
        "one_hot_threshold": ONE_HOT_THRESHOLD,
        "uniform_entropy_fraction": UNIFORM_ENTROPY_FRACTION,
    }
