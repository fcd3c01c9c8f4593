"""The caller's side: short questions spoken once by a deterministic Piper voice, cached as WAVs.

Piper samples noise, so two syntheses of one text differ; with both noise scales at 0 the same
text is the same audio on every machine and run (the tests' caller voice, pipeline.testing).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, read_wav, resample, write_wav
from pipeline.base.models import model_file
from pipeline.testing import CALLER_VOICE, JFK_TEXT, jfk

CACHE = Path(__file__).resolve().parent / ".cache"
VOICE = model_file("tts/en_US-joe-medium.onnx")

# Short, complete questions of the kind a phone agent answers; 1-2.5 s each when spoken.
QUESTIONS = (
    ("checkout", "What time is checkout?"),
    ("password", "Can you tell me how to reset my password?"),
    ("pharmacy", "Is the pharmacy open on Sunday?"),
    ("shipping", "How long does shipping take to Canada?"),
    ("table", "I'd like to book a table for two tonight."),
    ("weather", "What's the weather going to be like tomorrow?"),
    ("sea-view", "Do you have any rooms with a view of the sea?"),
)


@dataclass
class CallerClip:
    name: str
    text: str
    audio: np.ndarray  # 16 kHz mono float32

    @property
    def seconds(self) -> float:
        return len(self.audio) / INPUT_RATE_HZ


def speech(text: str, *, cache: Path = CACHE, **voice: float) -> np.ndarray:
    """`text` in the caller voice (overridable per call), 16 kHz, from the cache when present."""
    params = {**CALLER_VOICE, **voice}
    key = hashlib.sha256(repr((text, sorted(params.items()), VOICE.name)).encode()).hexdigest()[:16]
    path = cache / f"{key}.wav"
    if not path.is_file():
        from pipeline.stages.tts import PiperTTS

        tts = PiperTTS(model_path=str(VOICE), **params)
        audio = resample(tts.synthesize(text), tts.sample_rate_hz, INPUT_RATE_HZ)
        cache.mkdir(parents=True, exist_ok=True)
        write_wav(path, audio, INPUT_RATE_HZ)
    wav = read_wav(path)
    return wav.mono().astype(np.float32)


def caller_clips(n: int, *, cache: Path = CACHE) -> list[CallerClip]:
    """The first `n` clips of the rotation: two questions, jfk.wav (11 s, with long pauses: the
    hard case for end of turn), then the other questions; repeated if `n` is larger."""
    order = [*QUESTIONS[:2], ("jfk", JFK_TEXT), *QUESTIONS[2:]]
    out = []
    for i in range(n):
        name, text = order[i % len(order)]
        audio = jfk() if name == "jfk" else speech(text, cache=cache)
        label = name if i < len(order) else f"{name}#{i // len(order) + 1}"
        out.append(CallerClip(label, text, audio))
    return out
