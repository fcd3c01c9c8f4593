"""The composition root: one call's parts, wired together, started and closed as one.

A session is made of owners with one job each (see docs/architecture.md):

    InputPath    caller audio in: pickup, in-order inbox, echo guard, history, VAD windows
    BargeIn      the gate over agent playback: pause on a candidate, interrupt when it fires
    TurnTaking   speech start/stop, streaming transcription, end of turn, speculation
    Responder    one response at a time, what the caller heard
    ToolDesk     tool calls, bound results, replies about them, reminders, the ledger's `told`
    CallControl  end_call and the close state machine
    ClientControl  the facade a transport uses to change the session

The event loop only routes: model inference runs in threads (`clock.run_in_thread`), except the
Silero window. Everything is timed on one clock, so the same code runs a scripted call in
simulated time and a live call in real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..base import events as ev
from ..base.clock import Clock, cancel_and_wait
from ..base.config import Config, build_stage
from ..base.conversation import Conversation
from ..base.listeners import Ordered
from ..base.protocols import (
    LLM,
    STT,
    TTS,
    VAD,
    AudioSink,
    BufferedSink,
    Completeness,
    EchoReferenceSink,
    PlayedAudioPhase,
)
from ..stages.playback import Playback
from ..tools import ToolRegistry
from ..tools.runner import Query
from .callctl import CallControl
from .client import ClientControl
from .core import Listener, SessionCore
from .desk import ToolDesk
from .hearing import Hearing
from .input_path import CallerFramePhase, InputPath, WindowPhase
from .interruption import BargeIn
from .prefill import Prefill
from .responder import Responder
from .response import Response
from .response_modes import DEFAULT_MODES, ResponseModes
from .turn_taking import TurnTaking


@dataclass
class Stages:
    """The loaded stage objects; `load` builds each from its entry point."""

    vad: VAD
    stt: STT
    completeness: Completeness
    llm: LLM
    tts: TTS

    @classmethod
    def load(cls, config: Config, *, progress: Callable[[str], None] | None = None) -> Stages:
        built: dict[str, Any] = {}
        for kind in ("vad", "stt", "llm", "tts", "turns"):
            if progress:
                progress(f"loading {kind}: {config.stage(kind).name}")
            built[kind] = build_stage(kind, config.stage(kind), llm=built.get("llm"))
        return cls(vad=built["vad"], stt=built["stt"], completeness=built["turns"],
                   llm=built["llm"], tts=built["tts"])


class Session:
    # the parts a subclass may replace (bench/sequential.py: the benchmark's sequential baseline)
    turn_taking: type[TurnTaking] = TurnTaking
    response_modes: ResponseModes = DEFAULT_MODES

    def __init__(self, config: Config, stages: Stages, *, clock: Clock, sink: AudioSink,
                 events: ev.EventLog | None = None) -> None:
        # a session changes its own settings (session.update): never those of its caller
        self.core = core = SessionCore(replace(config), clock, events)
        self.stages = stages
        self.sink = sink
        self.input = InputPath(core, stages.vad, echo_guard=config.bargein.echo_guard,
                               agent_rate_hz=stages.tts.sample_rate_hz)
        # a sink that buffers (a socket, a sound card) gets frames a little ahead of time
        self.playback = Playback(clock, sink, stages.tts.sample_rate_hz, on_failure=core.listener_failed,
                                 lead_s=sink.lead_s if isinstance(sink, BufferedSink) else 0.0)
        if self.input.echo is not None:
            if isinstance(sink, EchoReferenceSink):  # the device knows when each block sounds
                sink.on_reference.add(self.input.echo.push_reference, PlayedAudioPhase.ECHO_GUARD)
            else:
                self.playback.on_audio.add(self.input.on_reference, PlayedAudioPhase.ECHO_GUARD)
        self.control = self._call_control(CallControl)
        self.tools = ToolDesk(core, self.control)
        self.responder = Responder(core, llm=stages.llm, tts=stages.tts, playback=self.playback,
                                   tools=self.tools, caller_speaking=lambda: self.turns.caller_speaking,
                                   line_open=lambda: not self.control.closed, modes=self.response_modes)
        self.tools.bind(self.responder)
        self.turns = self.turn_taking(core, stt=stages.stt, completeness=stages.completeness,
                                      playback=self.playback, responder=self.responder,
                                      control=self.control, history_since=self.input.history_since,
                                      now_ms=lambda: self.input.now_ms)
        self.turns.context = Hearing(core, self.tools.specs).prompt
        self.bargein = BargeIn(core, playback=self.playback, turns=self.turns, responder=self.responder)
        self.prefill = Prefill(core, llm=stages.llm, responder=self.responder, playback=self.playback,
                               turns=self.turns)
        self.input.on_frame.add(self.turns.on_frame, CallerFramePhase.TURNS)
        self.input.on_window.add(self.bargein.on_window, WindowPhase.GATE)
        self.input.on_window.add(self.turns.on_window, WindowPhase.TURNS)
        self.client = ClientControl(core, input_path=self.input, turns=self.turns, bargein=self.bargein,
                                    responder=self.responder, tools=self.tools, playback=self.playback)
        self._loops: list[asyncio.Future[Any]] = []

    def _call_control(self, cls: type[CallControl]) -> CallControl:
        return cls(self.core, playback=self.playback, sink=self.sink, llm=self.stages.llm,
                   find_response=lambda rid: self.responder.response_by_id(rid),
                   caller_speaking=lambda: self.turns.caller_speaking)

    def use_call_control(self, cls: type[CallControl]) -> CallControl:
        """Replace the close state machine (before the call starts), e.g. with a subclass."""
        self.control = self.turns.control = self.tools.control = self._call_control(cls)
        if self.tools.runner is not None:
            self.tools.runner.control = self.control
        return self.control

    def use_tools(self, registry: ToolRegistry, *, ledger: Any = None,
                  queries: dict[str, Query] | None = None) -> None:
        """Offer these tools to the model; side-effecting ones go through `ledger`."""
        self.tools.use(registry, ledger=ledger, queries=queries)

    # --- shared services, for transports and tests ------------------------------------------------

    @property
    def config(self) -> Config:
        return self.core.config

    @property
    def clock(self) -> Clock:
        return self.core.clock

    @property
    def events(self) -> ev.EventLog:
        return self.core.events

    @property
    def listeners(self) -> Ordered[Listener]:
        """The session's event listeners: `listeners.add(fn, ev.EventPhase.OBSERVER)`."""
        return self.core.listeners

    @property
    def conversation(self) -> Conversation:
        return self.core.conversation

    @property
    def responses(self) -> list[Response]:
        return self.responder.responses

    def emit(self, event: ev.Event) -> None:
        self.core.emit(event)

    def log(self, message: str, *, level: str = "info") -> None:
        self.core.log(message, level=level)

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the input and playback loops (call from inside the event loop)."""
        self._loops = [asyncio.ensure_future(self.input.run()), asyncio.ensure_future(self.playback.run())]
        for task in self._loops:  # a crashed input or playback loop must not go unnoticed
            task.add_done_callback(self.core.report_crash)
        self.emit(ev.SessionCreated(session=self.client.describe()))

    @property
    def ready(self) -> bool:
        return self.input.ready

    def mark_ready(self) -> None:
        """Models and client are ready: flush held frames, in order, ahead of live ones."""
        self.input.mark_ready()

    def push_audio(self, frame: np.ndarray) -> None:
        """A 16 kHz mono float32 frame from the transport; cheap and non-blocking."""
        self.input.push_audio(frame)

    @property
    def idle(self) -> bool:
        """Nothing in flight: no open turn, no response, no pending work, speaker drained."""
        return (self.turns.turn is None and self.responder.active is None and not self.core.tasks
                and self.input.drained and self.playback.drained.is_set())

    async def close(self) -> None:
        """Stop everything this session runs: the response, the open turn's passes, every task."""
        self.prefill.close()
        if self.responder.active is not None:
            self.responder.active.cancel("client_cancelled")
        await self.turns.aclose()
        await cancel_and_wait(*self.core.tasks, *self._loops)

    def release(self) -> None:
        """After `close()`: let go of the audio, the listeners and the links between the owners
        now. The owners refer to each other (and a transport to its session), so without this a
        closed session's buffers would wait for Python's cyclic collector; a server running
        many calls calls this as each ends. The conversation and the event log stay readable."""
        self.input.release()
        self.playback.release()
        self.core.drop_listeners()
        self.turns.release()
        self.bargein.release()
