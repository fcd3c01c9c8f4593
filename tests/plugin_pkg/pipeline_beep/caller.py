"""A third-party transport: plays a 16 kHz mono 16-bit WAV to the agent, then listens.

It knows the pipeline only through the Transport protocol: `run(session, clock)` pushes caller
frames on the session clock, and agent audio arrives through `write_output`.
"""

import wave

import numpy as np

FRAME = 320  # 20 ms at 16 kHz


class FileCaller:
    def __init__(self, *, caller: str, tail_s: float = 2.0, max_s: float = 60.0) -> None:
        with wave.open(str(caller), "rb") as w:
            if w.getframerate() != 16_000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
                raise ValueError("FileCaller plays 16 kHz mono 16-bit WAV files only")
            pcm = w.readframes(w.getnframes())
        self.audio = np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0
        self.tail_s = tail_s
        self.max_s = max_s
        self.agent_samples = 0

    def write_output(self, samples, rate_hz, at_s):
        self.agent_samples += len(samples)

    async def run(self, session, clock):
        session.mark_ready()
        i, quiet_since = 0, None
        while i * FRAME / 16_000 < self.max_s:
            t = i * FRAME / 16_000
            await clock.sleep_until(t)
            frame = self.audio[i * FRAME:(i + 1) * FRAME]
            if len(frame) < FRAME:
                if session.idle and self.agent_samples:
                    quiet_since = t if quiet_since is None else quiet_since
                    if t - quiet_since >= self.tail_s:
                        break
                else:
                    quiet_since = None
                frame = np.zeros(FRAME, np.float32)
            session.push_audio(frame)
            i += 1
        session.log(f"(file caller heard {self.agent_samples} samples of the agent)", level="warning")
