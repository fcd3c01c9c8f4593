"""A scripted caller on the session clock: clips placed at fixed times or after events.

Like a call transcript a test can read: "the caller says A at 0 s; 1 s after the agent starts
talking, the caller says B". Clips overlap by mixing. The agent's audio is recorded on the same
timeline, and can be fed back into the microphone (speakers instead of headphones) for echo tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..base import events as ev
from ..base.audio import FRAME_SAMPLES, INPUT_RATE_HZ, StreamResampler, resample, write_wav
from ..base.clock import Clock
from ..base.protocols import CallInput


@dataclass
class Clip:
    """Caller audio (16 kHz) that starts `at_s`, or `delay_s` after the first matching event."""

    audio: np.ndarray
    at_s: float | None = 0.0
    after: Callable[[ev.Event], bool] | None = None
    delay_s: float = 0.0
    label: str = ""
    started_s: float | None = None


def after_stage(stage: str, nth: int = 1) -> Callable[[ev.Event], bool]:
    """Matches the nth `x.stage` mark of a kind (e.g. "first_audio_out")."""
    seen = [0]

    def match(e: ev.Event) -> bool:
        if isinstance(e, ev.StageMark) and e.stage == stage:
            seen[0] += 1
            return seen[0] == nth
        return False

    return match


class ScriptedCaller:
    """Feeds scripted clips in 20 ms frames; stops once the conversation has settled."""

    def __init__(self, clips: list[Clip], *, tail_s: float = 1.0, max_s: float = 120.0,
                 ready_after_s: float = 0.0, echo_gain: float = 0.0, echo_delay_ms: float = 0.0) -> None:
        self.clips = clips
        self.tail_s = tail_s  # quiet time after the last activity before hanging up
        self.max_s = max_s  # hard cap on the call's length
        self.ready_after_s = ready_after_s  # models/handshake delay: pickup holds the first words
        self.echo_gain = echo_gain
        self.echo_delay_samples = int(echo_delay_ms * INPUT_RATE_HZ / 1000)
        self._agent: list[tuple[float, np.ndarray, int]] = []
        self._echo = np.zeros(0, np.float32)  # agent audio at 16 kHz, indexed by input sample
        self._echo_resampler: StreamResampler | None = None  # one stream: no clicks at frame edges
        self.mic: list[np.ndarray] = []
        self.fed_s = 0.0
        self.hung_up = False

    # AudioSink
    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self._agent.append((at_s, samples.copy(), rate_hz))
        if self.echo_gain:
            if self._echo_resampler is None or self._echo_resampler.src_hz != rate_hz:
                self._echo_resampler = StreamResampler(rate_hz, INPUT_RATE_HZ)
            x = self._echo_resampler.process(samples) * self.echo_gain
            start = int(round(at_s * INPUT_RATE_HZ)) + self.echo_delay_samples
            if len(self._echo) < start + len(x):
                self._echo = np.concatenate([self._echo, np.zeros(start + len(x) - len(self._echo), np.float32)])
            self._echo[start:start + len(x)] += x

    def hang_up(self) -> None:
        self.hung_up = True

    def _listen(self, e: ev.Event) -> None:
        for clip in self.clips:
            if clip.at_s is None and clip.started_s is None and clip.after is not None and clip.after(e):
                clip.at_s = e.ts + clip.delay_s

    @property
    def scripted_end_s(self) -> float:
        ends = [c.at_s + len(c.audio) / INPUT_RATE_HZ for c in self.clips if c.at_s is not None]
        return max(ends, default=0.0)

    def _frame(self, i: int) -> np.ndarray:
        start = i * FRAME_SAMPLES
        frame = np.zeros(FRAME_SAMPLES, np.float32)
        for clip in self.clips:
            if clip.at_s is None:
                continue
            offset = start - int(round(clip.at_s * INPUT_RATE_HZ))
            if offset + FRAME_SAMPLES <= 0 or offset >= len(clip.audio):
                continue
            if clip.started_s is None:
                clip.started_s = clip.at_s
            lo, hi = max(0, offset), min(len(clip.audio), offset + FRAME_SAMPLES)
            frame[lo - offset:hi - offset] += clip.audio[lo:hi]
        if self.echo_gain and start < len(self._echo):
            echo = self._echo[start:start + FRAME_SAMPLES]
            frame[: len(echo)] += echo
        return frame

    async def run(self, session: CallInput, clock: Clock) -> None:
        session.listeners.add(self._listen, ev.EventPhase.OBSERVER)
        ready_frame = int(round(self.ready_after_s * 1000 / 20))
        if ready_frame == 0:
            session.mark_ready()
        i = 0
        quiet_since: float | None = None
        while not self.hung_up:
            t = i * FRAME_SAMPLES / INPUT_RATE_HZ
            await clock.sleep_until(t)
            if ready_frame and i == ready_frame:
                session.mark_ready()
            pending = any(c.at_s is None for c in self.clips)
            if t >= self.scripted_end_s and not pending:
                quiet_since = (quiet_since if quiet_since is not None else t) if session.idle and session.ready else None
                if quiet_since is not None and t - quiet_since >= self.tail_s:
                    break
            if t >= self.max_s:
                session.log(f"the scripted call reached its {self.max_s:.0f} s cap; closing the line",
                            level="warning")
                break
            frame = self._frame(i)
            self.mic.append(frame)
            session.push_audio(frame)
            i += 1
        self.fed_s = i * FRAME_SAMPLES / INPUT_RATE_HZ

    def save(self, path: str | Path, *, rate_hz: int = 22_050) -> None:
        """Caller (what the microphone heard) on the left, agent on the right, one timeline."""
        mic = np.concatenate(self.mic) if self.mic else np.zeros(0, np.float32)
        agent_end = max((at + len(x) / r for at, x, r in self._agent), default=0.0)
        duration = max(self.fed_s, agent_end)
        out = np.zeros((int(duration * rate_hz) + 1, 2), np.float32)
        left = resample(mic, INPUT_RATE_HZ, rate_hz)
        out[: min(len(left), len(out)), 0] = left[: len(out)]
        for at, samples, r in self._agent:
            x = resample(samples, r, rate_hz) if r != rate_hz else samples
            start = int(round(at * rate_hz))
            end = min(len(out), start + len(x))
            out[start:end, 1] += x[: end - start]
        write_wav(path, out, rate_hz)

    def agent_seconds_between(self, t0_s: float, t1_s: float) -> float:
        """Seconds of agent audio handed to the speaker in [t0_s, t1_s) of clock time."""
        return sum(len(x) / r for at, x, r in self._agent if t0_s - 1e-9 <= at < t1_s - 1e-9)

    def agent_audio(self, rate_hz: int) -> tuple[np.ndarray, float]:
        """The agent's output as one array from its first frame, and that frame's start time."""
        if not self._agent:
            return np.zeros(0, np.float32), 0.0
        t0 = self._agent[0][0]
        end = max(at + len(x) / r for at, x, r in self._agent)
        out = np.zeros(int((end - t0) * rate_hz) + 1, np.float32)
        for at, samples, r in self._agent:
            x = resample(samples, r, rate_hz) if r != rate_hz else samples
            s = int(round((at - t0) * rate_hz))
            out[s:s + len(x)] += x[: len(out) - s]
        return out, t0
