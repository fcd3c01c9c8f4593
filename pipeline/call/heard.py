"""What the caller heard of a reply: its spoken chunks, and the words up to a played sample."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SpokenChunk:
    text: str
    start: int  # first sample within the item's audio
    samples: int


def heard_text(chunks: list[SpokenChunk], played: int) -> str:
    """The words the caller heard, given how many samples of the item were played.

    Whole chunks whose audio was played count in full. Inside the chunk being played, speech is
    assumed to move at an even rate through its characters (Piper's phoneme durations are close
    to even at sentence scale), so the cut falls at the same fraction of the text; a word cut in
    the middle keeps its heard part and a hyphen ("for yo-").
    """
    words: list[str] = []
    for chunk in chunks:
        if played >= chunk.start + chunk.samples:
            words.append(chunk.text)
            continue
        if played <= chunk.start or chunk.samples <= 0:
            break
        cut = int(len(chunk.text) * (played - chunk.start) / chunk.samples)
        part = chunk.text[:cut]
        if cut < len(chunk.text) and chunk.text[cut:cut + 1].isalnum() and part[-1:].isalnum():
            part = part.rstrip() + "-"
        words.append(part.rstrip())
        break
    return " ".join(w for w in words if w).strip()
