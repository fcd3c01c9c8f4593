"""Waits learned per caller (`turn.learn_pauses`, `pipeline.stages.eou_pauses.LearnedPauses`)
against the fixed ones, replayed on the end-of-turn set's stored decisions.

No model runs: each clip's signal decision (complete or not at the pause) comes from the stored
results `bench.eou_eval` reads (the heads' scores from its own results file). What changes is
the wait, as turn taking does it with `turn.learn_pauses` on:

- a *call* is one voice in one condition set saying the set's phrases, one turn each, in a
  seeded order (a turn's mid-sentence pauses are the set's marks, in order, then the finished
  sentence); jfk.wav is a call of its own, said twice (the second time learns from the first);
- each turn waits as the pauses learned so far say (the waits are set at the start of a turn,
  as turn taking does); a mid-sentence pause the turn survives is learned when speech resumes;
  a pause that ends the turn is a cut-off, and what follows is a new turn;
- a mid-sentence pause is cut off when the silence reaches the short wait and the signal says
  complete, or reaches the long wait whatever it says; the silence reached is the pause plus
  the 96 ms the VAD takes to confirm the resumed speech (three windows);
- the synthetic set's pauses are all 1000 ms (bench/eot_set.py PAUSE_S); jfk.wav's are its own
  gaps between phrases, measured on the recording (real speech).

A finished turn ends after the short wait if the signal says complete (its wait is then the
learned short wait, not 600 ms), else after the long one ("waited"). Rows: the fixed waits, the
waits learned per turn from pauses inside turns (as first wired), learned within the turn too
(applied at every resume; not wired: a variant to see what it would buy), and learned per turn
and from cut-offs (as wired since 2026-12-07: a pause that ended a turn at the short wait, the
caller going on as the reply began, is learned too, `LearnedPauses.turn_began`).

    python -m bench.eou_pauses_eval              # the first heads' stored runs (2026-12-02)
    python -m bench.eou_pauses_eval --current    # the signals as shipped, and recorded people
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.stages.eou_pauses import LearnedPauses
from pipeline.testing import jfk

from .eot_rescore import RESULTS
from .eot_set import JFK_GAP_S, JFK_WORDS, PAUSE_S, PHRASES, _cuts
from .eou_eval import STEM as HEADS_STEM
from .eou_eval import load_rows, signals
from .machine import describe_machine, machine_line
from .summary import describe, publish

STEM = "2026-12-02-eou-pauses"
CURRENT_STEM = "2026-12-07-eou-pauses-current"  # --current
RESUME_MS = 96.0  # three 32 ms windows confirm the resumed speech; the silence grows meanwhile
SEED = 11
SHOWN = ("heuristic (default)", "text-eot qwen, alone", "text-eot qwen, heuristic veto (as shipped)",
         "eou-head qwen", "eou-head qwen, heuristic veto", "eou-head smollm2",
         "eou-head smollm2, heuristic veto")
MODES = ("fixed", "learned per turn", "learned within the turn too", "learned per turn and from cut-offs")
# the stored runs of the signals as shipped since 2026-12-06 (`combined`, the unvoiced rule)
CURRENT = {"own pace": "2026-12-06-eot.json", "pace 0.8": "2026-12-06-eot-stretch80.json",
           "pace 1.25": "2026-12-06-eot-stretch125.json", "phone band": "2026-12-06-eot-phone.json"}
CURRENT_SIGNALS = {"heuristic": lambda r: r["heuristic"]["p"] >= 0.5,
                   "combined (default)": lambda r: r["combined"]["p"] >= 0.5}
Row = dict[str, Any]


def jfk_gaps_ms(floor_dbfs: float = -35.0) -> list[float]:
    """jfk.wav's pauses between phrases (ms), as bench.eot_set.jfk_phrases finds the phrases."""
    x = jfk()
    hop = 160
    loud = [dbfs(x[i:i + hop]) > floor_dbfs for i in range(0, len(x) - hop, hop)]
    gaps, last, gap = [], None, 0
    for i, is_loud in enumerate(loud):
        if is_loud:
            if last is not None and gap * hop >= JFK_GAP_S * INPUT_RATE_HZ:
                gaps.append((i - last - 1) * hop * 1000 / INPUT_RATE_HZ)
            last, gap = i, 0
        else:
            gap += 1
    return gaps


def calls(rows: list[Row]) -> dict[tuple[str, str], list[tuple[list[Row | None], list[float]]]]:
    """Per (set, voice): its turns in order, each (clips: the cuts then the whole, None where the
    stored set has no such clip; the pause after each cut, ms). Clips are found by their words
    (names may share a slug: "I'd like to book ..." and "I'd like to pay ...")."""
    by: dict[tuple[str, str, str], Row] = {}
    for r in rows:  # jfk.wav is said in each noise condition: a call for each
        voice = r["name"].split("/")[2]
        by[r["set"], voice if voice != "jfk" else f"jfk/{r['condition']}", r["said"]] = r
    out: dict[tuple[str, str], list[tuple[list[Row | None], list[float]]]] = {}
    gaps = jfk_gaps_ms() if any(k[1].startswith("jfk") for k in by) else []
    for cond, voice in sorted({(k[0], k[1]) for k in by}):
        if voice.startswith("jfk"):
            said = [" ".join(JFK_WORDS[:k + 1]) for k in range(len(JFK_WORDS))]
            turn = ([by.get((cond, voice, t)) for t in said], gaps[:len(said) - 1])
            out[cond, voice] = [turn, turn]  # said twice: the second time learns from the first
            continue
        order = list(PHRASES)
        random.Random(zlib.crc32(f"{cond}/{voice}/{SEED}".encode())).shuffle(order)
        turns = []
        for _, marked in order:
            whole, prefixes = _cuts(marked)
            turns.append(([by.get((cond, voice, t)) for t in [*prefixes, whole]],
                          [PAUSE_S * 1000] * len(prefixes)))
        out[cond, voice] = turns
    return out


def learn_cut_off(learner: LearnedPauses, pause_ms: float) -> None:
    """A turn committed at the short wait after which the caller went on `pause_ms` after their
    words, as the reply began (LiveKit's "immediate interruption"), its words proving it: learned
    as turn taking learns it (`committed`, `turn_began`, `heard_words`)."""
    learner.committed(0.0, "min_silence")
    learner.turn_began(pause_ms, replying=True, over_agent=False)
    learner.heard_words()


def replay(turns: list[tuple[list[Row | None], list[float]]], ends: Callable[[Row], bool],
           mode: str) -> list[dict[str, Any]]:
    """Each stored clip's outcome in one call: {row, cut_off | waited, wait_ms, turn}."""
    learner = LearnedPauses()
    out = []
    for t, (clips, pauses) in enumerate(turns):
        lo, hi = learner.waits() if mode != "fixed" else (learner.min_silence_ms, learner.max_silence_ms)
        for row, pause in zip(clips, [*pauses, None], strict=True):
            complete = ends(row) if row is not None else None
            if pause is None:  # the finished sentence: the turn ends, after one wait or the other
                if row is not None:
                    out.append({"row": row, "turn": t, "waited": not complete, "wait_ms": lo if complete else hi})
                break
            reached = pause + RESUME_MS
            cut = bool((complete and lo <= reached) or hi <= reached)
            if row is not None:
                out.append({"row": row, "turn": t, "cut_off": cut, "lo": lo, "hi": hi})
            if cut:  # the rest is a new turn, with the waits learned so far
                if mode == "learned per turn and from cut-offs" and complete:
                    learn_cut_off(learner, pause)
                lo, hi = learner.waits() if mode != "fixed" else (lo, hi)
                continue
            if mode != "fixed":
                learner.observed_pause(pause)
                if mode == "learned within the turn too":
                    lo, hi = learner.waits()
    return out


GROUPS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "Piper, own pace": lambda o: o["row"]["source"] == "joe" and o["row"]["set"] == "own pace",
    "espeak-ng (held out), all sets": lambda o: o["row"]["source"] == "espeak",
    "held out, own pace": lambda o: o["row"]["source"] == "espeak" and o["row"]["set"] == "own pace",
    "held out, 10 dB noise": lambda o: o["row"]["source"] == "espeak" and o["row"]["condition"] == "pink@10dB",
    "held out, pace 0.8": lambda o: o["row"]["source"] == "espeak" and o["row"]["set"] == "pace 0.8",
    "held out, pace 1.25": lambda o: o["row"]["source"] == "espeak" and o["row"]["set"] == "pace 1.25",
    "held out, phone band": lambda o: o["row"]["source"] == "espeak" and o["row"]["set"] == "phone band",
    "all synthetic": lambda o: o["row"]["source"] != "jfk",
    "jfk.wav, first time": lambda o: o["row"]["source"] == "jfk" and o["turn"] == 0,
    "jfk.wav, second time in the call": lambda o: o["row"]["source"] == "jfk" and o["turn"] == 1,
}


def figures(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    unf = [o for o in outcomes if "cut_off" in o]
    fin = [o for o in outcomes if "waited" in o]
    waits = [o["wait_ms"] for o in fin]
    return {"unfinished": len(unf), "finished": len(fin),
            "cut_off": sum(o["cut_off"] for o in unf) / len(unf) if unf else None,
            "waited_max": sum(o["waited"] for o in fin) / len(fin) if fin else None,
            "wait_ms": describe(waits) if waits else None}


def judge(rows: list[Row], heads: dict[str, dict[str, float]],
          shown: dict[str, Callable[[Row], bool]] | None = None) -> dict[str, Any]:
    """Per signal (those of `bench.eou_eval` in SHOWN, or `shown`) and way of waiting."""
    table: dict[str, Any] = {}
    all_calls = calls(rows)
    chosen = shown if shown is not None else {k: v for k, v in signals(heads).items() if k in SHOWN}
    for name, ends in chosen.items():
        for mode in MODES:
            outcomes: list[dict[str, Any]] = []
            for turns in all_calls.values():
                try:
                    outcomes += replay(turns, ends, mode)
                except KeyError:  # a head that did not score some transcript: not judged
                    outcomes = []
                    break
            table[f"{name} | {mode}"] = {g: figures([o for o in outcomes if keep(o)]) for g, keep in GROUPS.items()}
    return table


def _cell(f: dict[str, Any]) -> str:
    if f["cut_off"] is None and f["waited_max"] is None:
        return "–"
    pct = lambda x: "–" if x is None else f"{100 * x:.0f}%"  # noqa: E731
    wait = f"{f['wait_ms']['median']:.0f}" if f["wait_ms"] else "–"
    return f"{pct(f['cut_off'])} / {pct(f['waited_max'])} / {wait}"


def render(results: dict[str, Any]) -> str:
    out = [f"# Waits learned per caller, replayed: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average (1, 5, 15 min) "
           f"{results['load_average']['start']} at the start, {results['load_average']['end']} at the end "
           "(no model runs: the figures do not depend on it).", "",
           f"Command: `{results['command']}`. Decisions: the stored end-of-turn set "
           f"(bench/results/{results['heads_file']} and its sources); the replay: bench/eou_pauses_eval.py's "
           f"docstring. jfk.wav's pauses between phrases: {', '.join(f'{g:.0f}' for g in results['jfk_gaps_ms'])} ms "
           "(the synthetic set's: 1000 ms each). Each cell: cut off (mid-sentence pauses that ended "
           "the turn) / waited (finished turns left for the long wait) / median wait of a finished "
           "turn, ms.", "",
           "| signal | waits | " + " | ".join(f"{g} ({results['counts'][g]})" for g in GROUPS) + " |",
           "|---|---|" + "---:|" * len(GROUPS)]
    for key, groups in results["judged"].items():
        name, mode = key.split(" | ")
        out.append(f"| {name} | {mode} | " + " | ".join(_cell(groups[g]) for g in GROUPS) + " |")
    if results.get("people"):
        out += ["", f"Recorded people (bench/results/{HUMAN}; `bench.human_turns.replay`): each recording "
                "one call at its own pauses, in order; cut off: `mid` pauses that ended a turn; the mean "
                "silence the speakers' last words waited, ms.", "",
                "| signal | " + " | ".join(HUMAN_MODES) + " |", "|---|" + "---|" * len(HUMAN_MODES)]
        for name, modes in results["people"].items():
            out.append(f"| {name} | " + " | ".join(
                f"{m['cut']} of {m['mid']} · {m['last_wait_ms']:.0f}" for m in modes.values()) + " |")
    return "\n".join(out)


HUMAN = "2026-12-06-human-turns-unvoiced.json"  # the signals as shipped, on recorded people
HUMAN_MODES = {"fixed": (False, False), "learned per turn": (True, False),
               "learned per turn and from cut-offs": (True, True)}


def people() -> dict[str, dict[str, dict[str, Any]]]:
    """The recorded people's replay (bench.human_turns) under each way of waiting."""
    from .human_turns import replay as replay_people

    stored = json.loads((RESULTS / HUMAN).read_text(encoding="utf-8"))
    rows = [r for r in stored["clips"] if not r.get("no_speech")]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name in stored["signals"]:
        out[name] = {}
        for mode, (learn, cut_offs) in HUMAN_MODES.items():
            f = replay_people(rows, name, stored["policy"], learn=learn, cut_offs=cut_offs)
            out[name][mode] = {k: f[k] for k in ("mid", "cut", "last_wait_ms")}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--current", action="store_true",
                        help="the signals as shipped (`combined`, the unvoiced rule) from the stored "
                             "2026-12-06 runs, not the first heads' runs")
    parser.add_argument("--stem", default=None)
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    if args.current:
        rows, heads, stored_name = load_rows(CURRENT), {}, ", ".join(CURRENT.values())
        judged = judge(rows, heads, CURRENT_SIGNALS)
    else:
        rows = load_rows()
        stored = RESULTS / f"{HEADS_STEM}.json"
        if not stored.is_file():  # before the second heads were judged
            stored = RESULTS / "2026-12-02-eou-head.json"
        heads = json.loads(stored.read_text(encoding="utf-8")).get("heads", {}) if stored.is_file() else {}
        judged, stored_name = judge(rows, heads), stored.name
    first = next(iter(judged.values()))
    results = {"machine": describe_machine(),
               "command": "python -m bench.eou_pauses_eval " + " ".join(argv if argv is not None else sys.argv[1:]),
               "jfk_gaps_ms": [round(g) for g in jfk_gaps_ms()], "resume_ms": RESUME_MS,
               "heads_file": stored_name,
               "counts": {g: f["unfinished"] + f["finished"] for g, f in first.items()},
               "judged": judged, "people": people() if args.current else None,
               "load_average": {"start": [round(x, 2) for x in load_start],
                                "end": [round(x, 2) for x in os.getloadavg()]}}
    publish(args.out, args.stem or (CURRENT_STEM if args.current else STEM), results, render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
