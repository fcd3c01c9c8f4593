"""The output side: agent audio paced onto the clock, with a played-ms count per item.

What was *played* (handed to the speaker) is the truth for truncation: after a barge-in the
conversation keeps only what the caller heard.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .clock import Clock

FRAME_MS = 20


class AudioSink(Protocol):
    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        """Hand one frame of agent audio to the speaker (or file, or socket) at clock time `at_s`."""


@dataclass
class _Piece:
    samples: np.ndarray
    item_id: str
    response_id: str


class Playback:
    """Plays queued agent audio in 20 ms frames on the clock; `clear()` stops it at once."""

    def __init__(self, clock: Clock, sink: AudioSink, rate_hz: int,
                 on_frame: Callable[[str, str, float], None] | None = None, lead_s: float = 0.0) -> None:
        self.clock = clock
        self.sink = sink
        self.rate_hz = rate_hz
        self.on_frame = on_frame  # (response_id, item_id, at_s) for every frame written
        self.frame_samples = rate_hz * FRAME_MS // 1000
        self._queue: deque[_Piece] = deque()
        self._wake = asyncio.Event()
        self.drained = asyncio.Event()
        self.drained.set()
        self.played: dict[str, int] = {}  # item_id -> samples handed to the speaker
        self.paused = False
        self._playing_until = 0.0
        self.current_item: str | None = None
        # A network client buffers: frames go out up to `lead_s` before they are due to sound.
        self.lead_s = lead_s

    def enqueue(self, samples: np.ndarray, *, item_id: str, response_id: str) -> None:
        if len(samples):
            self._queue.append(_Piece(samples, item_id, response_id))
            self.drained.clear()
            self._wake.set()

    def clear(self) -> int:
        """Drop everything not yet played; returns the samples dropped."""
        dropped = sum(len(p.samples) for p in self._queue)
        self._queue.clear()
        self.paused = False
        self._wake.set()
        return dropped

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self._wake.set()

    @property
    def speaking(self) -> bool:
        """Agent audio is queued or a frame is sounding right now (paused counts: it will resume)."""
        return bool(self._queue) or self.clock.now() < self._playing_until

    def queued_samples(self, item_id: str | None = None) -> int:
        return sum(len(p.samples) for p in self._queue if item_id is None or p.item_id == item_id)

    def played_ms(self, item_id: str) -> float:
        return self.played.get(item_id, 0) * 1000.0 / self.rate_hz

    async def run(self) -> None:
        while True:
            if not self._queue or self.paused:
                if not self._queue and self.clock.now() >= self._playing_until:
                    self.drained.set()
                    self.current_item = None
                self._wake.clear()
                if not self._queue and self.clock.now() < self._playing_until:
                    await self.clock.sleep_until(self._playing_until)
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
            self.current_item = piece.item_id
            self.played[piece.item_id] = self.played.get(piece.item_id, 0) + len(frame)
            self._playing_until = at + len(frame) / self.rate_hz
            if self.on_frame is not None:
                self.on_frame(piece.response_id, piece.item_id, at)
            await self.clock.sleep_until(self._playing_until - self.lead_s)
