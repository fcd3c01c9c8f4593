"""Bounds that keep one caller from holding unbounded memory or work."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.base import events as ev
from pipeline.base.events import RecentEvents
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.testing import call, make_config, with_stages


def test_the_connection_event_log_is_bounded_in_bytes_not_only_in_count():
    log = RecentEvents(keep=10_000, max_bytes=1 << 20)
    delta = np.zeros(2205, np.float32)  # 100 ms of agent audio at 22,050 Hz: ~8.8 KB
    for i in range(2000):  # ~17.6 MB of audio events
        log.append(ev.OutputAudioDelta(response_id="r", item_id="i", delta=delta.copy(),
                                       sample_rate_hz=22_050, audio_ms=i * 100.0))
    assert log.bytes <= 1 << 20 and sum(e.delta.nbytes for e in log.events) <= 1 << 20
    assert log.events[-1].audio_ms == 199_900.0  # the newest are the ones kept
    big = ev.error_event("invalid_value", "x" * (3 << 20))  # one event over the cap on its own
    log.append(big)
    assert list(log.events) == [big]


@pytest.mark.models
def test_a_turn_longer_than_max_turn_ms_is_committed_as_it_stands(real_stages, jfk_16k):
    """jfk.wav is one 11 s turn (its pauses are shorter than max_silence_ms); capped at 4 s it is
    committed at the cap, and what follows is a turn of its own."""
    stages = with_stages(real_stages, llm=ScriptedLLM(replies=["Okay."]), tts=ToneTTS())
    rec = call(stages, [jfk_16k], config=make_config(turn={"max_turn_ms": 4000},
                                                     bargein={"enabled": False}))
    story = rec.timeline()
    commits = rec.commits
    assert commits and commits[0].reason == "max_length", story
    first = commits[0]
    assert (first.audio_end_ms - first.audio_start_ms) / 1000 == pytest.approx(4.0, abs=0.1), story
    assert any("max_turn_ms" in e.message for e in rec.of("x.log")), story
    assert len(rec.transcripts) >= 2, story  # the rest of the speech was not lost
