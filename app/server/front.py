"""The front of ``sdpa-sim --num-procs N``: one listening socket, N worker processes.

Every worker is ``panel serve app/main.py`` (:mod:`app.server.worker`) with the options
``sdpa-sim`` was given, listening on a Unix socket in a private temporary folder and signing
its session ids with a secret of its own. The front accepts each TCP connection on the
public address, peeks at its first request's head without reading it
(:func:`app.server.routing.route` decides where it goes: a page's websocket to the worker that made
its session, anything else to the worker with the fewest sessions), and hands the
connection itself to that worker over a Unix socket pair (``SCM_RIGHTS``). From then on the
client and the worker talk directly: the front never relays a byte, so its cost is per
connection, not per megabyte.

A page holds its worker's one event loop while Bokeh builds the session. When a class
arrives at once, the websockets of students whose page is built would queue in the worker
behind the pages still to build, and students already working would wait as long for their
moves. So the front holds new pages in a queue of its own and hands a worker the next one
only when it has fewer than :data:`PAGES_PER_WORKER` pages in progress, while websockets,
static files and everything else are handed over at once (a worker can also pause after
each page, :data:`app.server.worker.PAGE_PAUSE`). docs/performance.md has the figures.

Workers run NumPy's BLAS with one thread (unless the user set the thread count): N
processes each with a thread per core would oversubscribe the cores.

It starts the workers, waits until each answers an HTTP request before it prints the
address, stops routing to a worker that exits and starts a new one in its place, and on
SIGINT or SIGTERM stops them all before it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import webbrowser
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bokeh.util.token import generate_secret_key
from tornado.netutil import bind_sockets

from app.server.page_queue import PageQueue, client_left
from app.server.request_guard import RequestGuard
from app.server.routing import HEAD_END, MAX_HEAD_BYTES, Route, WorkerView, parse_head, route
from app.server.worker import HANDOFF, HANDOFF_PAGE, PAGE_DONE, SESSIONS

log = logging.getLogger("sdpa_sim.front")

HEAD_TIMEOUT = 10.0
"""Seconds a new connection has to send its first request's head before the front drops it."""

PEEK_POLL_MAX = 0.05
"""Longest pause between two peeks at a head that arrived in part (see :meth:`Front.peek_head`)."""

READY_TIMEOUT = 120.0
"""Seconds a starting worker has to answer its first request."""

STOP_TIMEOUT = 10.0
"""Seconds a worker has to exit after SIGTERM before it is killed."""

PENDING_LIFETIME = 30.0
"""Seconds a page sent to a worker counts towards its load while its session is not reported
(a request that never became a session, e.g. refused, stops counting then)."""

RESTART_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 60.0)
"""Pauses before restarting a worker that exited, longer each time one exits within
:data:`STABLE_AFTER` seconds of its start (a crash loop), back to the first once one runs
longer."""

STABLE_AFTER = 60.0

PAGES_PER_WORKER = int(os.environ.get("SDPA_SIM_PAGES_PER_WORKER", "1"))
"""Pages a worker builds at once; more wait in the front's queue (0: no queue, every page
is handed over at once). One keeps a worker's event loop free for websockets between two
pages; the environment variable is for measuring (benchmarks/bench_class.py)."""

PAGE_LIFETIME = 30.0
"""Seconds a page counts as in progress on its worker without a report that it finished
(a report lost with a worker that stopped, say): it stops holding the queue then."""

QUEUE_CHECK = 1.0
"""While pages wait, how often the front looks for pages in progress past their lifetime."""

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Environment variables that set NumPy's BLAS thread count: 1 in workers unless set."""

STATUS_DELAY = 1.0
"""Session counts are logged at most once per this many seconds, when they changed."""

HEALTH_REQUEST = b"GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
"""What the front asks a starting worker: Bokeh answers it without building a session."""

ANSWERS = {
    403: (
        "Forbidden",
        "This request names a session the server did not create (a link cannot choose "
        "one, and a restarted server knows none of the old ones): load the page again "
        "without it.",
    ),
    503: (
        "Service Unavailable",
        "The server process that held this page's session has stopped, or none is "
        "running: load the page again in a moment.",
    ),
}
"""The responses the front writes itself (see :func:`app.server.routing.route`)."""


def worker_count(requested: int) -> int:
    """How many workers ``--num-procs requested`` means: 0 is one per core this process
    may run on."""
    if requested < 0:
        raise ValueError(f"--num-procs must be 0 or more: got {requested}")
    if requested:
        return requested
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        # Not Linux: all the machine's cores.
        return os.cpu_count() or 1


@dataclass
class FrontConfig:
    """What the front serves and how it starts its workers."""

    address: str
    port: int
    workers: int
    serve_arguments: Callable[[int, Path], list[str]]
    """The ``panel serve`` arguments of worker ``index`` listening on Unix socket ``path``."""
    app_paths: Sequence[str] = ("/", "/main")
    page_path: str = "/main"
    show: bool = False
    guard: RequestGuard | None = None
    """What every request must pass in the workers (see :mod:`app.server.request_guard`)."""


@dataclass
class Worker:
    """One worker slot: the process running in it now and what the front knows of it."""

    index: int
    key: bytes = b""
    process: asyncio.subprocess.Process | None = None
    control: socket.socket | None = None
    alive: bool = False
    started: float = 0.0
    live: int = 0
    created: int = 0
    pending: deque[float] = field(default_factory=deque)
    """When pages were handed to it, oldest first, not yet matched by a reported session."""
    building: deque[float] = field(default_factory=deque)
    """When the pages it is building now were handed to it, oldest first."""
    restarts: int = 0
    drained: asyncio.Event | None = None
    """Set when its control socket takes messages again, while hand-offs wait for it."""

    @property
    def pid(self) -> int | None:
        """The process id of the worker now in this slot."""
        return self.process.pid if self.process is not None else None

    def load(self, now: float) -> int:
        """Live sessions plus the pages handed to it in the last :data:`PENDING_LIFETIME`
        seconds that have not become sessions yet."""
        while self.pending and self.pending[0] < now - PENDING_LIFETIME:
            self.pending.popleft()
        return self.live + len(self.pending)

    def pages_in_progress(self, now: float) -> int:
        """Pages handed to it that it has not reported finished, within
        :data:`PAGE_LIFETIME` seconds."""
        while self.building and self.building[0] < now - PAGE_LIFETIME:
            self.building.popleft()
        return len(self.building)

    def page_done(self) -> None:
        """Take in the worker's report that its oldest page in progress is finished."""
        if self.building:
            self.building.popleft()

    def reported(self, live: int, created: int) -> None:
        """Take in the worker's report: ``live`` sessions now, ``created`` since it started."""
        for _ in range(max(0, created - self.created)):
            if not self.pending:
                break
            self.pending.popleft()
        self.live = live
        self.created = created


class Front:
    """The front process: accepts connections and hands each to a worker.

    Run it with ``asyncio.run(Front(config).run())``; it returns the process's exit code.
    """

    def __init__(self, config: FrontConfig) -> None:
        self.config = config
        self.workers = [Worker(index) for index in range(config.workers)]
        self._listeners: list[socket.socket] = []
        self._folder: Path | None = None
        self._stopping = False
        self._serving = False
        """Whether every worker answered once: from then on exits are restarts, not failures."""
        self._stop = asyncio.Event()
        self._turn = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._status_scheduled = False
        self._status_logged: list[tuple[int, int | None]] = []
        self.pages: PageQueue[Worker] = PageQueue(
            self.workers,
            per_worker=PAGES_PER_WORKER,
            check_after=QUEUE_CHECK,
        )
        """New pages waiting for a worker with room to build them."""

    # Start and stop ---------------------------------------------------------------------

    async def run(self) -> int:
        """Serve until SIGINT or SIGTERM; return the exit code (0, or 1 if startup failed)."""
        loop = asyncio.get_running_loop()
        try:
            self._listeners = bind_sockets(self.config.port, self.config.address)
        except OSError as error:
            log.critical(
                "Cannot start sdpa-sim on %s:%s: %s",
                self.config.address,
                self.config.port,
                error,
            )
            return 1
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self._request_stop, signum)
        self._folder = Path(tempfile.mkdtemp(prefix="sdpa-sim-"))
        try:
            for worker in self.workers:
                await self._spawn(worker)
            if not await self._wait_started():
                return 0 if self._stopping else 1
            self._serving = True
            for listener in self._listeners:
                listener.setblocking(False)
                loop.add_reader(listener.fileno(), self._accept, listener)
            url = self.url
            pids = ", ".join(str(worker.pid) for worker in self.workers)
            print(f"sdpa-sim: serving {url} with {len(self.workers)} worker processes ({pids})")
            sys.stdout.flush()
            if self.config.show:
                await loop.run_in_executor(None, webbrowser.open_new_tab, url)
            await self._stop.wait()
            return 0
        finally:
            await self._shutdown()

    @property
    def url(self) -> str:
        """The page's public address."""
        host = self.config.address
        host = "localhost" if host in ("", "0.0.0.0", "::") else host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.config.port}{self.config.page_path}"

    def _request_stop(self, signum: int) -> None:
        log.info("sdpa-sim: %s received, stopping the workers", signal.Signals(signum).name)
        self._stopping = True
        self._stop.set()

    async def _wait_started(self) -> bool:
        """Wait until every worker answers; False if one does not (the reason is logged)
        or a stop was asked for meanwhile."""
        checks = asyncio.ensure_future(
            asyncio.gather(*(self._check(worker) for worker in self.workers))
        )
        stop = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({checks, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not checks.done():
            checks.cancel()
            await asyncio.gather(checks, return_exceptions=True)
            return False
        return all(checks.result()) and not self._stopping

    async def _shutdown(self) -> None:
        """Stop accepting, stop every worker (SIGTERM, then SIGKILL), remove the folder."""
        self._stopping = True
        loop = asyncio.get_running_loop()
        for listener in self._listeners:
            with contextlib.suppress(ValueError, OSError):
                loop.remove_reader(listener.fileno())
            listener.close()
        self.pages.stop()
        await asyncio.gather(*(self._stop_worker(worker) for worker in self.workers))
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    async def _stop_worker(self, worker: Worker) -> None:
        process = worker.process
        worker.alive = False
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            except TimeoutError:
                log.warning(
                    "sdpa-sim: worker %d (pid %d) did not stop: killed", worker.index, process.pid
                )
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        self._close_control(worker)

    # Workers ----------------------------------------------------------------------------

    async def _spawn(self, worker: Worker) -> None:
        """Start a new worker process in ``worker``'s slot, with a new secret key."""
        assert self._folder is not None
        loop = asyncio.get_running_loop()
        secret = generate_secret_key()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        path = self._folder / f"worker-{worker.index}.sock"
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        # The arguments before the environment: making them may set variables the worker
        # reads (app.served.channel.enable marks sessions to open their channel).
        arguments = self.config.serve_arguments(worker.index, path)
        env = {
            **{name: "1" for name in BLAS_THREADS},
            **os.environ,
            "BOKEH_SIGN_SESSIONS": "true",
            "BOKEH_SECRET_KEY": secret,
            "PYTHONUNBUFFERED": "1",
        }
        command = [sys.executable, "-m", "app.server.worker", "--control-fd", str(child.fileno())]
        if self.config.guard is not None:
            command += ["--guard", self.config.guard.to_json()]
        command.append("--")
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                *arguments,
                pass_fds=[child.fileno()],
                env=env,
                # Its own process group: Ctrl-C reaches the front only, which stops the
                # workers in order (and a worker outliving a killed front sees its control
                # socket close and stops).
                process_group=0,
            )
        finally:
            child.close()
        parent.setblocking(False)
        worker.key = secret.encode("utf-8")
        worker.process = process
        worker.control = parent
        worker.alive = False
        worker.started = time.monotonic()
        worker.live = worker.created = 0
        worker.pending.clear()
        worker.building.clear()
        loop.add_reader(parent.fileno(), self._read_reports, worker, parent)
        self._start_task(self._watch(worker, process))

    async def _check(self, worker: Worker) -> bool:
        """Hand the worker a connection of our own and wait for its HTTP answer.

        It goes the way clients' connections go, so an answer means the worker serves
        them. The worker becomes routable (``alive``) once it answers. If it exits first,
        the kernel closes the connection still on its way, which ends the wait.
        """
        loop = asyncio.get_running_loop()
        process = worker.process
        assert process is not None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        reply: bytes | None = b""
        with ours:
            ours.setblocking(False)
            with theirs:
                handed = await self.hand_over(worker, theirs)
            try:
                if handed:
                    await loop.sock_sendall(ours, HEALTH_REQUEST)
                    reply = await asyncio.wait_for(_read_all(ours), READY_TIMEOUT)
            except TimeoutError:
                reply = None
            except OSError:
                reply = b""
        if reply is not None and reply.startswith(b"HTTP/1.1 200"):
            worker.alive = not self._stopping and process.returncode is None
            self.pages.dispatch()
            return worker.alive
        if self._stopping:
            return False
        # A worker that failed to start usually exits: its exit code says more.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 5)
        if process.returncode is not None:
            if self._serving:
                return False  # The watcher reports exits once the front serves.
            log.error(
                "sdpa-sim: worker %d (pid %d) exited with code %s while starting",
                worker.index,
                process.pid,
                process.returncode,
            )
        elif reply is None:
            log.error(
                "sdpa-sim: worker %d (pid %d) did not answer within %.0f s",
                worker.index,
                process.pid,
                READY_TIMEOUT,
            )
        else:
            log.error(
                "sdpa-sim: worker %d (pid %d) answered %r", worker.index, process.pid, reply[:80]
            )
        return False

    async def _watch(self, worker: Worker, process: asyncio.subprocess.Process) -> None:
        """Wait for the worker process to exit; then stop routing to it and start another."""
        code = await process.wait()
        if worker.process is not process or self._stopping:
            return
        worker.alive = False
        self._close_control(worker)
        self.pages.dispatch()
        if not self._serving:
            return  # Startup failed: run() reports it and stops.
        ran = time.monotonic() - worker.started
        worker.restarts = 0 if ran >= STABLE_AFTER else worker.restarts + 1
        delay = RESTART_DELAYS[min(worker.restarts, len(RESTART_DELAYS) - 1)]
        lost = f"; its {worker.live} sessions are lost" if worker.live else ""
        log.error(
            "sdpa-sim: worker %d (pid %d) exited with code %s%s; new pages go to the other "
            "workers; a new worker starts in %.0f s",
            worker.index,
            process.pid,
            code,
            lost,
            delay,
        )
        self._schedule_status()
        await asyncio.sleep(delay)
        if self._stopping:
            return
        await self._spawn(worker)
        if await self._check(worker):
            log.info("sdpa-sim: worker %d restarted (pid %d)", worker.index, worker.pid)
            self._schedule_status()

    def _read_reports(self, worker: Worker, control: socket.socket) -> None:
        """Read the worker's session reports; its end closing means it is going away."""
        while True:
            try:
                message = control.recv(256)
            except BlockingIOError:
                return
            except OSError:
                message = b""
            if not message:
                # The process watcher logs the exit and restarts the slot.
                if worker.control is control:
                    worker.alive = False
                    self._close_control(worker)
                return
            if message == PAGE_DONE and worker.control is control:
                worker.page_done()
                self.pages.dispatch()
                continue
            words = message.split()
            if len(words) == 3 and words[0] == SESSIONS and worker.control is control:
                worker.reported(int(words[1]), int(words[2]))
                self._schedule_status()

    def _close_control(self, worker: Worker) -> None:
        control = worker.control
        if control is None:
            return
        worker.control = None
        loop = asyncio.get_running_loop()
        with contextlib.suppress(ValueError, OSError):
            loop.remove_reader(control.fileno())
            loop.remove_writer(control.fileno())
        if worker.drained is not None:
            # Hand-offs waiting for it find the socket gone.
            worker.drained.set()
            worker.drained = None
        control.close()

    def _schedule_status(self) -> None:
        if not self._status_scheduled:
            self._status_scheduled = True
            asyncio.get_running_loop().call_later(STATUS_DELAY, self._log_status)

    def _log_status(self) -> None:
        """Log each worker's live sessions if they changed since the last line."""
        self._status_scheduled = False
        status = [(worker.live if worker.alive else -1, worker.pid) for worker in self.workers]
        if status == self._status_logged or self._stopping:
            return
        self._status_logged = status
        parts = [
            f"{live} (pid {pid})" if live >= 0 else f"stopped (was pid {pid})"
            for live, pid in status
        ]
        log.info("sdpa-sim: live sessions per worker: %s", ", ".join(parts))

    # Connections ------------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                connection, _address = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                # Out of file descriptors, or the client reset first: keep serving the rest.
                log.warning("sdpa-sim: accept failed: %s", error)
                return
            connection.setblocking(False)
            self._start_task(self._route(connection))

    def _start_task(self, coroutine: object) -> None:
        task = asyncio.ensure_future(coroutine)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def views(self) -> list[WorkerView]:
        """The workers as :func:`app.server.routing.route` sees them now."""
        now = time.monotonic()
        return [
            WorkerView(key=worker.key, alive=worker.alive, load=worker.load(now))
            for worker in self.workers
        ]

    async def _route(self, connection: socket.socket) -> None:
        """Peek at the connection's first request and hand the connection to its worker."""
        with connection:
            data = await self.peek_head(connection)
            if data is None:
                return
            head = parse_head(data)
            # A worker can die between the choice and the hand-off; the head is still
            # unread, so the connection can go to another one.
            for _attempt in range(len(self.workers) + 1):
                decision: Route = route(head, self.views(), self._turn, self.config.app_paths)
                self._turn = (self._turn + 1) % len(self.workers)
                if decision.status is not None or decision.worker is None:
                    await self._answer(connection, decision.status or 503, data)
                    return
                worker: Worker | None = self.workers[decision.worker]
                if decision.page and self.pages.per_worker > 0:
                    worker = await self.pages.worker_for_page()
                    if worker is None:
                        await self._answer(connection, 503, data)
                        return
                    if client_left(connection):
                        worker.page_done()
                        self.pages.dispatch()
                        return
                assert worker is not None
                if await self.hand_over(worker, connection, page=decision.page):
                    if decision.page:
                        worker.pending.append(time.monotonic())
                    return
                if decision.page and self.pages.per_worker > 0:
                    worker.page_done()
                    self.pages.dispatch()
            await self._answer(connection, 503, data)

    async def peek_head(self, connection: socket.socket) -> bytes | None:
        """The connection's first request head, still unread, or None if the client closed
        or its head is not complete after :data:`HEAD_TIMEOUT` seconds.

        Peeking leaves the bytes in the kernel for the worker to read. A head is complete
        at its empty line; a longer one than :data:`MAX_HEAD_BYTES` is returned as far as
        it goes (its worker refuses it). While part of a head has arrived the socket stays
        readable, so waiting for readability would spin: the front polls it, from 1 ms up
        to :data:`PEEK_POLL_MAX` apart (browsers send a head in one packet).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + HEAD_TIMEOUT
        pause = 0.001
        while True:
            try:
                data = connection.recv(MAX_HEAD_BYTES, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                return None
            if data == b"":
                return None
            if data is not None and (HEAD_END in data or len(data) >= MAX_HEAD_BYTES):
                return data
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            if data is None:
                await _readable(connection, remaining)
            else:
                await asyncio.sleep(min(pause, remaining))
                pause = min(pause * 2, PEEK_POLL_MAX)

    async def hand_over(
        self, worker: Worker, connection: socket.socket, *, page: bool = False
    ) -> bool:
        """Send ``connection`` to ``worker`` (``page``: one it counts as a page, which the
        worker reports done however it ends); False if the worker is gone."""
        message = HANDOFF_PAGE if page else HANDOFF
        while True:
            control = worker.control
            if control is None:
                return False
            try:
                socket.send_fds(control, [message], [connection.fileno()])
                return True
            except (BlockingIOError, InterruptedError):
                # The worker is busy and its queue full (a few hundred connections): wait
                # until it takes some.
                await self._drained(worker, control)
            except OSError as error:
                if error.errno == errno.ETOOMANYREFS:
                    # Too many connections in flight to the workers: the kernel bounds them
                    # by the open-file limit, and nothing signals when they drop below it.
                    await asyncio.sleep(PEEK_POLL_MAX)
                    continue
                worker.alive = False
                return False

    async def _drained(self, worker: Worker, control: socket.socket) -> None:
        """Wait until ``control`` is writable again, or :data:`STOP_TIMEOUT` seconds.

        One writer callback per socket serves every waiting hand-off (asyncio keeps one
        per file descriptor).
        """
        if worker.drained is None:
            loop = asyncio.get_running_loop()
            drained = worker.drained = asyncio.Event()

            def writable() -> None:
                loop.remove_writer(control.fileno())
                worker.drained = None
                drained.set()

            loop.add_writer(control.fileno(), writable)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(worker.drained.wait(), STOP_TIMEOUT)

    async def _answer(self, connection: socket.socket, status: int, head: bytes) -> None:
        """Answer the request with ``status`` and close the connection."""
        reason, text = ANSWERS.get(status, ANSWERS[503])
        body = text.encode("utf-8") + b"\n"
        guard = self.config.guard
        extra = guard.response_headers() if guard is not None else {}
        headers = "".join(f"{name}: {value}\r\n" for name, value in extra.items())
        response = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n{headers}Connection: close\r\n\r\n"
        ).encode("ascii")
        if not head.startswith(b"HEAD "):
            # A response to HEAD has the length of the body it would have, and no body.
            response += body
        with contextlib.suppress(OSError):
            # Read the head first: closing a socket with unread bytes resets the
            # connection, and the client could lose the answer.
            end = head.find(HEAD_END)
            connection.recv(end + len(HEAD_END) if end >= 0 else len(head))
            await asyncio.get_running_loop().sock_sendall(connection, response)
            connection.shutdown(socket.SHUT_WR)


async def _readable(sock: socket.socket, timeout: float) -> None:
    """Wait until ``sock`` is readable, at most ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    fd = sock.fileno()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await asyncio.wait_for(ready, timeout)
    except TimeoutError:
        pass
    finally:
        loop.remove_reader(fd)


async def _read_all(sock: socket.socket) -> bytes:
    """Everything ``sock`` sends until it closes."""
    loop = asyncio.get_running_loop()
    chunks = []
    while chunk := await loop.sock_recv(sock, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def serve(config: FrontConfig) -> int:
    """Run the front until SIGINT or SIGTERM; return the exit code."""
    logging.basicConfig(format="%(asctime)s %(message)s", level=logging.INFO)
    return asyncio.run(Front(config).run())
