"""Per-turn stage timings, read from the event log (the log is the only instrumentation)."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import events as ev
from .events import Milestone

STAGES = ("speech_end", "stt_final", "turn_commit", "llm_first_token", "first_chunk",
          "tts_first_audio", "first_audio_out")


@dataclass
class TurnTiming:
    turn_id: str
    transcript: str = ""
    clock_s: dict[str, float] = field(default_factory=dict)  # session-clock time of each stage
    # real monotonic time each stage happened: a held (preemptive) response's events are
    # re-stamped on the session clock at commit, their perf stamp is when they were made
    perf_s: dict[str, float] = field(default_factory=dict)
    clock_minus_perf_s: float | None = None  # session clock - perf, read at commit (real clock only)
    compute_ms: dict[str, float] = field(default_factory=dict)  # real compute behind a stage
    response_id: str | None = None
    status: str | None = None
    preemptive: bool = False
    stt: dict[str, float] = field(default_factory=dict)  # the stt_final mark: passes, cadence

    def happened_s(self, stage: str) -> float | None:
        """On the real clock: when the stage really happened, in session-clock seconds."""
        if stage == "speech_end" or stage not in self.perf_s or self.clock_minus_perf_s is None:
            return self.clock_s.get(stage)
        return self.perf_s[stage] + self.clock_minus_perf_s


def turn_timings(events: list[ev.Event]) -> list[TurnTiming]:
    turns: dict[str, TurnTiming] = {}
    starts: dict[str, ev.StageMark] = {}
    resp_turn: dict[str, str] = {}
    commits: dict[str, float] = {}
    for e in events:
        if isinstance(e, ev.SpeechStopped):
            t = turns.setdefault(e.item_id, TurnTiming(e.item_id))
            t.clock_s["speech_end"] = e.audio_end_ms / 1000.0
        elif isinstance(e, ev.InputCommitted):
            commits[e.item_id] = e.perf
            t = turns.setdefault(e.item_id, TurnTiming(e.item_id))
            t.clock_s["turn_commit"] = e.ts
            t.perf_s["turn_commit"] = e.perf
            t.clock_minus_perf_s = e.ts - e.perf
            t.clock_s.setdefault("speech_end", e.audio_end_ms / 1000.0)
        elif isinstance(e, ev.TranscriptionCompleted) and e.item_id in turns:
            turns[e.item_id].transcript = e.transcript
            turns[e.item_id].clock_s["stt_final"] = e.ts
            turns[e.item_id].perf_s["stt_final"] = e.perf
        elif isinstance(e, ev.StageMark) and e.turn_id in turns:
            t = turns[e.turn_id]
            if e.stage is Milestone.STT_FINAL:
                t.compute_ms["stt_final"] = e.detail.get("final_compute_ms", 0.0)
                t.stt = dict(e.detail)
            elif e.stage is Milestone.RESPONSE_START:
                if e.response_id and t.response_id is None:
                    t.response_id = e.response_id
                    starts[e.response_id] = e
                    resp_turn[e.response_id] = e.turn_id
                    # made before the turn was committed: a speculation that was adopted
                    t.preemptive = e.perf < commits.get(e.turn_id, float("inf"))
            elif e.response_id == t.response_id and e.stage in STAGES and e.stage not in t.clock_s:
                t.clock_s[e.stage] = e.ts
                t.perf_s[e.stage] = e.perf
                start = starts.get(e.response_id) if e.response_id is not None else None
                if start is not None and e.stage is not Milestone.FIRST_AUDIO_OUT:
                    t.compute_ms[e.stage] = (e.perf - start.perf) * 1000.0
        elif isinstance(e, ev.ResponseDone) and e.response["id"] in resp_turn:
            turns[resp_turn[e.response["id"]]].status = e.response["status"]
    return [t for t in turns.values() if "turn_commit" in t.clock_s]


def format_table(t: TurnTiming, *, real_clock: bool) -> str:
    """The turn's stages. On the real clock each is placed when it happened and the wait after
    the caller's last word is shown; on the simulated clock model compute takes no time, so no
    wait is shown at all (it would be the policy's silence alone, never what a caller waits)."""
    if real_clock:
        head = f"  {'stage':<17}{'happened at':>13}{'after speech end':>19}{'compute':>11}"
        legend = ["  happened at: seconds into the call, real clock (a held reply's stages included)",
                  "  after speech end: what the caller waited after their last word",
                  "  compute: real ms of the STT final pass(es); for reply stages, since the reply began"]
    else:
        head = f"  {'stage':<17}{'sim clock':>13}{'compute':>11}"
        legend = ["  sim clock: simulated seconds, in which model compute takes no time: these are",
                  "    no latencies (run with --realtime, as `make demo` does, for what a caller waits)",
                  "  compute: real ms of the STT final pass(es); for reply stages, since the reply began"]
    lines = [head]
    speech_end = t.clock_s.get("speech_end")
    for stage in STAGES:
        at = t.happened_s(stage) if real_clock else t.clock_s.get(stage)
        if at is None:
            continue
        comp = t.compute_ms.get(stage)
        row = f"  {stage:<17}{at:>12.3f}s"
        if real_clock:
            after = None if speech_end is None else (at - speech_end) * 1000.0
            row += f"{'' if after is None else f'{after:>+16.0f} ms':>19}"
        lines.append(row + f"{'' if comp is None else f'{comp:>8.0f} ms':>11}")
    lines += legend
    if t.stt:
        lines.append(f"  partial transcripts: {t.stt.get('partial_passes', 0)} passes, "
                     f"{t.stt.get('partials_skipped', 0)} skipped while one ran, "
                     f"{t.stt.get('partial_cadence_hz', 0)} per second of speech")
    return "\n".join(lines)
