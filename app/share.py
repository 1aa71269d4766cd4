"""Share controls: copy a link to the current scene, or an iframe snippet that embeds it.

The page's URL already follows the controls, so both are built in the browser from
``window.location``; they are copied to the clipboard where the browser allows it and
always shown in a read-only box, so they can be copied by hand on plain-http sites.
"""

from __future__ import annotations

import panel as pn
import panel_material_ui as pmui

EMBED_HEIGHT = 760
"""Height in pixels of the iframe the embed snippet makes."""

IFRAME_TITLE = "Scaled dot-product attention simulation"

_SHARE_JS_TEMPLATE = """
const url = new URL(window.location.href);
url.searchParams.delete('embed');
let text = url.href;
if (kind === 'embed') {
  url.searchParams.set('embed', 'true');
  text = '<iframe src="' + url.href + '" title="TITLE" width="100%" ' +
         'height="HEIGHT" style="border:0;max-width:1200px" loading="lazy"></iframe>';
}
out.value = text;
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(text).catch(() => {});
}
"""
_SHARE_JS = _SHARE_JS_TEMPLATE.replace("TITLE", IFRAME_TITLE).replace("HEIGHT", str(EMBED_HEIGHT))


def build_share_controls() -> pn.Column:
    """Copy link and Copy embed code buttons, and the box that shows what was copied."""
    shown = pmui.TextAreaInput(
        label="link or embed code",
        placeholder="Press a button above; the text appears here too.",
        disabled=False,
        rows=3,
        sizing_mode="stretch_width",
        css_classes=["share-text"],
    )
    link = pmui.Button(label="Copy link", icon="link", variant="outlined", size="small")
    embed = pmui.Button(label="Copy embed code", icon="code", variant="outlined", size="small")
    link.js_on_click(args={"out": shown, "kind": "link"}, code=_SHARE_JS)
    embed.js_on_click(args={"out": shown, "kind": "embed"}, code=_SHARE_JS)
    return pn.Column(
        pmui.Row(link, embed, sizing_mode="stretch_width"),
        shown,
        sizing_mode="stretch_width",
    )
