"""The ``sdpa-sim`` console command: serve the simulation with its defaults."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import sdpa_core

APP_DIR = Path(__file__).resolve().parent
MAIN = APP_DIR / "main.py"
STATIC_DIR = APP_DIR.parent / "static"
STATIC_PREFIX = "assets"
"""URL prefix of the project's static/ folder (Panel reserves /static)."""


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
        help="a host allowed to open the page's websocket, e.g. the host of a course site "
        "that embeds it; repeat for several (default: the address and port served)",
    )
    parser.add_argument("--version", action="version", version=f"sdpa-sim {sdpa_core.__version__}")
    return parser


def serve_arguments(options: argparse.Namespace) -> list[str]:
    """The ``panel serve`` command line for the parsed ``options``."""
    if not 0 < options.port < 65536:
        raise SystemExit(f"sdpa-sim: --port must be between 1 and 65535: got {options.port}")
    arguments = [
        "serve",
        str(MAIN),
        "--port",
        str(options.port),
        "--address",
        options.address,
        "--index",
        "main",
    ]
    if STATIC_DIR.is_dir():
        arguments += ["--static-dirs", f"{STATIC_PREFIX}={STATIC_DIR}"]
    for origin in options.allow_websocket_origin:
        arguments += ["--allow-websocket-origin", origin]
    if options.show:
        arguments.append("--show")
    return arguments


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``sdpa-sim``: parse the options and run ``panel serve`` in-process."""
    options = build_parser().parse_args(argv)
    arguments = serve_arguments(options)
    from panel.command import main as panel_main

    sys.argv = ["panel", *arguments]
    panel_main()


if __name__ == "__main__":
    main()
