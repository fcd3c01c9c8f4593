"""A pass before speech-stop (`turn.early_pass_ms`): begun after a few trailing windows, the
reply it starts is ready sooner and adopted at the commit when the final pass, still made at
speech-stop over the audio it always read, says the same words; speech that goes on drops it and
loses no word. Real speech (Piper), real VAD and Whisper, the scripted LLM; simulated time."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.stages.fakes import ScriptedLLM
from pipeline.stt import same_words
from pipeline.testing import call, make_config, silence, with_stages
from pipeline.testing.voices import trim

pytestmark = pytest.mark.models
TEXT = "I would like to book a table for two people tonight."


def _call(real_stages, clips, **turn):
    # the scripted model says its lines in turn: a dropped reply takes one
    return call(with_stages(real_stages, llm=ScriptedLLM(replies=["Booked."] * 3)), clips,
                config=make_config(turn=turn))


def _outcomes(rec) -> list[tuple[str, str]]:
    return [(m.detail["source"], m.detail["outcome"]) for m in rec.stages("speculation")]


@pytest.mark.parametrize("early_ms", [0, 64])
def test_the_reply_begins_at_the_trailing_windows_and_is_adopted_at_commit(real_stages, say, early_ms):
    rec = _call(real_stages, [say(TEXT), silence(1500)], early_pass_ms=early_ms)
    story = rec.timeline()
    stop, start = rec.stages("speech_stopped")[0], rec.stages("response_start")[0]
    # a held reply's marks go out at its adoption, each with the moment it was made (`perf`)
    assert (start.perf < stop.perf) == bool(early_ms), story  # begun before speech-stop, or after
    assert _outcomes(rec) == [("early" if early_ms else "final", "adopted")], story
    assert "tonight" in rec.transcripts[0].lower() and rec.agent_lines == ["Booked."], story
    assert rec.stages("first_audio_out")[0].ts - rec.commits[0].ts <= 0.021, story  # made before commit


@pytest.mark.parametrize("lead_ms", [0, 300])
def test_the_final_pass_still_decides_the_words(real_stages, say, lead_ms):
    """The early pass reads less of the silence after the speech, and tiny.en may write other
    words from it (this clip is "reef and" or "refund" by where it falls against the windows):
    the final pass at speech-stop, over the audio it always read, hears what it hears with the
    option off, and the reply the caller hears answers those words."""
    clip = [silence(lead_ms), say("I would like a refund for my last order, please."), silence(1500)]
    off, on = (_call(real_stages, clip, early_pass_ms=ms) for ms in (0, 64))
    assert on.transcripts == off.transcripts, (off.timeline(), on.timeline())
    adopted = [m for m in on.stages("speculation") if m.detail["outcome"] == "adopted"]
    assert len(adopted) == 1 and same_words(adopted[0].detail["transcript"], on.transcripts[0]), on.timeline()
    assert len(on.of("response.created")) == 1 and on.agent_lines == ["Booked."], on.timeline()


def test_speech_that_goes_on_drops_the_early_reply_and_keeps_every_word(real_stages, say):
    """A gap between words long enough for the trailing windows to begin the early pass, too
    short for speech-stop (180-220 ms of silence here; Silero's smoothing holds ~100 ms of it):
    the pass and its reply are dropped, and the turn is heard whole."""
    first, rest = trim(say("I would like to book a table")), trim(say("for two people tonight."))
    rec = _call(real_stages, [silence(300), np.concatenate([first, silence(200), rest]), silence(1500)],
                early_pass_ms=64)
    story = rec.timeline()
    assert len(rec.stages("speech_stopped")) == 1, story  # the gap was no speech-stop
    assert _outcomes(rec)[0] == ("early", "dropped") and _outcomes(rec)[-1][1] == "adopted", story
    assert len(rec.transcripts) == 1 and "table for two" in rec.transcripts[0].lower(), story
    assert len(rec.of("response.created")) == 1 and rec.agent_lines == ["Booked."], story
