"""A close the caller talks into (seed 004's deferred close): the hang-up cap bounds a silent close,
never a conversation.

After the goodbye has been heard, a caller's answer to the farewell is let finish and the line
closes after the grace; a new request cancels the close and is answered, however long its turn
takes to commit and however late after `end_call` it comes. Each goodbye here is made to finish
close to the 8 s cap (its second sentence arrives late), so the caller's turn commits after the
cap: the case where the cap used to hang up on a caller mid-request.

On the tone caller and the desk's scripted model (no model file is opened); the completeness
signal is fixed so that each turn commits on the threshold the test names.
"""

from __future__ import annotations

import sys

import pytest

from pipeline.call.session import Stages
from pipeline.stages.fakes import ToneTTS
from pipeline.testing import call, make_config
from pipeline.testing.scenario_voice import EnergyVAD, LineVoice
from pipeline.transports.scripted import Clip, after_stage

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import front_desk as desk  # noqa: E402

ASK = "Hi, can you check my booking under Garcia?"
DONE = "Great, that's all, thanks!"
REQUEST = "Oh wait, is breakfast included?"
ANSWER = "breakfast is included"
CAP_S = 8.0


class Fixed:
    """A completeness signal that always says the same: 1.0 commits on the short threshold
    (min_silence_ms), 0.0 waits for the long one (max_silence_ms)."""

    def __init__(self, probability: float) -> None:
        self.p = probability

    def probability(self, text: str, audio: object = None) -> float:
        return self.p


THRESHOLDS = {"short": (1.0, "min_silence"), "long": (0.0, "max_silence")}


def _run(lines, *, threshold: str, goodbye_late_s: float, grace_ms: int | None = None):
    """The front desk call: the booking, "that's all", the goodbye (its second sentence
    `goodbye_late_s` late), then `lines` as (text, delay after the goodbye is heard in full)."""
    voice = LineVoice()
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=Fixed(THRESHOLDS[threshold][0]),
                    llm=desk.scripted_llm(),
                    tts=desk.StallingVoice(ToneTTS(), stall_at_chunk=2, stall_s=goodbye_late_s,
                                           match="Harbor Hotel"))
    call_policy = {"end_call": True} | ({"close_grace_ms": grace_ms} if grace_ms is not None else {})
    config = make_config(call=call_policy, response={"preemptive": False})
    clips = [Clip(voice.say(ASK), 0.3),
             Clip(voice.say(DONE), None, after=after_stage("heard_in_full", 2), delay_s=0.5)]
    for n, (text, delay_s) in enumerate(lines):
        clips.append(Clip(voice.say(text), None, after=after_stage("heard_in_full", 3 + n), delay_s=delay_s))
    return call(stages, clips, config=config,
                setup=lambda session: session.use_tools(desk.build_tools(session.clock)))


def _hangups(rec) -> list:
    return [e for e in rec.of("x.log") if e.message.startswith("(hangs up")]


def _end_call_made(rec):
    return next(e for e in rec.of("response.function_call_arguments.done") if e.name == "end_call")


def _goodbye_done(rec):
    return next(d for d in rec.done if any(o.get("name") == "end_call" for o in d.response["output"]))


def _commit_after(rec, ts: float):
    return next(e for e in rec.of("input_audio_buffer.committed") if e.ts > ts)


@pytest.mark.parametrize("threshold", ["short", "long"])
@pytest.mark.parametrize("delay_s", [0.05, 0.35, 1.0])
def test_a_new_request_after_the_goodbye_is_answered_and_the_line_stays_open(threshold, delay_s):
    # the request starts about 7 s after end_call, before the cap, and commits after it; a
    # request a whole second after the goodbye needs a grace that long to find the line open
    rec = _run([(REQUEST, delay_s), ("Okay, that's all. Bye!", 0.5)], threshold=threshold,
               goodbye_late_s=5.0 - delay_s, grace_ms=1500 if delay_s >= 0.8 else None)
    story = rec.timeline()
    made = _end_call_made(rec)
    request = _commit_after(rec, _goodbye_done(rec).ts)
    assert request.reason == THRESHOLDS[threshold][1], story
    assert request.ts - made.ts > CAP_S, (request.ts - made.ts, story)  # the case: commit after the cap
    answer = next(d for d in rec.done if d.ts > request.ts)
    assert answer.response["status"] == "completed", story
    assert any(ANSWER in line for line in rec.agent_lines), story
    outputs = [i.output for i in rec.session.conversation.items
               if i.type == "function_call_output" and i.name == "end_call"]
    assert '"hung_up": false' in outputs[0] and "new request" in outputs[0], story
    # the later close works as a repeat close: no second farewell, one hang-up, after the answer
    control = rec.session.control
    goodbyes = [line for line in rec.agent_lines if "goodbye" in line.lower()]
    assert goodbyes == [desk.GOODBYE], story
    assert control.closes_requested == 2 and control.teardowns == 1, story
    assert len(_hangups(rec)) == 1 and _hangups(rec)[0].ts > answer.ts, story


@pytest.mark.parametrize("threshold", ["short", "long"])
def test_a_new_request_with_no_later_goodbye_keeps_the_line_open(threshold):
    rec = _run([(REQUEST, 0.35)], threshold=threshold, goodbye_late_s=4.6)
    story = rec.timeline()
    assert any(ANSWER in line for line in rec.agent_lines), story
    assert _hangups(rec) == [] and rec.session.control.state == "open", story  # cancelled, not postponed


@pytest.mark.parametrize("threshold", ["short", "long"])
def test_a_farewell_after_the_goodbye_closes_after_the_grace(threshold):
    rec = _run([("Okay, bye!", 0.2)], threshold=threshold, goodbye_late_s=5.0)
    story = rec.timeline()
    hangups = _hangups(rec)
    assert len(hangups) == 1, story
    bye_turn = _commit_after(rec, _goodbye_done(rec).ts)
    bye_end_s = next(e for e in rec.of("input_audio_buffer.speech_stopped") if e.ts > _goodbye_done(rec).ts).ts
    words = next(e for e in rec.of("conversation.item.input_audio_transcription.completed")
                 if e.item_id == bye_turn.item_id)
    assert len(rec.done) == 3, story  # holding line, booking, goodbye: no reply to "bye"
    assert any("answered the farewell" in e.message for e in rec.of("x.log")), story
    grace_s = rec.session.config.call.close_grace_ms / 1000
    # the grace counts from the farewell's last word, and the line closes once its words are known
    assert hangups[0].ts >= words.ts, story
    assert hangups[0].ts - max(words.ts, bye_end_s + grace_s) <= 0.05, story


def test_a_farewell_longer_than_the_cap_left_closes_at_the_cap_once_it_has_ended():
    """The cap's clock stops while the caller talks and runs on from their last word: with
    0.3 s of cap left when the farewell starts, the line closes 0.3 s after it ends, before the
    grace would have."""
    rec = _run([("Okay, thank you so much, have a great day, bye!", 0.2)], threshold="short",
               goodbye_late_s=5.5)
    story = rec.timeline()
    hangups = _hangups(rec)
    assert len(hangups) == 1 and len(rec.done) == 3, story
    assert any("answered the farewell" in e.message for e in rec.of("x.log")), story  # decided on its words
    made, heard = _end_call_made(rec), _goodbye_done(rec)
    started = next(e for e in rec.of("input_audio_buffer.speech_started") if e.ts > heard.ts)
    ended = next(e for e in rec.of("input_audio_buffer.speech_stopped") if e.ts > heard.ts)
    cap_left_s = made.ts + CAP_S - started.ts
    grace_s = rec.session.config.call.close_grace_ms / 1000
    assert 0 < cap_left_s < grace_s, (cap_left_s, story)  # the case: the cap comes first
    assert abs(hangups[0].ts - max(ended.ts + cap_left_s, _commit_after(rec, heard.ts).ts)) <= 0.1, story


def test_a_goodbye_that_stalls_still_closes_at_the_cap():
    rec = _run([], threshold="short", goodbye_late_s=60.0)
    story = rec.timeline()
    hangups = _hangups(rec)
    assert len(hangups) == 1, story
    assert abs(hangups[0].ts - _end_call_made(rec).ts - CAP_S) <= 0.05, story


def test_silence_after_a_late_goodbye_closes_at_the_cap_not_after_the_grace():
    rec = _run([], threshold="short", goodbye_late_s=5.5)
    story = rec.timeline()
    made, heard = _end_call_made(rec), _goodbye_done(rec)
    grace_s = rec.session.config.call.close_grace_ms / 1000
    assert CAP_S - grace_s < heard.ts - made.ts < CAP_S, (heard.ts - made.ts, story)
    assert abs(_hangups(rec)[0].ts - made.ts - CAP_S) <= 0.05, story
