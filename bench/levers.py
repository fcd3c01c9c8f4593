"""Each first-audio lever (the README's table of them) on and off, on the same clips, in one table.

    python -m bench.levers                          # 8 clips, 7 variants: about 6 minutes idle
    python -m bench.levers --quick                  # 3 clips: a smoke run, about 2 minutes
    python -m bench.levers --threads 2,2,2 --threads 2,1,1   # also compare thread splits

Variants, each a call per clip on the real clock (bench/calls.py), order rotated per clip:

- sequential: the baseline every ratio is taken against (same clip);
- all levers: streaming, preemptive, speculation from the last partial (the default is the final);
- speculate from final: the speculation waits for the final pass (`response.speculate_from`);
- no preemption: streaming without speculation, for scale;
- final from the confirmed words: the final pass with the words LocalAgreement confirmed forced
  as its prefix (`stt.prefix_final`, off by default); compare STT final ready and the adoption
  rate, and `bench.stt_prefix` for what it costs in accuracy;
- llm signal, cache kept / cache reset: the `llm` completeness signal scores each final
  transcript on the LLM (every partial too until 2026-12-06); with the cache reset the reply re-evaluates instructions and history
  (`llm.keep_prompt_cache`); compare LLM request -> first token.

Piper warm-up is measured apart (it only touches a call's first synthesis): first synthesis of
a reply after loading the voice with `tts.warm_up` on and off. `--threads STT,LLM,TTS` reloads the
models per split and runs sequential and all levers on it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from pipeline.base import config as cfg
from pipeline.base.clock import perf_s
from pipeline.transports.runtime import add_config_args, load_config
from pipeline.transports.scripted import Clip

from . import sequential
from .calls import LEAD_IN_S, one_call, prime_llm, session_for
from .clips import caller_clips
from .machine import describe_machine, describe_stages, host_name, machine_line, stages_line
from .readout import TurnReadout, read_turns
from .summary import by_clip, markdown_table, median, pair_ratios
from .ttfa import CALL_CAP_S, RESULTS, Progress, warm_up

QUICK_TURNS = 3  # one clip per mode position of the rotation
WARM_UP_LOADS = 3  # loads per side for the Piper warm-up (median); each is ~1 s on 2 cores

# name -> (response settings, completeness "llm" or None for the configured one, stage switches)
ON = {"keep_prompt_cache": True, "prefix_final": False}
# (the variant named "sequential" runs in the baseline's own session: bench/sequential.py)
VARIANTS: dict[str, tuple[dict[str, Any], str | None, dict[str, bool]]] = {
    "sequential": (sequential.SETTINGS, None, ON),
    "all levers": ({"preemptive": True, "speculate_from": "partial"}, None, ON),
    "speculate from final": ({"preemptive": True, "speculate_from": "final"}, None, ON),
    "final from the confirmed words": ({"preemptive": True}, None, ON | {"prefix_final": True}),
    "no preemption": ({"preemptive": False}, None, ON),
    "llm signal, cache kept": ({"preemptive": True}, "llm", ON),
    "llm signal, cache reset": ({"preemptive": True}, "llm", ON | {"keep_prompt_cache": False}),
}
SPLIT_VARIANTS = ("sequential", "all levers")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.levers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_args(parser)
    parser.add_argument("--clips", type=int, default=8, help="caller clips per variant (default 8)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_TURNS} clips, a smoke run")
    parser.add_argument("--threads", action="append", default=[], metavar="STT,LLM,TTS",
                        help="also run on this thread split (repeatable)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    return parser.parse_args(argv)


def run_variants(stages: Any, base: cfg.Config, clips: list[Any], names: tuple[str, ...],
                 progress: Progress) -> dict[str, list[TurnReadout]]:
    from pipeline.turns import LLMCompleteness

    llm_signal = LLMCompleteness(llm=stages.llm) if hasattr(stages.llm, "next_token_logprobs") else None
    by_variant: dict[str, list[TurnReadout]] = {n: [] for n in names}
    for i, clip in enumerate(clips):
        k = i % len(names)  # rotate: a busy moment on a shared machine hits every variant alike
        for name in (*names[k:], *names[:k]):
            response, signal, switches = VARIANTS[name]
            progress.note(f"{name}: {clip.name}")
            if signal == "llm" and llm_signal is None:
                progress.step()
                continue  # this LLM stage cannot score tokens
            run_stages = dataclasses.replace(stages, completeness=llm_signal) if signal else stages
            _switch(stages, switches)
            prime_llm(stages.llm, base.response.instructions)
            events, _, _ = one_call(cfg.apply(base, {"response": response}), run_stages,
                                    [Clip(clip.audio, LEAD_IN_S)], realtime=True,
                                    hang_up_after=("first_audio_out", 0.0),
                                    max_s=LEAD_IN_S + clip.seconds + CALL_CAP_S,
                                    session_class=session_for(name))
            turns = read_turns(events, sequential=name == "sequential")
            turn = next((t for t in turns if t.end_to_audio_ms is not None), None)
            if turn is not None:
                turn.clip, turn.mode = clip.name, name
                by_variant[name].append(turn)
            progress.step()
    _switch(stages, ON)
    return by_variant


def _switch(stages: Any, switches: dict[str, bool]) -> None:
    """Set the stage-level levers (public attributes of the loaded models, where they have them)."""
    for stage, key in ((stages.llm, "keep_prompt_cache"), (stages.stt, "prefix_final")):
        if hasattr(stage, key):
            setattr(stage, key, switches[key])


def adoption(turns: list[TurnReadout]) -> dict[str, Any]:
    """Speculations adopted / started, per source (a dropped partial is usually followed by a
    speculation from the final, which counts under "final")."""
    out: dict[str, Any] = {}
    for source in ("partial", "final"):
        outcomes = [o for t in turns for s, o in t.speculations if s == source]
        if outcomes:
            out[source] = {"adopted": outcomes.count("adopted"), "started": len(outcomes)}
    return out


def rows_for(by_variant: dict[str, list[TurnReadout]], label: str = "") -> list[dict[str, Any]]:
    base = by_variant.get("sequential", [])
    rows = []
    for name, turns in by_variant.items():
        ratios = pair_ratios(by_clip(turns, "end_to_audio_ms"), by_clip(base, "end_to_audio_ms"))
        rows.append({
            "variant": f"{name}{label}", "n": len(turns),
            "end_to_audio_ms": median(t.end_to_audio_ms for t in turns),
            "commit_to_audio_ms": median(t.commit_to_audio_ms for t in turns),
            "llm_prompt_ms": median(t.llm_prompt_ms for t in turns),
            "stt_final_ms": median(t.at_ms.get("stt_final") for t in turns),
            "vs_sequential": median(ratios) if name != "sequential" else None,
            "adoption": adoption(turns)})
    return rows


def piper_warm_up(model_params: dict[str, Any], text: str) -> dict[str, float | None]:
    """First synthesis of `text` right after loading the voice, warm-up on and off (median)."""
    from pipeline.stages.tts import PiperTTS

    out: dict[str, float | None] = {}
    for on in (True, False):
        times = []
        for _ in range(WARM_UP_LOADS):
            tts = PiperTTS(**(model_params | {"warm_up": on}))
            t0 = perf_s()
            tts.synthesize(text)
            times.append((perf_s() - t0) * 1000.0)
        out["on" if on else "off"] = median(times)
    return out


def _fmt(v: Any, digits: int = 0) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def render(results: dict[str, Any]) -> str:
    def adopted(a: dict[str, Any]) -> str:
        return ", ".join(f"{s} {v['adopted']}/{v['started']}" for s, v in a.items()) or "–"

    table = [{"variant": r["variant"], "n": r["n"], "e2a": _fmt(r["end_to_audio_ms"]),
              "c2a": _fmt(r["commit_to_audio_ms"]), "llm": _fmt(r["llm_prompt_ms"]),
              "stt": _fmt(r.get("stt_final_ms")),
              "ratio": _fmt(r["vs_sequential"], 2), "adopted": adopted(r["adoption"])}
             for r in results["rows"]]
    cols = [("variant", "variant"), ("n", "turns"), ("e2a", "end of speech → first audio (ms, median)"),
            ("c2a", "commit → first audio (ms, median)"), ("stt", "STT final ready (ms after end)"),
            ("llm", "LLM request → first token (ms)"),
            ("ratio", "end of speech → first audio / sequential (per clip, median)"),
            ("adopted", "speculations adopted / started")]
    warm = results.get("piper_warm_up", {})
    return "\n".join([
        f"# First-audio levers: {results['machine']['date'][:10]} on {results['machine']['host']}", "",
        f"Machine: {machine_line(results['machine'])}.", "",
        f"Stages: {stages_line(results['stages'])}.", "",
        f"Command: `{results['command']}` ({results['wall_s']:.0f} s in all).", "",
        markdown_table(table, cols), "",
        f"Piper first synthesis after load (median of {WARM_UP_LOADS} loads): warm-up on "
        f"{_fmt(warm.get('on'))} ms, off {_fmt(warm.get('off'))} ms.", "",
        "Times are real-clock medians after the end of speech (bench/README.md). A variant's "
        "ratio is its end of speech → first audio over sequential's on the same clip."])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = perf_s()
    base = load_config(args)
    from pipeline.call.session import Stages

    clips = caller_clips(QUICK_TURNS if args.quick else args.clips)
    stages = Stages.load(base, progress=lambda m: print(m, file=sys.stderr))
    warm_up(stages, clips[0])
    splits = [tuple(int(x) for x in s.split(",")) for s in args.threads]
    progress = Progress(len(clips) * (len(VARIANTS) + len(SPLIT_VARIANTS) * len(splits)))
    results: dict[str, Any] = {
        "machine": describe_machine(), "stages": describe_stages(base, stages),
        "command": " ".join(["python -m bench.levers",
                             shlex.join(sys.argv[1:] if argv is None else argv)]).strip()}
    try:
        by_variant = run_variants(stages, base, clips, tuple(VARIANTS), progress)
        rows = rows_for(by_variant)
        results["turns"] = {n: [t.to_dict() for t in ts] for n, ts in by_variant.items()}
        for split in splits:
            split_base = cfg.apply(base, {kind: {"threads": n}
                                          for kind, n in zip(("stt", "llm", "tts"), split, strict=True)})
            del stages  # one set of models in memory at a time
            stages = Stages.load(split_base, progress=lambda m: print(m, file=sys.stderr))
            warm_up(stages, clips[0])
            label = f" (threads stt {split[0]}, llm {split[1]}, tts {split[2]})"
            rows += [r for r in rows_for(run_variants(stages, split_base, clips, SPLIT_VARIANTS, progress),
                                         label)]
        if base.tts.name == "piper":
            tts_params = {k: v for k, v in base.tts.params.items() if k != "warm_up"}
            reply = next((t.first_chunk_text for t in by_variant.get("sequential", [])
                          if t.first_chunk_text), "Checkout is at eleven in the morning.")
            progress.note("piper warm-up")
            results["piper_warm_up"] = piper_warm_up(tts_params, reply)
    finally:
        progress.close()
    results["rows"] = rows
    results["wall_s"] = round(perf_s() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"{results['machine']['date'][:10]}-{host_name()}-levers" + ("-quick" if args.quick else "")
    text = render(results)
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    (args.out / f"{stem}.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"\nwrote {args.out / stem}.json and .md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
