"""Caller audio in: held until the session is ready, then processed in order, frame by frame.

Frames and client commands share one inbox, so a command ("commit", "clear") acts after exactly
the audio sent before it. Each frame passes the echo guard (speakers), goes into a short history
ring (prefix padding, trims) and to the open turn, and is cut into 512-sample windows; each
window gets one Silero probability, inline (cheaper than a thread hand-off), which the
barge-in gate and the turn detector both read on the same window.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from enum import IntEnum
from typing import Any, TypeVar

import numpy as np

from ..base.audio import INPUT_RATE_HZ, PickupBuffer, StreamResampler
from ..base.clock import Clock
from ..base.listeners import Ordered
from ..base.protocols import VAD, ForkableVAD
from ..stages.denoise import denoiser
from ..stages.vad import WINDOW_SAMPLES
from .core import SessionCore

# input kept for prefix padding, and to join talk under the agent to the turn that follows it:
# a dropped "Wait." (~1 s) + a pause up to max_silence_ms (1.5 s) + padding, with room to spare
_HISTORY_MS = 6000

T = TypeVar("T")
FrameConsumer = Callable[[np.ndarray], None]
WindowConsumer = Callable[[np.ndarray, float, float], None]  # (window, voice prob, end_ms)


class CallerFramePhase(IntEnum):
    """Who is handed each frame of caller audio first."""

    TURNS = 0  # turn taking: the open turn's audio
    OBSERVER = 1  # recordings and other transports, after the session's own parts


class WindowPhase(IntEnum):
    """Who reads each VAD window first."""

    GATE = 0  # the barge-in gate: what it does with a window (pause, interrupt) is then in place
    TURNS = 1  # turn taking (speech start and stop, end of turn), after the gate


class InputPath:
    def __init__(self, core: SessionCore, vad: VAD, *, echo_guard: bool, agent_rate_hz: int) -> None:
        self.core = core
        self.clock: Clock = core.clock
        # Silero is recurrent: each session needs its own state (the weights are shared)
        self.vad = vad.fork() if isinstance(vad, ForkableVAD) else vad
        self.pickup = PickupBuffer(cap_ms=core.config.call.pickup_cap_ms)
        self.ready = False
        self.samples_in = 0  # input samples processed: the input audio clock
        self._samples_pushed = 0  # input handed to the session, held or not
        self._inbox: asyncio.Queue[np.ndarray | Callable[[], None] | None] = asyncio.Queue()
        self._window = np.zeros(0, np.float32)
        self._history: deque[tuple[int, np.ndarray]] = deque()
        # a consumer that raises is reported once and the audio goes on (`base.listeners`)
        self.on_frame: Ordered[FrameConsumer] = Ordered(CallerFramePhase, on_failure=core.listener_failed)
        self.on_window: Ordered[WindowConsumer] = Ordered(WindowPhase, on_failure=core.listener_failed)
        self.denoise = denoiser(core.config.bargein.denoise)  # None: off (the default)
        self.echo: Any = None
        self._ref_offset: int | None = None
        if echo_guard:  # speakers, not headphones: the agent's voice reaches the mic
            from ..stages.echo import EchoGuard

            self.echo = EchoGuard()
            self._echo_resampler = StreamResampler(agent_rate_hz, INPUT_RATE_HZ)

    # --- from the transport ----------------------------------------------------------------------

    def push_audio(self, frame: np.ndarray) -> None:
        """A 16 kHz mono float32 frame from the transport; cheap and non-blocking."""
        self._samples_pushed += len(frame)
        if self.ready:
            self._inbox.put_nowait(frame)
        else:
            self.pickup.hold(frame)

    def mark_ready(self) -> None:
        """Models and client are ready: flush held frames, in order, ahead of live ones."""
        held = self.pickup.drain()
        for frame in held:
            self._inbox.put_nowait(frame)
        self.ready = True
        held_s = sum(len(f) for f in held) / INPUT_RATE_HZ
        dropped_s = self.pickup.dropped_samples / INPUT_RATE_HZ
        self.core.log(f"held {held_s:.2f} s" + (f" (dropped the oldest {dropped_s:.2f} s)" if dropped_s else ""))

    async def after_queued_audio(self, command: Callable[[], T]) -> T:
        """Run `command` on the loop once the audio queued before it has been processed."""
        if not self.ready:  # a client that commits wants its audio processed now
            self.mark_ready()
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def run() -> None:
            try:
                done.set_result(command())
            except Exception as exc:  # the caller hears of it; the input loop goes on
                done.set_exception(exc)

        self._inbox.put_nowait(run)
        return await done

    @property
    def drained(self) -> bool:
        return self._inbox.empty()

    @property
    def now_ms(self) -> float:
        return self.samples_in * 1000.0 / INPUT_RATE_HZ

    # --- processing --------------------------------------------------------------------------------

    def release(self) -> None:
        """Drop the audio held (history, window, pickup, unread frames): the call is over."""
        self._history.clear()
        self._window = np.zeros(0, np.float32)
        self.pickup.drain()
        while not self._inbox.empty():
            self._inbox.get_nowait()
        self.on_frame.clear()
        self.on_window.clear()

    async def run(self) -> None:
        while (frame := await self._inbox.get()) is not None:
            if callable(frame):
                frame()
            else:
                self._process_frame(frame)

    def _process_frame(self, frame: np.ndarray) -> None:
        frame = np.asarray(frame, dtype=np.float32).reshape(-1)
        if self.echo is not None:  # everything downstream hears the caller, not the agent's echo
            frame = self.echo.process(frame, self.samples_in)
        if self.denoise is not None:  # the VAD, the gate, the turn and Whisper all hear it denoised
            frame = self.denoise.process(frame)
        self._history.append((self.samples_in, frame))
        while self._history and self._history[0][0] < self.samples_in - _HISTORY_MS * INPUT_RATE_HZ // 1000:
            self._history.popleft()
        self.on_frame(frame)
        self._window = np.concatenate([self._window, frame])
        consumed = self.samples_in - (len(self._window) - len(frame))  # sample index of window start
        self.samples_in += len(frame)
        while len(self._window) >= WINDOW_SAMPLES:
            window, self._window = self._window[:WINDOW_SAMPLES], self._window[WINDOW_SAMPLES:]
            consumed += WINDOW_SAMPLES
            end_ms = consumed * 1000.0 / INPUT_RATE_HZ
            prob = self.vad.probability(window)
            self.on_window(window, prob, end_ms)

    def history_since(self, from_ms: float, to_ms: float | None = None) -> np.ndarray:
        """Input audio from `from_ms` on (up to `to_ms`), out of the history ring (prefix padding,
        trims, where the voice ended). It starts later where the ring no longer holds `from_ms`."""
        start = int(from_ms * INPUT_RATE_HZ / 1000)
        end = self.samples_in if to_ms is None else int(to_ms * INPUT_RATE_HZ / 1000)
        parts = [f[max(0, start - first):end - first] for first, f in self._history
                 if first + len(f) > start and first < end]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    # --- echo reference ------------------------------------------------------------------------

    def on_reference(self, samples: np.ndarray, at_s: float) -> None:
        """A frame of agent audio due at `at_s` on the session clock: the echo guard's reference."""
        # where this frame lands on the input timeline: the clock's time plus the input that
        # arrived before the clock started (a microphone opens before the models load)
        if self._ref_offset is None:  # fixed once: a jittery offset would defeat the filter
            arrived = self._samples_pushed - self.pickup.dropped_samples  # dropped never reach echo
            self._ref_offset = arrived - int(round(self.clock.now() * INPUT_RATE_HZ))
        at_sample = int(round(at_s * INPUT_RATE_HZ)) + self._ref_offset
        self.echo.push_reference(self._echo_resampler.process(samples), at_sample)
