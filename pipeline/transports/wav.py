"""Scripted caller: a WAV file fed in 20 ms frames, the call written back as a two-channel WAV.

On the simulated clock (default) a 60 s call runs in seconds and is exact; `realtime=True` feeds
frames at the wall-clock pace, as a live caller would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..audio import FRAME_SAMPLES, INPUT_RATE_HZ, read_wav, resample, write_wav
from ..clock import Clock
from ..session import Session


class WavTransport:
    """Feeds a caller recording into a session and records both sides on one timeline."""

    def __init__(self, *, caller: str | Path, tail_s: float = 1.0, max_tail_s: float = 30.0,
                 ready_after_s: float = 0.0) -> None:
        wav = read_wav(caller)
        self.caller_path = Path(caller)
        self.caller = resample(wav.mono(), wav.sample_rate_hz, INPUT_RATE_HZ)
        self.tail_s = tail_s  # quiet time after the last activity before hanging up
        self.max_tail_s = max_tail_s  # cap on the line staying open after the caller's audio ends
        self.ready_after_s = ready_after_s  # models/handshake delay: pickup holds the first words
        self._agent: list[tuple[float, np.ndarray, int]] = []
        self.fed_s = 0.0

    # AudioSink
    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self._agent.append((at_s, samples.copy(), rate_hz))

    async def run(self, session: Session, clock: Clock, *, stop_when_idle: bool = True) -> None:
        """Feed the recording, then silence until the conversation has settled."""
        n_frames = int(np.ceil(len(self.caller) / FRAME_SAMPLES))
        silence = np.zeros(FRAME_SAMPLES, np.float32)
        ready_frame = int(round(self.ready_after_s * 1000 / 20))
        if ready_frame == 0:
            session.mark_ready()
        i = 0
        quiet_since: float | None = None
        while True:
            await clock.sleep_until(i * FRAME_SAMPLES / INPUT_RATE_HZ)
            if i == ready_frame and ready_frame:
                session.mark_ready()
            if i < n_frames:
                frame = self.caller[i * FRAME_SAMPLES:(i + 1) * FRAME_SAMPLES]
                if len(frame) < FRAME_SAMPLES:
                    frame = np.concatenate([frame, silence[: FRAME_SAMPLES - len(frame)]])
            else:
                frame = silence
                if not stop_when_idle:
                    break
                t = clock.now()
                quiet_since = (quiet_since or t) if session.idle and session.ready else None
                if quiet_since is not None and t - quiet_since >= self.tail_s:
                    break
                if t - n_frames * FRAME_SAMPLES / INPUT_RATE_HZ >= self.max_tail_s:
                    session.log(f"caller audio ended {self.max_tail_s:.0f} s ago; closing the line",
                                level="warning")
                    break
            session.push_audio(frame)
            i += 1
        self.fed_s = i * FRAME_SAMPLES / INPUT_RATE_HZ

    def save(self, path: str | Path, *, rate_hz: int = 22_050) -> None:
        """Caller on the left channel, agent on the right, aligned on the call's clock."""
        agent_end = max((at + len(x) / r for at, x, r in self._agent), default=0.0)
        duration = max(self.fed_s, len(self.caller) / INPUT_RATE_HZ, agent_end)
        out = np.zeros((int(duration * rate_hz) + 1, 2), np.float32)
        left = resample(self.caller, INPUT_RATE_HZ, rate_hz)
        out[: len(left), 0] = left[: len(out)]
        for at, samples, r in self._agent:
            x = resample(samples, r, rate_hz) if r != rate_hz else samples
            start = int(round(at * rate_hz))
            end = min(len(out), start + len(x))
            out[start:end, 1] += x[: end - start]
        write_wav(path, out, rate_hz)
