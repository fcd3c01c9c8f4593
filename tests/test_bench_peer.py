"""`bench.peer`'s own logic, without models or servers: the ratio, the peer's row from its marks,
the raw PCM framing on both ends (the serializer needs Pipecat, the `peer` extra) and the report."""

from __future__ import annotations

import asyncio
import base64
import json
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from bench import peer


def _row(clip: str, side: str, ms: float | None, r: int = 0) -> dict[str, Any]:
    return {"clip": clip, "round": r, "side": side, "turns_committed": 1,
            **dict.fromkeys(peer.STAGES), "end_to_audio": ms}


def test_the_ratio_is_the_median_over_clips_of_each_clips_medians() -> None:
    rows = [_row("a", "ours", 400, 0), _row("a", "ours", 600, 1), _row("a", "peer", 1000, 0),
            _row("a", "peer", 1000, 1),  # a: 500 / 1000
            _row("b", "ours", 900), _row("b", "peer", 1000),  # b: 0.9
            _row("c", "ours", 300), _row("c", "peer", 1000),  # c: 0.3
            _row("d", "ours", 300), _row("d", "peer", None)]  # d: the peer never answered
    ratios = peer.clip_ratios(rows)
    assert list(ratios) == ["a", "b", "c", "d"]
    assert ratios["a"] == pytest.approx(0.5) and ratios["d"] is None
    assert peer.median_ratio(ratios) == pytest.approx(0.5)
    assert peer.median_ratio({"x": None}) is None


def test_a_calls_unanswered_trial_is_left_out_of_its_clips_median() -> None:
    rows = [_row("a", "ours", 500), _row("a", "ours", None, 1), _row("a", "peer", 1000)]
    assert peer.clip_ratios(rows)["a"] == pytest.approx(0.5)


def test_the_peers_row_takes_each_stages_first_mark_of_the_turn_that_ends_the_clip() -> None:
    end = 100.0
    marks = [("commit", 97.0), ("speech_stopped", 96.5),  # an earlier turn, before the last second
             ("speech_stopped", 100.25), ("commit", 100.5), ("stt_final", 100.75),
             ("llm_first_token", 101.0), ("llm_first_token", 101.5), ("tts_first_audio", 101.25),
             ("first_audio_out", 101.3)]
    row = peer.peer_row(marks, 101.5, end)
    assert row["turns_committed"] == 2
    assert row["speech_stopped"] == pytest.approx(250) and row["commit"] == pytest.approx(500)
    assert row["llm_first_token"] == pytest.approx(1000)
    assert row["end_to_audio"] == pytest.approx(1500) and row["first_chunk"] is None
    assert peer.peer_row([], None, end)["end_to_audio"] is None


def test_the_client_sends_the_same_pieces_as_raw_pcm() -> None:
    sent: list[Any] = []

    class FakeSocket:
        async def send(self, message: Any) -> None:
            sent.append(message)

    pcm = np.arange(2400, dtype="<i2").tobytes()  # 100 ms at 24 kHz
    append = json.dumps({"type": "input_audio_buffer.append",
                         "audio": base64.b64encode(pcm).decode()})
    asyncio.run(peer.PcmSocket(FakeSocket()).send(append))
    assert sent == [pcm]


def test_the_serializer_frames_raw_pcm16_at_the_wire_rate_both_ways() -> None:
    pytest.importorskip("pipecat", reason="Pipecat is the `peer` extra")
    from pipecat.frames.frames import (
        InputAudioRawFrame,
        OutputAudioRawFrame,
        OutputTransportMessageUrgentFrame,
        TextFrame,
    )

    from bench.peer_bot import PcmSerializer

    async def go() -> None:
        s = PcmSerializer()
        await s.setup(SimpleNamespace(audio_in_sample_rate=16_000))  # type: ignore[arg-type]
        t = np.arange(2400) / 24_000
        piece = (8000 * np.sin(2 * np.pi * 300 * t)).astype("<i2").tobytes()  # 100 ms, 24 kHz
        frames = [await s.deserialize(piece) for _ in range(10)]
        got = [f for f in frames if f is not None]
        assert got and all(isinstance(f, InputAudioRawFrame) for f in got)
        assert {(f.sample_rate, f.num_channels) for f in got} == {(16_000, 1)}
        samples = sum(len(f.audio) for f in got) // 2  # a second in, about a second out at 16 kHz
        assert 16_000 * 0.9 <= samples <= 16_000
        assert await s.deserialize('{"type": "anything"}') is None  # text from the client: ignored
        assert await s.deserialize(b"") is None

        out = OutputAudioRawFrame(audio=piece, sample_rate=24_000, num_channels=1)
        assert await s.serialize(out) == piece  # at the wire rate already: as it is
        half = OutputAudioRawFrame(audio=piece, sample_rate=16_000, num_channels=1)
        assert len(await s.serialize(half) or b"") > len(piece)  # resampled up to 24 kHz
        mark = {"type": "mark", "stage": "commit", "t": 1.5}
        assert json.loads(await s.serialize(OutputTransportMessageUrgentFrame(message=mark))) == mark
        assert await s.serialize(TextFrame(text="hello")) is None

    asyncio.run(go())


def test_the_observer_marks_each_turn_end_and_its_replys_first_token_and_audio_once() -> None:
    pytest.importorskip("pipecat", reason="Pipecat is the `peer` extra")
    from pipecat.frames.frames import (
        LLMTextFrame,
        TranscriptionFrame,
        TTSAudioRawFrame,
        UserStoppedSpeakingFrame,
        VADUserStoppedSpeakingFrame,
    )
    from pipecat.observers.base_observer import FramePushed
    from pipecat.processors.frame_processor import FrameDirection

    from bench.peer_bot import MarksObserver

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    source = SimpleNamespace(get_clock=lambda: SimpleNamespace(get_time=lambda: 2_000_000_000))
    audio = TTSAudioRawFrame(audio=b"\0\0" * 240, sample_rate=24_000, num_channels=1,
                             context_id="c")
    turn = [VADUserStoppedSpeakingFrame(), UserStoppedSpeakingFrame(),
            TranscriptionFrame(text="hi", user_id="", timestamp=""), LLMTextFrame(text="a"),
            LLMTextFrame(text="b"), audio, audio]

    async def go() -> None:
        observer = MarksObserver(send)
        for frame in [*turn, *turn]:
            await observer.on_push_frame(FramePushed(
                source=source, destination=None, frame=frame,  # type: ignore[arg-type]
                direction=FrameDirection.DOWNSTREAM, timestamp=1_500_000_000))

    asyncio.run(go())
    stages = [m["stage"] for m in sent]
    once = ["speech_stopped", "commit", "stt_final", "llm_first_token", "tts_first_audio"]
    assert stages == once + once  # each turn: its end, its transcript, its reply's first token
    assert all(m["type"] == "mark" and m["t"] > 0 for m in sent)


def test_the_report_lists_every_call_and_the_ratio() -> None:
    rows = [_row("q", "ours", 500), _row("q", "peer", 1000), _row("q", "ours", 700, 1),
            _row("q", "peer", None, 1)]
    text = peer.report({"rows": rows, "rounds": 2, "gap_s": 1.0, "serve_args": [],
                        "clips": {"q": 1.5}}, "Machine: test", "python -m bench.peer")
    assert "| ours | 2/2 | 600 |" in text and "| peer | 1/2 | 1000 |" in text
    assert "| q | 1.5 | 600 | 1000 | 0.60 |" in text and "**0.60**" in text
    assert text.count("no answer") == 1
