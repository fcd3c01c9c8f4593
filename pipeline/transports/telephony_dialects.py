"""The carriers' media-stream dialects: each one's JSON events read into one shape, and ours
written in its words. Written from the carriers' public documentation:

- Twilio Media Streams (`<Connect><Stream>`): `connected`, `start`, `media`, `mark`, `dtmf`,
  `stop` in; `media`, `mark`, `clear` out.
- Telnyx media streaming (bidirectional, RTP mode): the same names, snake_case fields, the
  stream id beside the event rather than in it; `error` frames are logged.
- Plivo audio streams (`<Stream bidirectional="true">`): `start`, `media`, `dtmf`,
  `playedStream` (a checkpoint reached), `clearedAudio` in; `playAudio`, `checkpoint`,
  `clearAudio` out. Plivo sends no `stop`: the socket closing ends the call.

Audio is 8 kHz G.711 both ways (μ-law; A-law where Telnyx's stream says PCMA), base64 in JSON.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

MULAW, ALAW = "mulaw", "alaw"
_ENCODINGS = {"audio/x-mulaw": MULAW, "pcmu": MULAW, "audio/x-alaw": ALAW, "pcma": ALAW}


class StreamError(ValueError):
    """A carrier event this server cannot use; the message says what is wrong."""


@dataclass(frozen=True)
class Start:
    stream_id: str
    call_id: str
    encoding: str  # MULAW or ALAW
    rate_hz: int
    params: dict[str, str] = field(default_factory=dict)  # custom parameters / extra headers


@dataclass(frozen=True)
class Media:
    payload: bytes
    chunk: int | None = None  # the carrier's sequence for this track, when it sends one


@dataclass(frozen=True)
class Mark:
    name: str  # a mark (checkpoint) we sent has played out


@dataclass(frozen=True)
class Dtmf:
    digit: str


@dataclass(frozen=True)
class Stop:
    pass


Event = Start | Media | Mark | Dtmf | Stop


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _text(value: Any, what: str) -> str:
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
        return str(value)
    raise StreamError(f"the {what} is missing or not text")


def _payload(media: Any) -> Media | None:
    if not isinstance(media, dict):
        raise StreamError("a media event without its `media` object")
    if media.get("track") not in (None, "inbound", "inbound_track"):
        return None  # the agent's own track, streamed back with both_tracks: not the caller
    try:
        data = base64.b64decode(_text(media.get("payload"), "media payload"), validate=True)
    except (binascii.Error, ValueError):
        raise StreamError("a media payload that is not base64") from None
    chunk = media.get("chunk")
    try:
        number = int(chunk) if chunk is not None else None
    except (TypeError, ValueError):
        number = None
    return Media(data, number)


def _format(fmt: Any, encoding_key: str, rate_key: str) -> tuple[str, int]:
    encoding = _ENCODINGS.get(str(_get(fmt, encoding_key) or "").lower())
    if encoding is None:
        raise StreamError(f"media format {_get(fmt, encoding_key)!r} is not 8 kHz G.711; ask the "
                          "carrier for audio/x-mulaw (PCMU) or PCMA at 8000 Hz")
    try:
        rate = int(_get(fmt, rate_key) or 8000)
    except (TypeError, ValueError):
        rate = 0
    if rate != 8000:
        raise StreamError(f"media at {_get(fmt, rate_key)!r} Hz; ask the carrier for 8000 Hz")
    return encoding, rate


def _params(raw: Any) -> dict[str, str]:
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items() if isinstance(v, (str, int, float))}
    if isinstance(raw, str):  # Plivo's extraHeaders: "a=1,b=2" (its examples also use ";")
        pairs = (p.split("=", 1) for p in raw.replace(";", ",").split(",") if "=" in p)
        return {k.strip(): v.strip() for k, v in pairs}
    return {}


class Dialect:
    """One carrier's words. `read` gives one of the events above, or None for one that needs
    nothing (`connected`, acknowledgements); the writers give the JSON objects to send."""

    name = ""
    path = ""
    marks = True  # the carrier echoes our marks (checkpoints) as it plays them

    def read(self, message: dict[str, Any]) -> Event | None:
        raise NotImplementedError

    def media(self, stream_id: str, payload: bytes, encoding: str) -> dict[str, Any]:
        raise NotImplementedError

    def mark(self, stream_id: str, name: str) -> dict[str, Any]:
        raise NotImplementedError

    def clear(self, stream_id: str) -> dict[str, Any]:
        raise NotImplementedError


def _b64(payload: bytes) -> str:
    return base64.b64encode(payload).decode("ascii")


class Twilio(Dialect):
    name, path = "twilio", "/telephony/twilio"

    def read(self, message: dict[str, Any]) -> Event | None:
        kind = message.get("event")
        if kind == "start":
            start = _get(message, "start")
            encoding, rate = _format(_get(start, "mediaFormat"), "encoding", "sampleRate")
            return Start(_text(_get(start, "streamSid"), "start.streamSid"),
                         _text(_get(start, "callSid"), "start.callSid"), encoding, rate,
                         _params(_get(start, "customParameters")))
        if kind == "media":
            return _payload(message.get("media"))
        if kind == "mark":
            return Mark(_text(_get(message, "mark", "name"), "mark.name"))
        if kind == "dtmf":
            return Dtmf(_text(_get(message, "dtmf", "digit"), "dtmf.digit"))
        if kind == "stop":
            return Stop()
        return None

    def media(self, stream_id: str, payload: bytes, encoding: str) -> dict[str, Any]:
        return {"event": "media", "streamSid": stream_id, "media": {"payload": _b64(payload)}}

    def mark(self, stream_id: str, name: str) -> dict[str, Any]:
        return {"event": "mark", "streamSid": stream_id, "mark": {"name": name}}

    def clear(self, stream_id: str) -> dict[str, Any]:
        return {"event": "clear", "streamSid": stream_id}


class Telnyx(Dialect):
    name, path = "telnyx", "/telephony/telnyx"

    def read(self, message: dict[str, Any]) -> Event | None:
        kind = message.get("event")
        if kind == "start":
            start = _get(message, "start")
            encoding, rate = _format(_get(start, "media_format"), "encoding", "sample_rate")
            return Start(_text(message.get("stream_id"), "stream_id"),
                         _text(_get(start, "call_control_id"), "start.call_control_id"),
                         encoding, rate, _params(_get(start, "custom_parameters")))
        if kind == "media":
            return _payload(message.get("media"))
        if kind == "mark":
            return Mark(_text(_get(message, "mark", "name"), "mark.name"))
        if kind == "dtmf":
            return Dtmf(_text(_get(message, "dtmf", "digit"), "dtmf.digit"))
        if kind == "stop":
            return Stop()
        if kind == "error":
            raise StreamError(f"Telnyx reported an error: {str(message.get('payload'))[:200]}")
        return None

    def media(self, stream_id: str, payload: bytes, encoding: str) -> dict[str, Any]:
        return {"event": "media", "media": {"payload": _b64(payload)}}

    def mark(self, stream_id: str, name: str) -> dict[str, Any]:
        return {"event": "mark", "mark": {"name": name}}

    def clear(self, stream_id: str) -> dict[str, Any]:
        return {"event": "clear"}


class Plivo(Dialect):
    name, path = "plivo", "/telephony/plivo"

    def read(self, message: dict[str, Any]) -> Event | None:
        kind = message.get("event")
        if kind == "start":
            start = _get(message, "start")
            encoding, rate = _format(_get(start, "mediaFormat"), "encoding", "sampleRate")
            return Start(_text(_get(start, "streamId"), "start.streamId"),
                         _text(_get(start, "callId"), "start.callId"), encoding, rate,
                         _params(message.get("extra_headers")))
        if kind == "media":
            return _payload(message.get("media"))
        if kind == "playedStream":
            return Mark(_text(message.get("name"), "playedStream name"))
        if kind == "dtmf":
            return Dtmf(_text(_get(message, "dtmf", "digit"), "dtmf.digit"))
        if kind == "stop":
            return Stop()
        return None

    def media(self, stream_id: str, payload: bytes, encoding: str) -> dict[str, Any]:
        kind = "audio/x-mulaw" if encoding == MULAW else "audio/x-alaw"
        return {"event": "playAudio", "streamId": stream_id,
                "media": {"contentType": kind, "sampleRate": 8000, "payload": _b64(payload)}}

    def mark(self, stream_id: str, name: str) -> dict[str, Any]:
        return {"event": "checkpoint", "streamId": stream_id, "name": name}

    def clear(self, stream_id: str) -> dict[str, Any]:
        return {"event": "clearAudio", "streamId": stream_id}


DIALECTS: dict[str, Dialect] = {d.path: d for d in (Twilio(), Telnyx(), Plivo())}
