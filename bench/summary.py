"""Medians, p90s and paired ratios over per-turn readouts, and the markdown report.

On a small, shared machine single numbers drift from minute to minute; medians resist the
outliers, and ratios of two modes on the same clip, run back to back, cancel most of the drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .readout import STAGE_LABELS, STAGES, TurnReadout

MODES = ("sequential", "streaming", "streaming+preemptive")
BASELINE = "sequential"


def _clean(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and np.isfinite(v)]


def median(values: Iterable[float | None]) -> float | None:
    xs = _clean(values)
    return float(np.median(xs)) if xs else None


def p90(values: Iterable[float | None]) -> float | None:
    """90th percentile, linear interpolation between order statistics (numpy's default): with
    a handful of turns it lies between the two slowest."""
    xs = _clean(values)
    return float(np.percentile(xs, 90)) if xs else None


def describe(values: Iterable[float | None]) -> dict[str, float | int | None]:
    xs = _clean(values)
    return {"n": len(xs), "median": median(xs), "p90": p90(xs)}


def pair_ratios(mode: Mapping[str, float | None], base: Mapping[str, float | None]) -> list[float]:
    """mode / base for every key (clip) both have, in the base's order."""
    out = []
    for key, b in base.items():
        a = mode.get(key)
        if a is not None and b is not None and b > 0:
            out.append(a / b)
    return out


def by_clip(turns: Sequence[TurnReadout], metric: str) -> dict[str, float | None]:
    """One value per clip (the first turn of each call: every call here has one turn)."""
    out: dict[str, float | None] = {}
    for t in turns:
        out.setdefault(t.clip, t.metrics()[metric])
    return out


# Metrics the summary reports per mode, beyond the stage times.
DERIVED = ("end_to_audio_ms", "commit_to_audio_ms", "stt_compute_ms", "stt_rtf",
           "partial_cadence_hz", "partials_skipped", "llm_prompt_ms", "llm_tokens_per_s",
           "tts_first_ms", "tts_rtf")
RATIO_METRICS = ("end_to_audio_ms", "commit_to_audio_ms")


def summarise(turns_by_mode: Mapping[str, Sequence[TurnReadout]]) -> dict[str, Any]:
    """Per mode and metric: n, median, p90; per mode: median ratio to the baseline, pair by pair."""
    per_mode: dict[str, dict[str, Any]] = {}
    for mode, turns in turns_by_mode.items():
        per_mode[mode] = {m: describe(t.metrics()[m] for t in turns) for m in (*STAGES, *DERIVED)}
    ratios: dict[str, dict[str, Any]] = {}
    base = turns_by_mode.get(BASELINE, [])
    for mode, turns in turns_by_mode.items():
        if mode == BASELINE or not base:
            continue
        ratios[mode] = {}
        for metric in RATIO_METRICS:
            rs = pair_ratios(by_clip(turns, metric), by_clip(base, metric))
            ratios[mode][metric] = {"n": len(rs), "median": median(rs),
                                    "pairs": [round(r, 4) for r in rs]}
    # preemption on its own: streaming+preemptive against plain streaming, same clips
    if "streaming" in turns_by_mode and "streaming+preemptive" in turns_by_mode:
        rs = pair_ratios(by_clip(turns_by_mode["streaming+preemptive"], "commit_to_audio_ms"),
                         by_clip(turns_by_mode["streaming"], "commit_to_audio_ms"))
        ratios["preemptive_vs_streaming"] = {"commit_to_audio_ms": {
            "n": len(rs), "median": median(rs), "pairs": [round(r, 4) for r in rs]}}
    return {"per_mode": per_mode, "ratios": ratios}


# --- markdown ---------------------------------------------------------------------------------


def _fmt(value: float | None, unit: str = "ms") -> str:
    if value is None:
        return "–"
    if unit == "ms":
        return f"{value:.0f}"
    if unit == "x":
        return f"{value:.2f}"
    if unit == "rtf":
        return f"{value:.3f}"
    return f"{value:.1f}"


ROW_LABELS = {
    **{s: f"{STAGE_LABELS[s]} (ms after end of speech)" for s in STAGES},
    "end_to_audio_ms": "**end of speech → first audio (ms)**",
    "commit_to_audio_ms": "**commit → first audio (ms)**",
    "stt_compute_ms": "STT final-pass compute (ms, all passes of the turn)",
    "stt_rtf": "STT real-time factor (compute / speech s)",
    "partial_cadence_hz": "STT partial passes per second of speech",
    "partials_skipped": "STT partial ticks skipped (a pass still running)",
    "llm_prompt_ms": "LLM request → first token (ms)",
    "llm_tokens_per_s": "LLM decode (tokens/s)",
    "tts_first_ms": "TTS first-chunk synthesis (ms)",
    "tts_rtf": "TTS real-time factor (synth / audio s)",
}
_UNITS = {"stt_rtf": "rtf", "tts_rtf": "rtf", "llm_tokens_per_s": "rate",
          "partial_cadence_hz": "rate", "partials_skipped": "rate"}


def stage_table(summary: Mapping[str, Any], modes: Sequence[str]) -> str:
    per_mode = summary["per_mode"]
    head = "| | " + " | ".join(f"{m} median | p90" for m in modes) + " |"
    rule = "|---|" + "---:|---:|" * len(modes)
    lines = [head, rule]
    for metric in (*STAGES, *DERIVED):
        unit = _UNITS.get(metric, "ms")
        cells = []
        for m in modes:
            d = per_mode.get(m, {}).get(metric, {})
            cells += [_fmt(d.get("median"), unit), _fmt(d.get("p90"), unit)]
        lines.append(f"| {ROW_LABELS[metric]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(summary: Mapping[str, Any]) -> str:
    ratios = summary["ratios"]
    modes = [m for m in ratios if m in MODES]
    lines = ["| median of per-clip ratios to sequential | " + " | ".join(modes) + " |",
             "|---|" + "---:|" * len(modes)]
    for metric in RATIO_METRICS:
        cells = []
        for m in modes:
            d = ratios[m].get(metric, {})
            cells.append(f"{_fmt(d.get('median'), 'x')} (n={d.get('n', 0)})")
        lines.append(f"| {ROW_LABELS[metric]} | " + " | ".join(cells) + " |")
    pre = ratios.get("preemptive_vs_streaming", {}).get("commit_to_audio_ms")
    if pre:
        lines.append(f"\ncommit → first audio, streaming+preemptive / streaming (same clips): "
                     f"median ratio {_fmt(pre['median'], 'x')} (n={pre['n']})")
    return "\n".join(lines)


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    """A plain table from dicts: columns are (key, header) pairs."""
    lines = ["| " + " | ".join(h for _, h in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for key, _ in columns:
            v = row.get(key)
            if isinstance(v, float):
                cells.append(f"{v:.3g}" if abs(v) < 10 else f"{v:.0f}")
            else:
                cells.append("–" if v is None else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def publish(folder: Path, stem: str, results: Mapping[str, Any], text: str) -> None:
    """A benchmark's results written (`write_results`) and its report printed."""
    write_results(folder, stem, results, text)
    print(text)


def print_report(text: str, out: Path | None) -> None:
    """A benchmark's report printed, and written to `out` when one is given (`--out`)."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def write_results(folder: Path, stem: str, results: Mapping[str, Any], text: str) -> None:
    """A benchmark's results as `stem.json` (everything) and `stem.md` (the report) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (folder / f"{stem}.md").write_text(text + "\n", encoding="utf-8")
