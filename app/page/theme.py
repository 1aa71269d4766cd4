"""Dark mode that follows the system (``prefers-color-scheme``), and the colours both pages
take in it.

:class:`app.served.components.first_screen.FirstScreen` reports the browser's preference as
``dark`` when the page opens and whenever the system changes it; the served page sets its
Material UI Page's ``dark_theme`` from it (the header's toggle still switches, and ``dark``
follows the toggle back). It also puts the theme shown on the document
(``<html data-theme>``): panel-material-ui's widgets outside a Page (the embedded page)
follow that attribute, and :data:`THEME_CSS` colours the page's own parts from it. The
offline file has no toggle: :data:`THEME_CSS` colours it from the media query alone.
"""

from __future__ import annotations

DARK_PAGE = {
    "background": "#121212",
    "text": "#ffffff",
    "muted-text": "#b0b8c1",
    "paper": "#1e1e1e",
    "border": "#4a5058",
    "accent-text": "#90caf9",
    "accent-background": "#172636",
    "accent-border": "#42a5f5",
    "accent-hover": "#1f3a55",
    "code-text": "#f48fb1",
    "info-background": "#071a24",
    "info-text": "#b8e7fb",
    "info-border": "#0288d1",
    "success-background": "#0c130d",
    "success-text": "#cce8cd",
    "success-border": "#388e3c",
    "error-background": "#160b0b",
    "error-text": "#f4c7c7",
    "error-border": "#d32f2f",
}
"""The dark theme's colours of the parts the pages style themselves (CSS custom properties
``--sdpa-<name>``; each use has the light colour as its fallback). Material UI's dark
palette: background #121212, paper a step lighter, primary blue 200 for accents; its dark
alerts' colours for the quiz's feedback (info, success, error)."""


PANEL_DARK = {
    "--panel-background-color": DARK_PAGE["background"],
    "--panel-on-background-color": DARK_PAGE["text"],
    "--panel-surface-color": DARK_PAGE["paper"],
    "--panel-on-surface-color": DARK_PAGE["text"],
    "--mui-palette-background-paper": DARK_PAGE["paper"],
    "--mui-palette-text-primary": DARK_PAGE["text"],
    "--mui-palette-primary-main": "#90caf9",
    "--mui-palette-primary-light": "#e3f2fd",
    # Bokeh's toolbar icons: its light grey (#747679) nearly vanishes on #121212.
    "--bokeh-icon-color": "#c4c7ca",
}
"""Panel's design variables, Material UI's palette variables (its dark palette) and Bokeh's
icon colour in the dark theme: Panel's panes, the drawn controls and the figures' toolbars
take their colours from them. A
Material UI Page sets them itself; the embedded page has no Page."""


def _declarations(indent: str) -> str:
    ours = [f"--sdpa-{name}: {colour}" for name, colour in DARK_PAGE.items()]
    panel = [f"{name}: {colour}" for name, colour in PANEL_DARK.items()]
    return "\n".join(f"{indent}{line};" for line in [*ours, *panel])


THEME_CSS = f"""
html[data-theme="dark"] {{
  color-scheme: dark;
{_declarations("  ")}
}}
html[data-theme="dark"] body {{ background: var(--sdpa-background); color: var(--sdpa-text); }}
@media (prefers-color-scheme: dark) {{
  html:not([data-theme="light"]) {{
    color-scheme: dark;
{_declarations("    ")}
  }}
  html:not([data-theme="light"]) body {{
    background: var(--sdpa-background);
    color: var(--sdpa-text);
  }}
}}
"""
"""The dark colours on the document: when the page shows the dark theme (``data-theme``)
and, until a script says which theme is shown (and in the offline file), when the system
prefers dark. Custom properties inherit into every component's shadow root."""
