"""What both pages' heads say: the title, the description and the viewport, from here alone
(the served page's through Panel's template, app/served/layout.py; the offline file's through
page.html.jinja), and the offline file's icon."""

from __future__ import annotations

import html
from dataclasses import dataclass
from urllib.parse import quote

from app.simulation.spec import TITLE

DESCRIPTION = (
    "An interactive simulation of scaled dot-product attention, softmax(QKᵀ/√d_k)·V: watch "
    "the scores spread and the softmax turn one-hot as d_k grows without the 1/√d_k scale."
)
"""The pages' description: what a search result or a link's preview shows."""

VIEWPORT = "width=device-width, initial-scale=1"
"""A phone lays the pages out at its own width (the 400 px layout), not at a desktop's."""

ICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4" shape-rendering="crispEdges">'
    '<rect width="4" height="4" fill="#440154"/>'
    '<path d="M0 0h1v1H0zM1 1h1v1H1zM2 2h1v1H2zM3 3h1v1H3z" fill="#fde725"/>'
    '<path d="M1 0h1v1H1zM0 1h1v1H0zM2 1h1v1H2zM1 2h1v1H1z" fill="#21918c"/>'
    "</svg>"
)
"""A 4×4 weight matrix in the heatmap's palette, its diagonal bright."""

ICON = "data:image/svg+xml," + quote(ICON_SVG, safe="")
"""The offline file's icon, inline: the file asks for no /favicon.ico (it makes no request)."""


@dataclass(frozen=True)
class PageHead:
    """What a page's head says."""

    title: str = TITLE
    description: str = DESCRIPTION
    viewport: str = VIEWPORT
    icon: str = ICON

    def escaped(self) -> dict[str, str]:
        """Each field escaped for an HTML attribute or element (the offline template)."""
        return {name: html.escape(value, quote=True) for name, value in vars(self).items()}


HEAD = PageHead()
"""Both pages' head."""
