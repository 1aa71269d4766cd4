"""The names of the served page's widgets, in the order the page shows them.

The page draws every one in the browser (app/views/drawn_controls.py, ``widget_spec``).
"""

from __future__ import annotations

from app.controls_spec import CONTROLS


def widget_names() -> tuple[str, ...]:
    """Every widget the served page offers, top to bottom: the preset selector, each
    control's widget (a slider's exact box as ``<name>_exact``) and ``resample``."""
    names = ["preset"]
    for control in CONTROLS:
        if control.widget != "none":
            names.append(control.name)
        if control.exact_label:
            names.append(f"{control.name}_exact")
    return (*names, "resample")
