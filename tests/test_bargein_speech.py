"""Words only from speech: a short non-lexical sound over the agent, followed by a long silence,
decides nothing (Whisper writes words out of the silence it is given: "and momentum." for a
"mm hmm" with a second of silence after it), while a real interruption still cancels. Real
speech (Piper), real VAD and Whisper, the scripted LLM; simulated time."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import (
    LONG_REPLY,
    QUESTION,
    call,
    make_config,
    mm_hmm,
    noise,
    silence,
    with_stages,
)
from pipeline.transports.scripted import Clip, after_stage

pytestmark = [pytest.mark.models]


def _stages(real_stages):
    return with_stages(real_stages, llm=ScriptedLLM(replies=[LONG_REPLY, "Sure, go ahead.", "Yes, it is."]))


def _over_reply(say, clip: np.ndarray, question_at_s: float = 0.3) -> list[Clip]:
    # the sound, then a second of the caller's silence before the call goes on
    return [Clip(say(QUESTION), question_at_s),
            Clip(np.concatenate([clip, silence(1000)]), None, after=after_stage("first_audio_out", 1), delay_s=1.0)]


def _sounds(say):
    return {
        "mm hmm (0.5 s, passes the gate)": say("Mm hmm."),
        "mm-hmm (0.2 s, under the gate's hold)": mm_hmm(),
        "cough": noise("cough", 0.1),
        "pink noise burst (0.5 s)": noise("pink", 0.5),
    }


@pytest.mark.parametrize("short_words", [False, True])
@pytest.mark.parametrize("sound", ["mm-hmm (0.2 s, under the gate's hold)", "cough",
                                   "pink noise burst (0.5 s)"])
def test_a_non_lexical_sound_then_silence_over_a_reply_resumes_it(real_stages, say, sound, short_words):
    """(The 0.5 s "Mm hmm." is heard as words at some placements: the test below tries six.)"""
    clip = _sounds(say)[sound]
    config = make_config(bargein={"hear_words": True, "hear_short_words": short_words})
    rec = call(_stages(real_stages), _over_reply(say, clip), config=config)
    story = rec.timeline()
    assert rec.stages("barge_in") == [], story  # the agent was not cancelled
    assert rec.done[0].response["status"] == "completed", story
    assert rec.agent_lines[0] == LONG_REPLY, story  # heard to the end, nothing cut
    assert len(rec.done) == 1, story  # and the sound got no answer of its own


@pytest.mark.parametrize("short_words", [False, True])
def test_counted_from_the_voice_an_mm_hmm_resumes_the_reply_wherever_it_falls(real_stages, say, short_words):
    """A 0.5 s "Mm hmm." is heard as words at some offsets against the 32 ms VAD windows ("Hey,
    Meme, Meme."), so one placement proves little: the call is made with the caller's question 0
    to 50 ms later, and most must resume. Counted from Silero's end of speech
    (`turn.voice_end_db = 0`), 2 of these 6 resumed; counted from the voice's end (the default), 5."""
    config = make_config(bargein={"hear_words": True, "hear_short_words": short_words})
    clip, resumed, stories = _sounds(say)["mm hmm (0.5 s, passes the gate)"], 0, []
    for shift_s in (0.0, 0.01, 0.02, 0.03, 0.04, 0.05):
        rec = call(_stages(real_stages), _over_reply(say, clip, 0.3 + shift_s), config=config)
        kept = not rec.stages("barge_in") and rec.done[0].response["status"] == "completed"
        resumed += kept and rec.agent_lines[0] == LONG_REPLY and len(rec.done) == 1
        stories.append(rec.timeline())
    assert resumed >= 4, "\n\n".join(stories)


@pytest.mark.parametrize("words", ["Stop.", "Wait, is the pool open?"])
def test_a_real_interruption_then_silence_still_cancels(real_stages, say, words):
    rec = call(_stages(real_stages), _over_reply(say, say(words)),
               config=make_config(bargein={"hear_words": True, "hear_short_words": True}))
    story = rec.timeline()
    assert rec.stages("barge_in"), story
    assert rec.done[0].response["status"] == "cancelled", story
    assert len(rec.transcripts) == 2, story  # the interruption is the next turn
