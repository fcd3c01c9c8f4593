"""Run a scripted call in simulated time and read what happened, like a call transcript."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline import config as cfg
from pipeline import events as ev
from pipeline.clock import RealClock, SimClock
from pipeline.session import Session, Stages
from pipeline.transports.scripted import Clip, ScriptedCaller


@dataclass
class CallRecord:
    session: Session
    caller: ScriptedCaller
    events: list[ev.Event]

    def of(self, *types: str) -> list[ev.Event]:
        return [e for e in self.events if e.type in types]

    def stages(self, name: str) -> list[ev.StageMark]:
        return [e for e in self.events if isinstance(e, ev.StageMark) and e.stage == name]

    @property
    def transcripts(self) -> list[str]:
        return [e.transcript for e in self.of("conversation.item.input_audio_transcription.completed")]

    @property
    def commits(self) -> list[ev.InputCommitted]:
        return self.of("input_audio_buffer.committed")  # type: ignore[return-value]

    @property
    def done(self) -> list[ev.ResponseDone]:
        return self.of("response.done")  # type: ignore[return-value]

    def agent_audio_after(self, t_s: float) -> float:
        """Seconds of agent audio written at or after clock time t_s."""
        return sum(len(x) / r for at, x, r in self.caller._agent if at >= t_s - 1e-9)


def make_config(**sections: dict[str, Any]) -> cfg.Config:
    return cfg.apply(cfg.Config.default(), sections) if sections else cfg.Config.default()


def with_stages(base: Stages, **replace: Any) -> Stages:
    """The loaded real stages with some swapped for fakes."""
    fields = dict(vad=base.vad, stt=base.stt, completeness=base.completeness, llm=base.llm, tts=base.tts)
    fields.update(replace)
    return Stages(**fields)


async def _run(config: cfg.Config, stages: Stages, caller: ScriptedCaller, realtime: bool) -> CallRecord:
    clock = RealClock() if realtime else SimClock()
    log = ev.EventLog()
    stages.vad.reset()
    session = Session(config, stages, clock=clock, sink=caller, events=log)
    driver = asyncio.ensure_future(clock.drive()) if isinstance(clock, SimClock) else None
    try:
        session.start()
        await caller.run(session, clock)
        await session.close()
    finally:
        if driver is not None:
            driver.cancel()
    return CallRecord(session, caller, log.events)


def call(stages: Stages, clips: list[Clip] | list[np.ndarray], *, config: cfg.Config | None = None,
         realtime: bool = False, **caller_kwargs: Any) -> CallRecord:
    """Clips (or arrays played back to back from t=0) through a session; returns the record."""
    if clips and isinstance(clips[0], np.ndarray):
        clips = [Clip(np.concatenate(clips), at_s=0.0)]  # type: ignore[arg-type]
    caller = ScriptedCaller(list(clips), **caller_kwargs)  # type: ignore[arg-type]
    return asyncio.run(_run(config or cfg.Config.default(), stages, caller, realtime))
