"""The page `panel serve app/main.py` serves: one simulation per browser session."""

import panel as pn

from app.layout import build_app

build_app(pn.state.session_args).servable()
