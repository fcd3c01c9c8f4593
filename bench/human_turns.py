"""End-of-turn signals on recorded people: every labelled pause of bench/human_speech.py's
recordings, and jfk.wav's, through the same steps as bench/eot.py.

At each pause the turn is the speech since the speaker last finished a sentence there could have
been an answer to (the last pause labelled `end`, at most MAX_TURN_S back), followed by silence:
as if the speaker had paused there long enough for the signal to decide. Silero finds the
speech-stop, whisper tiny.en writes the turn as the final pass would, and each signal scores it;
at `complete_threshold` the turn ends at `min_silence_ms`, else it waits for `max_silence_ms`.

Per signal and per recording: the share of `mid` pauses cut off (the turn ended while the
speaker was mid-sentence), of `last` ends left waiting the long silence, and of `end` pauses
ended (no error either way: the speaker had finished a sentence). These are people, not TTS
voices: the rows the issue asks to see apart, and to weigh before the synthetic set's.

    python -m bench.human_turns                      # bench/results/<date>-human-turns.{md,json}
    python -m bench.human_turns --signals heuristic,smart-turn
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.clock import perf_s
from pipeline.base.config import TurnPolicy

from .eot import load_signals as eot_signals
from .eot import run_clip
from .eot_set import LEAD_S, PAUSE_S, EotClip
from .human_speech import RECORDINGS, audio, labels
from .machine import describe_machine, machine_line
from .summary import write_results

RESULTS = Path(__file__).resolve().parent / "results"
SIGNALS = ("heuristic", "smart-turn", "combined", "text-eot", "combined-text-eot", "eou-head",
           "eou-head+heuristic")
MAX_TURN_S = 25.0  # a turn longer than this is cut to its last 25 s (Whisper reads 30 at most)
SPONTANEOUS = frozenset({"lecture", "talking-fast", "with-a-cold", "meeting", "jfk"})
READ_ALOUD = frozenset({"sonnet", "novel"})  # the news (read reports and spontaneous clips) is neither


def load_signals(names: list[str]) -> dict[str, Any]:
    """bench.eot's signals, and the trained end-of-utterance head (alone, and with the heuristic:
    both must say finished)."""
    from pipeline.stages.eou_head import EouHeadCompleteness

    heads = {"eou-head": False, "eou-head+heuristic": True}
    out = eot_signals([n for n in names if n not in heads])
    for name in names:
        if name in heads:
            out[name] = EouHeadCompleteness(with_heuristic=heads[name])
    return {name: out[name] for name in names}


def recordings() -> dict[str, np.ndarray]:
    from pipeline.testing import jfk

    out = {rec.name: audio(rec) for rec in RECORDINGS}
    out["jfk"] = jfk()
    return out


def clip_name(recording: str, k: int, at: float) -> str:
    """A labelled pause's clip: its recording, its place among the recording's marks, its time."""
    return f"{recording}/{k + 1}@{at:.2f}"


def clips(sound: dict[str, np.ndarray]) -> list[EotClip]:
    """One clip per labelled pause: the turn so far, then PAUSE_S of silence."""
    out = []
    for name, marks in labels().items():
        x = sound[name]
        start = 0.0
        for k, mark in enumerate(marks):
            at, label = float(mark["at"]), str(mark["label"])
            begin = max(start, at - MAX_TURN_S)
            speech = x[int(begin * INPUT_RATE_HZ):int(at * INPUT_RATE_HZ)]
            lead = np.zeros(int(LEAD_S * INPUT_RATE_HZ), np.float32)
            tail = np.zeros(int(PAUSE_S * INPUT_RATE_HZ), np.float32)
            out.append(EotClip(name=clip_name(name, k, at), text=str(mark.get("before", "")),
                               finished=label != "mid", kind=label, voice=name, condition="recorded",
                               speech_end_s=LEAD_S + len(speech) / INPUT_RATE_HZ,
                               audio=np.concatenate([lead, speech, tail]).astype(np.float32)))
            if label in ("end", "last"):
                start = at + float(mark.get("pause", 0.0))  # the next turn starts when speech resumes
    return out


def pauses_by_clip() -> dict[str, float]:
    """How long the speaker really paused at each clip's pause (bench/human_pauses.json; 0 at the
    last words), by the clip's name."""
    return {clip_name(name, k, float(m["at"])): float(m.get("pause", 0.0))  # type: ignore[arg-type]
            for name, marks in labels().items() for k, m in enumerate(marks)}


def summarise(rows: list[dict[str, Any]], names: list[str],
              policy: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per signal and group: `mid` pauses cut off; finished sentences (`end` and `last`) left
    waiting for max_silence_ms; the speakers' `last` words alone left waiting; and, at each
    pause's own length under `policy`, the `mid` pauses that really ended the turn (a pause
    shorter than min_silence_ms ends none, one of max_silence_ms or more ends it whatever the
    signal says)."""
    policy = policy or vars(TurnPolicy())
    short_s, long_s = policy["min_silence_ms"] / 1000, policy["max_silence_ms"] / 1000
    paused = pauses_by_clip()
    pause_s = lambda r: paused[str(r["name"])]  # noqa: E731

    def shares(group: list[dict[str, Any]], name: str) -> dict[str, Any]:
        scored = [r for r in group if name in r]
        mid = [r for r in scored if r["kind"] == "mid"]
        done = [r for r in scored if r["kind"] in ("end", "last")]
        last = [r for r in scored if r["kind"] == "last"]
        ended = lambda r: r[name]["ended"] == "min_silence"  # noqa: E731
        share = lambda part, of: part / len(of) if of else None  # noqa: E731
        really = sum(pause_s(r) >= long_s or (pause_s(r) >= short_s and ended(r)) for r in mid)
        return {"mid": len(mid), "cut_off": share(sum(map(ended, mid)), mid),
                "finished": len(done), "waited": share(sum(not ended(r) for r in done), done),
                "last": len(last), "waited_last": share(sum(not ended(r) for r in last), last),
                "cut_off_as_paused": share(really, mid)}

    def recording(row: dict[str, Any]) -> str:  # the novel's three utterances are one reading
        name = str(row["name"]).split("/")[0]
        return "novel" if name.startswith("novel-") else name

    groups: dict[str, list[dict[str, Any]]] = {
        "all": rows, "spontaneous": [r for r in rows if recording(r) in SPONTANEOUS],
        "read aloud": [r for r in rows if recording(r) in READ_ALOUD]}
    for name in dict.fromkeys(map(recording, rows)):
        groups[name] = [r for r in rows if recording(r) == name]
    return {name: {g: shares(group, name) for g, group in groups.items()} for name in names}


def replay(rows: list[dict[str, Any]], name: str, policy: dict[str, Any], *, learn: bool,
           cut_offs: bool = True) -> dict[str, Any]:
    """Each recording as one call at its own pause lengths, its pauses in order: a pause ends the
    turn if it outlasts max_silence_ms, or min_silence_ms with the signal saying finished. With
    `learn`, the waits of each new turn come from the pauses the caller went on after so far
    (`LearnedPauses`, `turn.learn_pauses`), as in a live call: inside a turn, and (`cut_offs`,
    as turn taking does) one that ended a turn at the short wait, the speaker going on within
    the long one. Mid pauses that ended a turn, and the silence the speakers' last words waited."""
    from pipeline.stages.eou_pauses import LearnedPauses

    from .eou_pauses_eval import learn_cut_off

    paused = pauses_by_clip()
    cut = mids = 0
    waits: list[float] = []
    calls: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if name in r:
            calls.setdefault(str(r["name"]).split("/")[0], []).append(r)
    for call_rows in calls.values():
        learner = LearnedPauses(min_silence_ms=policy["min_silence_ms"], max_silence_ms=policy["max_silence_ms"])
        short, long = policy["min_silence_ms"], policy["max_silence_ms"]
        for r in call_rows:
            finished = r[name]["ended"] == "min_silence"
            if r["kind"] == "last":
                waits.append(short if finished else long)
                continue
            pause = paused[str(r["name"])] * 1000
            ended = pause >= long or (pause >= short and finished)
            mids += r["kind"] == "mid"
            cut += ended and r["kind"] == "mid"
            if ended and learn:
                if cut_offs and finished:  # the speaker went on as the reply began
                    learn_cut_off(learner, pause)
                short, long = learner.waits()  # a new turn takes the waits learned so far
            elif not ended and learn:
                learner.observed_pause(pause)
    return {"mid": mids, "cut": cut, "cut_off": cut / mids if mids else None,
            "last_wait_ms": sum(waits) / len(waits) if waits else None}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def render(results: dict[str, Any]) -> str:
    names = results["signals"]
    summary = results["summary"]
    groups = list(next(iter(summary.values())))
    lines = ["# End of turn on recorded people", "",
             f"Machine: {machine_line(results['machine'])}; load average (1, 5, 15 min) before, after: "
             + " ".join(f"{x:.2f}" for x in results["load_average"]["start"] + results["load_average"]["end"]),
             "", f"Command: `{results['command']}`", "",
             "Every labelled pause of bench/human_pauses.json (bench/human_speech.py's recordings and "
             "jfk.wav), the turn so far followed by silence; tiny.en's final pass, each signal at "
             f"`complete_threshold` {results['policy']['complete_threshold']}. Each cell: cut off "
             "(`mid` pauses the turn ended at: the speaker was mid-sentence) / waited (finished "
             "sentences, `end` and `last`, left for max_silence_ms) / the speakers' `last` words "
             "alone left waiting. A pause where Silero found no speech in the turn is not scored.",
             ""]
    counts = summary[names[0]]
    lines += ["| signal | " + " | ".join(f"{g} ({counts[g]['mid']} mid, {counts[g]['finished']} "
                                          f"finished, {counts[g]['last']} last)" for g in groups) + " |",
              "|---|" + "---|" * len(groups)]
    for name in names:
        cells = [f"{_pct(s['cut_off'])} / {_pct(s['waited'])} / {_pct(s['waited_last'])}"
                 for s in (summary[name][g] for g in groups)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "At each pause's own length (a pause shorter than min_silence_ms ends no turn, one of "
              "max_silence_ms or more ends it whatever the signal says), the `mid` pauses that ended "
              "the turn:", "", "| signal | " + " | ".join(groups) + " |", "|---|" + "---|" * len(groups)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(_pct(summary[name][g]["cut_off_as_paused"])
                                                  for g in groups) + " |")
    lines += ["", "Each recording as one call at its own pauses, the waits fixed (600 / 1500 ms) or learned "
              "per caller (`turn.learn_pauses`): mid pauses that ended a turn, and the mean silence "
              "the speakers' last words waited:", "",
              "| signal | fixed: cut off | fixed: last words waited | learned: cut off | learned: last words waited |",
              "|---|---|---|---|---|"]
    for name in names:
        fixed, learned = (replay(results["clips"], name, results["policy"], learn=k) for k in (False, True))
        lines.append(f"| {name} | {_pct(fixed['cut_off'])} | {fixed['last_wait_ms']:.0f} ms | "
                     f"{_pct(learned['cut_off'])} | {learned['last_wait_ms']:.0f} ms |")
    lines += ["", "| pause | label | said | heard | "
              + " | ".join(names) + " |", "|---|---|---|---|" + "---|" * len(names)]
    for r in results["clips"]:
        if r.get("no_speech"):
            lines.append(f"| {r['name']} | {r['kind']} | {r['said']} | (no speech found) |" + " |" * len(names))
            continue
        cells = [f"{r[n]['p']:.2f}" + (" ends" if r[n]["ended"] == "min_silence" else "") for n in names]
        lines.append(f"| {r['name']} | {r['kind']} | {r['said'][-50:]} | {r['transcript'][-60:]} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signals", default=",".join(SIGNALS), help="comma-separated (bench.eot's names)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--rescore", type=Path, default=None, metavar="JSON",
                        help="summarise a stored run again (no model), into the same files")
    args = parser.parse_args(argv)
    if args.rescore is not None:
        import json

        stored = json.loads(args.rescore.read_text(encoding="utf-8"))
        stored["summary"] = summarise(stored["clips"], stored["signals"], stored["policy"])
        text = render(stored)
        write_results(args.rescore.parent, args.rescore.stem, stored, text)
        print(text)
        return 0
    names = [n for n in args.signals.split(",") if n]
    t_start, load_start = perf_s(), os.getloadavg()
    from pipeline.stages.vad import SileroVAD
    from pipeline.stt import WhisperSTT

    policy = TurnPolicy()
    made = clips(recordings())
    vad, stt, signals = SileroVAD(), WhisperSTT(), load_signals(names)
    rows = []
    for i, clip in enumerate(made, 1):
        rows.append(run_clip(clip, vad=vad, stt=stt, signals=signals, policy=policy))
        if i % 20 == 0:
            print(f"{i}/{len(made)} pauses", file=sys.stderr, flush=True)
    results = {"machine": describe_machine(), "load_average": {"start": load_start, "end": os.getloadavg()},
               "command": "python -m bench.human_turns " + " ".join(argv if argv is not None else sys.argv[1:]),
               "signals": names, "policy": vars(policy), "summary": summarise(rows, names, vars(policy)),
               "clips": rows, "wall_s": round(perf_s() - t_start, 1)}
    text = render(results)
    write_results(args.out, f"{results['machine']['date'][:10]}-human-turns", results, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
