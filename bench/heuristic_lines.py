"""The text heuristic judged on text alone, where no rule of it was written: the head's caller
lines (bench/eou_lines.txt) cut after every word as Whisper writes a pause (the words so far,
closed with a period), and the transcripts stored from the end-of-turn set and the recorded
people. Per source: the mid-sentence cuts it calls finished (a turn cut off at min_silence_ms)
and the finished ones it leaves for max_silence_ms. No model runs; a second.

To judge a change to `pipeline/turns.py`, run it before and after the change:

    python -m bench.heuristic_lines              # counts, and the texts the change moved with --show
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from pipeline.turns import HeuristicCompleteness

from .eou_eval import load_rows
from .eou_train import LINES, cuts

RESULTS = Path(__file__).resolve().parent / "results"
PEOPLE = RESULTS / "2026-12-06-human-turns.json"  # bench.human_turns' stored transcripts


def as_whisper_writes(prefix: str) -> str:
    """A cut as Whisper writes the words before a pause: closed with a period."""
    words = prefix.rstrip(",;:- ")
    return words if words.endswith((".", "?", "!")) else words + "."


def caller_lines(path: Path = LINES) -> list[tuple[str, bool]]:
    """(text, finished) for every cut of every caller line (not the agent's context lines)."""
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [(as_whisper_writes(text), done) for ln in lines
            if ln and not ln.startswith(("#", "agent:")) for text, done in cuts(ln)]


def judge(items: Iterable[tuple[str, bool]], finished: Callable[[str], bool]) -> dict[str, list[str]]:
    """The mid cuts called finished (`cut`) and the finished texts left waiting (`waited`), with
    how many of each there were (`mid`, `done`)."""
    out: dict[str, list[str]] = {"cut": [], "waited": [], "mid": [], "done": []}
    for text, done in items:
        out["done" if done else "mid"].append(text)
        if done != finished(text):
            out["waited" if done else "cut"].append(text)
    return out


def sources() -> dict[str, list[tuple[str, bool]]]:
    rows = load_rows()
    people = json.loads(PEOPLE.read_text(encoding="utf-8"))["clips"]
    return {"caller lines, cut at every word": caller_lines(),
            "end-of-turn set (stored transcripts)": [(r["transcript"], r["finished"]) for r in rows
                                                     if r["transcript"].strip()],
            "recorded people (stored transcripts)": [(c["transcript"], c["finished"]) for c in people
                                                     if c.get("transcript", "").strip()]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="print the texts cut off and left waiting")
    args = ap.parse_args(argv)
    heuristic = HeuristicCompleteness()
    for name, items in sources().items():
        j = judge(items, lambda t: heuristic.probability(t) >= 0.5)
        print(f"{name}: cut off {len(j['cut'])} of {len(j['mid'])}, waited {len(j['waited'])} of {len(j['done'])}")
        if args.show:
            for key in ("cut", "waited"):
                print(f"  {key}: " + " | ".join(sorted(set(j[key]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
