"""Speculation at speech-stop (from the quick pass, or the last partial): adopted when the final
agrees, else dropped and begun again from the final. Real speech (Piper), real Whisper, simulated clock."""

from __future__ import annotations

import pytest

from pipeline.stages.fakes import ScriptedLLM
from pipeline.stt import same_words
from pipeline.testing import JFK_TEXT, call, make_config, silence, wer, with_stages

PARTIAL = make_config(response={"speculate_from": "partial"})  # the last partial as it stood
QUICK = make_config(response={"speculate_from": "quick"})  # the default: the quick pass
pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def full_window_stt():
    """whisper tiny.en with every pass on the full 30 s window: a quick pass precedes its final
    (with the default sized final there is none: the final is that pass)."""
    from pipeline.stt import WhisperSTT

    return WhisperSTT(window="full")


def _speculations(rec) -> list[tuple[str, str]]:
    return [(m.detail["source"], m.detail["outcome"]) for m in rec.stages("speculation")]


def test_same_words_ignores_case_and_punctuation_only():
    assert same_words("Can you tell me where the pharmacy is", "can you tell me where the pharmacy is?")
    assert not same_words("What time is checkup?", "What time is checkout?")
    assert not same_words("a table for two people.", "a table for two people tonight.")


def test_a_partial_the_final_confirms_is_adopted(real_stages, say):
    # tiny.en's last partial of this sentence already holds every word (checked on this clip)
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Two blocks north."])),
               [say("Can you tell me where the nearest pharmacy is"), silence(1500)], config=PARTIAL)
    assert _speculations(rec) == [("partial", "adopted")], rec.timeline()
    assert rec.session.turns.speculation.used == 1
    assert len(rec.of("response.created")) == 1 and rec.agent_lines == ["Two blocks north."]
    assert rec.stages("first_audio_out")[0].ts - rec.commits[0].ts <= 0.021  # audio made before commit


def test_a_partial_the_final_contradicts_is_dropped_and_the_final_speculated_on(real_stages, say):
    # the last partial pass ends before "tonight": its text lacks the last word
    text = "I would like to book a table for two people tonight."
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Booked."])), [say(text), silence(1500)],
               config=PARTIAL)
    assert _speculations(rec) == [("partial", "dropped"), ("final", "adopted")], rec.timeline()
    dropped = rec.stages("speculation")[0].detail["transcript"]
    assert not same_words(dropped, rec.transcripts[0])
    assert len(rec.of("response.created")) == 1  # the dropped one never reached a client
    assert rec.agent_lines == ["Booked."]


def test_speculating_from_the_final_only_waits_for_it(real_stages, say):
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Two blocks north."])),
               [say("Can you tell me where the nearest pharmacy is"), silence(1500)],
               config=make_config(response={"speculate_from": "final"}))
    assert _speculations(rec) == [("final", "adopted")], rec.timeline()


class _PrefixSpy:
    """The real Whisper stage, noting the prefix each final pass was handed."""

    def __init__(self, stt, *, prefix_final: bool) -> None:
        self.stt, self.prefix_final, self.prefixes = stt, prefix_final, []

    def transcribe(self, audio, *, final: bool) -> str:
        return self.stt.transcribe(audio, final=final)

    def transcribe_after(self, audio, prefix: str) -> str:
        self.prefixes.append(prefix)
        return self.stt.transcribe_after(audio, prefix)


@pytest.mark.parametrize("prefix_final", [True, False])
def test_the_final_pass_starts_from_the_confirmed_words_and_keeps_its_word_error(
        real_stages, jfk_16k, prefix_final):

    spy = _PrefixSpy(real_stages.stt, prefix_final=prefix_final)
    rec = call(with_stages(real_stages, stt=spy, llm=ScriptedLLM(replies=["Indeed."])),
               [jfk_16k, silence(1600)])
    transcript = " ".join(rec.transcripts)
    assert wer(JFK_TEXT, transcript) <= 0.15, transcript  # the bound of test_stages_real.py
    if prefix_final:
        assert spy.prefixes and all(spy.prefixes), rec.timeline()
        last = spy.prefixes[-1].split()
        assert same_words(" ".join(transcript.split()[:len(last)]), " ".join(last))  # kept as forced
    else:
        assert spy.prefixes == []


def test_the_quick_pass_at_speech_stop_holds_the_last_word_and_is_adopted(real_stages, full_window_stt, say):
    """The pass over the whole turn on a sized window at speech-stop (~0.1 s) hears "tonight",
    which the last partial lacked (above); the full-window final agrees, so the reply made from
    it is adopted, ready before the commit."""
    text = "I would like to book a table for two people tonight."
    rec = call(with_stages(real_stages, stt=full_window_stt, llm=ScriptedLLM(replies=["Booked."])),
               [say(text), silence(1500)], config=QUICK)
    assert _speculations(rec) == [("quick", "adopted")], rec.timeline()
    assert "tonight" in rec.stages("speculation")[0].detail["transcript"].lower()
    assert full_window_stt.window_stats["quick sized"] >= 1
    assert rec.agent_lines == ["Booked."]
    assert rec.stages("first_audio_out")[0].ts - rec.commits[0].ts <= 0.021  # made before commit


def test_with_a_sized_final_the_reply_starts_from_the_final_and_is_ready_at_commit(real_stages, say):
    """The default: the final pass is itself sized (~0.1 s at speech-stop), so no quick pass runs
    beside it; the reply begun from the final is held, adopted at the commit, and made before it."""
    assert real_stages.stt.window_final and not real_stages.stt.quick_pass
    text = "I would like to book a table for two people tonight."
    before = real_stages.stt.window_stats.copy()
    rec = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Booked."])), [say(text), silence(1500)],
               config=QUICK)
    assert _speculations(rec) == [("final", "adopted")], rec.timeline()
    assert "tonight" in rec.stages("speculation")[0].detail["transcript"].lower()
    assert real_stages.stt.window_stats["sized"] > before["sized"]  # the final pass was sized
    assert not any(k.startswith("quick") and v > before[k] for k, v in real_stages.stt.window_stats.items())
    assert rec.agent_lines == ["Booked."]
    assert rec.stages("first_audio_out")[0].ts - rec.commits[0].ts <= 0.021  # made before commit
