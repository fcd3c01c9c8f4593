"""Does the voice's pitch at a pause say whether the speaker finished? A check of the plainest
prosody signal, the melody's end, on the end-of-turn set and on recorded people.

Speakers of English end a statement with a fall to the bottom of their range and hold the pitch
up where they go on. If that held for the set's voices and for people, a pitch feature could hold
open the pauses no text can tell from an end ("I want to move my booking | to ..."). Per clip:
the pitch track of the turn up to the labelled end of speech (a YIN estimate, 10 ms frames, voiced
where the frame is periodic and within 30 dB of the turn's loudest tenth, above -70 dB), then

- `end`: the median pitch of the last eight voiced frames, in semitones from the turn's median;
- `slope`: the pitch's slope over the last 300 ms, semitones a second;
- `low`: the lowest pitch of the last 300 ms, in semitones from the turn's median.

Reported: for each feature the chance that a finished turn's value is lower than a mid-sentence
pause's (the area under the ROC curve: 0.5 is chance, 1 a perfect split, under 0.5 the other way),
by voice and condition for the synthetic set, by recording for people. No threshold is fitted:
a feature worth a signal would split every group the same way.

    python -m bench.eou_pitch                 # bench/results/<date>-eou-pitch.{md,json}
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ

from .eot_set import EotClip
from .machine import describe_machine, machine_line
from .summary import publish

RESULTS = Path(__file__).resolve().parent / "results"
FEATURES = ("end", "slope", "low")
HOP, WIN = 160, 640  # 10 ms frames of 40 ms
F_MIN, F_MAX = 70.0, 400.0
SILENCE_DB = -70.0  # no voice below this level (digital silence is periodic to YIN)


def pitch_track(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per 10 ms frame: the pitch in Hz (nan where unvoiced) and the level in dB (YIN's cumulative
    mean normalised difference, its first dip under 0.15, accepted under 0.3)."""
    x = np.asarray(x, np.float64)
    n = 1 + max(0, (len(x) - WIN) // HOP)
    frames = np.lib.stride_tricks.sliding_window_view(x, WIN)[::HOP][:n]
    frames = frames - frames.mean(axis=1, keepdims=True)
    level = 10 * np.log10(np.mean(frames ** 2, axis=1) + 1e-12)
    lo, hi = int(INPUT_RATE_HZ / F_MAX), int(INPUT_RATE_HZ / F_MIN)
    half = WIN // 2
    diff = np.stack([np.sum((frames[:, :half] - frames[:, t:t + half]) ** 2, axis=1)
                     for t in range(1, hi + 1)], axis=1)
    cmnd = diff * np.arange(1, hi + 1) / np.maximum(np.cumsum(diff, axis=1), 1e-12)
    span = cmnd[:, lo - 1:]
    f0 = np.full(n, np.nan)
    for i, row in enumerate(span):
        below = np.flatnonzero(row < 0.15)
        j = int(below[0]) if len(below) else int(np.argmin(row))
        while j + 1 < len(row) and row[j + 1] < row[j]:
            j += 1
        if row[j] < 0.3:
            f0[i] = INPUT_RATE_HZ / (lo + j)
    return f0, level


def features(audio: np.ndarray, start_s: float, end_s: float) -> dict[str, float] | None:
    """The melody's end of the speech between `start_s` and `end_s` (None: too little voiced)."""
    f0, level = pitch_track(audio[int(start_s * INPUT_RATE_HZ):int((end_s + 0.05) * INPUT_RATE_HZ)])
    voiced = ~np.isnan(f0) & (level > max(np.percentile(level, 90) - 30, SILENCE_DB))
    if voiced.sum() < 10:
        return None
    semitones = 12 * np.log2(f0 / np.nanmedian(f0[voiced]))
    idx = np.flatnonzero(voiced)
    tail = idx[idx > idx[-1] - 30]
    slope = float(np.polyfit(tail * HOP / INPUT_RATE_HZ, semitones[tail], 1)[0]) if len(tail) >= 4 else 0.0
    return {"end": float(np.median(semitones[idx[-8:]])), "slope": slope, "low": float(np.min(semitones[tail]))}


def auc(finished: Sequence[float], mid: Sequence[float]) -> float | None:
    """The chance that a finished turn's value is below a mid-sentence pause's (ties half)."""
    if not finished or not mid:
        return None
    f, m = np.asarray(finished)[:, None], np.asarray(mid)[None, :]
    return float((np.sum(f < m) + 0.5 * np.sum(f == m)) / (f.size * m.size))


def rows_of(clips: Sequence[EotClip], group: Callable[[EotClip], str], *, turn_s: float = 6.0) -> list[dict[str, Any]]:
    """Each clip's features (the last `turn_s` of its speech), labelled, with its group."""
    out = []
    for c in clips:
        start = max(0.3, c.speech_end_s - turn_s)
        out.append({"name": c.name, "group": group(c),
                    "finished": c.finished, "features": features(c.audio, start, c.speech_end_s)})
    return out


def table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups = list(dict.fromkeys(r["group"] for r in rows))
    out = []
    for g in [*groups, "all"]:
        sel = [r for r in rows if (g == "all" or r["group"] == g) and r["features"]]
        fin = [r["features"] for r in sel if r["finished"]]
        mid = [r["features"] for r in sel if not r["finished"]]
        out.append({"group": g, "finished": len(fin), "mid": len(mid),
                    **{k: auc([x[k] for x in fin], [x[k] for x in mid]) for k in FEATURES}})
    return out


def render(results: dict[str, Any]) -> str:
    def cells(t: dict[str, Any]) -> str:
        return " | ".join("" if t[k] is None else f"{t[k]:.2f}" for k in FEATURES)
    out = [f"# The melody's end at a pause: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average {results['load_average']}.", "",
           f"Command: `{results['command']}`. Each cell: the chance a finished turn's value is lower "
           "than a mid-sentence pause's (0.5 chance; under 0.5, the other way).", ""]
    for title, key in (("The end-of-turn set (synthetic voices; jfk.wav's cuts)", "synthetic"),
                       ("Recorded people (bench.human_turns' pauses)", "people")):
        out += [f"## {title}", "", "| group | finished | mid | " + " | ".join(FEATURES) + " |",
                "|---|---|---|" + "---|" * len(FEATURES)]
        out += [f"| {t['group']} | {t['finished']} | {t['mid']} | {cells(t)} |" for t in results[key]]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from .eot_set import build
    from .human_turns import clips as human_clips
    from .human_turns import recordings

    synthetic = rows_of(build(), lambda c: f"{c.source}, {c.condition}")
    people = rows_of(human_clips(recordings()), lambda c: c.voice)
    results = {"machine": describe_machine(),
               "command": " ".join(["python -m bench.eou_pitch", *(argv if argv is not None else sys.argv[1:])]),
               "synthetic": table(synthetic), "people": table(people),
               "clips": synthetic + people, "load_average": [round(v, 2) for v in os.getloadavg()]}
    publish(args.out, f"{results['machine']['date'][:10]}-eou-pitch", results, render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
