"""A local server that speaks the realtime-API protocol over WebSocket.

A client written for a hosted realtime voice API runs unchanged against
`ws://127.0.0.1:8765/v1/realtime`: one `Session` per connection, on a real clock, with the loaded
models shared (each model has its own lock, so inference is one at a time per model).

Audio formats, for `session.audio.input.format` / `session.audio.output.format` (GA shape) or
`input_audio_format` / `output_audio_format` (beta shape):

    {"type": "audio/pcm", "rate": 24000}   or "pcm16"      16-bit little-endian, 24 kHz (default)
    {"type": "audio/pcm", "rate": 16000}                   16-bit little-endian, 16 kHz
    {"type": "audio/pcmu"}                 or "g711_ulaw"  G.711 mu-law, 8 kHz

Agent audio goes out as `response.output_audio.delta` paced like a hosted API: a short lead
(`lead_ms`), then real time, so a client that plays what it gets sounds right and a barge-in
cuts the reply where the caller heard it. Local `x.*` events (timings, call log) are sent only to
a client that sets `"include_local_events": true` in `session.update`.

Every bad message (malformed JSON, unknown type, missing field, bad audio, too large) is answered
with an `error` event carrying a `code`, and the session stays up. The codes:

    invalid_json, invalid_event, unknown_event_type, missing_required_parameter, invalid_value,
    invalid_audio, message_too_large, input_audio_buffer_commit_empty, response_cancel_not_active,
    item_not_found, item_already_exists, invalid_audio_end_ms, server_error
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import copy
import hmac
import json
import logging
import signal
import sys
from collections import deque
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from .. import events as ev
from ..audio import (
    FRAME_SAMPLES,
    INPUT_RATE_HZ,
    StreamResampler,
    from_int16,
    mulaw_decode,
    mulaw_encode,
    to_int16,
)
from ..clock import RealClock
from ..config import Config, apply
from ..conversation import Item
from ..errors import ConfigError
from ..playback import FRAME_MS
from ..session import Session, Stages
from ..tools import ToolRegistry, ToolSpec
from .web import page_response, select_subprotocol, subprotocol_token

log = logging.getLogger(__name__)

PATH = "/v1/realtime"
READY_WITHOUT_UPDATE_S = 1.5  # a client that never sends session.update still gets served
EVENT_LOG_KEEP = 2000  # events kept per connection: a long call must not hold all its audio
_SOCKET_LIMIT_FACTOR = 8  # the socket takes larger messages so an oversize one gets an error event


class _ClientError(Exception):
    """A client mistake, answered with an `error` event; the session goes on."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# --- audio formats ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AudioFormat:
    encoding: str  # "pcm16" | "pcmu"
    rate_hz: int

    @property
    def bytes_per_sample(self) -> int:
        return 2 if self.encoding == "pcm16" else 1

    def decode(self, data: bytes) -> np.ndarray:
        if self.encoding == "pcmu":
            return mulaw_decode(data)
        return from_int16(np.frombuffer(data, "<i2"))

    def encode(self, samples: np.ndarray) -> bytes:
        if self.encoding == "pcmu":
            return mulaw_encode(samples)
        return to_int16(samples).astype("<i2").tobytes()

    def to_dict(self) -> dict[str, Any]:
        if self.encoding == "pcmu":
            return {"type": "audio/pcmu"}
        return {"type": "audio/pcm", "rate": self.rate_hz}

    @property
    def legacy(self) -> str | dict[str, Any]:
        """The beta spelling where one exists ("pcm16", "g711_ulaw"), else the GA shape."""
        if self.encoding == "pcmu":
            return "g711_ulaw"
        return "pcm16" if self.rate_hz == 24_000 else self.to_dict()


PCM16_24K = AudioFormat("pcm16", 24_000)
_TEXT_PARTS = ("input_text", "text", "output_text")
_SUPPORTED = ('{"type": "audio/pcm", "rate": 24000}, {"type": "audio/pcm", "rate": 16000}, '
              '{"type": "audio/pcmu"}, "pcm16" or "g711_ulaw"')


def parse_format(value: Any, where: str) -> AudioFormat:
    if value == "pcm16":
        return PCM16_24K
    if value == "g711_ulaw":
        return AudioFormat("pcmu", 8_000)
    if isinstance(value, dict) and value.get("type") == "audio/pcm":
        rate = value.get("rate", 24_000)
        if rate in (16_000, 24_000) and not isinstance(rate, bool):
            return AudioFormat("pcm16", int(rate))
    if isinstance(value, dict) and value.get("type") == "audio/pcmu":
        return AudioFormat("pcmu", 8_000)
    raise _ClientError("invalid_value", f"{where} {json.dumps(value)} is not supported; use one of "
                                        f"{_SUPPORTED}.")


# --- one connection --------------------------------------------------------------------------


class _RecentEvents(ev.EventLog):
    """The session's event log, keeping only the latest events (they carry agent audio)."""

    def __init__(self, keep: int = EVENT_LOG_KEEP) -> None:
        super().__init__()
        self.events = deque(maxlen=keep)  # type: ignore[assignment]


_KINDS: dict[type, str] = {str: "a string", int: "an integer", dict: "an object", list: "a list"}


def _require(body: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """A field the event cannot do without, of the JSON type it must have."""
    if body.get(key) is None:
        raise _ClientError("missing_required_parameter",
                           f"{where} needs `{key}`; add it and resend.")
    value = body[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _ClientError("invalid_value", f"{where}: `{key}` must be {_KINDS[kind]}, "
                                            f"got {json.dumps(value)[:80]}.")
    return value


def _jsonable(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


class _Connection:
    """One client: its session, its audio formats, and the paced audio sink of that session."""

    def __init__(self, server: RealtimeServer, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        self.id = ev.new_id("sess")
        self.closed = False
        self.input_format = self.output_format = PCM16_24K
        self.include_local = False
        self.auto_respond = True
        self.tools: list[ToolSpec] = []
        # each session mutates its own config (session.update), so none may share the server's
        self.session = Session(copy.deepcopy(server.config), server.stages, clock=RealClock(),
                               sink=self, events=_RecentEvents())
        self.session.playback.lead_s = server.lead_ms / 1000
        # Playback names a frame's item only after write_output, in on_frame: chain onto it
        self._played = self.session.playback.on_frame
        self.session.playback.on_frame = self._on_frame
        self.session.listeners.append(self._on_event)
        self._in_resampler = StreamResampler(self.input_format.rate_hz, INPUT_RATE_HZ)
        self._in_rest = np.zeros(0, np.float32)
        self._pushed = 0  # 16 kHz samples handed to the session
        self._out_resampler: StreamResampler | None = None
        self._frame: np.ndarray | None = None
        self._batch: list[np.ndarray] = []
        self._batch_key: tuple[str, str] | None = None
        self._batch_timer: asyncio.TimerHandle | None = None
        # A batch goes out with its last frame, (n - 1) frames after its first, which was handed
        # out lead_ms early: n <= lead_ms / 20 + 2 keeps every frame within one frame of its due
        # time. At most output_delta_ms (100 ms) a delta, like the hosted APIs.
        delta_frames = self.session.config.response.output_delta_ms // FRAME_MS
        self._batch_frames = max(1, min(delta_frames, server.lead_ms // FRAME_MS + 2))
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        self._ready_timer: asyncio.TimerHandle | None = None
        self._handlers = {
            "session.update": self._session_update,
            "input_audio_buffer.append": self._append,
            "input_audio_buffer.commit": self._commit,
            "input_audio_buffer.clear": self._clear,
            "response.create": lambda _e: self.session.request_response(),
            "response.cancel": self._cancel,
            "conversation.item.create": self._item_create,
            "conversation.item.truncate": self._truncate,
            "conversation.item.retrieve": self._retrieve,
        }

    async def run(self) -> None:
        sender = asyncio.ensure_future(self._send_loop())
        loop = asyncio.get_running_loop()
        self.session.start()  # emits session.created
        # audio sent before session.update is held; a client that never sends one is not stuck
        self._ready_timer = loop.call_later(READY_WITHOUT_UPDATE_S, self._mark_ready)
        try:
            async for message in self.ws:
                await self.receive(message)
        except ConnectionClosed:
            pass  # a client that drops mid-call is normal; everything is freed below
        finally:
            await self._close()
            sender.cancel()
            try:
                await sender
            except (asyncio.CancelledError, Exception):
                pass

    async def _close(self) -> None:
        self.closed = True
        for timer in (self._ready_timer, self._batch_timer):
            if timer is not None:
                timer.cancel()
        turn = self.session.turn
        await self.session.close()
        if turn is not None:  # the open turn's transcription passes are not session tasks
            await turn.stt.aclose()

    def hang_up(self) -> None:
        """The session ended the call (end_call): send what is queued, then close the socket."""
        asyncio.ensure_future(self._hang_up())

    async def _hang_up(self) -> None:
        while not self._outbox.empty() and not self.closed:
            await asyncio.sleep(0.01)
        await self.ws.close(1000, "the call ended")

    async def _send_loop(self) -> None:
        try:
            while True:
                await self.ws.send(await self._outbox.get())
        except ConnectionClosed:
            pass

    def _send(self, payload: dict[str, Any]) -> None:
        if not self.closed:
            self._outbox.put_nowait(json.dumps(payload, default=_jsonable))

    def _mark_ready(self) -> None:
        if not self.session.ready:
            self.session.mark_ready()

    # --- events out ----------------------------------------------------------------------------

    def _on_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.OutputAudioDelta):
            return  # the sink sends agent audio, paced and in the client's format
        if event.type.startswith("x.") and not self.include_local:
            return
        if isinstance(event, ev.ResponseDone):
            # A response ends once its audio has sounded; the last frames of it may still be
            # batched here, and a client must get them before response.done.
            self._flush_audio()
        self._forward(event)

    def _forward(self, event: ev.Event) -> None:
        self._flush_audio()  # audio handed out before this event reaches the client before it
        payload = event.to_dict()
        if not event.type.startswith("x."):  # clock stamps are ours; hosted events have none
            payload.pop("ts", None)
            payload.pop("perf", None)
        if isinstance(event, ev.SessionCreated | ev.SessionUpdated):
            payload["session"] = self._describe(event.session)
        self._send(payload)

    def _describe(self, base: dict[str, Any]) -> dict[str, Any]:
        out = {"id": self.id, **base}
        vad = None
        if self.session.turn_detection and isinstance(base.get("turn_detection"), dict):
            vad = {**base["turn_detection"], "create_response": self.auto_respond,
                   "interrupt_response": self.session.config.bargein.enabled}
        out["turn_detection"] = vad
        out["input_audio_format"] = self.input_format.legacy
        out["output_audio_format"] = self.output_format.legacy
        out["audio"] = {"input": {"format": self.input_format.to_dict(), "turn_detection": vad},
                        "output": {"format": self.output_format.to_dict()}}
        out["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                         "parameters": t.parameters} for t in self.tools]
        out["include_local_events"] = self.include_local
        return out

    def _error(self, code: str, message: str, event_id: str | None) -> None:
        self.session.emit(ev.error_event(code, message, event_id=event_id))

    # --- agent audio (the session's AudioSink) -------------------------------------------------

    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self._frame = samples  # Playback calls on_frame next, with the frame's item and response

    def _on_frame(self, response_id: str, item_id: str, at_s: float) -> None:
        frame, self._frame = self._frame, None
        if frame is not None and not self.closed:
            if self._batch_key != (response_id, item_id):
                self._flush_audio()
                self._batch_key = (response_id, item_id)
                # a fresh resampler per item: no tail of the previous reply leaks into this one
                self._out_resampler = StreamResampler(self.session.playback.rate_hz,
                                                      self.output_format.rate_hz)
            self._batch.append(frame)
            if len(self._batch) >= self._batch_frames:
                self._flush_audio()
            elif self._batch_timer is None:
                # Frames arrive every 20 ms while audio flows; if playback stalls, send what is
                # held before its first frame would be more than one frame late.
                frame_s = FRAME_MS / 1000
                due_by = at_s + frame_s - self.session.clock.now()
                wait = max(0.0, min((self._batch_frames - 1) * frame_s + 0.005, due_by))
                self._batch_timer = asyncio.get_running_loop().call_later(wait, self._flush_audio)
        if self._played is not None:
            self._played(response_id, item_id, at_s)

    def _flush_audio(self) -> None:
        if self._batch_timer is not None:
            self._batch_timer.cancel()
            self._batch_timer = None
        if not self._batch or self._batch_key is None or self.closed:
            self._batch.clear()
            return
        samples = np.concatenate(self._batch)
        self._batch.clear()
        if self._out_resampler is not None:
            samples = self._out_resampler.process(samples)
        response_id, item_id = self._batch_key
        self._send({"type": "response.output_audio.delta", "event_id": ev.new_id("event"),
                    "response_id": response_id, "item_id": item_id, "output_index": 0,
                    "content_index": 0,
                    "delta": base64.b64encode(self.output_format.encode(samples)).decode("ascii")})

    # --- events in -----------------------------------------------------------------------------

    async def receive(self, message: str | bytes) -> None:
        """Handle one client message; any failure becomes an error event, never a dropped call."""
        event_id = None
        try:
            size = len(message) if isinstance(message, bytes) else len(message.encode("utf-8"))
            if size > self.server.max_message_bytes:
                raise _ClientError(
                    "message_too_large",
                    f"The message is {size} bytes; the limit is {self.server.max_message_bytes}. "
                    "Send audio in smaller appends (20-100 ms each is typical).")
            try:
                event = json.loads(message)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise _ClientError("invalid_json", f"The message is not valid JSON ({exc}); "
                                                   "send one JSON object per message.") from None
            if not isinstance(event, dict):
                raise _ClientError("invalid_event", "Each message must be a JSON object with a "
                                                    "`type`, e.g. {\"type\": \"response.create\"}.")
            if isinstance(event.get("event_id"), str):
                event_id = event["event_id"]
            kind = _require(event, "type", str, "the event")
            handler = self._handlers.get(kind)
            if handler is None:
                raise _ClientError("unknown_event_type",
                                   f"Unknown event type {kind!r}; this server handles: "
                                   f"{', '.join(self._handlers)}.")
            result = handler(event)
            if asyncio.iscoroutine(result):
                await result
        except _ClientError as exc:
            self._error(exc.code, exc.message, event_id)
        except Exception as exc:  # a bug here must cost one message, not the call
            log.exception("failed to handle a client message")
            self._error("server_error", f"The server failed on this event ({type(exc).__name__}: "
                                        f"{exc}); the session is still up.", event_id)

    def _session_update(self, event: dict[str, Any]) -> None:
        body = _require(event, "session", dict, "session.update")
        audio = body.get("audio") or {}
        if not isinstance(audio, dict):
            raise _ClientError("invalid_value",
                               "session.update: `session.audio` must be an object.")
        a_in, a_out = audio.get("input") or {}, audio.get("output") or {}
        if not isinstance(a_in, dict) or not isinstance(a_out, dict):
            raise _ClientError("invalid_value", "session.update: `session.audio.input` and "
                                                "`.output` must be objects.")
        # Parse everything first, so an update with one bad field changes nothing.
        in_fmt = out_fmt = None
        if "format" in a_in or "input_audio_format" in body:
            in_fmt = parse_format(a_in.get("format", body.get("input_audio_format")),
                                  "The input format")
        if "format" in a_out or "output_audio_format" in body:
            out_fmt = parse_format(a_out.get("format", body.get("output_audio_format")),
                                   "The output format")
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise _ClientError("invalid_value", "session.update: `instructions` must be a string.")
        tools = None
        if body.get("tools") is not None:
            tools = self._parse_tools(_require(body, "tools", list, "session.update"))
        include_local = body.get("include_local_events")
        if include_local is not None and not isinstance(include_local, bool):
            raise _ClientError("invalid_value", "session.update: `include_local_events` must be "
                                                "true or false.")
        vad: dict[str, Any] | None = None
        has_vad = "turn_detection" in a_in or "turn_detection" in body
        if has_vad:
            vad = _turn_settings(a_in.get("turn_detection", body.get("turn_detection")),
                                 self.session.config)

        if in_fmt is not None and in_fmt != self.input_format:
            self.input_format = in_fmt
            self._in_resampler = StreamResampler(in_fmt.rate_hz, INPUT_RATE_HZ)
        if out_fmt is not None and out_fmt != self.output_format:
            self._flush_audio()  # what was held goes out in the format it was made for
            self.output_format = out_fmt
            self._batch_key = None  # the next frame starts a resampler for the new rate
        if tools is not None:
            self.tools = tools
            # the client runs these tools; the session offers them and waits for their output
            self.session.use_tools(ToolRegistry(specs=tools))
        if include_local is not None:
            self.include_local = include_local
        turn: dict[str, Any] | None = None
        if has_vad and vad is None:  # the client commits, asks for replies and interrupts itself
            self._set_auto_respond(False)
            self.session.config.bargein.enabled = False
        elif vad is not None:
            turn = vad["turn"]
            self._set_auto_respond(vad["create_response"])
            self.session.config.bargein.enabled = vad["interrupt_response"]
        self.session.update(instructions=instructions, turn=turn,
                            turn_detection=(vad is not None) if has_vad else None)
        self._mark_ready()

    def _parse_tools(self, definitions: list[Any]) -> list[ToolSpec]:
        specs = []
        for i, definition in enumerate(definitions):
            if not isinstance(definition, dict):
                raise _ClientError("invalid_value", f"session.update: tools[{i}] must be an object "
                                                    "like {\"type\": \"function\", \"name\": ...}.")
            try:
                specs.append(ToolSpec.from_openai(definition))
            except (ValueError, TypeError, AttributeError) as exc:
                raise _ClientError("invalid_value", f"session.update: tools[{i}]: {exc}") from None
        return specs

    def _set_auto_respond(self, value: bool) -> None:
        self.auto_respond = value
        self.session.auto_respond = value  # False: a committed turn becomes an item, no reply

    def _append(self, event: dict[str, Any]) -> None:
        where = "input_audio_buffer.append"
        text = _require(event, "audio", str, where)
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise _ClientError("invalid_audio", f"{where}: `audio` is not valid base64; send "
                                                "the raw audio bytes, base64-encoded.") from None
        fmt = self.input_format  # the format in force when this audio arrived
        if len(data) % fmt.bytes_per_sample:
            raise _ClientError("invalid_audio",
                               f"{where}: {len(data)} bytes is not a whole number of "
                               f"{fmt.encoding} samples ({fmt.bytes_per_sample} bytes each); "
                               "send whole samples.")
        samples = self._in_resampler.process(fmt.decode(data))
        rest = np.concatenate([self._in_rest, samples])
        whole = len(rest) - len(rest) % FRAME_SAMPLES
        for start in range(0, whole, FRAME_SAMPLES):
            self.session.push_audio(rest[start:start + FRAME_SAMPLES])
        self._in_rest = rest[whole:]
        self._pushed += whole

    async def _clear(self, event: dict[str, Any]) -> None:
        self._in_rest = np.zeros(0, np.float32)  # the part-frame not yet handed over goes too
        await self.session.clear_input()  # acts after the audio appended before it

    async def _commit(self, event: dict[str, Any]) -> None:
        if await self.session.commit_input() is None:
            raise _ClientError("input_audio_buffer_commit_empty",
                               "There is no input audio to commit; append audio first.")

    def _cancel(self, event: dict[str, Any]) -> None:
        if not self.session.cancel_response():
            raise _ClientError("response_cancel_not_active",
                               "There is no active response to cancel.")

    def _item_create(self, event: dict[str, Any]) -> None:
        where = "conversation.item.create"
        body = _require(event, "item", dict, where)
        kind = body.get("type", "message")
        item_id = body.get("id")
        if item_id is not None and (not isinstance(item_id, str) or not item_id):
            raise _ClientError("invalid_value", f"{where}: `item.id` must be a non-empty string.")
        if item_id is not None and self.session.conversation.get(item_id) is not None:
            raise _ClientError("item_already_exists", f"{where}: item {item_id!r} already exists; "
                                                      "leave `id` out to get a fresh one.")
        ids = {"id": item_id} if item_id else {}
        if kind == "message":
            role = _require(body, "role", str, where)
            if role not in ("user", "system", "assistant"):
                raise _ClientError("invalid_value", f"{where}: `item.role` must be user, system or "
                                                    f"assistant, got {role!r}.")
            item = self.session.conversation.add(
                Item(type="message", role=role, text=_message_text(body, where), **ids))
        elif kind == "function_call_output":
            call_id = _require(body, "call_id", str, where)
            output = _require(body, "output", str, where)
            try:  # bound to the call it answers; the session adds and announces the item
                accepted = self.session.deliver_client_output(call_id, output)
            except KeyError:
                raise _ClientError("unknown_call_id", f"{where}: no function call {call_id!r} was "
                                                      "made in this session.") from None
            if not accepted:
                raise _ClientError("invalid_value", f"{where}: the output for {call_id!r} was "
                                                    "rejected (see the error before this one).")
            return
        else:
            raise _ClientError("invalid_value", f"{where}: item type {kind!r} is not supported; "
                                                "use \"message\" or \"function_call_output\".")
        previous = self.session.conversation.previous_id(item)
        self.session.emit(ev.ItemCreated(item=item.to_dict(), previous_item_id=previous))

    def _truncate(self, event: dict[str, Any]) -> None:
        where = "conversation.item.truncate"
        item_id = _require(event, "item_id", str, where)
        audio_end_ms = _require(event, "audio_end_ms", int, where)
        try:
            self.session.truncate(item_id, audio_end_ms)  # emits conversation.item.truncated
        except KeyError:
            raise _ClientError("item_not_found", f"{where}: there is no agent audio item "
                                                 f"{item_id!r} in this conversation.") from None
        except ValueError as exc:
            raise _ClientError("invalid_audio_end_ms", f"{where}: {exc}; pass the milliseconds the "
                                                       "client actually played.") from None

    def _retrieve(self, event: dict[str, Any]) -> None:
        item_id = _require(event, "item_id", str, "conversation.item.retrieve")
        item = self.session.conversation.get(item_id)
        if item is None:
            raise _ClientError("item_not_found", f"conversation.item.retrieve: there is no item "
                                                 f"{item_id!r} in this conversation.")
        self.session.emit(ev.ItemRetrieved(item=item.to_dict()))


def _message_text(body: dict[str, Any], where: str) -> str:
    content = _require(body, "content", list, where)
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in _TEXT_PARTS:
            raise _ClientError("invalid_value", f"{where}: content parts must be text, like "
                                                "{\"type\": \"input_text\", \"text\": \"...\"}.")
        texts.append(_require(part, "text", str, where))
    return " ".join(texts)


def _turn_settings(value: Any, config: Config) -> dict[str, Any] | None:
    """A realtime `turn_detection` object -> our turn policy keys and response flags (None: off)."""
    if value is None:
        return None
    where = "session.update: turn_detection"
    if not isinstance(value, dict):
        raise _ClientError("invalid_value", f"{where} must be null or an object like "
                                            "{\"type\": \"server_vad\"}.")
    # Our detector already judges whether the words look finished, so semantic_vad maps onto it.
    if value.get("type", "server_vad") not in ("server_vad", "semantic_vad"):
        raise _ClientError("invalid_value",
                           f"{where}.type must be \"server_vad\" or \"semantic_vad\".")
    turn: dict[str, Any] = {}
    for key, ours, lo, hi in (("threshold", "vad_threshold", 0.0, 1.0),
                              ("prefix_padding_ms", "prefix_padding_ms", 0, 1000),
                              ("silence_duration_ms", "min_silence_ms", 0, 10_000)):
        if value.get(key) is None:
            continue
        number = value[key]
        numeric = isinstance(number, int | float) and not isinstance(number, bool)
        if not numeric or not lo <= number <= hi:
            raise _ClientError("invalid_value",
                               f"{where}.{key} must be a number from {lo} to {hi}.")
        turn[ours] = number if ours == "vad_threshold" else int(number)
    if "min_silence_ms" in turn:  # the hard cap must stay at or above the new silence time
        turn["max_silence_ms"] = max(config.turn.max_silence_ms, turn["min_silence_ms"])
    try:
        apply(config, {"turn": turn})  # checked on a copy; the session applies it
    except ConfigError as exc:
        raise _ClientError("invalid_value", f"{where}: {exc}") from None
    flags = {}
    for key in ("create_response", "interrupt_response"):
        flag = value.get(key, True)
        if not isinstance(flag, bool):
            raise _ClientError("invalid_value", f"{where}.{key} must be true or false.")
        flags[key] = flag
    return {"turn": turn, **flags}


# --- the server ------------------------------------------------------------------------------


class RealtimeServer:
    """Serves `/v1/realtime` on `host:port`: one session per connection, the models shared.

    host: 127.0.0.1 by default; bind wider only with a `token`.
    port: 8765 by default; 0 picks a free port (read `.port` after `start()`).
    token: when set, the handshake needs `Authorization: Bearer <token>` (else HTTP 401).
    max_message_bytes: 1 MiB; a larger message gets an `error` event (code message_too_large).
    lead_ms: 200; agent audio is sent this far ahead of when it is due to sound, then in real
        time, like a hosted API (enough for a client's jitter buffer, little to cut on barge-in).
    """

    def __init__(self, *, stages: Stages, config: Config, host: str = "127.0.0.1",
                 port: int = 8765, token: str | None = None, max_message_bytes: int = 1 << 20,
                 lead_ms: int = 200) -> None:
        if lead_ms < 0:
            raise ValueError(f"lead_ms must be 0 or more, got {lead_ms}.")
        self.stages = stages
        self.config = config
        self.host = host
        self.port = port
        self.token = token
        self.max_message_bytes = max_message_bytes
        self.lead_ms = lead_ms
        self.connections: set[_Connection] = set()
        self._server: Server | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 literal
        return f"ws://{host}:{self.port}{PATH}"

    async def start(self) -> None:
        self._server = await serve(self._handle, self.host, self.port,
                                   process_request=self._check_request,
                                   select_subprotocol=select_subprotocol,
                                   max_size=self.max_message_bytes * _SOCKET_LIMIT_FACTOR)
        self.port = self._server.sockets[0].getsockname()[1]

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

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        page = page_response(connection, request)  # the browser page at `/`, served without token
        if page is not None:
            return page
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
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        connection = _Connection(self, ws)
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)


def _bearer_ok(headers: Headers, token: str) -> bool:
    given = headers.get("Authorization", "")
    from_browser = subprotocol_token(headers)  # a browser cannot set Authorization on a WebSocket
    return hmac.compare_digest(given.encode("utf-8"), f"Bearer {token}".encode()) or (
        from_browser is not None and hmac.compare_digest(from_browser.encode("utf-8"),
                                                         token.encode("utf-8")))


# --- command line ----------------------------------------------------------------------------


def add_serve_args(parser: argparse.ArgumentParser) -> None:
    """The `serve` subcommand's arguments: where to listen, the token, and the config options."""
    from ..cli import _add_config_args

    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    parser.add_argument("--token", help="require `Authorization: Bearer TOKEN` from clients")
    _add_config_args(parser)


def serve_main(args: argparse.Namespace) -> int:
    """`python -m pipeline serve`: load the models once, then serve until interrupted."""
    from ..cli import load_config

    config = load_config(args)
    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.token:
        print(f"warning: listening on {args.host} without --token: anyone who can reach this port "
              "can use the models", file=sys.stderr)
    stages = Stages.load(config, progress=lambda m: print(m, file=sys.stderr))
    server = RealtimeServer(stages=stages, config=config, host=args.host, port=args.port,
                            token=args.token)
    try:
        asyncio.run(_serve(server))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); "
              "pick another --port or stop the program using it", file=sys.stderr)
        return 2
    return 0


async def _serve(server: RealtimeServer) -> None:
    await server.start()
    print(f"listening on {server.url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # close every call cleanly on Ctrl-C or a stop
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass  # no loop signal handlers here (Windows): Ctrl-C raises KeyboardInterrupt
    try:
        await stop.wait()
    finally:
        await server.stop()


__all__ = ["AudioFormat", "RealtimeServer", "add_serve_args", "parse_format", "serve_main"]
