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

The same timing finds the opposite fault: a final whose words stop at a pause inside the turn,
the caller's speech after it left out ("Can you check the status of?" for "... of | my repair
order?": tiny.en ends its text at the pause). `voice_after` measures the voice the words do not
cover, `resume_at` where it begins (`stages/whisper.py` transcribes it, or the full window redoes
the final).
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
# the longest a word takes to say: 100 ms a letter and 200 ("of" in 400 ms, "refrigerator" in
# 1.4 s; a caller at 0.8 pace says about 12 letters a second)
WORD_MS, WORD_MS_MIN = 100, 200
# a pause inside a turn: this long without voice (the VAD's speech-stop takes 160 ms and more);
# a pass over what follows it starts this long before the voice resumes
PAUSE_MS, LEAD_MS = 250, 100


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


def _voiced(audio: np.ndarray, rate_hz: int) -> np.ndarray | None:
    """Per 10 ms frame of `audio`, whether it is voice; None where the voice cannot be told from
    the noise (or there is too little audio to tell)."""
    frame = rate_hz * _FRAME_MS // 1000
    if len(audio) // frame < 2:
        return None
    levels = frame_levels_db(audio, frame)
    speech, noise = float(np.percentile(levels, 90)), float(np.percentile(levels, 10))
    if speech - noise < MIN_SNR_DB:
        return None
    return levels >= max(speech - VOICE_DB, noise + NOISE_DB)


def unvoiced_tail(audio: np.ndarray, spans: Sequence[tuple[float, float]],
                  rate_hz: int = INPUT_RATE_HZ) -> int:
    """How many of the last words (`spans`, seconds into `audio`) have under MIN_VOICED_MS of
    voice under them; never all of them (a pass with no voiced word is for `backchannel.unspoken`)."""
    voiced = _voiced(audio, rate_hz) if spans else None
    if voiced is None:
        return 0  # (under loud noise the voice's end cannot be told from it: no word is doubted)
    count = 0
    for start, end in reversed(spans[1:]):
        a, b = round(start * 1000 / _FRAME_MS), round(end * 1000 / _FRAME_MS)
        if int(voiced[a:b].sum()) * _FRAME_MS >= MIN_VOICED_MS:
            break
        count += 1
    return count


def spoken_letters(word: str) -> int:
    """How many letters saying `word` takes: a digit is said as a word of four ("5", "five"; "26",
    "twenty-six"), other marks are not said."""
    return sum(4 if c.isdigit() else 1 for c in word if c.isalnum())


def voice_after(audio: np.ndarray, spans: Sequence[tuple[float, float]], last_word: str,
                rate_hz: int = INPUT_RATE_HZ) -> int:
    """Milliseconds of voice in `audio` from the last word's start on (`spans`, seconds; its
    text `last_word`) past what saying that word could take (`WORD_MS` a letter, and
    `WORD_MS_MIN`): speech the words do not cover. The alignment may time the last word to the
    audio's end ("the" at 1.4-4.2 s, over a pause and "appointment I made last week."), so the
    voice under its span counts too. 0 with no words, or where the voice cannot be told from
    the noise."""
    voiced = _voiced(audio, rate_hz) if spans else None
    if voiced is None:
        return 0
    said = int(voiced[round(spans[-1][0] * 1000 / _FRAME_MS):].sum()) * _FRAME_MS
    return max(0, said - WORD_MS * spoken_letters(last_word) - WORD_MS_MIN)


def resume_at(audio: np.ndarray, spans: Sequence[tuple[float, float]],
              rate_hz: int = INPUT_RATE_HZ) -> float | None:
    """Where the voice resumes (seconds into `audio`, `LEAD_MS` before it) after the first pause
    of PAUSE_MS or more that follows the last word's first voice: where the speech the words do
    not cover begins. None where there is no such pause, or the voice cannot be told."""
    voiced = _voiced(audio, rate_hz) if spans else None
    if voiced is None:
        return None
    at = round(spans[-1][0] * 1000 / _FRAME_MS)
    rest = voiced[at:]
    first = np.flatnonzero(rest)
    gap = PAUSE_MS // _FRAME_MS
    if not len(first):
        return None
    quiet = np.convolve(~rest[first[0]:], np.ones(gap, dtype=int), mode="valid") == gap
    if not quiet.any():
        return None
    after = at + first[0] + int(np.argmax(quiet)) + gap
    again = np.flatnonzero(voiced[after:])
    if not len(again):
        return None
    return max(0.0, float(after + int(again[0])) * _FRAME_MS - LEAD_MS) / 1000


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
