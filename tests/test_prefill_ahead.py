"""The conversation evaluated ahead, up to where the caller's next words go (`call/prefill.py`):
when the call begins, when a client changes its instructions, once a reply is heard to its end;
so the first turn of a call whose instructions the model does not hold yet evaluates only its
words. On the tone caller (its pitch read back as words by the scripted STT), the simulated
clock, and a scripted model that notes what it is asked to evaluate ahead. `test_llm_cache.py`
has the real model's side, `test_prefill.py` the real voices'."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.testing import call, make_config
from pipeline.testing.scenario_voice import EnergyVAD, LineVoice
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

CLINIC = "You answer calls for a dental clinic. Keep every answer to one short sentence."


class AheadSpy(ScriptedLLM):
    """Notes each conversation it is asked to evaluate up to the caller's words, with how many
    replies it had been asked for by then."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ahead: list[tuple[list[dict[str, Any]], int]] = []

    def prefill(self, messages: list[dict[str, Any]], *, go_on: Any = None, upto_words: bool = False,
                through_words: bool = False) -> int:
        if through_words:  # the caller's words in their pause (response.prefill_pause): not this test's
            return 0
        assert upto_words  # response.prefill (the words while they are said) is off by default
        self.ahead.append((messages, len(self.requests)))
        return 1


def _call(llm: AheadSpy, lines: list[str], *, setup: Any = None, **response: Any):
    voice = LineVoice()
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=HeuristicCompleteness(), llm=llm,
                    tts=ToneTTS(ms_per_char=10.0))
    clips, at = [], 0.5
    for line in lines:
        speech = voice.say(line)
        clips.append(Clip(speech, at_s=at))
        at += len(speech) / INPUT_RATE_HZ + 4.0
    clips.append(Clip(np.zeros(INPUT_RATE_HZ, np.float32), at_s=at))
    return call(stages, clips, config=make_config(response=response), setup=setup)


def test_the_calls_instructions_are_evaluated_before_its_first_turn_and_each_reply_after_it_is_heard():
    llm = AheadSpy(replies=["We open at nine.", "Goodbye."])
    rec = _call(llm, ["When do you open tomorrow?", "Thanks, bye."])
    assert rec.agent_lines == ["We open at nine.", "Goodbye."], rec.timeline()
    (start, before), *after = llm.ahead
    assert before == 0 and start[-1] == {"role": "user", "content": ""}
    assert start[:-1] == llm.requests[0][:-1]  # the first turn's prompt, up to its words
    assert [n for _, n in after] == [1, 2]  # once each reply was heard
    assert after[0][0][:-1] == llm.requests[1][:-1]


def test_instructions_a_client_changes_once_the_call_began_are_evaluated_ahead_at_once():
    llm = AheadSpy(replies=["Tomorrow at ten."])

    def change_them(session: Any) -> None:  # a session.update just after session.created
        asyncio.get_running_loop().call_soon(lambda: session.client.update(instructions=CLINIC))

    rec = _call(llm, ["Can I see the dentist tomorrow?"], setup=change_them)
    assert rec.agent_lines == ["Tomorrow at ten."], rec.timeline()
    assert llm.requests[0][0]["content"].startswith(CLINIC)
    firsts = [messages[0]["content"] for messages, before in llm.ahead if before == 0]
    assert len(firsts) == 2 and not firsts[0].startswith(CLINIC), firsts  # the call's, then the clinic's
    assert llm.ahead[1][0][:-1] == llm.requests[0][:-1]


def test_nothing_is_evaluated_ahead_when_set_off_or_without_preemptive_generation():
    for off in ({"prefill_ahead": False}, {"preemptive": False}):
        llm = AheadSpy(replies=["We open at nine."])
        rec = _call(llm, ["When do you open tomorrow?"], **off)
        assert rec.agent_lines == ["We open at nine."] and llm.ahead == [], off
