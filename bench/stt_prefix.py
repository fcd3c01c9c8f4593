"""Does forcing the confirmed words as the final pass's prefix cost accuracy? (`stt.prefix_final`)

For each clip of the labelled end-of-turn set (Piper and espeak-ng voices at three speeds, noise,
jfk.wav cut at its pauses; `bench/eot_set.py`), the partial passes the streaming transcriber
would run (every `--interval-ms` of audio, LocalAgreement-2 confirming words) are run on the real
Whisper model, then the final pass twice: from scratch, and with the confirmed words forced as
the decoder's prefix. Word error rate against the words the clip says, per source.

    python -m bench.stt_prefix [--clips N] [--out bench/results/DATE-stt-prefix.md]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.stt import WhisperSTT, agreed_prefix
from pipeline.stt import word_errors as wer

from .eot_set import build
from .machine import describe_machine, machine_line
from .summary import print_report


def confirmed_words(stt: WhisperSTT, audio: np.ndarray, interval_ms: int, min_ms: int = 300) -> list[str]:
    """The words LocalAgreement-2 would have confirmed by speech-stop (as StreamingTranscriber)."""
    step = interval_ms * INPUT_RATE_HZ // 1000
    stable: list[str] = []
    last: list[str] = []
    for end in range(max(step, min_ms * INPUT_RATE_HZ // 1000), len(audio) + 1, step):
        words = stt.transcribe(audio[:end], final=False).split()
        agreed = agreed_prefix(last, words)
        if agreed > len(stable):
            stable += words[len(stable):agreed]
        last = words
    return stable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stt_prefix", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", type=int, default=0, help="every k-th clip so that about N "
                        "are read (default: all)")
    parser.add_argument("--interval-ms", type=int, default=500, help="partial cadence (default 500)")
    parser.add_argument("--out", type=Path, default=None, help="markdown results file")
    args = parser.parse_args(argv)

    clips = build()
    if args.clips:
        clips = clips[::max(1, len(clips) // args.clips)]
    stt = WhisperSTT()
    totals: dict[str, dict[str, list[int]]] = defaultdict(lambda: {"scratch": [0, 0], "prefix": [0, 0]})
    differ = []
    t0 = time.perf_counter()
    for clip in clips:
        speech = clip.audio[:int((clip.speech_end_s + 0.16) * INPUT_RATE_HZ)]  # to VAD speech-stop
        prefix = " ".join(confirmed_words(stt, speech, args.interval_ms))
        scratch = stt.transcribe(speech, final=True)
        forced = stt.transcribe_after(speech, prefix) if prefix else scratch
        for source in (clip.source, "all"):
            for name, text in (("scratch", scratch), ("prefix", forced)):
                e, n = wer(clip.text, text)
                totals[source][name][0] += e
                totals[source][name][1] += n
        if scratch != forced:
            differ.append((clip.name, clip.text, scratch, forced))
    spent = time.perf_counter() - t0
    load = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())

    lines = [f"# Final pass from scratch vs from the confirmed words ({time.strftime('%Y-%m-%d')})",
             "", f"Machine: {machine_line(describe_machine())}, load average {load}", "",
             f"{len(clips)} clips of the end-of-turn set, partials every {args.interval_ms} ms, "
             f"whisper tiny.en int8, greedy; {spent:.0f} s.", "",
             "| source | WER from scratch | WER with the forced prefix |", "|---|---|---|"]
    for source, t in sorted(totals.items(), key=lambda kv: kv[0] == "all"):
        s, p = t["scratch"], t["prefix"]
        lines.append(f"| {source} | {s[0] / max(1, s[1]):.3f} ({s[0]}/{s[1]}) | "
                     f"{p[0] / max(1, p[1]):.3f} ({p[0]}/{p[1]}) |")
    lines += ["", f"Clips whose two finals differ: {len(differ)}", ""]
    lines += [f"- `{name}` said \"{text}\": scratch \"{a}\", prefix \"{b}\"" for name, text, a, b in differ]
    report = "\n".join(lines) + "\n"
    print_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
