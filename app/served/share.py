"""Share texts: a link to the current scene, or an iframe snippet that embeds it.

The server builds both from the page's own address (the session's ``Location``, as the
browser reached it) and the state's query; the page shows the text in a read-only box (so
it can be copied by hand on plain-http sites, where browsers refuse clipboard access) and
puts it on the clipboard where the browser allows it (app/page/assets/drawn_controls.js).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlencode

if TYPE_CHECKING:  # only its type: this module builds no Panel object
    from panel.io.location import Location

EMBED_WIDTH = 800
"""Width in pixels of the iframe the embed snippet makes (it shrinks to a narrower column)."""

EMBED_HEIGHT = 600
"""Height in pixels of the iframe the embed snippet makes: at 800×600 the embedded page's
first screen is the experiment (the first-screen controls, the heatmap and the raw
histogram, no scrolling; tests/browser/test_embed.py checks the copied snippet)."""

IFRAME_TITLE = "Scaled dot-product attention simulation"

SHARE_TEXTS = {
    "link": "Copy link",
    "embed": "Copy embed code",
    "shared": "link or embed code",
    "placeholder": "Press a button above; the text appears here too.",
    "copied": "Copied to the clipboard.",
    "by_hand": "This page cannot reach the clipboard: select the text below and copy it.",
}
"""The share part's words: its two buttons, the box that shows what was copied, what that
box says while empty, and what the page says once it has tried the clipboard."""


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
