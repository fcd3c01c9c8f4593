"""Call edges on the front desk: pickup before ready, spoken goodbyes, never hanging up early.

Each scenario runs on the simulated clock with real VAD, Whisper and Piper and the desk's scripted
model, and is asserted on the transcript with its "(hangs up)" line.
"""

from __future__ import annotations

import sys

import pytest

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.call.callctl import CallControl, looks_like_farewell
from pipeline.testing import call, make_config, silence, with_stages
from pipeline.transports.scripted import Clip, after_stage

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import front_desk as desk  # noqa: E402

pytestmark = [pytest.mark.models, pytest.mark.slow]

ASK = "Hi, can you check my booking under Garcia?"
DONE = "Great, that's all, thanks!"


def _run(stages, clips, *, tts=None, control=None, preemptive=True, **kw):
    config = make_config(call={"end_call": True}, response={"preemptive": preemptive})

    def setup(session) -> None:
        if control is not None:
            session.use_call_control(control)
        session.use_tools(desk.build_tools(session.clock))

    replace = {"llm": desk.scripted_llm()}
    if tts is not None:
        replace["tts"] = tts
    return call(with_stages(stages, **replace), clips, config=config, setup=setup, **kw)


def _hangups(rec) -> list:
    return [e for e in rec.of("x.log") if e.message.startswith("(hangs up")]


def _goodbye_done(rec):
    return next(d for d in rec.done if any(o.get("name") == "end_call" for o in d.response["output"]))


@pytest.mark.parametrize("text, farewell", [
    ("Okay, bye!", True), ("Thanks, you too.", True), ("Bye bye, take care.", True),
    ("Oh wait, do you have late checkout?", False), ("Bye, and can you email me?", False), ("", False),
])
def test_farewell_detection(text, farewell):
    assert looks_like_farewell(text) is farewell


def test_a_normal_call_ends_after_the_goodbye_is_heard(real_stages, say):
    rec = _run(real_stages, [Clip(say(ASK), 0.3),
                             Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5)])
    story = rec.timeline()
    bye = _goodbye_done(rec)
    assert bye.response["status"] == "completed", story
    assert bye.response["output"][0]["content"][0]["transcript"] == desk.GOODBYE  # same response
    hangups = _hangups(rec)
    assert len(hangups) == 1 and rec.session.control.teardowns == 1, story
    assert hangups[0].ts >= bye.ts  # only after the goodbye was heard to its end
    assert not rec.of("conversation.item.truncated")
    assert rec.caller.hung_up


@pytest.mark.parametrize("ready_s", [0.3, 1.2, 2.8])
def test_first_words_before_ready_are_not_lost(real_stages, say, ready_s):
    rec = _run(real_stages, [Clip(say(ASK), 0.0)], ready_after_s=ready_s)
    story = rec.timeline()
    assert "booking" in rec.transcripts[0].lower() and "garcia" in rec.transcripts[0].lower(), story
    held = [e.message for e in rec.of("x.log") if e.message.startswith("held")]
    assert held == [f"held {ready_s:.2f} s"], held


def test_a_ten_second_stall_keeps_the_last_five_seconds(real_stages, say):
    # 6 s of noise-free silence, then the question: the 10 s stall drops the oldest 5 s only
    question = say(ASK)
    lead = silence(10_000 - len(question) * 1000 / INPUT_RATE_HZ - 500)
    rec = _run(real_stages, [lead, question], ready_after_s=10.0)
    assert "garcia" in rec.transcripts[0].lower(), rec.timeline()
    held = [e.message for e in rec.of("x.log") if e.message.startswith("held")][0]
    assert held.startswith("held 5.00 s (dropped the oldest 5.00 s)"), held


def test_talking_over_the_goodbye_keeps_the_line_open(real_stages, say):
    rec = _run(real_stages, [
        Clip(say(ASK), 0.3),
        Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Wait, one more thing. Is breakfast included?"), None,
             after=after_stage("first_audio_out", 3), delay_s=0.8),
        Clip(say("Okay, that's all. Bye!"), None, after=after_stage("heard_in_full", 3), delay_s=0.5),
    ])
    story = rec.timeline()
    first_bye = _goodbye_done(rec)
    assert first_bye.response["status"] == "cancelled", story
    outputs = [i.output for i in rec.session.conversation.items
               if i.type == "function_call_output" and i.name == "end_call"]
    assert '"hung_up": false' in outputs[0] and "talked over the goodbye" in outputs[0], story
    assert any("breakfast is included" in line for line in rec.agent_lines), story
    assert len(_hangups(rec)) == 1 and rec.session.control.closes_requested == 2, story  # later goodbye closes


def test_answering_the_farewell_is_let_finish(real_stages, say):
    rec = _run(real_stages, [
        Clip(say(ASK), 0.3),
        Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Okay, bye!"), None, after=after_stage("heard_in_full", 3), delay_s=0.2),
    ])
    story = rec.timeline()
    hangups = _hangups(rec)
    assert len(hangups) == 1, story
    bye_turn = next(e for e in rec.of("input_audio_buffer.committed") if e.ts > _goodbye_done(rec).ts)
    # the caller's "bye" was heard out, then the line closed: after its commit, at the same moment
    # when the turn ended at max_silence_ms (Smart Turn's veto can keep a short "bye" open)
    assert (hangups[0].ts, hangups[0].perf) > (bye_turn.ts, bye_turn.perf), story
    assert len(rec.done) == 3  # holding line, the booking, the goodbye: no reply to "bye"
    assert any("answered the farewell" in e.message for e in rec.of("x.log")), story


def test_a_new_request_after_the_goodbye_cancels_the_close(real_stages, say):
    rec = _run(real_stages, [
        Clip(say(ASK), 0.3),
        Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Oh wait, do you have late checkout?"), None, after=after_stage("heard_in_full", 3),
             delay_s=0.2),
        Clip(silence(4000), None, after=after_stage("heard_in_full", 4), delay_s=0.0),
    ])
    story = rec.timeline()
    assert any("Late checkout" in line for line in rec.agent_lines), story
    assert _hangups(rec) == [] and rec.session.control.state == "open", story  # cancelled, not postponed


def test_a_repeat_close_says_no_second_farewell_and_tears_down_once(real_stages, say):
    rec = _run(real_stages, [
        Clip(say(ASK), 0.3),
        Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Oh wait, do you have late checkout?"), None, after=after_stage("heard_in_full", 3),
             delay_s=0.2),
        Clip(say("Okay, that's all. Bye!"), None, after=after_stage("heard_in_full", 4), delay_s=0.5),
    ])
    story = rec.timeline()
    goodbyes = [line for line in rec.agent_lines if "goodbye" in line.lower()]
    assert goodbyes == [desk.GOODBYE], story  # said once
    control = rec.session.control
    assert control.closes_requested == 2 and control.teardowns == 1 and len(_hangups(rec)) == 1, story


class HangUpWhenQueueRunsDry(CallControl):
    """The tempting shortcut: hang up as soon as the speaker has nothing queued."""

    async def end_call(self, *, response_id: str, reason: str) -> dict:
        clock = self.core.clock
        while not self.playback.sent:  # until the goodbye has started playing
            await clock.sleep(0.02)
        await clock.sleep(0.02)
        while not self.playback.drained.is_set():
            await clock.sleep(0.02)
        self.teardown(reason)
        return {"hung_up": True}


def _stall_goodbye_case(real_stages, say, caller_voice, control):
    # the second sentence of the goodbye arrives 500 ms after the first has finished playing
    first = caller_voice.synthesize("Thanks for calling the Harbor Hotel.")
    stall_s = len(first) / caller_voice.sample_rate_hz + 0.5
    voice = desk.StallingVoice(caller_voice, stall_at_chunk=2, stall_s=stall_s, match="Harbor Hotel")
    # no speculation: a goodbye made ahead of commit would hide the stall
    return _run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5)],
                tts=voice, control=control, preemptive=False)


def _goodbye_heard_whole(rec) -> bool:
    bye = _goodbye_done(rec)
    item_id = bye.response["output"][0]["id"]
    return (bye.response["status"] == "completed" and not any(
        t.item_id == item_id for t in rec.of("conversation.item.truncated"))
        and _hangups(rec)[0].ts >= bye.ts)


def test_a_stall_mid_goodbye_does_not_end_the_call_early(real_stages, say, caller_voice):
    rec = _stall_goodbye_case(real_stages, say, caller_voice, control=None)
    assert _goodbye_heard_whole(rec), rec.timeline()


def test_the_queue_runs_dry_variant_fails_the_same_test(real_stages, say, caller_voice):
    rec = _stall_goodbye_case(real_stages, say, caller_voice, control=HangUpWhenQueueRunsDry)
    assert not _goodbye_heard_whole(rec), rec.timeline()


def test_a_goodbye_that_never_finishes_hangs_up_at_the_cap(real_stages, say):
    voice = desk.StallingVoice(real_stages.tts, stall_at_chunk=2, stall_s=60.0, match="Harbor Hotel")
    rec = _run(real_stages, [Clip(say(ASK), 0.3),
                             Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5)],
               tts=voice, preemptive=False)
    story = rec.timeline()
    warning = [e for e in rec.of("x.log") if e.level == "warning" and "did not finish within 8 s" in e.message]
    assert len(warning) == 1 and len(_hangups(rec)) == 1, story
    call_made = next(e for e in rec.of("response.function_call_arguments.done") if e.name == "end_call")
    assert abs(_hangups(rec)[0].ts - call_made.ts - 8.0) <= 0.05, story




def test_the_hang_up_cap_bounds_the_grace_after_a_late_goodbye(real_stages, say):
    """A goodbye that drains within the grace of the cap's end closes at the cap, not cap +
    grace; and never before it was heard to its end."""
    stall_s = 5.6  # the goodbye's second sentence comes late: it finishes ~7.5 s after end_call
    voice = desk.StallingVoice(real_stages.tts, stall_at_chunk=2, stall_s=stall_s, match="Harbor Hotel")
    rec = _run(real_stages, [Clip(say(ASK), 0.3),
                             Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5)],
               tts=voice, preemptive=False)
    story = rec.timeline()
    call_made = next(e for e in rec.of("response.function_call_arguments.done") if e.name == "end_call")
    bye = _goodbye_done(rec)
    assert bye.response["status"] == "completed", story
    heard_s = bye.ts - call_made.ts
    grace_s = rec.session.config.call.close_grace_ms / 1000
    assert 8.0 - grace_s < heard_s < 8.0, (heard_s, story)  # the case: drain + grace > cap
    hangups = _hangups(rec)
    assert len(hangups) == 1 and _goodbye_heard_whole(rec), story
    assert hangups[0].ts - call_made.ts <= 8.0 + 0.03, (hangups[0].ts - call_made.ts, story)


@pytest.mark.parametrize("delay_s", [0.05, 0.35])
def test_a_request_after_a_late_goodbye_is_answered_whenever_it_commits(real_stages, say, delay_s):
    """The goodbye is heard about 7 s after end_call and the caller asks on: the turn commits
    after the 8 s cap (on whichever threshold Whisper's words lead to), and is answered."""
    voice = desk.StallingVoice(real_stages.tts, stall_at_chunk=2, stall_s=4.0, match="Harbor Hotel")
    rec = _run(real_stages, [
        Clip(say(ASK), 0.3),
        Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Oh wait, can I bring my dog too?"), None, after=after_stage("heard_in_full", 3),
             delay_s=delay_s),
        Clip(silence(4000), None, after=after_stage("heard_in_full", 4), delay_s=0.0),
    ], tts=voice, preemptive=False)
    story = rec.timeline()
    call_made = next(e for e in rec.of("response.function_call_arguments.done") if e.name == "end_call")
    request = next(e for e in rec.of("input_audio_buffer.committed") if e.ts > _goodbye_done(rec).ts)
    assert request.ts - call_made.ts > 8.0, (request.ts - call_made.ts, story)  # the case
    assert any("dogs are welcome" in line for line in rec.agent_lines), story
    assert _hangups(rec) == [] and rec.session.control.state == "open", story


class _Owes:
    """A model that, asked at goodbye time, says one action is still owed (then NONE)."""

    def __init__(self, inner, answers):
        self.inner, self.answers, self.asked = inner, list(answers), 0
        self.lock = inner.lock

    def stream(self, messages, **kw):
        if messages[0]["content"].startswith("You check a phone call"):
            self.asked += 1
            answer = self.answers.pop(0) if self.answers else "NONE"
            if isinstance(answer, Exception):
                raise answer
            yield answer
            return
        yield from self.inner.stream(messages, **kw)

    def complete(self, messages, *, cancel=None, **kw):
        return "".join(self.stream(messages, cancel=cancel, **kw))


def _pre_check_run(real_stages, say, answers):
    llm = _Owes(desk.scripted_llm(), answers)
    config = make_config(call={"end_call": True, "pre_hangup_check": True})

    def setup(session) -> None:
        session.use_tools(desk.build_tools(session.clock))

    rec = call(with_stages(real_stages, llm=llm),
               [Clip(say(ASK), 0.3), Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
                Clip(say("Okay, that's all. Bye!"), None, after=after_stage("heard_in_full", 4), delay_s=0.5)],
               config=config, setup=setup)
    return rec, llm


def test_the_pre_hangup_check_keeps_the_line_for_one_missing_action(real_stages, say):
    rec, llm = _pre_check_run(real_stages, say, ["Ask for an email address for the receipt."])
    story = rec.timeline()
    outputs = [i.output for i in rec.session.conversation.items
               if i.type == "function_call_output" and i.name == "end_call"]
    assert "still to do: Ask for an email" in outputs[0], story
    assert any("email for the receipt" in line for line in rec.agent_lines), story
    assert llm.asked == 1  # at most once per call, though the call was closed twice
    assert len(_hangups(rec)) == 1, story


def test_the_pre_hangup_check_fails_open(real_stages, say):
    rec, llm = _pre_check_run(real_stages, say, [RuntimeError("model went away")])
    story = rec.timeline()
    assert llm.asked == 1 and len(_hangups(rec)) == 1, story
    assert any("pre-hangup check skipped" in e.message for e in rec.of("x.log")), story


# --- the pre-hangup audit: at most once per call, on every path -------------------------------

TALK_OVER = "Wait, one more thing. Is breakfast included?"


def _audited_call(real_stages, say, audit_kind: str, *, talk_over: bool):
    """A call closed twice, with `session.control.audit` replaced by one that raises, times out on
    the session clock, answers nothing, or names an action; returns the record and when it was asked."""
    asked: list[float] = []
    config = make_config(call={"end_call": True, "pre_hangup_check": True, "pre_hangup_timeout_ms": 500})

    def setup(session) -> None:
        clock = session.clock

        async def audit(items, instructions):
            asked.append(clock.now())
            if audit_kind == "raises":
                raise RuntimeError("the audit model went away")
            if audit_kind == "times out":
                await clock.sleep(30.0)
            if audit_kind == "names an action":
                return "Ask for an email address for the receipt." if len(asked) == 1 else "Ask again."
            return None

        session.use_tools(desk.build_tools(clock))
        session.control.audit = audit

    if talk_over:  # the caller talks over the goodbye, is answered, then says goodbye again
        clips = [Clip(say(ASK), 0.3), Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
                 Clip(say(TALK_OVER), None, after=after_stage("first_audio_out", 3), delay_s=0.8),
                 Clip(say("Okay, that's all. Bye!"), None, after=after_stage("heard_in_full", 3), delay_s=0.5)]
    else:  # the goodbye is heard; the audit's action is asked for; the caller says goodbye again
        clips = [Clip(say(ASK), 0.3), Clip(say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5),
                 Clip(say("Okay, that's all. Bye!"), None, after=after_stage("heard_in_full", 4), delay_s=0.5)]
    rec = call(with_stages(real_stages, llm=desk.scripted_llm()), clips, config=config, setup=setup)
    return rec, asked


@pytest.mark.parametrize("audit_kind", ["raises", "times out", "answers nothing"])
def test_a_repeat_close_after_talking_over_the_goodbye_audits_once(real_stages, say, audit_kind):
    rec, asked = _audited_call(real_stages, say, audit_kind, talk_over=True)
    story = rec.timeline()
    control = rec.session.control
    assert _goodbye_done(rec).response["status"] == "cancelled", story  # the first close was talked over
    assert any("breakfast is included" in line for line in rec.agent_lines), story
    assert control.closes_requested == 2 and len(_hangups(rec)) == 1, story
    assert len(asked) == 1, story  # fails open, and never again this call
    skipped = [e for e in rec.of("x.log") if "pre-hangup check skipped" in e.message]
    assert len(skipped) == (audit_kind != "answers nothing"), story
    if audit_kind == "times out":
        assert "TimeoutError" in skipped[0].message and abs(skipped[0].ts - asked[0] - 0.5) <= 0.05, story


def test_a_named_action_is_handled_and_the_repeat_close_does_not_audit_again(real_stages, say):
    rec, asked = _audited_call(real_stages, say, "names an action", talk_over=False)
    story = rec.timeline()
    outputs = [i.output for i in rec.session.conversation.items
               if i.type == "function_call_output" and i.name == "end_call"]
    assert len(outputs) == 2 and "still to do: Ask for an email" in outputs[0], story
    assert any("email for the receipt" in line for line in rec.agent_lines), story
    assert '"hung_up": true' in outputs[1] and len(_hangups(rec)) == 1, story
    assert len(asked) == 1, story
