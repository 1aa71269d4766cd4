"""What ``app/main.py`` can still refuse when it is served by plain ``panel serve app/main.py``.

``sdpa-sim`` checks every request before Bokeh reads it (:mod:`app.server.guarded_http`). Plain
``panel serve`` runs no code of this app before its first session: the first place the app
can act is its script, and the first hook Panel then offers ahead of Bokeh is
``pn.config.authorize_callback``. Set outside any session, Panel runs it for each page
request before Bokeh looks the session up or builds one (``DocHandler.get``); set inside a
session, only after that session is built. So the first page the process serves
installs :func:`authorize_request` as the process's callback, and from then on a page
request is refused (Panel's 403 with :data:`REFUSED_PAGE`) when it carries

- a ``bokeh-*`` parameter (``bokeh-absolute-url`` would load the page's scripts from
  another site, ``bokeh-session-id`` choose a session, ``bokeh-token`` fail inside Bokeh)
  or a ``Bokeh-Session-Id`` header, read as :class:`~app.server.request_guard.RequestGuard` reads
  them;

and a page too long for its session to keep is redirected without what does not fit, as
``sdpa-sim`` does (:func:`app.server.request_guard.fitted_page`, with Tornado's 302). The page of
a request carrying a reserved parameter is not built either (:func:`reserved_in_request`,
which ``app/main.py`` asks): the first request, and any session Bokeh builds otherwise.

What needs ``sdpa-sim`` (:data:`NEEDS_SDPA_SIM`): the Host check, ``frame-ancestors``,
signed session ids, the plain 4xx for any path before Bokeh (Panel's ``/components/``
route among them, which imports any module a URL names), the first request's
``bokeh-token`` (Bokeh decodes it before the script has ever run), and the websocket
message size limit (``panel serve`` keeps Bokeh's 20 MiB unless given
``--websocket-max-message-size``).
"""

from __future__ import annotations

import contextvars
import sys
from pathlib import Path
from typing import Any

from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop

from app.server.guarded_http import GuardedHTTPServer
from app.server.request_guard import SESSION_HEADER, RequestGuard, fitted_page, is_app_path

REFUSED_TEXT = (
    "This address carries parameters only the server itself uses (bokeh-…), or a "
    "Bokeh-Session-Id header: load the page without them."
)
"""What a refused page says (the words of ``sdpa-sim``'s 400)."""
REFUSED_PAGE = Path(__file__).with_name("refused_page.html")
"""The page Panel writes for a refused request (its template, which Panel reads from a
file; it has no placeholder): plain words, nothing loaded from elsewhere (Panel's own
page loads web fonts). Its words are :data:`REFUSED_TEXT`; a test keeps them the same."""

NEEDS_SDPA_SIM = (
    "sdpa-sim: plain `panel serve app/main.py` refuses bokeh-* parameters and redirects "
    "over-long addresses from its second page on; the Host check, frame-ancestors, signed "
    "sessions, plain 4xx answers before Bokeh, Panel's /components/ route kept to the app's "
    "own files (it imports any module a URL names) and the 1 MiB websocket message limit "
    "need `sdpa-sim` (docs/security.md)"
)
"""The one line plain ``panel serve`` prints, at its first page."""

_PAGE_GUARD = RequestGuard()
"""Only its parameter rules are used here: the hosts a plain server answers to are
``panel serve``'s options, which the app cannot read."""

_installed = False


def guarded_process() -> bool:
    """Whether this process serves through ``sdpa-sim``'s guard (one process or a worker):
    its Tornado ``HTTPServer`` is configured as :class:`GuardedHTTPServer`."""
    return issubclass(HTTPServer.configured_class(), GuardedHTTPServer)


def _target(request: Any) -> str:
    """The request's target as sent (Bokeh's request proxy drops ``bokeh-session-id``
    from its parsed arguments, so they are not read)."""
    return str(getattr(request, "uri", "") or "")


def refusal_for(request: Any) -> str | bool:
    """The answer Panel's authorize callback gives a page request: True to serve it,
    False to refuse it, or the address to redirect it to."""
    if request is None:
        return True
    headers = getattr(request, "headers", None) or {}
    if any(name.lower() == SESSION_HEADER.lower() for name in headers):
        return False
    path, _, query = _target(request).partition("?")
    if _PAGE_GUARD.check_parameters(path, query) is not None:
        return False
    if is_app_path(path, _PAGE_GUARD.app_paths):
        fitted = fitted_page(path, query)
        if fitted is not None:
            return dict(fitted.headers)["Location"]
    return True


def reserved_in_request(request: Any) -> bool:
    """Whether ``request`` (a session's) carries what only Bokeh may read: its page is
    then not built."""
    return refusal_for(request) is False


def authorize_request(user: Any, path: str) -> str | bool:
    """Panel's ``authorize_callback``: the current document's request, checked by
    :func:`refusal_for` (Panel calls it with the user and the path only)."""
    import panel as pn

    doc = pn.state.curdoc
    context = doc.session_context if doc is not None else None
    return refusal_for(context.request if context is not None else None)


def authorize_session(user: Any, path: str) -> str | bool:
    """:func:`authorize_request` as this session's own callback: Panel skips a session's
    callback that is the process's one, and the process's may be installed (by the first
    page's session) before Panel asks this session's."""
    return authorize_request(user, path)


def _install(callback: Any = authorize_request) -> None:
    """Set ``callback`` and its page in Panel's config (for the current session, if one
    is)."""
    import panel as pn

    pn.config.auth_template = str(REFUSED_PAGE)
    pn.config.authorize_callback = callback


def protect_plain_serve() -> None:
    """Under plain ``panel serve``: check this session's page with :func:`authorize_request`
    before Panel writes it; at the first page, print :data:`NEEDS_SDPA_SIM` and, once
    that page is built, install the callback for every later page, ahead of Bokeh (see
    the module). Does nothing under ``sdpa-sim``, whose guard does all of it first."""
    global _installed
    if guarded_process():
        return
    _install(authorize_session)
    if _installed:
        return
    _installed = True
    print(NEEDS_SDPA_SIM, file=sys.stderr, flush=True)
    # Panel keeps a value set inside a session for that session only: the process's is set
    # in an empty context after this script (while it runs, Bokeh's current document is
    # this session's), where no session is current.
    IOLoop.current().add_callback(lambda: contextvars.Context().run(_install))
