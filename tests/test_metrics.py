"""The per-turn timing table (`python -m pipeline call`, `make demo`): it shows only latencies
that happened, each column saying what it means."""

from __future__ import annotations

from pipeline.base import events as ev
from pipeline.base.metrics import format_table, turn_timings

# A real-clock log of one turn answered by an adopted speculation: speech ends at 1.000 s (perf
# 101.000), the held reply starts at 1.160 and makes its first audio at 1.450, and all of its
# events are released (re-stamped ts) at the commit, 1.600.
PERF0 = 100.0


def _log() -> list[ev.Event]:
    def at(s: float, release_s: float | None = None) -> dict[str, float]:
        return {"ts": release_s if release_s is not None else s, "perf": PERF0 + s}

    def mark(stage: str, s: float) -> ev.StageMark:
        return ev.StageMark(stage=stage, response_id="resp_1", turn_id="item_1", **at(s, 1.6))

    return [
        ev.SpeechStopped(item_id="item_1", audio_end_ms=1000, **at(1.16)),
        ev.InputCommitted(item_id="item_1", audio_start_ms=0, audio_end_ms=1000, **at(1.6)),
        ev.TranscriptionCompleted(item_id="item_1", transcript="Hello.", **at(1.6)),
        mark("response_start", 1.16), mark("llm_first_token", 1.22), mark("first_chunk", 1.3),
        mark("tts_first_audio", 1.45),
        ev.StageMark(stage="first_audio_out", response_id="resp_1", turn_id="item_1", **at(1.6)),
    ]


def _row(table: str, stage: str) -> list[str]:
    return next(line.split() for line in table.splitlines() if line.split()[:1] == [stage])


def test_the_real_clock_table_places_held_stages_when_they_happened():
    timing = turn_timings(_log())[0]
    table = format_table(timing, real_clock=True)
    assert _row(table, "llm_first_token")[1:4] == ["1.220s", "+220", "ms"]  # not at the commit
    assert _row(table, "tts_first_audio")[2] == "+450"
    assert _row(table, "first_audio_out")[2] == "+600"  # what the caller waited
    assert "after speech end: what the caller waited" in table


def test_the_simulated_clock_table_shows_no_wait_at_all():
    table = format_table(turn_timings(_log())[0], real_clock=False)
    assert "after speech end" not in table and "+" not in table
    assert "model compute takes no time" in table and "--realtime" in table
    assert _row(table, "llm_first_token")[1] == "1.600s"  # the simulated clock's own stamp
