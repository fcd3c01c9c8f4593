"""Barge-in that hears words: a backchannel over the agent resumes it, a real interruption (even
one word) cancels it, and the interruption keeps its first words. Real speech (Piper), real VAD
and Whisper, the scripted LLM; simulated time."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import LONG_REPLY, QUESTION, call, make_config, silence, with_stages
from pipeline.transports.scripted import Clip, after_stage

pytestmark = [pytest.mark.models, pytest.mark.slow]
WORDS = make_config(bargein={"hear_words": True})


def _stages(real_stages):
    return with_stages(real_stages, llm=ScriptedLLM(replies=[LONG_REPLY, "Sure, go ahead.", "Yes, it is."]))


def _voiced_ms(audio: np.ndarray) -> float:
    """Length of the audio from its first to its last 32 ms window above -35 dBFS."""
    win = 512
    loud = [i for i in range(0, len(audio) - win, win) if dbfs(audio[i:i + win]) > -35]
    return (loud[-1] - loud[0] + win) * 1000 / INPUT_RATE_HZ if loud else 0.0


def _over_reply(say, clip: np.ndarray, delay_s: float = 1.0) -> list[Clip]:
    return [Clip(say(QUESTION), 0.3), Clip(clip, None, after=after_stage("first_audio_out", 1), delay_s=delay_s)]


@pytest.mark.parametrize("backchannel", ["Mm-hmm.", "Uh-huh, yeah.", "I see."])
def test_a_backchannel_that_passes_the_gate_resumes_the_reply(real_stages, say, backchannel):
    audio = say(backchannel)
    assert 300 <= _voiced_ms(audio) <= 800, _voiced_ms(audio)  # a real backchannel's length
    rec = call(_stages(real_stages), _over_reply(say, audio), config=WORDS)
    story = rec.timeline()
    assert rec.stages("barge_in") == [], story  # the agent kept talking
    if rec.stages("barge_in_gate"):  # the gate fired and paused it: the words resumed it
        resumed = [m for m in rec.stages("false_interruption") if m.detail.get("verdict")]
        assert resumed and resumed[0].detail["verdict"] in ("backchannel", "silence", "unsure"), story
    assert rec.done[0].response["status"] == "completed", story
    assert rec.agent_lines[0] == LONG_REPLY, story  # heard to the end, nothing cut
    assert len(rec.done) == 1, story  # and the backchannel got no answer of its own
    assert len(rec.of("input_audio_buffer.speech_started")) == 1, story  # clients kept playing


@pytest.mark.parametrize("word, short", [("Stop.", True), ("No.", False), ("Wait.", True)])
def test_a_one_word_interruption_cancels_and_is_the_next_turn(real_stages, say, word, short):
    """"Wait." is ~200 ms here, under the gate's hold: heard out with `hear_short_words` (the
    default). "Stop." is about the hold itself: without them it fires the gate at 2 of 6 offsets
    of the caller's question (0-50 ms) against the VAD windows, with them at all 6."""
    rec = call(_stages(real_stages), _over_reply(say, say(word)),
               config=make_config(bargein={"hear_words": True, "hear_short_words": short}))
    story = rec.timeline()
    stop = rec.stages("barge_in")
    assert len(stop) == 1 and rec.done[0].response["status"] == "cancelled", story
    # a word shorter than the gate's 250 ms hold pauses the agent as a candidate; either way
    # the agent stays silent from there until it is cut
    listen = rec.stages("barge_in_gate") or rec.stages("barge_in_listen")
    answer = [m.ts for m in rec.stages("first_audio_out") if m.ts > stop[0].ts]  # the word's own reply
    assert listen and rec.agent_audio_between(listen[0].ts, min([stop[0].ts + 0.5, *answer])) == 0.0, story
    assert stop[0].ts - listen[0].ts <= 2 * 1.0, story  # decided within the bound
    assert len(rec.transcripts) == 2 and word.rstrip(".").lower() in rec.transcripts[1].lower(), story


@pytest.mark.parametrize("hear_words", [True, False])
@pytest.mark.parametrize("first, rest", [("Wait.", "Is the pool open in the evening?"),
                                         ("No.", "I said Tuesday, not Thursday."),
                                         ("Sorry.", "Can you repeat the checkout time?")])
def test_an_interruption_keeps_its_first_word_and_pause(real_stages, say, first, rest, hear_words):
    """A short word, a pause, then the question: the turn starts at the first word."""
    clip = np.concatenate([say(first), silence(450), say(rest)])
    rec = call(_stages(real_stages), _over_reply(say, clip),
               config=make_config(bargein={"hear_words": hear_words}))  # False: the gate alone
    story = rec.timeline()
    assert rec.stages("barge_in"), story
    # one turn or two (a pause past min_silence_ms may end the first), but every word is there,
    # in order, and answered: the first word is the start of what the caller said next
    heard = " ".join(rec.transcripts[1:]).lower()
    assert heard.split()[0].strip(",.!?") == first.rstrip(".").lower(), story
    key = rest.split()[-1].strip("?.").lower()
    assert key in heard, story
    assert rec.done[-1].response["status"] == "completed", story


@pytest.mark.parametrize("pause_ms", [150, 300])
@pytest.mark.parametrize("backchannel", ["Okay, okay.", "Sure, got it.", "Right, I see."])
def test_a_question_after_a_backchannel_is_answered(real_stages, say, backchannel, pause_ms):
    """The backchannel fires the gate, its words resume the reply; the question that follows is
    not lost: the gate re-arms at the verdict, and the caller still talking is the interruption
    (in the same turn, or the next one joined to it), with the backchannel's words kept."""
    first = say(backchannel)
    assert _voiced_ms(first) >= 300, _voiced_ms(first)  # long enough to fire the gate
    clip = np.concatenate([first, silence(pause_ms), say("And how long does that take to show up?")])
    rec = call(_stages(real_stages), _over_reply(say, clip), config=WORDS)
    story = rec.timeline()
    resumed = [m for m in rec.stages("false_interruption") if m.detail.get("verdict") == "backchannel"]
    assert resumed, story  # the case: the backchannel was heard out and the reply resumed
    assert rec.stages("barge_in"), story  # then the question interrupted it
    assert rec.done[0].response["status"] == "cancelled", story
    assert len(rec.transcripts) == 2, story
    asked = rec.transcripts[1].lower()
    assert "how long" in asked and "show up" in asked, story
    assert asked.split()[0].strip(",.!?") == backchannel.split()[0].strip(",.").lower(), story
    assert rec.done[-1].response["status"] == "completed", story  # and it was answered
