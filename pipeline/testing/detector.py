"""The turn detector driven window by window as the session drives it, on its own clock: when
does it commit a turn, and does it cut off a caller who pauses? The end-of-turn benchmark
(bench/eot_rescore.py) and the tests of the detector share this one reading."""

from __future__ import annotations

from pipeline.base.audio import WINDOW_MS
from pipeline.base.config import TurnPolicy
from pipeline.turns import TurnDetector


def commit_after_ms(policy: TurnPolicy, p: float, pause_ms: float | None = None) -> float | None:
    """When the real TurnDetector commits a turn whose transcript scored `p`: the silence, from
    the end of the last speech window, at which `end_of_turn` first says so, checked after every
    VAD window as the session does. `pause_ms`: the caller speaks again after this much silence
    (None: never); then None if the turn was not committed before the detector heard the speech
    again (confirming it takes `min_speech_ms`, and the silence clock runs on meanwhile).

    The score is taken as known from speech-stop on: true of the heuristic (0.06 ms a call,
    `python -m bench.eot`, bench/results/2026-11-30-eot.md); a slower signal, or a final pass
    still running, commits later than this, never sooner."""
    detector = TurnDetector(policy)
    t = 0.0
    for _ in range(10):  # 320 ms of speech
        t += WINDOW_MS
        detector.on_window(0.9, t)
    end, stopped = t, False
    while t - end <= policy.max_silence_ms + 10 * WINDOW_MS:
        t += WINDOW_MS
        speaking = pause_ms is not None and t - WINDOW_MS / 2 >= end + pause_ms
        signal = detector.on_window(0.9 if speaking else 0.02, t)
        stopped = stopped or (signal is not None and signal.kind == "speech_stopped")
        if stopped and detector.in_speech:
            return None
        if detector.end_of_turn(t, p) is not None:
            return t - end
    raise AssertionError("the detector never committed past max_silence_ms")
