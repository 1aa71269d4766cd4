"""The one page both modes draw: its figures, lesson and controls built once per process
from Python, the facts they share (sizes, breakpoints, titles, texts), the frames of numbers
it draws, and its client-side code and styles (``assets/``).

A served session (:mod:`app.served`) and the offline file (:mod:`app.export`) both build on
it; it imports only :mod:`app.simulation`, :mod:`app.compat` and the core."""

from pathlib import Path

ASSETS = Path(__file__).with_name("assets")
"""The page's JavaScript, CSS and HTML template, shared by the served page and the file."""
