"""The notice a page shows when its connection to the server is lost.

A served page is only alive while its websocket is open: once the server stops, restarts or
its host goes away, the sliders still move but nothing answers. Without a notice that looks
like a frozen page. The notice is a card over a dimmed page with a **Reload** button; the
page's address holds the scene (the app keeps the URL in step with the controls), so a reload
brings the student back to where they were, on whichever server process answers.

It is built entirely in the browser, from a callback BokehJS runs when the websocket closes:
the server that would have to send anything is gone by then. It depends on no layout, so the
full page and the embed mode (``?embed=true``, in an iframe) show the same notice, each within
its own viewport.

Panel's own ``disconnect_notification`` (with ``notifications=True``) is not used: it shows a
small toast in a corner that the student can close, with no way to reload other than
knowing to.
"""

from __future__ import annotations

import json

from bokeh.document import Document
from bokeh.models import CustomJS

NOTICE_ID = "sdpa-connection-lost"
"""The id of the notice's outermost element (a backdrop over the whole viewport)."""

NOTICE_TITLE = "Connection to the server lost"
NOTICE_TEXT = (
    "The simulation can no longer update: the server stopped or restarted. Reload to "
    "continue with the same settings."
)
RELOAD_LABEL = "Reload"
"""The button's text and accessible name."""

NOTICE_CSS = f"""
#{NOTICE_ID} {{
  position: fixed; inset: 0; z-index: 2147483647;
  display: flex; align-items: center; justify-content: center; padding: 16px;
  background: rgba(15, 23, 42, 0.55);
  font-family: Roboto, "Helvetica Neue", Arial, sans-serif;
}}
#{NOTICE_ID} .card {{
  box-sizing: border-box; max-width: 460px; width: 100%; padding: 20px 24px;
  background: #ffffff; color: #1f2933;
  border-left: 6px solid #c62828; border-radius: 8px;
  box-shadow: 0 10px 30px rgba(0, 0, 0, 0.35);
}}
#{NOTICE_ID} h2 {{
  margin: 0 0 8px; font-size: 20px; font-weight: 700; line-height: 1.3; color: #b71c1c;
}}
#{NOTICE_ID} p {{ margin: 0 0 16px; font-size: 16px; line-height: 1.45; }}
#{NOTICE_ID} button {{
  padding: 10px 22px; font: inherit; font-size: 16px; font-weight: 600;
  color: #ffffff; background: #1565c0; border: none; border-radius: 6px; cursor: pointer;
}}
#{NOTICE_ID} button:hover {{ background: #0d47a1; }}
#{NOTICE_ID} button:focus-visible {{ outline: 3px solid #ff8f00; outline-offset: 2px; }}
"""

NOTICE_JS = f"""
if (document.getElementById({json.dumps(NOTICE_ID)}) != null) return;
const style = document.createElement("style");
style.textContent = {json.dumps(NOTICE_CSS)};
const backdrop = document.createElement("div");
backdrop.id = {json.dumps(NOTICE_ID)};
const card = document.createElement("div");
card.className = "card";
card.setAttribute("role", "alertdialog");
card.setAttribute("aria-modal", "true");
card.setAttribute("aria-labelledby", {json.dumps(NOTICE_ID + "-title")});
card.setAttribute("aria-describedby", {json.dumps(NOTICE_ID + "-text")});
const title = document.createElement("h2");
title.id = {json.dumps(NOTICE_ID + "-title")};
title.textContent = {json.dumps(NOTICE_TITLE)};
const text = document.createElement("p");
text.id = {json.dumps(NOTICE_ID + "-text")};
text.textContent = {json.dumps(NOTICE_TEXT)};
const button = document.createElement("button");
button.type = "button";
button.textContent = {json.dumps(RELOAD_LABEL)};
button.addEventListener("click", () => window.location.reload());
card.append(title, text, button);
backdrop.append(style, card);
// The controls underneath can no longer do anything: keep keyboard focus and screen
// readers on the notice.
for (const element of document.body.children) element.inert = true;
document.body.append(backdrop);
button.focus();
"""
"""Runs in the page when BokehJS reports the lost connection; builds the notice once."""


def add_connection_notice(doc: Document) -> None:
    """Show the lost-connection notice in ``doc``'s page when its websocket closes.

    Call it once per session with the session's document (``pn.state.curdoc``), in any
    layout. Panel turns off BokehJS's automatic reconnection, so the event comes once.
    """
    doc.js_on_event("connection_lost", CustomJS(code=NOTICE_JS))
