"""The LLM waits between tokens while the reply's first chunk is synthesized (`response.first_audio_first`,
off by default): on 2 cores the two models share the cores, and the first chunk's synthesis takes
about half the time with the LLM paused (bench/results/2026-12-05-tts-contention.md), though at
the wire it did not show (bench/results/2026-12-05-wire-first-audio-first.md). Only the first
chunk: the later ones are made while the first one plays."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.calls import call
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

REPLY = ("Sure, I can help. I will look at the diary for this week and the next one, and the one after "
         "that too, and then I will tell you every time that is free in the mornings and afternoons.")


class CountingLLM(ScriptedLLM):
    """A scripted reply whose tokens take real time, as a model's do; `streamed` counts them."""

    def __init__(self) -> None:
        super().__init__(replies=[REPLY])
        self.streamed = 0

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event, **kwargs: Any) -> Any:
        for piece in super().stream(messages, cancel=cancel, **kwargs):
            time.sleep(0.01)  # a token's decode
            self.streamed += 1
            yield piece


class WatchingTTS(ToneTTS):
    """A voice whose synthesis takes real time, noting how many tokens the LLM streamed meanwhile."""

    def __init__(self, llm: CountingLLM) -> None:
        super().__init__(ms_per_char=30.0)
        self.llm = llm
        self.during: list[int] = []

    def synthesize(self, text: str, *, speed: float | None = None) -> np.ndarray:
        before = self.llm.streamed
        time.sleep(0.15)
        self.during.append(self.llm.streamed - before)
        return super().synthesize(text, speed=speed)


def _turn(*, first_audio_first: bool) -> WatchingTTS:
    llm = CountingLLM()
    tts = WatchingTTS(llm)
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["Can you check the diary for me?"]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=tts)
    config = cfg.load(overrides=[f"response.first_audio_first={str(first_audio_first).lower()}"])
    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3)], config=config)
    assert rec.agent_lines and rec.agent_lines[0].startswith("Sure,"), rec.timeline()
    return tts


def test_the_llm_waits_while_the_first_chunk_is_synthesized() -> None:
    tts = _turn(first_audio_first=True)
    assert len(tts.during) >= 2, tts.during
    assert tts.during[0] <= 1, tts.during  # at most the token in flight when the pause began
    assert max(tts.during[1:]) >= 3, tts.during  # later chunks are made beside the model


def test_off_as_shipped_the_llm_streams_on_while_the_first_chunk_is_synthesized() -> None:
    assert cfg.load().response.first_audio_first is False
    tts = _turn(first_audio_first=False)
    assert tts.during[0] >= 3, tts.during
