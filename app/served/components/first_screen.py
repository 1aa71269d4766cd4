"""The served page's first screen as one component: the frame around its drawn parts.

The landmark and the hidden headings, the controls' card, the column of the plots, the
lesson's gate under them and the theme the document shows are plain elements and CSS drawn
by first_screen.js; the parts the session fills (the drawn controls with their "More
controls", the figures, the alerts, the lesson) are its children. Each
Panel component a page holds costs the server 3–7 ms to build for every arriving student
whatever it holds (docs/performance.md): a dozen layouts, buttons and headings were most of
an embedded first screen's build.

``dark`` and ``lesson_opened`` flow from the page (each a boolean, checked like any value
from a page); everything else flows to it.
"""

from __future__ import annotations

from typing import Any

import param
from panel.custom import Child

from app.compat import CheckedPageChanges
from app.page.bundle import BundledComponent
from app.page.facts import LESSON_HEADING

GATE_LABEL = "Why the scale matters: collapse curves, one query, the worked example and a quiz"
"""The lesson gate's text and accessible name."""

OPENING_TEXT = "Loading the lesson…"
"""What the gate says between the student's request and the lesson's arrival."""

GATE_MARGIN_PX = 300
"""How far below the viewport the gate may still be when the lesson is requested, so it is
usually there by the time the student scrolls to it."""

SIDEBAR_BASIS_PX = 280
"""The controls' card's width beside the plots."""

CARD_GAP_PX = 6
"""The controls' card's margin above and below it (and its distance from the top of the
visible page while it stays in view)."""

MAIN_MIN_WIDTH_PX = {"page": 640, "embed": 760}
"""The narrowest the plots' column gets beside the controls' card, by layout: narrower, and
the card goes above the plots."""

GATE_CSS = """
.sdpa-gate { margin: 10px; }
.sdpa-gate > button {
  box-sizing: border-box;
  width: 100%;
  padding: 12px 16px;
  font: inherit;
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px;
  font-weight: 500;
  text-align: left;
  color: var(--sdpa-accent-text, #1565c0);
  background: var(--sdpa-accent-background, #e3f2fd);
  border: 1px solid var(--sdpa-accent-border, #90caf9);
  border-radius: 6px;
  cursor: pointer;
}
.sdpa-gate > button:hover { background: var(--sdpa-accent-hover, #bbdefb); }
.sdpa-gate > button:focus-visible {
  outline: 3px solid var(--sdpa-accent-text, #1565c0); outline-offset: 2px;
}
.sdpa-gate > button[disabled] { cursor: progress; color: var(--sdpa-muted-text, #37474f); }
"""
"""The lesson gate's look; the dark theme's colours come from app/page/theme.py."""

LAYOUT_CSS = f"""
:host {{ width: 100%; }}
.sdpa-first-screen {{ display: block; width: 100%; }}
[hidden] {{ display: none !important; }}
.sdpa-hidden {{
  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}}
.sdpa-body {{ display: flex; flex-wrap: wrap; width: 100%; }}
.sdpa-sidebar {{
  flex: 1 1 {SIDEBAR_BASIS_PX}px; min-width: 0; margin: {CARD_GAP_PX}px 5px;
  background: var(--mui-palette-background-paper, #fff);
  border-radius: 4px;
  box-shadow: 0 2px 1px -1px rgba(0, 0, 0, 0.2), 0 1px 1px 0 rgba(0, 0, 0, 0.14),
    0 1px 3px 0 rgba(0, 0, 0, 0.12);
  padding: 4px 0;
}}
.sdpa-main {{ flex: 999 1 0; min-width: min(100%, var(--sdpa-main-min, 640px)); }}
.sdpa-beside > .sdpa-sidebar {{
  position: sticky; top: {CARD_GAP_PX}px; align-self: flex-start;
  max-height: var(--sdpa-card-max, none); overflow-y: auto; box-sizing: border-box;
}}
.sdpa-notice:empty, .sdpa-scene:empty, .sdpa-class-box:empty {{ display: none; }}
{GATE_CSS}
"""
"""The controls' card (Material UI's paper at elevation 1) beside the plots' column while
that keeps its narrowest width, else above it. The lesson follows the plots in their column,
so it starts under its button; beside the column the card stays in view as the page scrolls
(``sdpa-beside``, set by first_screen.js), no taller than the visible page, its own part
scrolling when it is longer: below the plots it once left an empty band as tall as the
opened "More controls" (and, with the lesson under both, the lesson started below it)."""


class FirstScreen(CheckedPageChanges, BundledComponent):
    """The first screen around ``classroom``, ``controls``, ``scene``, ``figures``, ``notice``
    and ``lesson``, which the session builds (``scene`` and ``lesson`` when first needed: each
    is then drawn in its place, and nothing else is redrawn).
    """

    page_properties = ("dark", "lesson_opened")

    controls = Child(
        doc="The drawn controls and More controls (app/served/components/controls.py)."
    )
    scene = Child(doc="The box above the plots that takes the preset scene's alert.")
    classroom = Child(
        doc="The class bar above the page, in class mode (app/served/components/class_bar.py)."
    )
    figures = Child(doc="The drawn figures and readouts (app/served/components/figures.py).")
    notice = Child(doc="The alert on the link's adjusted values, when there are any.")
    lesson = Child(doc="The box under the first screen that takes the lesson's sections.")
    embed = param.Boolean(
        default=False, doc="Whether this is the embedded page, with a main landmark of its own."
    )
    texts = param.Dict(default={}, doc="The title, the gate's words and the lesson's heading.")
    sizes = param.Dict(
        default={},
        doc="How far below the viewport the gate opens the lesson; the card's margin.",
    )
    dark = param.Boolean(
        default=False,
        doc="Whether the page shows the dark theme: the page sends the system's preference "
        "when it opens and whenever it changes; the session sends the theme to show.",
    )
    lesson_opened = param.Boolean(
        default=False, doc="Whether the student has asked for the lesson (pressed, scrolled near)."
    )
    gate_shown = param.Boolean(default=True, doc="Whether the lesson's gate is on the page.")

    # The page puts each child in its box as it arrives (first_screen.js): a lesson added
    # does not tear down and rebuild the figures above it (Panel's JSComponent render
    # policy, holoviz/panel#8285).
    _render_policy = "manual"
    bundled_css = (LAYOUT_CSS,)

    def __init__(self, *, title: str, **params: Any) -> None:
        embed = bool(params.get("embed"))
        params.setdefault(
            "styles",
            {"--sdpa-main-min": f"{MAIN_MIN_WIDTH_PX['embed' if embed else 'page']}px"},
        )
        super().__init__(
            texts={
                "title": title,
                "gate": GATE_LABEL,
                "gate_opening": OPENING_TEXT,
                "lesson": LESSON_HEADING,
            },
            sizes={"gate_margin": GATE_MARGIN_PX, "card_gap": CARD_GAP_PX},
            **params,
        )

    def accepts_from_page(self, name: str, value: object) -> bool:
        """A page's value of either is a boolean."""
        return isinstance(value, bool)
