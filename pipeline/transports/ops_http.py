"""Running `pipeline serve` in production: health, readiness, metrics and a graceful drain.

- `/healthz`: 200 while the process serves at all (a liveness probe).
- `/readyz`: 200 while it accepts calls, 503 once it drains (a proxy's health check: HAProxy's
  `option httpchk GET /readyz` takes a draining worker out of rotation).
- `/metrics`: Prometheus text format, with `--metrics` (`ops_metrics.ServeMetrics`).
- On SIGTERM the server drains (`drain`): readiness goes false and new connections get HTTP 503
  with a reason, calls in progress may finish for `--drain-s` seconds, and those still connected
  then hear a short goodbye (`goodbye.py`) and are closed with 1001 (going away) and a reason a
  client can show.

These paths are served without the token: they say how many calls there are, never what was said.
Nothing here imports the server; it works on what the server offers (`OpsServer`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request

from ..base.errors import ConfigError
from ..call.session import Session
from .goodbye import GOODBYE, say_goodbye

DRAIN_S = 30.0  # default: long enough for most turns to end, short of a typical 60 s kill timeout
DRAIN_CLOSE_CODE = 1001  # going away
DRAIN_CLOSE_REASON = "the server is shutting down; connect again to continue"
DRAINING_BODY = ("This server is shutting down and takes no new calls; connect again and the "
                 "proxy sends you to another worker.\n")

# request -> (status, content type, body); a path ending in "/" answers every path under it
Route = Callable[[Request], tuple[HTTPStatus, str, str | bytes]]


def find_route(routes: dict[str, Route], path: str) -> Route | None:
    """The route for exactly this path, else the longest one ending in "/" that it is under."""
    if path in routes:
        return routes[path]
    under = [p for p in routes if p.endswith("/") and path.startswith(p)]
    return routes[max(under, key=len)] if under else None


class CallWatcher(Protocol):
    """Follows one call from before it starts; told when it is over, with the reason if the
    server ended it (`"drained"`), else None."""

    def finish(self, reason: str | None = None) -> None: ...


# (the call's session before it starts, the session id its client sees) -> its watcher
Watch = Callable[[Session, str], CallWatcher]


class OpsServer(Protocol):
    """What the operations need of a server (`RealtimeServer` offers it)."""

    accepting: bool
    http_routes: dict[str, Route]
    connections: set[Any]  # each with the `session` it carries
    config: Any  # the server's Config (`call.db_path`: the ledger the metrics count)

    def authorized(self, headers: Headers) -> bool: ...
    call_watchers: list[Watch]

    @property
    def active_calls(self) -> int: ...

    async def wait_calls_ended(self, timeout_s: float) -> bool: ...

    async def end_calls(self, code: int, reason: str, *, why: str) -> None: ...


def add_ops_args(parser: argparse.ArgumentParser) -> None:
    """`serve`'s production switches."""
    parser.add_argument("--metrics", action="store_true",
                        help="serve Prometheus metrics at /metrics (needs the ops extra: "
                             "pip install -e '.[ops]')")
    parser.add_argument("--drain-s", type=float, default=DRAIN_S, metavar="SECONDS",
                        help="on SIGTERM, let calls in progress finish this long before closing "
                             f"them (default {DRAIN_S:g}); readiness goes false at once")
    parser.add_argument("--drain-goodbye", default=GOODBYE, metavar="TEXT",
                        help="what the agent says on the calls still connected when the drain "
                             f"ends, before they close (default: {GOODBYE!r}; '' for nothing)")
    parser.add_argument("--traces", action="store_true",
                        help="export OpenTelemetry traces (a span per call, turn and stage) over "
                             "OTLP/HTTP, configured by the OTEL_* environment variables (ops extra)")
    parser.add_argument("--record", type=Path, metavar="DIR",
                        help="record every call into DIR: a stereo WAV (caller left, agent right), "
                             "its event log and a JSON summary (off by default)")
    parser.add_argument("--record-max-age-days", type=float, default=30.0, metavar="DAYS",
                        help="remove recordings older than this (default 30)")
    parser.add_argument("--record-max-gb", type=float, default=10.0, metavar="GB",
                        help="then remove the oldest until the rest fit in this (default 10)")


def install(server: OpsServer, args: argparse.Namespace | None = None) -> dict[str, Any]:
    """Health and readiness always; metrics, traces and recordings when `args` ask for them.

    Returns what was made, by name (`"metrics"`, `"traces"`, `"recordings"`); `serve_until_stopped` shuts down
    each that has a `shutdown()` once the server has stopped.
    """
    server.http_routes["/healthz"] = lambda _: (HTTPStatus.OK, "text/plain", "ok\n")
    server.http_routes["/readyz"] = lambda _: readiness(server)
    made: dict[str, Any] = {}
    if args is not None and getattr(args, "metrics", False):
        made["metrics"] = install_metrics(server, ledger_path=server.config.call.db_path)
    if args is not None and getattr(args, "traces", False):
        try:
            from .telemetry import CallTracer

            tracer = CallTracer.from_environment()
        except ImportError as exc:
            raise ConfigError(f"--traces needs the OpenTelemetry SDK and its OTLP/HTTP exporter "
                              f"({exc}): pip install -e '.[ops]'") from None
        server.call_watchers.append(tracer.watch)
        made["traces"] = tracer
    if args is not None and getattr(args, "record", None) is not None:
        from .recording import Recorder

        recorder = Recorder(args.record, max_age_days=args.record_max_age_days,
                            max_bytes=int(args.record_max_gb * (1 << 30)))
        server.call_watchers.append(recorder.watch)
        server.http_routes[RECORDINGS_PATH] = lambda request: recording_route(
            server, recorder, request)
        made["recordings"] = recorder
    return made


def install_metrics(server: OpsServer, registry: Any = None, *,
                    ledger_path: str | None = None) -> Any:
    try:
        from .ops_metrics import ServeMetrics

        metrics = ServeMetrics(registry, ledger_path=ledger_path)
    except ImportError as exc:
        raise ConfigError(f"--metrics needs prometheus-client ({exc}): "
                          "pip install -e '.[ops]'") from None
    server.call_watchers.append(metrics.watch)

    def scrape(_: Request) -> tuple[HTTPStatus, str, str]:
        content_type, text = metrics.exposition()
        return HTTPStatus.OK, content_type, text

    server.http_routes["/metrics"] = scrape
    return metrics


RECORDINGS_PATH = "/recordings/"
_RECORDING_FILES = {"call.wav": "audio/wav", "summary.json": "application/json",
                    "events.jsonl": "application/x-ndjson"}


def recording_route(server: OpsServer, recorder: Any,
                    request: Request) -> tuple[HTTPStatus, str, str | bytes]:
    """`GET /recordings/<session id>/<call.wav|summary.json|events.jsonl>`: a finished call's
    recording (the newest of that id), with the server's token like the WebSocket (the browser
    page fetches it with `Authorization`); 202 while that session is recorded or its files are
    written, 404 for a session never recorded."""
    if not server.authorized(request.headers):
        return HTTPStatus.UNAUTHORIZED, "text/plain", "Send `Authorization: Bearer <token>`.\n"
    parts = urlsplit(request.path).path[len(RECORDINGS_PATH):].split("/")
    if len(parts) != 2 or parts[1] not in _RECORDING_FILES:
        return (HTTPStatus.NOT_FOUND, "text/plain",
                f"Ask for {RECORDINGS_PATH}<session id>/<{'|'.join(_RECORDING_FILES)}>.\n")
    folder = recorder.finished(parts[0])
    if folder is None and recorder.in_progress(parts[0]):
        return HTTPStatus.ACCEPTED, "text/plain", "Still recording or writing it: ask again.\n"
    if folder is None:
        return HTTPStatus.NOT_FOUND, "text/plain", "No finished recording of that session.\n"
    return HTTPStatus.OK, _RECORDING_FILES[parts[1]], (folder / parts[1]).read_bytes()


def readiness(server: OpsServer) -> tuple[HTTPStatus, str, str]:
    if server.accepting:
        return HTTPStatus.OK, "text/plain", f"ready: {server.active_calls} calls\n"
    return (HTTPStatus.SERVICE_UNAVAILABLE, "text/plain",
            f"draining: {server.active_calls} calls still in progress\n")


async def drain(server: OpsServer, deadline_s: float, goodbye: str = GOODBYE) -> int:
    """Stop accepting, let calls finish for `deadline_s`, then say `goodbye` on the rest (cut
    what the agent is saying; up to `GOODBYE_S`; "" for none) and close them.

    Returns how many calls were still connected at the deadline (and were closed).
    """
    server.accepting = False
    if server.active_calls:
        print(f"draining: {server.active_calls} calls in progress, up to {deadline_s:g} s",
              file=sys.stderr, flush=True)
    if await server.wait_calls_ended(deadline_s):
        return 0
    left = server.active_calls
    print(f"drain deadline: closing {left} calls", file=sys.stderr, flush=True)
    if goodbye:
        sessions = [c.session for c in list(server.connections) if c.session is not None]
        for failed in await asyncio.gather(*(say_goodbye(s, goodbye) for s in sessions),
                                           return_exceptions=True):
            if isinstance(failed, Exception):  # the call still closes
                print(f"a goodbye failed: {type(failed).__name__}: {failed}", file=sys.stderr)
    await server.end_calls(DRAIN_CLOSE_CODE, DRAIN_CLOSE_REASON, why="drained")
    return left


async def serve_until_stopped(server: Any, drain_s: float, made: dict[str, Any] | None = None,
                              goodbye: str = GOODBYE) -> None:
    """Serve until SIGINT (close every call now) or SIGTERM (drain first; a second one closes now)."""
    import signal

    await server.start()
    print(f"listening on {server.url}", flush=True)
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[int] = loop.create_future()

    def on_signal(sig: int) -> None:
        if not stopped.done():
            stopped.set_result(sig)
        elif server.accepting is False:  # a second SIGTERM while draining: stop now
            drainer.cancel()

    for one in (signal.SIGINT, signal.SIGTERM):  # close every call cleanly on Ctrl-C or a stop
        try:
            loop.add_signal_handler(one, on_signal, one)
        except (NotImplementedError, RuntimeError):
            pass  # no loop signal handlers here (Windows): Ctrl-C raises KeyboardInterrupt
    drainer: asyncio.Future[int] = loop.create_future()
    try:
        sig = await stopped
        if sig == signal.SIGTERM:
            drainer = asyncio.ensure_future(drain(server, drain_s, goodbye))
            try:
                await drainer
            except asyncio.CancelledError:
                if not drainer.cancelled():
                    raise
    finally:
        await server.stop()
        for part in (made or {}).values():
            if hasattr(part, "shutdown"):
                part.shutdown()  # e.g. the traces still batched go out
