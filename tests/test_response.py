"""The response lifecycle: statuses, deltas, one at a time, preemption, and the LLM context."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.base.conversation import CUT_OFF_MARK, Conversation, Item
from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import call, make_config, silence, with_stages
from pipeline.testing.voices import trim
from pipeline.transports.scripted import Clip

pytestmark = pytest.mark.models

REPLY = "Checkout is at eleven. Late checkout is free for members. Anything else?"


class BrokenTTS:
    sample_rate_hz = 22_050

    def synthesize(self, text: str) -> np.ndarray:
        raise RuntimeError("the voice model crashed")


def test_a_completed_response_sends_small_audio_deltas_and_its_transcript(real_stages, say):
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=[REPLY])), [say("What time is checkout?")])
    deltas = rec.of("response.output_audio.delta")
    assert deltas and max(d.delta.size / d.sample_rate_hz for d in deltas) <= 0.100 + 1e-9
    starts = [d.audio_ms for d in deltas]
    assert starts == sorted(starts)
    said = "".join(d.delta for d in rec.of("response.output_audio_transcript.delta"))
    assert said.split() == REPLY.split()
    done = rec.done[0].response
    assert done["status"] == "completed" and done["usage"]["output_tokens"] == len(REPLY.split())
    order = [e.type for e in rec.events if e.type.startswith("response.") and "delta" not in e.type]
    assert order[0] == "response.created" and order[-1] == "response.done"


def test_max_tokens_makes_the_response_incomplete(real_stages, say):
    llm = ScriptedLLM(replies=[REPLY], max_tokens=4)
    rec = call(with_stages(real_stages, llm=llm), [say("What time is checkout?")])
    done = rec.done[0].response
    assert done["status"] == "incomplete"
    assert done["status_details"]["reason"] == "max_output_tokens"
    assert rec.agent_lines == ["Checkout is at eleven."]  # what was made is still said


def test_a_reply_cut_at_max_tokens_ends_at_its_last_whole_sentence(real_stages, say):
    llm = ScriptedLLM(replies=[REPLY], max_tokens=6)  # "Checkout is at eleven. Late checkout"
    rec = call(with_stages(real_stages, llm=llm), [say("What time is checkout?")])
    done = rec.done[0].response
    assert (done["status"], done["status_details"]["reason"]) == ("incomplete", "max_output_tokens")
    assert rec.agent_lines == ["Checkout is at eleven."]  # not the half sentence after it
    said = "".join(d.delta for d in rec.of("response.output_audio_transcript.delta"))
    assert said.split() == ["Checkout", "is", "at", "eleven."]
    assert done["output"][0]["content"][0]["transcript"] == "Checkout is at eleven."


def test_a_reply_cut_at_max_tokens_is_heard_in_full_once_played(real_stages, say):
    """What it made was all said and played: the caller heard it to its end (a ledger row it
    states is told, a caller waiting for it goes on; the Qwen seed call stalled without this)."""
    llm = ScriptedLLM(replies=[REPLY], max_tokens=6)
    rec = call(with_stages(real_stages, llm=llm), [say("What time is checkout?")])
    done = rec.done[0].response
    assert done["status"] == "incomplete"
    heard = [e.response_id for e in rec.of("x.stage") if e.stage == "heard_in_full"]
    assert heard == [done["id"]], rec.timeline()


def test_a_reply_that_repeats_a_sentence_says_it_once(real_stages, say):
    llm = ScriptedLLM(replies=["I'm glad of that. I'm glad of that. I'm glad of that."])
    rec = call(with_stages(real_stages, llm=llm), [say("Ask not what your country can do for you.")])
    assert rec.agent_lines == ["I'm glad of that."]
    assert rec.done[0].response["status"] == "completed"
    reply = [i for i in rec.session.conversation.items if i.role == "assistant"][0]
    assert reply.text == "I'm glad of that."  # the model's next turn sees it said once


def test_a_failing_stage_fails_the_response_and_the_call_goes_on(real_stages, say):
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=[REPLY]), tts=BrokenTTS()),
               [say("What time is checkout?"), silence(1500), say("Hello?")])
    statuses = [d.response["status"] for d in rec.done]
    assert statuses == ["failed", "failed"]
    details = rec.done[0].response["status_details"]
    assert "the voice model crashed" in details["error"]["message"]
    assert len(rec.transcripts) == 2  # the second turn was still heard and answered


def test_one_response_at_a_time(real_stages, say):
    """With barge-in off, a question asked while the agent talks waits for the first reply."""
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=[REPLY, "Sure."])),
               [Clip(say("What time is checkout?"), 0.3), Clip(say("And breakfast?"), 3.5)],
               config=make_config(bargein={"enabled": False}))
    created = [(e.ts, e.response["id"]) for e in rec.of("response.created")]
    done = {d.response["id"]: d.ts for d in rec.done}
    assert len(created) == 2, rec.timeline()
    assert created[1][0] >= done[created[0][1]]  # the second began after the first was heard
    assert [d.response["status"] for d in rec.done] == ["completed", "completed"]


def test_preemption_is_used_when_the_transcript_holds_and_dropped_when_the_caller_resumes(real_stages, say):
    stages = with_stages(real_stages, llm=ScriptedLLM(replies=["Okay."]))
    final_only = make_config(response={"speculate_from": "final"})  # partials: test_speculation.py
    used = call(stages, [say("What time is checkout?"), silence(1500)], config=final_only)
    assert used.session.turns.speculation.used == 1 and used.session.turns.speculation.discarded == 0
    commit = used.commits[0]
    first_audio = used.stages("first_audio_out")[0]
    assert first_audio.ts - commit.ts <= 0.021  # audio at commit: generated before it
    from pipeline.base.metrics import turn_timings

    assert turn_timings(used.events)[0].preemptive
    # 400 ms between the voices (trimmed: Piper's own lead and tail would make it ~600 ms)
    resumed = call(stages, [silence(300), trim(say("I would like to book a table")), silence(400),
                            trim(say("for two people tonight.")), silence(1500)], config=final_only)
    assert resumed.session.turns.speculation.discarded >= 1 and len(resumed.commits) == 1
    assert resumed.session.turns.speculation.used <= 1
    created = resumed.of("response.created")
    assert len(created) == 1  # the discarded speculation never reached a client


def test_preemption_can_be_switched_off(real_stages, say):
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Okay."])), [say("What time is checkout?")],
               config=make_config(response={"preemptive": False}))
    assert rec.session.turns.speculation.used == 0 and rec.session.turns.speculation.discarded == 0
    from pipeline.base.metrics import turn_timings

    assert not turn_timings(rec.events)[0].preemptive


def test_the_llm_context_is_built_from_the_conversation_items():
    conv = Conversation()
    conv.add(Item(type="message", role="user", text="Refund order 4417 please."))
    conv.add(Item(type="message", role="assistant", text="Let me process that refund."))
    conv.add(Item(type="function_call", call_id="c1", name="refund",
                  arguments=json.dumps({"order_id": "4417"})))
    conv.add(Item(type="function_call_output", call_id="c1", name="refund", output='{"status": "committed"}',
                  note="completed during an interruption"))
    cut = conv.add(Item(type="message", role="assistant", text="Your refund went through to the card"))
    conv.truncate(cut.id, audio_end_ms=900, heard_text="Your refund went thr-")
    messages = conv.to_messages("Be brief.")
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1] == {"role": "user", "content": "Refund order 4417 please."}
    assert messages[2]["role"] == "assistant" and '"name": "refund"' in messages[2]["content"]
    assert messages[2]["content"].startswith("Let me process that refund.")
    assert "completed during an interruption" in messages[3]["content"]
    assert messages[4] == {"role": "assistant", "content": f"Your refund went thr- {CUT_OFF_MARK}"}


def test_the_real_chat_template_renders_the_context(real_stages):
    """SmolLM2's own template (ChatML) through llama-cpp-python, with a cut-off turn in it."""
    import threading

    conv = Conversation()
    conv.add(Item(type="message", role="user", text="Say one short sentence about tea."))
    cut = conv.add(Item(type="message", role="assistant", text="Tea is a drink"))
    conv.truncate(cut.id, audio_end_ms=500, heard_text="Tea is a")
    conv.add(Item(type="message", role="user", text="Sorry, go on."))
    pieces = list(real_stages.llm.stream(conv.to_messages("You are brief."), cancel=threading.Event(),
                                         max_tokens=16))
    assert "".join(pieces).strip()


class SlowVoice:
    """A voice that takes a second (on the session clock) to make each chunk."""

    sample_rate_hz = 22_050

    async def synthesize_async(self, text: str, *, clock) -> np.ndarray:
        await clock.sleep(1.0)
        return (0.3 * np.sin(np.arange(int(0.05 * len(text) * 22_050)) / 5)).astype(np.float32)


def test_speaking_again_before_the_reply_sounds_drops_the_reply(real_stages, say):
    """"I need a taxi." ... "At six, please." — the first reply had not said a word yet."""
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Where to?", "Booked for six."]),
                           tts=SlowVoice()),
               [say("I need a taxi to the airport."), silence(800), say("At six in the morning, please."),
                silence(1500)], config=make_config(response={"preemptive": False}))
    story = rec.timeline()
    statuses = [d.response["status"] for d in rec.done]
    assert statuses == ["cancelled", "completed"], story
    first = rec.done[0].response
    assert first["status_details"]["reason"] == "turn_detected"
    assert rec.agent_lines == ["Booked for six."], story  # nothing of the first reply was heard
    assert len(rec.transcripts) == 2
