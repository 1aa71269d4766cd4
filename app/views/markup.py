"""Markup the server rebuilds on control moves, replaced in the page as a whole."""

from __future__ import annotations

import param
from panel.custom import JSComponent

from app.panel_tuning import DesignOnStylesheetChange


class ServerMarkup(DesignOnStylesheetChange, JSComponent):
    """HTML built by the server (from numbers and fixed text only), shown as it is.

    Cheaper on both sides than Panel's HTML pane, which recomputes all its properties
    (stylesheets included) for each new text, and than a Bokeh ``Div``, whose text change
    makes BokehJS lay the page out again. ``html`` only ever flows from the server to the
    page; pass ``stylesheets`` for its look, and change it with :meth:`show`.
    """

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
        """Replace the markup in the page, straight on the page's models.

        Panel's own update of a parameter (design, document freeze, model diff, ~0.1–0.2 ms
        per change) is for properties the page can change too; this one it cannot. The
        parameter is kept in step, silently, for pages rendered later.
        """
        with param.parameterized.discard_events(self):
            self.html = html
        for model, _ in self._models.values():
            model.data.html = html

    @property
    def _linked_properties(self) -> tuple[str, ...]:
        # Not synced back: Panel would otherwise take the server's own change, sent inside
        # the app's pn.io.hold(), for a change from the page and process it a second time.
        return tuple(name for name in super()._linked_properties if name != "html")
