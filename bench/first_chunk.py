"""The first words voiced first: what the chunker hands Piper first, and what that costs.

The same replies, streamed word by word, through four chunkings: whole sentences, the comma
fragment alone (the first chunk may end at a comma after six words), today's default (a comma
after four words, a reply's opener, "Sure,", a clause start without punctuation after four
words, and a phrase a preposition starts after a clause's object and three words), the default
without that last, and the default as it was with the comma after six words. For each:
the first chunk's words, Piper's synthesis time for it (median of three) and its audio length.
The replies are the kind a voice agent says (openers, confirmations with amounts and order ids,
questions back, explanations); naturalness is held by tests/test_chunker.py's table (no boundary
inside a number, a name or a fixed pair), not measured here.

    python -m bench.first_chunk [--out bench/results/first-chunk.md]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.config import ChunkerPolicy
from pipeline.chunker import SentenceChunker

from .clips import VOICE
from .machine import describe_machine, machine_line
from .micro import _synth_ms
from .summary import median, pair_ratios

REPLIES = (
    "Sure, I can help you with that refund today.",
    "Of course, let me look up your order first.",
    "Okay, I have started a refund of 64.50 dollars for order A1234.",
    "Your refund of 20 dollars is on its way and you should see it within five business days.",
    "I can book a table for two at seven tonight if that works for you.",
    "I'm sorry, I didn't catch your order number. Could you say it again?",
    "Thanks for waiting. The refund went through and your confirmation number is 55 21.",
    "We are open from nine in the morning until six in the evening on weekdays.",
    "That order was delivered on Tuesday, but I can still start a return for you.",
    "I will check with the kitchen because the menu changes every week.",
    "Those are the words of President Kennedy, from his inaugural address in 1961.",
    "Absolutely. Your appointment is moved to Thursday at three in the afternoon.",
    "Let me transfer you to our billing team so they can sort out the charge.",
    "The total comes to one hundred and twenty dollars including delivery.",
    "Great, I have your card ending in 4 4 1 2 on file for this payment.",
    "You can pick it up at the front desk when you arrive at the hotel.",
    "No problem, I'll cancel the reservation and send you an email to confirm it.",
    "It looks like your package is in transit and it should arrive tomorrow by noon.",
    "Is there anything else I can help you with today?",
    "I understand this has been frustrating, and I want to make it right for you.",
    # SmolLM2-135M's own openings to the wire benchmark's questions (bench/clips.py), as written
    "I'm sorry for any inconvenience, but as a phone-based assistant I can't make reservations online.",
    "To reset your password, you'll need to use the settings page of your account.",
    "The pharmacy is open on Sunday, but I'm not sure about its hours.",
    "Shipment to Canada can vary greatly depending on the type of ship, size, and location.",
)

CHUNKINGS: dict[str, dict[str, Any]] = {
    "sentence": {"quick_first_fragment": False},
    "comma fragment": {"quick_first_fragment": True, "min_fragment_words": 6,
                       "first_phrase_words": 0, "opener_fragments": False, "head_phrase_words": 0},
    "default with a comma after 6 words": {"quick_first_fragment": True, "min_fragment_words": 6,
                                           "first_phrase_words": ChunkerPolicy.first_phrase_words,
                                           "head_phrase_words": 0},
    "default without phrase heads": {"quick_first_fragment": True,
                                     "min_fragment_words": ChunkerPolicy.min_fragment_words,
                                     "first_phrase_words": ChunkerPolicy.first_phrase_words,
                                     "head_phrase_words": 0},
    "default": {"quick_first_fragment": True, "min_fragment_words": ChunkerPolicy.min_fragment_words,
                "first_phrase_words": ChunkerPolicy.first_phrase_words,
                "head_phrase_words": ChunkerPolicy.head_phrase_words},
}


def first_chunk(text: str, **options: Any) -> str:
    """The first chunk the chunker hands TTS when `text` streams in word by word."""
    chunker = SentenceChunker(**options)
    for i, word in enumerate(text.split(" ")):
        if chunks := chunker.push(("" if i == 0 else " ") + word):
            return chunks[0]
    rest = chunker.flush()
    return rest[0] if rest else ""


def run() -> dict[str, Any]:
    from pipeline.stages.tts import PiperTTS

    tts = PiperTTS(model_path=str(VOICE))
    tts.synthesize("Warming up.")
    rows = []
    for reply in REPLIES:
        row: dict[str, Any] = {"reply": reply}
        for name, options in CHUNKINGS.items():
            chunk = first_chunk(reply, **options)
            ms, seconds = _synth_ms(tts, chunk)
            row[name] = {"chunk": chunk, "words": len(chunk.split()), "synth_ms": round(ms, 1),
                         "audio_s": round(seconds, 2)}
        rows.append(row)
    summary = {}
    for name in CHUNKINGS:
        synth = {i: r[name]["synth_ms"] for i, r in enumerate(rows)}
        base = {i: r["sentence"]["synth_ms"] for i, r in enumerate(rows)}
        summary[name] = {
            "words": median(r[name]["words"] for r in rows),
            "synth_ms": median(synth.values()),
            "audio_s": median(r[name]["audio_s"] for r in rows),
            "under_1s_audio": sum(r[name]["audio_s"] < 1.0 for r in rows),
            "ratio_to_sentence": median(pair_ratios(synth, base)),
        }
    return {"rows": rows, "summary": summary}


def report(result: dict[str, Any], machine: str) -> str:
    lines = ["# First chunk: what Piper voices first", "", f"Machine: {machine}", "",
             f"{len(result['rows'])} replies, each streamed word by word; Piper "
             "en_US-joe-medium, median of 3 syntheses per chunk.", "",
             "| chunking | words (median) | synthesis ms (median) | audio s (median) | "
             "first audio < 1 s | synthesis / sentence (median ratio) |",
             "|---|---|---|---|---|---|"]
    for name, s in result["summary"].items():
        lines.append(f"| {name} | {s['words']:.0f} | {s['synth_ms']:.0f} | {s['audio_s']:.2f} | "
                     f"{s['under_1s_audio']} of {len(result['rows'])} | {s['ratio_to_sentence']:.2f} |")
    lines += ["", "| reply | default first chunk | ms | audio s |", "|---|---|---|---|"]
    for r in result["rows"]:
        d = r["default"]
        lines.append(f"| {r['reply']} | {d['chunk']} | {d['synth_ms']:.0f} | {d['audio_s']:.2f} |")
    return "\n".join(lines) + "\n"


def stored_replies() -> list[str]:
    """The embedded model's replies in the stored tool-domain runs (bench/results), each once."""
    import glob
    import json

    out: set[str] = set()
    for path in glob.glob(str(Path(__file__).resolve().parent / "results" / "*tool-domains*.json")):
        out.update(str(r.get("reply") or "").strip() for r in json.loads(Path(path).read_text()).get("rows", []))
    return sorted(r for r in out if r)


def heard(replies: list[str]) -> dict[str, Any]:
    """Every reply whose first chunk the phrase heads change: its first sentence voiced whole and
    voiced as the two chunks it is now sent in, each heard by whisper base; words wrong in each.
    Not how it sounds to a person (no one listened), but whether the cut loses words."""
    from faster_whisper import WhisperModel

    from pipeline.base.audio import INPUT_RATE_HZ, resample
    from pipeline.base.models import model_file
    from pipeline.stages.stt_text import word_errors
    from pipeline.stages.tts import PiperTTS

    tts = PiperTTS(model_path=str(VOICE), noise_scale=0.0, noise_w_scale=0.0)
    ear = WhisperModel(str(model_file("stt/whisper-base")), device="cpu", compute_type="int8")
    default = CHUNKINGS["default"]
    without = CHUNKINGS["default without phrase heads"]
    rows = []
    for reply in replies:
        first = first_chunk(reply, **default)
        if first == first_chunk(reply, **without):
            continue
        chunker = SentenceChunker(**without)
        sentence = (chunker.push(reply + " ") + chunker.flush())[0]
        rest = sentence[len(first):].strip()
        said = {"whole": [tts.synthesize(sentence)], "cut": [tts.synthesize(first), tts.synthesize(rest)]}
        row: dict[str, Any] = {"sentence": sentence, "first": first}
        for way, pieces in said.items():
            audio = resample(np.concatenate(pieces), tts.sample_rate_hz, INPUT_RATE_HZ)
            text = " ".join(seg.text.strip() for seg in ear.transcribe(audio, beam_size=5, language="en")[0])
            row[way] = {"heard": text, "errors": word_errors(sentence, text)[0]}
        rows.append(row)
    return {"rows": rows, "words": sum(len(r["sentence"].split()) for r in rows),
            "errors": {way: sum(r[way]["errors"] for r in rows) for way in ("whole", "cut")}}


def heard_report(result: dict[str, Any], machine: str) -> str:
    lines = ["# First chunk before a phrase: does the cut lose words?", "", f"Machine: {machine}", "",
             f"{len(result['rows'])} first sentences (of the embedded model's stored replies) whose first "
             "chunk the phrase heads change, voiced by Piper (no sampling noise) whole and as the two "
             "chunks now sent, joined; heard by whisper base. Words wrong of "
             f"{result['words']}: whole {result['errors']['whole']}, cut {result['errors']['cut']}.",
             "", "| first chunk | rest | heard whole | heard cut |", "|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['first']} | {r['sentence'][len(r['first']):].strip()} | {r['whole']['heard']} "
                     f"({r['whole']['errors']}) | {r['cut']['heard']} ({r['cut']['errors']}) |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--heard", action="store_true", help="the stored replies whose first chunk the "
                        "phrase heads change, voiced whole and cut, heard by whisper base")
    args = parser.parse_args()
    before = os.getloadavg()
    result = heard(stored_replies()) if args.heard else run()
    load = " ".join(f"{x:.2f}" for x in before + os.getloadavg())
    machine = f"{machine_line(describe_machine())}; load average (1, 5, 15 min) before, after: {load}"
    text = heard_report(result, machine) if args.heard else report(result, machine)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
