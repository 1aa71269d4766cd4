"""Where things sit on a session's page: plots, controls, readouts, notices and the lesson."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import panel as pn
import panel_material_ui as pmui
import param
from panel_material_ui.template.base import Meta

from app.compat import detach_from_global_busy
from app.page.controls import whole_rows_first, widget_names
from app.page.facts import MORE_LABEL, NOTICE_TITLE, WIDE_PAGE_PX, with_breakpoints
from app.page.head import HEAD
from app.page.theme import THEME_CSS
from app.page.views.alert_box import AlertBox
from app.page.views.aria import PAGE_HEADINGS_THEME
from app.served.components.controls import DrawnControls
from app.served.components.first_screen import FirstScreen
from app.served.share import SHARE_TEXTS
from app.served.ticks import once_page_loaded
from app.simulation.presets import PRESETS, Preset
from app.simulation.state import SimulationState

HEADER_CSS = with_breakpoints("""
@media (max-width: $wide_page_px) {
  .MuiTypography-root.title { font-size: 17px !important; line-height: 1.25 !important; }
}
.header .MuiLinearProgress-root { display: none; }
""")
"""Below the wide page's breakpoint the title wraps: a smaller font keeps it within the
fixed header's height, which the page's content is offset by. The header's busy bar never
moves (the page is unbound from Panel's busy state: app.compat.detach_from_global_busy), so
it is not shown, nor left as an unnamed progress bar for assistive technology."""

MORE_TEXTS = {"more": MORE_LABEL, **SHARE_TEXTS}
"""The words of the "More controls" button and of the share part under it."""


def head_meta() -> Meta:
    """The head's title, description and viewport (app/page/head.py) as panel-material-ui's
    page template reads them: a Page's own, or a component's document's template variable."""
    return Meta(title=HEAD.title, description=HEAD.description, viewport=HEAD.viewport)


class PageLayout:
    """The page of one session and the parts of it that change: the preset scene's alert,
    the "More controls" section, the lesson's gate and the box the lesson is added to.

    The first screen is the experiment: the controls a student moves most (or exactly those
    ``?controls=`` names) beside or above the heatmap and the raw histogram; the other
    controls wait under "More controls", which the page opens and closes by itself. One
    component draws the controls (app/served/components/controls.py), another the frame around
    them (app/served/components/first_screen.py).
    """

    def __init__(
        self,
        state: SimulationState,
        figures: pn.viewable.Viewable,
        *,
        shown_controls: Sequence[str] | None = None,
        embed: bool = False,
        notice: str = "",
        share: Callable[[str], str],
        channel_key: str = "",
    ) -> None:
        shown = shown_controls
        spec = state.spec
        first_names = list(spec.first_screen if shown is None else shown)
        if "seed" in first_names:
            first_names.insert(first_names.index("seed") + 1, "resample")
        # A control a lesson section offers is left to that section; a link's own choice
        # of controls shows those alone, without "More controls".
        more_names = (
            whole_rows_first(
                (
                    name
                    for name in widget_names(spec)
                    if name not in first_names
                    and not getattr(spec.by_name.get(name), "lesson_section", "")
                ),
                spec,
            )
            if shown is None
            else []
        )
        self.drawn_controls = DrawnControls(
            state,
            first_names,
            more=more_names,
            share=share,
            texts=MORE_TEXTS,
            open_more_from=0 if embed else WIDE_PAGE_PX,
            margin=0,
            channel_key=channel_key,
        )
        """Every control of the page, drawn in the browser: the first screen's, then those
        under "More controls" (opened and closed by the page alone) and the share part."""
        self.scene: AlertBox | None = None
        """The preset scene's alert, built when a preset first needs it."""
        # A link's notice is known now and never comes later: a page whose link was fine
        # holds no alert for it.
        self.notice = (
            AlertBox(
                object=notice,
                title=NOTICE_TITLE,
                severity="warning",
                closeable=True,
                sizing_mode="stretch_width",
                css_classes=["query-notice"],
            )
            if notice
            else None
        )
        """The alert that explains the link values fixed or ignored, when there are any."""
        self.figures = figures
        """The heatmap, histograms and readouts: they follow the page's theme."""
        self.lesson: pn.viewable.Viewable | None = None
        """The lesson, once asked for: below the plots, in their column (beside the
        controls' card on a wide page)."""
        self.first_screen = FirstScreen(
            title=HEAD.title,
            embed=embed,
            controls=self.drawn_controls,
            figures=figures,
            notice=self.notice,
            sizing_mode="stretch_width",
            margin=0,
        )
        """The frame of the first screen: the theme, the card, the buttons, the gate."""
        self.show_scene(PRESETS.get(state.preset))
        if pn.state.curdoc is not None and THEME_CSS not in pn.config.global_css:
            # This session's page only (Panel keeps raw_css per session).
            pn.config.global_css.append(THEME_CSS)
        self.page: pn.viewable.Viewable
        if embed:
            self.page = self.first_screen
            self.first_screen.param.watch(self._theme_changed, "dark")
            if pn.state.curdoc is not None:
                # The template Panel serves a component with reads the head's words from
                # here (a Page has its own): the offline file's (app/page/head.py).
                pn.state.curdoc.template_variables["meta"] = head_meta()
        else:
            self.page = pmui.Page(
                title=HEAD.title,
                meta=head_meta(),
                main=[self.first_screen],
                stylesheets=[HEADER_CSS],
                theme_config=PAGE_HEADINGS_THEME,
            )
            detach_from_global_busy(self.page)
            # The system's scheme sets the page's theme, the toggle sets it too, and the
            # embedded figures and the alerts follow the page's.
            self.first_screen.param.watch(self._take_system_theme, "dark")
            self.page.param.watch(self._theme_changed, "dark_theme")
        self._follow_theme()

    @property
    def dark(self) -> bool:
        """Whether the page shows the dark theme (light while the page is being built: a
        link's preset scene comes before it)."""
        page = getattr(self, "page", None)
        if isinstance(page, pmui.Page):
            return bool(page.dark_theme)
        return page is not None and self.first_screen.dark

    def _take_system_theme(self, event: param.parameterized.Event) -> None:
        if isinstance(self.page, pmui.Page):
            self.page.dark_theme = bool(event.new)

    def _theme_changed(self, event: object) -> None:
        # The system's scheme arrives as the page loads: changes made before it has loaded
        # would not reach it (app.served.ticks.once_page_loaded).
        once_page_loaded(self._follow_theme)

    def _follow_theme(self) -> None:
        dark = self.dark
        self.first_screen.dark = dark
        for themed in (self.figures, self.lesson, self.scene, self.notice):
            if themed is not None:
                themed.dark = dark
        if not isinstance(self.page, pmui.Page):
            # Widgets built from now on (More controls, the lesson) start in this theme;
            # the Page does the same for its own.
            pn.config.theme = "dark" if dark else "default"

    def show_scene(self, preset: Preset | None) -> None:
        """Show the preset scene's label and words, or hide the alert when there is none."""
        if preset is None:
            if self.scene is not None:
                self.scene.visible = False
            return
        if self.scene is None:
            self.scene = AlertBox(
                title=preset.label,
                object=preset.description,
                severity="info",
                dark=self.dark,
                sizing_mode="stretch_width",
                css_classes=["preset-scene"],
            )
            self.first_screen.scene = self.scene
            return
        self.scene.param.update(title=preset.label, object=preset.description, visible=True)

    def show_lesson(self, lesson: pn.viewable.Viewable) -> None:
        """Put the lesson (its one component) in place of the gate that asked for it."""
        self.first_screen.gate_shown = False
        self.lesson = lesson
        self.first_screen.lesson = lesson
