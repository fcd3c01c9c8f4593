"""The repeat guard's half in the LLM stages: a reply that says a sentence again stops there.

A small model that starts over ("I'm glad of that. I'm glad of that.") has begun a loop; the
stages stop generating at the repeat (no more tokens spent on it) and the chunker drops the
repeat itself (`SentenceChunker.drop_repeats`), so it is never spoken.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

__all__ = ["STOP_REPEAT_WORDS", "SaidOnce", "sentence_key", "sentence_keys", "stop_at_repeat"]

_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*\s")
# The shortest sentence whose repeat stops a generation: shorter ones ("Dr.", "No.") may be an
# abbreviation the plain boundary above takes for an end; the chunker still drops their repeats.
STOP_REPEAT_WORDS = 3


def sentence_key(text: str) -> str:
    """What two sentences share when one repeats the other: the words, any case, without
    punctuation or markup ("I'm glad of that." and "**I'm glad of that!**" are one sentence)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower().replace("’", "'")))


def sentence_keys(text: str) -> list[str]:
    """The keys of a text's sentences, in order."""
    keys, start = [], 0
    text = text.strip() + " "
    for m in _SENTENCE_END.finditer(text):
        keys.append(sentence_key(text[start:m.end()]))
        start = m.end()
    keys.append(sentence_key(text[start:]))
    return [k for k in keys if k]


def stop_at_repeat(pieces: Iterable[str], on_stop: Callable[[], None] = lambda: None) -> Iterator[str]:
    """The pieces of a reply up to a sentence it already said: there it stops (and calls
    `on_stop`), so a model that loops spends no more tokens on it. A tool call (a reply that
    starts with "{") passes whole. The repeat itself may be yielded in part; the chunker drops
    it."""
    text, start = "", 0
    said: set[str] = set()
    for piece in pieces:
        text += piece
        if text.lstrip().startswith("{"):
            yield piece
            continue
        for m in _SENTENCE_END.finditer(text, start):
            key = sentence_key(text[start:m.end()])
            start = m.end()
            if len(key.split()) < STOP_REPEAT_WORDS:
                continue
            if key in said:
                on_stop()
                return
            said.add(key)
        yield piece


class SaidOnce:
    """The sentences one reply has said, to tell a repeat (the chunker's half of the guard)."""

    def __init__(self) -> None:
        self._said: set[str] = set()
        self._sentence = ""  # the sentence being said, when a quick fragment began it

    @property
    def begun(self) -> bool:
        """A quick fragment has begun a sentence not yet whole."""
        return bool(self._sentence)

    def repeats(self, chunk: str, *, whole: bool) -> bool:
        """Whether `chunk` says again a sentence said before; remembers it if not. `whole`: the
        chunk ends a sentence (a quick fragment or a runaway cut is no sentence yet)."""
        key = sentence_key(chunk)
        self._sentence = f"{self._sentence} {key}".strip()
        if not whole:
            return False
        if key in self._said:
            return True
        # a sentence a quick first fragment began is remembered whole, and as its last chunk
        self._said.update(k for k in (key, self._sentence) if k)
        self._sentence = ""
        return False
