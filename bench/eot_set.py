"""A labelled end-of-turn set: each clip is speech up to where the caller paused, and whether the
caller had finished. Built only from what we ship or generate: the Piper voice, espeak-ng voices,
generated background noise and jfk.wav.

A mid-sentence pause is made by cutting the *whole* sentence where the pause falls, so the words
before it keep their mid-sentence melody; a prefix synthesized on its own ("I'd like to book a
room for.") is said as a finished sentence, which no caller pausing there does. The cut point is
found by aligning the prefix, synthesized alone, to the start of the whole sentence (DTW on
log-mel frames), which works for every voice, however Whisper hears it.

Every clip is deterministic (Piper without sampling noise, espeak-ng, seeded noise) and cached
as a WAV under bench/.cache/eot/ with an index; `python -m bench.eot_set` builds it and prints a
summary.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs, read_wav, write_wav
from pipeline.testing import jfk
from pipeline.testing.voices import ESPEAK_VOICES, FADE_S, PIPER_VOICES, prefix_end_s, say_as

from .clips import CACHE, VOICE
from .conditions import under_noise

SET_CACHE = CACHE / "eot"
VERSION = 1  # bump when the recipe changes: the cache key includes it

# What callers say. "|" marks where a caller may pause mid-sentence; each mark is one
# unfinished clip (the words before it), and the whole sentence is one finished clip.
# The kind says why the pause is mid-turn.
PHRASES: tuple[tuple[str, str], ...] = (
    ("dangling", "I'd like to book a room for | two nights."),
    ("dangling", "Can you tell me how to | reset my password?"),
    ("dangling", "I want to change my | reservation for tomorrow."),
    ("dangling", "Could you send me the | invoice by email?"),
    ("dangling", "I'd like to pay with | my credit card."),
    ("dangling", "We need a table for | four people at eight."),
    ("dangling", "I was wondering if | you have any rooms left."),
    ("clause", "I'm calling because | my flight was cancelled."),
    ("clause", "The problem is that | the heater doesn't work."),
    ("clause", "So basically what happened was | my card got declined."),
    ("clause", "I'd like a large pizza | with mushrooms."),
    ("clause", "Book it for Friday | if you can."),
    ("list", "I need eggs, milk, and | bread."),
    ("list", "I'll have a coffee, a muffin, and | a glass of water."),
    ("list", "Red, green, | and blue."),
    ("number", "My number is five five five, | two one two, | three four five six."),
    ("number", "The order number is four seven | nine two."),
    ("number", "My address is twelve | Oak Street."),
    ("number", "The total was forty | two dollars."),
    ("filler", "I want, um, | the blue one."),
    ("filler", "Let me think, uh, | I'll take the early flight."),
    ("filler", "Hmm, | what time do you close today?"),
    ("filler", "Okay, so | I need to cancel my appointment."),
    ("finished", "Yes, that's right."),
    ("finished", "No, thank you."),
    ("finished", "That's all for today."),
    ("finished", "Two adults and one child."),
    ("finished", "It's nine one two."),
    ("finished", "Thanks, bye."),
    ("finished", "What time is checkout?"),
)

# Background noise, rotated over clips so every phrase and voice meets each condition once in
# three: clean, and pink noise (like room or road noise) at 20 and 10 dB below the speech.
CONDITIONS = (("clean", None), ("pink", 20.0), ("pink", 10.0))
LEAD_S = 0.3  # silence before the speech: the turn's prefix padding is 300 ms
PAUSE_S = 1.0  # the caller's pause after the clip: past speech-stop (160 ms) and min_silence
JFK_GAP_S = 0.5  # a gap this long in jfk.wav is a phrase boundary (its room noise is ~-40 dBFS)


@dataclass
class EotClip:
    name: str  # phrase/cut/voice/condition
    text: str  # the words said up to the pause
    finished: bool
    kind: str  # "finished", or why the pause is mid-turn: dangling/clause/list/number/filler/jfk
    voice: str
    condition: str  # "clean" or "<noise>@<snr>dB"
    speech_end_s: float  # end of speech within `audio`
    audio: np.ndarray  # 16 kHz mono: LEAD_S silence, the speech, PAUSE_S of pause

    @property
    def source(self) -> str:
        return "jfk" if self.voice == "jfk" else self.voice.split("-")[0]


def _cuts(marked: str) -> tuple[str, list[str]]:
    parts = [p.strip() for p in marked.split("|")]
    whole = " ".join(parts)
    prefixes = [" ".join(parts[:i + 1]) for i in range(len(parts) - 1)]
    return whole, prefixes


def _slug(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    return "-".join(words[:4])


def _place(speech: np.ndarray, condition: tuple[str, float | None], seed: int) -> np.ndarray:
    """LEAD_S + speech + PAUSE_S, with noise under all of it at the condition's SNR."""
    kind, snr_db = condition
    return under_noise(speech, kind, snr_db, seed=seed, lead_s=LEAD_S, tail_s=PAUSE_S)


def _cut(x: np.ndarray, end_s: float) -> np.ndarray:
    y = x[:int(end_s * INPUT_RATE_HZ)].copy()
    fade = min(len(y), int(FADE_S * INPUT_RATE_HZ))
    y[len(y) - fade:] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
    return y


def jfk_phrases(floor_dbfs: float = -35.0) -> list[float]:
    """Ends (s) of jfk.wav's phrases: speech followed by a gap of at least JFK_GAP_S."""
    x = jfk()
    hop = 160  # 10 ms frames
    loud = [dbfs(x[i:i + hop]) > floor_dbfs for i in range(0, len(x) - hop, hop)]
    ends, last_loud, gap = [], None, 0
    for i, is_loud in enumerate(loud):
        if is_loud:
            if last_loud is not None and gap * hop >= JFK_GAP_S * INPUT_RATE_HZ:
                ends.append((last_loud + 1) * hop / INPUT_RATE_HZ)
            last_loud, gap = i, 0
        else:
            gap += 1
    ends.append((last_loud + 1) * hop / INPUT_RATE_HZ)
    return ends


JFK_WORDS = ("And so my fellow Americans", "ask not", "what your country can do for you",
             "ask what you can do for your country.")


def _recipes() -> list[dict]:
    """Every clip as a small description; the audio is made (or read from the cache) from it."""
    out = []
    voices = [*PIPER_VOICES, *ESPEAK_VOICES]
    for p, (kind, marked) in enumerate(PHRASES):
        whole, prefixes = _cuts(marked)
        for v, voice in enumerate(voices):
            cond = CONDITIONS[(p + v) % len(CONDITIONS)]
            seed = 1000 * p + v
            out.append(dict(text=whole, whole=whole, finished=True, kind="finished", voice=voice,
                            condition=cond, seed=seed, cut=None))
            for c, prefix in enumerate(prefixes):
                out.append(dict(text=prefix, whole=whole, finished=False, kind=kind, voice=voice,
                                condition=cond, seed=seed + 100 * (c + 1), cut=c))
    for c, cond in enumerate(CONDITIONS):
        for k in range(len(JFK_WORDS)):
            out.append(dict(text=" ".join(JFK_WORDS[:k + 1]), whole=" ".join(JFK_WORDS),
                            finished=k == len(JFK_WORDS) - 1,
                            kind="finished" if k == len(JFK_WORDS) - 1 else "jfk",
                            voice="jfk", condition=cond, seed=50_000 + 10 * c + k, cut=k))
    return out


def _name(r: dict) -> str:
    cond = "clean" if r["condition"][1] is None else f"{r['condition'][0]}@{r['condition'][1]:g}dB"
    cut = "whole" if r["finished"] else f"cut{r['cut'] + 1}"
    return f"{_slug(r['whole'])}/{cut}/{r['voice']}/{cond}"


def _make(r: dict) -> tuple[np.ndarray, float]:
    if r["voice"] == "jfk":
        speech = _cut(jfk(), jfk_phrases()[r["cut"]])
    else:
        whole = say_as(r["whole"], r["voice"])
        if r["finished"]:
            speech = whole
        else:
            speech = _cut(whole, prefix_end_s(say_as(r["text"], r["voice"]), whole))
    return _place(speech, r["condition"], r["seed"]), LEAD_S + len(speech) / INPUT_RATE_HZ


def build(cache: Path = SET_CACHE) -> list[EotClip]:
    """The whole set, from the cache when it is there (and made once when it is not)."""
    cache.mkdir(parents=True, exist_ok=True)
    index_path = cache / "index.json"
    index = json.loads(index_path.read_text()) if index_path.is_file() else {}
    clips, changed = [], False
    voice_id = hashlib.sha256(VOICE.read_bytes()).hexdigest()[:12] if VOICE.is_file() else "none"
    for r in _recipes():
        name = _name(r)
        key = hashlib.sha256(repr((VERSION, voice_id, sorted(r.items()))).encode()).hexdigest()[:16]
        path = cache / f"{key}.wav"
        meta = index.get(key)
        if meta is None or not path.is_file():
            audio, end_s = _make(r)
            write_wav(path, audio, INPUT_RATE_HZ)
            meta = index[key] = {"name": name, "speech_end_s": round(end_s, 4)}
            changed = True
        audio = read_wav(path).mono().astype(np.float32)
        cond = "clean" if r["condition"][1] is None else f"{r['condition'][0]}@{r['condition'][1]:g}dB"
        clips.append(EotClip(name=name, text=r["text"], finished=r["finished"], kind=r["kind"],
                             voice=r["voice"], condition=cond, speech_end_s=meta["speech_end_s"],
                             audio=audio))
    if changed:
        index_path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    return clips


def main() -> None:
    clips = build()
    fin = sum(c.finished for c in clips)
    print(f"{len(clips)} clips: {fin} finished, {len(clips) - fin} unfinished; cached in {SET_CACHE}")
    kinds: dict[str, int] = {}
    for c in clips:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(json.dumps([{k: v for k, v in asdict(c).items() if k != "audio"} for c in clips[:3]],
                     indent=1))


if __name__ == "__main__":
    main()
