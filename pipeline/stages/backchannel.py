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
