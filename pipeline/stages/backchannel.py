"""Is what the caller said over the agent only a backchannel ("mm-hmm", "yeah", "I see")?

Whisper spells a backchannel many ways ("Mm-hmm.", "Mhm", "MMM.", "mm hmm", "Uh huh"), so words
are compared with case, punctuation, hyphens, doubled letters and spaces inside a phrase removed; a transcript is a
backchannel when it is made of listed phrases and nothing else. Anything else, even one word
("wait", "stop", "no"), is a real interruption.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from ..base.protocols import SpeechConfidence

_WORD = re.compile(r"[a-z0-9']+(?:-[a-z0-9']+)*")
_REPEAT = re.compile(r"(.)\1+")

Verdict = Literal["backchannel", "words", "silence", "unsure"]  # unsure: words Whisper doubts


def _words(text: str) -> list[str]:
    # "Mm-hmm", "Mmm-hmm", "mhm": no hyphens, and a doubled letter counts once, on both sides
    return [_REPEAT.sub(r"\1", w.replace("-", "")) for w in _WORD.findall(text.lower())]


class Backchannels:
    """Judges transcripts against a list of backchannel phrases."""

    def __init__(self, phrases: Iterable[str]) -> None:
        self.source = phrases
        self.phrases = {tuple(_words(p)) for p in phrases if _words(p)}
        self._longest = max((len(p) for p in self.phrases), default=0)
        # "uh huh" written apart is "uh-huh": a listed phrase matches with its words joined too
        self._joined = {_REPEAT.sub(r"\1", "".join(p)) for p in self.phrases}

    def judge(self, text: str) -> Verdict:
        words = _words(text)
        if not words:
            return "silence"
        return "backchannel" if self._covers(words) else "words"

    def _covers(self, words: list[str]) -> bool:
        """True if the words split into listed phrases (each 1..longest words long)."""
        reachable = [True] + [False] * len(words)
        for end in range(1, len(words) + 1):
            for size in range(1, min(self._longest, end) + 1):
                piece = words[end - size:end]
                if reachable[end - size] and (tuple(piece) in self.phrases
                                              or _REPEAT.sub(r"\1", "".join(piece)) in self._joined):
                    reachable[end] = True
                    break
        return reachable[-1]


# --- were these words spoken? --------------------------------------------------------------------

# A short sound is where Whisper writes words nobody said: pipeline.testing.mm_hmm() (200 ms)
# comes out of whisper tiny.en as "in a minute.", less sure and likelier no speech than Piper's
# "Stop.", "Wait.", "No." or "Wait, is the pool open?". The two bounds lie between them, and
# tests/test_bargein_speech.py plays each sound over a reply to hold them there.
NO_SPEECH_MAX = 0.3  # more likely than this that no one spoke, and ...
NO_SPEECH_LOGPROB = -0.5  # ... less sure than this of the words: not speech
# ... unless the VAD heard this much voice: the bounds sit between short sounds ("in a minute."
# from a breath, Piper's "Stop."), and a 1.6 s "Please refund order A1." came out of tiny.en at
# 0.33 and -0.505 on one CPU and under the bounds on another: a second and more of voice is speech
SURE_VOICED_MS = 1000.0
COMPRESSION_MAX = 2.4  # Whisper's own bound for a decode stuck repeating itself
# Syllables a second of voiced audio can hold: English runs about 6 a second (Pellegrino et al.,
# Language 87(3), 2011), fast speech more, so 8, and one more for a word cut at the span's edge.
# "in a minute" (4) in 200 ms is not speech.
SYLLABLES_PER_S = 8.0
_VOWELS = re.compile(r"[aeiouy]+")


def syllables(text: str) -> int:
    """A rough syllable count (vowel groups, a silent final "e" aside; digits one a character)."""
    n = 0
    for word in re.findall(r"[a-z']+|\d", text.lower()):
        if word.isdigit():
            n += 1
            continue
        groups = len(_VOWELS.findall(word))
        if groups > 1 and word.endswith("e") and not word.endswith(("le", "ee", "ye")):
            groups -= 1
        n += max(1, groups)
    return n


def unspoken(text: str, confidence: SpeechConfidence | None, voiced_ms: float | None, *,
             min_logprob: float = -1.0) -> str | None:
    """Why `text` may not be words the caller said, or None when nothing says so.

    `confidence`: the pass's own figures (None when the STT gives none); `voiced_ms`: how much of
    the audio the VAD heard as speech (None when unknown)."""
    if not _words(text):
        return None
    if voiced_ms is not None and syllables(text) > 1 + SYLLABLES_PER_S * voiced_ms / 1000:
        return "too many words for the speech heard"
    if confidence is None:
        return None
    if confidence.compression_ratio > COMPRESSION_MAX:
        return "repeats itself"
    if confidence.avg_logprob < min_logprob:
        return "unsure of the words"
    if doubts_speech(confidence) and (voiced_ms is None or voiced_ms < SURE_VOICED_MS):
        return "probably no speech"
    return None


def doubts_speech(confidence: SpeechConfidence) -> bool:
    """The pass finds it likely no one spoke, and is unsure of its words (see the bounds)."""
    return confidence.no_speech_prob > NO_SPEECH_MAX and confidence.avg_logprob < NO_SPEECH_LOGPROB
