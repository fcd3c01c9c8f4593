"""Words only from speech, without models: the rules that say a transcript may not be what the
caller said, and the final pass that reads no further than the speech the VAD heard."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.clock import SimClock
from pipeline.base.protocols import SpeechConfidence
from pipeline.stages.backchannel import syllables, unspoken
from pipeline.stt import SPEECH_PAD_MS, StreamingTranscriber

SURE = SpeechConfidence(avg_logprob=-0.3, no_speech_prob=0.1, compression_ratio=0.5)


@pytest.mark.parametrize("text, n", [("in a minute.", 4), ("Stop.", 1), ("Wait, is the pool open?", 6),
                                     ("I'd like to book a room", 6), ("five 5", 2)])
def test_syllables_are_counted_roughly_right(text, n):
    assert syllables(text) == n


def test_more_words_than_the_speech_heard_can_hold_are_not_taken():
    # whisper tiny.en's words for pipeline.testing.mm_hmm(), 200 ms of voiced sound
    assert unspoken("in a minute.", SURE, 200) == "too many words for the speech heard"
    assert unspoken("in a minute.", SURE, 600) is None  # the same words in 600 ms: possible
    assert unspoken("Wait.", SURE, 200) is None  # one word in a short sound is a real "Wait."


@pytest.mark.parametrize("confidence, why", [
    (SpeechConfidence(-0.6, 0.41, 0.6), "probably no speech"),  # "in a minute." for a "mm"
    (SpeechConfidence(-1.16, 0.1, 0.6), "unsure of the words"),
    (SpeechConfidence(-0.3, 0.1, 3.1), "repeats itself"),
    (SpeechConfidence(-0.38, 0.19, 0.38), None),  # "Stop."
    (SpeechConfidence(-0.2, 0.45, 0.5), None),  # sure words on a noisy line count
])
def test_whispers_own_confidence_decides(confidence, why):
    assert unspoken("Stop the reply now please", confidence, None) == why


def test_no_words_and_no_figures_decide_nothing():
    assert unspoken("", SpeechConfidence(-2.0, 0.9, 0.0), 10) is None
    assert unspoken("Stop.", None, None) is None


class _Lengths:
    """A backend that writes down how much audio each pass read."""

    def __init__(self) -> None:
        self.read: list[int] = []

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        self.read.append(len(audio))
        return "Hello."


def test_a_final_pass_reads_the_speech_and_a_pad_not_the_silence_after_it():
    async def main() -> list[int]:
        backend = _Lengths()
        stt = StreamingTranscriber(backend, SimClock())
        stt.append(np.zeros(2 * INPUT_RATE_HZ, np.float32))  # 2 s in the turn
        stt.mark_speech_end(INPUT_RATE_HZ // 2)  # the speech ended 0.5 s in
        await stt.start_final()
        stt.mark_speech_end(None)  # the caller speaks again: all of it
        await stt.start_final()
        return backend.read

    read = asyncio.run(main())
    assert read == [INPUT_RATE_HZ // 2 + SPEECH_PAD_MS * INPUT_RATE_HZ // 1000, 2 * INPUT_RATE_HZ]


def test_a_second_of_voice_is_speech_whatever_whisper_doubts():
    """tiny.en put "Please refund order A1." (1.6 s of voice) at 0.33 no-speech and -0.505 on one
    CPU, just past both bounds, and under them on another: the doubt decides short sounds only."""
    doubt = SpeechConfidence(-0.505, 0.327, 0.74)
    assert unspoken("Please refund order A1.", doubt, 1632) is None
    assert unspoken("in a minute.", doubt, 600) == "probably no speech"
