"""Where a session's own websocket (app/served/channel.py) is served and how it names its session:
what the channel's route, the ``--num-procs`` front (app/server/routing.py) and the tests share,
with no import beyond the standard library (the front imports neither Panel nor NumPy)."""

from __future__ import annotations

CHANNEL_NAME = "channel"
"""The channel's address relative to the page's (``/main`` → ``/channel``): what the page's
``SdpaChannel`` (app/page/assets/channel.js) resolves."""

CHANNEL_PATHS = ("/channel", "/main/channel")
"""Where the channel is mounted: relative to the app's page (``/main``, or ``/main/``)."""

CHANNEL_KEY = "key"
"""The query argument the channel's websocket carries its key in (``/channel?key=KEY``)."""
