"""bench.final_words lists the finals whose words changed against another run, and counts the
recogniser's checks (no model runs here)."""

from __future__ import annotations

from bench import final_words
from bench.machine import describe_machine


def _run(command: str, finals: dict) -> dict:
    return {"machine": describe_machine(), "command": command, "load_average": [0.1], "finals": finals}


def test_the_report_lists_what_changed_and_counts_the_checks() -> None:
    before = _run("python -m bench.final_words", {
        "a": {"text": "Can you check the status of?", "checks": {"sized": 1}},
        "b": {"text": "Yes.", "checks": {"sized": 1}}})
    after = _run("python -m bench.final_words --against x.json", {
        "a": {"text": "Can you check the status of? My repair order?", "checks": {"missed": 1, "resumed": 1}},
        "b": {"text": "Yes.", "checks": {"sized": 1}}})
    text = final_words.render(after, before)
    assert "missed 1, resumed 1, sized 1." in text
    assert "1 of 2 finals heard other words" in text
    assert "| a | Can you check the status of? | Can you check the status of? My repair order? |" in text
    assert "| b |" not in text
    assert "heard other words" not in final_words.render(after, None)
