"""`bench.bargein_wire`: what the caller hears of a reply talked over, read from the deltas the
client got, and one call of each kind against a server on fake stages (energy VAD, scripted
STT and LLM, tone voice)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from bench import bargein_wire as bw
from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.config import Config
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing import LONG_REPLY
from pipeline.testing.scenario_voice import EnergyVAD
from pipeline.testing.server import ServerThread
from pipeline.turns import HeuristicCompleteness

LOUD = (0.3 * np.sin(2 * np.pi * 220 * np.arange(2400) / bw.WIRE_RATE_HZ) * 32767).astype("<i2").tobytes()
QUIET = np.zeros(2400, "<i2").tobytes()  # 100 ms each


def _tone(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * INPUT_RATE_HZ)) / INPUT_RATE_HZ
    return (0.3 * np.sin(2 * np.pi * 400 * t)).astype(np.float32)


def test_the_heard_timeline_plays_each_delta_after_the_one_before_it() -> None:
    heard = bw.Heard()
    a = heard.add(0.0, "r", LOUD)
    b = heard.add(0.02, "r", LOUD)  # came early (the server's lead): heard after the first
    assert a["start"] == 0.0 and b["start"] == pytest.approx(0.1)
    assert b["sounds"][0] == pytest.approx(0.1) and len(b["sounds"]) == 10
    assert heard.add(0.5, "r", QUIET)["sounds"] == []  # silence is heard as nothing


def test_a_break_in_the_stream_is_where_the_agent_stops_and_a_later_delta_where_it_resumes() -> None:
    heard = bw.Heard()
    for i in range(10):  # 1 s of agent audio, a delta every 100 ms
        heard.add(i * 0.1, "r", LOUD)
    heard.add(2.0, "r", LOUD)  # after a 1.1 s break: resumed
    state = bw.read_heard(heard.deltas, "r", onset=0.75, end=3.0)
    assert state["broke"] and state["stopped"] == pytest.approx(1.0)  # the last delta, heard out
    assert state["resumed"] == pytest.approx(2.0)
    assert state["stalls_before"] == 0
    # the stream ends at a cancel: the call's end stands for the next arrival
    cut = bw.read_heard(heard.deltas[:10], "r", onset=0.75, end=3.0)
    assert cut["broke"] and cut["resumed"] is None
    # a reply that played to its own end never broke
    ran = bw.read_heard(heard.deltas[:10], "r", onset=0.75, end=3.0, completed=True)
    assert not ran["broke"] and ran["stopped"] is None
    # the agent already silent (between words) at the onset: stopped at the onset, not before
    pause = bw.Heard()
    for i in range(10):
        pause.add(i * 0.1, "r", LOUD if i < 5 else QUIET)
    assert bw.read_heard(pause.deltas, "r", onset=0.75, end=3.0)["stopped"] == 0.75


def test_the_microphone_sends_a_clip_where_it_was_placed_and_silence_around_it() -> None:
    mic = bw.Microphone(ws=None, started=0.0)
    at = mic.say_at(0.03, np.full(160, 0.5, np.float32))  # 10 ms at 16 kHz = 240 samples at 24 kHz
    assert at == pytest.approx(0.03)
    first = np.frombuffer(mic._chunk(), "<i2")
    mic.sent += mic.step
    second = np.frombuffer(mic._chunk(), "<i2")
    assert not first.any()  # 0-20 ms: silence
    assert second[240:].any() and not second[:240].any()  # from 30 ms on


@pytest.mark.parametrize(("kind", "said", "cancelled"), [
    ("interruption", "Stop right there.", True),
    ("backchannel", "Mm-hmm.", False),
])
def test_one_call_talks_over_the_reply_and_reads_what_the_words_decided(kind, said, cancelled) -> None:
    stages = Stages(vad=EnergyVAD(), stt=ScriptedSTT(transcripts=["Tell me about the hotel.", said]),
                    completeness=HeuristicCompleteness(),
                    llm=ScriptedLLM(replies=[LONG_REPLY, "Of course."]), tts=ToneTTS())
    item = bw.Item(kind, said, "tone", _tone(0.6))
    with ServerThread(stages, config=Config.default()) as server:
        row = asyncio.run(bw.one_call(server.url, _tone(1.2), item, cap_s=40))
    assert "error" not in row and not row["reply_ended_before_onset"], row
    assert row["broke"] and row["stopped_ms"] is not None and row["stopped_ms"] >= 0  # it paused
    assert row["cancelled"] is cancelled
    assert row["marks"][0]["stage"] == "barge_in_pause"  # the server paused first, then judged
    if cancelled:
        assert row["cancelled_ms"] > 0 and row["resumed_ms"] is None
        assert any(m["stage"] == "barge_in" and m.get("why") == "words" for m in row["marks"])
    else:
        assert row["resumed_ms"] is not None and row["resumed_ms"] > row["stopped_ms"]
        assert any(m["stage"] == "false_interruption" for m in row["marks"])
    text = bw.report({"rows": [row], "skipped": []}, "Machine: test", "python -m bench.bargein_wire")
    assert f"| {kind} | {said} | tone |" in text
