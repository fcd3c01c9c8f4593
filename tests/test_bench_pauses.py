"""bench.pauses counts a call that lost the caller's words apart from one that split them, and its
sentence sets are what its docstring says (no model runs here)."""

from __future__ import annotations

from bench import pauses
from bench.machine import describe_machine


def test_a_call_that_heard_too_few_words_lost_them() -> None:
    said = "Can you check the status of my repair order?"
    assert not pauses.words_lost(said, ["Can you check the status of my repair order?"])
    assert not pauses.words_lost(said, ["Can you check the status of?", "My repair order?"])  # split, not lost
    assert not pauses.words_lost(said, ["Can you check the status of my report order?"])  # misheard, not lost
    assert pauses.words_lost(said, ["Can you check the status of?"])
    assert pauses.words_lost("I'd like to order a pizza with extra cheese.", ["I'd like to order a pizza.", ""])
    assert not pauses.words_lost("My zip code is nine four, | one zero three.", ["My zip code is 9.4. 1.03."])


def test_the_report_counts_the_lost_calls_per_voice() -> None:
    rows = [{"voice": v, "why": "a dangling word", "said": "Can you check the status of | my repair order?",
             "turns": 1, "heard": [heard], "lost": pauses.words_lost("Can you check the status of my repair order?", [heard])}
            for v, heard in (("Piper", "Can you check the status of?"), ("espeak-us", "Can you check the status of my order?"))]
    text = pauses.render({"machine": describe_machine(), "load_average": [0.1],
                          "command": "python -m bench.pauses", "pause_s": 0.9, "rows": rows})
    assert "1 (lost):" in text and "Words lost: Piper 1, espeak-us 0; all 1." in text


def test_each_sentence_set_is_pieces_with_a_pause_between() -> None:
    assert set(pauses.SENTENCE_SETS) == {"set", "fresh", "fresh2"}
    said = {" | ".join(pieces) for _, pieces in pauses.FRESH2}
    assert len(said) == 24 and not said & {" | ".join(pieces) for _, pieces in pauses.FRESH}
    assert all(len(pieces) >= 2 for _, pieces in pauses.FRESH2)
