"""The held reply begins from the final pass before the turn signal scores it: only the commit
waits for the score (turn_taking's `_after_final`; bench/README.md, "The reply before the score").

A signal that holds its score until the LLM has been asked shows the order: had the reply waited
for the score, the LLM would be asked only after the signal gave up waiting. On the tone caller
(its pitch read back as words by the scripted STT) and the simulated clock."""

from __future__ import annotations

import threading
import time
from typing import Any

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
    """Notes when a reply is asked of it; a generation holds its model `hold_s` first, as a real
    model's lock is held while it generates."""

    def __init__(self, hold_s: float = 0.0, **kw) -> None:
        super().__init__(**kw)
        self.asked, self.model, self.hold_s = threading.Event(), threading.Lock(), hold_s

    def stream(self, messages, **kw):
        self.asked.set()
        with self.model:
            time.sleep(self.hold_s)
            yield from super().stream(messages, **kw)


class _SignalAfterTheReply:
    """The text heuristic, each score given once the LLM was asked (or WAIT_S passed)."""

    def __init__(self, model: _AskedLLM) -> None:
        self.model, self.heuristic = model, HeuristicCompleteness()
        self.reply_begun: list[bool] = []

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        self.reply_begun.append(self.model.asked.wait(WAIT_S))
        return self.heuristic.probability(text)


class _SignalOnTheSessionsLLM:
    """A signal that asks the session's own LLM (as the `llm` signal does, its `llm`): a reply
    generating would hold that model, so the score comes first. Had a reply begun, it would have
    been asked within 0.3 s and would hold the model a second."""

    def __init__(self, llm: _AskedLLM) -> None:
        self.llm, self.heuristic = llm, HeuristicCompleteness()
        self.had_the_model: list[bool] = []

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        self.llm.asked.wait(0.3)
        if got := self.llm.model.acquire(timeout=0.3):
            self.llm.model.release()
        self.had_the_model.append(got)
        return self.heuristic.probability(text)


def _ask(signal_of, hold_s: float = 0.0) -> tuple[Any, Any]:
    voice = LineVoice()
    llm = _AskedLLM(hold_s, replies=["We close at nine."])
    signal = signal_of(llm)
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=signal, llm=llm, tts=ToneTTS(ms_per_char=10.0))
    speech = voice.say("What time do you close today?")
    rec = call(stages, [Clip(speech, at_s=0.5),
                        Clip(np.zeros(3 * INPUT_RATE_HZ, np.float32), at_s=0.5 + len(speech) / INPUT_RATE_HZ)],
               config=make_config())
    return signal, rec


def test_the_reply_is_begun_before_the_turn_is_scored_and_adopted_at_the_commit():
    signal, rec = _ask(_SignalAfterTheReply)
    assert signal.reply_begun and all(signal.reply_begun), rec.timeline()
    _answered_at_the_short_wait(rec)


def test_a_signal_on_the_sessions_own_llm_scores_the_turn_before_the_reply_takes_the_model():
    signal, rec = _ask(_SignalOnTheSessionsLLM, hold_s=1.0)
    assert signal.had_the_model and all(signal.had_the_model), rec.timeline()
    _answered_at_the_short_wait(rec)


def _answered_at_the_short_wait(rec: Any) -> None:
    assert [m.detail["outcome"] for m in rec.stages("speculation")] == ["adopted"], rec.timeline()
    assert rec.transcripts == ["What time do you close today?"] and rec.agent_lines == ["We close at nine."]
    assert [c.reason for c in rec.commits] == ["min_silence"], rec.timeline()
