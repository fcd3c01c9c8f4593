"""Pipeline overhead: what the session adds between commit and first audio beyond model compute.

The models are swapped for the fakes (scripted STT and LLM, a tone for TTS), which cost
microseconds; VAD stays real because turns are found in real audio. The calls run on the real
clock, so commit -> first audio out is the event loop, the task hand-offs, the model threads'
start-up, the queues and the playback; the fakes' own compute is measured and subtracted.

    python -m bench.overhead               # the row alone: 5 clips, 3 runs; JSON on stdout
    python -m bench.overhead --runs 10     # more turns for a steadier median

`bench.ttfa` runs it too (its "Pipeline overhead" section). Run from two checkouts in turn, it
compares them on the same machine and load: bench/results/2026-12-01-overhead-loaded.md.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.base.clock import perf_s
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .calls import LEAD_IN_S, mode_config, one_call
from .clips import CallerClip, caller_clips
from .machine import describe_machine, machine_line
from .readout import read_turns
from .summary import describe

# Two sentences, the first long enough that the chunker waits for its period.
REPLY = "Checkout is at eleven in the morning. Late checkout is free for members."
# Hops from commit to first audio, each a pair of adjacent stages in the log.
HOPS = (("turn_commit", "response_start"), ("response_start", "llm_first_token"),
        ("llm_first_token", "first_chunk"), ("first_chunk", "tts_first_audio"),
        ("tts_first_audio", "first_audio_out"))


class Timed:
    """A stage wrapper noting the real time spent inside the wrapped (fake) model."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spans: list[tuple[float, float]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _timed(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        t0 = perf_s()
        try:
            return fn(*args, **kwargs)
        finally:
            self.spans.append((t0, perf_s()))

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        return self._timed(self.inner.transcribe, audio, final=final)

    def synthesize(self, text: str) -> np.ndarray:
        return self._timed(self.inner.synthesize, text)

    def stream(self, messages: list[dict[str, Any]], **kwargs: Any) -> Iterator[str]:
        pieces = self.inner.stream(messages, **kwargs)
        while True:
            t0 = perf_s()
            try:
                piece = next(pieces)
            except StopIteration:
                self.spans.append((t0, perf_s()))
                return
            self.spans.append((t0, perf_s()))
            yield piece

    def within(self, a: float, b: float) -> float:
        """Seconds of compute inside [a, b] (perf time)."""
        return sum(max(0.0, min(e, b) - max(s, a)) for s, e in self.spans)


def measure_overhead(vad: Any, clips: list[CallerClip], base: cfg.Config, *,
                     progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """One realtime streaming call per clip (no preemption: commit starts the response)."""
    config = mode_config(base, "streaming")
    turns = []
    for clip in clips:
        stt = Timed(ScriptedSTT(transcripts=[clip.text]))
        llm = Timed(ScriptedLLM(replies=[REPLY]))
        tts = Timed(ToneTTS())
        stages = Stages(vad=vad, stt=stt, completeness=HeuristicCompleteness(), llm=llm, tts=tts)
        events, _, _ = one_call(config, stages, [Clip(clip.audio, LEAD_IN_S)], realtime=True,
                             hang_up_after=("first_audio_out", 0.0), max_s=clip.seconds + 10)
        if progress:
            progress()
        commits = {e.item_id: e.perf for e in events if isinstance(e, ev.InputCommitted)}
        for r in read_turns(events, sequential=False):
            total = r.commit_to_audio_ms
            if total is None or r.turn_id not in commits:
                continue
            commit_perf = commits[r.turn_id]
            audio_perf = commit_perf + total / 1000.0
            compute = sum(s.within(commit_perf, audio_perf) for s in (stt, llm, tts)) * 1000.0
            turns.append({"clip": clip.name, "commit_to_audio_ms": round(total, 3),
                          "fake_compute_ms": round(compute, 3),
                          "overhead_ms": round(total - compute, 3),
                          **{f"{a}->{b}": round(r.span_ms(a, b) or 0.0, 3) for a, b in HOPS}})
    return {"turns": turns,
            "overhead_ms": describe(t["overhead_ms"] for t in turns),
            "hops_ms": {f"{a}->{b}": describe(t[f"{a}->{b}"] for t in turns) for a, b in HOPS}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", type=int, default=5, help="caller clips per run (default 5)")
    parser.add_argument("--runs", type=int, default=3, help="runs over the clips (default 3)")
    args = parser.parse_args(argv)
    clips = caller_clips(args.clips)
    base = cfg.Config.default()
    vad = cfg.build_stage("vad", base.vad)
    load_before = os.getloadavg()
    turns = []
    for _ in range(args.runs):
        turns += measure_overhead(vad, clips, base)["turns"]
    print(json.dumps({"machine": machine_line(describe_machine()),
                      "load_average": {"before": load_before, "after": os.getloadavg()},
                      "overhead_ms": describe(t["overhead_ms"] for t in turns),
                      "commit_to_audio_ms": describe(t["commit_to_audio_ms"] for t in turns),
                      "turns": turns}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
