"""What is the same on every student's page, published once per process at an address named
by its content: the figures' Bokeh items, the lesson's markup and its drawing config.

A served component used to carry these in each session's document (about 150 kB of a
student's first document and 170 kB of the lesson's), serialised for every student and
downloaded on every visit. Here each is encoded once, kept by the hash of its bytes, and
served at ``page-data/<hash>.json`` beside the page (``/page-data/…`` and
``/main/page-data/…``), cacheable for good: new content is a new address. The component
carries only the address (:class:`SharedData`).

- The route is a Tornado handler ``panel serve`` mounts with ``--plugins
  app.served.page_data`` (``sdpa-sim`` passes it, its workers too). Without it (plain
  ``panel serve``, a notebook) components carry the data inline, as before.
- Bokeh names models ``p<counter>`` per process; the ids in a payload are renamed in order
  of appearance (:func:`canonical_ids`), so every worker of ``--num-procs`` publishes the
  same bytes at the same address. A worker asked for an address it has not published (a
  page built by another worker) first builds what every page draws (:func:`register`); for
  anything else it answers 404, and the page asks its session for the data instead
  (app/page/web/served/page_data.js).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Hashable
from typing import Any

import param
from tornado.web import HTTPError, RequestHandler

ENABLED_ENV = "SDPA_SIM_PAGE_DATA"
"""Set (to ``1``) where the route is mounted, and inherited by the workers started there."""

DATA_FOLDER = "page-data"
"""The data's address relative to the page's (``/main`` → ``/page-data/<hash>.json``)."""

DIGEST_CHARS = 32
"""How many hex digits of the payload's SHA-256 name it."""

DATA_PATTERN = rf"/(?:main/)?{DATA_FOLDER}/([0-9a-f]{{{DIGEST_CHARS}}})\.json"
"""The route's paths, the payload's digest captured."""

CACHE_CONTROL = "public, max-age=31536000, immutable"
"""A payload never changes at its address: a browser keeps it for a year, never asking."""

BOKEH_ID = re.compile(r"p\d+")
"""How Bokeh names a model (``settings.simple_ids``, its default)."""


def canonical_ids(value: Any, prefix: str) -> Any:
    """``value`` (JSON data holding Bokeh documents) with every model id renamed
    ``<prefix><n>`` in order of first appearance: the same figures built in any process
    give the same data. Ids are the values of ``id`` and ``root_id`` keys; every string
    equal to one of them (references, lists of ids) is renamed too; tuples become lists, as
    in JSON."""
    ids: dict[str, str] = {}

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for key, item in node.items():
                if key in ("id", "root_id") and isinstance(item, str) and BOKEH_ID.fullmatch(item):
                    ids.setdefault(item, f"{prefix}{len(ids)}")
                collect(item)
        elif isinstance(node, list | tuple):
            for item in node:
                collect(item)

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: rename(item) for key, item in node.items()}
        if isinstance(node, list | tuple):
            return [rename(item) for item in node]
        if isinstance(node, str):
            return ids.get(node, node)
        return node

    collect(value)
    return rename(value)


class PageDataStore:
    """Payloads by the digest of their encoding (thread-safe)."""

    def __init__(self) -> None:
        self._bodies: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def publish(self, payload: Any) -> str:
        """Keep ``payload`` (JSON data) and return its address relative to the page's."""
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        digest = hashlib.sha256(body).hexdigest()[:DIGEST_CHARS]
        with self._lock:
            self._bodies.setdefault(digest, body)
        return f"{DATA_FOLDER}/{digest}.json"

    def body(self, digest: str) -> bytes | None:
        """The encoded payload published under ``digest``, or None."""
        with self._lock:
            return self._bodies.get(digest)


STORE = PageDataStore()
"""This process's published payloads."""

_PUBLISHED: dict[Hashable, tuple[str, dict[str, Any]]] = {}
_PUBLISHED_LOCK = threading.Lock()


def published(key: Hashable, build: Callable[[], dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The address and payload of ``key``: built by ``build`` and published the first time
    (encoded once per process, whatever the number of students)."""
    with _PUBLISHED_LOCK:
        known = _PUBLISHED.get(key)
        if known is None:
            payload = build()
            known = _PUBLISHED[key] = (STORE.publish(payload), payload)
        return known


_REGISTERED: dict[Hashable, Callable[[], dict[str, Any]]] = {}


def register(key: Hashable, build: Callable[[], dict[str, Any]]) -> None:
    """Let this process publish ``key``'s payload when asked for an address it has not
    published yet (a page another worker built): ``build`` then runs here once."""
    _REGISTERED[key] = build


def publish_registered() -> None:
    """Publish every registered payload not published yet."""
    for key, build in list(_REGISTERED.items()):
        published(key, build)


_BUILDING: list[concurrent.futures.Future] = []
_BUILDING_LOCK = threading.Lock()


def publish_registered_soon() -> concurrent.futures.Future:
    """Publish what every page draws (registered so far: the pages' modules register as
    they are imported) in a thread of its own, once per process: the future of that work (a
    worker asked for a page another worker built waits for it there, not on its event loop)."""
    with _BUILDING_LOCK:
        if not _BUILDING:
            pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="page-data")
            _BUILDING.append(pool.submit(publish_registered))
            pool.shutdown(wait=False)
        return _BUILDING[0]


def enable() -> list[str]:
    """Publish page data in this process and those it starts: the ``panel serve`` arguments
    that mount the route (``sdpa-sim`` calls this before serving)."""
    os.environ[ENABLED_ENV] = "1"
    return ["--plugins", __name__]


def enabled() -> bool:
    """Whether the route is mounted here (:func:`enable` ran here or in the process that
    started this one)."""
    return os.environ.get(ENABLED_ENV) == "1"


class PageDataHandler(RequestHandler):
    """``GET /page-data/<digest>.json``: a payload this process published, else 404."""

    async def get(self, digest: str) -> None:
        """Write the payload, cacheable for good, or answer 404."""
        body = STORE.body(digest)
        if body is None:
            # A page another worker built: what every page draws is built here too, off
            # the event loop (begun as the route was mounted).
            await asyncio.wrap_future(publish_registered_soon())
            body = STORE.body(digest)
        if body is None:
            raise HTTPError(404)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", CACHE_CONTROL)
        self.set_etag_header()
        if self.check_etag_header():
            self.set_status(304)
            return
        self.write(body)

    def compute_etag(self) -> str | None:
        """The digest the address names: the same bytes in every worker."""
        return f'"{self.path_args[0]}"' if self.path_args else None


ROUTES = [(DATA_PATTERN, PageDataHandler)]
"""What ``panel serve --plugins app.served.page_data`` mounts."""


class SharedData(param.Parameterized):
    """Mixin (before the component's base among its bases) for a served component whose
    page draws from data the same for every student: published (``shared``, its address)
    where the route is mounted, else carried ``inline``. A page that cannot fetch the
    address asks with ``{"page_data": "inline"}`` (:meth:`take_shared_request`)."""

    shared = param.String(
        default="",
        doc="The address of the component's page data, relative to the page's "
        "(app/served/page_data.py); empty: the data is inline.",
    )
    inline = param.Dict(
        default={},
        doc="The component's page data, when it is not published or the page could not fetch it.",
    )

    def share(self, key: Hashable, build: Callable[[], dict[str, Any]]) -> None:
        """Give the page the payload ``build`` makes (once per process for each ``key``): by
        address where the route is mounted, else inline."""
        self._shared_key = (key, build)
        if enabled():
            self.shared = published(key, build)[0]
        else:
            self.inline = published(key, build)[1]

    def page_data(self) -> dict[str, Any]:
        """The payload the page draws from, whichever way it reaches the page."""
        return published(*self._shared_key)[1]

    def take_shared_request(self, msg: Any) -> bool:
        """Answer ``{"page_data": "inline"}`` with the data inline; whether ``msg`` was it."""
        if not (isinstance(msg, dict) and msg.get("page_data") == "inline"):
            return False
        if getattr(self, "_shared_key", None) is not None and not self.inline:
            self.inline = self.page_data()
        return True
