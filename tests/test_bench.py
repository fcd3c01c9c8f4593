"""The benchmark's summarising code on synthetic event logs, and one smoke run on the models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.bargein import Case, combine, read_case
from bench.calls import BenchCaller
from bench.readout import read_turns
from bench.report import render_markdown
from bench.summary import describe, median, p90, pair_ratios, stage_table, summarise
from bench.ttfa import notes_for, parse_args
from bench.waterfall import plot_waterfall
from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.transports.scripted import Clip

ROOT = Path(__file__).resolve().parents[1]
PERF0 = 1000.0  # perf and ts differ by a constant, as two monotonic clocks do
RATE = 22_050


def _at(e: ev.Event, t: float, *, restamp: float | None = None) -> ev.Event:
    """Made at session time t; emitted then, or later when held (`restamp`)."""
    e.perf = PERF0 + t
    e.ts = t if restamp is None else restamp
    return e


def synthetic_call(*, end_s: float = 2.0, scale: float = 1.0, held: bool = False,
                   tokens: int = 11, stt_ms: float = 300.0) -> list[ev.Event]:
    """One turn: speech ends at `end_s`; stage gaps scaled by `scale`. With `held`, the response
    events are made before commit and re-stamped at it, as an adopted preemptive response."""
    item, resp = "item_1", "resp_1"
    commit = end_s + 0.6
    t0 = end_s + 0.15 + stt_ms / 1000 if held else commit + stt_ms / 1000
    stamp = commit + 0.001 if held else None

    def mark(stage: str, t: float, **detail: object) -> ev.Event:
        return _at(ev.StageMark(stage=stage, response_id=resp, turn_id=item, detail=dict(detail)),
                   t, restamp=stamp if stamp is not None and t < commit else None)

    out = [
        _at(ev.SessionCreated(session={}), 0.0),
        _at(ev.SpeechStarted(item_id=item, audio_start_ms=300), 0.4),
        _at(ev.SpeechStopped(item_id=item, audio_end_ms=int(end_s * 1000)), end_s + 0.15),
        _at(ev.InputCommitted(item_id=item, audio_start_ms=300, audio_end_ms=int(end_s * 1000),
                              reason="min_silence"), commit),
        _at(ev.TranscriptionCompleted(item_id=item, transcript="What time is checkout?"),
            max(commit, t0)),
        _at(ev.StageMark(stage="stt_final", turn_id=item, detail={"final_compute_ms": stt_ms}),
            max(commit, t0)),
        mark("response_start", t0),
        mark("llm_first_token", t0 + 0.1 * scale),
        mark("first_chunk", t0 + 0.3 * scale, text="Checkout is at eleven."),
        mark("tts_first_audio", t0 + 0.4 * scale, samples=RATE),
        _at(ev.OutputAudioDelta(response_id=resp, item_id="item_2", delta=np.zeros(10, np.float32),
                                sample_rate_hz=RATE, audio_ms=0.0), t0 + 0.4 * scale,
            restamp=stamp if stamp is not None and t0 + 0.4 * scale < commit else None),
    ]
    fao = max(commit, t0 + 0.4 * scale) + 0.002
    out.append(_at(ev.StageMark(stage="first_audio_out", response_id=resp, turn_id=item), fao))
    out.append(_at(ev.ResponseDone(response={"id": resp, "status": "cancelled",
                                             "usage": {"output_tokens": tokens}}), fao + 0.01))
    return sorted(out, key=lambda e: e.ts)


# --- statistics ------------------------------------------------------------------------------


def test_median_and_p90_ignore_missing_values():
    xs = [float(i) for i in range(1, 11)]
    assert median(xs) == 5.5
    assert p90(xs) == pytest.approx(9.1)  # linear between the 9th and 10th of ten
    assert median([None, 3.0, None]) == 3.0
    assert median([]) is None and p90([None]) is None
    assert describe([1.0, None, 3.0]) == {"n": 2, "median": 2.0, "p90": pytest.approx(2.8)}


def test_pair_ratios_pair_by_key_and_skip_missing():
    base = {"a": 100.0, "b": 200.0, "c": 50.0, "d": None}
    mode = {"a": 50.0, "b": 100.0, "d": 10.0, "e": 1.0}
    assert pair_ratios(mode, base) == [0.5, 0.5]


# --- reading the event log -------------------------------------------------------------------


def test_read_turns_places_stages_after_the_end_of_speech():
    (t,) = read_turns(synthetic_call(), sequential=False)
    assert t.transcript == "What time is checkout?"
    assert t.at_ms["vad_stop"] == pytest.approx(150)
    assert t.at_ms["turn_commit"] == pytest.approx(600)
    assert t.at_ms["stt_final"] == pytest.approx(150 + 300)  # started at speech-stop
    assert t.at_ms["first_chunk"] - t.at_ms["llm_first_token"] == pytest.approx(200)
    assert t.commit_to_audio_ms == pytest.approx(t.at_ms["first_audio_out"] - 600)
    assert t.tts_first_ms == pytest.approx(100)
    assert t.tts_rtf == pytest.approx(0.1)  # 100 ms for one second of audio
    assert t.stt_rtf == pytest.approx(0.3 / 1.7)  # 300 ms over 0.3 .. 2.0 s
    assert t.llm_tokens_per_s is None  # streaming: the first chunk comes mid-generation


def test_sequential_final_starts_at_commit_and_gives_a_decode_rate():
    (t,) = read_turns(synthetic_call(), sequential=True)
    t.mode = "sequential"
    assert t.at_ms["stt_final"] == pytest.approx(600 + 300)
    assert t.llm_tokens_per_s == pytest.approx(10 / 0.2)  # 11 tokens: 10 steps in 200 ms


def test_a_turn_with_discarded_finals_is_ready_no_later_than_its_transcript():
    events = synthetic_call(stt_ms=900.0)  # compute summed over three final passes
    mark = next(e for e in events if getattr(e, "stage", None) == "stt_final")
    mark.detail["finals_discarded"] = 2
    done = next(e for e in events if isinstance(e, ev.TranscriptionCompleted))
    _at(done, 2.0 + 0.7)  # published 700 ms after the end of speech
    (t,) = read_turns(events, sequential=False)
    assert t.at_ms["stt_final"] == pytest.approx(700)  # not 150 + 900
    assert t.stt_rtf is None and t.stt_compute_ms == 900


def test_held_events_are_placed_by_perf_not_by_their_restamped_ts():
    events = synthetic_call(held=True)
    start = next(e for e in events if getattr(e, "stage", None) == "response_start")
    assert start.ts > 2.6  # re-stamped at commit
    (t,) = read_turns(events, sequential=False)
    assert t.at_ms["response_start"] == pytest.approx(150 + 300)  # when it really began
    assert t.at_ms["llm_first_token"] < t.at_ms["turn_commit"]


# --- summaries and report --------------------------------------------------------------------


def _modes() -> dict[str, list]:
    out: dict[str, list] = {}
    for mode, scale in (("sequential", 4.0), ("streaming", 2.0), ("streaming+preemptive", 1.0)):
        turns = []
        for clip, end in (("a", 1.5), ("b", 2.0), ("c", 3.0)):
            events = synthetic_call(end_s=end, scale=scale)
            (t,) = read_turns(events, sequential=mode == "sequential")
            t.clip, t.mode = clip, mode
            turns.append(t)
        out[mode] = turns
    return out


def test_summarise_gives_medians_and_paired_ratios():
    s = summarise(_modes())
    seq = s["per_mode"]["sequential"]["commit_to_audio_ms"]
    assert seq["n"] == 3 and seq["median"] == pytest.approx(300 + 1600 + 2)
    r = s["ratios"]["streaming"]["commit_to_audio_ms"]
    assert r["n"] == 3 and r["median"] == pytest.approx((300 + 800 + 2) / (300 + 1600 + 2))
    assert "preemptive_vs_streaming" in s["ratios"]
    assert "sequential" not in s["ratios"]


def test_markdown_tables_and_report_render(tmp_path):
    by_mode = _modes()
    summary = summarise(by_mode)
    table = stage_table(summary, list(by_mode))
    assert table.splitlines()[0].startswith("| | sequential median | p90 |")
    rows = table.splitlines()
    assert any(row.startswith("| **commit → first audio (ms)** | 1902 |") for row in rows)
    results = {
        "machine": {"date": "2025-01-02T03:04:05+00:00", "host": "box", "cpu": "Some CPU",
                    "cores": 2, "cores_usable": 2, "ram_gib": 8.0, "os": "Linux", "python": "3.11"},
        "command": "python -m bench.ttfa", "settings": {"turns": 3},
        "turns_by_mode": {m: [t.to_dict() for t in ts] for m, ts in by_mode.items()},
        "summary": summary, "failures": [{"clip": "d", "mode": "sequential", "why": "no audio"}],
        "bargein": [{"case": "cough", "fires": 0, "false_barge_ins": 0}],
        "notes": notes_for(by_mode, {"a": "Checkout is at eleven. It is free for members."}),
    }
    text = render_markdown(results)
    for heading in ("# Time to first audio: 2025-01-02 on box", "## Stages",
                    "## Against the sequential baseline", "## Barge-in", "## Notes"):
        assert heading in text
    assert "d (sequential: no audio)" in text
    assert "synthesized only the reply's last part" in text  # the check on the baseline
    json.dumps(results, default=str)  # the JSON written next to it


def test_waterfall_png_is_written(tmp_path):
    by_mode = _modes()
    path = plot_waterfall(summarise(by_mode), list(by_mode), tmp_path / "w.png", title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_turns_takes_a_count_or_a_stage_name():
    assert (parse_args(["--turns", "3"]).n_turns, parse_args(["--turns", "3"]).turns) == (3, None)
    args = parse_args(["--turns", "llm", "--quick"])
    assert args.turns == "llm" and args.quick and args.n_turns > 3


def test_bargein_case_figures_from_the_log():
    onset_audio = np.concatenate([np.zeros(16 * 512, np.float32),  # 16 silent windows
                                  0.3 * np.ones(INPUT_RATE_HZ, np.float32)])
    over = Clip(onset_audio, 5.0, label="x")
    over.started_s = 5.0
    caller = BenchCaller([over])
    caller.frames = [(4.90, 0.02), (4.92, 0.02), (4.94, 0.02), (9.0, 0.02)]  # the last: next reply
    onset_s = 5.0 + 16 * 512 / INPUT_RATE_HZ
    fire = _at(ev.StageMark(stage="barge_in", response_id="resp_1"), onset_s + 0.26)
    events = [fire, _at(ev.StageMark(stage="first_audio_out", response_id="resp_2"), 9.0),
              _at(ev.ResponseDone(response={"id": "resp_1", "status": "cancelled"}),
                  onset_s + 0.2602)]
    row = read_case(Case("x", None, speech=True), events, caller, over)
    assert row["fires"] == 1 and row["false_barge_ins"] == 0
    assert row["detect_ms"] == pytest.approx(260, abs=0.1)
    assert row["audio_after_fire_ms"] == 0 and row["stop_ms"] == 0
    assert row["cancel_compute_ms"] == pytest.approx(0.2, abs=0.01)
    noise = read_case(Case("n", None), events, caller, None)
    assert noise["false_barge_ins"] == 1 and noise["detect_ms"] is None
    both = combine("x", [row | {"wall_s": 1.0}, row | {"detect_ms": 300.0, "wall_s": 1.0},
                         noise | {"wall_s": 1.0}])
    assert both["runs"] == 3 and both["fires"] == 3 and both["false_barge_ins"] == 1
    assert both["detect_ms"] == pytest.approx(280) and both["first_reply"] == "cancelled"


# --- the real thing, once --------------------------------------------------------------------


@pytest.mark.models
@pytest.mark.slow
def test_smoke_run_writes_json_markdown_and_png(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bench.ttfa", "--turns", "1", "--quick",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = {p.suffix: p for p in tmp_path.iterdir()}
    assert set(files) == {".json", ".md", ".png"}
    results = json.loads(files[".json"].read_text())
    for mode in ("sequential", "streaming", "streaming+preemptive"):
        assert results["summary"]["per_mode"][mode]["end_to_audio_ms"]["n"] == 1, proc.stdout
    assert results["machine"]["cores"] >= 1 and results["tools"]["n"] >= 1
    assert "## Stages" in files[".md"].read_text()
