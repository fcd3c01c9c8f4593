"""Judge the end-of-utterance head (`pipeline.stages.eou_head`) on the end-of-turn set, beside the
other signals and their combinations, from the transcripts `bench.eot_rescore` stored.

Every clip's transcript (Whisper's at speech-stop), label and other signals' scores come from
the stored results (own pace, 0.8 and 1.25 pace, phone band); only the head is run here, once
per distinct transcript, with no context turn. Its threshold is 0.5 as trained: nothing is
fitted on this set. A turn ends at min_silence_ms (600) when its signal says complete, else at
max_silence_ms (1500); each pause of the set is 1000 ms, so a mid-sentence pause is cut off
exactly when the signal says complete. Rows: the Piper voice, the held-out espeak-ng voices,
and jfk.wav cut at its phrase pauses (real speech), apart.

    python -m bench.eou_eval                                   # both heads
    python -m bench.eou_eval --models smollm2-135m             # keep the other's stored scores
    python -m bench.eou_eval --models smollm2-135m --base 2026-12-02-eou-head-2 \
        --stem 2026-12-02-eou-head-smollm2                       # the other's from another file
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.base.clock import perf_s
from pipeline.turns import HeuristicCompleteness

from .eot_rescore import RESULTS, VETO, calibrated, errors
from .eou_train import SHORT
from .machine import describe_machine, machine_line
from .summary import describe, write_results

SOURCES = {"own pace": "2026-12-01-eot-text.json", "pace 0.8": "2026-12-01-eot-text-stretch80.json",
           "pace 1.25": "2026-12-01-eot-text-stretch125.json", "phone band": "2026-12-01-eot-text-phone.json"}
MODELS = ("qwen2.5-coder-0.5b", "smollm2-135m")
STEM = "2026-12-02-eou-head-2"  # the second heads (more lines); the first: 2026-12-02-eou-head
Row = dict[str, Any]


def load_rows(sources: dict[str, str] | None = None) -> list[Row]:
    """The stored end-of-turn runs' clips, each with its condition set: SOURCES, or `sources`."""
    rows = []
    for cond, name in (sources or SOURCES).items():
        for r in json.loads((RESULTS / name).read_text(encoding="utf-8"))["clips"]:
            if not r.get("no_speech"):
                rows.append(r | {"set": cond})
    return rows


def score(rows: list[Row], model: str, limit: int = 0) -> tuple[dict[str, float], list[float], list[float]]:
    """The head's probability per distinct transcript, and each call's wall time and the
    process's CPU time in it (ms; CPU time is what a loaded machine does not inflate much).
    `limit`: every jfk.wav transcript, and only `limit` of the others, spread over the set."""
    from pipeline.stages.eou_head import EouHeadCompleteness

    signal = EouHeadCompleteness(model=model)
    signal.probability("hello")  # the instructions' first evaluation is not a call's cost
    out: dict[str, float] = {}
    cost: list[float] = []
    cpu: list[float] = []
    texts = list(dict.fromkeys(r["transcript"] for r in rows if r["source"] == "jfk"))
    rest = [t for t in dict.fromkeys(r["transcript"] for r in rows) if t not in texts]
    texts += rest[::-(-len(rest) // limit)] if 0 < limit < len(rest) else rest
    for text in texts:
        t0, c0 = perf_s(), time.process_time()
        out[text] = signal.probability(text)
        cost.append((perf_s() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        if len(out) % 50 == 0:
            print(f"{model}: {len(out)}", file=sys.stderr, flush=True)
    return out, cost, cpu


def signals(heads: dict[str, dict[str, float]]) -> dict[str, Callable[[Row], bool]]:
    """Each signal and combination: does the turn end at min_silence_ms? (A head's KeyError:
    the transcript was not scored, see `judge`.)"""
    heur = lambda r: r["heuristic"]["p"] >= 0.5  # noqa: E731
    audio = lambda r: r["smart-turn"]["p"]  # noqa: E731
    text = lambda r: calibrated(r["text:qwen2.5-coder-0.5b"]["stop"], -4.17, 1.09)  # noqa: E731
    now = HeuristicCompleteness()
    out: dict[str, Callable[[Row], bool]] = {
        "heuristic (default)": heur,
        "heuristic, as the code is now": lambda r: now.probability(r["transcript"]) >= 0.5,
        "smart-turn": lambda r: audio(r) >= 0.5,
        "combined (heuristic, smart-turn veto)": lambda r: r["combined"]["p"] >= 0.5,
        "combined, the heuristic as the code is now": lambda r: (
            now.probability(r["transcript"]) >= 0.5 and audio(r) >= VETO),
        "text-eot qwen, alone": lambda r: text(r) >= 0.5,
        "text-eot qwen, heuristic veto (as shipped)": lambda r: text(r) >= 0.5 and heur(r),
    }
    for model, p in heads.items():
        short = next(k for k, v in SHORT.items() if v == model)
        h = lambda r, p=p: p[r["transcript"]]  # noqa: E731
        out |= {f"eou-head {short}": lambda r, h=h: h(r) >= 0.5,
                f"eou-head {short}, heuristic veto": lambda r, h=h: h(r) >= 0.5 and heur(r),
                f"eou-head {short}, smart-turn veto": lambda r, h=h: h(r) >= 0.5 and audio(r) >= VETO,
                f"mean(eou-head {short}, smart-turn)": lambda r, h=h: (h(r) + audio(r)) / 2 >= 0.5,
                f"eou-head {short}, heuristic and smart-turn veto": lambda r, h=h: (
                    h(r) >= 0.5 and heur(r) and audio(r) >= VETO)}
    if len(heads) == 2:
        (_, pa), (_, pb) = heads.items()
        out["mean(eou-head qwen, eou-head smollm2)"] = lambda r: (
            pa[r["transcript"]] + pb[r["transcript"]]) / 2 >= 0.5
    return out


GROUPS: dict[str, Callable[[Row], bool]] = {
    "Piper, own pace": lambda r: r["source"] == "joe" and r["set"] == "own pace",
    "espeak-ng (held out), own pace": lambda r: r["source"] == "espeak" and r["set"] == "own pace",
    "held out, 10 dB noise": lambda r: r["source"] == "espeak" and r["condition"] == "pink@10dB",
    "held out, pace 0.8": lambda r: r["source"] == "espeak" and r["set"] == "pace 0.8",
    "held out, pace 1.25": lambda r: r["source"] == "espeak" and r["set"] == "pace 1.25",
    "held out, phone band": lambda r: r["source"] == "espeak" and r["set"] == "phone band",
    "all synthetic": lambda r: r["source"] != "jfk",
    "jfk.wav (real speech), all conditions": lambda r: r["source"] == "jfk",
}


def judge(rows: list[Row], heads: dict[str, dict[str, float]]) -> dict[str, dict[str, Any]]:
    """Per signal and group, on the clips whose transcripts every head it reads has scored."""
    out: dict[str, dict[str, Any]] = {}
    for name, ends in signals(heads).items():
        scored = []
        for r in rows:
            try:
                ends(r)
            except KeyError:
                continue
            scored.append(r)
        out[name] = {g: errors([r for r in scored if keep(r)], ends) for g, keep in GROUPS.items()}
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _cell(fig: dict[str, Any], count: int) -> str:
    n = fig["finished"] + fig["unfinished"]
    if not n:
        return "–"
    return f"{_pct(fig['cut_off'])} / {_pct(fig['waited_max'])}" + (f" (n={n})" if n != count else "")


def render(results: dict[str, Any]) -> str:
    j = results["judged"]
    groups = list(GROUPS)
    out = [f"# End of utterance, the trained head: {results['machine']['date'][:10]}"
           + (f" ({results['title']})" if results.get("title") else ""), "",
           f"Machine: {machine_line(results['machine'])}; load average (1, 5, 15 min) "
           f"{results['load_average']['start']} at the start, {results['load_average']['end']} at "
           "the end: shared with other agents' test runs and run under `nice`, so the "
           "compute figures are upper bounds (the error rates are exact)."
           + "".join(f" {n}" for n in results.get("notes", [])), "",
           f"Command: `{results['command']}` ({results['wall_s']:.0f} s). Transcripts, labels and "
           "the other signals' scores: " + ", ".join(f"`bench/results/{n}`" for n in SOURCES.values())
           + " (Smart Turn there is the float32-mel run). The heads: `python -m bench.eou_train "
           "--model qwen|smollm2` (data: bench/eou_lines.txt; " + results.get("heads_info", "")
           + "), threshold 0.5 as trained, nothing fitted on this set. Each cell: cut off (mid-sentence pauses ended at 600 ms) / waited "
           "(finished turns left for 1500 ms).", "",
           "| signal | " + " | ".join(f"{g} ({results['counts'][g]})" for g in groups) + " |",
           "|---|" + "---:|" * len(groups)]
    for name, fig in j.items():
        out.append(f"| {name} | " + " | ".join(_cell(fig[g], results["counts"][g]) for g in groups) + " |")
    out += ["", f"Compute per call (threads: {results.get('threads')}; distinct transcripts "
            "after a warm-up call; the instructions stay evaluated): " + "; ".join(
                f"{m}: median {c['median']:.0f} ms, p90 {c['p90']:.0f} ms over {c['n']} calls"
                for m, c in results["compute_ms"].items()) + ". CPU time of the process in a "
            "call (every thread's): " + ("; ".join(
                f"{m}: median {c['median']:.0f} ms, p90 {c['p90']:.0f} ms over {c['n']} calls"
                for m, c in results.get("cpu_ms", {}).items()) or "not recorded") + "."]
    return "\n".join(out)


def heads_info() -> str:
    """How the shipped heads were trained, from their files."""
    from pipeline.stages.eou_head import EouHead, head_file

    out = []
    for model in MODELS:
        if head_file(model).is_file():
            i = EouHead.load(head_file(model)).info
            out.append(f"{model}: {i.get('lines')} lines, {i.get('examples')} examples, pool "
                       f"{i.get('pool', 1)}, hidden {i.get('hidden', 0)}, L2 {i.get('l2')}")
    return "; ".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help="heads to run now; the others' "
                        "scores are kept from the stored results")
    parser.add_argument("--limit", type=int, default=0, help="score every jfk.wav transcript and "
                        "only this many others (a slow machine; cells then say their n)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--stem", default=STEM, help="results file name (date and name)")
    parser.add_argument("--title", default="", help="what this run is, for the report's heading")
    parser.add_argument("--base", default="", help="results file (stem) whose stored scores and "
                        "compute the heads not run now keep (default: --stem's own, with its notes)")
    parser.add_argument("--note", action="append", default=[], help="a sentence for the report's "
                        "machine paragraph (repeatable; with --base, the base's notes are not kept)")
    args = parser.parse_args(argv)
    t0 = perf_s()
    load_start = os.getloadavg()
    rows = load_rows()
    stored = args.out / f"{args.base or args.stem}.json"
    old = json.loads(stored.read_text(encoding="utf-8")) if stored.is_file() else {}
    heads: dict[str, dict[str, float]] = dict(old.get("heads", {}))
    compute = dict(old.get("compute_ms", {}))
    notes = ([] if args.base and args.base != args.stem else list(old.get("notes", []))) + args.note
    cpu = dict(old.get("cpu_ms", {}))
    for model in [m for m in args.models.split(",") if m]:
        heads[model], cost, used = score(rows, model, args.limit)
        compute[model], cpu[model] = describe(cost), describe(used)
    heads = {m: heads[m] for m in MODELS if m in heads}
    judged = judge(rows, heads)
    results = {"machine": describe_machine(),
               "command": "python -m bench.eou_eval " + " ".join(argv if argv is not None else sys.argv[1:]),
               "sources": list(SOURCES.values()), "compute_ms": compute, "cpu_ms": cpu,
               "threads": os.environ.get("PIPELINE_THREADS") or "default (2 on 2 cores)",
               "counts": {g: sum(map(keep, rows)) for g, keep in GROUPS.items()},
               "judged": judged, "heads": heads, "wall_s": round(perf_s() - t0, 1),
               "title": args.title, "heads_info": heads_info(), "notes": notes,
               "base": stored.name if stored.is_file() else None,
               "load_average": {"start": [round(x, 2) for x in load_start],
                                "end": [round(x, 2) for x in os.getloadavg()]}}
    text = render(results)
    write_results(args.out, args.stem, results, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
