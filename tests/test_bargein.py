"""Barge-in on the simulated clock: real audio mixed over the agent's real playback."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.bargein import BargeInGate, WordsJudge
from pipeline.base.audio import INPUT_RATE_HZ, WINDOW_MS, dbfs
from pipeline.base.config import BargeInPolicy
from pipeline.call.heard import SpokenChunk, heard_text
from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import (
    JFK_TEXT,
    LONG_REPLY,
    QUESTION,
    call,
    make_config,
    mm_hmm,
    noise,
    wer,
    with_stages,
)
from pipeline.transports.scripted import Clip, after_stage
from pipeline.turns import WordsHeard


def _gate_run(levels_dbfs, probs, policy=None) -> list[int]:
    gate = BargeInGate(policy or BargeInPolicy())
    return [i for i, (lv, p) in enumerate(zip(levels_dbfs, probs, strict=False))
            if gate.update(level_dbfs=lv, voice_prob=p, window_ms=WINDOW_MS, end_ms=(i + 1) * WINDOW_MS)]


def test_gate_needs_energy_voice_and_duration_together():
    n = 20
    assert _gate_run([-20] * n, [0.9] * n) == [7]  # 8 windows = 256 ms >= 250 ms
    assert _gate_run([-50] * n, [0.9] * n) == []  # quiet voice
    assert _gate_run([-20] * n, [0.3] * n) == []  # loud noise
    bursts = ([-20] * 5 + [-60]) * 4  # 160 ms bursts never add up
    assert _gate_run(bursts, [0.9] * len(bursts)) == []
    assert _gate_run([-20] * n, [0.9] * n, BargeInPolicy(min_duration_ms=200)) == [6]


def test_the_words_verdict_is_read_from_the_words_alone():
    judge = WordsJudge(BargeInPolicy())
    heard = dict(turn_id="item_x", final=True, done_ms=600.0)
    assert judge.verdict(WordsHeard(text="Mm-hmm.", **heard), now_ms=0.0) == "backchannel"
    assert judge.verdict(WordsHeard(text="", **heard), now_ms=0.0) == "silence"
    assert judge.verdict(WordsHeard(text="Wait.", **heard), now_ms=0.0) == "words"
    # a pass Whisper doubts (under min_word_logprob, -1.0) decides nothing
    assert judge.verdict(WordsHeard(text="Wait.", logprob=-1.3, **heard), now_ms=0.0) == "unsure"
    # more syllables than 200 ms of speech can hold: made-up words ("in a minute." for a "mm")
    short = dict(turn_id="item_x", final=False, done_ms=0.0, onset_ms=1000.0)
    assert judge.verdict(WordsHeard(text="In a minute.", **short), now_ms=1200.0) == "unsure"
    assert judge.verdict(WordsHeard(text="In a minute.", **short), now_ms=2000.0) == "words"
    # a turn the VAD never heard (the client commits it): no time to hold the words against
    assert judge.verdict(WordsHeard(turn_id="item_x", text="In a minute.", final=True), now_ms=0.0) == "words"
    judge.update_options(BargeInPolicy(backchannels=("wait",)))
    assert judge.verdict(WordsHeard(text="Wait.", **heard), now_ms=0.0) == "backchannel"


def test_heard_text_cuts_inside_the_chunk_being_played():
    chunks = [SpokenChunk("Let me process that refund for you.", 0, 1000),
              SpokenChunk("It takes a minute.", 1000, 500)]
    assert heard_text(chunks, 0) == ""
    assert heard_text(chunks, 1000) == "Let me process that refund for you."
    assert heard_text(chunks, 950) == "Let me process that refund for yo-"  # 33 of 35 characters
    assert heard_text(chunks, 1250).startswith("Let me process that refund for you. It takes")


# --- whole calls ------------------------------------------------------------------------------


def _stages(real_stages):
    return with_stages(real_stages, llm=ScriptedLLM(replies=[LONG_REPLY, "Sure, go ahead."]))


def _over_reply(say, clip: np.ndarray, delay_s: float = 1.0) -> list[Clip]:
    """The caller asks, then `clip` starts `delay_s` into the agent's first audio."""
    return [Clip(say(QUESTION), 0.3), Clip(clip, None, after=after_stage("first_audio_out", 1), delay_s=delay_s)]


@pytest.mark.models
@pytest.mark.parametrize("kind, seconds", [("cough", 0.1), ("white", 2.0), ("pink", 2.0), ("tones", 2.0)])
def test_noise_over_the_agent_does_not_barge_in(real_stages, say, kind, seconds):
    rec = call(_stages(real_stages), _over_reply(say, noise(kind, seconds)))
    assert rec.stages("barge_in") == [], rec.timeline()
    assert [d.response["status"] for d in rec.done][:1] == ["completed"]
    assert rec.of("conversation.item.truncated") == []


@pytest.mark.models
def test_a_short_mm_hmm_does_not_cancel_and_playback_continues(real_stages, say):
    mm = mm_hmm()  # a 200 ms backchannel: Piper's "Mm-hmm" spoken fast, trimmed to its voiced part
    assert dbfs(mm) > -30  # loud and voiced: only its length keeps it from interrupting
    rec = call(_stages(real_stages), [Clip(say(QUESTION), 0.3), Clip(mm, None, after=after_stage("first_audio_out", 1),
                                                                     delay_s=1.0)])
    story = rec.timeline()
    assert rec.stages("barge_in") == [], story
    assert rec.of("conversation.item.truncated") == [], story
    assert rec.agent_lines[0] == LONG_REPLY.replace("  ", " "), story  # all of it was heard
    assert any("backchannel" in e.message for e in rec.of("x.log")), story
    assert len([d for d in rec.done]) == 1  # the backchannel got no answer of its own


@pytest.mark.models
def test_a_real_interruption_cancels_everything_and_becomes_the_next_turn(real_stages, say, jfk_16k):
    """The gate alone (`hear_words = false`): it cancels the moment it fires."""
    rec = call(_stages(real_stages), _over_reply(say, jfk_16k, delay_s=1.0),
               config=make_config(bargein={"hear_words": False}))
    story = rec.timeline()
    fire = rec.stages("barge_in")
    assert len(fire) == 1 and fire[0].detail["why"] == "gate", story
    clip_start = next(c for c in rec.caller.clips if c.audio is jfk_16k).started_s
    # speech onset: first 32 ms window of jfk.wav above -30 dBFS (its leading silence is ~0.35 s)
    win = 512
    onset_s = clip_start + next(i for i in range(0, len(jfk_16k), win)
                                if dbfs(jfk_16k[i:i + win]) > -30) / INPUT_RATE_HZ
    delay_ms = (fire[0].ts - onset_s) * 1000
    assert 250 <= delay_ms <= 250 + 2 * WINDOW_MS + WINDOW_MS, (delay_ms, story)

    # all four: playback stopped (no agent audio written from the fire until the next reply)
    next_reply = rec.stages("first_audio_out")[1].ts
    assert rec.agent_audio_between(fire[0].ts, next_reply) == 0.0, story
    first = rec.done[0].response
    assert first["status"] == "cancelled" and first["status_details"]["reason"] == "turn_detected"
    response = rec.session.responses[0]
    assert response.generating.cancel.is_set() and response.speech.chunker.pending_text == ""

    # truncated to what was played, and the context holds only that, marked as cut off
    trunc = rec.of("conversation.item.truncated")[0]
    played_s = rec.agent_audio_between(0.0, fire[0].ts)  # all of it the first reply's
    assert abs(trunc.audio_end_ms - played_s * 1000) <= 1
    assert trunc.audio_end_ms <= response.speech.generated * 1000 / real_stages.tts.sample_rate_hz
    assert trunc.transcript and LONG_REPLY.startswith(trunc.transcript.rstrip("-").rstrip())
    assert len(trunc.transcript) < len(LONG_REPLY) / 2
    item = rec.session.conversation.get(trunc.item_id)
    assert item.text == trunc.transcript and item.interrupted
    context = rec.session.conversation.to_messages("x")
    assert any(m["content"].endswith("[cut off]") and m["role"] == "assistant" for m in context)

    # nothing the caller said is lost: the interruption is the next turn, whole
    assert len(rec.transcripts) == 2 and wer(JFK_TEXT, rec.transcripts[1]) <= 0.15, story


@pytest.mark.models
def test_echo_of_the_agent_does_not_barge_in_when_the_guard_is_on(real_stages, say):
    speakers = dict(echo_gain=0.7, echo_delay_ms=30.0)  # about -3 dB of the agent back in the mic
    # unguarded, the agent's echo interrupts it over and over: 20 s of call show it
    naive = call(_stages(real_stages), [Clip(say(QUESTION), 0.3)], **speakers, max_s=20.0,
                 config=make_config(bargein={"pause_on_candidate": False}))
    assert naive.stages("barge_in"), "without a guard the agent interrupts itself"
    guarded = call(_stages(real_stages), [Clip(say(QUESTION), 0.3)], **speakers,
                   config=make_config(bargein={"echo_guard": True}))
    story = guarded.timeline()
    assert guarded.stages("barge_in") == [], story
    # what the guard leaves: at most a brief hold while its filter converges on the first words,
    # 64 to 160 ms by where the question falls against the VAD windows (six placements, 0-50 ms)
    paused_ms = sum(m.detail["paused_ms"] for m in guarded.stages("false_interruption"))
    assert paused_ms <= 160, (paused_ms, story)
    assert guarded.of("conversation.item.truncated") == [], story
    assert guarded.agent_lines == [LONG_REPLY], story


@pytest.mark.models
def test_with_the_guard_a_real_interruption_still_fires(real_stages, say, jfk_16k):
    rec = call(_stages(real_stages), _over_reply(say, jfk_16k, delay_s=1.0), echo_gain=0.7, echo_delay_ms=30.0,
               config=make_config(bargein={"echo_guard": True}))
    assert len(rec.stages("barge_in")) == 1, rec.timeline()
    assert rec.done[0].response["status"] == "cancelled"


@pytest.mark.models
def test_hearing_words_a_real_interruption_cancels_once_its_words_are_heard(real_stages, say, jfk_16k):
    """`hear_words = true`: the gate's fire pauses playback; jfk.wav's words then cancel."""
    rec = call(_stages(real_stages), _over_reply(say, jfk_16k, delay_s=1.0),
               config=make_config(bargein={"hear_words": True}))
    story = rec.timeline()
    gate, stop = rec.stages("barge_in_gate"), rec.stages("barge_in")
    assert gate and stop and stop[0].detail["why"] in ("words", "still_talking"), story
    assert rec.agent_audio_between(gate[0].ts, stop[0].ts) == 0.0, story  # paused from the fire
    assert rec.done[0].response["status"] == "cancelled", story
