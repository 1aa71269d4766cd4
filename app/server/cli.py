"""The ``sdpa-sim`` console command: serve the simulation, or export it as one HTML file.

``sdpa-sim [--port …]`` serves the app (the default) with ``panel serve`` in this process;
``sdpa-sim --num-procs N`` serves it from N worker processes behind a small front (see
:mod:`app.server.front`); ``sdpa-sim export OUT.html`` writes a self-contained page that needs no
server (see :mod:`app.export`).

Either way every request passes :mod:`app.server.request_guard` (hosts, Bokeh's own parameters,
framing) and session ids are signed, so a link cannot choose one.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import sdpa_core
from app.page.kernel_data import D_MAX_DEFAULT, N_MAX_DEFAULT
from app.served.class_bus import BUS_ENV
from app.served.classroom import (
    PRESENT_PARAMETER,
    PRESENTER_KEY_ENV,
    checked_presenter_key,
    new_presenter_key,
)
from app.server.origins import embed_origin, websocket_origins

if TYPE_CHECKING:
    # Imported where used: it imports bokeh.util.token, which must come after
    # sign_sessions() (see there).
    from app.server.request_guard import RequestGuard

APP_DIR = Path(__file__).resolve().parent.parent
MAIN = APP_DIR / "main.py"
STATIC_DIR = APP_DIR.parent / "static"
STATIC_PREFIX = "assets"
"""URL prefix of the project's static/ folder (Panel reserves /static)."""
WEBSOCKET_MAX_MESSAGE_BYTES = 1024 * 1024
"""The largest websocket message a page's client may send (Bokeh's default is 20 MiB).

The largest a page sends legitimately is a change of its address: ``href``, ``search`` and
``hash`` of at most 64 KiB characters each (:mod:`app.served.location`), a few hundred KiB as
UTF-8 JSON at worst; widget values are numbers and short text. Tornado closes a
connection whose message is longer (code 1009) before it has read more than this, so a
hostile client's 19 MB ``href`` is never buffered whole nor kept."""


WEBSOCKET_COMPRESSION_LEVEL = 1
"""The page's websocket negotiates per-message deflate. Its largest message, the page's
document (~590 KiB of JSON), costs 6–8 ms of CPU at level 1 for 183 KiB on the wire, against
17 ms at zlib's default 6 for 161 KiB: an arrival's CPU is what a class waits for."""


def build_parser() -> argparse.ArgumentParser:
    """The command-line options of ``sdpa-sim``."""
    parser = argparse.ArgumentParser(
        prog="sdpa-sim",
        description="Serve the scaled dot-product attention simulation in the browser.",
    )
    parser.add_argument("--port", type=int, default=5006, help="port to listen on (5006)")
    parser.add_argument("--address", default="localhost", help="address to listen on (localhost)")
    parser.add_argument("--show", action="store_true", help="open the page in a browser")
    parser.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="a host allowed to open the page's websocket, e.g. the public host name of "
        "this server; repeat for several (default: localhost and the port served). "
        "HOST:443 and HOST both admit https://HOST, which is what browsers send",
    )
    parser.add_argument(
        "--allow-embed-from",
        action="append",
        default=[],
        type=embed_origin,
        metavar="ORIGIN",
        help="a site allowed to show the app in an iframe, e.g. https://courses.example.edu "
        "(its websocket origin is allowed too); repeat for several (default: only the app's "
        "own origin and localhost)",
    )
    parser.add_argument(
        "--num-procs",
        type=int,
        default=1,
        metavar="N",
        help="serve from N worker processes (0: one per core) behind a front process that "
        "listens on --address:--port and sends each new page to the worker with the fewest "
        "sessions and each page's websocket to the worker that holds its session "
        "(default 1: one process, no front)",
    )
    parser.add_argument(
        "--presenter-key",
        type=presenter_key,
        default=None,
        metavar="KEY",
        help="the key of the presenter link printed at start (class mode: the page opened "
        "with it can send its scene to every student's page); default: a new random key "
        "at each start. Class mode needs one process: with --num-procs above 1 it is off",
    )
    parser.add_argument(
        "--class-bus",
        type=class_bus_url,
        default=None,
        metavar="URL",
        help="the Redis server the processes of one class talk through, e.g. "
        "redis://127.0.0.1:6379/0: class mode then works across --num-procs workers and "
        "across hosts that share it and the presenter key",
    )
    parser.add_argument("--version", action="version", version=f"sdpa-sim {sdpa_core.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="{export}")
    export = commands.add_parser(
        "export",
        help="write the simulation as one self-contained HTML file that needs no server",
        description="Write the simulation as one self-contained HTML file: no server, no "
        "network access, opens from disk or from a learning platform. Larger limits make "
        "a larger file (at most 5 MB).",
    )
    export.add_argument("out", metavar="OUT.html", type=Path, nargs="?", help="the file to write")
    export.add_argument(
        "--site",
        metavar="DIR",
        type=Path,
        help="instead of OUT.html, write a static site into DIR: index.html (the file) and "
        "course-page.html (an example course page that embeds it)",
    )
    export.add_argument(
        "--n-max", type=int, default=N_MAX_DEFAULT, help=f"largest n offered ({N_MAX_DEFAULT})"
    )
    export.add_argument(
        "--d-max", type=int, default=D_MAX_DEFAULT, help=f"largest d_k offered ({D_MAX_DEFAULT})"
    )
    export.add_argument(
        "--seed", type=int, default=0, help="seed of the embedded queries and keys (0)"
    )
    return parser


def presenter_key(text: str) -> str:
    """``--presenter-key``'s value, checked (argparse shows the reason when it is refused)."""
    try:
        return checked_presenter_key(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def class_bus_url(text: str) -> str:
    """``--class-bus``'s value: a redis://, rediss:// or unix:// URL."""
    if not text.startswith(("redis://", "rediss://", "unix://")) or len(text) > 2000:
        raise argparse.ArgumentTypeError("the class bus is a redis://HOST:PORT/DB URL")
    return text


def presenter_link(options: argparse.Namespace, key: str) -> str:
    """The presenter link of the server ``options`` describe (a wildcard address is shown
    as ``localhost``: the instructor opens it on the serving machine or replaces the host)."""
    host = options.address
    if host in ("", "0.0.0.0", "::"):
        host = "localhost"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{options.port}/main?{PRESENT_PARAMETER}={key}"


def start_class_mode(options: argparse.Namespace, workers: int) -> str:
    """Give this process and the ones it starts the presenter key (class mode); return the
    line to print: the presenter link, or why class mode is off."""
    if options.class_bus:
        os.environ[BUS_ENV] = options.class_bus
    else:
        os.environ.pop(BUS_ENV, None)
        if workers > 1:
            os.environ.pop(PRESENTER_KEY_ENV, None)
            return (
                "sdpa-sim: class mode is off with --num-procs above 1 unless the processes "
                "share a --class-bus"
            )
    key = options.presenter_key or new_presenter_key()
    os.environ[PRESENTER_KEY_ENV] = key
    return f"sdpa-sim: presenter link (keep it to yourself): {presenter_link(options, key)}"


def check_port(options: argparse.Namespace) -> None:
    """Exit with a message if ``--port`` is not a TCP port."""
    if not 0 < options.port < 65536:
        raise SystemExit(f"sdpa-sim: --port must be between 1 and 65535: got {options.port}")


def app_arguments() -> list[str]:
    """The ``panel serve`` options that say what is served besides the app (its index, the
    project's static files, the session's own channel: app/served/channel.py, the pages' shared
    data: app/served/page_data.py), how large a client's websocket message may be and that the
    websocket is compressed."""
    from app.served.channel import enable as enable_channel
    from app.served.page_data import enable as enable_page_data

    arguments = ["--index", "main", *enable_channel(), *enable_page_data()]
    arguments += ["--websocket-max-message-size", str(WEBSOCKET_MAX_MESSAGE_BYTES)]
    arguments += ["--websocket-compression-level", str(WEBSOCKET_COMPRESSION_LEVEL)]
    if STATIC_DIR.is_dir():
        arguments += ["--static-dirs", f"{STATIC_PREFIX}={STATIC_DIR}"]
    return arguments


def allowed_origins(options: argparse.Namespace) -> list[str]:
    """The ``--allow-websocket-origin`` entries ``panel serve`` gets: the user's and those of
    ``--allow-embed-from``, each in the forms browsers send (see :mod:`app.server.origins`); none
    if neither option was given (Bokeh then allows ``localhost:PORT``)."""
    return websocket_origins(options.allow_websocket_origin, options.allow_embed_from, options.port)


def request_guard(options: argparse.Namespace) -> RequestGuard:
    """What every request of the server ``options`` describe must pass."""
    from app.server.request_guard import RequestGuard

    return RequestGuard.for_server(
        options.address,
        websocket_origins=options.allow_websocket_origin,
        embed_origins=options.allow_embed_from,
    )


def serve_arguments(options: argparse.Namespace) -> list[str]:
    """The ``panel serve`` command line for the parsed ``options`` (one process)."""
    check_port(options)
    arguments = ["serve", str(MAIN), "--port", str(options.port), "--address", options.address]
    arguments += app_arguments()
    for origin in allowed_origins(options):
        arguments += ["--allow-websocket-origin", origin]
    if options.show:
        arguments.append("--show")
    return arguments


def worker_arguments(options: argparse.Namespace, index: int, unix_socket: Path) -> list[str]:
    """The ``panel serve`` command line of worker ``index`` of ``--num-procs``.

    It serves what one process serves. It listens on a Unix socket of its own that nothing
    connects to (Bokeh's server must listen on something; clients' connections arrive from
    the front, see :mod:`app.server.worker`). The websocket origins it allows are those the public
    address allows: Bokeh's default for a TCP port, ``localhost:PORT``, has to be given
    explicitly to a server on a Unix socket, which otherwise allows none. Its log lines
    name the worker.
    """
    check_port(options)
    origins = allowed_origins(options) or [f"localhost:{options.port}"]
    arguments = ["serve", str(MAIN), "--unix-socket", str(unix_socket), *app_arguments()]
    for origin in origins:
        arguments += ["--allow-websocket-origin", origin]
    arguments += ["--log-format", f"%(asctime)s [worker {index}] %(message)s"]
    return arguments


def serve_workers(options: argparse.Namespace, workers: int) -> int:
    """Serve with ``workers`` worker processes behind the front; return the exit code."""
    from app.server.front import FrontConfig, serve

    check_port(options)
    config = FrontConfig(
        address=options.address,
        port=options.port,
        workers=workers,
        serve_arguments=lambda index, path: worker_arguments(options, index, path),
        show=options.show,
        guard=request_guard(options),
    )
    return serve(config)


def export(options: argparse.Namespace) -> str:
    """Write the page ``sdpa-sim export`` asks for; return the line that reports it."""
    from app.export import export_html

    if (options.out is None) == (options.site is None):
        raise SystemExit("sdpa-sim export: give either OUT.html or --site DIR")
    if options.site is not None:
        return export_site_command(options)
    if not options.out.parent.is_dir():
        raise SystemExit(f"sdpa-sim export: the folder {options.out.parent} does not exist")
    try:
        size = export_html(options.out, n_max=options.n_max, d_max=options.d_max, seed=options.seed)
    except ValueError as error:
        raise SystemExit(f"sdpa-sim export: {error}") from None
    return (
        f"Wrote {options.out} ({size / 1e6:.1f} MB): n ≤ {options.n_max}, "
        f"d_k ≤ {options.d_max}, seed {options.seed}. It needs no server: open it in a "
        "browser or upload it to a course page."
    )


def _size(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.0f} kB"


def export_site_command(options: argparse.Namespace) -> str:
    """Write the static site ``sdpa-sim export --site DIR`` asks for; return the report."""
    from app.export.site import export_site

    folder = options.site
    if not folder.parent.is_dir():
        raise SystemExit(f"sdpa-sim export: the folder {folder.parent} does not exist")
    try:
        sizes = export_site(folder, n_max=options.n_max, d_max=options.d_max, seed=options.seed)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"sdpa-sim export: {error}") from None
    files = ", ".join(f"{path.name} ({_size(size)})" for path, size in sizes.items())
    return (
        f"Wrote {folder}: {files}. Upload the folder to any static host; "
        "course-page.html shows how to embed index.html."
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``sdpa-sim``: serve in-process with ``panel serve`` (or from worker
    processes behind a front with ``--num-procs``), or export a page."""
    options = build_parser().parse_args(argv)
    if options.command == "export":
        print(export(options))
        return
    sign_sessions()
    from app.server.front import worker_count

    try:
        workers = worker_count(options.num_procs)
    except ValueError as error:
        raise SystemExit(f"sdpa-sim: {error}") from None
    print(start_class_mode(options, workers), flush=True)
    if workers > 1:
        if not sys.platform.startswith("linux"):
            # The front hands connections over Unix SOCK_SEQPACKET sockets, which macOS and
            # Windows lack.
            raise SystemExit("sdpa-sim: --num-procs above 1 needs Linux")
        raise SystemExit(serve_workers(options, workers))
    arguments = serve_arguments(options)
    guard_this_process(request_guard(options))
    # Here, where Panel is loaded to serve anyway; with --num-procs each worker checks (the
    # front never loads Panel).
    from app.compat import warn_about_changed_internals

    warn_about_changed_internals()
    from panel.command import main as panel_main

    sys.argv = ["panel", *arguments]
    panel_main()


def sign_sessions() -> None:
    """Make Bokeh sign this process's session ids (``BOKEH_SIGN_SESSIONS``): a link cannot
    choose one then, as Bokeh refuses an id it did not sign.

    The secret is new for each process unless ``BOKEH_SECRET_KEY`` is set (processes
    behind one proxy share one, see deploy/README.md; ``--num-procs`` gives each worker its
    own). Call it before anything imports ``bokeh.util.token``, whose defaults read the key
    when imported (and Bokeh's settings keep it).
    """
    os.environ["BOKEH_SIGN_SESSIONS"] = "true"
    if not os.environ.get("BOKEH_SECRET_KEY"):
        os.environ["BOKEH_SECRET_KEY"] = secrets.token_urlsafe(32)


def guard_this_process(guard: RequestGuard) -> None:
    """Make the server ``panel serve`` is about to build in this process check every
    request with ``guard`` (Panel's ``/components/`` route serving the app's own bundles
    only), and websockets' tokens against the session key (after
    :func:`sign_sessions`), and compute a slow page's first numbers off the event loop
    before its session is built (:mod:`app.served.warmup`); a client's malformed websocket
    messages cost one short log line (:mod:`app.server.message_log`)."""
    from tornado.httpserver import HTTPServer

    from app.served.component_routes import served_component_files
    from app.served.warmup import warm_page
    from app.server.guarded_http import GuardedHTTPServer
    from app.server.message_log import quiet_client_messages

    quiet_client_messages()
    key = os.environ.get("BOKEH_SECRET_KEY")
    HTTPServer.configure(
        GuardedHTTPServer,
        guard=replace(guard, component_files=served_component_files()),
        session_key=key.encode("utf-8") if key else None,
        before_page=warm_page,
    )


if __name__ == "__main__":
    main()
