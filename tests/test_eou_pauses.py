"""Silence waits learned per caller (`pipeline.stages.eou_pauses.LearnedPauses`): they start at
the configured ones, lengthen for a caller who pauses long mid-turn, shorten for one who pauses
briefly, and stay within their bounds."""

from __future__ import annotations

import pytest

from pipeline.base.config import TurnPolicy
from pipeline.stages.eou_pauses import LearnedPauses


def test_with_no_pause_seen_the_waits_are_the_configured_ones():
    pauses = LearnedPauses.for_policy(TurnPolicy())
    assert pauses.waits() == (TurnPolicy().min_silence_ms, TurnPolicy().max_silence_ms)
    assert pauses.policy(TurnPolicy()) == TurnPolicy()


def test_a_caller_who_pauses_long_mid_turn_gets_longer_waits():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    for _ in range(3):
        pauses.observed_pause(700)
    short, long = pauses.waits()
    assert 600 < short <= 1200 and 1500 < long <= 3000
    assert short > 700 * 0.9  # the next such pause no longer reaches the min wait


def test_a_caller_who_pauses_briefly_gets_shorter_waits_but_not_below_the_bounds():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500)
    for _ in range(50):
        pauses.observed_pause(150)
    assert pauses.waits() == (400, 1000)


def test_the_waits_stay_within_bounds_and_apart_however_long_the_pauses():
    pauses = LearnedPauses(min_silence_ms=600, max_silence_ms=1500, gap_ms=300)
    for _ in range(50):
        pauses.observed_pause(5000)
    assert pauses.waits() == (1200, 3000)
    narrow = LearnedPauses(min_silence_ms=600, max_silence_ms=700, max_bounds_ms=(500, 3000))
    short, long = narrow.waits()
    assert long - short >= 300


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
    policy = pauses.policy(base)
    assert policy.complete_threshold == 0.7
    assert policy.min_silence_ms > base.min_silence_ms and isinstance(policy.min_silence_ms, int)


def test_a_weight_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="alpha"):
        LearnedPauses(alpha=0.0)
