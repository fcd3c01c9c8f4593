"""Barge-in figures on the simulated clock: real VAD, STT and TTS, real audio over the agent.

The cases are those of tests/test_bargein.py. The tests assert; this reports, per case: how many
times the gate fired where it should not have, the detection delay (fire - speech onset), how
long agent audio kept sounding after the fire, how long after the caller's onset the agent's
audio stopped (paused on the candidate or cancelled), and the real compute of the cancel path.

    python -m bench.bargein            # prints the table
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.base.clock import perf_s
from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import LONG_REPLY, QUESTION, jfk, mm_hmm, noise
from pipeline.transports.scripted import Clip, after_stage

from .calls import BenchCaller, one_call
from .clips import speech
from .summary import median

# The tests' reply and question (pipeline.testing): the LLM is scripted so that the reply is
# long enough to interrupt 1 s in, the same words every run; every other stage is the real model.
INTERRUPT_DELAY_S = 1.0  # the caller talks over the agent 1 s into its first audio (the tests')
ONSET_DBFS = -30.0  # a window this loud is speech onset in jfk.wav (the tests' definition)
# Speakers, not headphones: about -3 dB of the agent back in the mic, 30 ms late (the tests').
ECHO = {"echo_gain": 0.7, "echo_delay_ms": 30.0}
ONSET_WINDOW = 512  # one Silero window
# The call ends this long after the first fire: enough to see that no agent audio follows it,
# without transcribing the whole interruption (the tests do that) or letting an unguarded agent
# answer its own echo over and over.
AFTER_FIRE_S = 1.0
# Each case three times: the simulated clock makes a case nearly repeatable, but the compute
# timings are single wall-clock samples, and one stall of a shared machine would decide them.
RUNS = 3


@dataclasses.dataclass
class Case:
    name: str
    over: Callable[[], np.ndarray] | None  # audio played over the agent's reply; None: none
    speech: bool = False  # the sound over the agent is a real interruption
    bargein: dict[str, Any] = dataclasses.field(default_factory=dict)
    caller: dict[str, Any] = dataclasses.field(default_factory=dict)


CASES = (
    Case("cough 100 ms", lambda: noise("cough", 0.1)),
    Case("white noise 2 s", lambda: noise("white", 2.0)),
    Case("pink noise 2 s", lambda: noise("pink", 2.0)),
    Case("tones 2 s", lambda: noise("tones", 2.0)),
    Case("mm-hmm 200 ms", mm_hmm),
    Case("interruption (jfk.wav)", jfk, speech=True),
    Case("echo, no guard", None, bargein={"pause_on_candidate": False}, caller=ECHO),
    Case("echo, guard on", None, bargein={"echo_guard": True}, caller=ECHO),
    Case("interruption + echo, guard on", jfk, speech=True, bargein={"echo_guard": True},
         caller=ECHO),
)
QUICK_CASES = ("cough 100 ms", "interruption (jfk.wav)")


def _onset_s(audio: np.ndarray) -> float:
    """First 32 ms window above ONSET_DBFS (jfk.wav opens with ~0.35 s of near-silence)."""
    for i in range(0, len(audio), ONSET_WINDOW):
        if dbfs(audio[i:i + ONSET_WINDOW]) > ONSET_DBFS:
            return i / INPUT_RATE_HZ
    return 0.0


def read_case(case: Case, events: list[ev.Event], caller: BenchCaller,
              over_clip: Clip | None) -> dict[str, Any]:
    """The case's figures, from its event log and the agent frames the caller received."""
    fires = [e for e in events if isinstance(e, ev.StageMark) and e.stage == "barge_in"]
    firsts = [e for e in events if isinstance(e, ev.StageMark) and e.stage == "first_audio_out"]
    done = {e.response["id"]: e for e in events if isinstance(e, ev.ResponseDone)}
    paused = [e.detail.get("paused_ms", 0.0) for e in events
              if isinstance(e, ev.StageMark) and e.stage == "false_interruption"]
    onset = None
    if case.speech and over_clip is not None and over_clip.started_s is not None:
        onset = over_clip.started_s + _onset_s(over_clip.audio)
    real = [f for f in fires if onset is not None and f.ts >= onset]
    false_fires = len(fires) - min(1, len(real))
    row: dict[str, Any] = {"case": case.name, "fires": len(fires), "false_barge_ins": false_fires,
                           "paused_ms": round(sum(paused), 1),
                           "first_reply": (next(iter(done.values())).response["status"]
                                           if done else None),
                           "detect_ms": None, "audio_after_fire_ms": None, "stop_ms": None,
                           "cancel_compute_ms": None, "onset_silent_ms": None}
    if onset is not None:
        # the caller's onset -> the agent's audio stops (paused or cancelled): the end of the
        # frames handed out back to back from the onset on
        end = onset
        for at, d in sorted(caller.frames):
            if at + d <= end:
                continue
            if at > end + 1e-3:
                break
            end = at + d
        row["onset_silent_ms"] = round((end - onset) * 1000, 1)
    if real:
        fire = real[0]
        row["detect_ms"] = round((fire.ts - onset) * 1000, 1) if onset is not None else None
        # agent audio until the next reply starts: frames handed out at or after the fire are
        # audio the caller heard after interrupting; the frame in flight ends at most 20 ms on
        nxt = next((f.ts for f in firsts if f.ts > fire.ts), float("inf"))
        before = [(at, d) for at, d in caller.frames if at < nxt]
        row["audio_after_fire_ms"] = round(sum(d for at, d in before if at >= fire.ts) * 1000, 1)
        row["stop_ms"] = round(max(0.0, max((at + d for at, d in before), default=0.0) - fire.ts)
                               * 1000, 1)
        target = done.get(fire.response_id or "")
        if target is not None:
            row["cancel_compute_ms"] = round((target.perf - fire.perf) * 1000, 2)
    return row


def combine(name: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One row from repeated runs of a case: counts summed, times as medians (worst for the
    audio heard after a fire), and every run kept."""
    def med(key: str) -> float | None:
        v = median(r[key] for r in runs)
        return None if v is None else round(v, 2)

    heard = [r["audio_after_fire_ms"] for r in runs if r["audio_after_fire_ms"] is not None]
    stops = [r["stop_ms"] for r in runs if r["stop_ms"] is not None]
    return {"case": name, "runs": len(runs), "fires": sum(r["fires"] for r in runs),
            "false_barge_ins": sum(r["false_barge_ins"] for r in runs),
            "paused_ms": med("paused_ms"),
            "first_reply": "/".join(sorted({str(r["first_reply"]) for r in runs})),
            "detect_ms": med("detect_ms"), "audio_after_fire_ms": max(heard, default=None),
            "stop_ms": max(stops, default=None), "cancel_compute_ms": med("cancel_compute_ms"),
            "onset_silent_ms": med("onset_silent_ms"),
            "wall_s": round(sum(r["wall_s"] for r in runs), 1), "each_run": runs}


def run_bargein(stages: Any, base: cfg.Config, *, quick: bool = False, runs: int | None = None,
                progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Every case (the QUICK_CASES with `quick`), each `runs` times as a call on the simulated
    clock; one combined row per case."""
    runs = runs or (1 if quick else RUNS)
    scripted = dataclasses.replace(stages, llm=ScriptedLLM(replies=[LONG_REPLY]))
    question = speech(QUESTION)
    rows = []
    for case in CASES:
        if quick and case.name not in QUICK_CASES:
            continue
        if progress:
            progress(f"barge-in: {case.name}")
        config = cfg.apply(base, {"bargein": case.bargein}) if case.bargein else base
        each = []
        for _ in range(runs):
            scripted.llm = ScriptedLLM(replies=[LONG_REPLY, "Sure, go ahead."])
            clips = [Clip(question, 0.3)]
            if case.over is not None:
                clips.append(Clip(case.over(), None, after=after_stage("first_audio_out", 1),
                                  delay_s=INTERRUPT_DELAY_S, label=case.name))
            t0 = perf_s()
            events, caller, _ = one_call(config, scripted, clips, realtime=False, max_s=60.0,
                                         hang_up_after=("barge_in", AFTER_FIRE_S), **case.caller)
            over_clip = next((c for c in caller.clips if c.label == case.name), None)
            row = read_case(case, events, caller, over_clip)
            each.append(row | {"wall_s": round(perf_s() - t0, 1)})
        rows.append(combine(case.name, each))
    return rows


COLUMNS = (("case", "case"), ("runs", "runs"), ("fires", "fires (all runs)"),
           ("false_barge_ins", "false barge-ins (all runs)"), ("paused_ms", "paused (ms, median)"),
           ("first_reply", "first reply"), ("detect_ms", "detection delay (ms, median)"),
           ("audio_after_fire_ms", "audio after fire (ms, worst)"),
           ("stop_ms", "fire → playback stopped (ms, worst)"),
           ("onset_silent_ms", "onset → agent audio stops (ms, median)"),
           ("cancel_compute_ms", "cancel path compute (ms, median)"), ("wall_s", "run (s)"))


def main(argv: list[str] | None = None) -> int:
    from pipeline.call.session import Stages
    from pipeline.transports.runtime import add_config_args, load_config

    from .summary import markdown_table

    parser = argparse.ArgumentParser(prog="python -m bench.bargein", description=__doc__)
    add_config_args(parser)
    parser.add_argument("--quick", action="store_true", help="two cases, once each")
    args = parser.parse_args(argv)
    config = load_config(args)
    stages = Stages.load(config)
    print(markdown_table(run_bargein(stages, config, quick=args.quick), COLUMNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
