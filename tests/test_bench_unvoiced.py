"""bench.unvoiced_eval reads the stored runs: the turn signal on the transcript as written against
the lower of that and the words before the unvoiced ones."""

from __future__ import annotations

import json
from pathlib import Path

from bench.unvoiced_eval import errors, main


def _row(name: str, finished: bool, p: float, as_written: float | None = None, source: str = "espeak") -> dict:
    score = {"p": p} | ({"p_as_written": as_written} if as_written is not None else {})
    row = {"name": name, "finished": finished, "source": source, "transcript": "I'd like a table for it.",
           "heuristic": score, "combined": dict(score)}
    if as_written is not None:
        row["judged"] = "I'd like a table for"
    return row


ROWS = [
    _row("held", False, 0.05, as_written=0.9),  # cut off as written, held open with the rule
    _row("cut", False, 0.9),  # cut off either way
    _row("open", False, 0.05),
    _row("done", True, 0.9),
    _row("waits", True, 0.05, as_written=0.9),  # a real last word doubted: now it waits
    _row("piper", False, 0.9, source="joe"),
]


def test_errors_count_both_readings() -> None:
    mine = [r for r in ROWS if r["source"] == "espeak"]
    assert errors(mine, "heuristic", as_written=True) == (2, 3, 0, 2)
    assert errors(mine, "heuristic", as_written=False) == (1, 3, 1, 2)


def test_the_report_says_what_changed(tmp_path: Path) -> None:
    run = tmp_path / "2026-12-06-eot-phone.json"
    run.write_text(json.dumps({"command": "python -m bench.eot --phone", "clips": ROWS}))
    on, off = tmp_path / "on.json", tmp_path / "off.json"
    on.write_text(json.dumps({"command": "python -m bench.pauses", "rows": [{"voice": "espeak-us", "said": "a | b", "turns": 1, "heard": ["a b"]}]}))
    off.write_text(json.dumps({"rows": [{"voice": "espeak-us", "said": "a | b", "turns": 2, "heard": ["a", "b"]}]}))
    assert main(["--eot", str(run), "--pauses", str(on), str(off), "--out", str(tmp_path), "--stem", "x"]) == 0
    report = (tmp_path / "x.md").read_text()
    assert "| phone band | heuristic | 1/1 → 1/1 · 0/0 → 0/0 | 2/3 → 1/3 · 0/2 → 1/2 |" in report
    assert "- held (mid-sentence; heuristic, combined)" in report
    assert "- waits (finished; heuristic, combined)" in report and "- cut " not in report
    assert "| espeak-us | 0 of 1 | 1 of 1 |" in report
    stored = json.loads((tmp_path / "x.json").read_text())
    assert stored["pauses"] == [{"on": 1, "off": 0, "calls": 1}]


def test_the_condition_is_read_from_the_file_name() -> None:
    from bench.unvoiced_eval import _condition

    assert _condition(Path("2026-12-06-eot.json")) == "own pace"
    assert _condition(Path("2026-12-06-eot-stretch80.json")) == "pace 0.8"
    assert _condition(Path("2026-12-06-eot-stretch125-phone.json")) == "pace 1.25, phone band"
