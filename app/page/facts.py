"""Facts both pages share: sizes, breakpoints and titles the served page and the offline file
draw alike. CSS and JavaScript receive them as data from here."""

from __future__ import annotations

WIDE_PAGE_PX = 800
"""From this window width the full page opens "More controls" as it renders; narrower
windows, and every embedded page, show the experiment first."""

SCENE_TITLE = "Preset scene"
"""What a preset scene is called: the offline page's scene box begins with it
(app.page.figures.ALERT_TEXTS); the served page's alert takes the preset's label as title."""

NOTICE_TITLE = "Some link values were adjusted"
"""The title of the alert that explains the link values fixed or ignored; the offline
page's notice box begins with it (app.page.figures.ALERT_TEXTS)."""

HEATMAP_ASPECT = 1.75
"""Width / height of the heatmap figure, which scales with its column's width (its title
sits above it, outside the figure: at 400 px wide the heatmap and the raw histogram then
still share a 700 px screen)."""

HISTOGRAM_HEIGHT = 175
"""Height of each histogram figure in px (they stretch to their column's width)."""


MORE_LABEL = "More controls"
"""The words of the button that opens the controls not on the first screen."""

LESSON_HEADING = "The lesson"
"""The heading over the lesson's sections (visually hidden: the sections' own headings,
one level down, say what each is)."""
