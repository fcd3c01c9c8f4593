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

Harder conditions (`bench.conditions`, shared with the end-of-turn set): `--speed 0.8` (or
1.25) says each caller clip faster (slower), time-stretched with its pitch kept; `--phone` plays each
caller clip as a phone line carries it (8 kHz G.711 mu-law and back); `--noise SNR` puts pink
noise under it, from NOISE_LEAD_S before the speech to NOISE_TAIL_S after, at SNR dB below the
speech (the speech still starts 1 s into the reply). Both together: noise in the caller's room,
then the line. The agent's echo is not mixed into this set's microphone, so there is no echo to
carry over the line. The backchannels' 300-800 ms filter reads the clean audio, so every
condition has the same items.

    python -m bench.bargein_words [--quick] [--speed 0.8] [--phone] [--noise 10]
    # writes bench/results/<date>-bargein-words[-stretch<per cent>][-noise<SNR>dB][-phone].md and .json
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.base.clock import perf_s
from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import LONG_REPLY, QUESTION
from pipeline.testing.voices import ESPEAK_VOICES, PIPER_VOICES, say_as
from pipeline.transports.scripted import Clip, after_stage

from .bargein import INTERRUPT_DELAY_S
from .calls import one_call
from .clips import speech
from .conditions import as_heard, condition_name, file_suffix
from .summary import median, p90

RESULTS = Path(__file__).resolve().parent / "results"
BACKCHANNELS = ("Mm-hmm.", "Mhm.", "Uh-huh.", "Uh-huh, yeah.", "Yeah.", "Okay.", "I see.",
                "Right.", "Sure.", "Oh, okay.", "Got it.", "Yeah, yeah.")
INTERRUPTIONS = ("Wait.", "Stop.", "No.", "Hold on.", "Sorry?", "Excuse me.", "Actually, no.",
                 "What about breakfast?", "Can you repeat that?", "No, the twelfth.",
                 "Wait, is the pool open?", "I need a taxi.")
BACKCHANNEL_MS = (300, 800)  # voiced length of the set's backchannels; the rest are skipped, and listed
AFTER_DECISION_S = 0.6  # the call ends this long after the decision: enough to see playback
# Under --noise the room is heard a little before and after the words (as the end-of-turn set's
# clips have it), so the gate and the words-from-speech rules meet noise with no speech in it.
NOISE_LEAD_S = 0.3
NOISE_TAIL_S = 0.5
RUN_INFO_KEYS = ("condition", "suffix", "condition_text", "command", "load_average", "wall_s")


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
    lead_s: float = 0.0  # audio before the speech begins (noise under --noise)


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


def in_condition(items: list[Item], *, phone: bool = False, noise_snr_db: float | None = None,
                 speed: float | None = None) -> list[Item]:
    """The items as heard in a condition: said `speed` times as long, pink noise under each (its
    own seed), then the line."""
    lead = NOISE_LEAD_S if noise_snr_db is not None else 0.0
    tail = NOISE_TAIL_S if noise_snr_db is not None else 0.0
    return [dataclasses.replace(it, lead_s=lead, audio=as_heard(
        it.audio, phone=phone, noise_snr_db=noise_snr_db, seed=i, lead_s=lead, tail_s=tail,
        speed=speed)) for i, it in enumerate(items)]


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
                                           delay_s=INTERRUPT_DELAY_S - item.lead_s, label="over")]
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
          day: str | None = None, short_words: bool = True, run_info: dict[str, Any] | None = None,
          out: Path = RESULTS) -> Path:
    """The results file pair; `run_info`: the condition, command, load average and wall time."""
    out.mkdir(parents=True, exist_ok=True)
    day = day or dt.date.today().isoformat()
    info = run_info or {}
    condition = info.get("condition", "clean")
    stem = out / f"{day}-bargein-words{info.get('suffix', '')}"
    stem.with_suffix(".json").write_text(json.dumps({"summary": summary, "rows": rows, "skipped": skipped,
                                                     "machine": machine, "short_words": short_words,
                                                     **info}, indent=1))
    s = summary
    lines = [f"# Barge-in that hears words ({day}{'' if condition == 'clean' else ', ' + condition})",
             "", machine]
    if "load_average" in info:
        load = info["load_average"]
        lines += ["", f"Load average (1, 5, 15 min) {' / '.join(f'{v:.2f}' for v in load['start'])} at the "
                  f"start, {' / '.join(f'{v:.2f}' for v in load['end'])} at the end; "
                  f"{info['wall_s'] / 60:.1f} min wall; `{info['command']}`. The machine was shared "
                  "with other work: the rates do not depend on it, the decision times do."]
    lines += ["", f"{s['backchannels']} backchannels (300-800 ms voiced) and "
              f"{s['interruptions']} interruptions over the agent's reply, "
              f"voices: {', '.join(sorted({r['voice'] for r in rows}))}; condition: {condition} "
              f"({info.get('condition_text', 'the synthesized speech as it is')}).", ""]
    if short_words:
        lines += ["| | words decide, short sounds too (`hear_short_words`, the default) | words decide "
                  "once the gate fires | gate alone |", "|---|---:|---:|---:|",
                  f"| backchannels cancelled (false cancels) | {s['false_cancel_rate_words']:.0%} | "
                  f"{s['false_cancel_rate_fired_words']:.0%} | {s['false_cancel_rate_gate_alone']:.0%} |",
                  f"| interruptions not cancelled (missed) | {s['missed_cancel_rate_words']:.0%} | "
                  f"{s['missed_cancel_rate_fired_words']:.0%} | {s['missed_cancel_rate_gate_alone']:.0%} |",
                  f"| fire → decision, median / p90 (ms) | {s['decision_ms_median']} / "
                  f"{s['decision_ms_p90']} | | 0 |", "",
                  "The run heard short sounds too (`hear_short_words`); the other two columns are read "
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
    voices = sorted({r["voice"] for r in rows})
    if len(voices) > 1:
        cols = (("false_cancel_rate_words", "false_cancel_rate_fired_words", "false_cancel_rate_gate_alone")
                if short_words else ("false_cancel_rate_words", "false_cancel_rate_gate_alone"))
        miss = [c.replace("false_cancel", "missed_cancel") for c in cols]
        lines += ["", "By voice, " + " / ".join(("short sounds too", "once the gate fires", "gate alone")
                                                 if short_words else ("words", "gate alone")) + ":", "",
                  "| voice | backchannels | cancelled | interruptions | missed |", "|---|---:|---|---:|---|"]
        for voice in voices:
            v = summarise([r for r in rows if r["voice"] == voice])
            lines.append(f"| {voice} | {v['backchannels']} | {' / '.join(f'{v[c]:.0%}' for c in cols)} | "
                         f"{v['interruptions']} | {' / '.join(f'{v[c]:.0%}' for c in miss)} |")
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


def describe_condition(*, phone: bool, noise_snr_db: float | None, speed: float | None = None) -> str:
    """The condition in words, for the report."""
    parts = [] if speed is None else [
        f"time-stretched to {speed:g} of its length, pitch kept (bench.conditions.stretch, WSOLA)"]
    parts += [] if noise_snr_db is None else [
        f"pink noise {noise_snr_db:g} dB below the speech, from {NOISE_LEAD_S:g} s before it to "
        f"{NOISE_TAIL_S:g} s after"]
    parts += ["through 8 kHz G.711 mu-law and back (pipeline.testing.sounds.phone_band)"] if phone else []
    return "; then ".join(parts) or "the synthesized speech as it is"


def main(argv: list[str] | None = None) -> int:
    from pipeline.call.session import Stages
    from pipeline.transports.runtime import add_config_args, load_config

    from .machine import describe_machine, machine_line

    parser = argparse.ArgumentParser(prog="python -m bench.bargein_words", description=__doc__)
    add_config_args(parser)
    parser.add_argument("--quick", action="store_true", help="one Piper voice only")
    parser.add_argument("--all-voices", action="store_true", help="all six voices of bench.eot_set")
    parser.add_argument("--short-words", action="store_true",
                        help="also hear out words shorter than the gate's hold (bargein.hear_short_words, "
                             "on by default: this keeps it on whatever the config says; "
                             "--set bargein.hear_short_words=false and no flag measures it off)")
    parser.add_argument("--phone", action="store_true", help="each caller clip as a phone line carries "
                        "it (8 kHz G.711 mu-law and back); the results file ends -phone")
    parser.add_argument("--noise", type=float, metavar="SNR", default=None,
                        help="pink noise under each caller clip at SNR dB below its speech (10: a "
                        "noisy room); the results file ends -noise<SNR>dB")
    parser.add_argument("--speed", type=float, metavar="FACTOR", default=None,
                        help="each caller clip said FACTOR times as long, pitch kept (0.8: 25%% "
                        "faster, 1.25: 25%% slower); the results file ends -stretch<per cent>: -stretch80")
    parser.add_argument("--voices", default=None, help="the voices, comma-separated (instead of "
                        "the four of the default set; bench.eot_set's six are "
                        f"{', '.join([*PIPER_VOICES, *ESPEAK_VOICES])})")
    parser.add_argument("--limit", type=int, default=0, help="only every k-th item, k = n/limit "
                        "(a try of the code; the figures need the whole set)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--report", metavar="JSON", help="rewrite the report of an earlier run "
                        "from its JSON (same date), without running anything")
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        day = Path(args.report).name[:10]
        info = {k: saved[k] for k in RUN_INFO_KEYS if k in saved}
        print(f"wrote {write(summarise(saved['rows']), saved['rows'], saved['skipped'], saved['machine'], day=day, short_words=saved.get('short_words', True), run_info=info, out=Path(args.report).parent)}")
        return 0
    if args.speed is not None and not 0.5 <= args.speed <= 2.0:
        parser.error(f"--speed {args.speed:g}: give the length factor, 0.5 to 2.0 (0.8 is faster speech)")
    if args.noise is not None and not -20 <= args.noise <= 60:
        parser.error(f"--noise {args.noise:g}: give the SNR in dB, between -20 and 60 (10 is a noisy room)")
    t_start, load_start = perf_s(), os.getloadavg()
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
    if args.voices:
        voices = [v.strip() for v in args.voices.split(",") if v.strip()]
        unknown = [v for v in voices if v not in PIPER_VOICES and v not in ESPEAK_VOICES]
        if unknown or not voices:
            parser.error(f"--voices {args.voices}: choose from {', '.join([*PIPER_VOICES, *ESPEAK_VOICES])}")
    items, skipped = build_set(voices)
    if args.limit and args.limit < len(items):
        items = items[::-(-len(items) // args.limit)]
    condition = condition_name(phone=args.phone, noise_snr_db=args.noise, speed=args.speed)
    items = in_condition(items, phone=args.phone, noise_snr_db=args.noise, speed=args.speed)
    stages = Stages.load(config)
    rows = run(stages, config, items, progress=lambda m: print(m, flush=True))
    for row in rows:
        row["condition"] = condition
    summary = summarise(rows)
    print(json.dumps(summary, indent=1))
    info = {"condition": condition,
            "suffix": file_suffix(phone=args.phone, noise_snr_db=args.noise, speed=args.speed),
            "condition_text": describe_condition(phone=args.phone, noise_snr_db=args.noise, speed=args.speed),
            "command": "python -m bench.bargein_words " + " ".join(argv if argv is not None else sys.argv[1:]),
            "load_average": {"start": load_start, "end": os.getloadavg()},
            "wall_s": round(perf_s() - t_start, 1)}
    print(f"wrote {write(summary, rows, skipped, machine_line(describe_machine()), short_words=config.bargein.hear_short_words, run_info=info, out=args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
