"""A raw HTTP exchange that does not ask the server to close: requests that carry their own
``Connection`` header (``Upgrade``) are answered on a connection Tornado keeps open, so the
answer is read by its ``Content-Length`` rather than to the end of the stream."""

from __future__ import annotations

import socket


def exchange(
    port: int, target: str | bytes, headers: dict[str, str], timeout: float = 60
) -> tuple[int, dict[str, str], bytes]:
    """GET ``target`` on 127.0.0.1:``port`` with exactly ``headers``: the status, the response
    headers by lower-case name, and the body (as long as its ``Content-Length`` says, or up
    to the end of the stream without one)."""
    target = target if isinstance(target, bytes) else target.encode("utf-8")
    lines = [*(f"{k}: {v}" for k, v in headers.items()), "", ""]
    request = b"GET " + target + b" HTTP/1.1\r\n" + "\r\n".join(lines).encode("utf-8")
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        parsed = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            parsed[name.strip().lower()] = value.strip()
        length = int(parsed.get("content-length", -1))
        while length < 0 or len(body) < length:
            chunk = connection.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(status_line.split(" ")[1]), parsed, body


async def send_frames(
    base_url: str,
    token: str,
    frames: list[str | bytes],
    read: bool = True,
    wait: float = 2.0,
    query: str = "",
) -> list[str | bytes]:
    """Open the app's websocket for the session of ``token``, send ``frames`` as they are
    (text or binary) until the server closes the connection, and return what the server sent
    in the ``wait`` seconds after (its ACK first; with ``read`` False nothing is read until
    every frame is sent). ``query`` goes in the websocket's address, as BokehJS puts the
    page's query there."""
    import asyncio

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import WebSocketClosedError, websocket_connect

    host = base_url.split("://", 1)[1]
    address = f"ws://{host}/main/ws" + (f"?{query}" if query else "")
    request = HTTPRequest(address, headers={"Origin": base_url})
    connection = await websocket_connect(request, subprotocols=["bokeh", token])
    received: list[str | bytes] = []
    try:
        for frame in frames:
            try:
                await connection.write_message(frame, binary=isinstance(frame, bytes))
            except WebSocketClosedError:
                break  # the server closed a connection it could not read: its answer
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while read and (left := deadline - loop.time()) > 0:
            try:
                message = await asyncio.wait_for(connection.read_message(), left)
            except TimeoutError:
                break
            if message is None:
                break
            received.append(message)
    finally:
        connection.close()
    return received
