"""Waits learned per caller in a call (`turn.learn_pauses`, `stages/eou_pauses.LearnedPauses`
wired into `call/turn_taking.py`): a caller who pauses long inside turns gets longer waits in the
turns after, so a later pause after words that look finished no longer cuts the turn, and so
does one cut off who goes on as the reply begins; the waits stay within their bounds and never
shorten; off, nothing changes.

On the tone caller (each stretch of speech a tone whose pitch the scripted STT reads back as
its words) and the simulated clock; the completeness signal is the text heuristic, so "for" or
"and" at a pause waits for the long silence and a sentence with a period may end at the short.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.config import TurnPolicy
from pipeline.call.session import Stages
from pipeline.call.turn_taking import TurnTaking
from pipeline.stages.eou_pauses import LearnedPauses
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.testing import call, make_config
from pipeline.testing.scenario_voice import EnergyVAD, LineVoice
from pipeline.transports.scripted import Clip
from pipeline.turns import CommitReason, HeuristicCompleteness, TurnDetector


def _silence(ms: float) -> np.ndarray:
    return np.zeros(int(ms * INPUT_RATE_HZ / 1000), dtype=np.float32)


def _turn(voice: LineVoice, parts: list[str], pause_ms: float) -> np.ndarray:
    """One caller turn: its parts said with `pause_ms` of silence between them."""
    out: list[np.ndarray] = []
    for k, part in enumerate(parts):
        if k:
            out.append(_silence(pause_ms))
        out.append(voice.say(part))
    return np.concatenate(out)


# the first turn: three long pauses after words that plainly go on (the heuristic waits)
HESITANT = ["I'd like to book a room for", "two nights starting on", "Friday the twelfth for",
            "me and my wife."]
# the second: a pause after words that look finished, then more of the same request
SECOND = ["My name is John Smith.", "and my number is five five five."]


def _call(learn: bool, *, first_pause_ms: float = 1100, second_pause_ms: float = 800, **turn):
    voice = LineVoice()
    first = _turn(voice, HESITANT, first_pause_ms)
    second = _turn(voice, SECOND, second_pause_ms)
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=HeuristicCompleteness(),
                    llm=ScriptedLLM(replies=["Sure.", "Thanks.", "Bye."]), tts=ToneTTS(ms_per_char=10.0))
    first_s = len(first) / INPUT_RATE_HZ
    clips = [Clip(first, at_s=0.5), Clip(second, at_s=0.5 + first_s + 6.0),
             Clip(_silence(6000), at_s=0.5 + first_s + 6.0 + len(second) / INPUT_RATE_HZ)]
    config = make_config(turn={"learn_pauses": learn, **turn})
    return call(stages, clips, config=config)


def test_off_by_setting_a_pause_after_finished_looking_words_ends_the_turn():
    record = _call(learn=False)
    texts = record.transcripts
    assert len(texts) == 3, record.timeline()  # the first turn whole, the second cut in two
    assert texts[0] == " ".join(HESITANT)
    assert [c.reason for c in record.commits][1] == CommitReason.MIN_SILENCE
    assert record.session.turns.pauses is None


def test_a_caller_who_pauses_long_mid_turn_gets_longer_waits_and_is_not_cut_off():
    record = _call(learn=True)
    texts = record.transcripts
    assert texts == [" ".join(HESITANT), " ".join(SECOND)], record.timeline()
    pauses = record.session.turns.pauses
    assert pauses is not None and pauses.seen == 4  # three in the first turn, one in the second
    policy = record.session.turns.detector.policy
    assert policy.min_silence_ms > 800 + 200 and policy.max_silence_ms > TurnPolicy().max_silence_ms


def test_the_learned_waits_stay_within_their_bounds():
    # pauses just under the longest silence, over and over: the waits grow to their bounds only
    record = _call(learn=True, first_pause_ms=1300)
    pauses = record.session.turns.pauses
    assert pauses is not None and pauses.seen >= 3
    policy = record.session.turns.detector.policy
    assert TurnPolicy().min_silence_ms < policy.min_silence_ms <= pauses.min_ceiling_ms
    assert TurnPolicy().max_silence_ms < policy.max_silence_ms <= pauses.max_ceiling_ms
    assert policy.max_silence_ms - policy.min_silence_ms >= pauses.gap_ms
    # the config's own thresholds are untouched: only the detector's turn policy moves
    assert record.session.turns.policy.min_silence_ms == TurnPolicy().min_silence_ms


def test_a_quick_caller_keeps_the_configured_waits():
    record = _call(learn=True, first_pause_ms=250, second_pause_ms=1400)
    pauses = record.session.turns.pauses
    assert pauses is not None and pauses.seen >= 3
    policy = record.session.turns.detector.policy
    assert policy.min_silence_ms == TurnPolicy().min_silence_ms  # brief pauses: never shorter


# a request cut off at a pause after words that look finished, then another such pause later
CUT = ["My name is John Smith.", "and my number is five five five."]
LATER = ["I'd like a table.", "for two at seven."]
REPLY = "Sure, let me note that down for you."  # ~1.1 s of tone: still sounding when the caller goes on


def _cut_off_call(learn: bool, *, first: list[str] = CUT, backchannel: bool = False, **sections):
    """`first` said with a 1000 ms pause (an "Mm-hmm." a second after its words, with
    `backchannel`), then LATER with an 800 ms one, each answered by REPLY."""
    voice = LineVoice()
    opening, later = _turn(voice, first, 1000), _turn(voice, LATER, 800)
    stages = Stages(vad=EnergyVAD(), stt=voice, completeness=HeuristicCompleteness(),
                    llm=ScriptedLLM(replies=[REPLY] * 4), tts=ToneTTS(ms_per_char=30.0))
    opening_s = len(opening) / INPUT_RATE_HZ
    later_at = 0.5 + opening_s + 6.0
    clips = [Clip(opening, at_s=0.5), Clip(later, at_s=later_at),
             Clip(_silence(6000), at_s=later_at + len(later) / INPUT_RATE_HZ)]
    if backchannel:
        clips.insert(1, Clip(voice.say("Mm-hmm."), at_s=0.5 + opening_s + 1.0))
    return call(stages, clips, config=make_config(turn={"learn_pauses": learn}, **sections))


def test_a_caller_cut_off_who_goes_on_as_the_reply_begins_is_not_cut_off_again():
    off, on = _cut_off_call(learn=False), _cut_off_call(learn=True)
    # the first pause ends the turn either way: nothing is learned yet
    assert off.transcripts[:2] == on.transcripts[:2] == CUT, on.timeline()
    assert off.transcripts[2:] == LATER, off.timeline()  # fixed waits: cut off again
    assert on.transcripts[2:] == [" ".join(LATER)], on.timeline()  # learned from the cut-off
    pauses = on.session.turns.pauses
    assert pauses is not None and pauses.cut_offs == 1


@pytest.mark.parametrize("learn", [False, True])
def test_a_session_update_turns_it_on_and_off_keeping_what_was_learned(learn):
    taking = TurnTaking.__new__(TurnTaking)  # only the options: no session around it
    base = TurnPolicy(learn_pauses=learn)
    taking.policy = base
    taking.detector = TurnDetector(base)
    taking.pauses = before = LearnedPauses.follow(None, base)  # as __init__ sets it
    taking.update_options(TurnPolicy(learn_pauses=True))
    assert taking.pauses is not None and (taking.pauses is before) == learn  # on already: the same one
    taking.pauses.observed_pause(2000)
    seen = taking.pauses.seen
    taking.update_options(TurnPolicy(learn_pauses=True, min_silence_ms=500, max_silence_ms=1400))
    assert taking.pauses.seen == seen and taking.pauses.min_silence_ms == 500
    assert taking.detector.policy.min_silence_ms > 500
    taking.update_options(TurnPolicy(learn_pauses=False))
    assert taking.pauses is None and taking.detector.policy == TurnPolicy(learn_pauses=False)


def test_a_backchannel_as_the_reply_begins_teaches_nothing():
    record = _cut_off_call(learn=True, first=["My name is John Smith."], backchannel=True)
    # the "Mm-hmm." a second after the words, as the reply began, was no going on: the next
    # request's pause is cut off at the configured waits, and only that cut-off is learned
    assert record.transcripts == ["My name is John Smith.", *LATER], record.timeline()
    pauses = record.session.turns.pauses
    assert pauses is not None and pauses.cut_offs == 1 and pauses.average_ms < 900


def test_with_barge_in_off_talk_over_the_reply_teaches_nothing():
    # with barge-in off the reply plays on, and what is heard over it may be its own echo
    record = _cut_off_call(learn=True, bargein={"enabled": False})
    pauses = record.session.turns.pauses
    assert pauses is not None and pauses.cut_offs == 0, record.timeline()
    assert record.transcripts[-2:] == LATER, record.timeline()
