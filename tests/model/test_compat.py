"""The Panel internals app/compat.py relies on: these fail loudly when Panel changes them."""

from __future__ import annotations

import inspect
from concurrent.futures import Future

import panel as pn
import panel.io.server as panel_server
import param
import pytest
from bokeh.document import Document
from panel.custom import JSComponent
from panel.io.resources import Resources

from app import compat
from app.served.session import Session


def original_bundle_resources():
    current = panel_server.bundle_resources
    return getattr(current, "__wrapped__", current)


def test_this_panel_is_one_the_cache_was_checked_against() -> None:
    assert compat.panel_version_checked(), (
        f"Panel {pn.__version__}: re-read panel/io/server.py and panel/io/resources.py, then "
        "add the version to compat.CHECKED_PANEL"
    )
    assert not compat.panel_version_checked("2.0.0")


def test_panel_still_bundles_page_resources_the_way_the_cache_expects() -> None:
    assert compat.bundle_signature_matches(original_bundle_resources())
    page_source = inspect.getsource(panel_server.server_html_page_for_session)
    assert "bundle_resources(doc.roots, resources)" in page_source
    assert "bundle_resources(doc.roots, resources)" in inspect.getsource(
        panel_server.autoload_js_script
    )


def test_applying_the_cache_is_idempotent() -> None:
    assert compat.cache_page_resources()
    wrapped = panel_server.bundle_resources
    assert compat.cache_page_resources()
    assert panel_server.bundle_resources is wrapped


def page_roots() -> list:
    doc = Document()
    doc.add_root(Session(embed=True).page.get_root(doc))
    return doc.roots


def test_a_cached_bundle_renders_as_panels_own() -> None:
    original = original_bundle_resources()
    cached = compat.cached_bundle_resources(original)
    resources = Resources(mode="server")
    expected = list(original(page_roots(), resources))
    first = cached(page_roots(), resources)
    first.js_raw.append("/* a caller adding to its copy */")
    assert list(cached(page_roots(), resources)) == expected
    assert list(original(page_roots(), resources)) == expected


def test_pages_of_other_kinds_get_their_own_bundle() -> None:
    calls = []

    def counting(roots, resources, notebook=False, reloading=False, enable_mathjax="auto"):
        calls.append(notebook)
        return original_bundle_resources()(roots, resources, notebook, reloading, enable_mathjax)

    cached = compat.cached_bundle_resources(counting)
    resources = Resources(mode="server")
    cached(page_roots(), resources)
    cached(page_roots(), resources)
    assert len(calls) == 1, "the same kind of page is bundled once"
    doc = Document()
    doc.add_root(pn.pane.Markdown("other").get_root(doc))
    cached(doc.roots, resources)
    cached(page_roots(), Resources(mode="cdn"))
    cached(page_roots(), resources, notebook=True)
    assert len(calls) == 4, "other models, another mode or a notebook are bundled anew"


def test_panel_still_keeps_the_write_state_paced_updates_wait_for() -> None:
    assert compat.write_bookkeeping_present(), (
        "panel.io.document no longer keeps _write_tasks/_WRITE_BLOCK/_WRITE_EVENTS: "
        "re-read it and update compat.session_writes_pending"
    )


def test_a_session_with_a_message_being_written_has_writes_pending() -> None:
    import panel.io.document as panel_document

    doc = Document()
    assert not compat.session_writes_pending(doc)
    panel_document._WRITE_BLOCK[doc] = True
    try:
        assert compat.session_writes_pending(doc)
    finally:
        del panel_document._WRITE_BLOCK[doc]
    # What Panel keeps is an asyncio task; only its done() is asked, so a thread-safe
    # future stands in (no event loop: Playwright may hold one in this thread).
    write = Future()
    panel_document._write_tasks[doc] = [write]
    try:
        assert compat.session_writes_pending(doc)
        write.set_result(None)
        assert not compat.session_writes_pending(doc), "a finished write is not pending"
    finally:
        panel_document._write_tasks.pop(doc, None)


def test_detached_page_internals() -> None:
    """Loud check of compat.detach_from_global_busy: a new Page still binds busy to
    pn.state through a watcher the function can find and remove."""
    assert compat.page_busy_binding_present(), (
        "compat.detach_from_global_busy: panel-material-ui's Page no longer binds busy "
        "to pn.state the way it did; re-check the per-message cost with many sessions"
    )


def test_a_detached_page_no_longer_follows_the_process_busy_flag() -> None:
    import panel_material_ui as pmui

    page = pmui.Page()
    compat.detach_from_global_busy(page)
    from panel.util import edit_readonly

    with edit_readonly(pn.state):
        pn.state.busy = True
    try:
        assert page.busy is False
    finally:
        with edit_readonly(pn.state):
            pn.state.busy = False


def test_the_allowed_panel_versions_are_the_checked_ones() -> None:
    """pyproject.toml's bounds on Panel admit exactly the minor versions compat was read
    against: raising the bound means re-checking every internal there."""
    import re
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    panel_requirement = next(
        d for d in project["project"]["dependencies"] if d.startswith("panel>")
    )
    low, high = re.fullmatch(r"panel>=(\d+\.\d+)(?:\.\d+)?,<(\d+\.\d+)", panel_requirement).groups()
    low_minor, high_minor = (int(v.split(".")[1]) for v in (low, high))
    allowed = tuple(f"1.{minor}" for minor in range(low_minor, high_minor))
    assert allowed == compat.CHECKED_PANEL
    assert all(dependency.count("<") == 1 for dependency in project["project"]["dependencies"])


def test_rendered_model_internals() -> None:
    """Loud check of compat.write_to_rendered_models: Panel must still keep a rendered
    component's page models in ``_models`` with its parameters on ``model.data``."""
    assert compat.rendered_model_internals_present(), (
        "compat.write_to_rendered_models: Panel no longer keeps rendered JSComponent models "
        "in _models as (model, parent) with parameters on model.data; use the parameter"
    )


class OneWayMarkup(JSComponent):
    """A component whose ``html`` only flows to the page, as the frames of the app's drawn
    components do (app/served/components/framed.py)."""

    html = param.String(default="")
    _esm = "export function render({ model }) { return document.createElement('div') }"


def test_writing_to_rendered_models_reaches_every_page_and_later_ones() -> None:
    markup = OneWayMarkup(html="<b>a</b>")
    pages = [markup.get_root(Document()) for _ in range(2)]
    compat.write_to_rendered_models(markup, "html", "<b>b</b>")
    later = markup.get_root(Document())
    assert [model.data.html for model in (*pages, later)] == ["<b>b</b>"] * 3


def test_standalone_documents_carry_their_definitions_under_defs() -> None:
    assert compat.model_definitions_key_present(), (
        "Bokeh's standalone document JSON changed: app/compat.py's without_model_definitions "
        "(the offline page's second document) must be checked against this Bokeh"
    )
    docs = {"a": {"roots": [1], "defs": [2], "title": "t"}}
    assert compat.without_model_definitions(docs) == {"a": {"roots": [1], "title": "t"}}


def test_bokehjs_still_writes_inline_stylesheets_through_one_method() -> None:
    assert compat.inline_stylesheet_write_present(), (
        "BokehJS's InlineStyleSheet no longer writes through _update(css) (or this Bokeh is "
        "not in compat.CHECKED_BOKEH): re-read core/dom in bokeh.js and check "
        "compat.UNCHANGED_STYLESHEETS_JS, which the offline page runs"
    )


def test_a_served_document_runs_the_stylesheet_wrap_once_drawn() -> None:
    document = Document()
    compat.skip_unchanged_stylesheets(document)
    callbacks = dict(document.to_json().content["callbacks"]["entries"])
    (callback,) = callbacks["document_ready"]
    assert callback["attributes"]["code"] == compat.UNCHANGED_STYLESHEETS_JS


def test_model_definitions_are_encoded_once() -> None:
    assert compat.model_definitions_encoding_checked(), (
        "Bokeh's Document.to_json no longer encodes the data model classes as one list "
        "through Serializer.encode (or this Bokeh is not in compat.CHECKED_BOKEH): re-read "
        "bokeh/document/document.py and check compat.cache_model_definitions"
    )
    assert compat.cache_model_definitions()
    assert compat.cache_model_definitions(), "applying it twice is harmless"
    from bokeh.models import Div

    first, second = Document(), Document()
    first.add_root(Div(text="a"))
    second.add_root(Div(text="b"))
    defs = first.to_json().content["defs"]
    assert defs, "a document still carries the data model definitions"
    assert second.to_json().content["defs"] is defs, "the second document reuses them"
    assert [definition["name"] for definition in defs] == [
        definition["name"] for definition in Document().to_json(deferred=False)["defs"]
    ]


def test_a_data_model_class_made_later_is_defined_in_the_next_document() -> None:
    from bokeh.core.properties import Int
    from bokeh.model import DataModel

    assert compat.cache_model_definitions()
    before = {definition["name"] for definition in Document().to_json().content["defs"]}

    class LaterModel(DataModel):
        count = Int(default=3)

    after = {definition["name"] for definition in Document().to_json().content["defs"]}
    assert after - before == {LaterModel.__qualified_model__}


def test_bokehjs_still_has_its_ndarray_constructor() -> None:
    assert compat.bokeh_ndarray_present(), (
        "BokehJS no longer has core/util/ndarray's ndarray(init, {dtype, shape}) (or this "
        "Bokeh is not in compat.CHECKED_BOKEH): re-read bokeh.js and check "
        "compat.BOKEH_IMAGE_MODULE, through which both pages draw every image"
    )


def test_both_pages_draw_images_only_through_the_compat_helper() -> None:
    from app.page.bundle import OFFLINE_BUNDLE, WEB, served_bundle

    modules = list(WEB.rglob("*.js"))
    assert compat.BOKEH_IMAGE_MODULE in modules
    reaching = [path for path in modules if "core/util/ndarray" in path.read_text()]
    assert reaching == [compat.BOKEH_IMAGE_MODULE]
    # Both bundles carry it, and draw images with it.
    for bundle in (served_bundle(), OFFLINE_BUNDLE):
        assert bundle.read_text().count("core/util/ndarray") == 1, bundle.name


def test_every_internal_the_app_relies_on_is_as_checked() -> None:
    """What ``sdpa-sim`` warns about as it starts: nothing on the versions installed."""
    assert compat.internals_changed() == []


def test_an_internal_that_changed_is_named_in_a_warning_as_sdpa_sim_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def moved() -> bool:
        raise AttributeError("'module' object has no attribute 'ndarray'")

    monkeypatch.setattr(compat, "bokeh_ndarray_present", moved)
    monkeypatch.setattr(compat, "write_bookkeeping_present", lambda: False)
    assert compat.internals_changed() == [
        "the pacing of a session's updates (Panel's pending writes)",
        "the heatmap's images (BokehJS's ndarray)",
    ]
    warnings = compat.changed_internals_warnings()
    assert len(warnings) == 2
    assert warnings[1].startswith("sdpa-sim: warning: the heatmap's images (BokehJS's ndarray)")
    assert "Panel 1.9, 1.10 and Bokeh 3.9, 3.10" in warnings[1]


def test_the_warnings_go_to_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compat, "internals_changed", lambda: ["the heatmap's images"])
    compat.warn_about_changed_internals()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("sdpa-sim: warning: the heatmap's images: not as checked")
