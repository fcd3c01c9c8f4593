"""Words Whisper wrote into the silence after the speech: not evidence that the caller finished.

A caller who pauses after a dangling word ("I'd like to book a table for") often gets a closed
sentence back from tiny.en: "... a table for it.", "I'd like to order it.", "I'm calling about
mine.". Whisper's decoder completes the sentence into the silence that follows the voice, and the
turn signal, reading a finished sentence, ends the turn at the short silence. The final pass
aligns its words to the audio (CTranslate2's cross-attention alignment, as faster-whisper's word
timestamps do) and counts the last words with almost no voice under them; the turn ends at the
short silence only if the words before them look finished as well (`lower_of`). The alignment
times a real last word late at times (Piper's "Could you send me the..." had "the" start at the
voice's end), so the shorter reading may only hold a turn open, never end one: a word timed
wrong costs at most the long silence's wait, never a cut-off. The transcript itself is left as
Whisper wrote it.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence

import numpy as np

from ..base.audio import INPUT_RATE_HZ, frame_levels_db

# a word with less voice than this under it was not said: in a probe of 15 espeak-ng clips said
# alone (4 voices; tiny.en's sized final; not kept) the shortest said last words ("it" in "pay
# for it", "the" in "send me the") had 70-80 ms, the words written into the silence 0-30 ms
MIN_VOICED_MS = 50
# voice: a 10 ms frame within this many dB of the pass's speech level (its loudest tenth), as the
# turn's own voice end counts it (`turn.voice_end_db`, `turns.voice_end_ms`)
VOICE_DB = 25.0
# and at least this many dB above the pass's quietest tenth: under noise less than VOICE_DB below
# the speech (pink noise at 20 dB) every frame is within VOICE_DB of it, and a word written into
# the pause would have "voice" under it. A pass holds 300 ms of lead and 250 ms after the speech
# (`stt.SPEECH_PAD_MS`), so its quietest tenth is the line's noise
NOISE_DB = 6.0
# where the pass's loudest tenth is less than this many dB above its quietest, none: a sentence's
# last word is often its softest, and under pink noise 10 dB down (14-19 dB between the tenths;
# 22-28 at 20 dB, 30 and more clean) the voice test found real last words ("... at eight.",
# "... for your country.") unvoiced on the end-of-turn set. Set after reading that set's
# own-pace rows (bench/README.md, "Words written into the pause")
MIN_SNR_DB = 20.0
_FRAME_MS = 10


def word_spans(tokenizer: object, ids: Sequence[int], alignment: object,
               frames_per_s: float) -> list[tuple[float, float]]:
    """(start, end) in seconds of each word of `ids` as the text's spaces part them ("555-212.",
    "B.A.", "5:30" are one word each, where Whisper's pieces split them), punctuation alone left
    out, from CTranslate2's `align` result (pairs of text index and time index): a count of these
    is a count of `said_part`'s words."""
    words, word_tokens = tokenizer.split_to_word_tokens([*ids, tokenizer.eot])  # type: ignore[attr-defined]
    pairs = alignment.alignments  # type: ignore[attr-defined]
    if len(word_tokens) <= 1 or not pairs:
        return []
    text_at = np.array([p[0] for p in pairs])
    time_at = np.array([p[1] for p in pairs])
    jumps = np.pad(np.diff(text_at), (1, 0), constant_values=1).astype(bool)
    jump_s = time_at[jumps] / frames_per_s
    bounds = np.pad(np.cumsum([len(t) for t in word_tokens[:-1]]), (1, 0))
    if bounds[-1] >= len(jump_s):
        return []
    spans: list[tuple[str, float, float]] = []  # (the word so far, start, end)
    for w, s, e in zip(words, jump_s[bounds[:-1]], jump_s[bounds[1:]], strict=False):
        if spans and not w.startswith(" "):  # a piece of the word before it
            spans[-1] = (spans[-1][0] + w, spans[-1][1], float(e))
        else:
            spans.append((w, float(s), float(e)))
    return [(s, e) for w, s, e in spans if w.strip(string.punctuation + " ")]


def unvoiced_tail(audio: np.ndarray, spans: Sequence[tuple[float, float]],
                  rate_hz: int = INPUT_RATE_HZ) -> int:
    """How many of the last words (`spans`, seconds into `audio`) have under MIN_VOICED_MS of
    voice under them; never all of them (a pass with no voiced word is for `backchannel.unspoken`)."""
    frame = rate_hz * _FRAME_MS // 1000
    if len(audio) // frame < 2 or not spans:
        return 0
    levels = frame_levels_db(audio, frame)
    speech, noise = float(np.percentile(levels, 90)), float(np.percentile(levels, 10))
    if speech - noise < MIN_SNR_DB:
        return 0  # the voice's end cannot be told from the noise: no word is doubted
    voiced = levels >= max(speech - VOICE_DB, noise + NOISE_DB)
    count = 0
    for start, end in reversed(spans[1:]):
        a, b = round(start * 1000 / _FRAME_MS), round(end * 1000 / _FRAME_MS)
        if int(voiced[a:b].sum()) * _FRAME_MS >= MIN_VOICED_MS:
            break
        count += 1
    return count


def said_part(text: str, unvoiced_words: int) -> str:
    """`text` without its last `unvoiced_words` words (their punctuation with them), its first word
    kept whatever the count."""
    if unvoiced_words <= 0:
        return text
    kept = text.split()
    # a word of punctuation alone ("...") is no word of the count: it goes with the word before;
    # the first word always stays (as `unvoiced_tail` never counts every word)
    dropped = 0
    while dropped < unvoiced_words and sum(bool(w.strip(string.punctuation)) for w in kept) > 1:
        if kept.pop().strip(string.punctuation):
            dropped += 1
    return " ".join(kept)


def lower_of(probability: Callable[[str], float], text: str, unvoiced_words: int, *,
             complete: float = 0.5) -> float:
    """The "looks complete" probability of `text` as written, or of its said part where that is
    lower: words written into the silence may hold the turn open, never end it. Below `complete`
    (the turn's threshold) the text as written already holds it open: the said part is not
    scored (a second Smart Turn or LLM pass would decide nothing)."""
    p = probability(text)
    said = said_part(text, unvoiced_words)
    return p if said == text or p < complete else min(p, probability(said))
