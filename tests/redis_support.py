"""A Redis server of the tests' own, on a loopback port: Debian's ``redis-server`` (not the
system service), no persistence, stopped and started again by the tests that need the class
bus to go down and come back."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from browser_support import free_port, stop_process

REDIS_PORTS = range(6400, 6500)
"""Where the tests' Redis listens (a free one is taken)."""

START_TIMEOUT = 20.0


def find_redis() -> Path | None:
    """Debian's redis-server, if installed."""
    found = shutil.which("redis-server") or "/usr/bin/redis-server"
    return Path(found) if Path(found).exists() else None


@dataclass
class RedisServer:
    """A running redis-server the tests started."""

    binary: Path
    port: int
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its URL, as ``--class-bus`` takes it."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it on its port and wait until it answers PING."""
        command = [
            str(self.binary),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--protected-mode", "yes",
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.answers():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start:\n{self.log_path.read_text()}")

    def answers(self) -> bool:
        """Whether it answers PING now."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL)."""
        if self.process is not None:
            stop_process(self.process)
            self.process = None


def start_redis(log_path: Path) -> RedisServer:
    """A redis-server on a free loopback port, answering; RuntimeError if it is missing or
    does not start."""
    binary = find_redis()
    if binary is None:
        raise RuntimeError(
            "redis-server is missing: class mode's bus tests run Debian's redis-server "
            "(`apt-get install redis-server`; scripts/test.sh installs it)"
        )
    server = RedisServer(binary, free_port(REDIS_PORTS), log_path)
    server.start()
    return server
