"""The one place the app reaches into Panel's internals, each for a measured figure.

Every entry names the Panel versions it was checked against and the upstream code it relies
on; ``tests/model/test_compat.py`` fails loudly when that code changes shape, and
:func:`cache_page_resources` refuses (with a warning, leaving Panel as it is) on a version
it does not know.
"""

from __future__ import annotations

import copy
import inspect
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import panel as pn
import panel.io.document as panel_document
import panel.io.server as panel_server
from bokeh.document import Document
from bokeh.model import Model
from packaging.version import Version
from panel.io.state import state

log = logging.getLogger(__name__)

CHECKED_PANEL = ("1.9", "1.10")
"""Panel minor versions whose ``panel.io.server`` this module was read against."""

BUNDLE_SIGNATURE = ("roots", "resources", "notebook", "reloading", "enable_mathjax")
"""The parameters of ``panel.io.resources.bundle_resources`` the cache below passes on."""


def panel_version_checked(version: str = pn.__version__) -> bool:
    """Whether ``version`` of Panel is one this module was checked against."""
    release = Version(version).release
    return f"{release[0]}.{release[1]}" in CHECKED_PANEL


def bundle_signature_matches(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes the parameters :data:`BUNDLE_SIGNATURE`, in that order."""
    return tuple(inspect.signature(function).parameters) == BUNDLE_SIGNATURE


def _page_key(roots: Iterable[Model], resources: Any) -> tuple | None:
    """What a page's resource bundle depends on, or None when it should not be cached.

    Panel derives the bundle from the resources' mode and URLs, the request's relative path,
    the configuration, and which kinds of models the page holds (tables, MathJax, each
    component's own CSS and scripts). Pages of one app at one path share all of them.
    """
    roots = list(roots)
    if not roots or roots[0].document is None:
        return None
    kinds = frozenset(type(model) for model in roots[0].document.models)
    config = pn.config
    return (
        type(resources),
        resources.mode,
        resources.root_url,
        getattr(resources, "absolute", None),
        state.rel_path,
        kinds,
        bool(config.notifications and state.notifications),
        id(config.design),
        tuple(config.css_files),
        tuple(config.raw_css),
        tuple(config.global_css),
        tuple(config.js_files.items()),
    )


def cached_bundle_resources(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (Panel's ``bundle_resources``) with its result kept per page kind.

    Panel recomputes a served page's scripts and stylesheets for every page request, walking
    every custom component class of the process and checking their files on disk, a large
    share of the server's time per arriving student (docs/performance.md), the same answer
    each time. Callers get a copy, since Panel's autoload script adds to the bundle it
    receives.
    """
    cache: dict[tuple, Any] = {}

    def bundle_resources(
        roots: Any,
        resources: Any,
        notebook: bool = False,
        reloading: bool = False,
        enable_mathjax: bool | str = "auto",
    ) -> Any:
        key = None
        if not (notebook or reloading) and enable_mathjax == "auto" and resources is not None:
            key = _page_key(roots, resources)
        if key is None:
            return original(roots, resources, notebook, reloading, enable_mathjax)
        if key not in cache:
            cache[key] = original(roots, resources, notebook, reloading, enable_mathjax)
        return _copy_bundle(cache[key])

    bundle_resources.__wrapped__ = original  # type: ignore[attr-defined]
    return bundle_resources


def _copy_bundle(bundle: Any) -> Any:
    fresh = copy.copy(bundle)
    for name, value in vars(bundle).items():
        if isinstance(value, list | dict):
            setattr(fresh, name, copy.copy(value))
    return fresh


def cache_page_resources() -> bool:
    """Serve pages with a cached resource bundle (see :func:`cached_bundle_resources`).

    Checked against Panel 1.9 and 1.10, where ``panel.io.server`` imports
    ``bundle_resources`` by name and calls it from ``server_html_page_for_session`` and
    ``autoload_js_script``; upstream code: panel/io/resources.py ``bundle_resources`` and
    ``Resources.extra_resources``. No upstream issue asks for a cache; holoviz/panel#4562
    (resources per page, after #4282) is why the bundle is computed per request. Returns
    whether it was applied; idempotent.
    """
    current = panel_server.bundle_resources
    if hasattr(current, "__wrapped__"):
        return True
    if not panel_version_checked() or not bundle_signature_matches(current):
        log.warning(
            "sdpa-sim: Panel %s is not one the page-resource cache was checked against "
            "(%s): pages are served without it",
            pn.__version__,
            ", ".join(CHECKED_PANEL),
        )
        return False
    panel_server.bundle_resources = cached_bundle_resources(current)
    return True


# --- Changes a page sends: only those the app expects, each checked --------------------------

PAGE_CHANGE_HOOKS = ("_linked_properties", "_process_property_change")
"""The members of Panel's ``Syncable`` that :class:`CheckedPageChanges` overrides."""

PAGE_ERRORS = (TypeError, ValueError, IndexError, KeyError, OverflowError)
"""What Panel's mapping of a value from the page raises when the value makes no sense."""

_SHOWN_CHARACTERS = 120
"""How much of a refused value's repr the log shows."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARACTERS else text[: _SHOWN_CHARACTERS - 1] + "…"


class CheckedPageChanges:
    """Mixin (first among the bases) for a Panel component whose changes from the page are
    taken only for the properties in :attr:`page_properties`, each passing
    :meth:`accepts_from_page`.

    A client can send any value for any property of any model of its document. Panel
    follows every linked property of a widget, and maps each value before param validates
    it: an index the slider lacks raises in that mapping (or, at -1, silently becomes the
    last option), and a value param refuses raises later; either way a traceback lands in
    the server log and the page shows what the server does not. Here a property the page
    of this app never changes (``options``, ``formatter``, …) is not followed at all, and a
    refused value is logged in one line and answered by sending the component's current
    value back (:meth:`page_change_refused`).

    Panel internals used, checked against Panel 1.9 and 1.10 (panel-material-ui 0.16):
    ``Syncable._linked_properties`` (the properties whose changes from the page Panel
    listens to) and ``Syncable._process_property_change`` (property values → parameter
    values, called by ``Syncable._process_events`` before ``param.update``). Upstream
    issue: none found (holoviz/panel and panel-extensions/panel-material-ui have none on
    checking a page's values before mapping them). ``tests/model/test_page_values.py``
    fails loudly when either changes shape.
    """

    page_properties: tuple[str, ...] = ("value",)
    """The Bokeh properties a page of this app changes on this component."""

    @property
    def _linked_properties(self) -> tuple[str, ...]:
        linked = super()._linked_properties  # type: ignore[misc]
        return tuple(name for name in linked if name in self.page_properties)

    def accepts_from_page(self, name: str, value: object) -> bool:
        """Whether the page's new ``value`` of property ``name`` may be taken (override)."""
        return True

    def page_change_refused(self, names: list[str], values: dict[str, Any]) -> None:
        """Log the refused change in one line and send the current values back to the page."""
        shown = ", ".join(f"{name}={_shown(values.get(name))}" for name in names)
        log.warning("sdpa-sim: refused a change from a page to %s: %s", type(self).__name__, shown)
        parameters = [name for name in names if name in self.param]  # type: ignore[attr-defined]
        if parameters:
            self.param.trigger(*parameters)  # type: ignore[attr-defined]

    def _process_property_change(self, msg: dict[str, Any]) -> dict[str, Any]:
        refused = [name for name, value in msg.items() if not self.accepts_from_page(name, value)]
        if not refused:
            try:
                return super()._process_property_change(msg)  # type: ignore[misc]
            except PAGE_ERRORS:
                refused = list(msg)
        self.page_change_refused(refused, msg)
        return {}


def page_change_hooks_present(cls: type) -> bool:
    """Whether ``cls`` (a Panel component class) still has the members the mixin overrides,
    and Panel's event handling still maps page values through ``_process_property_change``."""
    from panel.reactive import Syncable

    source = inspect.getsource(Syncable._process_events)
    return (
        all(hasattr(cls, name) for name in PAGE_CHANGE_HOOKS)
        and isinstance(inspect.getattr_static(Syncable, "_linked_properties"), property)
        and "self._process_property_change(events)" in source
    )


# --- Messages Bokeh refuses before any app code runs --------------------------------------

REFUSED_MESSAGE_LOGGER = "bokeh.server.protocol_handler"
"""Where Bokeh logs, with a traceback, a message from a page it could not handle."""

REFUSED_MESSAGE_TEXT = "error handling message"
"""The start of that log record's message (Bokeh 3.9 and 3.10)."""


class RefusedPatchFilter(logging.Filter):
    """Turns Bokeh's traceback for a page's change it refused into one warning line.

    A PATCH-DOC is a page telling the server about changes it made; Bokeh validates and
    applies it before Panel or the app see anything, and answers one it cannot take (a value
    of the wrong type, an unknown model or attribute, a malformed event) with an ERROR
    message. That is the right answer to a hostile or broken client, but Bokeh also logs it
    at ERROR level with the whole message and a traceback, so any client could fill the log
    with tracebacks that are no fault of the server. Other messages keep their traceback.

    Relies on how Bokeh 3.9 and 3.10 log it (``ProtocolHandler.handle`` in
    bokeh/server/protocol_handler.py: the logger's name, the message's first words, the
    message and the error as its arguments); upstream issue: none found.
    ``tests/model/test_page_values.py`` fails loudly when that changes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite a refused PATCH-DOC record in place; always let the record through."""
        message = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if (
            isinstance(record.msg, str)
            and record.msg.startswith(REFUSED_MESSAGE_TEXT)
            and record.exc_info
            and getattr(message, "msgtype", None) == "PATCH-DOC"
        ):
            error = record.exc_info[1]
            record.msg = "sdpa-sim: refused a change from a page: %s"
            record.args = (_shown(error),)
            record.exc_info = None
            record.exc_text = None
            record.levelno = logging.WARNING
            record.levelname = logging.getLevelName(logging.WARNING)
        return True


def quiet_refused_patches() -> None:
    """Install :class:`RefusedPatchFilter` on Bokeh's protocol handler logger (idempotent)."""
    logger = logging.getLogger(REFUSED_MESSAGE_LOGGER)
    if not any(isinstance(existing, RefusedPatchFilter) for existing in logger.filters):
        logger.addFilter(RefusedPatchFilter())


def refused_message_logging_checked() -> bool:
    """Whether Bokeh still logs a message it could not handle as the filter expects."""
    import bokeh.server.protocol_handler as protocol_handler

    source = inspect.getsource(protocol_handler.ProtocolHandler.handle)
    return protocol_handler.log.name == REFUSED_MESSAGE_LOGGER and (
        f'log.error("{REFUSED_MESSAGE_TEXT}' in source
    )


def session_writes_pending(doc: Document) -> bool:
    """Whether Panel is still writing messages of ``doc``'s session to its websockets.

    Panel writes a session's messages with Tornado's ``write_message`` from tasks it keeps per
    document until every frame has reached the socket; while the socket is write-locked it
    queues the events instead. A paced update waits for both (:class:`app.served.ticks.Paced`), so a
    client that reads slowly, or not at all, holds one message in flight, not an unbounded
    queue of images. Checked against Panel 1.9 (queued messages in ``_WRITE_MSGS``) and 1.10
    (queued events in ``_WRITE_EVENTS``); upstream code: panel/io/document.py
    ``_dispatch_write_task``, ``schedule_write_events``. No upstream issue offers a public
    way to ask.
    """
    tasks = panel_document._write_tasks.get(doc, ())
    if any(not task.done() for task in tasks):
        return True
    return doc in panel_document._WRITE_BLOCK or doc in _queued_writes()


def _queued_writes() -> Any:
    queued = getattr(panel_document, "_WRITE_EVENTS", None)
    return queued if queued is not None else panel_document._WRITE_MSGS


def write_bookkeeping_present() -> bool:
    """Whether this Panel keeps the per-document write state :func:`session_writes_pending`
    reads (a test fails loudly when it does not)."""
    names = ("_write_tasks", "_WRITE_BLOCK")
    queued = hasattr(panel_document, "_WRITE_EVENTS") or hasattr(panel_document, "_WRITE_MSGS")
    return queued and all(
        isinstance(getattr(panel_document, name, None), dict | WeakKeyDictionary) for name in names
    )


# --- A page's busy flag, detached from the whole process -------------------------------------


def detach_from_global_busy(page: Any) -> None:
    """Unbind a Material UI Page's ``busy`` from the process-wide ``pn.state.busy``.

    panel-material-ui binds every Page to it, so each websocket message of any session
    re-walked every live session's page, several times per slider move: with a class
    connected, that cost grows with the class (docs/performance.md). Assigning a value drops
    the binding but param keeps its watcher on ``pn.state``: that still ran per message and
    session, and kept every closed session's page alive.

    Internals used, checked against Panel 1.9/1.10, param 2.2–2.4 and panel-material-ui
    0.16: ``Parameterized._param__private.ref_watchers`` (a list of ``(names, watcher)``
    pairs param keeps for parameters bound to references). Upstream issue: none found
    (panel-extensions/panel-material-ui has no option to leave ``busy`` unbound).
    ``tests/model/test_compat.py::test_detached_page_internals`` fails loudly when the
    binding changes shape.
    """
    from panel.util import edit_readonly

    with edit_readonly(page):
        page.busy = False
    private = page._param__private
    stale = [
        (names, watcher)
        for names, watcher in private.ref_watchers
        if watcher.inst is pn.state and set(watcher.parameter_names) <= {"busy"}
    ]
    for entry in stale:
        pn.state.param.unwatch(entry[1])
        private.ref_watchers.remove(entry)


def page_busy_binding_present() -> bool:
    """Whether a new Material UI Page still binds ``busy`` to ``pn.state`` through a watcher
    :func:`detach_from_global_busy` can find."""
    import panel_material_ui as pmui

    page = pmui.Page()
    watchers = getattr(getattr(page, "_param__private", None), "ref_watchers", None)
    return isinstance(watchers, list) and any(
        getattr(watcher, "inst", None) is pn.state for _, watcher in watchers
    )


# --- Server-built markup written straight to the page's models -------------------------------


def write_to_rendered_models(component: Any, name: str, value: Any, sent: Any = None) -> None:
    """Set parameter ``name`` of ``component`` (a Panel ``JSComponent`` whose parameter
    only ever flows from the server to the page) to ``value``, and write it straight into
    the data model of each page that renders the component (``sent`` instead, when given:
    the form the page receives, as the component's ``_process_param_change`` gives it).

    Panel's own update of a parameter resolves the component's design, freezes the
    document and diffs the model's properties for every change: for the readouts and
    captions a move rewrites, that is a measured share of the server's time per move
    (docs/performance.md, "CPU per move"). The parameter is kept in step, without events,
    for pages rendered later.

    Panel internals used, checked against Panel 1.9 and 1.10: ``Reactive._models`` (a dict
    of ``ref → (model, parent)`` for every rendered page) and the ``data`` model that
    Panel's ``ReactiveESM`` models carry the component's parameters on. Upstream issue:
    none found (Panel has no public fast path for a one-way parameter).
    ``tests/model/test_compat.py::test_rendered_model_internals`` fails loudly when they
    change.
    """
    import param

    with param.parameterized.discard_events(component):
        setattr(component, name, value)
    for model, _ in component._models.values():
        setattr(model.data, name, value if sent is None else sent)


def rendered_model_internals_present() -> bool:
    """Whether a rendered ``JSComponent`` still keeps its page models in ``_models`` as
    ``(model, parent)`` pairs whose model carries its parameters on ``data``."""
    import param
    from panel.custom import JSComponent

    class Probe(JSComponent):
        text = param.String(default="a")
        _esm = "export function render({ model }) { return document.createElement('div') }"

    probe = Probe()
    model = probe.get_root(Document())
    models = getattr(probe, "_models", None)
    if not isinstance(models, dict) or len(models) != 1:
        return False
    entry = next(iter(models.values()))
    return (
        isinstance(entry, tuple)
        and entry[0] is model
        and getattr(getattr(model, "data", None), "text", None) == "a"
    )


# --- A second standalone document without the first one's model definitions ---------------

CHECKED_BOKEH = ("3.9", "3.10")
"""Bokeh minor versions whose standalone document JSON was read for the entry below."""


def without_model_definitions(docs_json: dict[str, dict]) -> dict[str, dict]:
    """``docs_json`` (from ``bokeh.embed.util.standalone_docs_json_and_render_items``) with
    each document's data model definitions (``defs``) left out, for a document that a page
    draws after another one of the same page: BokehJS registered the definitions when it
    drew the first, and they are the same (every ``DataModel`` subclass this process
    knows, Panel's included; their size is in docs/performance.md).

    Bokeh internal used, checked against Bokeh 3.9 and 3.10: the ``defs`` key of a document's
    JSON, which BokehJS reads as optional. Upstream issue: none found (Bokeh has no public
    way to embed a second document without them).
    ``tests/model/test_compat.py::test_standalone_documents_carry_their_definitions_under_defs``
    fails loudly when it changes.
    """
    return {key: {k: v for k, v in doc.items() if k != "defs"} for key, doc in docs_json.items()}


def model_definitions_key_present() -> bool:
    """Whether a standalone document's JSON still carries its data model definitions, as a
    list, under ``defs`` (what :func:`without_model_definitions` leaves out)."""
    import bokeh
    from bokeh.embed.util import standalone_docs_json_and_render_items
    from bokeh.models import Div

    release = Version(bokeh.__version__).release
    if f"{release[0]}.{release[1]}" not in CHECKED_BOKEH:
        return False
    document = Document()
    document.add_root(Div())
    docs_json, _ = standalone_docs_json_and_render_items([document])
    (doc,) = docs_json.values()
    return isinstance(doc.get("defs"), list) and len(doc["defs"]) > 0 and "roots" in doc


# --- BokehJS rewriting unchanged stylesheets on every paint --------------------------------

UNCHANGED_STYLESHEETS_JS = """\
// app/compat.py: BokehJS writes each canvas renderer's position stylesheet on every paint,
// changed or not; every write makes the next computed-style read recompute styles.
(function (Bokeh) {
  const dom = Bokeh && typeof Bokeh.require === "function" ? Bokeh.require("core/dom") : null;
  const sheet = dom && dom.InlineStyleSheet && dom.InlineStyleSheet.prototype;
  if (!sheet || typeof sheet._update !== "function" || sheet._update.skipsUnchanged) {
    return;
  }
  const write = sheet._update;
  const writeIfChanged = function (css) {
    if (this.el.textContent !== css) {
      write.call(this, css);
    }
  };
  writeIfChanged.skipsUnchanged = true;
  sheet._update = writeIfChanged;
})(window.Bokeh);
"""
"""JavaScript for a page that draws with BokehJS, run after BokehJS loads and before it
draws: a stylesheet write that would not change the stylesheet's text is skipped.

BokehJS (3.5 and later) gives every canvas renderer (axis, grid, title, glyph) an element
with a position stylesheet it rewrites on every paint, and reads its visual properties
from that element's computed style (``VisualProperties._get_css_value``) and the plot's
font size from its own. Writing a ``<style>`` element's text, even the same text, marks the
styles dirty, so each of those reads made the browser recompute styles: a dozen times per
figure per paint. With the unchanged writes skipped, the reads find clean styles (the
saving is in docs/performance.md). The offline page runs it before BokehJS draws
(app/export/page.py); a served page once its document is drawn (app/served/session.py).

Bokeh internal used, checked against Bokeh 3.9 and 3.10: ``core/dom``'s
``InlineStyleSheet._update(css)``, through which ``replace``, ``prepend`` and ``append``
write the element's text. Upstream issue: bokeh/bokeh#15286 (visual property reads consult
the CSS cascade on every paint). ``tests/model/test_compat.py`` fails loudly when BokehJS's
source no longer has that method, and ``tests/export`` when the page runs without it.
"""


def skip_unchanged_stylesheets(document: Document) -> None:
    """Run :data:`UNCHANGED_STYLESHEETS_JS` in the browser once ``document`` is drawn: a
    served session's later paints (every slider move's) skip the unchanged writes."""
    from bokeh.models import CustomJS

    document.js_on_event("document_ready", CustomJS(code=UNCHANGED_STYLESHEETS_JS))


INLINE_STYLESHEET_WRITE = "_update(css) {\n            this.el.textContent = css;\n        }"
"""BokehJS's ``InlineStyleSheet`` write, as its unminified source (bokeh.js) has it."""

INLINE_STYLESHEET_REPLACE = "replace(css, styles) {\n            this._update("
"""How ``InlineStyleSheet.replace`` (the renderers' position writes) reaches the write."""


def inline_stylesheet_write_present() -> bool:
    """Whether this Bokeh is a checked version whose BokehJS writes inline stylesheets
    through ``InlineStyleSheet._update`` (what :data:`UNCHANGED_STYLESHEETS_JS` wraps)."""
    import bokeh
    from bokeh.util.paths import bokehjs_path

    release = Version(bokeh.__version__).release
    if f"{release[0]}.{release[1]}" not in CHECKED_BOKEH:
        return False
    text = (bokehjs_path() / "js" / "bokeh.js").read_text(encoding="utf-8")
    # Two classes bear the name: the model (models/dom/stylesheets) and core/dom's, which
    # owns the <style> element and writes it.
    classes = text.split("class InlineStyleSheet extends StyleSheet {")[1:]
    return any(
        INLINE_STYLESHEET_WRITE in body[:1500] and INLINE_STYLESHEET_REPLACE in body[:1500]
        for body in classes
    )


# --- An image's numbers as BokehJS's own array, shape attached ---------------------------

BOKEH_IMAGE_MODULE = Path(__file__).parent / "page" / "web" / "shared" / "bokeh_image.js"
"""The browser module both pages' drawing code imports ``bokehImage(values, rows, columns)``
from: the one place it turns a frame's flat float32 image into what a Bokeh ``image`` glyph
draws.

The public form of an image is a list of row arrays, which BokehJS copies back into one
typed array: per frame at n = 1024, a million numbers copied twice and 1,024 arrays made,
for every heatmap a key press redraws (the first screen's ~11 ms offline frame).
BokehJS's own n-dimensional array wraps the typed array the frame already holds.

Bokeh internal used, checked against Bokeh 3.9 and 3.10: ``core/util/ndarray``'s
``ndarray(init, {shape})``, reached with ``Bokeh.require``. Upstream issue: none found
(BokehJS exports no public constructor for its n-dimensional arrays; ``Bokeh.LinAlg`` is
not loaded on these pages). ``tests/model/test_compat.py`` fails loudly when BokehJS's
source no longer has it, and the browser and export suites draw no heatmap without it.
"""

BOKEH_NDARRAY_MODULE = '"core/util/ndarray":'
"""How bokeh.js's module table names the module :data:`BOKEH_IMAGE_MODULE` requires."""

BOKEH_NDARRAY_FUNCTION = "function ndarray(init, { dtype, shape } = {}) {"
"""The constructor :data:`BOKEH_IMAGE_MODULE` calls, as bokeh.js's unminified source has it."""


def bokeh_ndarray_present() -> bool:
    """Whether this Bokeh is a checked version whose BokehJS has the ``core/util/ndarray``
    module and its ``ndarray(init, {dtype, shape})`` (what :data:`BOKEH_IMAGE_MODULE` calls)."""
    import bokeh
    from bokeh.util.paths import bokehjs_path

    release = Version(bokeh.__version__).release
    if f"{release[0]}.{release[1]}" not in CHECKED_BOKEH:
        return False
    text = (bokehjs_path() / "js" / "bokeh.js").read_text(encoding="utf-8")
    return BOKEH_NDARRAY_MODULE in text and BOKEH_NDARRAY_FUNCTION in text


# --- The data model definitions of every served document, encoded once -------------------


LIBRARY_PACKAGES = ("panel.", "panel_material_ui.")
"""Where the component classes are defined whose data model definitions a served document
may leave out (:func:`leave_out_unshown_definitions`)."""

_shown_library_components: Callable[[], Iterable[type]] | None = None
"""The library's component classes a served page may show, asked at each document (a module
imported later adds its classes); None: every definition is sent."""


def _component_classes() -> list[type]:
    """Every ReactiveESM class this process defined, abstract ones included."""
    from panel.custom import ReactiveESM

    found: list[type] = []
    stack: list[type] = [ReactiveESM]
    while stack:
        cls = stack.pop()
        if cls not in found:
            found.append(cls)
            stack.extend(cls.__subclasses__())
    return found


def unshown_definitions(shown: Iterable[type]) -> frozenset[type]:
    """The data model classes of the Panel and panel-material-ui component classes (the
    ReactiveESM classes of :data:`LIBRARY_PACKAGES`) other than ``shown``: the ones no page
    of this app draws. Every other data model (the app's, any other package's, Panel's
    ones that are not components) stays."""
    shown = set(shown)
    return frozenset(
        cls._data_model
        for cls in _component_classes()
        if cls not in shown
        and cls.__module__.startswith(LIBRARY_PACKAGES)
        and getattr(cls, "_data_model", None) is not None
    )


def _definitions_cached(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Serializer.encode`` that encodes the list of data model classes a document's JSON
    starts with (its ``defs``) once per list of classes, without the ones
    :func:`leave_out_unshown_definitions` leaves out, and everything else as before."""
    from bokeh.core.has_props import MetaHasProps

    cache: dict[tuple[Any, ...], Any] = {}

    def encode(self: Any, obj: Any) -> Any:
        if obj.__class__ is list and obj and isinstance(obj[0], MetaHasProps):
            ask = _shown_library_components
            shown = None if ask is None else tuple(ask())
            key = (tuple(obj), shown)
            cached = cache.get(key)
            if cached is not None:
                return cached
            if shown is not None:
                left_out = unshown_definitions(shown)
                obj = [cls for cls in obj if cls not in left_out]
            buffers = len(self._buffers)
            encoded = original(self, obj)
            # Only plain values are kept: a definition that took a binary buffer would
            # need that buffer in each message.
            if len(self._buffers) == buffers:
                cache[key] = encoded
            return encoded
        return original(self, obj)

    encode.__wrapped__ = original  # type: ignore[attr-defined]
    return encode


def model_definitions_encoding_checked() -> bool:
    """Whether this Bokeh is one the definitions cache was checked against and its
    ``Document.to_json`` still encodes the data model classes as one list through
    ``Serializer.encode``, before the roots."""
    import bokeh
    from bokeh.core.serialization import Serializer

    release = Version(bokeh.__version__).release
    if f"{release[0]}.{release[1]}" not in CHECKED_BOKEH:
        return False
    source = inspect.getsource(Document.to_json)
    encode = getattr(Serializer.encode, "__wrapped__", Serializer.encode)
    return "defs = serializer.encode(data_models)" in source and callable(encode)


def cache_model_definitions() -> bool:
    """Encode the data model definitions each served document carries once per process.

    Every document's JSON (the PULL-DOC a page asks for) starts with the definitions of
    every ``DataModel`` class the process knows (~156 here, Panel's and panel-material-ui's
    among them; 162 kB), encoded afresh each time: measured, 12–33 ms of the 20–42 ms it
    takes to serialise an embedded first screen's document, the largest share of a
    student's arrival left (docs/performance.md). They only change when a class is added,
    which changes the list and so the cache's key.

    Bokeh internal used, checked against Bokeh 3.9 and 3.10: ``Document.to_json`` encodes
    ``[every DataModel class]`` with ``Serializer.encode`` and the definitions are plain
    values. Upstream issue: none found (bokeh/bokeh has none on caching model definitions).
    ``tests/model/test_compat.py::test_model_definitions_are_encoded_once`` fails loudly
    when it changes. Returns whether it was applied; idempotent.
    """
    from bokeh.core.serialization import Serializer

    if hasattr(Serializer.encode, "__wrapped__"):
        return True
    if not model_definitions_encoding_checked():
        log.warning(
            "sdpa-sim: Bokeh is not one the definitions cache was checked against (%s): "
            "each document encodes its model definitions afresh",
            ", ".join(CHECKED_BOKEH),
        )
        return False
    Serializer.encode = _definitions_cached(Serializer.encode)  # type: ignore[method-assign]
    return True


def leave_out_unshown_definitions(shown: Callable[[], Iterable[type]]) -> bool:
    """Send each served document only the data model definitions its pages may draw: of
    the library's component classes, only those ``shown()`` gives (the ones a page of the
    app shows: :func:`app.server.panel_tuning.shown_library_components`).

    Importing panel-material-ui defines a data model for each of its ~120 components, and
    Bokeh puts every data model the process knows into every document it serialises:
    measured, 140 kB of the embedded first screen's 154 kB document, for the one Material
    UI component the full page shows (its Page) and none the embedded page shows; an empty
    Panel page's whole document is 5.8 kB (docs/performance.md). BokehJS needs a definition
    only to build a model of that type, and the definitions are flat (a definition names
    its properties, not a base), so leaving out those of components no page builds changes
    nothing a page draws. A page that did build one would fail to (BokehJS: unknown model);
    ``tests/model/test_served_definitions.py`` builds every page and section the app has
    and checks that each data model they use is defined.

    Bokeh internal used, as :func:`cache_model_definitions` (which it applies): the list of
    data model classes ``Document.to_json`` encodes; checked against Bokeh 3.9 and 3.10.
    Upstream: holoviz/panel#8432 (a component's definition sent with its first model when
    its class is made after the page loaded) is the nearest; none on leaving definitions
    out. Returns whether it was applied.
    """
    global _shown_library_components
    if not cache_model_definitions():
        return False
    _shown_library_components = shown
    return True


def send_every_definition() -> None:
    """Undo :func:`leave_out_unshown_definitions`: every document carries every definition."""
    global _shown_library_components
    _shown_library_components = None


# --- All of the above, checked at once -------------------------------------------------------


def internals_changed() -> list[str]:
    """What this module relies on in Panel and Bokeh that is not as it was checked, each in
    a few words naming what it keeps working; empty when everything is in place.

    :func:`warn_about_changed_internals` says so as a server process starts, so that a
    Panel or Bokeh past the checked versions (``pip install -U``) says what may misbehave
    before a class meets it; ``tests/model/test_compat.py`` asserts each check on its own.
    A check that raises counts as changed. Takes a fraction of a second (it builds a
    Material UI page and renders one small component).
    """
    from panel.custom import JSComponent

    checks: dict[str, Callable[[], bool]] = {
        f"Panel {pn.__version__}": panel_version_checked,
        "the page-resource cache (Panel's bundle_resources)": lambda: bundle_signature_matches(
            getattr(panel_server.bundle_resources, "__wrapped__", panel_server.bundle_resources)
        ),
        "the check of every value a page sends (Panel's _process_property_change)": (
            lambda: page_change_hooks_present(JSComponent)
        ),
        "the one-line log of a refused message (Bokeh's ProtocolHandler)": (
            refused_message_logging_checked
        ),
        "the pacing of a session's updates (Panel's pending writes)": write_bookkeeping_present,
        "a page's own busy flag (Material UI's Page)": page_busy_binding_present,
        "the lesson's markup written to the page (JSComponent's models)": (
            rendered_model_internals_present
        ),
        "the offline file's smaller documents (Bokeh's model definitions)": (
            model_definitions_key_present
        ),
        "the cached model definitions of each new page (Bokeh's Serializer)": (
            model_definitions_encoding_checked
        ),
        "stylesheets left alone when unchanged (BokehJS's InlineStyleSheet)": (
            inline_stylesheet_write_present
        ),
        "the heatmap's images (BokehJS's ndarray)": bokeh_ndarray_present,
    }
    changed = []
    for what, check in checks.items():
        try:
            in_place = check()
        except Exception:  # a probe of a changed internal may fail in any way
            in_place = False
        if not in_place:
            changed.append(what)
    return changed


def changed_internals_warnings() -> list[str]:
    """One warning line per entry of :func:`internals_changed`, naming what may misbehave
    and the versions checked; none when all are in place."""
    checked = f"Panel {', '.join(CHECKED_PANEL)} and Bokeh {', '.join(CHECKED_BOKEH)}"
    return [
        f"sdpa-sim: warning: {what}: not as checked with {checked}, so it may misbehave; "
        "`pip install .` installs versions that were"
        for what in internals_changed()
    ]


def warn_about_changed_internals() -> None:
    """Print :func:`changed_internals_warnings` on stderr: ``sdpa-sim`` calls it once in a
    process that serves, before its first page (each worker of ``--num-procs``)."""
    for line in changed_internals_warnings():
        print(line, file=sys.stderr, flush=True)
