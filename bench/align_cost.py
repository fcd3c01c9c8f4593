"""What timing a final pass's words costs (`stt.time_final_words`): the same final passes with and
without the alignment, one after the other per clip, on clips of the end-of-turn set up to where
the pass would read them (the clip's speech and 250 ms after it).

    python -m bench.align_cost [--clips 60]      # bench/results/<date>-align-cost.{md,json}
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.clock import perf_s

from .eot_rescore import RESULTS
from .eot_set import build
from .machine import describe_machine, machine_line
from .summary import publish


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=60, help="about this many, spread over the set")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from pipeline.stt import WhisperSTT

    load_start = os.getloadavg()
    clips = build()
    clips = clips[::max(1, len(clips) // args.clips)]
    timed, plain = WhisperSTT(), WhisperSTT(time_final_words=False)
    ms: dict[str, list[float]] = {"with": [], "without": []}
    redone: list[bool] = []  # the sized final left its sentence open and was redone on the full window
    for clip in clips:
        audio = clip.audio[:int((clip.speech_end_s + 0.25) * INPUT_RATE_HZ)]
        full = timed.window_stats["full"]
        for name, stt in (("without", plain), ("with", timed)):
            t0 = perf_s()
            stt.transcribe_confident(audio, final=True)
            ms[name].append((perf_s() - t0) * 1000)
        redone.append(timed.window_stats["full"] > full)
    extra = np.subtract(ms["with"], ms["without"])
    kept = [e for e, r in zip(extra, redone, strict=True) if not r]
    again = [e for e, r in zip(extra, redone, strict=True) if r]
    results = {"machine": describe_machine(), "command": "python -m bench.align_cost "
               + " ".join(argv if argv is not None else sys.argv[1:]),
               "load_average": {"start": load_start, "end": os.getloadavg()}, "clips": len(clips),
               "ms": ms, "median_ms": {k: float(np.median(v)) for k, v in ms.items()},
               "p90_ms": {k: float(np.percentile(v, 90)) for k, v in ms.items()},
               "extra_median_ms": float(np.median(extra)), "redone": redone,
               "extra_median_ms_sized": float(np.median(kept)) if kept else None,
               "extra_median_ms_redone": float(np.median(again)) if again else None}
    m = results["machine"]
    text = "\n".join([
        f"# What timing a final pass's words costs: {m['date'][:10]}", "",
        f"Machine: {machine_line(m)}; load average {load_start[0]:.2f} before, {os.getloadavg()[0]:.2f} after.",
        "", f"Command: `{results['command']}`; {len(clips)} clips, each final pass without and then with "
        "the alignment (whisper tiny.en, the shipped sized final).", "",
        "| final pass | median ms | p90 ms |", "|---|---|---|",
        *(f"| {k} the words timed | {results['median_ms'][k]:.1f} | {results['p90_ms'][k]:.1f} |"
          for k in ("without", "with")),
        "", f"Per clip, the alignment added a median {results['extra_median_ms']:.1f} ms: "
        f"{_ms(results['extra_median_ms_sized'])} on the {len(kept)} passes kept sized, "
        f"{_ms(results['extra_median_ms_redone'])} on the {len(again)} redone on the full window "
        "(a sized final that leaves its sentence open: their words are timed on a sized window)."])
    publish(args.out, f"{m['date'][:10]}-align-cost", results, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
