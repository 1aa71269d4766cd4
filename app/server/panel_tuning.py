"""Work Bokeh does for every session or update that this app does not need, turned off
through Bokeh's public settings (each can still be turned on with its environment
variable); :func:`tune_process` applies them and the page-resource cache of app/compat.py."""

from __future__ import annotations

import os
import sys

from bokeh.settings import SettingProvenance, settings

from app.compat import cache_page_resources, leave_out_unshown_definitions

DIAGNOSTICS_VARIABLE = "BOKEH_PERFORM_ERROR_DIAGNOSTICS"
VALIDATION_VARIABLE = "BOKEH_VALIDATE_DOC"


def skip_bokeh_error_diagnostics() -> None:
    """Turn off Bokeh's "did you mean …?" suggestions for unknown model attributes.

    Panel asks each updated Material UI or ESM model for the changed property by name, and
    that property lives on the model's data, not on the model: Bokeh then ranks every
    property name with difflib to suggest a close one in an AttributeError that Panel drops,
    for every widget update. Bokeh documents the setting as a small speed-up;
    ``BOKEH_PERFORM_ERROR_DIAGNOSTICS``, when set, still decides.
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


HOT_SETTINGS = ("simple_ids", "serialize_include_defaults", "pretty")
"""Bokeh settings read on every new model id, binary buffer and serialised model: without a
value set in Python, each read walks Bokeh's precedence chain (environment variables, three
config dicts), ~30 µs on a busy machine, for a new session's hundreds of ids and buffers
(~7 % of an arriving session's server CPU in a profile of 40 arrivals)."""


def fix_hot_settings() -> None:
    """Set each of :data:`HOT_SETTINGS` to the value Bokeh resolves for it now (from its
    environment variable or config, as before): the value stays, and reading it is one
    attribute lookup. Settings already set in Python are left as they are."""
    for name in HOT_SETTINGS:
        setting = getattr(settings, name)
        value, provenance = setting.get_value_with_provenance()
        if provenance is not SettingProvenance.USER_SET:
            setting.set_value(value)


SHOWN_LIBRARY_COMPONENTS = {"panel_material_ui": ("Page",)}
"""The Panel and panel-material-ui component classes a page of the app draws, by module
and name (the full page's Material UI Page): each served document defines only these of the
library's components (:func:`app.compat.leave_out_unshown_definitions`)."""


def shown_library_components() -> list[type]:
    """The classes :data:`SHOWN_LIBRARY_COMPONENTS` names, of the modules imported so far (a
    module not imported yet has no definitions to leave out)."""
    return [
        getattr(sys.modules[module], name)
        for module, names in SHOWN_LIBRARY_COMPONENTS.items()
        if module in sys.modules
        for name in names
    ]


def tune_process() -> None:
    """The process-wide settings above, as a served app applies them, and the page-resource
    cache of :mod:`app.compat` (idempotent)."""
    skip_bokeh_error_diagnostics()
    skip_document_validation()
    fix_hot_settings()
    cache_page_resources()
    leave_out_unshown_definitions(shown_library_components)
