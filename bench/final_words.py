"""The final pass's words on every clip of the end-of-turn set and at every labelled pause of the
recorded people, with the recogniser's checks that fired: what a change to the final pass does
to the words, clip by clip, beside `bench.hearing`'s whole sentences.

Each clip is read as the session's final pass reads it (the turn to the end of speech and 250 ms
after it; the default recogniser, no context). `--against` another run's JSON lists the clips
whose words differ.

    python -m bench.final_words                   # bench/results/<date>-final-words.{md,json}
    python -m bench.final_words --against bench/results/<a run>.json --stem <date>-final-words-after
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.config import Config
from pipeline.base.stage_config import build_stage

from .machine import describe_machine, machine_line
from .summary import publish

RESULTS = Path(__file__).resolve().parent / "results"
PAD_S = 0.25  # the final pass reads this far past the end of speech (`stt.SPEECH_PAD_MS`)


def run() -> dict[str, dict[str, Any]]:
    from .eot_set import build
    from .human_turns import clips as human_clips
    from .human_turns import recordings

    stt = build_stage("stt", Config.default().stt)
    out: dict[str, dict[str, Any]] = {}
    for clip in [*build(), *human_clips(recordings())]:
        audio = clip.audio[:int((clip.speech_end_s + PAD_S) * INPUT_RATE_HZ)]
        before = dict(stt.window_stats)
        text = stt.transcribe(audio, final=True)
        fired = {k: n - before.get(k, 0) for k, n in stt.window_stats.items() if n != before.get(k, 0)}
        out[clip.name] = {"text": text, "checks": fired}
    return out


def render(results: dict[str, Any], against: dict[str, Any] | None) -> str:
    finals = results["finals"]
    counts: dict[str, int] = {}
    for f in finals.values():
        for k, n in f["checks"].items():
            counts[k] = counts.get(k, 0) + n
    out = [f"# The final pass's words, clip by clip: {results['machine']['date'][:10]}", "",
           f"Machine: {machine_line(results['machine'])}; load average {results['load_average']}.", "",
           f"Command: `{results['command']}`. {len(finals)} finals (the end-of-turn set, every voice and "
           "condition; the recorded people's labelled pauses). The recogniser's passes and checks, "
           "all finals together: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) + "."]
    if against is not None:
        changed = [(name, against["finals"][name]["text"], f["text"], f["checks"])
                   for name, f in finals.items() if name in against["finals"]
                   and against["finals"][name]["text"] != f["text"]]
        out += ["", f"Against `{against['command']}`: {len(changed)} of {len(finals)} finals heard other words.", ""]
        if changed:
            out += ["| clip | before | now | checks now |", "|---|---|---|---|"]
            out += [f"| {n} | {b} | {a} | {c} |" for n, b, a, c in changed]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, default=None, help="another run's JSON, to list what changed")
    parser.add_argument("--stem", default=None, help="the results' file name (default <date>-final-words)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    machine = describe_machine()
    results = {"machine": machine,
               "command": " ".join(["python -m bench.final_words", *(argv if argv is not None else sys.argv[1:])]),
               "finals": run(), "load_average": [round(v, 2) for v in os.getloadavg()]}
    against = json.loads(args.against.read_text()) if args.against else None
    publish(args.out, args.stem or f"{machine['date'][:10]}-final-words", results, render(results, against))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
