"""Words written into the pause (`stt.time_final_words`, pipeline/stages/unvoiced.py), judged from
stored runs: the turn signal on the transcript as written, against the lower of that and the
words before the unvoiced ones (what the session does).

No model runs here. `bench.eot` and `bench.human_turns` store, for every clip whose final pass
found unvoiced last words, the score of the transcript as written (`p_as_written`) beside the
score the session uses (`p`); `bench.pauses` is run twice, with and without the setting. Rows:
the end-of-turn set per condition (Piper, the held-out espeak-ng voices, jfk.wav), recorded
people, and whole calls said in pieces.

    python -m bench.unvoiced_eval --eot RUN.json ... --human RUN.json \\
        --pauses ON.json OFF.json [--pauses ON.json OFF.json] [--stem 2026-12-06-unvoiced]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .eot_rescore import RESULTS
from .summary import publish

SIGNALS = ("heuristic", "combined")
SOURCES = {"joe": "Piper", "espeak": "espeak-ng, held out", "jfk": "jfk.wav"}
Row = dict[str, Any]


def _ends(row: Row, signal: str, *, as_written: bool) -> bool:
    score = row[signal]
    return (score.get("p_as_written", score["p"]) if as_written else score["p"]) >= 0.5


def errors(rows: list[Row], signal: str, *, as_written: bool) -> tuple[int, int, int, int]:
    """(cut off, unfinished, waited, finished): mid-sentence pauses ended at the short silence,
    finished turns left for the long one."""
    mid = [r for r in rows if not r["finished"]]
    done = [r for r in rows if r["finished"]]
    return (sum(_ends(r, signal, as_written=as_written) for r in mid), len(mid),
            sum(not _ends(r, signal, as_written=as_written) for r in done), len(done))


def _cell(before: tuple[int, int, int, int], after: tuple[int, int, int, int]) -> str:
    return (f"{before[0]}/{before[1]} → {after[0]}/{after[1]} · "
            f"{before[2]}/{before[3]} → {after[2]}/{after[3]}")


def eot_table(runs: dict[str, list[Row]], signals: tuple[str, ...]) -> list[str]:
    out = ["| condition | signal | " + " | ".join(SOURCES.values()) + " |",
           "|---|---|" + "---|" * len(SOURCES)]
    for cond, rows in runs.items():
        for signal in signals:
            cells = []
            for src in SOURCES:
                mine = [r for r in rows if r.get("source") == src and not r.get("no_speech")]
                cells.append(_cell(errors(mine, signal, as_written=True),
                                   errors(mine, signal, as_written=False)))
            out.append(f"| {cond} | {signal} | " + " | ".join(cells) + " |")
    return out


def changed(rows: list[Row], signals: tuple[str, ...]) -> list[str]:
    """Every clip whose decision the rule changed, with what was heard and judged."""
    out = []
    for r in rows:
        moved = [s for s in signals if s in r and _ends(r, s, as_written=True) != _ends(r, s, as_written=False)]
        if moved:
            kind = "finished" if r["finished"] else "mid-sentence"
            out.append(f"- {r['name']} ({kind}; {', '.join(moved)}): \"{r['transcript']}\" judged "
                       f"also as \"{r['judged']}\"")
    return out


def pauses_table(on: dict[str, Any], off: dict[str, Any]) -> list[str]:
    voices = list(dict.fromkeys(r["voice"] for r in on["rows"]))
    out = ["| voice | one turn without | one turn with |", "|---|---|---|"]
    for v in voices:
        n_on = sum(r["turns"] == 1 for r in on["rows"] if r["voice"] == v)
        n_off = sum(r["turns"] == 1 for r in off["rows"] if r["voice"] == v)
        n = sum(r["voice"] == v for r in on["rows"])
        out.append(f"| {v} | {n_off} of {n} | {n_on} of {n} |")
    total = len(on["rows"])
    out.append(f"| all | {sum(r['turns'] == 1 for r in off['rows'])} of {total} | "
               f"{sum(r['turns'] == 1 for r in on['rows'])} of {total} |")
    before = {(r["voice"], r["said"]): r for r in off["rows"]}
    for r in on["rows"]:
        b = before.get((r["voice"], r["said"]))
        if b is not None and b["turns"] != r["turns"]:
            out.append(f"\n- {r['voice']}, \"{r['said']}\": {b['turns']} turns "
                       f"({' / '.join(b['heard'])}) → {r['turns']} ({' / '.join(r['heard'])})")
    return out


def _condition(path: Path) -> str:
    """The condition a bench.eot results file holds, from its name (`conditions.file_suffix`)."""
    suffix = path.stem.split("-eot", 1)[-1]
    pace = suffix.split("stretch", 1)[1].split("-")[0] if "stretch" in suffix else ""
    named = [f"pace {int(pace) / 100:g}"] if pace else []
    return ", ".join([*named, *(["phone band"] if "phone" in suffix else [])]) or "own pace"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eot", type=Path, nargs="*", default=[], help="bench.eot results (JSON)")
    parser.add_argument("--human", type=Path, default=None, help="bench.human_turns results (JSON)")
    parser.add_argument("--pauses", type=Path, nargs=2, action="append", default=[], metavar=("ON", "OFF"),
                        help="bench.pauses results with the setting on, and with it off (repeatable)")
    parser.add_argument("--stem", default="unvoiced")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    eot = {p: json.loads(p.read_text(encoding="utf-8")) for p in args.eot}
    text = ["# Words written into the pause: the turn signal on the transcript as written → with "
            "the unvoiced last words doubted", "",
            "Command: `python -m bench.unvoiced_eval " + " ".join(argv if argv is not None else sys.argv[1:])
            + "`; each source run records its machine and load. Cells: mid-sentence pauses cut off · "
            "finished turns left waiting the long silence, as written → with the rule.", ""]
    results: dict[str, Any] = {"eot": {}, "human": None}
    if eot:
        runs = {_condition(p): d["clips"] for p, d in eot.items()}
        text += ["## The end-of-turn set", "", *eot_table(runs, SIGNALS), "", "Decisions changed:", ""]
        for cond, rows in runs.items():
            text += [f"{line} [{cond}]" for line in changed(rows, SIGNALS)]
        results["eot"] = {cond: {s: {src: {"as_written": errors([r for r in rows if r.get("source") == src
                                                                  and not r.get("no_speech")], s, as_written=True),
                                          "with_rule": errors([r for r in rows if r.get("source") == src
                                                               and not r.get("no_speech")], s, as_written=False)}
                                     for src in SOURCES} for s in SIGNALS} for cond, rows in runs.items()}
    if args.human is not None:
        human = json.loads(args.human.read_text(encoding="utf-8"))
        rows = [r for r in human["clips"] if not r.get("no_speech")]
        signals = tuple(s for s in human["signals"] if s in rows[0])
        text += ["", "## Recorded people (bench.human_turns: mid pauses; finished = end and last)", "",
                 "| signal | all pauses |", "|---|---|"]
        text += [f"| {s} | {_cell(errors(rows, s, as_written=True), errors(rows, s, as_written=False))} |"
                 for s in signals]
        text += ["", *changed(rows, signals)]
        results["human"] = {s: {"as_written": errors(rows, s, as_written=True),
                                "with_rule": errors(rows, s, as_written=False)} for s in signals}
    results["pauses"] = []
    for on_path, off_path in args.pauses:
        on, off = (json.loads(p.read_text(encoding="utf-8")) for p in (on_path, off_path))
        text += ["", f"## Whole calls said in pieces (`{on['command']}`, with and without)", "",
                 *pauses_table(on, off)]
        results["pauses"].append({"on": sum(r["turns"] == 1 for r in on["rows"]),
                                  "off": sum(r["turns"] == 1 for r in off["rows"]), "calls": len(on["rows"])})
    publish(args.out, args.stem, results, "\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
