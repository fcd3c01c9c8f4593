"""One scripted call per measurement, through the CLI's own `run_call`."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.call.session import Session
from pipeline.transports.runtime import run_call
from pipeline.transports.scripted import Clip, ScriptedCaller

from . import sequential

# The tests' habit (tests/test_bargein.py): the caller starts 0.3 s into the call, so VAD and the
# prefix padding see silence before the first word.
LEAD_IN_S = 0.3
# Quiet time after the conversation settles before the caller hangs up (only reached when no
# reply comes, e.g. nothing was heard); 0.5 s is well past the 160 ms speech-stop confirmation.
TAIL_S = 0.5

# Each mode's response settings, and the session it runs in: the sequential baseline is a
# session of its own (bench/sequential.py), the others are the pipeline's.
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "sequential": sequential.SETTINGS,
    "streaming": {"preemptive": False},
    "streaming+preemptive": {"preemptive": True},
}
MODE_SESSIONS: dict[str, type[Session]] = {"sequential": sequential.SequentialSession}


def mode_config(base: cfg.Config, mode: str) -> cfg.Config:
    return cfg.apply(base, {"response": MODE_SETTINGS[mode]})


def session_for(mode: str) -> type[Session]:
    """The session class a mode (or a variant named like one) runs in."""
    return MODE_SESSIONS.get(mode, Session)


class BenchCaller(ScriptedCaller):
    """A scripted caller that hangs up `delay_s` after a stage mark ("a|b": the first of either;
    e.g. the agent's first audio,
    the last stage the latency benchmark times: the rest of the reply would play in real time and
    measure nothing), and notes when each agent frame was handed to the speaker."""

    def __init__(self, clips: list[Clip], *, hang_up_after: tuple[str, float] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(clips, **kwargs)
        self.hang_up_after = hang_up_after
        self.frames: list[tuple[float, float]] = []  # (at_s, seconds) of each agent frame
        self._clock: Any = None
        self._pending: set[asyncio.Future[None]] = set()

    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        self.frames.append((at_s, len(samples) / rate_hz))
        super().write_output(samples, rate_hz, at_s)

    async def run(self, session: Any, clock: Any) -> None:
        self._clock = clock
        if self.hang_up_after is not None:
            session.listeners.add(self._watch, ev.EventPhase.OBSERVER)
        try:
            await super().run(session, clock)
        finally:
            for task in self._pending:
                task.cancel()

    def _watch(self, e: ev.Event) -> None:
        assert self.hang_up_after is not None
        stage, delay_s = self.hang_up_after
        if not (isinstance(e, ev.StageMark) and e.stage in stage.split("|")) or self._pending:
            return
        if delay_s <= 0:
            self.hang_up()
            return

        async def later() -> None:
            await self._clock.sleep(delay_s)
            self.hang_up()

        self._pending.add(asyncio.ensure_future(later()))


def prime_llm(llm: Any, instructions: str) -> None:
    """Leave the LLM as a server that has just answered some other call: the system prompt in
    its cache, the caller's words not. llama.cpp reuses the longest prompt prefix it shares with
    the previous request, so without this the second mode run on a clip would find its whole
    prompt already evaluated."""
    cancel = threading.Event()
    messages = [{"role": "system", "content": instructions}, {"role": "user", "content": "Hello."}]
    for _ in llm.stream(messages, cancel=cancel):
        cancel.set()


def settle(stages: Any) -> None:
    """Wait for model threads still finishing a cancelled job (a synthesis or a partial pass
    cannot be interrupted): each model holds its lock while it runs, so taking it waits them
    out, and the next call does not queue behind the last one."""
    for stage in (stages.stt, stages.llm, stages.tts):
        lock = getattr(stage, "lock", None) or getattr(stage, "_lock", None)
        if lock is not None and hasattr(lock, "acquire"):
            with lock:
                pass


def one_call(config: cfg.Config, stages: Any, clips: list[Clip], *, realtime: bool,
             hang_up_after: tuple[str, float] | None = None, max_s: float = 60.0,
             session_class: type[Session] = Session,
             **caller_kwargs: Any) -> tuple[list[ev.Event], BenchCaller, Any]:
    """Run a call to its end; returns its event log, the caller (agent frame times) and the
    session (for what the log does not carry, e.g. a reply's full text). `session_class`:
    `session_for(mode)` (the sequential baseline's own session)."""
    caller = BenchCaller([dataclasses.replace(c) for c in clips], tail_s=TAIL_S, max_s=max_s,
                         hang_up_after=hang_up_after, **caller_kwargs)
    if hasattr(stages.vad, "reset"):
        stages.vad.reset()
    result = asyncio.run(run_call(config, stages, caller, realtime=realtime, session_class=session_class))
    settle(stages)
    return result.events.events, caller, result.session
