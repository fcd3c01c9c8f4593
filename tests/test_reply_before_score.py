"""The held reply begins from the final pass before the turn signal scores it: only the commit
waits for the score (turn_taking's `_after_final`; bench/README.md, "The reply before the score").

A signal that holds its score until the LLM has been asked shows the order: had the reply waited
for the score, the LLM would be asked only after the signal gave up waiting. On the tone caller
(its pitch read back as words by the scripted STT) and the simulated clock."""

from __future__ import annotations

import threading

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.testing import call, make_config
from pipeline.testing.scenario_voice import EnergyVAD, LineVoice
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

WAIT_S = 5.0  # how long the signal holds its score for the LLM's first request


class _AskedLLM(ScriptedLLM):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.asked = threading.Event()

    def stream(self, messages, **kw):
        self.asked.set()
        return super().stream(messages, **kw)


class _SignalAfterTheReply:
    """The text heuristic, each score given once the LLM was asked (or WAIT_S passed)."""

    def __init__(self, llm: _AskedLLM) -> None:
        self.llm, self.heuristic = llm, HeuristicCompleteness()
        self.reply_begun: list[bool] = []

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        self.reply_begun.append(self.llm.asked.wait(WAIT_S))
        return self.heuristic.probability(text)


def test_the_reply_is_begun_before_the_turn_is_scored_and_adopted_at_the_commit():
    voice = LineVoice()
    llm = _AskedLLM(replies=["We close at nine."])
    signal = _SignalAfterTheReply(llm)
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=signal, llm=llm, tts=ToneTTS(ms_per_char=10.0))
    speech = voice.say("What time do you close today?")
    rec = call(stages, [Clip(speech, at_s=0.5),
                        Clip(np.zeros(3 * INPUT_RATE_HZ, np.float32), at_s=0.5 + len(speech) / INPUT_RATE_HZ)],
               config=make_config())
    assert signal.reply_begun and all(signal.reply_begun), rec.timeline()
    assert [m.detail["outcome"] for m in rec.stages("speculation")] == ["adopted"], rec.timeline()
    assert rec.transcripts == ["What time do you close today?"] and rec.agent_lines == ["We close at nine."]
    assert [c.reason for c in rec.commits] == ["min_silence"], rec.timeline()
