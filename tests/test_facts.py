"""Facts nobody gave (`tools.facts`, `call.unsourced_facts`): a number, price, time or limit a
reply states that no source gave is found, however the sources write it; with the setting on, the
sentence is not said and the caller hears that the agent does not have that information."""

from __future__ import annotations

import pytest

from pipeline.base.config import Config, apply
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.calls import call
from pipeline.tools.evidence import Evidence
from pipeline.tools.facts import NO_INFORMATION, unsourced
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

BANK = ("You are the card line of Meridian Bank. Open weekdays 9:00 to 17:00. Cards on file: Visa "
        "ending 5521. Recent: 2026-06-02 StreamPlus 10.99 on 5521; 2026-06-02 Shell 52.00.")


@pytest.mark.parametrize(("reply", "fired"), [
    ("The daily limit for cash withdrawals is 10,000 dollars.", ["10,000"]),
    ("A ride to the airport usually costs $50.", ["50"]),
    ("We open on Saturdays at 10:30 AM.", ["10:30 AM"]),
    ("That is 20 percent off.", ["20"]),
    ("We're open from nine in the morning until five pm.", []),  # 9:00 and 17:00, said otherwise
    ("StreamPlus charged ten ninety-nine on your Visa ending 5521.", []),
    ("I see a Shell charge of fifty-two dollars on June 2.", []),
    ("One moment, please.", []), ("It usually takes 3 days.", []),  # small counts are speech
])
def test_a_fact_is_given_however_a_source_writes_it(reply: str, fired: list[str]) -> None:
    evidence = Evidence(said=["What's on my card?"], asked=[""], instructions=BANK)
    assert unsourced(reply, evidence) == fired


def run(on: bool):
    llm = ScriptedLLM(replies=["Sure. The daily limit for cash withdrawals is 10,000 dollars."])
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["What's my daily cash limit?"]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    config = apply(Config.default(), {"response": {"instructions": BANK}, "call": {"unsourced_facts": on}})
    return call(stages, [Clip(caller_tone(1.4), at_s=0.3)], config=config)


def test_with_the_setting_on_the_caller_hears_no_made_up_limit() -> None:
    rec = run(True)
    assert rec.agent_lines == [f"Sure. {NO_INFORMATION}"], rec.timeline()
    assert any("states a fact nobody gave (10,000)" in e.message for e in rec.of("x.log"))


def test_off_by_default_the_reply_is_said_as_written() -> None:
    assert Config.default().call.unsourced_facts is False
    assert run(False).agent_lines == ["Sure. The daily limit for cash withdrawals is 10,000 dollars."]
