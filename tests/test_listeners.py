"""Listeners (of events, caller frames, VAD windows, played frames): called in their declared
order, and one that fails does not break the call.

The call here runs on fakes (a loudness VAD, scripted STT and LLM, a tone voice), so it needs no
models."""

from __future__ import annotations

import logging
from enum import IntEnum

import numpy as np
import pytest

from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.base.clock import SimClock
from pipeline.base.config import Config
from pipeline.base.listeners import Ordered
from pipeline.call.core import SessionCore
from pipeline.call.input_path import CallerFramePhase, WindowPhase
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.stages.playback import FramePhase
from pipeline.testing import call
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

REPLY = "Checkout is at eleven. Late checkout is free for members. Anything else?"


class LoudVAD:
    """Voice = loud enough: the caller here is a tone."""

    def probability(self, window: np.ndarray) -> float:
        return 0.95 if dbfs(window) > -35 else 0.02

    def fork(self) -> LoudVAD:
        return LoudVAD()


def fake_stages() -> Stages:
    return Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["What time is checkout?"]),
                  completeness=HeuristicCompleteness(), llm=ScriptedLLM(replies=[REPLY]),
                  tts=ToneTTS(ms_per_char=30.0))


def caller_tone(seconds: float = 1.2) -> np.ndarray:
    t = np.arange(int(seconds * INPUT_RATE_HZ)) / INPUT_RATE_HZ
    return (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)


class Phase(IntEnum):
    EARLY = 0
    LATE = 1


def test_ordered_listeners_are_called_by_phase_then_in_the_order_added():
    calls: Ordered = Ordered(Phase)
    calls.add("late 1", Phase.LATE)  # type: ignore[arg-type]
    calls.add("early 1", Phase.EARLY)  # type: ignore[arg-type]
    calls.add("late 2", Phase.LATE)  # type: ignore[arg-type]
    calls.add("early 2", Phase.EARLY)  # type: ignore[arg-type]
    assert list(calls) == ["early 1", "early 2", "late 1", "late 2"]
    with pytest.raises(TypeError):
        calls.add(print, WindowPhase.GATE)  # another list's phase


def test_the_session_wires_the_gate_before_turn_taking_and_its_own_bookkeeping_first():
    from pipeline.call.session import Session
    from pipeline.transports.scripted import ScriptedCaller

    session = Session(Config.default(), fake_stages(), clock=SimClock(), sink=ScriptedCaller([]))
    assert list(session.input.on_window) == [session.bargein.on_window, session.turns.on_window]
    assert list(session.input.on_frame) == [session.turns.on_frame]
    seen = []
    session.listeners.add(seen.append, ev.EventPhase.OBSERVER)
    session.client.on_agent_frame(lambda *frame: None)
    listeners = list(session.listeners)
    # the session's own bookkeeping first: call control (a close follows committed turns) and
    # client control (it follows committed turns), then observers
    assert listeners[-1] == seen.append
    assert [f.__qualname__ for f in listeners[:2]] == ["CallControl._on_event", "ClientControl._follow_turns"]
    # the transport is told of a frame before the responder's first_audio_out bookkeeping
    assert [f.__qualname__ for f in session.playback.frame_listeners][-1] == "Responder._on_frame_played"


def test_a_failing_listener_is_reported_once_and_the_others_hear_every_event(caplog):
    core = SessionCore(Config.default(), SimClock())
    heard: list[ev.Event] = []

    def always_fails(event: ev.Event) -> None:  # on the error events about it too
        raise RuntimeError(f"cannot handle {event.type}")

    class Printer:
        def on_event(self, event: ev.Event) -> None:
            if event.type == "x.log":
                raise KeyError("level")

    core.listeners.add(always_fails, ev.EventPhase.OBSERVER)
    core.listeners.add(Printer().on_event, ev.EventPhase.OBSERVER)
    core.listeners.add(heard.append, ev.EventPhase.OBSERVER)
    with caplog.at_level(logging.ERROR, logger="pipeline.call.core"):
        for i in range(5):
            core.log(f"line {i}")
            core.emit(ev.SpeechStarted(item_id="item_1", audio_start_ms=i))

    errors = [e for e in heard if isinstance(e, ev.Error)]
    assert [e.error["type"] for e in errors] == ["server_error", "server_error"]
    first, second = (e.error["message"] for e in errors)
    assert "always_fails" in first and "RuntimeError: cannot handle x.log" in first
    assert "Printer.on_event" in second and "KeyError" in second
    # every other event still reached the listener after the failing ones, in order
    others = [e for e in heard if not isinstance(e, ev.Error)]
    assert [e.type for e in others] == ["x.log", "input_audio_buffer.speech_started"] * 5
    assert heard.index(errors[0]) == 1  # reported after the event it failed on, not in its middle
    failures = [r for r in caplog.records if "event listener" in r.getMessage()]
    assert len(failures) == 2 and all(r.exc_info for r in failures)
    assert core.events.events == heard  # the log holds exactly what the listener heard

    core.drop_listeners()
    assert len(core.listeners) == 0


def test_a_listener_that_raises_on_every_audio_delta_does_not_cut_the_reply():
    state = {"deltas": 0, "first_transcript": True}

    def broken_meter(event: ev.Event) -> None:
        if event.type == "response.output_audio.delta":
            state["deltas"] += 1
            raise ZeroDivisionError("division by zero")

    def broken_on_first_words(event: ev.Event) -> None:
        if event.type.startswith("conversation.item.input_audio_transcription") and state["first_transcript"]:
            state["first_transcript"] = False
            raise ValueError("not ready for words")

    def setup(session) -> None:
        session.listeners.add(broken_meter, ev.EventPhase.OBSERVER)
        session.listeners.add(broken_on_first_words, ev.EventPhase.OBSERVER)

    stages = fake_stages()
    rec = call(stages, [Clip(caller_tone(), 0.3)], setup=setup)

    assert rec.transcripts == ["What time is checkout?"], rec.timeline()
    assert [d.response["status"] for d in rec.done] == ["completed"], rec.timeline()
    assert rec.agent_lines == [REPLY]
    assert rec.stages("heard_in_full"), rec.timeline()
    # every sample of the reply reached the caller: the tone is 30 ms a character, per chunk
    made = sum(d.delta.size for d in rec.of("response.output_audio.delta"))
    assert rec.agent_audio_between(0, 1e9) == pytest.approx(made / stages.tts.sample_rate_hz)
    assert made >= stages.tts.sample_rate_hz * 0.030 * len(REPLY.replace(" ", "")) * 0.9
    assert state["deltas"] == len(rec.of("response.output_audio.delta")) > 1  # kept being called
    errors = [e.error["message"] for e in rec.of("error")]
    assert len(errors) == 2, errors
    assert any("broken_meter" in m and "ZeroDivisionError" in m for m in errors)
    assert any("broken_on_first_words" in m and "ValueError" in m for m in errors)


def test_append_keeps_working_and_places_a_listener_after_every_phase():
    from enum import IntEnum

    from pipeline.base.listeners import Ordered

    class Phase(IntEnum):
        FIRST = 0
        LAST = 1

    calls = Ordered(Phase)
    calls.append(lambda: "appended")
    calls.add(lambda: "first", Phase.FIRST)
    assert [f() for f in calls] == ["first", "appended"]


def test_a_listener_that_raises_does_not_stop_the_others_and_is_reported_once(caplog):
    heard: list[tuple[str, int]] = []
    reports: list[tuple[str, str, tuple[object, ...]]] = []

    def broken(n: int) -> None:
        raise RuntimeError(f"frame {n}")

    calls: Ordered = Ordered(Phase, on_failure=lambda fn, error, args: reports.append(
        (fn.__name__, str(error), args)))
    calls.add(lambda n: heard.append(("late", n)), Phase.LATE)
    calls.add(broken, Phase.EARLY)
    calls.add(lambda n: heard.append(("early", n)), Phase.EARLY)
    for n in range(3):
        calls(n)
    assert heard == [("early", 0), ("late", 0), ("early", 1), ("late", 1), ("early", 2), ("late", 2)]
    assert reports == [("broken", "frame 0", (0,))]  # its first failure only

    logged: Ordered = Ordered(Phase)  # no report given: the failure is logged, with its traceback
    logged.add(broken, Phase.EARLY)
    with caplog.at_level(logging.ERROR, logger="pipeline.base.listeners"):
        logged(7)
        logged(8)
    assert [r.getMessage() for r in caplog.records] == [
        "listener test_a_listener_that_raises_does_not_stop_the_others_and_is_reported_once.<locals>.broken "
        "failed (it is not reported again)"]
    assert caplog.records[0].exc_info is not None
    logged.clear()
    logged.add(broken, Phase.EARLY)
    logged(9)  # cleared: a listener added again is reported again
    assert len(caplog.records) == 2


def test_audio_listeners_that_raise_on_every_frame_do_not_stop_the_audio():
    failing = {"caller frame": 0, "window": 0, "played frame": 0, "played audio": 0}

    def raises(what: str):
        def listener(*_args: object) -> None:
            failing[what] += 1
            raise ValueError(f"no {what}")
        listener.__qualname__ = f"broken {what}"
        return listener

    def setup(session) -> None:
        session.input.on_frame.add(raises("caller frame"), CallerFramePhase.TURNS)  # before turn taking
        session.input.on_window.add(raises("window"), WindowPhase.GATE)
        session.playback.frame_listeners.add(raises("played frame"), FramePhase.TRANSPORT)
        session.playback.on_audio.append(raises("played audio"))

    rec = call(fake_stages(), [Clip(caller_tone(), 0.3)], setup=setup)

    assert rec.transcripts == ["What time is checkout?"], rec.timeline()
    assert [d.response["status"] for d in rec.done] == ["completed"], rec.timeline()
    assert rec.agent_lines == [REPLY]
    assert rec.stages("first_audio_out") and rec.stages("heard_in_full"), rec.timeline()
    assert all(n > 10 for n in failing.values()), failing  # called on every frame, all along
    errors = sorted(e.error["message"] for e in rec.of("error"))
    assert len(errors) == 4, errors  # each reported once, as a server_error naming it
    assert all(m.startswith("listener broken ") and "ValueError" in m for m in errors), errors
