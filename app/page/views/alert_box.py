"""A Material-looking alert box: an icon, a bold title and plain text, optionally closeable.

The page's preset scene and link notice. Their words are plain text, never markup (a
notice quotes, filtered, what a link asked for): the page writes them as text nodes. Two
Bokeh models per box, instead of Panel Material UI's React alert.
"""

from __future__ import annotations

from typing import ClassVar

import param
from panel.custom import JSComponent

from app.compat import CheckedPageChanges

DARK_COLOURS = {
    "info": ("rgb(7, 19, 24)", "rgb(184, 231, 251)", "#29b6f6"),
    "warning": ("rgb(25, 18, 7)", "rgb(255, 226, 183)", "#ffa726"),
}
"""Background, text and icon colour of each severity in the dark theme (Material UI's)."""

SEVERITY_COLOURS = {
    "info": (
        "#e5f6fd",
        "#014361",
        "#0288d1",
        "M11 7h2v2h-2zm0 4h2v6h-2zm1-9C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 "
        "12 2m0 18c-4.41 0-8-3.59-8-8s3.59-8 8-8 8 3.59 8 8-3.59 8-8 8",
    ),
    "warning": (
        "#fff4e5",
        "#663c00",
        "#ed6c02",
        "M12 5.99 19.53 19H4.47zM12 2 1 21h22zm1 14h-2v2h2zm0-6h-2v4h2z",
    ),
}
"""Background, text and icon colour and the icon's SVG path of each severity: Material
UI's standard alert and its outlined info and warning icons."""

CSS = """
:host { width: 100%; } /* no display: Panel hides an invisible box through it */
.sdpa-alert {
  display: flex; gap: 12px; align-items: flex-start; padding: 6px 16px; border-radius: 4px;
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif; font-size: 14px; line-height: 1.43;
  background: var(--alert-background); color: var(--alert-text);
}
.sdpa-alert .icon {
  color: var(--alert-icon); width: 22px; height: 22px; margin: 7px 0; flex: none;
}
.sdpa-alert .message { flex: 1; padding: 8px 0; min-width: 0; overflow-wrap: anywhere; }
.sdpa-alert .title { display: block; font-weight: 500; font-size: 16px; margin-bottom: 2px; }
.sdpa-alert button {
  border: 0; background: none; color: inherit; font-size: 20px; cursor: pointer;
  padding: 4px 6px; border-radius: 50%; margin-top: 2px;
}
.sdpa-alert button:focus-visible { outline: 2px solid var(--alert-icon); }
"""


class AlertBox(CheckedPageChanges, JSComponent):
    """An alert of ``severity`` with ``title`` and the plain text ``object``; a closeable one
    has a close button, whose press hides it (the page tells the session, which keeps it
    hidden)."""

    page_properties = ()

    title = param.String(default="", doc="The bold first line.")
    object = param.String(default="", doc="The text under the title (plain text).")
    severity = param.Selector(
        default="info", objects=list(SEVERITY_COLOURS), doc="The alert's colours and icon."
    )
    closeable = param.Boolean(default=False, doc="Whether the alert has a close button.")
    colours = param.Dict(default={}, doc="Each severity's colours and icon (the page's data).")
    dark = param.Boolean(default=False, doc="Whether the alert takes the dark theme's colours.")

    _esm = """
export function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "sdpa-alert";
  box.setAttribute("role", "alert");
  const icon = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  icon.setAttribute("class", "icon");
  icon.setAttribute("viewBox", "0 0 24 24");
  icon.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("fill", "currentColor");
  icon.append(path);
  const message = document.createElement("div");
  message.className = "message";
  const title = document.createElement("span");
  title.className = "title";
  const text = document.createElement("span");
  message.append(title, text);
  box.append(icon, message);
  const close = document.createElement("button");
  close.type = "button";
  close.setAttribute("aria-label", "Close");
  close.textContent = "×";
  close.addEventListener("click", () => model.send_msg({ closed: true }));
  const show = () => {
    const theme = model.dark ? "dark" : "light";
    const [background, colour, iconColour, glyph] = model.colours[model.severity][theme];
    box.style.setProperty("--alert-background", background);
    box.style.setProperty("--alert-text", colour);
    box.style.setProperty("--alert-icon", iconColour);
    path.setAttribute("d", glyph);
    title.textContent = model.title;
    title.hidden = !model.title;
    text.textContent = model.object;
    if (model.closeable) box.append(close); else close.remove();
  };
  show();
  for (const name of ["title", "object", "severity", "closeable", "dark"]) model.on(name, show);
  el.append(box);
}
"""
    _stylesheets: ClassVar[list[str]] = [CSS]

    def __init__(self, **params: object) -> None:
        colours = {
            severity: {"light": list(light), "dark": [*DARK_COLOURS[severity], light[3]]}
            for severity, light in SEVERITY_COLOURS.items()
        }
        super().__init__(colours=colours, **params)

    def _handle_msg(self, msg: object) -> None:
        # Panel hands a page's message here.
        self.take_message(msg)

    def take_message(self, msg: object) -> None:
        """Handle a message from the page: ``{"closed": true}`` (its close button) hides a
        closeable box; anything else is ignored."""
        if self.closeable and isinstance(msg, dict) and msg.get("closed") is True:
            self.visible = False
