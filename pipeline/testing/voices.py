"""Speech in more than one voice, and where a phrase said alone ends inside a longer one.

The shipped Piper voice at three speeds (no sampling noise, so repeatable) and three espeak-ng
voices (`apt-get install espeak-ng`): unseen by the models, rule-based, male and female. The
end-of-turn set (bench/eot_set.py) and the tests cut sentences with `prefix_end_s` to make a
mid-sentence pause that keeps the sentence's melody.
"""

from __future__ import annotations

import functools
import io
import shutil
import subprocess
import wave

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, resample

from .sounds import Speaker, caller_tts

PIPER_VOICES = {"joe-1.0": 1.0, "joe-fast": 0.8, "joe-slow": 1.3}  # Piper length_scale
ESPEAK_VOICES = {"espeak-us": ("en-us", 165), "espeak-us-f": ("en-us+f3", 150),
                 "espeak-rp": ("en-gb-x-rp", 185)}  # (voice, words per minute)
# more espeak-ng voices, for judging only (bench.pauses --voices more): never in a set a rule or
# threshold was fitted on
MORE_ESPEAK_VOICES = {"espeak-en": ("en", 175), "espeak-us-m3": ("en-us+m3", 175),
                      "espeak-gb-f": ("en-gb+f2", 160)}
FADE_S = 0.01  # a cut ends on a 10 ms fade, not a click


def trim(x: np.ndarray, floor: float = 0.005) -> np.ndarray:
    """Drop the synthesizer's leading and trailing silence (below about -46 dBFS)."""
    loud = np.nonzero(np.abs(x) > floor)[0]
    return x[loud[0]:loud[-1] + 1] if len(loud) else x[:0]


@functools.cache
def _piper(length_scale: float) -> Speaker:
    return Speaker(caller_tts(length_scale=length_scale))


def _espeak(text: str, voice: str, wpm: int) -> np.ndarray:
    if shutil.which("espeak-ng") is None:
        raise RuntimeError("espeak-ng is not installed: apt-get install espeak-ng (make system-deps)")
    out = subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "--stdout", text],
                         check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
        rate = w.getframerate()
    return trim(resample(x, rate, INPUT_RATE_HZ).astype(np.float32))


def say_as(text: str, voice: str) -> np.ndarray:
    """`text` in one of the set's voices (PIPER_VOICES or ESPEAK_VOICES) or MORE_ESPEAK_VOICES,
    16 kHz, trimmed."""
    if voice in PIPER_VOICES:
        return trim(_piper(PIPER_VOICES[voice])(text))
    return _espeak(text, *(ESPEAK_VOICES.get(voice) or MORE_ESPEAK_VOICES[voice]))


def _logmel(x: np.ndarray) -> np.ndarray:
    from faster_whisper.feature_extractor import FeatureExtractor

    return FeatureExtractor()(x, padding=0).T  # (frames of 10 ms, 80)


def prefix_end_s(prefix: np.ndarray, whole: np.ndarray) -> float:
    """Where `prefix` (the first words, said alone) ends inside `whole` (the sentence).

    Open-end DTW over cosine distances of log-mel frames; the whole sentence may run at up to
    twice the prefix's pace, and the prefix may linger (its last word is drawn out when said
    alone), so steps are (1,0), (1,1), (1,2).
    """
    q, r = _logmel(prefix), _logmel(whole)
    q /= np.linalg.norm(q, axis=1, keepdims=True) + 1e-9
    r /= np.linalg.norm(r, axis=1, keepdims=True) + 1e-9
    cost = 1.0 - q @ r.T
    acc = np.full(cost.shape, np.inf)
    acc[0, 0] = cost[0, 0]
    for i in range(1, len(q)):
        prev = acc[i - 1]
        best = prev.copy()
        best[1:] = np.minimum(best[1:], prev[:-1])
        best[2:] = np.minimum(best[2:], prev[:-2])
        acc[i] = cost[i] + best
    # every path has one step per query frame, so path ends compare as they are
    end = int(np.argmin(acc[-1]))
    return min(len(whole), (end + 1) * 160) / INPUT_RATE_HZ
