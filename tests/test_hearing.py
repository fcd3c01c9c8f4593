"""The recogniser hears a call by its context when `turn.context` is on: every pass of a turn gets
a prompt of the agent's tools and arguments as said, the hotwords, the instructions and the last
turns (the default); off, no pass gets one. On the tone caller, no model."""

from __future__ import annotations

import sys

from pipeline.call.session import Stages
from pipeline.stages.fakes import ToneTTS
from pipeline.testing import call, make_config
from pipeline.testing.scenario_voice import EnergyVAD, LineVoice
from pipeline.transports.scripted import Clip, after_stage
from pipeline.turns import HeuristicCompleteness

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import front_desk as desk  # noqa: E402


class Listening(LineVoice):
    """The tone caller's STT, noting the prompt each pass was given."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[str | None] = []

    def transcribe(self, audio, *, final: bool, prompt: str | None = None) -> str:
        self.prompts.append(prompt)
        return super().transcribe(audio, final=final)


def _call(**turn):
    voice = Listening()
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=HeuristicCompleteness(),
                    llm=desk.scripted_llm(), tts=ToneTTS())
    config = make_config(turn=turn, response={"instructions": "You are the front desk of the Harbor Hotel."})
    clips = [Clip(voice.say("Hi, can you check my booking under Garcia?"), 0.3),
             Clip(voice.say("Great, thanks!"), None, after=after_stage("heard_in_full", 2), delay_s=0.5)]
    call(stages, clips, config=config, setup=lambda s: s.use_tools(desk.build_tools(s.clock)))
    return voice.prompts


def test_every_pass_hears_the_call_by_its_context():
    prompts = _call(context=True, hotwords=["Harbor Hotel", "Garcia"])
    assert prompts and all(p for p in prompts)
    first, last = prompts[0], prompts[-1]
    assert first.startswith("Harbor Hotel, Garcia, look up booking, last name.")
    assert "front desk of the Harbor Hotel" in first
    assert "holding line" not in first  # a spoken argument is the agent's, not the caller's
    # the second turn's passes read the first turn and the agent's answer as what came before
    assert last.endswith("I found it: a sea-view double for 3 nights from Friday.")
    assert "check my booking under Garcia" in last


def test_on_by_default_and_off_no_pass_gets_a_prompt():
    assert all(_call())
    prompts = _call(context=False)
    assert prompts and set(prompts) == {None}
