"""End-of-turn signals on the labelled set (bench/eot_set.py), through the real turn policy.

Each clip is one caller turn up to a pause. As the pipeline would: Silero VAD and the
TurnDetector find speech-stop; whisper tiny.en transcribes the turn up to that moment (the final
pass starts at speech-stop); each "looks complete" signal scores that transcript and the turn's
audio so far; and the dual threshold decides: the turn ends at `min_silence_ms` if the
probability reaches `complete_threshold`, else at `max_silence_ms`.

Per signal: the share of unfinished turns cut off (ended at min_silence), the share of finished
turns that waited for max_silence, the mean wait after the end of speech of finished turns, and
the compute of one `probability()` call (median, p90).

    python -m bench.eot                       # all signals; bench/results/<date>-eot.{md,json}
    python -m bench.eot --signals heuristic,smart-turn --limit 40
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.clock import perf_s
from pipeline.base.config import TurnPolicy
from pipeline.stages.unvoiced import lower_of, said_part
from pipeline.turns import TurnDetector

from .conditions import file_suffix
from .eot_set import EotClip, build
from .machine import describe_machine, machine_line
from .summary import describe, write_results

RESULTS = Path(__file__).resolve().parent / "results"
SIGNALS = ("heuristic", "llm", "smart-turn", "combined", "text-eot", "combined-text-eot")
TAIL_S = 0.6  # silence appended after each clip, so VAD can confirm the stop in every case


def load_signals(names: list[str]) -> dict[str, Any]:
    """The signals as the session builds them (constructed directly: an entry point added on a
    branch is not installed until the package is)."""
    from pipeline import turns
    from pipeline.stages import smart_turn

    out: dict[str, Any] = {}
    for name in names:
        if name == "heuristic":
            out[name] = turns.HeuristicCompleteness()
        elif name == "llm":
            from pipeline.stages.llm import LlamaLLM

            out[name] = turns.LLMCompleteness(llm=LlamaLLM())
        elif name == "smart-turn":
            out[name] = smart_turn.SmartTurnCompleteness()
        elif name == "combined":
            out[name] = smart_turn.CombinedCompleteness()
        elif name == "text-eot":
            from pipeline.stages.text_eot import TextEndOfTurn

            out[name] = TextEndOfTurn()
        elif name == "combined-text-eot":
            out[name] = smart_turn.CombinedCompleteness(text="text-eot")
        else:
            raise SystemExit(f"unknown signal {name!r}; known: {', '.join(SIGNALS)}")
    return out


def speech_stop(clip: EotClip, vad: Any, policy: TurnPolicy) -> tuple[float, float] | None:
    """(turn start, speech-stop moment) in ms: the first onset less the prefix padding, and when
    VAD confirmed the last stop; None if VAD heard no speech."""
    vad.reset()
    detector = TurnDetector(policy)
    audio = np.concatenate([clip.audio, np.zeros(int(TAIL_S * INPUT_RATE_HZ), np.float32)])
    n = vad.window_samples
    onset = stop = None
    for i in range(0, len(audio) - n + 1, n):
        end_ms = (i + n) * 1000 / INPUT_RATE_HZ
        signal = detector.on_window(vad.probability(audio[i:i + n]), end_ms)
        if signal is None:
            continue
        if signal.kind == "speech_started" and onset is None:
            onset = signal.at_ms
        elif signal.kind == "speech_stopped":
            stop = end_ms  # the moment it is known, not the end of the last speech window
    if onset is None or stop is None:
        return None
    return max(0.0, onset - policy.prefix_padding_ms), stop


def run_clip(clip: EotClip, *, vad: Any, stt: Any, signals: dict[str, Any],
             policy: TurnPolicy) -> dict[str, Any]:
    row: dict[str, Any] = {"name": clip.name, "finished": clip.finished, "kind": clip.kind,
                           "source": clip.source, "condition": clip.condition, "said": clip.text}
    found = speech_stop(clip, vad, policy)
    if found is None:
        return row | {"no_speech": True}
    start_ms, stop_ms = found
    audio = np.concatenate([clip.audio, np.zeros(int(TAIL_S * INPUT_RATE_HZ), np.float32)])
    turn = audio[int(start_ms * INPUT_RATE_HZ / 1000):int(stop_ms * INPUT_RATE_HZ / 1000)]
    text, confidence = stt.transcribe_confident(turn, final=True)
    # without the last words the pass found no voice under, scored too: the lower score decides,
    # as in the session's turn signal (`stages/unvoiced.lower_of`)
    judged = said_part(text, confidence.unvoiced_words)
    row |= {"transcript": text, "stop_after_speech_ms": round(stop_ms - clip.speech_end_s * 1000)}
    if judged != text:
        row["judged"] = judged  # the last words had no voice under them (`stages/unvoiced.py`)
    for name, signal in signals.items():
        scored: dict[str, float] = {}

        def score(words: str, signal: Any = signal, scored: dict[str, float] = scored) -> float:
            scored[words] = float(signal.probability(words, turn))
            return scored[words]

        t0 = perf_s()
        p = lower_of(score, text, confidence.unvoiced_words, complete=policy.complete_threshold)
        ms = (perf_s() - t0) * 1000  # both scores where the said part was scored too
        row[name] = {"p": round(p, 4), "ms": round(ms, 2)} | ends(p, policy)
        if judged != text:  # what the transcript as written scored alone
            row[name]["p_as_written"] = round(scored[text], 4)
    return row


def ends(p: float, policy: TurnPolicy) -> dict[str, Any]:
    """Where a turn scored `p` ends: at min_silence_ms when it looks complete, else max."""
    ended = "min_silence" if p >= policy.complete_threshold else "max_silence"
    return {"ended": ended, "wait_ms": policy.min_silence_ms if ended == "min_silence" else policy.max_silence_ms}


def _voice(row: dict[str, Any]) -> str:
    """The clip's voice, from its name (phrase/cut/voice/condition): Piper's joe-fast and
    joe-slow are its length scales 0.8 and 1.3 (pipeline.testing.voices)."""
    return row["name"].split("/")[2]


def summarise(rows: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """Per signal, over all clips and per source / condition / kind."""
    scored = [r for r in rows if not r.get("no_speech")]

    def figures(subset: list[dict[str, Any]], name: str) -> dict[str, Any]:
        fin = [r for r in subset if r["finished"]]
        unf = [r for r in subset if not r["finished"]]
        cut = sum(r[name]["ended"] == "min_silence" for r in unf)
        late = sum(r[name]["ended"] == "max_silence" for r in fin)
        return {"finished": len(fin), "unfinished": len(unf),
                "cut_off": cut / len(unf) if unf else None,
                "waited_max": late / len(fin) if fin else None,
                "mean_wait_ms": float(np.mean([r[name]["wait_ms"] for r in fin])) if fin else None,
                "errors": (cut / len(unf) if unf else 0) + (late / len(fin) if fin else 0)}

    groups: dict[str, list[dict[str, Any]]] = {"all": scored}
    for key in ("source", "condition", "kind", "voice"):
        for r in scored:
            groups.setdefault(f"{key}={_voice(r) if key == 'voice' else r[key]}", []).append(r)
    return {name: {"compute_ms": describe(r[name]["ms"] for r in scored),
                   **{g: figures(sub, name) for g, sub in groups.items()}} for name in names}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def render(results: dict[str, Any]) -> str:
    names, s = results["signals"], results["summary"]
    policy = results["policy"]
    n_fin = s[names[0]]["all"]["finished"]
    n_unf = s[names[0]]["all"]["unfinished"]
    out = [f"# End of turn: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}"
           + (f"; load average (1, 5, 15 min) {[round(x, 1) for x in results['load_average']['start']]} "
              f"at the start, {[round(x, 1) for x in results['load_average']['end']]} at the end"
              if "load_average" in results else "") + ".", "",
           f"Command: `{results['command']}` ({results['wall_s']:.0f} s in all).", "",
           f"{n_fin + n_unf} clips ({n_fin} finished turns, {n_unf} pauses mid-turn) from "
           "bench/eot_set.py: Piper joe at three speeds, three espeak-ng voices, jfk.wav cut at "
           "its phrase boundaries; a third clean, the rest under pink noise at 20 or 10 dB SNR. "
           f"Policy: end at {policy['min_silence_ms']} ms of silence if p >= "
           f"{policy['complete_threshold']}, else at {policy['max_silence_ms']} ms. Text from "
           "whisper tiny.en on the turn up to VAD speech-stop; audio: the same span.", ""]
    stretched = sorted({c["condition"].split("+")[0] for c in results.get("clips", [])
                        if c.get("condition", "").startswith("stretch")})
    if stretched:
        out += [f"Every clip time-stretched ({', '.join(stretched)}: that many times its length), "
                "pitch kept (bench.conditions.stretch, WSOLA), before any phone line.", ""]
    if results["no_speech"]:
        out += [f"Left out (VAD heard no speech): {', '.join(results['no_speech'])}.", ""]
    out += ["| signal | unfinished cut off | finished waited for max | mean wait, finished (ms) "
            "| errors (sum of the two shares) | compute per call, median (ms) | p90 (ms) |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name in names:
        a, c = s[name]["all"], s[name]["compute_ms"]
        out.append(f"| {name} | {_pct(a['cut_off'])} | {_pct(a['waited_max'])} | "
                   f"{a['mean_wait_ms']:.0f} | {100 * a['errors']:.0f} | {c['median']:.2f} | "
                   f"{c['p90']:.2f} |")
    out += ["", f"Best (fewest errors): **{results['best']}**.", ""]
    groups = [g for g in s[names[0]] if g not in ("all", "compute_ms")]
    out += ["## By source, condition, kind and voice", "",
            "Unfinished cut off / finished waited for max, per signal.", "",
            "| group | n (fin/unf) | " + " | ".join(names) + " |",
            "|---|---:|" + "---:|" * len(names)]
    for g in sorted(groups):
        first = s[names[0]][g]
        cells = [f"{_pct(s[n][g]['cut_off'])} / {_pct(s[n][g]['waited_max'])}" for n in names]
        out.append(f"| {g} | {first['finished']}/{first['unfinished']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signals", default=",".join(SIGNALS), help="comma-separated")
    parser.add_argument("--limit", type=int, default=0, help="only every k-th clip, k = n/limit")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--phone", action="store_true", help="every clip as a caller on the phone "
                        "sounds (8 kHz G.711 mu-law and back: pipeline.testing.sounds.phone_band); "
                        "the condition is suffixed +phone and the results file -eot-phone")
    parser.add_argument("--speed", type=float, metavar="FACTOR", default=None,
                        help="every clip said FACTOR times as long, pitch kept (bench.conditions."
                        "stretch; 0.8: 25%% faster, 1.25: 25%% slower), before the phone line; the "
                        "condition is prefixed stretch<FACTOR>+ and the results file -eot-stretch<per cent>")
    args = parser.parse_args(argv)
    if args.speed is not None and not 0.5 <= args.speed <= 2.0:
        parser.error(f"--speed {args.speed:g}: give the length factor, 0.5 to 2.0 (0.8 is faster speech)")
    names = [n for n in args.signals.split(",") if n]
    t_start = perf_s()
    load_start = os.getloadavg()

    from pipeline.stages.vad import SileroVAD
    from pipeline.stt import WhisperSTT

    clips = build()
    if args.limit and args.limit < len(clips):
        clips = clips[::-(-len(clips) // args.limit)]
    if args.speed is not None:
        from dataclasses import replace

        from .conditions import stretch

        # the whole clip (its lead, the speech, the pause, the noise under them) at the new pace
        clips = [replace(c, audio=stretch(c.audio, args.speed), speech_end_s=c.speech_end_s * args.speed,
                         condition=f"stretch{args.speed:g}+{c.condition}",
                         name=f"{c.name}+stretch{args.speed:g}") for c in clips]
    if args.phone:
        from dataclasses import replace

        from pipeline.testing.sounds import phone_band

        clips = [replace(c, audio=phone_band(c.audio), condition=c.condition + "+phone",
                         name=c.name + "+phone") for c in clips]
    policy = TurnPolicy()
    vad, stt, signals = SileroVAD(), WhisperSTT(), load_signals(names)
    rows: list[dict[str, Any]] = []
    progress: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    for i, clip in enumerate(clips, 1):
        rows.append(run_clip(clip, vad=vad, stt=stt, signals=signals, policy=policy))
        if i % 25 == 0:
            progress(f"{i}/{len(clips)} clips")
    summary = summarise(rows, names)
    best = min(names, key=lambda n: (summary[n]["all"]["errors"], summary[n]["compute_ms"]["median"]))
    results = {"machine": describe_machine(), "load_average": {"start": load_start, "end": os.getloadavg()},
               "command": "python -m bench.eot " + " ".join(
        argv if argv is not None else sys.argv[1:]), "signals": names, "policy": vars(policy),
        "summary": summary, "best": best, "no_speech": [r["name"] for r in rows if r.get("no_speech")],
        "clips": rows, "wall_s": round(perf_s() - t_start, 1)}
    stem = f"{results['machine']['date'][:10]}-eot" + file_suffix(speed=args.speed, phone=args.phone)
    text = render(results)
    write_results(args.out, stem, results, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
