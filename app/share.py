"""Share controls: copy a link to the current scene, or an iframe snippet that embeds it.

The server builds both from the page's own address (the session's ``Location``, as the
browser reached it) and the state's query, shows the text in a read-only box (so it can
be copied by hand on plain-http sites, where browsers refuse clipboard access) and hands
it to a one-line script that puts it on the clipboard where the browser allows it.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from urllib.parse import urlencode

import panel as pn
import panel_material_ui as pmui
from panel.io.location import Location

from app.controls import PageButton

EMBED_WIDTH = 800
"""Width in pixels of the iframe the embed snippet makes (it shrinks to a narrower column)."""

EMBED_HEIGHT = 600
"""Height in pixels of the iframe the embed snippet makes: at 800×600 the embedded page's
first screen is the experiment (the first-screen controls, the heatmap and the raw
histogram, no scrolling; tests/browser/test_embed.py checks the copied snippet)."""

IFRAME_TITLE = "Scaled dot-product attention simulation"

_CLIPBOARD_JS = """
if (cb_obj.value && navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(cb_obj.value).catch(() => {});
}
"""


def share_link(page_address: str, query: Mapping[str, str]) -> str:
    """The link to the scene ``query`` describes on the page at ``page_address``."""
    return f"{page_address}?{urlencode({name: v for name, v in query.items() if v != ''})}"


def embed_snippet(page_address: str, query: Mapping[str, str]) -> str:
    """An ``<iframe>`` that embeds the scene in the compact layout (``embed=true``)."""
    source = html.escape(share_link(page_address, {**query, "embed": "true"}), quote=True)
    return (
        f'<iframe src="{source}" title="{IFRAME_TITLE}" width="{EMBED_WIDTH}" '
        f'height="{EMBED_HEIGHT}" style="border:0;max-width:100%" loading="lazy"></iframe>'
    )


def page_address(location: Location | None) -> str:
    """The served page's address without its query, as the browser reached it."""
    if location is None or not location.hostname:
        return "http://localhost:5006/"
    port = f":{location.port}" if location.port else ""
    return f"{location.protocol}//{location.hostname}{port}{location.pathname}"


def build_share_controls(
    query: Callable[[], Mapping[str, str]], location: Location | None
) -> pn.Column:
    """Copy link and Copy embed code buttons, and the box that shows what was copied.

    ``query`` returns the current scene's URL query values; ``location`` is the session's
    view of the browser's address (None outside a server).
    """
    shown = pmui.TextAreaInput(
        label="link or embed code",
        placeholder="Press a button above; the text appears here too.",
        rows=3,
        sizing_mode="stretch_width",
        css_classes=["share-text"],
    )
    # A plain Bokeh widget, hidden: its value change runs the clipboard script in the page.
    clipboard = pn.widgets.TextInput(visible=False, sizing_mode="stretch_width")
    clipboard.jscallback(value=_CLIPBOARD_JS)

    def show(text: str) -> None:
        shown.value = text
        clipboard.value = text

    link = PageButton(label="Copy link", icon="link", variant="outlined", size="small")
    embed = PageButton(label="Copy embed code", icon="code", variant="outlined", size="small")
    link.on_click(lambda event: show(share_link(page_address(location), query())))
    embed.on_click(lambda event: show(embed_snippet(page_address(location), query())))
    return pn.Column(
        # Wraps to two lines when the column is narrower than both buttons.
        pn.FlexBox(link, embed, flex_wrap="wrap", sizing_mode="stretch_width"),
        shown,
        clipboard,
        sizing_mode="stretch_width",
    )
