"""The page `panel serve app/main.py` serves: one simulation per browser session.

Run by ``panel serve`` (Bokeh runs it as a module named ``bokeh_app_…`` for every session),
it serves the app's controls; :func:`serve_page` serves another set of them
(:meth:`app.simulation.spec.SimulationSpec.with_control`) from a script of one's own.
"""

import panel as pn

from app.compat import quiet_refused_patches
from app.page.head import HEAD
from app.served.components.connection import add_connection_notice
from app.served.location import served, session_location
from app.served.session import build_app
from app.server.local_css import serve_panel_css_locally
from app.server.message_log import quiet_client_messages
from app.server.panel_tuning import tune_process
from app.server.plain_serve import REFUSED_TEXT, protect_plain_serve, reserved_in_request
from app.simulation.spec import SPEC, SimulationSpec

SESSION_SCRIPT_PREFIX = "bokeh_app_"
"""How Bokeh names the module it runs a served script as, once per session."""


def serve_page(spec: SimulationSpec = SPEC) -> None:
    """Make this session's page servable: the simulation of ``spec``'s controls, or the
    plain refusal when its link carries Bokeh's own parameters.

    Called once per session by the script ``panel serve`` runs.
    """
    # No extension named: the page then loads no script of Panel's optional extensions
    # (tables, editors, ...), which it never uses. Without ``apply_signatures=False`` each
    # session would rebuild the call signatures of every Panel class for IDE completion,
    # ~4–8 ms of each arriving student's server time. Panel's browser information
    # (language, time zone, ...) is never read here, and its model reports each of its
    # seven properties in a message of its own as the page loads: seven patches for the
    # server to decode and handle for every arriving student (docs/performance.md).
    pn.extension(apply_signatures=False, browser_info=False)
    tune_process()
    # A change a client sends that Bokeh refuses, and a websocket message it cannot read,
    # are logged in one short line, not with a traceback (sdpa-sim installs this first;
    # plain `panel serve` gets it here).
    quiet_refused_patches()
    quiet_client_messages()
    # Behind a proxy the session may come from a websocket that reached another process
    # than the page (deploy/README.md): its Panel stylesheets must still come from this
    # server.
    serve_panel_css_locally(pn.state.curdoc)

    # Hand Panel our own Location: its default one fails on a `?` inside the query, an IPv6
    # Host, or a 4300+-digit query value.
    location = session_location()
    if served():
        # Plain `panel serve` has no guard before Bokeh: what Panel lets the app check, it
        # checks.
        protect_plain_serve()
    if served() and reserved_in_request(pn.state.curdoc.session_context.request):
        # A link carrying Bokeh's own parameters gets no page (see app/server/plain_serve.py).
        pn.pane.Str(REFUSED_TEXT).servable()
    else:
        page = build_app(pn.state.session_args, location=location, spec=spec)
        # The tab's title (app/page/head.py): Panel names a component's page "Panel
        # Application" otherwise.
        page.servable(location=location or True, title=HEAD.title)
    # In any layout: a notice with a Reload button once the server stops answering.
    if pn.state.curdoc is not None:
        add_connection_notice(pn.state.curdoc)


if __name__.startswith(SESSION_SCRIPT_PREFIX):
    serve_page()
