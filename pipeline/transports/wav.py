"""Scripted caller from a WAV file (any rate, mono or stereo, 8-64 bit), fed in 20 ms frames.

On the simulated clock (default) a 60 s call runs in seconds and is exact; with `--realtime` the
frames go at the wall-clock pace, as a live caller's would. The call is written back as a
two-channel WAV (caller left, agent right) on one timeline.
"""

from __future__ import annotations

from pathlib import Path

from ..base.audio import INPUT_RATE_HZ, read_wav, resample
from .scripted import Clip, ScriptedCaller


class WavTransport(ScriptedCaller):
    def __init__(self, *, caller: str | Path, tail_s: float = 1.0, max_tail_s: float = 30.0,
                 ready_after_s: float = 0.0) -> None:
        wav = read_wav(caller)
        audio = resample(wav.mono(), wav.sample_rate_hz, INPUT_RATE_HZ)
        self.caller_path = Path(caller)
        self.caller = audio
        super().__init__([Clip(audio, at_s=0.0, label=self.caller_path.name)], tail_s=tail_s,
                         max_s=len(audio) / INPUT_RATE_HZ + max_tail_s, ready_after_s=ready_after_s)
