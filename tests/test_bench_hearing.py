"""The hearing benchmark's measure and sets (bench/hearing_keys.py, bench/hearing_sets.py): key
words are found by value and however they are written; the sets are what the decision needs."""

from __future__ import annotations

import pytest

from bench.eot_set import JFK_WORDS, PHRASES
from bench.hearing_keys import key_errors, keys, plain
from bench.hearing_sets import AGENTS, DEV_KEYS, HELD_OUT, JFK_KEYS, REFUND, WRONG


def test_brackets_mark_the_key_words_and_are_not_said():
    assert plain(REFUND) == "I would like a refund for my last order, please."
    assert keys(REFUND) == ["refund", "order"]


@pytest.mark.parametrize("marked, heard", [
    ("The order number is [four four one seven].", "The order number is 4417."),
    ("[four four one seven]", "forty four seventeen"),
    ("[four four one seven]", "44 17"),
    ("It's [K seven X nine two Q].", "It's K7X92Q."),
    ("[J Parker]", "J. Parker"),
    ("[late checkout]", "a late check-out"),
    ("[seven thirty]", "at 7:30"),
    ("[Two hundred and fifty] [pounds]", "£250 to my savings account"),
    ("[nine zero seven five]", "nine oh seven five"),
    ("[nineteen eighty-four]", "1984"),
    ("[five five five], [two one two]", "5552123456"),
    ("[eight fifty]", "No, 8.50."),
])
def test_a_key_word_is_found_however_it_is_written(marked, heard):
    assert key_errors(marked, heard) == (0, len(keys(marked)))


@pytest.mark.parametrize("marked, heard, missed", [
    (REFUND, "I would like a reef and for my last order, please.", 1),
    (REFUND, "I would like a reefing for my last order, please.", 1),
    ("[forty two] [dollars]", "$42.50", 1),  # another amount
    ("[four seven nine two]", "4.7.9 to", 1),
    ("[No], [Thursday].", "Now, Thursday.", 1),
    ("[No], [Thursday].", "", 2),
])
def test_a_key_word_misheard_is_missed(marked, heard, missed):
    assert key_errors(marked, heard)[0] == missed


def test_the_dev_keys_follow_the_end_of_turn_sentences_and_jfk():
    wholes = [" ".join(p.strip() for p in m.split("|")) for _, m in PHRASES]
    assert [plain(m) for _, m in DEV_KEYS] == wholes
    assert [plain(k) for k in JFK_KEYS] == list(JFK_WORDS)
    assert all(keys(m) for _, m in DEV_KEYS) and all(keys(k) for k in JFK_KEYS)


def test_the_held_out_set_has_30_sentences_in_5_domains_each_with_its_agent_and_a_wrong_one():
    assert len(HELD_OUT) >= 30 and len({d for d, _, _ in HELD_OUT}) >= 5
    assert HELD_OUT[0][2] == REFUND
    for domain, asked, marked in HELD_OUT:
        assert domain in AGENTS and asked and keys(marked)
    assert all(WRONG[d] != d and WRONG[d] in AGENTS for d in AGENTS)
    assert len({plain(m) for _, _, m in HELD_OUT} & {plain(m) for _, m in DEV_KEYS}) == 0
