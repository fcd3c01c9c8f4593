"""The browser page served by `pipeline serve` at `/`, and the browser's way to pass the token.

The page (`pipeline/web/`: HTML, CSS and ES modules, no build step) is a client of
`/v1/realtime` like any other. It holds no secret, so it is served without the token; the
WebSocket handshake still needs one. Browsers cannot set `Authorization` on a WebSocket, so,
as with the hosted API, the token may come as the subprotocol `openai-insecure-api-key.<token>`
next to `realtime`, which the server then selects.
"""

from __future__ import annotations

import email.utils
from collections.abc import Sequence
from http import HTTPStatus
from importlib import resources

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

SUBPROTOCOL = "realtime"
TOKEN_SUBPROTOCOL_PREFIX = "openai-insecure-api-key."
_CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                  ".css": "text/css; charset=utf-8"}
# Everything the page loads comes from this server; the socket goes back to the same host.
_CSP = ("default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'none'")


def _page_files() -> dict[str, str]:
    """URL path -> file name in pipeline/web: `/` is the page, each other file is its own name."""
    web = resources.files("pipeline") / "web"
    names = sorted(entry.name for entry in web.iterdir()
                   if entry.is_file() and "." + entry.name.rsplit(".", 1)[-1] in _CONTENT_TYPES)
    return {"/": "index.html", **{f"/{name}": name for name in names}}


def page_response(connection: ServerConnection, request: Request) -> Response | None:
    """The page or one of its files for a plain GET (not a WebSocket upgrade); else None."""
    if "websocket" in request.headers.get("Upgrade", "").lower():
        return None
    path = request.path.split("?", 1)[0]
    name = _page_files().get(path)
    if name is None:
        return None
    body = (resources.files("pipeline") / "web" / name).read_bytes()
    headers = Headers([
        ("Date", email.utils.formatdate(usegmt=True)),
        ("Connection", "close"),
        ("Content-Length", str(len(body))),
        ("Content-Type", _CONTENT_TYPES["." + name.rsplit(".", 1)[-1]]),
        ("Cache-Control", "no-cache"),  # a new version of the package shows on the next load
        ("Content-Security-Policy", _CSP),
        ("X-Content-Type-Options", "nosniff"),
    ])
    return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)


def offered_subprotocols(headers: Headers) -> list[str]:
    """The subprotocols a client offered, in order (one header or several, comma-separated)."""
    return [part.strip() for value in headers.get_all("Sec-WebSocket-Protocol")
            for part in value.split(",") if part.strip()]


def subprotocol_token(headers: Headers) -> str | None:
    """The token a browser passed as `openai-insecure-api-key.<token>`, if any."""
    for offered in offered_subprotocols(headers):
        if offered.startswith(TOKEN_SUBPROTOCOL_PREFIX):
            return offered[len(TOKEN_SUBPROTOCOL_PREFIX):]
    return None


def select_subprotocol(connection: ServerConnection,
                       subprotocols: Sequence[Subprotocol]) -> Subprotocol | None:
    """Answer `realtime` when offered (a browser fails a handshake that offers one and gets none
    back); a client that offers nothing gets no subprotocol, as before."""
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in subprotocols else None


__all__ = ["page_response", "select_subprotocol", "subprotocol_token"]
