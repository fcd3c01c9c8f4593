"""A final pass that stops at a pause inside the turn hears the rest: tiny.en on a window sized to
the audio ended "Can you check the status of | my repair order?" (0.9 s apart) at "Can you check
the status of?", and the caller's last words were lost while the turn held. The speech after the
pause is transcribed on its own and appended, or the full window redoes the final
(pipeline/stages/stt_window.py, `MISSED_VOICE_MS`; pipeline/stages/whisper.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.stages.stt_window import MISSED_VOICE_MS, WindowPass
from pipeline.stages.unvoiced import resume_at, voice_after
from pipeline.testing import paused_speech

from .test_unvoiced import _Sized, _stage, _voice_then_silence


def _two_phrases() -> np.ndarray:
    """Voice 0.1-1.0 s, silence to 1.9 s, voice 1.9-2.6 s, then 0.3 s of silence."""
    first = _voice_then_silence(0.9, 0.9)
    return np.concatenate([np.zeros(INPUT_RATE_HZ // 10, np.float32), first, _voice_then_silence(0.7, 0.3)])


def test_voice_past_the_last_word_is_measured() -> None:
    audio = _two_phrases()
    # "of" (0.5-1.0 s) may take 400 ms to say: the second phrase's 700 ms are past it
    assert voice_after(audio, [(0.1, 0.5), (0.5, 1.0)], "of?") == pytest.approx(700 + 100, abs=30)
    # the alignment gave the last word the rest of the audio: its voice past the word counts too
    assert voice_after(audio, [(0.1, 0.5), (0.5, 2.8)], "the") == pytest.approx(1200 - 500, abs=30)
    assert voice_after(audio, [(0.1, 0.5), (0.5, 1.0), (1.9, 2.6)], "order?") == 0  # every phrase has words
    assert voice_after(audio, [(0.1, 2.6)], "555-212-3456") == 0  # a number said in groups is one word
    assert voice_after(audio, [], "") == 0


def test_the_rest_starts_where_the_voice_resumes() -> None:
    audio = _two_phrases()
    assert resume_at(audio, [(0.1, 0.5), (0.5, 2.8)]) == pytest.approx(1.9 - 0.1, abs=0.02)
    assert resume_at(audio, [(0.1, 0.5), (0.5, 1.0)]) == pytest.approx(1.8, abs=0.02)
    assert resume_at(audio, [(0.1, 0.5), (0.5, 1.0), (1.9, 2.6)]) is None  # no voice after a pause


def test_under_loud_noise_nothing_is_measured() -> None:
    audio = _two_phrases()
    audio += np.random.default_rng(3).normal(0, 0.3 / np.sqrt(2) / np.sqrt(10), len(audio)).astype(np.float32)
    assert voice_after(audio, [(0.1, 0.5), (0.5, 1.0)], "of?") == 0  # the voice cannot be told from the noise
    assert resume_at(audio, [(0.1, 0.5), (0.5, 1.0)]) is None


@pytest.mark.parametrize("voice_after_ms, final, doubt", [
    (MISSED_VOICE_MS, True, "missed"), (MISSED_VOICE_MS - 10, True, None), (MISSED_VOICE_MS, False, None)])
def test_a_final_with_voice_after_its_words_is_doubted(voice_after_ms: int, final: bool, doubt: str | None) -> None:
    done = WindowPass(frames=400, text="Can you check the status of?", tokens=8, bound=40, no_speech_prob=0.1,
                      avg_logprob=-0.2, final=final, voice_after_ms=voice_after_ms)
    assert done.doubt == doubt


def test_a_rest_that_reads_the_words_again_leaves_the_final_as_it_was(monkeypatch, tmp_path) -> None:
    stt = _stage(monkeypatch, tmp_path, window="sized", text="(the full window)")
    stt._sized_decoder = _Short("Can you check the status of?", rest="The status of?")
    assert stt.transcribe(_two_phrases(), final=True) == "Can you check the status of?"
    assert stt.window_stats["read again"] == 1 and stt.window_stats["full"] == 0


class _Short(_Sized):
    """A sized decoder whose words end with the first phrase (0.1-1.0 s); given the rest (audio
    from 1.8 s on), its words (`rest`), timed."""

    SPANS = ((0.1, 0.5), (0.5, 1.0))

    def __init__(self, text: str, rest: str | None) -> None:
        super().__init__(text)
        self.rest = rest

    def decode(self, features, frames, *, prefix, max_new_tokens, final=False, prompt=None, align=False):
        done = super().decode(features, frames, prefix=prefix, max_new_tokens=max_new_tokens, final=final,
                              prompt=prompt, align=align)
        if features.shape[-1] > 200:  # the whole turn
            return done
        return replace(done, text=self.rest or "", spans=((0.1, 0.4), (0.4, 0.8)) if self.rest else ())


def test_the_stage_hears_the_rest_of_such_a_final(monkeypatch, tmp_path) -> None:
    stt = _stage(monkeypatch, tmp_path, window="sized", text="(the full window)")
    stt._sized_decoder = _Short("Can you check the status of?", rest="My repair order?")
    audio = _two_phrases()
    assert stt.transcribe(audio, final=True) == "Can you check the status of? My repair order?"
    assert stt.window_stats["resumed"] == 1 and stt.window_stats["full"] == 0
    assert stt.last_pass.spans[-1] == pytest.approx((2.2, 2.6))  # timed in the turn's audio
    assert stt.transcribe(audio, final=False) == "Can you check the status of?"  # a partial is not timed


def test_where_the_rest_is_not_heard_the_full_window_redoes_the_final(monkeypatch, tmp_path) -> None:
    stt = _stage(monkeypatch, tmp_path, window="sized", text="Can you check the status of my repair order?")
    stt._sized_decoder = _Short("Can you check the status of?", rest=None)
    assert stt.transcribe(_two_phrases(), final=True) == "Can you check the status of my repair order?"
    assert stt.window_stats["missed"] == 1 and stt.window_stats["full"] == 1


@pytest.mark.models
def test_a_phrase_after_a_pause_inside_the_turn_is_heard(say) -> None:
    from pipeline.stages.whisper import WhisperSTT

    audio = paused_speech(["Can you check the status of", "my repair order?"], say, pause_s=0.9)
    stt = WhisperSTT(window="sized-final")
    # the turn's audio as the call's final pass read it: from its start to the voice's end and 250 ms
    text = stt.transcribe(audio[int(0.084 * INPUT_RATE_HZ):int(4.044 * INPUT_RATE_HZ)], final=True)
    assert "repair" in text.lower(), (text, dict(stt.window_stats))


def test_a_full_window_final_that_stopped_at_the_pause_hears_the_rest(monkeypatch, tmp_path) -> None:
    stt = _stage(monkeypatch, tmp_path, window="full", text="Can you check the status of?")
    stt._sized_decoder = _Short("(unused: the full window decodes)", rest="My repair order?")
    text, confidence = stt.transcribe_confident(_two_phrases(), final=True)
    assert text == "Can you check the status of? My repair order?"
    assert stt.window_stats["full missed"] == 1 and stt.window_stats["resumed"] == 1
    assert confidence.unvoiced_words == 0


@pytest.mark.parametrize("before, after, whole", [
    ("Can you check the status of?", "My repair order?", "Can you check the status of? My repair order?"),
    ("I want the blue one.", "the blue one.", None),  # read again: nothing new
    ("so ask not what your country can do for you, ask what you can do for your country.",
     "Ask what you can do for", None),
    ("I want the blue", "Blue one, please.", "I want the blue one, please."),
    ("No,", "no, not that one.", "No, not that one."),
])
def test_the_rest_is_joined_without_the_words_read_twice(before: str, after: str, whole: str | None) -> None:
    from pipeline.stages.whisper import joined

    assert joined(before, after) == whole


class _Voiced(_Sized):
    """A sized decoder whose every word has voice under it."""

    SPANS = ((0.1, 0.5), (0.5, 0.95))


@pytest.mark.parametrize("full, kept", [
    ("The reference number is 26.", "The reference number is 26, 9, 4,"),  # the full window lost words
    ("The reference number is 26, 9, 4.", "The reference number is 26, 9, 4."),  # it closed the sentence
])
def test_a_redo_for_the_closing_mark_keeps_the_words(monkeypatch, tmp_path, full: str, kept: str) -> None:
    stt = _stage(monkeypatch, tmp_path, window="sized", text=full)
    stt._sized_decoder = _Voiced("The reference number is 26, 9, 4,")  # no closing mark: redone
    assert stt.transcribe(_voice_then_silence(1.0, 0.6), final=True) == kept
    assert stt.window_stats["unfinished"] == 1 and stt.window_stats["full"] == 1
    assert stt.window_stats["sized words kept"] == (full != kept)


def test_a_full_window_final_left_open_is_checked_for_missed_words_too(monkeypatch, tmp_path) -> None:
    # no closing mark and stopped at the pause: both doubts, and the rest is still heard
    stt = _stage(monkeypatch, tmp_path, window="full", text="Can you check the status of")
    stt._sized_decoder = _Short("(unused: the full window decodes)", rest="My repair order?")
    assert stt.transcribe(_two_phrases(), final=True) == "Can you check the status of My repair order?"
    assert stt.window_stats["full missed"] == 1


def test_the_joined_pass_is_the_final_s_window(monkeypatch, tmp_path) -> None:
    stt = _stage(monkeypatch, tmp_path, window="sized", text="(the full window)")
    stt._sized_decoder = _Short("Can you check the status of?", rest="My repair order?")
    stt.transcribe(_two_phrases(), final=True)
    assert stt.last_pass.frames == stt.window.frames(_two_phrases().size // 160 - 1)  # not the rest's


def test_a_mark_alone_is_not_the_last_word() -> None:
    from pipeline.stages.whisper import WhisperSTT

    audio = _two_phrases()
    done = WindowPass(frames=400, text="I want to cancel the ...", tokens=8, bound=40, no_speech_prob=0.1,
                      avg_logprob=-0.2, final=True, spans=((0.1, 0.5), (0.5, 2.6)))
    # "the" may take 500 ms: the second phrase is past it, "..." would have allowed 200 only
    assert WhisperSTT._timed_words(audio, done).voice_after_ms == voice_after(audio, done.spans, "the")


def test_words_written_into_the_silence_do_not_outvote_the_full_window(monkeypatch, tmp_path) -> None:
    stt = _stage(monkeypatch, tmp_path, window="sized", text="A table for two.")
    stt._sized_decoder = _Sized("A table for two, it is, okay,")  # its last word timed after the voice
    assert stt.transcribe(_voice_then_silence(1.0, 0.6), final=True) == "A table for two."
    assert stt.window_stats["sized words kept"] == 0
