"""bench.pause_prefill's caller lines and the partial it evaluates in the pause."""

from bench.pause_prefill import caller_lines, partial_of
from bench.wire import QUESTIONS


def test_the_partial_is_the_line_without_its_last_word_and_mark():
    assert partial_of("Can I book a table for two at seven tonight?") == "Can I book a table for two at seven"
    assert partial_of("Smith, S M I T H.") == "Smith, S M I T"
    assert partial_of("Yes.") == ""


def test_the_lines_are_the_wire_questions_then_written_lines_without_marks():
    lines = caller_lines(20)
    assert len(lines) == 20 and lines[:len(QUESTIONS)] == list(QUESTIONS)
    assert all("|" not in x and not x.startswith(("#", "agent:")) and x == " ".join(x.split()) for x in lines)
    assert len(set(lines)) == len(lines)
