"""The scenario's caller on the line: a `ScriptedCaller` whose lines start on what the agent does.

Each line waits for its trigger from the moment the line before it starts: "after the next
response is done", "when the words 'goodbye' start to sound", "once the last line has ended".
The caller also keeps what the agent played, when, and who ended the call.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

import numpy as np

from pipeline.base import events as ev
from pipeline.base.audio import FRAME_SAMPLES, INPUT_RATE_HZ, dbfs
from pipeline.base.clock import Clock
from pipeline.base.protocols import CallInput
from pipeline.transports.scripted import Clip, ScriptedCaller

from .scenario import Line

SOUND_DBFS = -45.0  # a 20 ms frame this loud is someone talking


@dataclass
class _Pending:
    line: Line
    clip: Clip
    seen: int = 0
    said_at: dict[str, float] = field(default_factory=dict)  # agent_said: response -> offset (s)


class ScenarioCaller:
    """A Transport: plays the lines' clips (one per line) and ends the call as the script says."""

    def __init__(self, lines: list[Line], clips: list[Clip], *, tail_s: float, max_s: float) -> None:
        self.lines = lines
        self.clips = list(clips)  # the lines' own; `inner.clips` may gain more (an LLM-played caller's)
        self.inner = ScriptedCaller(clips, tail_s=tail_s, max_s=max_s)
        self.pending = [_Pending(line, clip) for line, clip in zip(lines, clips, strict=True)]
        self.agent_frames: list[tuple[float, float, bool]] = []  # (at_s, seconds, audible)
        self.first_audio: dict[str, float] = {}  # response id -> when it first sounded
        self.call_names: dict[str, str] = {}  # call id -> tool name
        self.generated: dict[str, float] = {}  # response id -> seconds of audio made so far
        self.ended_by = "script"
        self.ended_at_s: float | None = None
        self.clock: Clock | None = None
        for p in self.pending:
            if p.line.at_s is not None:
                p.clip.at_s = p.line.at_s
        if self.pending and self.pending[0].clip.at_s is None and self.pending[0].line.after is None:
            self.pending[0].clip.at_s = 0.3  # the first line, unless told otherwise: just after pickup

    # --- AudioSink / HangUpSink ---------------------------------------------------------------
    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self.agent_frames.append((at_s, len(samples) / rate_hz, dbfs(samples) > SOUND_DBFS))
        self.inner.write_output(samples, rate_hz, at_s)

    def hang_up(self) -> None:  # the agent ends the call
        if self.ended_at_s is None:
            self.ended_by, self.ended_at_s = "agent", self._now()
        self.inner.hang_up()

    def save(self, path, *, rate_hz: int = 16_000) -> None:
        self.inner.save(path, rate_hz=rate_hz)

    def _now(self) -> float:
        return self.clock.now() if self.clock is not None else 0.0

    # --- triggers -----------------------------------------------------------------------------
    def _armed(self, i: int, ts: float) -> bool:
        """Line i listens once the line before it has started (the first: from the start)."""
        if i == 0:
            return True
        before = self.pending[i - 1].clip
        return before.at_s is not None and ts >= before.at_s - 1e-9

    def _start(self, p: _Pending, at_s: float) -> None:
        if p.clip.at_s is None:
            p.clip.at_s = max(at_s, self._now()) + p.line.delay_s

    def on_event(self, e: ev.Event) -> None:
        if isinstance(e, ev.StageMark) and e.stage == "first_audio_out" and e.response_id:
            self.first_audio.setdefault(e.response_id, e.ts)
        if isinstance(e, ev.FunctionCallArgumentsDone):
            self.call_names[e.call_id] = e.name
        if isinstance(e, ev.OutputAudioDelta):
            self.generated[e.response_id] = self.generated.get(e.response_id, 0.0) + len(e.delta) / e.sample_rate_hz
        for i, p in enumerate(self.pending):
            if p.clip.at_s is not None or not self._armed(i, e.ts):
                continue
            kind, arg, nth = p.line.trigger
            if kind == "agent_said":
                self._agent_said(p, arg, e)
                continue
            if _matches(kind, arg, e, self.call_names):
                p.seen += 1
                if p.seen == nth:
                    self._start(p, e.ts)

    def _agent_said(self, p: _Pending, pattern: str, e: ev.Event) -> None:
        """Starts the line when the chunk with those words starts to sound: its offset in the
        response's audio, from the moment the response first sounded."""
        if isinstance(e, ev.OutputTranscriptDelta) and e.response_id not in p.said_at:
            if re.search(pattern, e.delta, re.IGNORECASE):
                p.said_at[e.response_id] = self.generated.get(e.response_id, 0.0)  # its audio follows
        for rid, offset in p.said_at.items():
            if rid in self.first_audio:
                self._start(p, self.first_audio[rid] + offset)
                return

    async def run(self, session: CallInput, clock: Clock) -> None:
        self.clock = clock
        session.listeners.add(self.on_event, ev.EventPhase.OBSERVER)
        watch = asyncio.ensure_future(self._watch(clock))
        try:
            await self.inner.run(session, clock)
        finally:
            watch.cancel()
        if self.ended_at_s is None:
            self.ended_at_s = self.inner.fed_s
            if self.inner.fed_s >= self.inner.max_s:
                self.ended_by = "cap"

    async def _watch(self, clock: Clock) -> None:
        """Starts `line_end` lines when the line before ends; hangs up on a hang_up line."""
        step = FRAME_SAMPLES / INPUT_RATE_HZ
        while True:
            await clock.sleep(step)
            now = clock.now()
            for i, p in enumerate(self.pending):
                kind = p.line.trigger[0]
                if p.clip.at_s is None and kind in ("line_end", "start") and i and self._armed(i, now):
                    before = self.pending[i - 1].clip
                    if before.at_s is not None:  # armed: the line before has started
                        self._start(p, before.at_s + len(before.audio) / INPUT_RATE_HZ)
                if p.line.hang_up and p.clip.at_s is not None and now >= p.clip.at_s and not self.inner.hung_up:
                    self.ended_by, self.ended_at_s = "caller", now
                    self.inner.hang_up()


def _matches(kind: str, arg: str, e: ev.Event, call_names: dict[str, str]) -> bool:
    if kind == "response_done":
        return isinstance(e, ev.ResponseDone)
    if kind in ("heard_in_full", "first_audio_out", "barge_in"):
        return isinstance(e, ev.StageMark) and e.stage == kind
    if kind == "speech_stopped":
        return isinstance(e, ev.SpeechStopped)
    if kind == "tool_called":
        return isinstance(e, ev.FunctionCallArgumentsDone) and (not arg or e.name == arg)
    if kind == "tool_result":
        return (isinstance(e, ev.ItemCreated) and e.item.get("type") == "function_call_output"
                and (not arg or call_names.get(e.item.get("call_id", "")) == arg))
    return False
