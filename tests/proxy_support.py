"""Several served apps behind Debian's nginx on loopback, for the proxy tests (tests/proxy).

nginx runs the project's own ``deploy/nginx.conf``, rendered for the test: its upstream
``server`` lines point at the test's processes, it listens on a test port and logs, in a
format of the test's, which process served each request and with which routing key.

The tests import it as a top-level module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from unittest import mock

import browser_support
from browser_support import REPO, AppServer, start_server, stop_server

PROXY_PORTS = range(5300, 5400)
"""The ports the proxy tests may use (other suites and benchmarks use other ranges)."""

DEPLOY_CONF = REPO / "deploy" / "nginx.conf"
NGINX_START_TIMEOUT = 20.0
LOG_TIMEOUT = 20.0

PROBE_PATH = "static/extensions/panel/css/loading.css"
"""A small file every process serves (and answers HEAD for): cheap to route."""

ROUTE_COOKIE = "sdpa_route"
"""The cookie deploy/nginx.conf keeps the routing key in."""

TEST_LOG_FORMAT = (
    "log_format sdpa_test 'upstream=$upstream_addr route=$sdpa_route status=$status "
    'request="$request"\';'
)
"""What the tests read from the access log: the process(es) tried, the key, the request."""

LOG_RECORD = re.compile(
    r"^upstream=(?P<upstream>\S+(?:, \S+)*) route=(?P<route>\S*) status=(?P<status>\d+) "
    r'request="(?P<method>\S+) (?P<target>\S+) [^"]*"$'
)

UPSTREAM_SERVER = re.compile(r"^(?P<indent>[ \t]*)server[ \t]+\S+:\d+(?P<rest>[^;\n]*);", re.M)
LISTEN = re.compile(r"^(?P<indent>[ \t]*)listen[ \t]+8080;", re.M)
ACCESS_LOG = re.compile(r"^(?P<indent>[ \t]*)access_log[ \t]+\S+[ \t]+sdpa_sim;", re.M)


def find_nginx() -> Path | None:
    """Debian's nginx binary (``/usr/sbin`` is not on every user's path), or None."""
    found = shutil.which("nginx")
    if found:
        return Path(found)
    default = Path("/usr/sbin/nginx")
    return default if os.access(default, os.X_OK) else None


def free_proxy_port() -> int:
    """The first port of :data:`PROXY_PORTS` nothing listens on now."""
    return browser_support.free_port(PROXY_PORTS)


def start_app_server(log_path: Path, env: dict[str, str] | None = None) -> AppServer:
    """:func:`browser_support.start_server` on a port of :data:`PROXY_PORTS`, ``env``
    added to its environment."""
    # start_server picks its port from browser_support.PORTS, the browser tests' range.
    with mock.patch.object(browser_support, "PORTS", PROXY_PORTS):
        return start_server(log_path, env=env)


def render_site_conf(
    conf: str, upstream_ports: list[int], listen_port: int, access_log: Path
) -> str:
    """``deploy/nginx.conf`` with the test's processes, listening port and access log.

    The active ``server host:port …;`` lines of the upstream become one per port (keeping
    their parameters), ``listen 8080;`` becomes ``listen 127.0.0.1:PORT;`` and the access log
    goes to ``access_log`` in the :data:`TEST_LOG_FORMAT`. Raises ValueError when the file no
    longer has the lines this relies on, so a change to it cannot go unnoticed by the tests.
    """
    servers = list(UPSTREAM_SERVER.finditer(conf))
    if not servers or len(LISTEN.findall(conf)) != 1 or len(ACCESS_LOG.findall(conf)) != 1:
        raise ValueError(
            f"{DEPLOY_CONF} should have upstream `server HOST:PORT …;` lines, one "
            "`listen 8080;` and one `access_log PATH sdpa_sim;`"
        )
    indent, rest = servers[0]["indent"], servers[0]["rest"]
    replacement = "\n".join(f"{indent}server 127.0.0.1:{port}{rest};" for port in upstream_ports)
    conf = conf[: servers[0].start()] + replacement + conf[servers[-1].end() :]
    conf = LISTEN.sub(lambda m: f"{m['indent']}listen 127.0.0.1:{listen_port};", conf)
    return ACCESS_LOG.sub(lambda m: f"{m['indent']}access_log {access_log} sdpa_test;", conf)


@dataclass(frozen=True)
class AccessRecord:
    """One line of the test's access log."""

    upstreams: tuple[str, ...]
    """Every process nginx tried for the request, in order (the last one answered)."""
    route: str
    status: int
    method: str
    target: str

    @property
    def upstream(self) -> str:
        """The process that answered."""
        return self.upstreams[-1]

    @property
    def path(self) -> str:
        """The request's path, without its query."""
        return self.target.split("?", 1)[0]


@dataclass
class NginxProxy:
    """A running nginx in front of the test's processes, with its files."""

    process: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def url(self) -> str:
        """nginx's root address."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def access_log(self) -> Path:
        """The access log, in :data:`TEST_LOG_FORMAT`."""
        return self.directory / "access.log"

    @property
    def error_log(self) -> Path:
        """nginx's own log."""
        return self.directory / "error.log"

    def error_text(self) -> str:
        """nginx's own log so far."""
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def records(self) -> list[AccessRecord]:
        """Every request logged so far (a websocket is logged when it closes)."""
        if not self.access_log.exists():
            return []
        records = []
        for line in self.access_log.read_text(errors="replace").splitlines():
            match = LOG_RECORD.match(line)
            if match is None:
                raise AssertionError(f"unexpected access log line: {line!r}")
            records.append(
                AccessRecord(
                    upstreams=tuple(match["upstream"].split(", ")),
                    route=match["route"],
                    status=int(match["status"]),
                    method=match["method"],
                    target=match["target"],
                )
            )
        return records

    def wait_records(
        self, predicate: Callable[[AccessRecord], bool], count: int = 1
    ) -> list[AccessRecord]:
        """Wait until at least ``count`` records satisfy ``predicate``; return them.

        nginx writes a record once the request is over, after the client may have its
        answer; a websocket's record comes when the websocket closes.
        """
        deadline = time.monotonic() + LOG_TIMEOUT
        while True:
            found = [record for record in self.records() if predicate(record)]
            if len(found) >= count or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # polling a file nginx appends to
        if len(found) < count:
            raise AssertionError(
                f"{len(found)} of {count} expected access log records within "
                f"{LOG_TIMEOUT:.0f} s:\n{self.access_log.read_text(errors='replace')}"
            )
        return found


def _main_conf(directory: Path, site: Path) -> str:
    temp = directory / "temp"
    # As root nginx's workers would run as `nobody`, who cannot enter pytest's private
    # temporary directories (proxy buffers spill to temp files there).
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}worker_processes 1;\n"
        "events { worker_connections 512; }\n"
        "http {\n"
        # Else nginx opens its compiled-in default log, /var/log/nginx/access.log.
        "    access_log off;\n"
        f"    client_body_temp_path {temp}/client_body;\n"
        f"    proxy_temp_path {temp}/proxy;\n"
        f"    fastcgi_temp_path {temp}/fastcgi;\n"
        f"    uwsgi_temp_path {temp}/uwsgi;\n"
        f"    scgi_temp_path {temp}/scgi;\n"
        f"    {TEST_LOG_FORMAT}\n"
        f"    include {site};\n"
        "}\n"
    )


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def start_nginx(
    nginx: Path, directory: Path, upstream_ports: list[int], attempts: int = 3
) -> NginxProxy:
    """Start ``nginx`` (in the foreground) with deploy/nginx.conf for ``upstream_ports``.

    Files go to ``directory``. Returns once nginx accepts connections; raises RuntimeError
    with nginx's log if it exits or does not listen in time.
    """
    for attempt in range(attempts):
        port = free_proxy_port()
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "temp").mkdir(exist_ok=True)
        site = directory / "sdpa-sim.conf"
        site.write_text(
            render_site_conf(
                DEPLOY_CONF.read_text(), upstream_ports, port, directory / "access.log"
            )
        )
        main = directory / "nginx.conf"
        main.write_text(_main_conf(directory, site))
        error_log = directory / "error.log"
        error_log.unlink(missing_ok=True)
        settings = f"daemon off; pid {directory / 'nginx.pid'}; error_log {error_log} warn;"
        with (directory / "nginx.out").open("wb") as out:
            process = subprocess.Popen(
                [str(nginx), "-p", f"{directory}/", "-c", str(main), "-g", settings],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        proxy = NginxProxy(process, port, directory)
        deadline = time.monotonic() + NGINX_START_TIMEOUT
        while time.monotonic() < deadline:
            if _listening(port):
                return proxy
            try:
                # Paces the polling and notices an nginx that exited.
                code = process.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                continue
            output = (directory / "nginx.out").read_text(errors="replace") + proxy.error_text()
            if "Address already in use" in output and attempt + 1 < attempts:
                break
            raise RuntimeError(f"nginx exited with {code}:\n{output}")
        else:
            stop_nginx(proxy)
            raise RuntimeError(
                f"nginx did not listen within {NGINX_START_TIMEOUT:.0f} s:\n{proxy.error_text()}"
            )
    raise RuntimeError(f"nginx found no free port in {attempts} attempts")


def stop_nginx(proxy: NginxProxy) -> None:
    """Stop nginx: terminate (its fast shutdown), then kill if it lingers past 10 s."""
    browser_support.stop_process(proxy.process)


@dataclass
class Cluster:
    """Several app processes and the nginx in front of them."""

    servers: list[AppServer]
    proxy: NginxProxy

    def upstream_of(self, server: AppServer) -> str:
        """How nginx's ``$upstream_addr`` names ``server``."""
        return f"127.0.0.1:{server.port}"

    def server_at(self, upstream: str) -> AppServer:
        """The process nginx's ``$upstream_addr`` names."""
        return next(server for server in self.servers if self.upstream_of(server) == upstream)

    def route_keys(self) -> dict[str, str]:
        """A routing key (cookie value) that nginx sends to each process, by upstream.

        Found by asking nginx for a small static file with random keys and reading which
        process each went to (consistent hashing sends every request with a key there).
        """
        found: dict[str, str] = {}
        wanted = {self.upstream_of(server) for server in self.servers}
        for _ in range(16):
            keys = [os.urandom(16).hex() for _ in range(8)]
            for key in keys:
                request = urllib.request.Request(
                    f"{self.proxy.url}/{PROBE_PATH}",
                    method="HEAD",
                    headers={"Cookie": f"{ROUTE_COOKIE}={key}"},
                )
                with urllib.request.urlopen(request, timeout=10):
                    pass
            records = self.proxy.wait_records(partial(_routed_by, set(keys)), len(keys))
            for record in records:
                found.setdefault(record.upstream, record.route)
            if wanted <= found.keys():
                return {upstream: found[upstream] for upstream in sorted(wanted)}
        raise AssertionError(f"nginx sent 128 random keys only to {sorted(found)}")


def _routed_by(keys: set[str], record: AccessRecord) -> bool:
    return record.route in keys


def start_cluster(
    nginx: Path, directory: Path, count: int = 2, env: dict[str, str] | None = None
) -> Cluster:
    """``count`` app processes (``env`` added to their environment) and nginx in front of
    them, files under ``directory``.

    On failure, whatever was started is stopped and RuntimeError raised.
    """
    directory.mkdir(parents=True, exist_ok=True)
    servers: list[AppServer] = []
    try:
        for index in range(count):
            servers.append(start_app_server(directory / f"server-{index}.log", env))
        proxy = start_nginx(nginx, directory / "nginx", [server.port for server in servers])
    except BaseException:
        for server in servers:
            stop_server(server)
        raise
    return Cluster(servers, proxy)


def kill_server(server: AppServer) -> None:
    """Kill an app process outright (SIGKILL): it dies as in a crash, saying nothing."""
    server.process.kill()
    server.process.wait(timeout=10)


def stop_cluster(cluster: Cluster) -> None:
    """Stop nginx and every process still running."""
    stop_nginx(cluster.proxy)
    for server in cluster.servers:
        if server.process.poll() is None:
            stop_server(server)
