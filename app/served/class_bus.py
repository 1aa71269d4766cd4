"""The class across processes and hosts: Redis pub/sub between the processes' classrooms.

With ``--num-procs`` or several hosts behind a proxy, a presenter's page and its students'
pages live in different processes. Each process's classroom (app/served/classroom.py)
publishes on one Redis channel what the others need: the scenes its presenters send, and a
status (its presenters, students, follow and reveal switches, its voters with their last
answers, so that a browser with tabs on two processes counts once, and the newest scene, so
that one sent while Redis was down reaches the others once it is back) when it changes and
every ``HEARTBEAT_S`` seconds; a reset of the answers. It takes in the others' messages,
and counts a process whose status is older than ``SILENT_AFTER_S`` as gone
(app/served/classroom.py holds both).

Every message is signed (HMAC-SHA256) with a key derived from the presenter key, which every
process of one class shares: a message a client or a stranger puts on the bus without it is
refused. Redis runs in two threads of its own (one publishes, one listens); what arrives
is handed to the classroom in the listening thread (the classroom takes it under its lock,
and each session moves its page on its own tick). When Redis cannot be reached, each
process works alone, its pages say so, and it connects again every
:data:`RECONNECT_S` seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

BUS_ENV = "SDPA_SIM_CLASS_BUS"
"""The environment variable that gives the app's processes the Redis URL of the class bus
(``--class-bus``)."""

CHANNEL = "sdpa-sim:class"
"""The Redis pub/sub channel the classrooms talk on."""

RECONNECT_S = 1.0
"""Pause between two attempts to reach Redis."""

MAX_MESSAGE_BYTES = 512 * 1024
"""Longer bus messages are refused unread (a status of app/served/classroom.py's
``MAX_VOTERS`` voters with three answers each takes under half of it)."""

log = logging.getLogger("sdpa_sim.class_bus")


def signing_key(presenter_key: str) -> bytes:
    """The key the bus's messages are signed with, derived from the presenter key (which
    every process of the class shares) so that the key itself never travels."""
    return hmac.new(b"sdpa-sim class bus", presenter_key.encode("utf-8"), hashlib.sha256).digest()


def sign(payload: dict[str, Any], key: bytes) -> bytes:
    """``payload`` as a bus message: its JSON and its signature."""
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("utf-8")
    signature = hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")
    return signature + b"." + body


def verify(message: object, key: bytes) -> dict[str, Any] | None:
    """The payload of a bus message signed with ``key``, or None for anything else (a
    forged, damaged, oversized or malformed message). Never raises."""
    if isinstance(message, str):
        message = message.encode("utf-8", errors="replace")
    if not isinstance(message, bytes) or len(message) > MAX_MESSAGE_BYTES:
        return None
    signature, dot, body = message.partition(b".")
    if not dot:
        return None
    expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")
    if not hmac.compare_digest(signature, expected):
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


class RedisBus:
    """The class bus on Redis at ``url``: :meth:`publish` from any thread; every verified
    message from another process reaches ``on_message`` and every change of the connection
    ``on_connected``, both called from the listening thread."""

    def __init__(
        self,
        url: str,
        key: bytes,
        *,
        origin: str,
        on_message: Callable[[dict[str, Any]], None],
        on_connected: Callable[[bool], None],
    ) -> None:
        self.url = url
        self.origin = origin
        """This process's name on the bus: its own messages come back and are skipped."""
        self._key = key
        self._on_message = on_message
        self._on_connected = on_connected
        self._outbox: queue.Queue[bytes | None] = queue.Queue(maxsize=1000)
        self._stopping = threading.Event()
        self.connected = False
        """Whether the listening connection is up now (as last reported)."""
        self._threads = [
            threading.Thread(target=self._listen, name="class-bus-listen", daemon=True),
            threading.Thread(target=self._publish_all, name="class-bus-publish", daemon=True),
        ]

    def start(self) -> None:
        """Connect and listen, in the bus's threads."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop both threads (within about a second)."""
        self._stopping.set()
        self._outbox.put_nowait(None)

    def publish(self, payload: dict[str, Any]) -> None:
        """Sign and send ``payload`` (with this process's origin); dropped, not queued
        without end, while Redis is unreachable."""
        message = sign({**payload, "origin": self.origin}, self._key)
        with contextlib.suppress(queue.Full):
            self._outbox.put_nowait(message)

    def _client(self) -> Any:
        import redis

        return redis.Redis.from_url(
            self.url, socket_connect_timeout=2.0, socket_timeout=None, health_check_interval=5
        )

    def _report(self, connected: bool) -> None:
        if connected != self.connected:
            self.connected = connected
            self._hand_on(self._on_connected, connected)

    def _hand_on(self, callback: Callable[..., None], *args: Any) -> None:
        # A failure of what the message is handed to must not end the listening thread:
        # the class would go silent for good.
        try:
            callback(*args)
        except Exception:
            log.exception("sdpa-sim: a class message could not be taken in")

    def _listen(self) -> None:
        import redis

        while not self._stopping.is_set():
            try:
                client = self._client()
                subscription = client.pubsub(ignore_subscribe_messages=True)
                subscription.subscribe(CHANNEL)
                self._report(True)
                while not self._stopping.is_set():
                    item = subscription.get_message(timeout=0.5)
                    if item is None or item.get("type") != "message":
                        continue
                    payload = verify(item.get("data"), self._key)
                    if payload is None:
                        log.warning("sdpa-sim: refused an unsigned or damaged class message")
                    elif payload.get("origin") != self.origin:
                        self._hand_on(self._on_message, payload)
                subscription.close()
                client.close()
            except (redis.RedisError, OSError) as error:
                if self.connected:
                    log.warning("sdpa-sim: the class bus is unreachable (%s)", error)
                self._report(False)
                self._stopping.wait(RECONNECT_S)

    def _publish_all(self) -> None:
        import redis

        client = None
        while not self._stopping.is_set():
            message = self._outbox.get()
            if message is None:
                return
            try:
                client = client or self._client()
                client.publish(CHANNEL, message)
            except (redis.RedisError, OSError):
                # Dropped: the listener reports the outage; the next status repeats it all.
                client = None
                time.sleep(0.05)
