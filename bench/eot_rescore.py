"""Re-score the end-of-turn set's stored transcripts with the text end-of-turn model, and combine
it with the signals already scored there, without re-running VAD, Whisper or Smart Turn.

A results file of `bench.eot` keeps, per clip, the label, the transcript Whisper wrote at
speech-stop and every signal's probability: the set's references. This reads one, scores each
distinct transcript with `pipeline.stages.text_eot.TextEndOfTurn` (its raw log-probabilities,
before calibration), finds per model and score the threshold with the fewest errors (unfinished
turns cut off + finished turns left waiting for max_silence_ms), on all clips and fitted on the
Piper clips only (then judged on the others: a threshold fitted on the set it is judged on
flatters it), and judges the combinations with Smart Turn's audio score and the heuristic.

    python -m bench.eot_rescore                          # qwen2.5-coder-0.5b, the latest eot file
    python -m bench.eot_rescore --models qwen2.5-coder-0.5b,smollm2-135m --limit 60
    python -m bench.eot_rescore --early   # early commit over pause lengths, no models
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.clock import perf_s
from pipeline.testing import commit_after_ms

from .machine import describe_machine, machine_line
from .summary import describe, write_results

RESULTS = Path(__file__).resolve().parent / "results"
SOURCE = RESULTS / "2026-11-30-eot.json"
THRESHOLD = 0.5  # turn.complete_threshold
VETO = 0.1  # CombinedCompleteness.audio_veto


def errors(rows: list[dict[str, Any]], ends: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """`ends(row)`: the turn ends at min_silence_ms. Shares of each class that go wrong."""
    fin = [r for r in rows if r["finished"]]
    unf = [r for r in rows if not r["finished"]]
    cut = sum(ends(r) for r in unf) / len(unf) if unf else 0.0
    late = sum(not ends(r) for r in fin) / len(fin) if fin else 0.0
    return {"finished": len(fin), "unfinished": len(unf), "cut_off": cut, "waited_max": late,
            "errors": cut + late}


def best_threshold(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], float]) -> float:
    """The log-probability threshold with the fewest errors on `rows` (midpoints between
    observed values; ties go to the lower cut-off rate, then the lower threshold)."""
    values = sorted({key(r) for r in rows})
    cands = [values[0] - 1.0] + [(a + b) / 2 for a, b in zip(values, values[1:], strict=False)]
    scored = [(errors(rows, lambda r, t=t: key(r) >= t), t) for t in cands]
    return min(scored, key=lambda e: (e[0]["errors"], e[0]["cut_off"], e[1]))[1]


def calibrated(lp: float, centre: float, scale: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, (lp - centre) / scale))))


def score_models(rows: list[dict[str, Any]], models: list[str],
                 progress: Callable[[str], None]) -> dict[str, list[float]]:
    from pipeline.stages.text_eot import TextEndOfTurn

    cost: dict[str, list[float]] = {}
    for model in models:
        signal = TextEndOfTurn(model=model, calibration=(0.0, 1.0))
        seen: dict[str, dict[str, float]] = {}
        cost[model] = []
        for i, row in enumerate(rows, 1):
            text = row["transcript"]
            if text not in seen:
                t0 = perf_s()
                seen[text] = signal.logprobs(text)
                cost[model].append((perf_s() - t0) * 1000)
            row[f"text:{model}"] = {k: round(v, 3) for k, v in seen[text].items()}
            if i % 50 == 0:
                progress(f"{model}: {i}/{len(rows)}")
    return cost


def judge(rows: list[dict[str, Any]], models: list[str]) -> dict[str, Any]:
    """Per model and score: the thresholds, and the errors of it alone and combined."""
    out: dict[str, Any] = {}
    piper = [r for r in rows if r["source"] == "joe"]
    others = [r for r in rows if r["source"] != "joe"]
    heur = lambda r: r["heuristic"]["p"]  # noqa: E731
    audio = lambda r: r["smart-turn"]["p"]  # noqa: E731
    base = {"heuristic": lambda r: heur(r) >= THRESHOLD,
            "smart-turn": lambda r: audio(r) >= THRESHOLD,
            "combined (heuristic, smart-turn veto)": lambda r: r["combined"]["p"] >= THRESHOLD}
    out["baseline"] = {name: {"all": errors(rows, f), "held_out": errors(others, f)}
                       for name, f in base.items()}
    for model in models:
        for score in ("end", "stop"):
            key = lambda r, m=model, s=score: r[f"text:{m}"][s]  # noqa: E731
            t_all = best_threshold(rows, key)
            t_fit = best_threshold(piper, key)
            fin = [key(r) for r in rows if r["finished"]]
            unf = [key(r) for r in rows if not r["finished"]]
            scale = max(0.25, (float(np.median(fin)) - float(np.median(unf))) / 4)
            text_ok = lambda r, t=t_fit, k=key: k(r) >= t  # noqa: E731
            combos: dict[str, Callable[[dict[str, Any]], bool]] = {
                "text": text_ok,
                "text, smart-turn veto": lambda r, f=text_ok: f(r) and audio(r) >= VETO,
                "text and heuristic": lambda r, f=text_ok: f(r) and heur(r) >= THRESHOLD,
                "text and heuristic, smart-turn veto": lambda r, f=text_ok: (
                    f(r) and heur(r) >= THRESHOLD and audio(r) >= VETO),
                "mean(text, heuristic), smart-turn veto": lambda r, k=key, t=t_fit, s=scale: (
                    (calibrated(k(r), t, s) + heur(r)) / 2 >= THRESHOLD and audio(r) >= VETO),
            }
            out[f"{model}/{score}"] = {
                "threshold_all": round(t_all, 3), "threshold_fit_on_piper": round(t_fit, 3),
                "scale": round(scale, 3),
                "median_finished": round(float(np.median(fin)), 3),
                "median_unfinished": round(float(np.median(unf)), 3),
                "text at the threshold fitted on all": {"all": errors(rows, lambda r, t=t_all, k=key: k(r) >= t)},
                **{name: {"all": errors(rows, f), "held_out": errors(others, f)}
                   for name, f in combos.items()}}
    return out


# --- early commit, judged over pause lengths (no model runs) ---------------------------------
# A mid-sentence pause is cut off if the detector commits before the caller speaks again, so the
# verdict depends on how long callers pause. Campione & Veronis, "A large-scale multilingual
# study of silent pause duration" (Speech Prosody 2002, pp. 199-202; ~6000 pauses, five
# languages): durations are trimodal, brief (< 200 ms), medium (200-1000 ms) and long
# (> 1000 ms, in spontaneous speech only). The set's own synthetic pauses are all 1000 ms
# (bench/eot_set.PAUSE_S). Each unfinished clip is judged at every length below; the summary
# weights the medium range evenly on a log scale (16 lengths from 200 to 1000 ms), an
# assumption of ours: the paper gives categories, not the shares used here.
PAUSE_GRID_MS = (200, 300, 400, 500, 600, 800, 1000, 1500)
MEDIUM_PAUSES_MS = tuple(round(200 * 5 ** (i / 15)) for i in range(16))
EARLY_SIGNALS: dict[str, Callable[[dict[str, Any]], float]] = {
    "heuristic": lambda r: r["heuristic"]["p"],
    "smart-turn": lambda r: r["smart-turn"]["p"],
    "combined": lambda r: r["combined"]["p"],
    # not a shipped signal: what one reporting the lower of the two would give, the "agree" case
    "min(heuristic, smart-turn)": lambda r: min(r["heuristic"]["p"], r["smart-turn"]["p"]),
}
EARLY_SILENCE_MS = (200, 300, 400)
EARLY_THRESHOLDS = (0.9, 0.95, 0.99)


def judge_policy(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], float],
                 policy: Any) -> dict[str, Any]:
    """Cut-off rate per pause length and over the medium range, and the finished turns' waits,
    through the real TurnDetector (`pipeline.testing.commit_after_ms`)."""
    fin = [key(r) for r in rows if r["finished"]]
    unf = [key(r) for r in rows if not r["finished"]]

    def cut(pause: float) -> float:
        return sum(commit_after_ms(policy, p, pause) is not None for p in unf) / len(unf)

    waits = [commit_after_ms(policy, p) for p in fin]
    return {"cut_off_at_ms": {str(ms): cut(ms) for ms in PAUSE_GRID_MS},
            "cut_off_medium": float(np.mean([cut(ms) for ms in MEDIUM_PAUSES_MS])),
            "finished_median_wait_ms": float(np.median(waits)),
            "finished_mean_wait_ms": float(np.mean(waits)),
            "finished_waited_max": sum(w is not None and w >= policy.max_silence_ms
                                       for w in waits) / len(waits),
            "finished_early": sum(w is not None and w < policy.min_silence_ms
                                  for w in waits) / len(waits)}


def judge_early(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per signal: early commit off, then every (early_silence_ms, early_threshold) the signal
    can reach; whether the cut-off rate rises at any pause length; the highest score of a
    mid-sentence pause (an early_threshold above it cuts off no more pauses)."""
    from dataclasses import replace

    from pipeline.base.config import TurnPolicy

    base = TurnPolicy()
    out: dict[str, Any] = {}
    for name, key in EARLY_SIGNALS.items():
        off = judge_policy(rows, key, base)
        top_unf = max(key(r) for r in rows if not r["finished"])
        entry: dict[str, Any] = {
            "off": off, "highest_unfinished": top_unf,
            "finished_above_highest_unfinished": sum(
                key(r) > top_unf for r in rows if r["finished"]),
            "early": []}
        for thr in EARLY_THRESHOLDS:
            if not any(key(r) >= thr for r in rows):
                continue  # the signal never reaches it: the same as off
            for ms in EARLY_SILENCE_MS:
                fig = judge_policy(rows, key, replace(base, early_silence_ms=ms, early_threshold=thr))
                fig |= {"early_silence_ms": ms, "early_threshold": thr,
                        "rises": any(fig["cut_off_at_ms"][k] > off["cut_off_at_ms"][k] + 1e-9
                                     for k in fig["cut_off_at_ms"])}
                entry["early"].append(fig)
        out[name] = entry
    return out


def render_early(results: dict[str, Any]) -> str:
    j = results["judged"]
    lengths = [str(ms) for ms in PAUSE_GRID_MS]
    n_fin = sum(r["finished"] for r in results["clips"])
    n_unf = len(results["clips"]) - n_fin
    out = [f"# End of turn, early commit re-scored: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average (1, 5, 15 min) "
           f"{results['load_average']['start']} at the start, {results['load_average']['end']} at "
           "the end (shared with other test runs; nothing here is a latency measurement: the "
           "waits are the detector's own, on its simulated clock).", "",
           f"Command: `{results['command']}` ({results['wall_s']:.0f} s). Scores: "
           f"`{results['source']}` ({n_fin} finished turns, {n_unf} mid-sentence pauses; each "
           "clip's signal probabilities as `bench.eot` stored them, from the transcript at "
           "speech-stop). No model runs.", "",
           "How it is computed: every clip goes through the real `TurnDetector` on a simulated "
           "clock (`pipeline.testing.commit_after_ms`): 320 ms of speech, then silence, `end_of_turn` "
           "checked after every 32 ms VAD window with the clip's score, as the session does. A "
           "mid-sentence pause of length L is **cut off** if the detector commits before it has "
           "heard the caller's next words (speech from L on, confirmed after `min_speech_ms`). A "
           "finished turn's **wait** is the silence, from the end of the last speech window, at "
           "which it commits. Policy as shipped (600 / 1500 ms, complete_threshold 0.5) plus "
           "`early_silence_ms` / `early_threshold`. The score is taken as known at speech-stop; "
           "in the session the final pass must also have finished, so real early commits come "
           "no sooner than these.", "",
           "Pause lengths: Campione & Véronis, \"A large-scale multilingual study of silent pause "
           "duration\" (Speech Prosody 2002, 199-202), find pauses trimodal: brief < 200 ms, "
           "medium 200-1000 ms, long > 1000 ms (spontaneous speech only). \"Medium\" below is "
           "the cut-off rate averaged over 16 lengths spread evenly on a log scale from 200 to "
           "1000 ms: our weighting, not the paper's shares. The set's own pauses are all "
           "1000 ms (`bench/eot_set.PAUSE_S`). A 1500 ms pause is cut off whatever the score: "
           "`max_silence_ms` ends every turn there.", "",
           "| signal | early commit | cut off at pause " + " / ".join(lengths) + " ms | "
           "cut off, medium | rises? | finished: median wait (ms) | mean (ms) | committed early |"
           " waited 1500 |",
           "|---|---|---|---:|---|---:|---:|---:|---:|"]

    def line(name: str, label: str, fig: dict[str, Any], rises: str) -> str:
        cuts = " / ".join(f"{100 * fig['cut_off_at_ms'][k]:.0f}" for k in lengths)
        return (f"| {name} | {label} | {cuts} | {_pct(fig['cut_off_medium'])} | {rises} | "
                f"{fig['finished_median_wait_ms']:.0f} | {fig['finished_mean_wait_ms']:.0f} | "
                f"{_pct(fig['finished_early'])} | {_pct(fig['finished_waited_max'])} |")

    for name, entry in j.items():
        out.append(line(name, "off", entry["off"], "–"))
        for fig in entry["early"]:
            out.append(line(name, f"{fig['early_silence_ms']} ms at p >= {fig['early_threshold']}",
                            fig, "**yes**" if fig["rises"] else "no"))
    out += ["", "Highest score of a mid-sentence pause, and finished turns scoring above it "
            "(the only ones an early commit could hurry without cutting off one more pause): "
            + "; ".join(f"{n}: {e['highest_unfinished']:.3g}, {e['finished_above_highest_unfinished']}"
                        for n, e in j.items()) + "."]
    kept = [(n, f) for n, e in j.items() for f in e["early"] if not f["rises"]]
    out += ["", "**Verdict:** " + (
        "early commit raises the cut-off rate at some pause length for every setting above, on "
        "every signal: it stays off (`turn.early_silence_ms = 0`)." if not kept else
        "settings that cut off no more pauses: " + "; ".join(
            f"{n} {f['early_silence_ms']} ms at p >= {f['early_threshold']} (median wait "
            f"{f['finished_median_wait_ms']:.0f} ms)" for n, f in kept) + ".")]
    return "\n".join(out)


def _source_name(path: Path) -> str:
    """The stored results file as the repository names it (or its bare name outside it)."""
    source = path.resolve()
    try:
        return str(source.relative_to(RESULTS.parent.parent))
    except ValueError:
        return source.name


def main_early(args: argparse.Namespace, argv: list[str] | None) -> int:
    t_start = perf_s()
    load_start = os.getloadavg()
    rows = [r for r in json.loads(args.source.read_text(encoding="utf-8"))["clips"]
            if not r.get("no_speech")]
    keep = ("name", "finished", "kind", "source", "condition", "transcript")
    rows = [{k: r[k] for k in keep} | {s: {"p": r[s]["p"]} for s in ("heuristic", "smart-turn", "combined")}
            for r in rows]
    source_name = _source_name(args.source)
    results = {"machine": describe_machine(), "command": "python -m bench.eot_rescore " + " ".join(
        argv if argv is not None else sys.argv[1:]), "source": source_name,
        "pause_grid_ms": list(PAUSE_GRID_MS), "medium_pauses_ms": list(MEDIUM_PAUSES_MS),
        "judged": judge_early(rows), "clips": rows}
    results |= {"wall_s": round(perf_s() - t_start, 1),
                "load_average": {"start": [round(x, 2) for x in load_start],
                                 "end": [round(x, 2) for x in os.getloadavg()]}}
    stem = f"{results['machine']['date'][:10]}-eot-early" + ("-phone" if "phone" in args.source.name else "")
    text = render_early(results)
    write_results(args.out, stem, results, text)
    print(text)
    return 0


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def render(results: dict[str, Any]) -> str:
    j = results["judged"]
    out = [f"# End of turn, text model re-scored: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average (1, 5, 15 min) "
           f"{results['load_average']['start']} at the start, {results['load_average']['end']} at "
           "the end: shared with other test runs, so the compute figures are noisy (the error "
           "rates are not).", "",
           f"Command: `{results['command']}` ({results['wall_s']:.0f} s in all). Transcripts, "
           f"labels and the other signals' scores: `{results['source']}` ({len(results['clips'])} "
           "clips); every clip's text-model log-probabilities are in the JSON beside this file.", "",
           "Policy as there: the turn ends at 600 ms of silence if the signal says complete, else "
           "at 1500 ms. Thresholds are fitted on the Piper clips (source=joe) and judged on all "
           "clips and on the held-out espeak-ng and jfk.wav clips.", "",
           "| signal | threshold (log p) | cut off, all | waited for max, all | errors, all | "
           "cut off, held out | waited, held out | errors, held out |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]

    def line(name: str, thr: str, fig: dict[str, Any]) -> str:
        a, h = fig["all"], fig.get("held_out")
        tail = (f"{_pct(h['cut_off'])} | {_pct(h['waited_max'])} | {100 * h['errors']:.0f}"
                if h else "– | – | –")
        return (f"| {name} | {thr} | {_pct(a['cut_off'])} | {_pct(a['waited_max'])} | "
                f"{100 * a['errors']:.0f} | {tail} |")

    for name, fig in j["baseline"].items():
        out.append(line(name, "–", fig))
    for key, fig in j.items():
        if key == "baseline":
            continue
        thr = f"{fig['threshold_fit_on_piper']:.2f}"
        for name, sub in fig.items():
            if isinstance(sub, dict) and "all" in sub and not name.startswith("text at"):
                out.append(line(f"{key}: {name}", thr, sub))
        out.append(line(f"{key}: text, threshold fitted on all", f"{fig['threshold_all']:.2f}",
                        fig["text at the threshold fitted on all"]))
    out += ["", "Medians of the log-probability, finished / unfinished turns: " + "; ".join(
        f"{k}: {v['median_finished']:.2f} / {v['median_unfinished']:.2f}"
        for k, v in j.items() if k != "baseline") + ".", "",
        "Compute per call (distinct transcripts, own llama.cpp context, instructions kept "
        "evaluated): " + "; ".join(
            f"{m}: median {c['median']:.0f} ms, p90 {c['p90']:.0f} ms"
            for m, c in results["compute_ms"].items()) + "."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help="a bench.eot results JSON")
    parser.add_argument("--models", default="qwen2.5-coder-0.5b", help="comma-separated MODELS names")
    parser.add_argument("--limit", type=int, default=0, help="only every k-th clip, k = n/limit")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--early", action="store_true", help="judge early commit (turn."
                        "early_silence_ms / early_threshold) on the stored scores over pause "
                        "lengths; no models: bench/results/<date>-eot-early.{md,json}")
    args = parser.parse_args(argv)
    if args.early:
        return main_early(args, argv)
    t_start = perf_s()
    load_start = os.getloadavg()
    models = [m for m in args.models.split(",") if m]
    rows = [r for r in json.loads(args.source.read_text(encoding="utf-8"))["clips"]
            if not r.get("no_speech")]
    if args.limit and args.limit < len(rows):
        rows = rows[::-(-len(rows) // args.limit)]
    keep = ("name", "finished", "kind", "source", "condition", "said", "transcript")
    rows = [{k: r[k] for k in keep} | {s: {"p": r[s]["p"]} for s in ("heuristic", "smart-turn", "combined")}
            for r in rows]
    progress: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    cost = score_models(rows, models, progress)
    source_name = _source_name(args.source)
    results = {"machine": describe_machine(), "command": "python -m bench.eot_rescore " + " ".join(
        argv if argv is not None else sys.argv[1:]), "source": source_name, "models": models,
        "compute_ms": {m: describe(c) for m, c in cost.items()}, "judged": judge(rows, models),
        "clips": rows, "wall_s": round(perf_s() - t_start, 1),
        "load_average": {"start": [round(x, 2) for x in load_start],
                         "end": [round(x, 2) for x in os.getloadavg()]}}
    stem = f"{results['machine']['date'][:10]}-eot-text"
    text = render(results)
    write_results(args.out, stem, results, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
