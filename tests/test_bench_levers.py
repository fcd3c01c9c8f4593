"""bench.levers on synthetic logs: the speculation outcomes read from the log, the adoption
rate and the per-clip ratio in its table, and the stage record every result carries."""

from __future__ import annotations

from bench.levers import rows_for
from bench.machine import stages_line
from bench.readout import read_turns
from pipeline.base import events as ev

from .test_bench import PERF0, synthetic_call


def _speculation(source: str, outcome: str, t: float) -> ev.Event:
    e = ev.StageMark(stage="speculation", response_id="resp_0", turn_id="item_1",
                     detail={"source": source, "outcome": outcome, "transcript": "x"})
    e.perf, e.ts = PERF0 + t, t
    return e


def _readout(events: list[ev.Event], clip: str, mode: str):
    turn = read_turns(events, sequential=mode == "sequential")[0]
    turn.clip, turn.mode = clip, mode
    return turn


def test_speculation_outcomes_and_the_adoption_rate_reach_the_table():
    dropped_then_final = synthetic_call(held=True) + [_speculation("partial", "dropped", 2.3),
                                                      _speculation("final", "adopted", 2.6)]
    adopted = synthetic_call(held=True) + [_speculation("partial", "adopted", 2.6)]
    turns = [_readout(dropped_then_final, "a", "all levers"), _readout(adopted, "b", "all levers")]
    assert turns[0].speculations == [("partial", "dropped"), ("final", "adopted")]
    base = [_readout(synthetic_call(scale=4.0), c, "sequential") for c in ("a", "b")]
    rows = {r["variant"]: r for r in rows_for({"sequential": base, "all levers": turns})}
    assert rows["all levers"]["adoption"] == {"partial": {"adopted": 1, "started": 2},
                                              "final": {"adopted": 1, "started": 1}}
    ratio = rows["all levers"]["vs_sequential"]
    assert ratio is not None and 0 < ratio < 1  # the held reply's audio beats the baseline's
    assert rows["sequential"]["vs_sequential"] is None and rows["sequential"]["adoption"] == {}


def test_the_stage_line_names_device_model_size_and_threads():
    line = stages_line({"stt": {"name": "faster-whisper", "model_path": "stt/whisper-tiny.en",
                                "model_mb": 74.2, "device": "cpu", "threads": 2}})
    assert line == "stt faster-whisper (whisper-tiny.en, 74.2 MB, device cpu, threads 2)"
