"""Silence waits learned per caller (`pipeline.stages.eou_pauses.LearnedPauses`): they start at
the configured ones, lengthen for a caller who pauses long mid-turn or goes on as the reply to a
turn cut off begins, never shorten (a caller who pauses briefly keeps them), and stay within
their bounds."""

from __future__ import annotations

import pytest

from pipeline.base.config import TurnPolicy
from pipeline.stages.eou_pauses import LearnedPauses


def test_with_no_pause_seen_the_waits_are_the_configured_ones():
    pauses = LearnedPauses.for_policy(TurnPolicy())
    assert pauses.waits() == (TurnPolicy().min_silence_ms, TurnPolicy().max_silence_ms)
    base = TurnPolicy()
    assert LearnedPauses.policy_for(pauses, base) is base  # nothing learned: the policy itself
    assert LearnedPauses.policy_for(None, base) is base  # learning off


def test_a_caller_who_pauses_long_mid_turn_gets_longer_waits():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    for _ in range(3):
        pauses.observed_pause(700)
    short, long = pauses.waits()
    assert 600 < short <= 1200 and 1500 < long <= 3000
    assert short > 700 * 0.9  # the next such pause no longer reaches the min wait


def test_a_caller_who_pauses_briefly_keeps_the_configured_waits():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    for _ in range(50):
        pauses.observed_pause(150)
    assert pauses.waits() == (600, 1500) and pauses.average_ms == pauses.prior_pause_ms
    fast = LearnedPauses(min_silence_ms=300, max_silence_ms=1000)  # the "fast" preset: not raised
    assert fast.waits() == (300, 1000)


def test_brief_pauses_bring_long_waits_back_toward_the_configured_ones():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.observed_pause(1000)
    longer = pauses.waits()[0]
    for _ in range(5):
        pauses.observed_pause(200)
    assert 600 <= pauses.waits()[0] < longer


def test_the_waits_stay_within_bounds_and_apart_however_long_the_pauses():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500, gap_ms=300)
    for _ in range(50):
        pauses.observed_pause(5000)
    assert pauses.waits() == (1200, 3000)
    narrow = LearnedPauses(min_silence_ms=600, max_silence_ms=700)
    narrow.observed_pause(900)
    short, long = narrow.waits()
    assert short > 600 and long - short >= 700 - 600  # the gap as configured, where under 300 ms
    patient = LearnedPauses(min_silence_ms=1500, max_silence_ms=4000)  # configured above the ceilings
    for _ in range(50):
        patient.observed_pause(5000)
    assert patient.waits() == (1500, 4000)


def test_the_newest_pause_moves_the_average_by_alpha():
    pauses = LearnedPauses(prior_pause_ms=400, alpha=0.5)
    pauses.observed_pause(800)
    assert pauses.average_ms == 600 and pauses.seen == 1
    pauses.observed_pause(0)  # no silence: nothing learned
    assert pauses.seen == 1


def test_the_learned_policy_keeps_everything_else():
    base = TurnPolicy(complete_threshold=0.7)
    pauses = LearnedPauses.for_policy(base)
    pauses.observed_pause(900)
    policy = LearnedPauses.policy_for(pauses, base)
    assert policy.complete_threshold == 0.7
    assert policy.min_silence_ms > base.min_silence_ms and isinstance(policy.min_silence_ms, int)


def test_a_weight_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="alpha"):
        LearnedPauses(alpha=0.0)


def test_a_turn_cut_off_at_the_short_wait_and_gone_on_from_as_the_reply_begins_is_learned():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, "min_silence")
    pauses.turn_began(11_000, replying=True, over_agent=False)  # 1000 ms after the words
    assert pauses.seen == 0  # not before the turn says words: a cough, a door?
    assert pauses.heard_words()
    assert pauses.seen == 1 and pauses.cut_offs == 1
    assert pauses.waits()[0] > 1000 + 96  # the same pause, and the windows that confirm the speech, held
    assert not pauses.heard_words() and not pauses.interrupted()  # once per commit


@pytest.mark.parametrize(("reason", "onset_ms", "replying"), [
    ("max_silence", 11_000, True),  # it waited the long silence: nothing to learn
    ("client", 11_000, True),  # the client commits its turns
    ("min_silence", 11_600, True),  # past the long wait: the next turn
    ("min_silence", 11_000, False),  # after the reply was heard to its end: the next turn
])
def test_a_new_turn_is_no_cut_off_unless_it_follows_a_short_wait_within_the_long_one(reason, onset_ms, replying):
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, reason)
    pauses.turn_began(onset_ms, replying=replying, over_agent=False)
    assert not pauses.heard_words() and not pauses.interrupted()
    assert pauses.seen == 0 and pauses.waits() == (600, 1500)


def test_a_turn_that_never_says_a_word_teaches_nothing():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, "min_silence")
    pauses.turn_began(10_800, replying=True, over_agent=False)  # a cough as the reply is made
    pauses.turn_began(16_000, replying=False, over_agent=False)  # the next turn
    assert not pauses.heard_words()
    assert pauses.seen == 0 and pauses.waits() == (600, 1500)


def test_follow_keeps_what_was_learned_and_takes_the_new_waits():
    on = TurnPolicy(learn_pauses=True)
    learned = LearnedPauses.follow(None, on)
    assert learned is not None
    learned.observed_pause(1000)
    again = LearnedPauses.follow(learned, TurnPolicy(learn_pauses=True, min_silence_ms=500))
    assert again is learned and again.seen == 1 and again.min_silence_ms == 500
    assert LearnedPauses.follow(learned, TurnPolicy(learn_pauses=False)) is None


def test_talk_over_the_reply_is_learned_only_once_it_interrupts():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, "min_silence")
    pauses.turn_began(10_900, replying=True, over_agent=True)  # echo, a backchannel?
    assert not pauses.heard_words()  # words over the reply may be its echo
    assert pauses.seen == 0 and pauses.waits() == (600, 1500)
    assert pauses.interrupted()  # it was the caller going on
    assert pauses.cut_offs == 1 and pauses.waits()[0] > 900 + 96
    assert not pauses.interrupted()  # once


def test_talk_over_the_reply_that_never_interrupts_teaches_nothing():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, "min_silence")
    pauses.turn_began(10_900, replying=True, over_agent=True)  # the reply's echo, say
    pauses.turn_began(14_000, replying=False, over_agent=False)  # the next turn, after the reply was heard
    assert not pauses.interrupted() and not pauses.heard_words()
    assert pauses.seen == 0 and pauses.waits() == (600, 1500)


def test_an_interruption_that_began_past_the_long_wait_is_a_barge_in_not_a_cut_off():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, "min_silence")
    pauses.turn_began(10_950, replying=True, over_agent=True)  # echo residue opens the turn
    assert not pauses.interrupted(12_500)  # the caller's own speech, 2.5 s after their words
    assert pauses.seen == 0


def test_a_turn_joined_to_talk_held_from_over_the_reply_keeps_its_pause():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    pauses.committed(10_000, "min_silence")
    pauses.turn_began(10_900, replying=True, over_agent=True)  # "Wait." over the reply, let go
    pauses.turn_began(11_800, replying=True, over_agent=False, joined=True)  # "...is the pool open?"
    assert pauses.heard_words() and pauses.cut_offs == 1
    assert 900 <= pauses.average_ms < 1000  # the pause before "Wait.", not before the words joined to it


def test_the_waits_keep_a_configured_gap_narrower_than_the_default_one():
    # a realtime client's silence_duration_ms of 1400 under the 1500 ms long wait: nothing moves
    pauses = LearnedPauses(min_silence_ms=1400, max_silence_ms=1500)
    assert pauses.waits() == (1400, 1500)
    assert LearnedPauses(min_silence_ms=2000, max_silence_ms=2000).waits() == (2000, 2000)


def test_an_early_commit_scales_with_the_short_wait():
    base = TurnPolicy(early_silence_ms=300, early_threshold=0.95)
    pauses = LearnedPauses.for_policy(base)
    pauses.committed(10_000, "early_silence")
    pauses.turn_began(10_800, replying=True, over_agent=False)
    assert pauses.heard_words()
    policy = LearnedPauses.policy_for(pauses, base)
    assert policy.min_silence_ms > 800 and policy.early_silence_ms > 300
    assert policy.early_silence_ms <= policy.min_silence_ms
    assert LearnedPauses.policy_for(pauses, TurnPolicy()).early_silence_ms == 0  # off stays off
