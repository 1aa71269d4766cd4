"""Assembles one session's page: state, model, views, controls, URL sync and the template."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import panel as pn
import panel_material_ui as pmui

from app.controls import build_controls
from app.model import CONTROLS, SimulationModel
from app.state import SimulationState
from app.views.heatmap import HeatmapView
from app.views.histogram import DotProductHistograms
from app.views.readouts import ReadoutsView

TITLE = "Scaled Dot-Product Attention: Score Matrix & √d_k Distribution"

INTRO = (
    "Each cell is one query·key dot product. With random vectors those products have "
    "variance d_k, so as d_k grows the raw scores spread out and the softmax piles all "
    "weight onto one key. Dividing by √d_k keeps their spread at 1. Raise **d_k**, then "
    "switch **scale by 1/√d_k** off and watch the rows turn one-hot."
)

QueryArgs = Mapping[str, Sequence[bytes | str] | bytes | str]


class SimulationApp:
    """One session: the state, its model, the views that draw it and the page around them.

    A control change flows one way: state → :meth:`SimulationModel.refresh` → each view's
    ``update``, all inside one ``pn.io.hold()`` so the browser gets one message.
    """

    def __init__(self, query: QueryArgs | None = None) -> None:
        self.state = SimulationState()
        if query:
            self.state.apply_query(query)
        self.model = SimulationModel(self.state)
        self.heatmap = HeatmapView(self.model)
        self.histograms = DotProductHistograms(self.model)
        self.readouts = ReadoutsView(self.model)
        self.views = (self.heatmap, self.histograms, self.readouts)
        self.state.param.watch(self._on_controls, sorted(CONTROLS))
        self.notice = pmui.Alert(
            object=self.state.notice,
            title="Some link values were adjusted",
            severity="warning",
            closeable=True,
            visible=bool(self.state.notice),
            sizing_mode="stretch_width",
            css_classes=["query-notice"],
        )
        self.page = self._page()
        if pn.state.curdoc is not None and pn.state.location is not None:
            pn.state.onload(self._write_url)

    def _on_controls(self, *events: object) -> None:
        with pn.io.hold():
            parts = self.model.refresh({event.name for event in events})
            for view in self.views:
                view.update(self.model, parts)
        self._write_url()

    def _write_url(self) -> None:
        if pn.state.location is not None:
            pn.state.location.update_query(**self.state.query())

    def _page(self) -> pmui.Page:
        heatmap = pn.pane.Bokeh(self.heatmap.figure, sizing_mode="stretch_width")
        histograms = pn.Column(
            pn.pane.Bokeh(self.histograms.raw.figure, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.histograms.scaled.figure, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )
        # Side by side from 1200 px of viewport, stacked below (course-page iframes).
        plots = pmui.Grid(
            pmui.Grid(heatmap, size={"xs": 12, "lg": 7}),
            pmui.Grid(histograms, size={"xs": 12, "lg": 5}),
            container=True,
            spacing=1,
            sizing_mode="stretch_width",
        )
        content = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", margin=(0, 10)),
            plots,
            self.readouts.pane,
            sizing_mode="stretch_width",
        )
        controls = pmui.Paper(
            pn.Column(*build_controls(self.state), sizing_mode="stretch_width"),
            elevation=1,
            sizing_mode="stretch_width",
            margin=(10, 5),
            css_classes=["controls"],
        )
        # A grid rather than the template's drawer: beside the plots on wide screens,
        # stacked above them at 400 px (an iframe in a course page), never hidden.
        body = pmui.Grid(
            pmui.Grid(controls, size={"xs": 12, "md": 4, "lg": 3}),
            pmui.Grid(content, size={"xs": 12, "md": 8, "lg": 9}),
            container=True,
            spacing=1,
            sizing_mode="stretch_width",
        )
        return pmui.Page(title=TITLE, main=[self.notice, body])


def build_app(query: QueryArgs | None = None) -> pmui.Page:
    """Build one session's page; ``query`` holds the untrusted URL arguments, if any."""
    return SimulationApp(query).page
