"""The markdown report, rendered from the results dictionary (the JSON written next to it)."""

from __future__ import annotations

from typing import Any

from .bargein import COLUMNS as BARGEIN_COLUMNS
from .machine import machine_line, stages_line
from .summary import MODES, markdown_table, ratio_table, stage_table
from .tools import COLUMNS as TOOL_COLUMNS
from .tools import summary_line


def _ms(d: dict[str, Any] | None, key: str = "median") -> str:
    v = (d or {}).get(key)
    return "–" if v is None else f"{v:.1f}"


def render_markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    modes = [m for m in MODES if m in results["summary"]["per_mode"]]
    m = results["machine"]
    out = [f"# Time to first audio: {m['date'][:10]} on {m['host']}",
           "", f"Machine: {machine_line(results['machine'])}.", "",
           *([f"Stages: {stages_line(results['stages'])}.", ""] if results.get("stages") else []),
           f"Command: `{results['command']}`"
           + (f" ({results['wall_s']:.0f} s in all)." if results.get("wall_s") else ""), "",
           f"{s['turns']} caller turns per mode, each its own call on the real clock, the modes "
           "of one clip run back to back (order rotated per clip). Medians and p90 across turns; "
           "ratios are per clip (same audio) against sequential, then the median.", ""]
    counts = ", ".join(f"{m}: {len(results['turns_by_mode'].get(m, []))}" for m in modes)
    out += [f"Turns measured ({counts}).", ""]
    if results.get("failures"):
        out += ["Calls with no first audio (left out of the medians): " + ", ".join(
            f"{f['clip']} ({f['mode']}: {f['why']})" for f in results["failures"]), ""]
    out += ["## Stages", "", stage_table(results["summary"], modes), "",
            "## Against the sequential baseline", "", ratio_table(results["summary"]), ""]
    if results.get("waterfall"):
        out += [f"![waterfall]({results['waterfall']})", ""]

    frag = results.get("quick_fragment")
    if frag:
        out += ["## Quick first fragment", "",
                f"The sequential runs' replies ({len(frag['rows'])}), chunked both ways, first "
                "chunk "
                f"synthesized {frag.get('repeats', 3)} times (median). A quick fragment exists in "
                f"{frag['replies_with_a_fragment']} of them.", "",
                "| first chunk | median synth (ms) | p90 (ms) |", "|---|---:|---:|",
                f"| quick fragment on | {_ms(frag['quick_synth_ms'])} | "
                f"{_ms(frag['quick_synth_ms'], 'p90')} |",
                f"| sentences only | {_ms(frag['sentence_synth_ms'])} | "
                f"{_ms(frag['sentence_synth_ms'], 'p90')} |",
                "", "Median per-reply ratio on/off: "
                f"{_fmt_ratio(frag['ratio_quick_to_sentence'])} over all replies, "
                f"{_fmt_ratio(frag['ratio_where_it_differs'])} where a fragment exists.", ""]
    comp = results.get("completeness")
    if comp:
        llm = comp["llm"]
        out += ["## Completeness signal cost", "",
                f"Per call over {len(comp['texts'])} transcripts: LLM signal median "
                f"{_ms(llm['ms'])} ms (p90 {_ms(llm['ms'], 'p90')}; {llm['method']}), heuristic "
                f"median {(comp['heuristic']['ms']['median'] or 0) * 1000:.0f} µs.", ""]
        if llm.get("error"):
            out += [f"`LLMCompleteness.probability()` failed on this LLM: `{llm['error']}`", ""]
    over = results.get("overhead")
    if over:
        hops = "; ".join(f"{k} {_ms(v)}" for k, v in over["hops_ms"].items())
        out += ["## Pipeline overhead", "",
                "Commit → first audio with the fake stages (real VAD, real clock), minus the "
                "fakes' "
                f"own compute: median {_ms(over['overhead_ms'])} ms per turn "
                f"(p90 {_ms(over['overhead_ms'], 'p90')}, n={over['overhead_ms']['n']}). "
                f"Median per hop (ms, fakes included): {hops}.", ""]
    bi = results.get("bargein")
    if bi:
        out += ["## Barge-in (simulated clock, real VAD/STT/TTS)", "",
                markdown_table(bi, BARGEIN_COLUMNS), ""]
    tools = results.get("tools")
    if tools:
        out += ["## Tool choice (real LLM, the labelled set bench/tool_set.json, session grammar)", "",
                summary_line(tools) + ".", "", markdown_table(tools["rows"], TOOL_COLUMNS), ""]
    if results.get("notes"):
        out += ["## Notes", "", *[f"- {n}" for n in results["notes"]], ""]
    return "\n".join(out)


def _fmt_ratio(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"
