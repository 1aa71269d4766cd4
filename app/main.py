"""The page `panel serve app/main.py` serves: one simulation per browser session."""

import panel as pn

from app.compat import quiet_refused_patches
from app.location import session_location
from app.panel_tuning import tune_process
from app.serving import serve_panel_css_locally
from app.session import build_app
from app.views.connection import add_connection_notice

# No extension named: the page then loads no script of Panel's optional extensions (tables,
# editors, ...), which it never uses.
pn.extension()
tune_process()
# A change a client sends that Bokeh refuses is logged in one line, not with a traceback.
quiet_refused_patches()
# Behind a proxy the session may come from a websocket that reached another process than
# the page (deploy/README.md): its Panel stylesheets must still come from this server.
serve_panel_css_locally(pn.state.curdoc)

# Hand Panel our own Location: its default one fails on a `?` inside the query, an IPv6
# Host, or a 4300+-digit query value.
location = session_location()
build_app(pn.state.session_args, location=location).servable(location=location or True)
# In any layout: a notice with a Reload button once the server stops answering.
if pn.state.curdoc is not None:
    add_connection_notice(pn.state.curdoc)
