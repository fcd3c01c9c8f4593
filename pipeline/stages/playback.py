"""The output side: agent audio paced onto the clock, with a heard-samples count per item.

What the caller *heard* is the truth for truncation: after a barge-in the conversation keeps only
that. A network client or a sound card buffers, so frames may be handed out up to `lead_s`
before they sound; those are sent but not yet heard. A line whose far end confirms what it played
(`ConfirmedSink`: a carrier echoing marks) is believed over the clock: heard is at most what it
confirmed, and what it has not confirmed still sounds.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from ..base.clock import Clock, Pulse
from ..base.listeners import FailureReport, Ordered, log_failure
from ..base.protocols import AudioSink, ClearableSink, ConfirmedSink, PlayedAudioPhase

FRAME_MS = 20
FrameListener = Callable[[str, str, float], None]  # (response_id, item_id, at_s) of each frame
AudioListener = Callable[[np.ndarray, float], None]  # (samples, at_s) of each frame


class FramePhase(IntEnum):
    """When a frame listener is told of a frame handed to the sink."""

    TRANSPORT = 0  # the transport that sends it on (it names the frame's item only here)
    SESSION = 1  # the session's own bookkeeping of it (the response's first_audio_out)


@dataclass
class _Piece:
    samples: np.ndarray
    item_id: str
    response_id: str


class Playback:
    """Plays queued agent audio in 20 ms frames on the clock; `clear()` stops it at once."""

    def __init__(self, clock: Clock, sink: AudioSink, rate_hz: int, *, lead_s: float = 0.0,
                 on_failure: FailureReport = log_failure) -> None:
        self.clock = clock
        self.sink = sink
        self.rate_hz = rate_hz
        # told of every frame handed out; one that raises is reported to `on_failure` once
        self.frame_listeners: Ordered[FrameListener] = Ordered(FramePhase, on_failure=on_failure)
        # (samples, at_s): the known playback signal, for the echo guard
        self.on_audio: Ordered[AudioListener] = Ordered(PlayedAudioPhase, on_failure=on_failure)
        self.changed = Pulse()  # a frame went out, or audio was dropped: heard counts moved
        self.lead_s = lead_s
        self.frame_samples = rate_hz * FRAME_MS // 1000
        self._queue: deque[_Piece] = deque()
        self._wake = asyncio.Event()
        self.drained = asyncio.Event()
        self.drained.set()
        self.sent: dict[str, int] = {}  # item_id -> samples handed to the sink
        self._ahead: deque[tuple[float, str, int]] = deque()  # frames sent, not yet due
        self.paused = False
        self._playing_until = 0.0
        self.current_item: str | None = None
        self._confirming = sink if isinstance(sink, ConfirmedSink) else None
        if self._confirming is not None:
            self._confirming.on_confirmed = self._on_confirmed

    def _on_confirmed(self) -> None:
        self._wake.set()  # the run loop re-reads `speaking` (drained)
        self.changed.pulse()

    def enqueue(self, samples: np.ndarray, *, item_id: str, response_id: str) -> None:
        if len(samples):
            self._queue.append(_Piece(samples, item_id, response_id))
            self.drained.clear()
            self._wake.set()

    def clear(self) -> int:
        """Drop everything not yet sounded, here and in the sink's own buffer; returns samples."""
        dropped = sum(len(p.samples) for p in self._queue)
        self._queue.clear()
        if isinstance(self.sink, ClearableSink):
            self.sink.clear_output()
        now = self.clock.now()
        for at, item_id, n in self._ahead:  # sent early but never sounded
            if at > now:
                self.sent[item_id] -= n
                dropped += n
        self._ahead.clear()
        self._playing_until = min(self._playing_until, now)
        self.paused = False
        self._wake.set()
        self.changed.pulse()
        return dropped

    def release(self) -> None:
        """The call is over: drop queued audio and forget who listened (no more frames)."""
        self._queue.clear()
        self._ahead.clear()
        self.frame_listeners.clear()
        self.on_audio.clear()
        if self._confirming is not None:
            self._confirming.on_confirmed = None

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self._wake.set()

    @property
    def speaking(self) -> bool:
        """Agent audio is queued or sounding right now (paused counts: it will resume)."""
        return bool(self._queue) or self.clock.now() < self._playing_until or (
            self._confirming is not None and self._confirming.unconfirmed())

    def has_item(self, item_id: str) -> bool:
        """Audio of this item is queued or sounding now."""
        return any(p.item_id == item_id for p in self._queue) or (
            self.current_item == item_id and self.clock.now() < self._playing_until) or (
            self._confirming is not None and self._confirming.unconfirmed(item_id))

    def heard(self, item_id: str) -> int:
        """Samples of an item that have started to sound (sent, minus those still ahead)."""
        now = self.clock.now()
        ahead = sum(n for at, i, n in self._ahead if i == item_id and at > now)
        heard = self.sent.get(item_id, 0) - ahead
        if self._confirming is not None:
            return min(heard, self._confirming.confirmed(item_id))
        return heard

    def set_heard(self, item_id: str, samples: int) -> None:
        """A client reports how much it played (conversation.item.truncate)."""
        self.sent[item_id] = samples
        self._ahead = deque(a for a in self._ahead if a[1] != item_id)
        self.changed.pulse()

    async def wait_heard(self, item_id: str, samples: int) -> bool:
        """Wait until `samples` of the item have started to sound (True), or until its audio is
        no longer queued or sounding (False: dropped). Wakes on frames, not on a timer."""
        while self.heard(item_id) < samples:
            if not self.has_item(item_id):
                return False
            now = self.clock.now()
            due = min((at for at, i, _n in self._ahead if i == item_id and at > now), default=None)
            if due is None:
                await self.changed.wait()
                continue
            waiter = asyncio.ensure_future(self.changed.wait())
            timer = asyncio.ensure_future(self.clock.sleep_until(due))
            try:
                await asyncio.wait({waiter, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                timer.cancel()
        return True

    async def run(self) -> None:
        while True:
            if not self._queue or self.paused:
                if not self._queue and self.clock.now() >= self._playing_until:
                    self.drained.set()
                    self.current_item = None
                self._wake.clear()
                if not self._queue and self.clock.now() < self._playing_until:
                    # wake for new audio or when the last frame has sounded, whichever is first
                    waiter = asyncio.ensure_future(self._wake.wait())
                    sleeper = asyncio.ensure_future(self.clock.sleep_until(self._playing_until))
                    try:  # cancelled here (the call ends) or not, neither helper outlives it
                        await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        waiter.cancel()
                        sleeper.cancel()
                    continue
                await self._wake.wait()
                continue
            piece = self._queue[0]
            frame = piece.samples[: self.frame_samples]
            piece.samples = piece.samples[len(frame):]
            if not len(piece.samples):
                self._queue.popleft()
            at = max(self.clock.now(), self._playing_until)
            if at - self.lead_s > self.clock.now():
                await self.clock.sleep_until(at - self.lead_s)
            self.sink.write_output(frame, self.rate_hz, at)
            self.on_audio(frame, at)
            self.current_item = piece.item_id
            self.sent[piece.item_id] = self.sent.get(piece.item_id, 0) + len(frame)
            if self.lead_s:
                self._ahead.append((at, piece.item_id, len(frame)))
                while self._ahead and self._ahead[0][0] <= self.clock.now():
                    self._ahead.popleft()
            self._playing_until = at + len(frame) / self.rate_hz
            self.frame_listeners(piece.response_id, piece.item_id, at)
            self.changed.pulse()
            await self.clock.sleep_until(self._playing_until - self.lead_s)
