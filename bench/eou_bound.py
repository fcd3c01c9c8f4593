"""How far the stored end-of-turn signals can go on the held-out voices, together: a fusion
fitted on the Piper voice and judged on the rest, and the best any threshold could do if it were
fitted on the held-out voices themselves (a bound, not a rule to ship).

No model runs. Each clip's scores come from the stored results `bench.eou_eval` reads: the
heuristic's probability, Smart Turn's, the text end-of-turn score (Qwen's `stop`
log-probability) and both trained heads. A turn ends at min_silence_ms (600) when its score is
at or above the threshold, else at max_silence_ms (1500); each pause of the synthetic set is
1000 ms, so a mid-sentence pause is cut off exactly when its score passes.

- *fitted on Piper*: a logistic regression on the signals' logits (standardised, classes weighted equally, L2 1.0: `bench.eou_train.fit`),
  fitted on the Piper clips (all conditions), its threshold the one with the fewest of
  max(cut off, waited) there; judged on the held-out espeak-ng voices and jfk.wav;
- *bound*: on the held-out voices' own pace, every threshold tried: the least waiting with at
  most 15% cut off, and the least max(cut off, waited). For a fusion the regression is fitted
  on those clips too, so it is the most the stored signals could give, in sample.

    python -m bench.eou_bound
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .eot_rescore import RESULTS, errors
from .eou_eval import GROUPS, load_rows
from .eou_eval import STEM as HEADS_STEM
from .eou_train import SHORT, fit
from .machine import describe_machine, machine_line
from .summary import publish

STEM = "2026-12-04-eou-bound"
TARGET = 0.15  # the issue's: at most 15% cut off and at most 15% waiting
Row = dict[str, Any]


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def features(heads: dict[str, dict[str, float]]) -> dict[str, Callable[[Row], float]]:
    """Each stored signal as a score that grows with "finished"."""
    def head(p: dict[str, float]) -> Callable[[Row], float]:
        return lambda r: _logit(p[r["transcript"]])

    out: dict[str, Callable[[Row], float]] = {
        "heuristic": lambda r: r["heuristic"]["p"],
        "smart-turn": lambda r: _logit(r["smart-turn"]["p"]),
        "text-eot qwen": lambda r: r["text:qwen2.5-coder-0.5b"]["stop"]}
    return out | {f"eou-head {short}": head(heads[m]) for short, m in SHORT.items() if m in heads}


class Fusion:
    """A logistic regression on standardised scores (`bench.eou_train.fit`, classes weighted
    equally): its logit."""

    def __init__(self, x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> None:
        self.mu, self.sd = x.mean(0), x.std(0) + 1e-9
        self.w, self.b = fit((x - self.mu) / self.sd, y, l2)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mu) / self.sd) @ self.w + self.b


def sweep(scores: Sequence[float], rows: list[Row]) -> list[tuple[float, float, float]]:
    """(cut off, waited, threshold) for every threshold between the observed scores."""
    values = sorted(set(scores))
    cands = [values[0] - 1.0, *((a + b) / 2 for a, b in zip(values, values[1:], strict=False)),
             values[-1] + 1.0]
    out = []
    for t in cands:
        fig = errors(rows, _ends(rows, np.asarray(scores) >= t))
        out.append((fig["cut_off"], fig["waited_max"], t))
    return out


def bound(scores: Sequence[float], rows: list[Row]) -> dict[str, Any]:
    swept = sweep(scores, rows)
    under = [s for s in swept if s[0] <= TARGET]
    least = min(under, key=lambda s: (s[1], s[0])) if under else None
    minmax = min(swept, key=lambda s: (max(s[0], s[1]), s[0] + s[1]))
    return {"under_target": {"cut_off": least[0], "waited_max": least[1]} if least else None,
            "minmax": {"cut_off": minmax[0], "waited_max": minmax[1]}}


def run(rows: list[Row], heads: dict[str, dict[str, float]]) -> dict[str, Any]:
    feats = features(heads)
    rows = [r for r in rows if all(_has(f, r) for f in feats.values())]
    names = list(feats)
    x = np.array([[feats[n](r) for n in names] for r in rows])
    y = np.array([float(r["finished"]) for r in rows])
    piper = np.array([r["source"] == "joe" for r in rows])
    held = [r["source"] == "espeak" and r["set"] == "own pace" for r in rows]
    held_rows = [r for r, k in zip(rows, held, strict=True) if k]
    combos = {n: [i] for i, n in enumerate(names)}
    fused_sets = [["heuristic", "eou-head qwen"], ["heuristic", "smart-turn", "eou-head qwen"], names]
    combos |= {"fusion of " + " + ".join(c): [names.index(n) for n in c]
               for c in fused_sets if set(c) <= set(names)}
    fitted: dict[str, Any] = {}
    bounds: dict[str, Any] = {}
    for label, cols in combos.items():
        fused = Fusion(x[piper][:, cols], y[piper])
        s = fused(x[:, cols])
        piper_rows = [r for r, k in zip(rows, piper, strict=True) if k]
        t = min(sweep(list(s[piper]), piper_rows), key=lambda c: (max(c[0], c[1]), c[0] + c[1]))[2]
        ends = _ends(rows, s >= t)
        fitted[label] = {"threshold": round(float(t), 3), "weights": [round(float(w), 3) for w in fused.w],
                         **{g: errors([r for r in rows if keep(r)], ends)
                            for g, keep in GROUPS.items()}}
        mask = np.array(held)
        own = Fusion(x[mask][:, cols], y[mask])(x[mask][:, cols]) if len(cols) > 1 else x[mask][:, cols[0]]
        bounds[label] = bound(list(own), held_rows)
    return {"signals": names, "fitted_on_piper": fitted, "bound_on_held_out": bounds,
            "counts": {g: sum(map(keep, rows)) for g, keep in GROUPS.items()}}


def _ends(rows: list[Row], verdicts: np.ndarray) -> Callable[[Row], bool]:
    """Each row's verdict, looked up by the row itself (`errors` takes a function of a row)."""
    by_row = {id(r): bool(v) for r, v in zip(rows, verdicts, strict=True)}
    return lambda r: by_row[id(r)]


def _has(f: Callable[[Row], float], r: Row) -> bool:
    try:
        f(r)
    except KeyError:
        return False
    return True


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def render(results: dict[str, Any]) -> str:
    groups = [g for g in GROUPS if g != "Piper, own pace"]
    out = [f"# End of turn, what the stored signals can do together: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average {results['load_average']} "
           "(no model runs: the figures do not depend on it).", "",
           f"Command: `{results['command']}`. Scores: `bench/results/{HEADS_STEM}.json` and its sources "
           "(bench/eou_bound.py's docstring says how each row is made). Each cell: cut off "
           "(mid-sentence pauses ended at 600 ms) / waited (finished turns left for 1500 ms).", "",
           "Fitted on the Piper voice (every condition), judged on the others:", "",
           "| signal | " + " | ".join(f"{g} ({results['counts'][g]})" for g in groups) + " |",
           "|---|" + "---:|" * len(groups)]
    for label, fig in results["fitted_on_piper"].items():
        out.append(f"| {label} | " + " | ".join(
            f"{_pct(fig[g]['cut_off'])} / {_pct(fig[g]['waited_max'])}" for g in groups) + " |")
    out += ["", "The bound: thresholds (and fusions) fitted on the held-out espeak-ng voices' own "
            f"pace ({results['counts']['espeak-ng (held out), own pace']} clips) themselves:", "",
            "| signal | least waiting with at most 15% cut off | least max(cut off, waited) |",
            "|---|---:|---:|"]
    for label, b in results["bound_on_held_out"].items():
        u = b["under_target"]
        out.append(f"| {label} | " + (f"{_pct(u['cut_off'])} / {_pct(u['waited_max'])}" if u else "–")
                   + f" | {_pct(b['minmax']['cut_off'])} / {_pct(b['minmax']['waited_max'])} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    heads = json.loads((RESULTS / f"{HEADS_STEM}.json").read_text(encoding="utf-8"))["heads"]
    results = {"machine": describe_machine(),
               "command": "python -m bench.eou_bound " + " ".join(argv if argv is not None else sys.argv[1:]),
               "load_average": [round(v, 2) for v in os.getloadavg()], **run(load_rows(), heads)}
    publish(args.out, STEM, results, render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
