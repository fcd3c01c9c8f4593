"""Who may open a telephony stream: Twilio's request signature, or our bearer token.

Twilio signs the WebSocket handshake like a webhook: `X-Twilio-Signature` is the base64 HMAC-SHA1,
keyed with the account's auth token, of the URL it connects to (`wss://host/path?query`; a GET
has no form fields to append). Behind a TLS proxy the server cannot see that URL, so it is
rebuilt from `public_url` when set, else from the `Host` header; with and without `:443`, as
Twilio's own validators try it. Any carrier may instead carry the server's bearer token in the
stream's custom parameters (`token`), which arrive in the `start` event; Telnyx may also send it
as its streaming auth token header.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from urllib.parse import urlsplit

from websockets.datastructures import Headers

SIGNATURE_HEADER = "X-Twilio-Signature"
TELNYX_TOKEN_HEADER = "x-telnyx-streaming-auth-token"
TOKEN_PARAM = "token"


def twilio_signature(auth_token: str, url: str) -> str:
    digest = hmac.new(auth_token.encode("utf-8"), url.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def _with_and_without_443(url: str) -> list[str]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    rest = url[len(f"{parts.scheme}://{parts.netloc}"):]
    if parts.port == 443:
        return [url, f"{parts.scheme}://{host}{rest}"]
    if parts.port is None and parts.scheme in ("wss", "https"):
        return [url, f"{parts.scheme}://{host}:443{rest}"]
    return [url]


def signed_urls(path: str, headers: Headers, public_url: str | None) -> list[str]:
    """The URLs Twilio may have signed for a handshake on `path` (with its query)."""
    if public_url:
        base = public_url.rstrip("/")
        if base.startswith("https://"):
            base = "wss://" + base[len("https://"):]
        urls = [base + path]
    else:
        urls = [f"wss://{headers.get('Host', '')}{path}"]
    return [u for url in urls for u in _with_and_without_443(url)]


def signature_ok(auth_token: str, signature: str, urls: list[str]) -> bool:
    given = signature.encode("utf-8", "surrogateescape")
    return any(hmac.compare_digest(given, twilio_signature(auth_token, url).encode("ascii"))
               for url in urls)


def token_ok(token: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8", "surrogateescape"),
                                                     token.encode("utf-8"))
