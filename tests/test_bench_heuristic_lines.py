"""bench.heuristic_lines: the heuristic judged on caller lines cut as Whisper writes a pause."""

from __future__ import annotations

from bench.heuristic_lines import as_whisper_writes, caller_lines, judge
from pipeline.turns import HeuristicCompleteness


def test_a_cut_is_closed_with_a_period_as_whisper_writes_a_pause():
    assert as_whisper_writes("I'd like to book a room for") == "I'd like to book a room for."
    assert as_whisper_writes("When I tried to pay online,") == "When I tried to pay online."
    assert as_whisper_writes("What time is checkout?") == "What time is checkout?"


def test_every_word_of_a_caller_line_is_a_cut_and_agent_lines_are_not(tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("# a comment\nagent: How can I help?\nI need a taxi. | Now.\n", encoding="utf-8")
    assert caller_lines(lines) == [("I.", False), ("I need.", False), ("I need a.", False),
                                   ("I need a taxi.", True), ("I need a taxi. Now.", True)]


def test_the_judgement_counts_mid_cuts_called_finished_and_finished_ones_left_waiting():
    items = [("If the store is open tomorrow.", False), ("I'd like to book a room for.", False),
             ("I need a taxi.", False), ("Yes, that's right.", True), ("My number is 555.", True)]
    got = judge(items, lambda t: HeuristicCompleteness().probability(t) >= 0.5)
    assert got["cut"] == ["I need a taxi."] and got["waited"] == ["My number is 555."]
    assert len(got["mid"]) == 3 and len(got["done"]) == 2
