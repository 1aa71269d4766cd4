"""Markup the server rebuilds on control moves, replaced in the page as a whole."""

from __future__ import annotations

import param
from panel.custom import JSComponent

from app.compat import CheckedPageChanges, write_to_rendered_models


class ServerMarkup(CheckedPageChanges, JSComponent):
    """HTML built by the server (from numbers and fixed text only), shown as it is.

    Cheaper on both sides than Panel's HTML pane, which recomputes all its properties
    (stylesheets included) for each new text, and than a Bokeh ``Div``, whose text change
    makes BokehJS lay the page out again. ``html`` only ever flows from the server to the
    page (a page's change to it is refused); pass ``stylesheets`` for its look.
    """

    page_properties = ()

    html = param.String(default="", doc="The markup to show, built by the server.")

    _esm = """
export function render({ model }) {
  const box = document.createElement('div')
  box.innerHTML = model.html
  model.on('html', () => { box.innerHTML = model.html })
  return box
}
"""

    def show(self, html: str) -> None:
        """Replace the markup in every page that shows it (app/compat.py's fast path)."""
        write_to_rendered_models(self, "html", html)
