"""The page `panel serve app/main.py` serves: one simulation per browser session."""

import panel as pn

from app.layout import build_app, session_location
from app.panel_tuning import tune_process

# No extension named: the page then loads no script of Panel's optional extensions (tables,
# editors, ...), which it never uses.
pn.extension()
tune_process()

# Hand Panel our own Location: its default one crashes on a 4300+-digit query value.
location = session_location()
build_app(pn.state.session_args, location=location).servable(location=location or True)
