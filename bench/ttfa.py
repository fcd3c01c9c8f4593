"""Time to first audio, per stage, against a sequential baseline; with a waterfall chart.

Each caller turn is its own short call on the real clock (models compute in real time, so the
simulated clock would hide exactly what this measures): the caller's clip, then silence until
the agent's first audio plays. Stage times come from the call's event log. Every clip runs in
each mode, back to back, so the modes compare pair by pair on the same audio.

Also: the quick first fragment on and off, the LLM completeness signal's cost, the pipeline's
own overhead, barge-in figures (bench/bargein.py) and tool choice (bench/tools.py).

    python -m bench.ttfa                     # the default run, results in bench/results/
    python -m bench.ttfa --turns 1 --quick   # a smoke run
    python -m bench.ttfa --device cuda       # the same on a GPU build (see bench/README.md)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.base import config as cfg
from pipeline.base.clock import perf_s
from pipeline.transports.runtime import add_config_args, load_config
from pipeline.transports.scripted import Clip

from .calls import (
    LEAD_IN_S,
    MODE_SESSIONS,
    MODE_SETTINGS,
    mode_config,
    one_call,
    prime_llm,
    session_for,
)
from .clips import CallerClip, caller_clips
from .machine import describe_machine, describe_stages, host_name
from .readout import TurnReadout, read_turns
from .summary import MODES, summarise

RESULTS = Path(__file__).resolve().parent / "results"
# Every clip in the rotation once (bench/clips.py): about 3-4 minutes on 2 idle cores.
DEFAULT_TURNS = 8
# A call's hard cap beyond its clip: a whole 96-token reply (the LLM stage's max_tokens) decoded
# at 3 tokens/s, the slowest this 2-core machine showed while shared, and then synthesized.
CALL_CAP_S = 45.0
# Section sizes; None: all there are. Five overhead turns give a median (the overhead is about a
# millisecond, so more turns add nothing); the quick run keeps one of each kind.
QUICK: dict[str, int | None] = {"overhead_turns": 1, "fragment_replies": 2, "completeness_texts": 3}
FULL: dict[str, int | None] = {"overhead_turns": 5, "fragment_replies": None,
                               "completeness_texts": None}
SECTIONS = ("fragment", "completeness", "overhead", "bargein", "tools")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ttfa", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_args(parser)
    for action in parser._actions:  # `--turns` is shared with the turns stage's name
        if "--turns" in action.option_strings:
            action.metavar = "N|NAME"
            action.help = (f"a number: how many caller turns per mode (default {DEFAULT_TURNS}); "
                           "a name: the turns (completeness) stage's entry point")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: the fewest cases of every section")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--skip", action="append", default=[], choices=SECTIONS,
                        help="leave a section out (repeatable)")
    args = parser.parse_args(argv)
    args.n_turns = DEFAULT_TURNS
    if args.turns is not None and args.turns.isdigit():
        args.n_turns, args.turns = int(args.turns), None
    return args


class Progress:
    """tqdm on stderr, with a plain counter where tqdm is missing."""

    def __init__(self, total: int) -> None:
        try:
            from tqdm import tqdm

            self._bar: Any = tqdm(total=total, file=sys.stderr, unit="step", dynamic_ncols=True)
        except ImportError:
            self._bar = None
        self.total, self.done = total, 0

    def note(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(text[:40])
        else:
            print(f"[{self.done}/{self.total}] {text}", file=sys.stderr)

    def step(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def warm_up(stages: Any, clip: CallerClip) -> None:
    """One pass through each model: first inferences pay one-off allocations, not latency."""
    stages.stt.transcribe(clip.audio, final=True)
    cancel = threading.Event()
    messages = [{"role": "user", "content": clip.text}]
    for i, _ in enumerate(stages.llm.stream(messages, cancel=cancel)):
        if i >= 3:
            cancel.set()
    stages.tts.synthesize("Hello there.")
    stages.completeness.probability(clip.text)


def run_turns(stages: Any, base: cfg.Config, clips: list[CallerClip], progress: Progress
              ) -> tuple[dict[str, list[TurnReadout]], list[dict[str, Any]], dict[str, str]]:
    """Every clip in every mode; returns readouts per mode, failed calls, and the full replies
    of the sequential runs (the whole text is generated before it is spoken)."""
    by_mode: dict[str, list[TurnReadout]] = {m: [] for m in MODES}
    failures: list[dict[str, Any]] = []
    replies: dict[str, str] = {}
    for i, clip in enumerate(clips):
        k = i % len(MODES)  # rotate the order: drift on a shared machine hits every mode alike
        for mode in (*MODES[k:], *MODES[:k]):
            progress.note(f"{mode}: {clip.name}")
            prime_llm(stages.llm, base.response.instructions)
            events, _, session = one_call(mode_config(base, mode), stages,
                                          [Clip(clip.audio, LEAD_IN_S)], realtime=True,
                                          hang_up_after=("first_audio_out", 0.0),
                                          max_s=LEAD_IN_S + clip.seconds + CALL_CAP_S,
                                          session_class=session_for(mode))
            turns = read_turns(events, sequential=mode == "sequential")
            turn = next((t for t in turns if t.end_to_audio_ms is not None), None)
            if turn is None:
                why = "no turn committed" if not turns else f"no audio ({turns[0].status})"
                failures.append({"clip": clip.name, "mode": mode, "why": why})
            else:
                turn.clip, turn.mode = clip.name, mode
                by_mode[mode].append(turn)
                if mode == "sequential" and session.responses:
                    replies[clip.name] = getattr(session.responses[0], "text_so_far", "").strip()
            progress.step()
    return by_mode, failures, replies


def notes_for(by_mode: dict[str, list[TurnReadout]], replies: dict[str, str]) -> list[str]:
    """What a reader needs to read the numbers right; some are checked against this run."""
    notes = [
        "Times are real-clock milliseconds after the end of speech (the committed turn's "
        "audio_end_ms). The scripted caller hands each 20 ms frame over at its start, up to "
        "20 ms before a microphone would, so times after the end of speech can read up to 20 ms "
        "short.",
        "VAD speech-stop includes the 160 ms (five 32 ms windows) the turn detector waits before "
        "calling speech stopped (turn.speech_stop_ms).",
        "STT final ready = when the final pass started (VAD speech-stop; at commit in sequential "
        "mode) plus its compute from the stt_final mark, or when the transcript was published if "
        "that is sooner (the mark sums every final pass of a turn, one per pause). Stage times "
        "use each event's perf stamp: "
        "a preemptive response's events are held and re-stamped (ts) at commit, perf says when "
        "they happened.",
        "Each call hangs up when the first audio plays, so LLM tokens/s is measured only in "
        "sequential mode, where the first chunk is made after the last token.",
        "STT real-time factor: final-pass compute over the committed span (speech plus 300 ms of "
        "prefix padding), for turns with a single final pass; in the streaming modes it includes "
        "any wait for a partial pass still running on the model. TTS real-time factor: "
        "first-chunk synthesis over its audio length; in "
        "the streaming modes the LLM is decoding on the same cores meanwhile.",
    ]
    spoken = [(len(t.first_chunk_text), len(replies.get(t.clip, "")))
              for t in by_mode.get("sequential", [])]
    # cleaning for speech (markdown, emoji) trims a few characters, never a tenth of a reply
    short = [(a, b) for a, b in spoken if b and a < 0.9 * b]
    if short:
        said, made = sum(a for a, _ in short), sum(b for _, b in short)
        notes.append(f"In {len(short)} of {len(spoken)} sequential turns the baseline synthesized "
                     f"only the reply's last part ({said} of {made} characters): the baseline's "
                     "first (only) chunk is shorter than its reply, which flatters the baseline.")
    return notes


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = perf_s()
    base = load_config(args)
    sizes = QUICK if args.quick else FULL
    skip = set(args.skip)
    from pipeline.call.session import Stages

    print(f"caller clips: synthesizing any not cached ({args.n_turns} turns)", file=sys.stderr)
    clips = caller_clips(args.n_turns)
    stages = Stages.load(base, progress=lambda m: print(m, file=sys.stderr))
    warm_up(stages, clips[0])

    from .bargein import CASES, QUICK_CASES
    from .tools import PROMPTS, QUICK_PROMPTS

    n_bargein = len(QUICK_CASES) if args.quick else len(CASES)
    n_tools = QUICK_PROMPTS if args.quick else len(PROMPTS)
    n_frag = min(sizes["fragment_replies"] or len(clips), len(clips))
    n_over = min(sizes["overhead_turns"] or len(clips), len(clips))
    total = (len(clips) * len(MODES) + (0 if "fragment" in skip else n_frag)
             + (0 if "overhead" in skip else n_over) + (0 if "bargein" in skip else n_bargein)
             + (0 if "tools" in skip else n_tools) + (0 if "completeness" in skip else 1))
    progress = Progress(total)
    results: dict[str, Any] = {
        "machine": describe_machine(),
        "command": " ".join(["python -m bench.ttfa",
                             shlex.join(sys.argv[1:] if argv is None else argv)]).strip(),
        "settings": {"turns": args.n_turns, "quick": args.quick, "modes": list(MODES),
                     "mode_settings": MODE_SETTINGS,
                     "mode_sessions": {m: f"{c.__module__}.{c.__qualname__}" for m, c in MODE_SESSIONS.items()},
                     "lead_in_s": LEAD_IN_S,
                     "call_cap_s": CALL_CAP_S, "skipped": sorted(skip)},
        "config": dataclasses.asdict(base),
        "stages": describe_stages(base, stages),  # device, model sizes, threads actually used
        "clips": [{"name": c.name, "text": c.text, "seconds": round(c.seconds, 3)} for c in clips],
    }
    try:
        by_mode, failures, replies = run_turns(stages, base, clips, progress)
        results |= {"turns_by_mode": {m: [t.to_dict() for t in ts] for m, ts in by_mode.items()},
                    "failures": failures, "replies": replies, "summary": summarise(by_mode)}
        sections: dict[str, Callable[[], Any]] = {}
        if "fragment" not in skip:
            from .micro import REPEATS, quick_fragment

            texts = [r for r in replies.values() if r][:n_frag]

            def fragment() -> Any:
                return quick_fragment(stages.tts, texts, progress=progress.step,
                                      min_fragment_words=base.chunker.min_fragment_words) | {
                    "repeats": REPEATS}
            sections["quick_fragment"] = fragment
        if "completeness" not in skip:
            from .micro import UNFINISHED, completeness_cost

            heard = list(dict.fromkeys(t.transcript for ts in by_mode.values() for t in ts
                                       if t.transcript))
            texts_c = (heard + list(UNFINISHED))[: sizes["completeness_texts"]]  # None: all

            def completeness() -> Any:
                out = completeness_cost(stages.llm, texts_c)
                progress.step()
                return out
            sections["completeness"] = completeness
        if "overhead" not in skip:
            from .overhead import measure_overhead

            short = sorted(clips, key=lambda c: c.seconds)[:n_over]
            sections["overhead"] = lambda: measure_overhead(stages.vad, short, base,
                                                            progress=progress.step)
        if "bargein" not in skip:
            from .bargein import run_bargein

            def bargein() -> Any:
                rows = run_bargein(stages, base, quick=args.quick, progress=progress.note)
                progress.step(len(rows))
                return rows
            sections["bargein"] = bargein
        if "tools" not in skip:
            from .tools import run_tools

            sections["tools"] = lambda: run_tools(stages.llm, base.response.instructions,
                                                  quick=args.quick, progress=progress.step)
        for name, run in sections.items():
            progress.note(name)
            results[name] = run()
    finally:
        progress.close()
    results["notes"] = notes_for(by_mode, replies)
    results["wall_s"] = round(perf_s() - t_start, 1)
    write_results(results, args.out, quick=args.quick)
    return 0


def write_results(results: dict[str, Any], out: Path, *, quick: bool = False) -> dict[str, Path]:
    """<date>-<host>.json, .md and .png in `out`; prints the markdown."""
    from .report import render_markdown
    from .summary import MODES as ALL_MODES
    from .waterfall import plot_waterfall

    out.mkdir(parents=True, exist_ok=True)
    stem = f"{results['machine']['date'][:10]}-{results['machine'].get('host') or host_name()}"
    stem += "-quick" if quick else ""
    paths = {k: out / f"{stem}.{k}" for k in ("json", "md", "png")}
    modes = [m for m in ALL_MODES if m in results["summary"]["per_mode"]]
    plot_waterfall(results["summary"], modes, paths["png"],
                   title=f"Time to first audio, per stage: {results['machine']['cpu']}, "
                         f"{results['machine']['cores_usable']} cores")
    results["waterfall"] = paths["png"].name
    paths["json"].write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    text = render_markdown(results)
    paths["md"].write_text(text + "\n", encoding="utf-8")
    print(text)
    print("\nwrote " + ", ".join(str(p) for p in paths.values()), file=sys.stderr)
    return paths


if __name__ == "__main__":
    raise SystemExit(main())
