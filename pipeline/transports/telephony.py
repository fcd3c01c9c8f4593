"""Phone calls through a carrier's media stream: one transport (`PhoneLine`) under three
dialects (`telephony_dialects`: Twilio, Telnyx, Plivo), answered by `pipeline serve` on
`/telephony/<carrier>` (`telephony_server.PhoneRoutes`, the server's route hook).

Caller audio comes in as 8 kHz G.711, is decoded, resampled to 16 kHz through a proper low-pass
(`StreamResampler(filter_up=True)`) and fed to the session in 20 ms frames. Agent audio goes
out as 20 ms frames of 8 kHz G.711, paced by the session's playback (`lead_ms` ahead). A mark
follows every `MARK_EVERY_FRAMES` frames and the last frame of each stretch of speech; the
carrier echoes each one as it has played what came before it, and what the caller heard is what
the echoed marks say (`ConfirmedSink`): truncation after a barge-in, `told`, and the goodbye's
drain all follow them. A barge-in sends the carrier's clear, and marks still queued then (which
carriers echo back on a clear) count for nothing. DTMF digits reach the model as a user message
`[DTMF 12#]`; a carrier `stop` (or the socket closing) ends the session at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from ..base.audio import (
    FRAME_SAMPLES,
    INPUT_RATE_HZ,
    PHONE_TAPS,
    StreamResampler,
    alaw_decode,
    alaw_encode,
    mulaw_decode,
    mulaw_encode,
)
from ..base.clock import Clock, cancel_and_wait
from ..base.protocols import CallInput
from ..call.client import ResponseInProgress
from ..call.session import Session
from ..call.transfer import Handoff
from . import telephony_transfer as transfer
from .telephony_dialects import ALAW, Dialect, Dtmf, Mark, Media, Start, Stop, StreamError

log = logging.getLogger(__name__)

PHONE_RATE_HZ = 8000
PHONE_FRAME = PHONE_RATE_HZ * 20 // 1000  # 160 samples, 160 bytes of G.711: 20 ms
LEAD_MS = 100  # agent audio reaches the carrier this far ahead of when it is due to sound
MARK_EVERY_FRAMES = 5  # a mark after each 100 ms of agent audio: truncation to within 100 ms
MARK_IDLE_S = 0.03  # no frame for this long: the stretch has ended, its tail is marked
# A mark not echoed this long after it was sent counts as played (a carrier that drops marks
# must not keep the agent "speaking" for ever); carriers echo within their buffer, ~lead_ms.
MARK_OVERDUE_S = 2.0
DTMF_GAP_S = 1.0  # digits pressed closer than this are one entry; "#" ends one at once
SEND_STALL_S = 10.0


def _codec(encoding: str) -> tuple[Callable[[bytes], np.ndarray], Callable[[np.ndarray], bytes]]:
    return (alaw_decode, alaw_encode) if encoding == ALAW else (mulaw_decode, mulaw_encode)


class PhoneLine:
    """One call's media stream: the transport of its session (`Transport`, `BufferedSink`,
    `ClearableSink`, `HangUpSink`, `ConfirmedSink`, `HandOverSink`)."""

    def __init__(self, ws: ServerConnection, dialect: Dialect, start: Start, *,
                 lead_ms: int = LEAD_MS) -> None:
        self.ws = ws
        self.dialect = dialect
        self.start = start
        self.lead_s = lead_ms / 1000
        self.on_confirmed: Callable[[], None] | None = None
        self.session: Session | None = None
        self.closed = False
        self.stopped = False  # the carrier ended the stream (the caller hung up)
        self.digits: list[str] = []  # every DTMF digit the caller pressed, for the record
        self._decode, self._encode = _codec(start.encoding)
        self._in = StreamResampler(start.rate_hz, INPUT_RATE_HZ, taps=PHONE_TAPS, filter_up=True)
        self._in_rest = np.zeros(0, np.float32)
        self._next_chunk: int | None = None
        self._frame: np.ndarray | None = None
        self._out: StreamResampler | None = None
        self._out_item: str | None = None
        self._out_rest = np.zeros(0, np.float32)
        self._sent: dict[str, int] = {}  # item -> agent samples sent
        self._confirmed: dict[str, int] = {}  # item -> agent samples the carrier played
        self._pending: OrderedDict[str, tuple[str, int, float]] = OrderedDict()  # mark -> (item, samples, sent at)
        self._unmarked = 0  # frames sent since the last mark
        self._marks = 0
        self._mark_timer: asyncio.TimerHandle | None = None
        self._overdue_timer: asyncio.TimerHandle | None = None
        self._dtmf: list[str] = []
        self._dtmf_timer: asyncio.TimerHandle | None = None
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        self.handoff: Handoff | None = None  # set: the hang-up hands the call to a person
        self.transfer_sent: bool | None = None  # the carrier's transfer command: sent and taken?

    def bind(self, session: Session) -> None:
        self.session = session
        session.client.on_agent_frame(self._on_frame)

    def release(self) -> None:
        self._in_rest = self._out_rest = np.zeros(0, np.float32)
        self.session = None

    # --- caller audio in -----------------------------------------------------------------------

    async def run(self, session: CallInput, clock: Clock) -> None:
        """Transport: read the carrier's events into the session until the stream ends."""
        sender = asyncio.ensure_future(self._send_loop())
        try:
            async for message in self.ws:
                if self._receive(message):
                    break
        except ConnectionClosed:
            pass  # the carrier dropped the socket: the call is over either way
        finally:
            self.closed = True
            for timer in (self._mark_timer, self._overdue_timer, self._dtmf_timer):
                if timer is not None:
                    timer.cancel()
            await cancel_and_wait(sender)

    def _receive(self, message: str | bytes) -> bool:
        """One carrier event; True when it ends the call."""
        try:
            event = self.dialect.read(json.loads(message))
        except (StreamError, ValueError, AttributeError) as exc:
            log.warning("%s stream %s: %s", self.dialect.name, self.start.stream_id, exc)
            return False
        if isinstance(event, Media):
            self._media(event)
        elif isinstance(event, Mark):
            self._echoed(event.name)
        elif isinstance(event, Dtmf):
            self._digit(event.digit)
        elif isinstance(event, Stop):
            self.stopped = True
            return True
        return False

    def _media(self, media: Media) -> None:
        session = self.session
        if session is None:
            return
        data = media.payload
        if media.chunk is not None and self._next_chunk is not None:
            if media.chunk < self._next_chunk:
                return  # late or repeated: its moment has passed
            lost = media.chunk - self._next_chunk
            if 0 < lost <= 50:  # lost packets keep their time as silence (up to 1 s of them)
                data = self._encode(np.zeros(lost * len(data), np.float32)) + data
        if media.chunk is not None:
            self._next_chunk = media.chunk + 1
        rest = np.concatenate([self._in_rest, self._in.process(self._decode(data))])
        whole = len(rest) - len(rest) % FRAME_SAMPLES
        for at in range(0, whole, FRAME_SAMPLES):
            session.push_audio(rest[at:at + FRAME_SAMPLES])
        self._in_rest = rest[whole:]

    # --- DTMF ----------------------------------------------------------------------------------

    def _digit(self, digit: str) -> None:
        if len(digit) != 1 or digit not in "0123456789*#ABCD":
            return
        self.digits.append(digit)
        self._dtmf.append(digit)
        if self._dtmf_timer is not None:
            self._dtmf_timer.cancel()
            self._dtmf_timer = None
        if digit == "#" or len(self._dtmf) >= 32:
            self._keys_entered()
        else:
            self._dtmf_timer = asyncio.get_running_loop().call_later(DTMF_GAP_S, self._keys_entered)

    def _keys_entered(self) -> None:
        self._dtmf_timer = None
        keys, self._dtmf = "".join(self._dtmf), []
        if keys and self.session is not None and not self.closed:
            self.session.core.spawn(self._keys_turn(keys))

    async def _keys_turn(self, keys: str) -> None:
        """Keys pressed are a turn of their own: they stop the agent, as speech would, and the
        model answers a user message `[DTMF keys]`."""
        session = self.session
        if session is None:
            return
        client = session.client
        client.cancel_response("turn_detected")
        client.add_message("user", f"[DTMF {keys}]")
        session.log(f"the caller pressed {keys}")
        while True:
            try:
                client.request_response()
                return
            except ResponseInProgress:
                await session.core.floor.wait()  # the cancelled reply ends; then ours starts

    # --- agent audio out (the session's sink) --------------------------------------------------

    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self._frame = samples  # the frame listener comes next, with the frame's item

    def _on_frame(self, response_id: str, item_id: str, at_s: float) -> None:
        frame, self._frame = self._frame, None
        if frame is None or self.closed or self.session is None:
            return
        if item_id != self._out_item:
            self._mark(end=True)
            self._out_item = item_id  # a fresh resampler: no tail of the last reply leaks in
            self._out = StreamResampler(self.session.client.agent_rate_hz, PHONE_RATE_HZ,
                                        taps=PHONE_TAPS)
        assert self._out is not None
        rest = np.concatenate([self._out_rest, self._out.process(frame)])
        whole = len(rest) - len(rest) % PHONE_FRAME
        for at in range(0, whole, PHONE_FRAME):
            self._send(self.dialect.media(self.start.stream_id, self._encode(rest[at:at + PHONE_FRAME]),
                                          self.start.encoding))
        self._out_rest = rest[whole:]
        self._sent[item_id] = self._sent.get(item_id, 0) + len(frame)
        self._unmarked += 1
        if self._unmarked >= MARK_EVERY_FRAMES:
            self._mark(end=False)
        if self._mark_timer is not None:
            self._mark_timer.cancel()
        self._mark_timer = asyncio.get_running_loop().call_later(MARK_IDLE_S, self._mark, True)

    def _mark(self, end: bool) -> None:
        """Send a mark after the audio sent so far; at a stretch's end, its part-frame first."""
        if end:
            if self._mark_timer is not None:
                self._mark_timer.cancel()
                self._mark_timer = None
            if len(self._out_rest):
                tail = np.zeros(PHONE_FRAME, np.float32)
                tail[:len(self._out_rest)] = self._out_rest
                self._out_rest = np.zeros(0, np.float32)
                self._send(self.dialect.media(self.start.stream_id, self._encode(tail),
                                              self.start.encoding))
        if not self._unmarked or self._out_item is None or self.closed:
            return
        self._unmarked = 0
        self._marks += 1
        name = f"{self._out_item}:{self._marks}"
        now = asyncio.get_running_loop().time()
        self._pending[name] = (self._out_item, self._sent.get(self._out_item, 0), now)
        self._send(self.dialect.mark(self.start.stream_id, name))
        if self._overdue_timer is None:
            self._overdue_timer = asyncio.get_running_loop().call_later(
                self.lead_s + MARK_OVERDUE_S, self._overdue)

    def _echoed(self, name: str) -> None:
        """The carrier played everything up to this mark (earlier ones too: they echo in order)."""
        if name not in self._pending:
            return  # one we dropped at a clear, or not ours
        while self._pending:
            mark, (item_id, samples, _) = self._pending.popitem(last=False)
            self._confirmed[item_id] = max(self._confirmed.get(item_id, 0), samples)
            if mark == name:
                break
        if self.on_confirmed is not None:
            self.on_confirmed()

    def _overdue(self) -> None:
        self._overdue_timer = None
        if not self._pending:
            return
        loop = asyncio.get_running_loop()
        oldest, (_, _, sent_at) = next(iter(self._pending.items()))
        if loop.time() >= sent_at + self.lead_s + MARK_OVERDUE_S:
            log.warning("%s stream %s: mark %s not echoed in %.1f s; counting it as played",
                        self.dialect.name, self.start.stream_id, oldest, MARK_OVERDUE_S)
            self._echoed(oldest)
        if self._pending:
            _, (_, _, sent_at) = next(iter(self._pending.items()))
            wait = max(0.0, sent_at + self.lead_s + MARK_OVERDUE_S - loop.time())
            self._overdue_timer = loop.call_later(wait, self._overdue)

    def confirmed(self, item_id: str) -> int:
        return self._confirmed.get(item_id, 0)

    def unconfirmed(self, item_id: str | None = None) -> bool:
        if item_id is None:
            return bool(self._pending) or self._unmarked > 0
        return (any(item == item_id for item, _, _ in self._pending.values())
                or (self._unmarked > 0 and self._out_item == item_id))

    def clear_output(self) -> int:
        """Barge-in: the carrier drops what it queued; what was heard stays at the last echo."""
        if self._mark_timer is not None:
            self._mark_timer.cancel()
            self._mark_timer = None
        self._pending.clear()
        self._unmarked = 0
        self._out_rest = np.zeros(0, np.float32)
        self._out_item = None
        self._send(self.dialect.clear(self.start.stream_id))
        return 0

    def hang_up(self) -> None:
        """The session ended the call (the goodbye heard): close the stream once sent."""
        asyncio.ensure_future(self._hang_up())

    def hand_over(self, handoff: Handoff | None) -> None:
        """`transfer_call`: the next hang-up hands the call over (`telephony_transfer`)."""
        self.handoff = handoff

    async def _hang_up(self) -> None:
        if not self.closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.join(), SEND_STALL_S)
        handoff = self.handoff
        if handoff is not None and not self.stopped:
            cmd = transfer.command(self.dialect.name, self.start, handoff)
            if cmd is not None:  # else the stream's end runs the carrier's own next step
                self.transfer_sent = await asyncio.to_thread(transfer.send, cmd)
        await self.ws.close(1000, "the call was handed over" if handoff else "the call ended")

    def _send(self, payload: dict[str, Any]) -> None:
        if not self.closed:
            self._outbox.put_nowait(json.dumps(payload))

    async def _send_loop(self) -> None:
        try:
            while True:
                message = await self._outbox.get()
                try:
                    await asyncio.wait_for(self.ws.send(message), SEND_STALL_S)
                except TimeoutError:
                    log.warning("%s stream %s stopped reading; dropping it", self.dialect.name,
                                self.start.stream_id)
                    self.ws.transport.abort()
                    return
                finally:
                    self._outbox.task_done()
        except ConnectionClosed:
            pass


__all__ = ["PhoneLine"]
