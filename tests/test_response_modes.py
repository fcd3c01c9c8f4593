"""How a response goes out, chosen once when it is made: live or held (a speculation), spoken or
written, in the conversation or out of band. On fakes (a loudness VAD, scripted STT and LLM, a
tone voice): no models."""

from __future__ import annotations

import pytest

from pipeline.base import events as ev
from pipeline.base.clock import SimClock
from pipeline.base.config import Config
from pipeline.call.response import ResponseOptions
from pipeline.call.response_modes import (
    Held,
    InConversation,
    Live,
    OutOfBand,
    ResponseModes,
    TextOnly,
    Voice,
)
from pipeline.call.session import Session
from pipeline.testing import call, make_config
from pipeline.transports.scripted import Clip, ScriptedCaller

from .test_listeners import REPLY, caller_tone, fake_stages


def _session(cls: type[Session] = Session) -> Session:
    return cls(Config.default(), fake_stages(), clock=SimClock(), sink=ScriptedCaller([]))


@pytest.mark.parametrize("held, options, kinds", [
    (False, ResponseOptions(), (Live, Voice, InConversation)),
    (True, ResponseOptions(), (Held, Voice, InConversation)),
    (False, ResponseOptions(text_only=True), (Live, TextOnly, InConversation)),
    (False, ResponseOptions(out_of_band=True), (Live, Voice, OutOfBand)),
    (False, ResponseOptions(text_only=True, out_of_band=True), (Live, TextOnly, OutOfBand)),
], ids=["reply", "speculation", "text only", "out of band", "text, out of band"])
def test_each_kind_of_response_gets_its_strategies(held, options, kinds):
    response = _session().responder.new("turn", held=held, transcript="Hi." if held else None,
                                        options=options)
    assert tuple(type(m) for m in (response.delivery, response.output, response.placement)) == kinds
    assert response.held is held
    assert response.item.audio is (not options.text_only)
    assert response._described()["modalities"] == (["text"] if options.text_only else ["audio"])
    assert response._described()["conversation"] == ("none" if options.out_of_band else "auto")


def test_the_session_text_only_setting_makes_written_replies():
    session = _session()
    session.client.update(text_only=True)
    assert isinstance(session.responder.new("turn").output, TextOnly)


def test_a_session_subclass_may_give_its_responses_another_voice():
    class Whisper(Voice):
        pass

    class Quiet(Session):
        response_modes = ResponseModes(voice=Whisper)

    assert type(_session(Quiet).responder.new("turn").output) is Whisper
    assert isinstance(_session(Quiet).responder.new("turn", options=ResponseOptions(text_only=True)).output,
                      TextOnly)  # a written reply stays written


def test_only_a_speculation_is_adopted():
    response = _session().responder.new("turn")
    with pytest.raises(RuntimeError, match="not held: only a speculation is adopted"):
        response.adopt()


def _reply_events(record, response_id):
    """What the response itself emitted (not turn taking's mark of the speculation's outcome)."""
    return [e for e in record.events if getattr(e, "stage", None) != "speculation" and (
        getattr(e, "response_id", None) == response_id
        or (isinstance(e, ev.ResponseDone | ev.ResponseCreated) and e.response["id"] == response_id))]


def test_a_speculation_says_nothing_until_adopted_then_all_of_it_in_order():
    record = call(fake_stages(), [Clip(caller_tone(), 0.3)], config=make_config(response={"preemptive": True}),
                  tail_s=4.0)
    (spec,) = [e for e in record.stages("speculation")]
    assert spec.detail["outcome"] == "adopted", record.timeline()
    (commit,) = record.commits
    events = _reply_events(record, spec.response_id)
    assert events and all(e.ts >= commit.ts for e in events)  # held until the commit
    assert [getattr(e, "stage", e.type) for e in events][:2] == ["response_start", "response.created"]
    (done,) = [e for e in events if isinstance(e, ev.ResponseDone)]
    assert done.response["status"] == "completed"
    deltas = [e for e in events if isinstance(e, ev.OutputAudioDelta)]
    assert [d.audio_ms for d in deltas] == sorted(d.audio_ms for d in deltas)
    (response,) = record.session.responses
    assert not response.held and isinstance(response.delivery, Live)
    assert record.agent_lines == [REPLY]


def test_a_written_reply_sends_text_and_no_audio():
    record = call(fake_stages(), [Clip(caller_tone(), 0.3)], setup=lambda s: s.client.update(text_only=True),
                  tail_s=4.0)
    (done,) = record.done
    assert done.response["status"] == "completed" and done.response["modalities"] == ["text"]
    assert not record.of("response.output_audio.delta") and record.agent_audio_between(0.0, 60.0) == 0.0
    text = "".join(e.delta for e in record.of("response.output_text.delta"))
    assert text == REPLY == record.session.responses[0].item.text


def test_a_speculation_starts_its_tool_call_only_once_adopted():
    from pipeline.stages.fakes import ScriptedLLM
    from pipeline.tools import ToolRegistry, tool

    started: list[bool] = []  # for each start: had the turn been committed?
    committed = []

    @tool()
    async def checkout_time(holding_line: str) -> dict:
        """The hotel's checkout time.

        Args:
            holding_line: What to say while it is looked up.
        """
        started.append(bool(committed))
        return {"checkout": "eleven"}

    def setup(session: Session) -> None:
        session.use_tools(ToolRegistry(specs=[checkout_time]))
        session.listeners.add(lambda e: committed.append(e) if isinstance(e, ev.InputCommitted) else None,
                              ev.EventPhase.OBSERVER)

    stages = fake_stages()
    stages.llm = ScriptedLLM(rules=[["result of checkout_time", "Checkout is at eleven."],
                                    ["checkout", {"name": "checkout_time",
                                                  "arguments": {"holding_line": "One moment."}}]])
    record = call(stages, [Clip(caller_tone(), 0.3)], config=make_config(response={"preemptive": True}),
                  setup=setup, tail_s=4.0)
    (spec,) = record.stages("speculation")
    assert spec.detail["outcome"] == "adopted", record.timeline()
    assert started == [True], record.timeline()  # once, and after the commit
    conversation = record.session.conversation.items
    assert [i.type for i in conversation][1:3] == ["message", "function_call"]  # entered at adoption
    assert "Checkout is at eleven." in record.agent_lines, record.timeline()
