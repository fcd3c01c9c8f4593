"""Facts nobody gave (`pipeline.tools.facts`, `call.unsourced_facts`): how often the rule fires on
replies that were right, and how often it catches a fact nobody gave, per split.

The set (`bench/facts_set.json`, 64 replies for the eight agents of `bench/tool_domains.json`) is
labelled by hand: `right` replies state only values the instructions or the caller gave, often
written another way; `invented` ones state one nobody gave. Each reply is judged with its
domain's instructions and its caller line as the sources, as the session judges a reply.

    python -m bench.facts            # the table
    python -m bench.facts --json     # per reply, what fired
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pipeline.tools.evidence import Evidence
from pipeline.tools.facts import unsourced

from .tool_domains import DOMAINS, SPLITS

SET = Path(__file__).resolve().with_name("facts_set.json")


def judged() -> list[dict[str, Any]]:
    """Each reply with its split and the facts the rule finds no source for."""
    out = []
    for reply in json.loads(SET.read_text(encoding="utf-8"))["replies"]:
        domain = DOMAINS[reply["domain"]]
        evidence = Evidence(said=[reply["line"]], asked=[""], instructions=domain["instructions"])
        out.append({**reply, "split": domain["split"], "fired": unsourced(reply["reply"], evidence)})
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| split | right replies | fired on right (misfires) | invented replies | caught |",
             "|---|---|---|---|---|"]
    for split in (*SPLITS, "all"):
        part = [r for r in rows if split in ("all", r["split"])]
        right = [r for r in part if r["label"] == "right"]
        invented = [r for r in part if r["label"] == "invented"]
        misfires = sum(1 for r in right if r["fired"])
        caught = sum(1 for r in invented if r["fired"])
        lines.append(f"| {split} | {len(right)} | {misfires} ({misfires / max(1, len(right)):.0%}) | "
                     f"{len(invented)} | {caught} ({caught / max(1, len(invented)):.0%}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="per reply, what fired")
    args = parser.parse_args(argv)
    rows = judged()
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(table(rows))
    for r in rows:
        if bool(r["fired"]) != (r["label"] == "invented"):
            print(f"- {r['split']} {r['domain']} ({r['label']}): {r['reply']!r} fired {r['fired']}")


if __name__ == "__main__":
    main()
