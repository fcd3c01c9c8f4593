"""A small pool of keep-alive HTTP/1.1 connections to one server, on the standard library.

One request at a time per connection. A response read to its end gives its connection back to
the pool; one closed early (a cancelled stream) closes its connection, which is how a streaming
server learns to stop. Failures come out as four kinds a caller can explain to a person.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit


class HTTPFailure(Exception):
    """The request did not get a complete answer."""


class Refused(HTTPFailure):
    """Nothing listens there (or the name does not resolve)."""


class ConnectTimedOut(HTTPFailure):
    """The server did not accept the connection in time."""


class ReadTimedOut(HTTPFailure):
    """The server accepted the request but sent nothing for the read timeout."""


class Dropped(HTTPFailure):
    """The connection broke while the request or its answer was under way."""


# A keep-alive connection the server closed while it sat idle fails like this on reuse; the
# server never saw the request, so it is sent once more on a fresh connection.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class Response:
    """An answer being read: its status, then its body as lines or whole."""

    def __init__(self, pool: KeepAlivePool, conn: http.client.HTTPConnection,
                 raw: http.client.HTTPResponse) -> None:
        self._pool, self._conn, self._raw = pool, conn, raw
        self.status = raw.status
        self._done = False

    def lines(self) -> Iterator[str]:
        """Body lines without their line ends, as they arrive (for server-sent events)."""
        while True:
            line = self._guard(self._raw.readline)
            if not line:
                return
            yield line.decode("utf-8", errors="replace").rstrip("\r\n")

    def read(self) -> bytes:
        return self._guard(self._raw.read)

    def json(self) -> Any:
        return json.loads(self.read() or b"null")

    def text(self) -> str:
        return self.read().decode("utf-8", errors="replace")

    def close(self, *, drain: bool = False) -> None:
        """Give the connection back if the body was read to its end (`drain` reads what is
        left first: the end of a stream after its last event); otherwise close it."""
        if self._done:
            return
        self._done = True
        if drain:
            try:
                self._raw.read()
            except (HTTPFailure, OSError, http.client.HTTPException):
                pass
        if self._raw.isclosed() and not self._raw.will_close:
            self._pool._give_back(self._conn)
        else:
            self._conn.close()

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _guard(self, read: Any) -> bytes:
        try:
            return read()
        except TimeoutError:
            self._conn.close()
            raise ReadTimedOut() from None
        except (OSError, http.client.HTTPException) as exc:
            self._conn.close()
            raise Dropped(f"{type(exc).__name__}: {exc}") from None


class KeepAlivePool:
    """Connections to the server of `base_url`, at most `size` kept idle between requests."""

    def __init__(self, base_url: str, *, size: int, connect_timeout_s: float,
                 read_timeout_s: float, headers: dict[str, str] | None = None) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"{base_url!r} is not an http(s) URL like http://127.0.0.1:8080/v1")
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self._cls = (http.client.HTTPSConnection if url.scheme == "https"
                     else http.client.HTTPConnection)
        self.size = size
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.headers = {"Content-Type": "application/json", **(headers or {})}
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: dict[str, Any]) -> Response:
        """Send a JSON body; returns once the status line and headers have arrived."""
        payload = json.dumps(body).encode("utf-8")
        while True:
            conn, reused = self._take()
            try:
                if conn.sock is None:
                    self._connect(conn)
                conn.request("POST", path, body=payload, headers=self.headers)
                return Response(self, conn, conn.getresponse())
            except _STALE as exc:
                conn.close()
                if not reused:
                    raise Dropped(f"{type(exc).__name__}: {exc}") from None
            except TimeoutError:
                conn.close()
                raise ReadTimedOut() from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise Dropped(f"{type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _connect(self, conn: http.client.HTTPConnection) -> None:
        try:
            conn.connect()
        except TimeoutError:
            conn.close()
            raise ConnectTimedOut() from None
        except (ConnectionRefusedError, socket.gaierror) as exc:
            conn.close()
            raise Refused(str(exc)) from None
        conn.sock.settimeout(self.read_timeout_s)  # from here on: the wait for the answer

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._cls(self.host, self.port, timeout=self.connect_timeout_s), False

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self.size:
                self._idle.append(conn)
                return
        conn.close()
