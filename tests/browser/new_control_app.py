"""What ``panel serve`` runs for the throwaway-control browser test: the app's page with one
more control (tests/new_control_support.py), served through :func:`app.main.serve_page`."""

import sys
from pathlib import Path

# Bokeh runs this file as a script from the repository root: the tests' folder is not on
# its path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from new_control_support import SPEC_WITH_GAIN

from app.main import serve_page

serve_page(SPEC_WITH_GAIN)
