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

from .machine import describe_machine, machine_line
from .summary import describe

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
    args = parser.parse_args(argv)
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
    source = args.source.resolve()
    try:
        source_name = str(source.relative_to(RESULTS.parent.parent))
    except ValueError:
        source_name = source.name
    results = {"machine": describe_machine(), "command": "python -m bench.eot_rescore " + " ".join(
        argv if argv is not None else sys.argv[1:]), "source": source_name, "models": models,
        "compute_ms": {m: describe(c) for m, c in cost.items()}, "judged": judge(rows, models),
        "clips": rows, "wall_s": round(perf_s() - t_start, 1),
        "load_average": {"start": [round(x, 2) for x in load_start],
                         "end": [round(x, 2) for x in os.getloadavg()]}}
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"{results['machine']['date'][:10]}-eot-text"
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    text = render(results)
    (args.out / f"{stem}.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
