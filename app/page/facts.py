"""Facts both pages share: sizes, breakpoints and titles the served page and the offline file
draw alike. CSS and JavaScript receive them as data from here."""

from __future__ import annotations

from string import Template

WIDE_PAGE_PX = 800
"""From this window width the full page opens "More controls" as it renders; narrower
windows, and every embedded page, show the experiment first."""

SIDEBAR_PX = 1000
"""Window width from which the offline page's controls sit beside the plots, in a sidebar;
below it they sit above the plots. The file opens "More controls" at once only from there
(and from :data:`WIDE_PAGE_PX`): below it the opened section would push the heatmap below
the first screen of a file opened from disk."""

PLOTS_SIDE_BY_SIDE_PX = 740
"""Window width from which the heatmap sits beside the histograms while the controls are
above the plots: their column is then about 700 px wide."""

PLOTS_BESIDE_SIDEBAR_PX = 1040
"""Window width from which the heatmap sits beside the histograms again once the controls
are in the sidebar (the sidebar takes up to ~300 px of the width)."""

NARROW_PAGE_PX = 720
"""Window width up to which the offline page tightens its padding and title."""

BREAKPOINTS = {
    "wide_page_px": WIDE_PAGE_PX,
    "sidebar_px": SIDEBAR_PX,
    "plots_side_by_side_px": PLOTS_SIDE_BY_SIDE_PX,
    "plots_beside_sidebar_px": PLOTS_BESIDE_SIDEBAR_PX,
    "narrow_page_px": NARROW_PAGE_PX,
}
"""The breakpoints a stylesheet may name, as ``$name`` (:func:`with_breakpoints`)."""


def with_breakpoints(css: str) -> str:
    """``css`` with each ``$name`` of :data:`BREAKPOINTS` written as its width (``1000px``)
    and ``$name_below`` as the last width under it (``999.98px``, for a ``max-width`` that
    meets a ``min-width`` exactly): a media query cannot read a CSS variable, so the
    stylesheets receive the widths from here. An unknown ``$name`` raises ``KeyError``."""
    widths = {name: f"{px}px" for name, px in BREAKPOINTS.items()}
    widths |= {f"{name}_below": f"{px - 0.02:g}px" for name, px in BREAKPOINTS.items()}
    return Template(css).substitute(widths)


SCENE_TITLE = "Preset scene"
"""What a preset scene is called: the offline page's scene box begins with it
(app.page.figures.ALERT_TEXTS); the served page's alert takes the preset's label as title."""

NOTICE_TITLE = "Some link values were adjusted"
"""The title of the alert that explains the link values fixed or ignored; the offline
page's notice box begins with it (app.page.figures.ALERT_TEXTS)."""

HEATMAP_FIRST_SIDE = 300
"""The heatmap's plotting frame's side in px until the page has sized it to its room
(app/page/web/shared/heatmap_frame.js): the frame is square, its cells too."""

HEATMAP_MIN_SIDE = 160
"""The smallest side the page gives the heatmap's frame for want of height (a short
window): narrower columns still get a frame as wide as they are."""

HEATMAP_BORDER_TOP = 10
"""Room in px above the heatmap's frame: half of the top row's tick label sits in it."""

HEATMAP_SCREEN_FRACTION = 0.45
"""How far down its screen the heatmap is taken to start at most when the page sizes its
frame to the screen's height: a page far down a longer document (a notebook) still gets a
heatmap of half its screen."""

HISTOGRAM_HEIGHT = 175
"""Height of each histogram figure in px (they stretch to their column's width)."""


MORE_LABEL = "More controls"
"""The words of the button that opens the controls not on the first screen."""

LESSON_HEADING = "The lesson"
"""The heading over the lesson's sections (visually hidden: the sections' own headings,
one level down, say what each is)."""
