"""Per-turn stage times read from a call's event log (the log is the only instrumentation).

`pipeline.base.metrics.turn_timings` finds each committed turn and the response that answered it;
this module adds what a latency benchmark needs on the real clock:

- Every stage is placed by its `perf` stamp (real monotonic time when the event was made), moved
  onto the session clock. `ts` is not enough: a preemptive response's events are held and
  re-stamped with `ts` when adopted at commit, but their `perf` still says when they happened.
- Times are milliseconds after the end of speech (the committed turn's `audio_end_ms`), so a
  negative value means "before the caller stopped talking".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.base import events as ev
from pipeline.base.metrics import turn_timings

# Rows of the stage table, in pipeline order. The response stages are the session's StageMarks.
RESPONSE_STAGES = ("response_start", "llm_first_token", "first_chunk", "tts_first_audio",
                   "first_audio_out")
STAGES = ("vad_stop", "stt_final", "turn_commit", *RESPONSE_STAGES)
STAGE_LABELS = {
    "vad_stop": "VAD speech-stop",
    "stt_final": "STT final ready",
    "turn_commit": "turn commit",
    "response_start": "response start",
    "llm_first_token": "LLM first token",
    "first_chunk": "first chunk ready",
    "tts_first_audio": "TTS first audio",
    "first_audio_out": "first audio out",
}


@dataclass
class TurnReadout:
    """One committed turn of one call: when each stage happened, and what each model cost."""

    turn_id: str
    transcript: str = ""
    status: str | None = None
    clip: str = ""
    mode: str = ""
    commit_reason: str | None = None
    speech_s: float = 0.0  # committed span, prefix padding included (what the final pass reads)
    at_ms: dict[str, float] = field(default_factory=dict)  # stage -> ms after end of speech
    stt_compute_ms: float | None = None  # every final pass of the turn, from the stt_final mark
    finals_discarded: int = 0  # final passes made stale by a resumed caller (one per pause)
    partial_cadence_hz: float | None = None  # partial passes per second of speech (budget-aware)
    partials_skipped: int = 0  # partial ticks skipped because a pass was still running
    llm_tokens: int | None = None  # response.done usage (all of them only if generation ended)
    llm_finished: bool = False  # generation ran to its end before the log closed
    first_chunk_text: str = ""
    tts_first_audio_s: float | None = None  # audio length of the first synthesized chunk
    # each speculation on the turn, in order: (source, outcome), e.g. ("partial", "adopted")
    speculations: list[tuple[str, str]] = field(default_factory=list)

    # --- derived ------------------------------------------------------------------------------

    def span_ms(self, a: str, b: str) -> float | None:
        if a not in self.at_ms or b not in self.at_ms:
            return None
        return self.at_ms[b] - self.at_ms[a]

    @property
    def end_to_audio_ms(self) -> float | None:
        return self.at_ms.get("first_audio_out")

    @property
    def commit_to_audio_ms(self) -> float | None:
        return self.span_ms("turn_commit", "first_audio_out")

    @property
    def llm_prompt_ms(self) -> float | None:
        """Request to first token: prompt evaluation plus the thread hand-off."""
        return self.span_ms("response_start", "llm_first_token")

    @property
    def tts_first_ms(self) -> float | None:
        """Synthesis of the first chunk (the TTS thread is idle when the first chunk arrives)."""
        return self.span_ms("first_chunk", "tts_first_audio")

    @property
    def stt_rtf(self) -> float | None:
        """Only for a turn with one final pass: the logged compute sums all of them."""
        if self.stt_compute_ms is None or self.speech_s <= 0 or self.finals_discarded:
            return None
        return self.stt_compute_ms / 1000.0 / self.speech_s

    @property
    def tts_rtf(self) -> float | None:
        if self.tts_first_ms is None or not self.tts_first_audio_s:
            return None
        return self.tts_first_ms / 1000.0 / self.tts_first_audio_s

    @property
    def llm_tokens_per_s(self) -> float | None:
        """Decode speed, only where the log brackets the whole generation: in sequential mode
        the first chunk is made after the last token, so first token -> first chunk is
        (tokens - 1) decode steps. In streaming modes the first chunk comes mid-generation."""
        span = self.span_ms("llm_first_token", "first_chunk")
        if self.mode != "sequential" or not self.llm_finished or not self.llm_tokens or not span:
            return None
        return (self.llm_tokens - 1) / (span / 1000.0) if self.llm_tokens > 1 else None

    def metrics(self) -> dict[str, float | None]:
        """Every number the summary aggregates, by name."""
        out: dict[str, float | None] = {s: self.at_ms.get(s) for s in STAGES}
        out |= {"end_to_audio_ms": self.end_to_audio_ms,
                "commit_to_audio_ms": self.commit_to_audio_ms,
                "stt_compute_ms": self.stt_compute_ms, "stt_rtf": self.stt_rtf,
                "partial_cadence_hz": self.partial_cadence_hz,
                "partials_skipped": float(self.partials_skipped),
                "llm_prompt_ms": self.llm_prompt_ms, "llm_tokens_per_s": self.llm_tokens_per_s,
                "tts_first_ms": self.tts_first_ms, "tts_rtf": self.tts_rtf}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"clip": self.clip, "mode": self.mode, "turn_id": self.turn_id,
                "transcript": self.transcript, "status": self.status,
                "commit_reason": self.commit_reason, "speech_s": round(self.speech_s, 3),
                "finals_discarded": self.finals_discarded,
                "first_chunk_text": self.first_chunk_text, "llm_tokens": self.llm_tokens,
                "llm_finished": self.llm_finished, "tts_first_audio_s": self.tts_first_audio_s,
                "speculations": [list(s) for s in self.speculations],
                **{k: None if v is None else round(v, 3) for k, v in self.metrics().items()}}


def clock_offset_s(events: list[ev.Event]) -> float:
    """ts - perf for events emitted when made. Held events are re-stamped later, never earlier,
    so the smallest difference is the offset between the two clocks."""
    return min(e.ts - e.perf for e in events)


def read_turns(events: list[ev.Event], *, sequential: bool) -> list[TurnReadout]:
    """One readout per committed turn. `sequential`: the final STT pass starts at commit (the
    baseline) rather than at VAD speech-stop; the log marks its compute, not its start."""
    if not events:
        return []
    offset = clock_offset_s(events)

    def at(e: ev.Event) -> float:
        return e.perf + offset

    stopped: dict[str, ev.SpeechStopped] = {}
    commits: dict[str, ev.InputCommitted] = {}
    marks: dict[tuple[str | None, str], ev.StageMark] = {}
    stt_marks: dict[str, ev.StageMark] = {}
    completed: dict[str, ev.TranscriptionCompleted] = {}
    done: dict[str, ev.ResponseDone] = {}
    rates: dict[str, int] = {}
    speculations: dict[str, list[tuple[str, str]]] = {}
    for e in events:
        if isinstance(e, ev.SpeechStopped):
            stopped[e.item_id] = e  # the last stop of a turn is the one its final transcribes
        elif isinstance(e, ev.InputCommitted):
            commits[e.item_id] = e
        elif isinstance(e, ev.TranscriptionCompleted):
            completed[e.item_id] = e
        elif isinstance(e, ev.StageMark) and e.stage == "stt_final" and e.turn_id:
            stt_marks[e.turn_id] = e
        elif isinstance(e, ev.StageMark) and e.stage == "speculation":
            speculations.setdefault(e.turn_id or "", []).append(
                (str(e.detail.get("source")), str(e.detail.get("outcome"))))
        elif isinstance(e, ev.StageMark):
            marks.setdefault((e.response_id, e.stage), e)
        elif isinstance(e, ev.ResponseDone):
            done[e.response["id"]] = e
        elif isinstance(e, ev.OutputAudioDelta):
            rates.setdefault(e.response_id, e.sample_rate_hz)

    out = []
    for timing in turn_timings(events):
        commit = commits.get(timing.turn_id)
        if commit is None:
            continue
        end_s = commit.audio_end_ms / 1000.0
        r = TurnReadout(turn_id=timing.turn_id, transcript=timing.transcript, status=timing.status,
                        commit_reason=commit.reason,
                        speech_s=(commit.audio_end_ms - commit.audio_start_ms) / 1000.0,
                        speculations=speculations.get(timing.turn_id, []))

        def put(stage: str, t_s: float, r: TurnReadout = r, end_s: float = end_s) -> None:
            r.at_ms[stage] = (t_s - end_s) * 1000.0

        put("turn_commit", at(commit))
        stop = stopped.get(timing.turn_id)
        if stop is not None:
            put("vad_stop", at(stop))
        stt = stt_marks.get(timing.turn_id)
        if stt is not None:
            r.stt_compute_ms = float(stt.detail.get("final_compute_ms", 0.0))
            r.finals_discarded = int(stt.detail.get("finals_discarded", 0))
            r.partial_cadence_hz = stt.detail.get("partial_cadence_hz")
            r.partials_skipped = int(stt.detail.get("partials_skipped", 0))
            start = commit if sequential or stop is None else stop
            ready = at(start) + r.stt_compute_ms / 1000.0
            done_at = completed.get(timing.turn_id)
            # the compute sums every final pass of the turn, so with discarded ones start +
            # compute runs late; the transcript is published at commit or as soon as it is ready
            if done_at is not None:
                ready = min(ready, at(done_at))
            put("stt_final", ready)
        rid = timing.response_id
        for stage in RESPONSE_STAGES:
            mark = marks.get((rid, stage))
            if mark is not None:
                put(stage, at(mark))
        first_chunk = marks.get((rid, "first_chunk"))
        if first_chunk is not None:
            r.first_chunk_text = str(first_chunk.detail.get("text", ""))
        tts_first = marks.get((rid, "tts_first_audio"))
        if tts_first is not None and rid in rates and "samples" in tts_first.detail:
            r.tts_first_audio_s = tts_first.detail["samples"] / rates[rid]
        if rid is not None and rid in done:
            r.llm_tokens = int(done[rid].response.get("usage", {}).get("output_tokens", 0))
            # cancelled after the first chunk in sequential mode means after the last token
            r.llm_finished = done[rid].response["status"] == "completed" or (
                sequential and first_chunk is not None)
        out.append(r)
    return out
