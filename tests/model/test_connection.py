"""The lost-connection notice and Panel's CSS address, checked without a browser or a server.

tests/proxy shows the notice in Chromium when a real process stops behind nginx, and serves
a session from the process its websocket reached.
"""

from __future__ import annotations

import json
import weakref

import panel as pn
from bokeh.document import Document
from bokeh.models import CustomJS
from panel.io.resources import LOCAL_DIST
from panel.io.state import set_curdoc

from app.served.components.connection import (
    NOTICE_ID,
    NOTICE_JS,
    NOTICE_TEXT,
    NOTICE_TITLE,
    RELOAD_LABEL,
    add_connection_notice,
)
from app.server.local_css import serve_panel_css_locally


def test_the_notice_runs_when_the_connection_is_lost_and_is_sent_with_the_page() -> None:
    doc = Document()
    add_connection_notice(doc)
    (callback,) = doc.callbacks.js_event_callbacks["connection_lost"]
    assert isinstance(callback, CustomJS) and callback.code == NOTICE_JS
    # BokehJS registers a document's callbacks from the JSON the session sends.
    sent = doc.to_json(deferred=False)["callbacks"]
    callbacks = dict(sent["entries"]) if sent.get("type") == "map" else sent
    assert [ref["id"] for ref in callbacks["connection_lost"]] == [callback.id]


def test_the_notice_is_fixed_text_with_a_reload_button() -> None:
    for text in (NOTICE_ID, NOTICE_TITLE, NOTICE_TEXT, RELOAD_LABEL):
        assert json.dumps(text) in NOTICE_JS
    assert "window.location.reload()" in NOTICE_JS
    # Text only, never markup: nothing in it is parsed as HTML.
    assert "innerHTML" not in NOTICE_JS
    assert "{" not in NOTICE_TITLE + NOTICE_TEXT + RELOAD_LABEL


class _SessionContext:
    """Stands in for Bokeh's session context: only its presence matters here."""


def _served_document(rel_path: str) -> tuple[Document, _SessionContext]:
    doc = Document()
    context = _SessionContext()
    doc._session_context = weakref.ref(context)
    with set_curdoc(doc):
        pn.state.rel_path = rel_path
    return doc, context


def test_panel_css_comes_from_this_server_in_a_session() -> None:
    doc, _context = _served_document("")
    with set_curdoc(doc):
        serve_panel_css_locally(doc)
    assert doc.template_variables["dist_url"] == LOCAL_DIST
    nested, _nested_context = _served_document("..")
    with set_curdoc(nested):
        serve_panel_css_locally(nested)
    assert nested.template_variables["dist_url"] == f"../{LOCAL_DIST}"


def test_panel_css_is_left_alone_outside_a_session() -> None:
    serve_panel_css_locally(None)
    doc = Document()
    serve_panel_css_locally(doc)
    assert "dist_url" not in doc.template_variables
