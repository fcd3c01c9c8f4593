"""The telephony routes of `pipeline serve`: `/telephony/twilio`, `/telephony/telnyx` and
`/telephony/plivo`. The handshake is checked (Twilio's signature, the session limit), the
carrier's `start` is awaited and its credentials checked, then a session runs on a `PhoneLine`
until the call ends, watched as any call of the server is (`call_watchers`: `--record`, metrics,
traces). The server only hands these paths over (`RealtimeServer._handle`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import weakref
from http import HTTPStatus
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from ..base import events as ev
from ..base.clock import RealClock
from ..base.config import Config
from ..call.session import Session, Stages
from . import telephony_auth as auth
from .runtime import Desk
from .telephony import LEAD_MS, PhoneLine
from .telephony_dialects import DIALECTS, Dialect, Start, Stop, StreamError

log = logging.getLogger(__name__)

START_TIMEOUT_S = 10.0  # the carrier sends connected and start at once; a socket that does not


class PhoneHost(Protocol):
    """What the telephony routes need of the server that carries them."""

    stages: Stages
    config: Config
    token: str | None
    max_connections: int
    twilio_auth_token: str | None
    public_url: str | None
    desk: Desk | None  # the tools every phone call is offered: a call has no client to send them
    call_watchers: list[Any]  # recordings, traces, metrics (`ops_http`): phone calls too

    @property
    def calls(self) -> int:
        """Sessions the server runs now, of every kind."""
        ...


class PhoneRoutes:
    """`/telephony/twilio`, `/telephony/telnyx`, `/telephony/plivo` on the server: the handshake
    check (`check_request`) and the call (`answer`)."""

    def __init__(self, host: PhoneHost, *, lead_ms: int = LEAD_MS) -> None:
        self.host = host
        self.lead_ms = lead_ms
        self.lines: set[PhoneLine] = set()
        self._signed: weakref.WeakSet[ServerConnection] = weakref.WeakSet()

    @staticmethod
    def serves(path: str) -> bool:
        return path.split("?", 1)[0].rstrip("/") in DIALECTS

    def check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        host = self.host
        dialect = DIALECTS[request.path.split("?", 1)[0].rstrip("/")]
        if request.headers.get("Origin") is not None:  # carriers connect server to server
            return connection.respond(HTTPStatus.FORBIDDEN, "Telephony streams come from a "
                                      "carrier, not from a web page.\n")
        signature = request.headers.get(auth.SIGNATURE_HEADER)
        if signature is not None and dialect.name == "twilio" and host.twilio_auth_token:
            urls = auth.signed_urls(request.path, request.headers, host.public_url)
            if not auth.signature_ok(host.twilio_auth_token, signature, urls):
                return connection.respond(HTTPStatus.FORBIDDEN, "The X-Twilio-Signature does not "
                                          "match this URL and the configured auth token.\n")
            self._signed.add(connection)
        elif dialect.name == "twilio" and host.twilio_auth_token and not host.token:
            return connection.respond(HTTPStatus.FORBIDDEN, "Unsigned: this server takes Twilio "
                                      "streams signed with the account's auth token.\n")
        if host.calls >= host.max_connections:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE,
                                      f"This server is at its limit of {host.max_connections} "
                                      "sessions; try again when one ends.\n")
        return None

    def _authorized(self, ws: ServerConnection, dialect: Dialect, start: Start) -> bool:
        host = self.host
        if ws in self._signed:
            return True
        if not host.token and not (dialect.name == "twilio" and host.twilio_auth_token):
            return True  # nothing to check against: a loopback server, as for realtime clients
        if host.token is None:
            return False
        header = ws.request.headers.get(auth.TELNYX_TOKEN_HEADER) if ws.request else None
        return (auth.token_ok(host.token, start.params.get(auth.TOKEN_PARAM))
                or (dialect.name == "telnyx" and auth.token_ok(host.token, header)))

    async def _read_start(self, ws: ServerConnection, dialect: Dialect) -> Start | None:
        async def first_start() -> Start | None:
            async for message in ws:
                try:
                    event = dialect.read(json.loads(message))
                except StreamError as exc:
                    await ws.close(1003, str(exc)[:120])
                    return None
                except (ValueError, AttributeError):
                    continue
                if isinstance(event, Start):
                    return event
                if isinstance(event, Stop):
                    return None
            return None

        try:
            return await asyncio.wait_for(first_start(), START_TIMEOUT_S)
        except (TimeoutError, ConnectionClosed):
            return None

    async def answer(self, ws: ServerConnection) -> None:
        """One call: wait for its start, check it, then run a session on it until it ends."""
        assert ws.request is not None
        dialect = DIALECTS[ws.request.path.split("?", 1)[0].rstrip("/")]
        start = await self._read_start(ws, dialect)
        if start is None:
            await ws.close(1008, "no start event")
            return
        if not self._authorized(ws, dialect, start):
            await ws.close(1008, "unauthorized: send the server's token as the stream's custom "
                                 "parameter `token`")
            return
        line = PhoneLine(ws, dialect, start, lead_ms=self.lead_ms)
        events = ev.RecentEvents()
        session = Session(copy.deepcopy(self.host.config), self.host.stages, clock=RealClock(),
                          sink=line, events=events)
        line.bind(session)
        self.lines.add(line)
        watchers = []
        for watch in self.host.call_watchers:
            try:  # a recorder that cannot make its folder must not refuse the call
                watchers.append(watch(session, ""))
            except Exception:
                log.exception("a call watcher failed at the start of a phone call")
        try:
            if self.host.desk is not None:
                self.host.desk.attach(session)
            session.start()
            session.log(f"{dialect.name} call {start.call_id} (stream {start.stream_id})")
            session.mark_ready()
            await line.run(session, session.clock)
        finally:
            self.lines.discard(line)
            await session.close()
            for watcher in watchers:  # the recording is closed (summary.json written last)
                try:
                    watcher.finish(None)
                except Exception:
                    log.exception("a call watcher failed at the end of a phone call")
            session.release()
            events.clear()
            line.release()


__all__ = ["PhoneHost", "PhoneRoutes"]
