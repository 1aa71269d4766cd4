"""Per-update costs of Panel and Bokeh that this app does not need, removed where it is safe.

Each was found with py-spy on a d_k move at n = 256 and measured by interleaving moves with
and without it in one process: small alone, together with the views' updates run without
Bokeh's property validation (see ``SimulationApp``), 6.5 → 5.6 ms, about a seventh of the
server's work per move. :func:`tune_process` applies the process-wide ones.
"""

from __future__ import annotations

import logging
import os

from bokeh.document import Document
from bokeh.settings import settings
from param.parameterized import Event

from app.compat import cache_page_resources

DIAGNOSTICS_VARIABLE = "BOKEH_PERFORM_ERROR_DIAGNOSTICS"
VALIDATION_VARIABLE = "BOKEH_VALIDATE_DOC"


def skip_bokeh_error_diagnostics() -> None:
    """Turn off Bokeh's "did you mean …?" suggestions for unknown model attributes.

    Panel asks each updated Material UI or ESM model for the changed property by name, and
    that property lives on the model's data, not on the model: Bokeh then ranks every
    property name with difflib to suggest a close one in an AttributeError that Panel drops
    (~50 µs per widget update, three or more per move). Bokeh documents the setting as a
    small speed-up; ``BOKEH_PERFORM_ERROR_DIAGNOSTICS``, when set, still decides.
    """
    if DIAGNOSTICS_VARIABLE not in os.environ:
        settings.perform_error_diagnostics.set_value(False)


def skip_document_validation() -> None:
    """Turn off Bokeh's check of every new session's document for layout mistakes.

    Bokeh walks the whole first screen for it once per arriving student, to log warnings
    about a page that is the same for every student: the model test
    ``test_pages_pass_bokehs_document_checks`` runs the same checks on every kind of page
    instead. ``BOKEH_VALIDATE_DOC``, when set, still decides.
    """
    if VALIDATION_VARIABLE not in os.environ:
        settings.perform_document_validation.set_value(False)


class DesignOnStylesheetChange:
    """Mixin for a Panel component: its design's parameters are only resolved when its
    stylesheets change, the only case in which Panel's update uses them.

    Panel resolves them for every property update (a walk over the theme's modifiers,
    ~50–100 µs for a Material UI widget) and then uses them only to prepend the design's
    stylesheets to new ones. Put it before the Panel class in the bases.
    """

    def _update_properties(self, *events: Event, doc: Document) -> dict:
        if any(event.name == "stylesheets" for event in events):
            return super()._update_properties(*events, doc=doc)
        return self._process_param_change({event.name: event.new for event in events})


def log_panel_only_at_handled_levels() -> None:
    """Raise Panel's logger to the lowest level that one of its handlers emits.

    Panel sets its logger to DEBUG and leaves the filtering to its handlers, so each of its
    debug messages (a few per widget message) builds a log record, caller lookup included,
    that its WARNING handler then drops. The logger does not propagate, so its handlers are
    its only readers: what they emit is unchanged (``--admin``'s handler takes DEBUG, and
    then so does the logger).
    """
    logger = logging.getLogger("panel")
    levels = [handler.level for handler in logger.handlers]
    # A handler at NOTSET (0) takes every record.
    logger.setLevel(max(min(levels), logging.DEBUG) if levels else logging.WARNING)


def tune_process() -> None:
    """The process-wide settings above, as a served app applies them, and the page-resource
    cache of :mod:`app.compat` (idempotent)."""
    skip_bokeh_error_diagnostics()
    skip_document_validation()
    log_panel_only_at_handled_levels()
    cache_page_resources()
