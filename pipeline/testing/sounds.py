"""What a test plays into a call: silence, noise, a repeatable caller voice, jfk.wav."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline.base.audio import (
    INPUT_RATE_HZ,
    PHONE_TAPS,
    StreamResampler,
    dbfs,
    mulaw_decode,
    mulaw_encode,
    read_wav,
    resample,
)
from pipeline.base.models import model_file

JFK_WAV = "audio/jfk.wav"  # under the models directory
JFK_TEXT = ("And so my fellow Americans, ask not what your country can do for you, "
            "ask what you can do for your country.")
# Piper samples noise, so two syntheses of one text differ; with both noise scales at 0 the same
# text is the same audio on every run. A little slower than the voice's own pace.
CALLER_VOICE = {"noise_scale": 0.0, "noise_w_scale": 0.0, "length_scale": 1.05}
NOISE_KINDS = ("white", "pink", "tones", "cough")
PHONE_RATE_HZ = 8000  # G.711's
NOISE_DBFS = -20.0  # loud enough to pass barge-in's -40 dBFS energy test by 20 dB


def silence(ms: float) -> np.ndarray:
    """`ms` of digital silence at 16 kHz."""
    return np.zeros(int(ms * INPUT_RATE_HZ / 1000), np.float32)


def at_level(x: np.ndarray, target_dbfs: float) -> np.ndarray:
    """`x` scaled to `target_dbfs` (RMS)."""
    return (x * 10 ** ((target_dbfs - dbfs(x)) / 20)).astype(np.float32)


def noise(kind: str, seconds: float, *, seed: int = 3, level_dbfs: float = NOISE_DBFS) -> np.ndarray:
    """Sounds that are not speech, at 16 kHz, the same for a seed: "white", "pink" (1/f power,
    like room or road noise), "tones" (a chord, like a ringtone or an alarm), "cough" (a burst
    with a sharp attack and a 30 ms decay)."""
    if kind not in NOISE_KINDS:
        raise ValueError(f"noise kind {kind!r}: use one of {', '.join(NOISE_KINDS)}")
    rng = np.random.default_rng(seed)
    n = int(seconds * INPUT_RATE_HZ)
    t = np.arange(n) / INPUT_RATE_HZ
    if kind == "white":
        x = rng.standard_normal(n)
    elif kind == "pink":
        spectrum = np.fft.rfft(rng.standard_normal(n))
        spectrum /= np.sqrt(np.maximum(np.arange(len(spectrum)), 1))
        x = np.fft.irfft(spectrum, n)
    elif kind == "tones":
        x = np.sum([np.sin(2 * np.pi * f * t) for f in (440.0, 660.0, 1320.0)], axis=0)
    else:
        x = rng.standard_normal(n) * np.exp(-t / 0.03)
    return at_level(np.asarray(x, np.float32), level_dbfs)


def phone_band(x: np.ndarray, rate_hz: int = INPUT_RATE_HZ) -> np.ndarray:
    """`x` as a caller on the phone sounds to the agent: down to 8 kHz, G.711 mu-law and back, up
    with the filters the telephony transport uses (`pipeline/transports/telephony.py`); the same
    length and rate as `x`."""
    if not len(x):
        return np.asarray(x, np.float32)
    narrow = StreamResampler(rate_hz, PHONE_RATE_HZ, taps=PHONE_TAPS).process(np.asarray(x, np.float32))
    coded = mulaw_decode(mulaw_encode(narrow))
    wide = StreamResampler(PHONE_RATE_HZ, rate_hz, taps=PHONE_TAPS, filter_up=True)
    out = wide.process(coded)
    return np.pad(out, (0, max(0, len(x) - len(out))))[: len(x)].astype(np.float32)


def jfk() -> np.ndarray:
    """jfk.wav from the models directory (11 s, JFK_TEXT), at 16 kHz."""
    wav = read_wav(model_file(JFK_WAV))
    return resample(wav.mono(), wav.sample_rate_hz, INPUT_RATE_HZ).astype(np.float32)


def caller_tts(**voice: Any) -> Any:
    """The caller's Piper voice (CALLER_VOICE, any of it overridden): needs the Piper model."""
    from pipeline.stages.tts import PiperTTS

    return PiperTTS(**{**CALLER_VOICE, **voice})


class Speaker:
    """A caller that says text: `Speaker()("What time is checkout?")` is that question at 16 kHz,
    the same audio on every run (made once per text)."""

    def __init__(self, tts: Any = None) -> None:
        self.tts = tts if tts is not None else caller_tts()
        self._said: dict[str, np.ndarray] = {}

    def __call__(self, text: str) -> np.ndarray:
        if text not in self._said:
            audio = self.tts.synthesize(text)
            self._said[text] = resample(audio, self.tts.sample_rate_hz, INPUT_RATE_HZ).astype(np.float32)
        return self._said[text]


def paused_speech(pieces: list[str], say: Callable[[str], np.ndarray], *, pause_s: float = 0.9,
                  tail_s: float = 2.5) -> np.ndarray:
    """A caller's sentence said in `pieces`, each said alone (so it ends as a speaker ends it),
    `pause_s` apart; 300 ms of silence before, `tail_s` after. 0.9 s (with the voice's own
    lead and tail, about a second of silence) is past min_silence_ms (600) after the voice's end
    and short of max_silence_ms (1500)."""
    parts = [silence(300)]
    for k, piece in enumerate(pieces):
        if k:
            parts.append(silence(pause_s * 1000))
        parts.append(np.asarray(say(piece), np.float32))
    return np.concatenate([*parts, silence(tail_s * 1000)])


def mm_hmm(tts: Any = None) -> np.ndarray:
    """A 200 ms backchannel: "Mm-hmm." spoken fast (length_scale 0.4), cut to its voiced part;
    loud and voiced, only its length keeps it from interrupting."""
    tts = tts if tts is not None else caller_tts(length_scale=0.4)
    audio = resample(tts.synthesize("Mm-hmm."), tts.sample_rate_hz, INPUT_RATE_HZ)
    start = int(np.nonzero(np.abs(audio) > 0.02)[0][0])
    n = INPUT_RATE_HZ // 5
    clip = audio[start:start + n]
    fade = np.hanning(n * 2)[n:] ** 0.1  # a soft end instead of a click
    return (clip * fade[:len(clip)]).astype(np.float32)
