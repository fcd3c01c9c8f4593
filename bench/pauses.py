"""Mid-sentence pauses in whole calls, per voice: does the caller stay one turn?

Each call is a caller sentence said in pieces, each piece said alone (so it ends as a speaker
ends it), with a pause between them past min_silence_ms and short of max_silence_ms; the call
runs through the session as `pipeline call` runs it (the real VAD, Whisper and turn signal, a
scripted reply, the simulated clock). A call is right when it commits one turn. The voices: the
tests' Piper caller (the turn rules were written on Piper) and the three held-out espeak-ng
voices of the end-of-turn set. One sentence is the end-of-turn set's ("My number is five five
five, | two one two, | three four five six.", whose Piper transcripts the value rule in
`pipeline/turns.py` was written after), said here in pieces; the others are not the set's.

    python -m bench.pauses [--pause 0.9]
    python -m bench.pauses --sentences fresh --voices more --set stt.time_final_words=false
    python -m bench.pauses --one-call [--set turn.learn_pauses=false]

`--sentences fresh` says FRESH instead: sentences of other desks, written for judging a change
and not read for any rule before it was judged (`fresh2`: FRESH2, twenty-four more, half of them
read); `--voices more` adds three espeak-ng voices no set
holds (`voices.MORE_ESPEAK_VOICES`); `--set section.key=value` runs with a setting changed, as
`pipeline call --set` does (the results file then says so in its name); `--one-call` says each
voice's sentences in one call, one after another, so that what the call learned of the caller's
pauses (`turn.learn_pauses`) counts.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.config import Config, load
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM
from pipeline.stages.whisper import said_words
from pipeline.testing import call, paused_speech, with_stages
from pipeline.testing.sounds import Speaker
from pipeline.testing.voices import ESPEAK_VOICES, MORE_ESPEAK_VOICES, say_as
from pipeline.transports.scripted import Clip

from .eot_rescore import RESULTS
from .machine import describe_machine, machine_line
from .summary import publish

# (why the pause is mid-sentence, the pieces)
SENTENCES: tuple[tuple[str, list[str]], ...] = (
    ("a number said in groups", ["My number is five five five,", "two one two,", "three four five six."]),
    ("an order number in two", ["The order number is seven three,", "eight one."]),
    ("a dangling word", ["I'd like to book a table for", "two people tomorrow at seven."]),
    ("a dangling article", ["Can you send me the", "invoice for last month?"]),
    ("a clause that looks finished", ["I need a taxi to the station", "at half past six tomorrow."]),
    ("a list", ["I'd like the soup, the salad,", "and a glass of water."]),
)


# Other desks' callers (a clinic, travel, a bank, a pharmacy, a shop, a hotel, an internet
# provider, an airline), one pause each, for judging a change to the turn's end: written before
# the change was judged on them, and not read for a rule
FRESH: tuple[tuple[str, list[str]], ...] = (
    ("a dangling word", ["Could I get an appointment with", "doctor Patel next week?"]),
    ("a dangling word", ["I'm looking for a flight to", "Chicago on Monday."]),
    ("a dangling word", ["Please transfer two hundred dollars from", "my savings account."]),
    ("a dangling word", ["Can I pick up the prescription at", "the downtown pharmacy?"]),
    ("a dangling article", ["I'd like to return the", "blue jacket I bought."]),
    ("a dangling article", ["Is there a", "parking garage near the hotel?"]),
    ("a conjunction", ["My internet keeps dropping and", "the router lights are red."]),
    ("a conjunction", ["I called yesterday but", "nobody called me back."]),
    ("a clause that looks finished", ["I want to move my booking", "to the following Thursday."]),
    ("a clause that looks finished", ["We need two rooms", "for three nights in May."]),
    ("a number said in groups", ["My account number is four four one,", "eight two nine."]),
    ("a number said in groups", ["The flight number is B A", "two seven four."]),
    ("a filler", ["I'd like, um,", "a refill of my inhaler."]),
    ("a filler", ["So, uh,", "my package never arrived."]),
    ("a list", ["I need towels, soap,", "and an extra pillow."]),
    ("a clause first", ["If the store is open tomorrow,", "I'll come in at noon."]),
)


# Twelve more desks' callers, then twelve held apart (written 2026-12-07 together, before any
# was run): the first twelve were read, and showed a final pass that stopped at the pause and lost
# the words after it (`stt_window.MISSED_VOICE_MS`); the last twelve judged that change once
FRESH2: tuple[tuple[str, list[str]], ...] = (
    ("a dangling word", ["I'd like to schedule a cleaning for", "next Tuesday morning."]),
    ("a dangling word", ["Can you check the status of", "my repair order?"]),
    ("a dangling article", ["I want to cancel the", "appointment I made last week."]),
    ("a conjunction", ["The heater stopped working and", "the room is freezing."]),
    ("a clause that looks finished", ["I'd like to order a pizza", "with extra cheese and olives."]),
    ("a number said in groups", ["My zip code is nine four,", "one zero three."]),
    ("a filler", ["I was, uh,", "hoping to speak to a nurse."]),
    ("a list", ["I need milk, eggs,", "and a loaf of bread."]),
    ("a dangling word", ["Could you connect me to", "the billing department?"]),
    ("a clause that looks finished", ["I lost my card", "at the train station yesterday."]),
    ("a clause first", ["When the driver gets here,", "please call my cell."]),
    ("a dangling verb", ["I would like to", "speak with a manager."]),
    ("a dangling word", ["Can I reserve a court for", "Saturday afternoon?"]),
    ("a dangling article", ["I'm calling about the", "leak in my bathroom."]),
    ("a conjunction", ["My flight was delayed and", "I missed my connection."]),
    ("a clause that looks finished", ["Please book me a room", "near the convention center."]),
    ("a number said in groups", ["The reference number is two six,", "nine nine four."]),
    ("a filler", ["I'd like to, um,", "renew my library books."]),
    ("a list", ["We want pasta, salad,", "and two glasses of wine."]),
    ("a dangling word", ["Is it possible to get a refund for", "the concert tickets?"]),
    ("a dangling word", ["I'd like to speak to", "someone about my bill."]),
    ("a clause that looks finished", ["My son has a fever", "and a bad cough since Monday."]),
    ("a clause first", ["Because my order came damaged,", "I want a replacement."]),
    ("a dangling word", ["Could you send someone to", "fix the elevator?"]),
)
SENTENCE_SETS = {"set": SENTENCES, "fresh": FRESH, "fresh2": FRESH2}


def words_lost(said: str, heard: list[str]) -> bool:
    """The call lost the caller's words: a turn heard none, or all it heard is under 70% of the
    words said (Whisper mishears these voices word for word, so only a gap this size is a loss)."""
    return any(not h.strip() for h in heard) or said_words(" ".join(heard)) < 0.7 * said_words(said)


def voices(more: bool = False) -> dict[str, Any]:
    """Each voice as a function of text, 16 kHz."""
    piper = Speaker()
    names = [*ESPEAK_VOICES, *(MORE_ESPEAK_VOICES if more else ())]
    return {"Piper (the tests' caller)": piper,
            **{name: (lambda text, v=name: say_as(text, v)) for name in names}}


REPLY = "Okay."  # the scripted agent's every reply
GAP_S = 8.0  # one call: the silence after each sentence, for the reply to be heard


def run(stages: Stages, pause_s: float, sentences: tuple[tuple[str, list[str]], ...] = SENTENCES,
        more_voices: bool = False, config: Config | None = None, one_call: bool = False) -> list[dict[str, Any]]:
    """Each sentence its own call, or (`one_call`) each voice's sentences one call, in order,
    GAP_S apart: what a caller's pauses taught the call so far (`turn.learn_pauses`) then counts."""
    rows = []
    for voice, say in voices(more_voices).items():
        audios = [paused_speech(pieces, say, pause_s=pause_s) for _, pieces in sentences]
        if one_call:
            starts = np.cumsum([0.0] + [len(a) / INPUT_RATE_HZ + GAP_S for a in audios])
            rec = call(with_stages(stages, llm=ScriptedLLM(replies=[REPLY] * 64)),
                       [Clip(a, at_s=float(t)) for a, t in zip(audios, starts, strict=False)], config=config,
                       max_s=float(starts[-1]) + 10.0)  # the scripted call's cap: past the last sentence
            said = {e.item_id: e.transcript for e in rec.events if isinstance(e, ev.TranscriptionCompleted)}
            by_turn = [(c, said.get(c.item_id, "")) for c in rec.commits]  # a commit may have no words
        for k, ((why, pieces), audio) in enumerate(zip(sentences, audios, strict=True)):
            if one_call:
                # the sentence's turns begin in its own stretch: from halfway through the silence
                # before it (a turn starts a little before its clip: the prefix padding)
                span = ((starts[k] - GAP_S / 2) * 1000, (starts[k + 1] - GAP_S / 2) * 1000)
                mine = [(c, t) for c, t in by_turn if span[0] <= c.audio_start_ms < span[1]]
                turns, heard = len(mine), [t for _, t in mine]
            else:
                one = call(with_stages(stages, llm=ScriptedLLM(replies=[REPLY])), [audio], config=config)
                turns, heard = len(one.commits), one.transcripts
            rows.append({"voice": voice, "why": why, "said": " | ".join(pieces), "turns": turns, "heard": heard,
                         "lost": words_lost(" ".join(pieces), heard)})
            print(f"{voice}: {why}: {turns} {heard}", file=sys.stderr, flush=True)
    return rows


def render(results: dict[str, Any]) -> str:
    rows = results["rows"]
    names = list(dict.fromkeys(r["voice"] for r in rows))
    out = [f"# Mid-sentence pauses in whole calls: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average {results['load_average']} "
           "(the simulated clock; how many partial passes run while the caller speaks still follows the "
           "machine's speed, so compare runs made side by side).", "",
           f"Command: `{results['command']}`. Each piece said alone, {results['pause_s']:.1f} s apart "
           "(min_silence_ms 600, max_silence_ms 1500); each cell: the turns committed (1 is right), "
           "then what Whisper heard (lost: under 70% of the words said were heard, or a turn heard none).", "",
           "| sentence | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    said = list(dict.fromkeys((r["why"], r["said"]) for r in rows))
    for why, sentence in said:
        cells = []
        for name in names:
            r = next(x for x in rows if x["voice"] == name and x["said"] == sentence)
            cells.append(f"{r['turns']}{' (lost)' if r.get('lost') else ''}: "
                         + " / ".join(f"\"{h}\"" for h in r["heard"]))
        out.append(f"| {why}: {sentence} | " + " | ".join(cells) + " |")
    right = {n: sum(r["turns"] == 1 for r in rows if r["voice"] == n) for n in names}
    lost = {n: sum(bool(r.get("lost")) for r in rows if r["voice"] == n) for n in names}
    out += ["", "One turn: " + ", ".join(f"{n} {k} of {len(said)}" for n, k in right.items())
            + f"; all {sum(right.values())} of {len(rows)}.",
            "Words lost: " + ", ".join(f"{n} {k}" for n, k in lost.items()) + f"; all {sum(lost.values())}."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pause", type=float, default=0.9, help="seconds between the pieces")
    parser.add_argument("--sentences", choices=tuple(SENTENCE_SETS), default="set",
                        help="the six sentences (one the end-of-turn set's), FRESH or FRESH2")
    parser.add_argument("--voices", choices=("set", "more"), default="set",
                        help="more: three espeak-ng voices no set holds as well")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting changed, as `pipeline call --set` takes it (repeatable)")
    parser.add_argument("--one-call", action="store_true",
                        help="each voice's sentences in one call, in order, not a call each")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    config = load(overrides=args.overrides)
    stages = Stages.load(config)
    sentences = SENTENCE_SETS[args.sentences]
    results = {"machine": describe_machine(),
               "command": "python -m bench.pauses " + " ".join(argv if argv is not None else sys.argv[1:]),
               "pause_s": args.pause, "overrides": args.overrides, "one_call": args.one_call,
               "rows": run(stages, args.pause, sentences, args.voices == "more", config, args.one_call),
               "load_average": [round(v, 2) for v in os.getloadavg()]}
    stem = "-".join([f"{results['machine']['date'][:10]}-pauses",
                     *([args.sentences] if args.sentences != "set" else []),
                     *(["more-voices"] if args.voices == "more" else []),
                     *(["one-call"] if args.one_call else []),
                     *(re.sub(r"[^a-z0-9]+", "-", o.split(".", 1)[-1].lower()).strip("-")
                       for o in args.overrides)])
    publish(args.out, stem, results, render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
