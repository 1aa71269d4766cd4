"""What a session needs to come out the same whichever of several server processes builds it.

Behind a proxy with several ``panel serve`` processes (see ``deploy/``), a page and its
websocket normally reach the same process. When they do not (the routing cookie was blocked,
or the process that served the page stopped in between), Bokeh's websocket handler builds a
new session from the page's token, which carries the page's URL arguments: the student gets
the scene they asked for. One thing differs: Panel points its stylesheets at its CDN and only
rewrites them to the server's own files while it renders the HTML page, which this process
never did. Without internet access (or under a Content-Security-Policy) the page then loses
part of its styling.
"""

from __future__ import annotations

import panel as pn
from bokeh.document import Document
from panel.io.resources import LOCAL_DIST


def serve_panel_css_locally(doc: Document | None) -> None:
    """Make ``doc``'s Panel stylesheets load from this server, however its session began.

    Sets, before the page's models are built, the address Panel would have set when
    rendering the HTML page (``static/extensions/panel/``, relative to the app's path).
    A page whose HTML this process did render gets the same value again. No-op outside a
    server session.
    """
    if doc is None or doc.session_context is None:
        return
    rel_path = pn.state.rel_path
    dist_url = f"{rel_path}/{LOCAL_DIST}" if rel_path else LOCAL_DIST
    # Panel reads the document's template variable for every stylesheet it creates or
    # updates (Reactive._resolve_stylesheets).
    doc.template_variables.setdefault("dist_url", dist_url)
