"""The first screen's figures on the served page, drawn in the browser from the session's
numbers.

The heatmap, the two histograms and the readouts are the offline page's (app/page/figures.py
builds them, app/page/web/shared/first_screen_figures.js draws them): their Bokeh documents are
built and serialised once per process, and each page embeds its own copy of them. A session then
holds two Bokeh models for them instead of ~120, builds nothing per student, and after a move
sends only the frame of numbers that changed (:func:`app.page.frames.numbers_frame`), its images
as binary float32 buffers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import param
from bokeh.embed import json_item
from bokeh.models import CustomJS, Model

from app.compat import CheckedPageChanges, without_model_definitions
from app.page.bundle import BundledComponent
from app.page.figures import (
    DARK_FIGURE_THEME,
    FIGURE_PARTS,
    build_views,
    figures_config,
)
from app.page.views.readouts import READOUT_CSS
from app.served.components.framed import (
    ComposedFrame,
    FramedComponent,
    channel_address_parameter,
    finite_number,
)
from app.served.page_data import SharedData, canonical_ids, register
from app.simulation.model import SimulationModel
from app.simulation.spec import ROW
from app.simulation.state import SimulationState

DRAWN_PARTS = frozenset({*FIGURE_PARTS.values(), ROW})
"""The model parts the component draws: the first screen's, and the row the heatmap's
outline marks."""

ALERTS = ("notice", "scene")
"""The offline page's own text boxes among its views' models: the served page has alerts."""

TAP_HOOK = "SdpaServedTap"
"""The page-wide function the heatmap's tap callback calls with the figure and the y
clicked: each page's component registers its own heatmap with it."""

PLOTS_BASIS = (430, 300)
"""The heatmap's and the histograms' narrowest widths side by side, in px: below their sum
the histograms go under the heatmap."""

PLOTS_GROW = (7, 5)
"""How the heatmap and the histograms share the room left over beside each other."""

LAYOUT_CSS = f"""
:host {{ width: 100%; }}
.sdpa-plots {{ display: flex; flex-wrap: wrap; gap: 8px; width: 100%; }}
.sdpa-plots > div {{ min-width: 0; }}
.sdpa-heatmap {{ flex: {PLOTS_GROW[0]} 1 {PLOTS_BASIS[0]}px; }}
.sdpa-histograms {{ flex: {PLOTS_GROW[1]} 1 {PLOTS_BASIS[1]}px; }}
.sdpa-readouts {{ margin: 5px 10px; }}
.sdpa-intro {{
  margin: 0 10px 8px;
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px;
  line-height: 1.5;
  color: var(--mui-palette-text-primary, rgba(0, 0, 0, 0.87));
}}
"""
"""The heatmap beside the histograms when the column is wide enough, stacked below that (the
proportions app.page.views.responsive gives the page's plots); the intro paragraph below them, in
the page's text colour."""


CHANNEL_TARGET = "figures"
"""The name the session's channel sends this component's frames to, and takes its picks
from."""


def embeddable_item(root: Model) -> dict:
    """``root``'s document as a Bokeh JSON item for a served page to embed: without the
    data models' definitions, which the page has before it embeds it (Panel's own among
    them, ~160 kB in each item)."""
    item = json_item(root)
    item["doc"] = without_model_definitions({"doc": item["doc"]})["doc"]
    return item


@functools.cache
def figure_items() -> dict[str, Any]:
    """The first screen's figures as Bokeh JSON items (``items``: ``heatmap``,
    ``histograms``) with the ids of the models figures.js draws (``models``, by its names),
    built and serialised once per process from the default state; the page's first frame
    then draws the student's own numbers into them."""
    views = build_views(SimulationModel(SimulationState()))
    heatmap = views.models["heatmap"]
    # The offline page's scene and notice boxes stay out: the served page has its own.
    drawn = {name: model for name, model in views.models.items() if name not in ALERTS}
    roots = (views.roots["heatmap_panel"], views.roots["histograms"])
    within = set().union(*(root.references() for root in roots))
    # The callback keeps in the heatmap's document what figures.js draws outside both
    # figures: the overflow legend, while it is out of the heatmap.
    outside = [one for one in drawn.values() if isinstance(one, Model) and one not in within]
    tap = CustomJS(args={"figure": heatmap}, code=f"globalThis.{TAP_HOOK}?.(figure, cb_obj.y);")
    tap.tags = outside
    heatmap.js_on_event("tap", tap)
    items = {
        "heatmap": embeddable_item(roots[0]),
        "histograms": embeddable_item(roots[1]),
    }
    # figures.js takes the models by the names views.py gives them: the page finds each
    # by its id in the documents it embedded.
    ids = {
        name: [one.id for one in model] if isinstance(model, list) else model.id
        for name, model in drawn.items()
    }
    return {"items": items, "models": ids}


def figures_payload() -> dict[str, Any]:
    """What every page's figures are drawn from (:class:`app.served.page_data.SharedData`):
    the items (:func:`figure_items`) and the drawing config, their model ids the same in
    every process."""
    return canonical_ids({**figure_items(), "config": _config()}, "sdpa-figures-")


FIGURES_DATA_KEY = "figures"
"""The first screen's figures' page data, the same for every page."""

register(FIGURES_DATA_KEY, figures_payload)


@functools.cache
def _config() -> dict:
    return {
        **figures_config(),
        "row_part": ROW,
        "tap_hook": TAP_HOOK,
        "channel_target": CHANNEL_TARGET,
        "dark_theme": DARK_FIGURE_THEME,
    }


class DrawnFigures(CheckedPageChanges, SharedData, FramedComponent, BundledComponent):
    """The heatmap, the histograms and the readouts of one page, drawn in the browser
    (app/page/web/served/figures_component.js) from the frames the session sets.

    Nothing flows from the page through its properties; a click on the heatmap comes as a
    message and reaches ``on_pick_row`` with the row under it, once checked.
    """

    page_properties = ()

    frame = param.Dict(
        default={},
        doc="The newest numbers to draw: a frame of app.page.frames.numbers_frame (the page "
        "receives it packed: app.page.frames.packed_frame).",
    )
    dark = param.Boolean(default=False, doc="Whether the figures take the dark theme.")
    channel_key = param.String(
        default="",
        doc="The key of the session's own websocket (app/served/channel.py), which frames then "
        "come on; empty: frames come on the frame property only.",
    )
    channel_address = channel_address_parameter()

    channel_target = CHANNEL_TARGET
    bundled_css = (LAYOUT_CSS, READOUT_CSS)

    def __init__(self, model: SimulationModel, **params: Any) -> None:
        self.on_pick_row: Callable[[int], None] | None = None
        """Called with the query row a click on the heatmap picked."""
        super().__init__(frame=self.next_frame(model, DRAWN_PARTS), **params)
        self.share(FIGURES_DATA_KEY, figures_payload)

    def update(self, model: SimulationModel, parts: set[str]) -> None:
        """Send the numbers of the drawn parts among ``parts`` (what the model recomputed)."""
        drawn = parts & DRAWN_PARTS
        if drawn:
            self.send_frame(model, drawn)

    def compose_update(
        self, model: SimulationModel, parts: set[str], handled: int
    ) -> ComposedFrame | None:
        """What :meth:`update` sends, composed (:meth:`compose_frame`) to be sent later with
        :meth:`send_composed`; None when none of ``parts`` is drawn."""
        drawn = parts & DRAWN_PARTS
        return self.compose_frame(model, drawn, handled) if drawn else None

    def take_message(self, msg: Any) -> None:
        """Handle a message from the page (over Bokeh's websocket or the session's own):
        ``{"row": y}``, a click on the heatmap at height ``y``; ``{"page_data": "inline"}``
        (:meth:`SharedData.take_shared_request`)."""
        if self.take_shared_request(msg):
            return
        # The page's message is untrusted: an int of any size is a row (past the matrix,
        # picking nothing), a float only when finite.
        y = finite_number(msg.get("row") if isinstance(msg, dict) else None)
        if y is not None and self.on_pick_row is not None:
            self.on_pick_row(math.floor(y))
