"""A local server that speaks the realtime-API protocol over WebSocket.

A client written for a hosted realtime voice API runs unchanged against
`ws://127.0.0.1:8765/v1/realtime`: one `Session` per connection, on a real clock, with the loaded
models shared (each model has its own lock, so inference is one at a time per model).

Audio formats: `realtime_protocol.py`; one connection, its events and its paced audio:
`realtime_connection.py`.

Every bad message (malformed JSON, unknown type, missing field, bad audio, too large) is answered
with an `error` event carrying a `code`, and the session stays up. The codes:

    invalid_json, invalid_event, unknown_event_type, missing_required_parameter, invalid_value,
    invalid_audio, message_too_large, input_audio_buffer_commit_empty, response_cancel_not_active,
    item_not_found, item_already_exists, invalid_audio_end_ms, server_error
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import hmac
import logging
import os
import sys
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.protocol import State

from ..base import events as ev
from ..base.clock import RealClock
from ..base.config import Config
from ..base.memory import bound_arenas, trim
from ..call.session import Session, Stages
from . import ops_http
from .realtime_connection import Connection
from .realtime_events import BETA, GA
from .realtime_protocol import AudioFormat, parse_format
from .runtime import Desk, add_config_args, add_desk_arg, load_config, load_desk
from .telephony_server import PhoneRoutes
from .web import page_response, select_subprotocol, subprotocol_token

log = logging.getLogger(__name__)

PATH = "/v1/realtime"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
TOKEN_ENV = "PIPELINE_SERVE_TOKEN"
TWILIO_TOKEN_ENV, PUBLIC_URL_ENV = "TWILIO_AUTH_TOKEN", "PIPELINE_PUBLIC_URL"  # docs/telephony.md
MAX_SESSIONS = 8  # calls served at once by default; `serve --max-sessions` sets another
_SOCKET_LIMIT_FACTOR = 8  # the socket takes larger messages so an oversize one gets an error event


class RealtimeServer:
    """Serves `/v1/realtime` on `host:port`: one session per connection, the models shared.

    host: 127.0.0.1 by default; bind wider only with a `token`.
    port: 8765 by default; 0 picks a free port (read `.port` after `start()`).
    token: when set, the handshake needs `Authorization: Bearer <token>` (else HTTP 401).
    max_message_bytes: 1 MiB; a larger message gets an `error` event (code message_too_large).
    lead_ms: 200; agent audio is sent this far ahead of when it is due to sound, then in real
        time, like a hosted API (enough for a client's jitter buffer, little to cut on barge-in).
    max_connections: MAX_SESSIONS at once (the models are shared: each more one slows them
        all); one more gets HTTP 503. `serve --max-sessions` sets it.
    twilio_auth_token, public_url: Twilio streams signed with this account token, over this URL
        (`telephony_server.py` answers `/telephony/{twilio,telnyx,plivo}`).
    allowed_origins: web pages (`http://host:port`) that may connect besides loopback ones; a
        browser sends `Origin`, and a page from anywhere else gets HTTP 403.
    desk: the tools (and ledger) every phone call is offered (`runtime.Desk`); a realtime client
        brings its own with `session.update`.
    """

    def __init__(self, *, stages: Stages, config: Config, host: str = "127.0.0.1",
                 port: int = 8765, token: str | None = None, max_message_bytes: int = 1 << 20,
                 lead_ms: int = 200, max_connections: int = MAX_SESSIONS,
                 allowed_origins: tuple[str, ...] = (), twilio_auth_token: str | None = None,
                 public_url: str | None = None, desk: Desk | None = None) -> None:
        if lead_ms < 0:
            raise ValueError(f"lead_ms must be 0 or more, got {lead_ms}.")
        if host not in LOOPBACK and not token:
            raise ValueError(f"listening on {host} without a token would let anyone who can reach "
                             f"the port use the models: set --token (or {TOKEN_ENV}, or "
                             "--token-file), or bind 127.0.0.1.")
        self.stages = stages
        self.config = config
        self.host = host
        self.port = port
        self.token = token
        self.max_message_bytes = max_message_bytes
        self.lead_ms = lead_ms
        self.max_connections = max_connections
        self.allowed_origins = allowed_origins
        self.connections: set[Connection] = set()
        self.twilio_auth_token, self.public_url = twilio_auth_token, public_url
        self.desk = desk
        self.phone = PhoneRoutes(self)
        self._server: Server | None = None
        # production operation (`ops_http`): False once draining (new connections get 503),
        # extra HTTP paths (health, readiness, metrics), and what follows each call
        self.accepting = True
        self.http_routes: dict[str, ops_http.Route] = {}
        self.call_watchers: list[ops_http.Watch] = []
        self._ended_by_server: dict[Connection, str] = {}
        self._call_left = asyncio.Event()

    @property
    def calls(self) -> int:
        return len(self.connections) + len(self.phone.lines)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 literal
        return f"ws://{host}:{self.port}{PATH}"

    async def start(self) -> None:
        self._server = await serve(self._handle, self.host, self.port,
                                   process_request=self._check_request,
                                   select_subprotocol=select_subprotocol,
                                   max_size=self.max_message_bytes * _SOCKET_LIMIT_FACTOR,
                                   create_connection=_Socket)
        self.port = next(iter(self._server.sockets)).getsockname()[1]

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    async def stop(self) -> None:
        """Close every connection (each frees its session) and stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    @property
    def active_calls(self) -> int:
        return len(self.connections)

    async def wait_calls_ended(self, timeout_s: float) -> bool:
        """Wait until no call is connected, at most `timeout_s`; True if none is."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.connections:
            self._call_left.clear()
            try:
                await asyncio.wait_for(self._call_left.wait(), deadline - loop.time())
            except TimeoutError:
                return not self.connections
        return True

    async def end_calls(self, code: int, reason: str, *, why: str) -> None:
        """Close every call now with this close code and reason; `why` is its end reason."""
        for connection in list(self.connections):
            self._ended_by_server[connection] = why
        await asyncio.gather(*(c.close_after_sending(code, reason)
                               for c in list(self.connections)), return_exceptions=True)

    def authorized(self, headers: Headers) -> bool:
        """The request carries this server's token (or the server has none)."""
        return self.token is None or _bearer_ok(headers, self.token)

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        route = ops_http.find_route(self.http_routes, urlsplit(request.path).path)
        if route is not None:  # health, readiness, metrics, recordings (`ops_http`)
            status, content_type, body = route(request)
            response = connection.respond(status, "")
            response.body = body.encode("utf-8") if isinstance(body, str) else body
            for name in ("Content-Type", "Content-Length"):  # set again would add, not replace
                del response.headers[name]
            response.headers["Content-Type"] = content_type
            response.headers["Content-Length"] = str(len(response.body))
            return response
        page = page_response(connection, request)  # the browser page at `/`, served without token
        if page is not None:
            return page
        if self.phone.serves(request.path):
            if not self.accepting:  # draining: a new phone call is refused like any other
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, ops_http.DRAINING_BODY)
            return self.phone.check_request(connection, request)
        if urlsplit(request.path).path.rstrip("/") != PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, f"Not found: connect to {self.url}\n")
        if self.token is not None and not _bearer_ok(request.headers, self.token):
            response = connection.respond(HTTPStatus.UNAUTHORIZED,
                                          "Send the header `Authorization: Bearer <token>` (or, "
                                          "from a browser, the subprotocol "
                                          "`openai-insecure-api-key.<token>`) with the token this "
                                          "server was started with.\n")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        origin = request.headers.get("Origin")
        if origin is not None and not self._origin_ok(origin):
            shown = _header_bytes(origin[:100]).decode("ascii", "backslashreplace")
            return connection.respond(HTTPStatus.FORBIDDEN, f"Web pages from {shown} may not "
                                      "use this server; start it with that origin allowed.\n")
        if not self.accepting:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, ops_http.DRAINING_BODY)
        if self.calls >= self.max_connections:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE,
                                      f"This server is at its limit of {self.max_connections} "
                                      "sessions; try again when one ends.\n")
        return None

    def _origin_ok(self, origin: str) -> bool:
        """A browser page may drive the server only from loopback or an allowed origin."""
        if origin in self.allowed_origins:
            return True
        host = urlsplit(origin).hostname or ""
        return host in LOOPBACK

    async def _handle(self, ws: ServerConnection) -> None:
        if ws.request is not None and self.phone.serves(ws.request.path):
            await self.phone.answer(ws)
            return
        connection = Connection(ws, config=self.config, lead_ms=self.lead_ms,
                                max_message_bytes=self.max_message_bytes, dialect=dialect_of(ws))
        clock = RealClock()
        # each session changes its own config (session.update), so none may share the server's
        events = ev.RecentEvents()
        session = Session(copy.deepcopy(self.config), self.stages, clock=clock, sink=connection,
                          events=events)
        connection.bind(session)
        watchers = []
        for watch in self.call_watchers:
            try:  # a recorder that cannot make its folder must not refuse the call
                watchers.append(watch(session, connection.wire.session_id))
            except Exception:
                log.exception("a call watcher failed at the start of a call")
        if isinstance(ws, _Socket):
            ws.last_words = lambda: connection.encoded(ev.error_event("message_too_large", (
                f"A message was larger than the {self.max_message_bytes * _SOCKET_LIMIT_FACTOR} bytes "
                "this socket reads, so it closes (1009) and the session ends. Send audio in "
                f"appends of 20-100 ms, each under {self.max_message_bytes} bytes, and reconnect.")))
        self.connections.add(connection)
        try:
            session.start()  # emits session.created
            await connection.run(session, clock)
        finally:
            self.connections.discard(connection)
            self._call_left.set()
            await session.close()
            reason = self._ended_by_server.pop(connection, None)
            for watcher in watchers:
                try:
                    watcher.finish(reason)
                except Exception:  # a failing watcher must not keep the call's session alive
                    log.exception("a call watcher failed at the end of a call")
            # free the call's audio and events now, not at the next cyclic garbage collection
            session.release()
            events.clear()
            connection.release()
            if isinstance(ws, _Socket):
                ws.last_words = None
            if not self.calls:  # the last call left: its buffers' pages go back to the system
                trim()


class _Socket(ServerConnection):
    """A server socket that says why before a frame too large for it closes it.

    The WebSocket library refuses a frame over `max_size` from its header, before reading it,
    and must then close with 1009 (the rest of the frame cannot be skipped safely). Its close
    reason alone is easy to miss, so the session's `error` event goes out just before the
    close frame, as the realtime protocol promises for a message that is too large.
    """

    def __init__(self, protocol: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(protocol, *args, **kwargs)
        self.last_words: Callable[[], list[str]] | None = None
        fail = protocol.fail

        def fail_saying_why(code: int, reason: str = "") -> None:
            if (code == CloseCode.MESSAGE_TOO_BIG and self.last_words is not None
                    and protocol.state is State.OPEN and not protocol.expect_continuation_frame):
                for message in self.last_words():
                    protocol.send_text(message.encode("utf-8"))
            fail(code, reason)

        protocol.fail = fail_saying_why


def dialect_of(ws: ServerConnection) -> str:
    """Beta when the client asks for it (`OpenAI-Beta: realtime=v1`, as the hosted API reads it)."""
    asked = ws.request.headers.get("OpenAI-Beta", "") if ws.request is not None else ""
    return BETA if "realtime=v1" in asked.replace(" ", "").split(",") else GA


def _bearer_ok(headers: Headers, token: str) -> bool:
    given = headers.get("Authorization", "")
    from_browser = subprotocol_token(headers)  # a browser cannot set Authorization on a WebSocket
    return hmac.compare_digest(_header_bytes(given), f"Bearer {token}".encode()) or (
        from_browser is not None and hmac.compare_digest(_header_bytes(from_browser),
                                                         token.encode("utf-8")))


def _header_bytes(value: str) -> bytes:
    """A header's bytes as sent: the WebSocket library keeps each non-ASCII byte as a surrogate,
    which plain UTF-8 cannot encode (a handshake with `Bearer \\xff` failed with HTTP 500)."""
    return value.encode("utf-8", "surrogateescape")


# --- command line ----------------------------------------------------------------------------


def add_serve_args(parser: argparse.ArgumentParser) -> None:
    """The `serve` subcommand's arguments: where to listen, the token, and the config options."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    parser.add_argument("--token", help="require `Authorization: Bearer TOKEN` from clients "
                        f"(better: the {TOKEN_ENV} environment variable or --token-file, which "
                        "other users cannot see in the process list)")
    parser.add_argument("--token-file", help="read the token from this file (first line)")
    parser.add_argument("--max-sessions", type=_positive, default=MAX_SESSIONS, metavar="N",
                        help=f"serve at most N calls at once, one more gets HTTP 503 (default "
                             f"{MAX_SESSIONS}; the models are shared, so each more slows them all)")
    ops_http.add_ops_args(parser)
    add_desk_arg(parser)
    add_config_args(parser)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def serve_main(args: argparse.Namespace) -> int:
    """`python -m pipeline serve`: load the models once, then serve until interrupted."""
    desk = load_desk(args.desk) if args.desk else None
    config = load_config(args, base=desk.base_config() if desk is not None else None)
    if desk is not None:
        desk.open_ledger(config.call.db_path)
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.token_file:
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").splitlines()[0].strip()
        except (OSError, IndexError) as exc:
            print(f"error: cannot read a token from {args.token_file} ({exc}); write the token on "
                  "its first line", file=sys.stderr)
            return 2
    if args.host not in LOOPBACK and not token:
        print(f"error: listening on {args.host} without a token would let anyone who can reach "
              f"the port use the models; set {TOKEN_ENV}, --token-file or --token, or bind "
              "127.0.0.1", file=sys.stderr)
        return 2
    bound_arenas()  # before the models start their threads: see pipeline/base/memory.py
    stages = Stages.load(config, progress=lambda m: print(m, file=sys.stderr))
    server = RealtimeServer(stages=stages, config=config, host=args.host, port=args.port,
                            token=token, max_connections=args.max_sessions,
                            twilio_auth_token=os.environ.get(TWILIO_TOKEN_ENV) or None,
                            public_url=os.environ.get(PUBLIC_URL_ENV) or None, desk=desk)
    made = ops_http.install(server, args)
    try:
        asyncio.run(ops_http.serve_until_stopped(server, args.drain_s, made,
                                                 args.drain_goodbye))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); "
              "pick another --port or stop the program using it", file=sys.stderr)
        return 2
    finally:
        if desk is not None and desk.ledger is not None:
            desk.ledger.close()
    return 0


__all__ = ["AudioFormat", "RealtimeServer", "add_serve_args", "parse_format", "serve_main"]
