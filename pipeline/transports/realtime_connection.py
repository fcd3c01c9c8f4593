"""One realtime-API client connection: the transport of one session.

Client events come in and act on the session through `session.client`; the session's events go
out in the realtime API's shape; agent audio goes out as `response.output_audio.delta` paced like
a hosted API: a short lead (`lead_ms`), then real time, so a client that plays what it gets sounds
right and a barge-in cuts the reply where the caller heard it. Local `x.*` events (timings, call
log) go only to a client that sets `"include_local_events": true` in `session.update`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import logging
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from ..base import events as ev
from ..base.audio import FRAME_SAMPLES, INPUT_RATE_HZ, StreamResampler
from ..base.clock import Clock, cancel_and_wait
from ..base.config import Config
from ..base.protocols import CallInput
from ..call.client import ClientControl
from ..call.session import Session
from ..stages.playback import FRAME_MS
from . import realtime_requests as requests
from . import realtime_settings
from .realtime_events import GA, WireEncoder, WireSettings
from .realtime_json import check_event, is_text, parse_message
from .realtime_protocol import ClientError, jsonable, parse_session_update, require

log = logging.getLogger(__name__)

READY_WITHOUT_UPDATE_S = 1.5  # a client that never sends session.update still gets served
MAX_ERROR_CHARS = 300  # an error message never echoes much of what the client sent
# Events waiting for a client that does not read: 4 MiB is over 60 s of 24 kHz agent audio, far
# more than a reading client ever queues (it holds one paced 100 ms delta at a time).
MAX_OUTBOX_BYTES = 4 << 20
SEND_STALL_S = 10.0  # one send stuck this long (the client stopped reading): drop the client
# Input audio may run ahead of real time by this much (a client flushing a buffer); beyond it,
# appends are refused so a fast sender cannot queue unbounded work (30 s = 1.9 MB at 16 kHz).
MAX_INPUT_AHEAD_S = 30.0


class Connection:
    """One client: the transport of its session (audio in, events out), and the paced audio sink.

    A `Transport`: the server makes the session with this connection as its sink, `bind`s it,
    starts the session and `run`s the connection until the client leaves. It changes the session
    only through `session.client`.
    """

    def __init__(self, ws: ServerConnection, *, config: Config, lead_ms: int,
                 max_message_bytes: int, dialect: str = GA) -> None:
        self.ws = ws
        self.config = config
        self.max_message_bytes = max_message_bytes
        self.closed = False
        self.wire = WireSettings(voice=config.stage("tts").name,
                                 transcription_model=config.stage("stt").name)
        self.encoder = WireEncoder(dialect, self.wire)
        self.include_local = False
        self.lead_s = lead_ms / 1000  # BufferedSink: frames go out this far ahead
        self.session: Session | None = None
        self._in_resampler = StreamResampler(self.wire.input_format.rate_hz, INPUT_RATE_HZ)
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
        delta_frames = config.response.output_delta_ms // FRAME_MS
        self._batch_frames = max(1, min(delta_frames, lead_ms // FRAME_MS + 2))
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        self._outbox_bytes = 0
        self._started_s: float | None = None  # loop time of the first append (input pacing)
        self._ready_timer: asyncio.TimerHandle | None = None
        self._handlers = {
            "session.update": self._session_update,
            "input_audio_buffer.append": self._append,
            "input_audio_buffer.commit": self._commit,
            "input_audio_buffer.clear": self._clear,
            "response.create": self._response_create,
            "response.cancel": self._cancel,
            "conversation.item.create": lambda e: requests.item_create(self.client, e),
            "conversation.item.delete": self._delete,
            "conversation.item.truncate": lambda e: requests.truncate(self.client, e),
            "conversation.item.retrieve": lambda e: requests.retrieve(self.client, e),
        }

    def bind(self, session: Session) -> None:
        """Listen to the session's events and agent frames (before it starts: session.created)."""
        self.session = session
        session.listeners.add(self._on_event, ev.EventPhase.OBSERVER)
        # Playback names a frame's item only after write_output, in the frame listener
        session.client.on_agent_frame(self._on_frame)

    def release(self) -> None:
        """The call is over and its session closed: drop the audio and the session itself."""
        self._in_rest = np.zeros(0, np.float32)
        self._batch.clear()
        self._handlers.clear()  # their closures hold the session
        self.session = None

    def _session_now(self) -> float:
        assert self.session is not None
        return self.session.clock.now()

    @property
    def client(self) -> ClientControl:
        assert self.session is not None, "bind(session) first"
        return self.session.client

    async def run(self, session: CallInput, clock: Clock) -> None:
        """Transport: read client messages into the session until the client leaves."""
        sender = asyncio.ensure_future(self._send_loop())
        loop = asyncio.get_running_loop()
        # audio sent before session.update is held; a client that never sends one is not stuck
        self._ready_timer = loop.call_later(READY_WITHOUT_UPDATE_S, self._mark_ready)
        try:
            async for message in self.ws:
                await self.receive(message)
        except ConnectionClosed:
            pass  # a client that drops mid-call is normal; everything is freed below
        finally:
            await self._close()
            await cancel_and_wait(sender)

    async def _close(self) -> None:
        self.closed = True
        for timer in (self._ready_timer, self._batch_timer):
            if timer is not None:
                timer.cancel()

    def hang_up(self) -> None:
        """The session ended the call (end_call): send what is queued, then close the socket."""
        asyncio.ensure_future(self._hang_up())

    async def _hang_up(self, code: int = 1000, reason: str = "the call ended") -> None:
        if not self.closed:  # the goodbye's last events first; a stuck client gets SEND_STALL_S
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.join(), SEND_STALL_S)
        await self.ws.close(code, reason)

    async def close_after_sending(self, code: int, reason: str) -> None:
        """The server ends the call (a drain): what is queued goes out first, then the close."""
        await self._hang_up(code, reason)

    async def _send_loop(self) -> None:
        try:
            while True:
                message = await self._outbox.get()
                self._outbox_bytes -= len(message)
                try:
                    await asyncio.wait_for(self.ws.send(message), SEND_STALL_S)
                except TimeoutError:
                    self._drop_slow_client(f"one event waited {SEND_STALL_S:.0f} s to be sent")
                    return
                finally:
                    self._outbox.task_done()
        except ConnectionClosed:
            pass

    def _send(self, payload: dict[str, Any]) -> None:
        if self.closed:
            return
        message = json.dumps(payload, default=jsonable)
        if self._outbox_bytes + len(message) > MAX_OUTBOX_BYTES:
            self._drop_slow_client(f"{self._outbox_bytes} bytes of events are waiting")
            return
        self._outbox_bytes += len(message)
        self._outbox.put_nowait(message)

    def _drop_slow_client(self, why: str) -> None:
        """A client that stops reading cannot pin memory: it is dropped with a reason."""
        log.warning("dropping a client that does not read its events: %s", why)
        self.closed = True
        if self.session is not None:  # on the event log, which metrics and recordings read
            self.session.emit(ev.StageMark(stage=ev.Milestone.SLOW_CLIENT_DROPPED, detail={"why": why}))
        while not self._outbox.empty():
            self._outbox.get_nowait()
        self._outbox_bytes = 0
        asyncio.ensure_future(self._close_slow())

    async def _close_slow(self) -> None:
        try:  # the close frame may still fit the socket; a client that reads nothing gets cut
            await asyncio.wait_for(self.ws.close(1008, "client too slow: read events as they "
                                                       "arrive"), 2.0)
        except (TimeoutError, ConnectionClosed):
            self.ws.transport.abort()

    def _mark_ready(self) -> None:
        if self.session is not None and not self.session.ready:
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

    def encoded(self, event: ev.Event) -> list[str]:
        """An event as this client's wire messages, without queueing them."""
        return [json.dumps(payload, default=jsonable) for payload in self.encoder.encode(event)]

    def _forward(self, event: ev.Event) -> None:
        self._flush_audio()  # audio handed out before this event reaches the client before it
        for payload in self.encoder.encode(event):
            self._send(payload)

    def _error(self, code: str, message: str, event_id: str | None,
               param: str | None = None) -> None:
        assert self.session is not None
        if len(message) > MAX_ERROR_CHARS:
            message = message[:MAX_ERROR_CHARS - 1] + "…"
        if param is not None and len(param) > MAX_ERROR_CHARS:
            param = param[:MAX_ERROR_CHARS - 1] + "…"
        self.session.emit(ev.error_event(code, message, event_id=event_id, param=param))

    # --- agent audio (the session's AudioSink) -------------------------------------------------

    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self._frame = samples  # the frame listener comes next, with the frame's item and response

    def _on_frame(self, response_id: str, item_id: str, at_s: float) -> None:
        frame, self._frame = self._frame, None
        if frame is not None and not self.closed:
            if self._batch_key != (response_id, item_id):
                self._flush_audio()
                self._batch_key = (response_id, item_id)
                # a fresh resampler per item: no tail of the previous reply leaks into this one
                self._out_resampler = StreamResampler(self.client.agent_rate_hz,
                                                      self.wire.output_format.rate_hz)
            self._batch.append(frame)
            if len(self._batch) >= self._batch_frames:
                self._flush_audio()
            elif self._batch_timer is None:
                # Frames arrive every 20 ms while audio flows; if playback stalls, send what is
                # held before its first frame would be more than one frame late.
                frame_s = FRAME_MS / 1000
                due_by = at_s + frame_s - self._session_now()
                wait = max(0.0, min((self._batch_frames - 1) * frame_s + 0.005, due_by))
                self._batch_timer = asyncio.get_running_loop().call_later(wait, self._flush_audio)

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
        audio = base64.b64encode(self.wire.output_format.encode(samples)).decode("ascii")
        for payload in self.encoder.audio(response_id, item_id, audio):
            self._send(payload)

    # --- events in -----------------------------------------------------------------------------

    async def receive(self, message: str | bytes) -> None:
        """Handle one client message; any failure becomes an error event, never a dropped call."""
        event_id = None
        try:
            size = len(message) if isinstance(message, bytes) else len(message.encode("utf-8"))
            if size > self.max_message_bytes:
                raise ClientError(
                    "message_too_large",
                    f"The message is {size} bytes; the limit is {self.max_message_bytes}. "
                    "Send audio in smaller appends (20-100 ms each is typical).")
            event = parse_message(message)
            if not isinstance(event, dict):
                raise ClientError("invalid_event", "Each message must be a JSON object with a "
                                                    "`type`, e.g. {\"type\": \"response.create\"}.")
            if isinstance(event.get("event_id"), str) and is_text(event["event_id"]):
                event_id = event["event_id"]
            check_event(event)  # nothing of an event too deep, or not all text, is used
            kind = require(event, "type", str, "the event")
            handler = self._handlers.get(kind)
            if handler is None:
                raise ClientError("unknown_event_type",
                                   f"Unknown event type {kind[:60]!r}; this server handles: "
                                   f"{', '.join(self._handlers)}.")
            result = handler(event)
            if asyncio.iscoroutine(result):
                await result
        except ClientError as exc:
            self._error(exc.code, exc.message, event_id, exc.param)
        except Exception as exc:  # a bug here must cost one message, not the call
            log.exception("failed to handle a client message")
            self._error("server_error", f"The server failed on this event ({type(exc).__name__}: "
                                        f"{exc}); the session is still up.", event_id)

    def _session_update(self, event: dict[str, Any]) -> None:
        update = parse_session_update(event, self.config)  # all of it first: a bad field changes nothing
        assert self.session is not None
        realtime_settings.check_known(event["session"])
        generation = realtime_settings.generation(event["session"], self.session.stages,
                                                  voice=self.wire.voice)
        wire = self.wire
        if update.input_format is not None and update.input_format != wire.input_format:
            wire.input_format = update.input_format
            self._in_resampler = StreamResampler(update.input_format.rate_hz, INPUT_RATE_HZ)
        if update.output_format is not None and update.output_format != wire.output_format:
            self._flush_audio()  # what was held goes out in the format it was made for
            wire.output_format = update.output_format
            self._batch_key = None  # the next frame starts a resampler for the new rate
        if update.tools is not None:
            wire.tools = update.tools  # the client runs these; the session offers them and waits
        if update.include_local is not None:
            self.include_local = update.include_local
        self.client.update(instructions=update.instructions, tools=update.tools,
                           generation=generation, **update.settings)
        self._mark_ready()

    def _response_create(self, event: dict[str, Any]) -> None:
        assert self.session is not None
        requests.response_create(self.client, event, stages=self.session.stages, voice=self.wire.voice)

    def _append(self, event: dict[str, Any]) -> None:
        where = "input_audio_buffer.append"
        text = require(event, "audio", str, where)
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ClientError("invalid_audio", f"{where}: `audio` is not valid base64; send "
                                                "the raw audio bytes, base64-encoded.") from None
        fmt = self.wire.input_format  # the format in force when this audio arrived
        if len(data) % fmt.bytes_per_sample:
            raise ClientError("invalid_audio",
                               f"{where}: {len(data)} bytes is not a whole number of "
                               f"{fmt.encoding} samples ({fmt.bytes_per_sample} bytes each); "
                               "send whole samples.")
        session = self.session
        assert session is not None
        now_s = asyncio.get_running_loop().time()
        if self._started_s is None:
            self._started_s = now_s
        ahead_s = (self._pushed + len(data) // fmt.bytes_per_sample * INPUT_RATE_HZ / fmt.rate_hz) \
            / INPUT_RATE_HZ - (now_s - self._started_s)
        if ahead_s > MAX_INPUT_AHEAD_S:
            raise ClientError("input_audio_too_fast",
                              f"{where}: audio is arriving {ahead_s:.0f} s ahead of real time (at "
                              f"most {MAX_INPUT_AHEAD_S:.0f} s); send it as it is recorded.")
        samples = self._in_resampler.process(fmt.decode(data))
        rest = np.concatenate([self._in_rest, samples])
        whole = len(rest) - len(rest) % FRAME_SAMPLES
        for start in range(0, whole, FRAME_SAMPLES):
            session.push_audio(rest[start:start + FRAME_SAMPLES])
        self._in_rest = rest[whole:]
        self._pushed += whole

    async def _clear(self, event: dict[str, Any]) -> None:
        self._in_rest = np.zeros(0, np.float32)  # the part-frame not yet handed over goes too
        await self.client.clear_input()  # acts after the audio appended before it

    async def _commit(self, event: dict[str, Any]) -> None:
        if await self.client.commit_input() is None:
            raise ClientError("input_audio_buffer_commit_empty",
                               "There is no input audio to commit; append audio first.")

    def _delete(self, event: dict[str, Any]) -> None:
        item_id = require(event, "item_id", str, "conversation.item.delete")
        try:
            self.client.delete_item(item_id)  # emits conversation.item.deleted
        except KeyError:
            forgotten = self.encoder.forget(item_id)  # a turn with no words is only on the wire
            if not forgotten:
                raise ClientError("item_not_found", f"conversation.item.delete: there is no item "
                                                     f"{item_id[:60]!r} in this conversation.") from None
            for payload in forgotten:
                self._send(payload)

    def _cancel(self, event: dict[str, Any]) -> None:
        if not self.client.cancel_response():
            raise ClientError("response_cancel_not_active",
                               "There is no active response to cancel.")
