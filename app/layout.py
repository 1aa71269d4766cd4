"""Where things sit on a session's page: plots, controls, readouts, notices and the lesson."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import panel as pn
import panel_material_ui as pmui

from app.compat import detach_from_global_busy
from app.controls_spec import INTRO, TITLE
from app.flow import grid, side_by_side, sidebar_layout
from app.presets import PRESETS, Preset
from app.share import build_share_controls
from app.views.lesson_gate import GATE_CSS, LessonGate

if TYPE_CHECKING:  # the session builds its layout: no import cycle at run time
    from app.session import Session

NARROW_HEADER_CSS = """
@media (max-width: 800px) {
  .MuiTypography-root.title { font-size: 17px !important; line-height: 1.25 !important; }
}
"""
"""Below ~800 px the title wraps: a smaller font keeps it within the fixed header's height,
which the page's content is offset by."""

CONTROL_ORDER = (
    "preset",
    "d_k",
    "d_k_exact",
    "temperature",
    "n",
    "scaled",
    "causal",
    "view",
)
"""The controls' widgets, top to bottom (the seed and Resample share the last row)."""


class PageLayout:
    """The page of one session and the parts of it that change: the preset scene's alert,
    the lesson's gate and the column the lesson is added to."""

    def __init__(self, session: Session, widgets: Mapping[str, pn.viewable.Viewable]) -> None:
        self.scene = pmui.Alert(
            title="Preset scene",
            severity="info",
            sizing_mode="stretch_width",
            css_classes=["preset-scene"],
        )
        self.notice = pmui.Alert(
            object=session.state.notice,
            title="Some link values were adjusted",
            severity="warning",
            closeable=True,
            visible=bool(session.state.notice),
            sizing_mode="stretch_width",
            css_classes=["query-notice"],
        )
        self.lesson_gate = LessonGate(
            sizing_mode="stretch_width", margin=(10, 10), stylesheets=[GATE_CSS]
        )
        self.content = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", margin=(0, 10)),
            self.scene,
            _plots(session),
            session.readouts.pane,
            self.lesson_gate,
            sizing_mode="stretch_width",
        )
        self.show_scene(PRESETS.get(session.state.preset))
        self.page = self._page(session, widgets)

    def show_scene(self, preset: Preset | None) -> None:
        """Show the preset scene's label and words, or hide the alert when there is none."""
        self.scene.visible = preset is not None
        if preset is not None:
            self.scene.param.update(title=preset.label, object=preset.description)

    def show_lesson(self, sections: Sequence[pn.viewable.Viewable]) -> None:
        """Put the lesson's sections in place of the gate that asked for them."""
        self.lesson_gate.visible = False
        self.content.extend(sections)

    def _page(
        self, session: Session, widgets: Mapping[str, pn.viewable.Viewable]
    ) -> pn.viewable.Viewable:
        # Flex layouts rather than the template's drawer: the controls sit beside the plots
        # on wide screens and stack above them, in as many columns as fit, when narrow;
        # they are never hidden.
        items = [widgets[name] for name in CONTROL_ORDER]
        items.append(pmui.Row(widgets["seed"], widgets["resample"], sizing_mode="stretch_width"))
        if not session.embed:
            items.append(build_share_controls(session.state.query, session.location))
        controls = pmui.Paper(
            grid(items, min_width=240, gap=4),
            elevation=1,
            sizing_mode="stretch_width",
            margin=(10, 5),
            css_classes=["controls"],
        )
        main_min_width = 760 if session.embed else 640
        body = sidebar_layout(controls, self.content, main_min_width=main_min_width)
        if session.embed:
            return pn.Column(self.notice, body, sizing_mode="stretch_width")
        page = pmui.Page(title=TITLE, main=[self.notice, body], stylesheets=[NARROW_HEADER_CSS])
        detach_from_global_busy(page)
        return page


def _plots(session: Session) -> pn.viewable.Viewable:
    heatmap = pn.pane.Bokeh(session.heatmap.figure, sizing_mode="stretch_width")
    histograms = pn.Column(
        pn.pane.Bokeh(session.histograms.raw.figure, sizing_mode="stretch_width"),
        pn.pane.Bokeh(session.histograms.scaled.figure, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )
    # Side by side when the main column is ~830 px wide, stacked below (course-page
    # iframes, phones).
    return side_by_side([heatmap, histograms], basis=[480, 340], grow=[7, 5])


def page_layout(session: Session, widgets: Mapping[str, pn.viewable.Viewable]) -> PageLayout:
    """The page of ``session`` with its control ``widgets`` (app.controls.build_controls)."""
    return PageLayout(session, widgets)
