"""Barge-in that hears words, measured on a labelled set spoken over the agent's reply.

Backchannels ("mm-hmm", "uh-huh, yeah", "I see"; 300-800 ms voiced) and real interruptions
("wait", "stop", "no", questions), in several voices (Piper at three speeds, three espeak-ng
voices), each played 1 s into the agent's first reply on the simulated clock, with the real VAD,
Whisper and Piper (the LLM is scripted so every reply is the same). Per item it reads: did the
gate fire (or a short candidate get heard), what was decided, and when. Reported:

- false cancels on backchannels (the reply was cancelled), with word-hearing and, for comparison,
  with the gate alone (it cancels whenever it fires: the same run tells);
- missed cancels on interruptions (the reply went on);
- fire -> decision: the simulated policy time (speech-stop confirmation, the bound) plus the
  measured compute of the transcription passes in between, median and p90.

    python -m bench.bargein_words [--quick]     # writes bench/results/<date>-bargein-words.md
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import LONG_REPLY, QUESTION
from pipeline.testing.voices import ESPEAK_VOICES, PIPER_VOICES, say_as
from pipeline.transports.scripted import Clip, after_stage

from .bargein import INTERRUPT_DELAY_S
from .calls import one_call
from .clips import speech
from .summary import median, p90

RESULTS = Path(__file__).resolve().parent / "results"
BACKCHANNELS = ("Mm-hmm.", "Mhm.", "Uh-huh.", "Uh-huh, yeah.", "Yeah.", "Okay.", "I see.",
                "Right.", "Sure.", "Oh, okay.", "Got it.", "Yeah, yeah.")
INTERRUPTIONS = ("Wait.", "Stop.", "No.", "Hold on.", "Sorry?", "Excuse me.", "Actually, no.",
                 "What about breakfast?", "Can you repeat that?", "No, the twelfth.",
                 "Wait, is the pool open?", "I need a taxi.")
BACKCHANNEL_MS = (300, 800)  # voiced length of the set's backchannels; the rest are skipped, and listed
AFTER_DECISION_S = 0.6  # the call ends this long after the decision: enough to see playback


def _voiced_ms(audio: np.ndarray) -> float:
    win = 512
    loud = [i for i in range(0, len(audio) - win, win) if dbfs(audio[i:i + win]) > -35]
    return (loud[-1] - loud[0] + win) * 1000 / INPUT_RATE_HZ if loud else 0.0


@dataclasses.dataclass
class Item:
    kind: str  # "backchannel" | "interruption"
    text: str
    voice: str
    audio: np.ndarray


def build_set(voices: list[str]) -> tuple[list[Item], list[str]]:
    """The labelled items, and the backchannels left out for falling outside 300-800 ms."""
    items, skipped = [], []
    for voice in voices:
        for text in BACKCHANNELS:
            audio = say_as(text, voice)
            if BACKCHANNEL_MS[0] <= _voiced_ms(audio) <= BACKCHANNEL_MS[1]:
                items.append(Item("backchannel", text, voice, audio))
            else:
                skipped.append(f"{text} ({voice}, {_voiced_ms(audio):.0f} ms)")
        items += [Item("interruption", text, voice, say_as(text, voice)) for text in INTERRUPTIONS]
    return items, skipped


def _marks(events: list[ev.Event], *stages: str) -> list[ev.StageMark]:
    return [e for e in events if isinstance(e, ev.StageMark) and e.stage in stages]


def read_item(item: Item, events: list[ev.Event]) -> dict[str, Any]:
    listen = _marks(events, "barge_in_gate", "barge_in_listen")
    stop = _marks(events, "barge_in")
    resumed = [m for m in _marks(events, "false_interruption") if "verdict" in m.detail]
    done = [e for e in events if isinstance(e, ev.ResponseDone)]
    first = done[0].response["status"] if done else None
    decision = stop[0] if stop else (resumed[0] if resumed else None)
    row: dict[str, Any] = {"kind": item.kind, "text": item.text, "voice": item.voice,
                           "gate_fired": any(m.stage == "barge_in_gate" for m in listen),
                           "heard": bool(listen), "cancelled": first == "cancelled",
                           "decision": None, "sim_ms": None, "compute_ms": None, "words": None}
    if decision is not None and listen:
        row["decision"] = "cancel" if decision.stage == "barge_in" else "resume"
        row["sim_ms"] = round((decision.ts - listen[0].ts) * 1000, 1)
        row["compute_ms"] = round((decision.perf - listen[0].perf) * 1000, 1)
        row["words"] = decision.detail.get("heard")
    return row


def run(stages: Any, base: cfg.Config, items: list[Item], progress: Any = None) -> list[dict[str, Any]]:
    question = speech(QUESTION)
    rows = []
    for i, item in enumerate(items):
        if progress:
            progress(f"[{i + 1}/{len(items)}] {item.kind}: {item.text} ({item.voice})")
        scripted = dataclasses.replace(stages, llm=ScriptedLLM(replies=[LONG_REPLY, "Sure."]))
        clips = [Clip(question, 0.3), Clip(item.audio, None, after=after_stage("first_audio_out", 1),
                                           delay_s=INTERRUPT_DELAY_S, label="over")]
        events, _caller, _ = one_call(base, scripted, clips, realtime=False, max_s=30.0,
                                      hang_up_after=("barge_in|heard_in_full", AFTER_DECISION_S))
        rows.append(read_item(item, events))
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    back = [r for r in rows if r["kind"] == "backchannel"]
    inter = [r for r in rows if r["kind"] == "interruption"]
    lat = [r["sim_ms"] + r["compute_ms"] for r in rows if r["sim_ms"] is not None]
    return {
        "backchannels": len(back), "interruptions": len(inter),
        "backchannels_gate_fired": sum(r["gate_fired"] for r in back),
        "false_cancel_rate_words": round(sum(r["cancelled"] for r in back) / max(1, len(back)), 3),
        "false_cancel_rate_gate_alone": round(sum(r["gate_fired"] for r in back) / max(1, len(back)), 3),
        "missed_cancel_rate_words": round(sum(not r["cancelled"] for r in inter) / max(1, len(inter)), 3),
        "missed_cancel_rate_gate_alone": round(sum(not r["gate_fired"] for r in inter) / max(1, len(inter)), 3),
        # words heard only once the gate fired (hear_short_words off): a candidate too short
        # for the gate resumes, so only fired rows can cancel; read from the same rows
        "false_cancel_rate_fired_words": round(sum(r["gate_fired"] and r["cancelled"] for r in back)
                                               / max(1, len(back)), 3),
        "missed_cancel_rate_fired_words": round(sum(not (r["gate_fired"] and r["cancelled"]) for r in inter)
                                                / max(1, len(inter)), 3),
        "decision_ms_median": None if not lat else round(median(lat), 1),
        "decision_ms_p90": None if not lat else round(p90(lat), 1),
    }


def write(summary: dict[str, Any], rows: list[dict[str, Any]], skipped: list[str], machine: str, *,
          day: str | None = None, short_words: bool = True) -> Path:
    RESULTS.mkdir(exist_ok=True)
    day = day or dt.date.today().isoformat()
    stem = RESULTS / f"{day}-bargein-words"
    stem.with_suffix(".json").write_text(json.dumps({"summary": summary, "rows": rows, "skipped": skipped,
                                                     "machine": machine, "short_words": short_words},
                                                    indent=1))
    s = summary
    lines = [f"# Barge-in that hears words ({day})", "", machine, "",
             f"{s['backchannels']} backchannels (300-800 ms voiced) and "
             f"{s['interruptions']} interruptions over the agent's reply, "
             f"voices: {', '.join(sorted({r['voice'] for r in rows}))}.", ""]
    if short_words:
        lines += ["| | words decide, short sounds too (`hear_short_words`) | words decide once the gate "
                  "fires (default) | gate alone |", "|---|---:|---:|---:|",
                  f"| backchannels cancelled (false cancels) | {s['false_cancel_rate_words']:.0%} | "
                  f"{s['false_cancel_rate_fired_words']:.0%} | {s['false_cancel_rate_gate_alone']:.0%} |",
                  f"| interruptions not cancelled (missed) | {s['missed_cancel_rate_words']:.0%} | "
                  f"{s['missed_cancel_rate_fired_words']:.0%} | {s['missed_cancel_rate_gate_alone']:.0%} |",
                  f"| fire → decision, median / p90 (ms) | {s['decision_ms_median']} / "
                  f"{s['decision_ms_p90']} | | 0 |", "",
                  "The run heard short sounds too (`--short-words`); the other two columns are read "
                  "from the same rows: once the gate fires, only a fired row can cancel; the gate "
                  "alone cancels whenever it fires."]
    else:
        lines += ["| | words decide once the gate fires | gate alone |", "|---|---:|---:|",
                  f"| backchannels cancelled (false cancels) | {s['false_cancel_rate_words']:.0%} | "
                  f"{s['false_cancel_rate_gate_alone']:.0%} |",
                  f"| interruptions not cancelled (missed) | {s['missed_cancel_rate_words']:.0%} | "
                  f"{s['missed_cancel_rate_gate_alone']:.0%} |",
                  f"| fire → decision, median / p90 (ms) | {s['decision_ms_median']} / "
                  f"{s['decision_ms_p90']} | 0 |", "",
                  "The gate-alone column is read from the same rows: it cancels whenever it fires."]
    lines += ["", "Fire → decision is the simulated policy time plus the real time between the two marks "
              "(on a simulated-clock call that includes every model running meanwhile, not only the "
              "transcription).", "", "| kind | text | voice | gate | decision | ms | heard |",
              "|---|---|---|---|---|---:|---|"]
    for r in rows:
        ms = "" if r["sim_ms"] is None else f"{r['sim_ms'] + r['compute_ms']:.0f}"
        lines.append(f"| {r['kind']} | {r['text']} | {r['voice']} | {'fired' if r['gate_fired'] else '-'} "
                     f"| {r['decision'] or ('cancel' if r['cancelled'] else 'none')} | {ms} | {r['words'] or ''} |")
    if skipped:
        lines += ["", "Left out (voiced length outside 300-800 ms): " + "; ".join(skipped)]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return stem.with_suffix(".md")


def main(argv: list[str] | None = None) -> int:
    from pipeline.call.session import Stages
    from pipeline.transports.runtime import add_config_args, load_config

    from .machine import describe_machine, machine_line

    parser = argparse.ArgumentParser(prog="python -m bench.bargein_words", description=__doc__)
    add_config_args(parser)
    parser.add_argument("--quick", action="store_true", help="one Piper voice only")
    parser.add_argument("--all-voices", action="store_true", help="all six voices of bench.eot_set")
    parser.add_argument("--short-words", action="store_true",
                        help="also hear out words shorter than the gate's hold (bargein.hear_short_words; "
                             "the committed 2026-11-30 run had it on)")
    parser.add_argument("--report", metavar="JSON", help="rewrite the report of an earlier run "
                        "from its JSON (same date), without running anything")
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        day = Path(args.report).name[:10]
        print(f"wrote {write(summarise(saved['rows']), saved['rows'], saved['skipped'], saved['machine'], day=day, short_words=saved.get('short_words', True))}")
        return 0
    config = load_config(args)
    # hear_words: what this measures (the gate-alone column is read from it)
    config.bargein = dataclasses.replace(
        config.bargein, hear_words=True,
        hear_short_words=config.bargein.hear_short_words or args.short_words)
    # two Piper speeds and two espeak-ng voices: 48 backchannels and 48 interruptions before the
    # length filter, within an hour of compute on 2 cores; --all-voices adds the other two
    voices = ["joe-1.0"] if args.quick else ["joe-1.0", "joe-slow", "espeak-us", "espeak-us-f"]
    if args.all_voices:
        voices = [*PIPER_VOICES, *ESPEAK_VOICES]
    items, skipped = build_set(voices)
    stages = Stages.load(config)
    rows = run(stages, config, items, progress=lambda m: print(m, flush=True))
    summary = summarise(rows)
    print(json.dumps(summary, indent=1))
    print(f"wrote {write(summary, rows, skipped, machine_line(describe_machine()), short_words=config.bargein.hear_short_words)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
