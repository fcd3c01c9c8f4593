"""A stored multi-domain run (`bench.tool_domains_run --out`) judged again by the guard as it is
now: each call the model made and each call the guard withheld is traced again
(`pipeline.tools.provenance.trace`) on the same line, context and instructions. It tells what a
change to the guard does to the same model outputs, without the model; a fresh run may differ,
as the tool choice changes what the model is offered.

    python -m bench.tool_domains_rejudge bench/results/2026-12-02-tool-domains.json
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path
from typing import Any

from pipeline.tools.evidence import Evidence
from pipeline.tools.provenance import trace
from pipeline.tools.unasked import unasked

from . import tool_domains as td
from .tool_domains_score import unsaid


def evidence(case: dict[str, Any]) -> Evidence:
    """What the line's call may take values from: the caller's turns (and the agent's words
    before each), the domain's instructions, said at the set's time."""
    said, asked, agent = [], [], ""
    for m in case.get("context", []):
        if m["role"] == "assistant":
            agent = m["content"]
        elif m["role"] == "user":
            said.append(m["content"])
            asked.append(agent)
            agent = ""
    return Evidence(said=[*said, case["line"]], asked=[*asked, agent],
                    instructions=td.DOMAINS[case["domain"]]["instructions"], now=td.NOW)


def rejudge(rows: list[dict[str, Any]]) -> dict[str, collections.Counter[str]]:
    """Per path: calls refused now that ran then, withheld then that would run now, lines with an
    unsaid value that would run, right tools that would run, calls on lines that ask for nothing
    or that leave out a required value (`provenance.trace`, then `unasked`)."""
    cases = {(c["domain"], c["line"]): c for c in td.cases()}
    out: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in rows:
        case, st = cases[(r["domain"], r["line"])], out[r["path"]]
        registry, given = td.registry(r["domain"]), evidence(case)
        ran = []
        for call in r["calls"]:
            traced = trace(registry[call["name"]], call["arguments"], given)
            if traced.missing or unasked(registry[call["name"]], traced.arguments, given):
                st["refused now"] += 1
            else:
                ran.append({"name": call["name"], "arguments": traced.arguments})
        for call in r["withheld"]:
            traced = trace(registry[call["name"]], call["arguments"], given)
            if not traced.missing and not unasked(registry[call["name"]], traced.arguments, given):
                st["runs now"] += 1
                ran.append({"name": call["name"], "arguments": traced.arguments})
        st["lines"] += 1
        st["unsaid lines"] += any(unsaid(case, call) for call in ran)
        if case["expect"] == "tool":
            st["tool lines"] += 1
            st["right tool"] += any(call["name"] == case["tool"] for call in ran)
        if case["expect"] == "none":
            st["none lines"] += 1
            st["false calls"] += bool(ran)
        if case["expect"] == "ask":
            st["ask lines"] += 1
            st["ask calls"] += bool(ran)
    return out


def table(judged: dict[str, collections.Counter[str]]) -> str:
    lines = ["| path | lines | calls that ran then, refused now | withheld then, would run now | lines with "
             "an unsaid value that would run | tool lines where the right tool would run | none lines "
             "with a call that would run | ask lines with a call that would run |", "|---|---|---|---|---|---|---|---|"]
    for path, st in judged.items():
        recall = st["right tool"] / max(1, st["tool lines"])
        false = st["false calls"] / max(1, st["none lines"])
        lines.append(f"| {path} | {st['lines']} | {st['refused now']} | {st['runs now']} | {st['unsaid lines']} | "
                     f"{st['right tool']}/{st['tool lines']} ({recall:.0%}) | "
                     f"{st['false calls']}/{st['none lines']} ({false:.0%}) | "
                     f"{st['ask calls']}/{st['ask lines']} ({st['ask calls'] / max(1, st['ask lines']):.0%}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run's JSON (bench.tool_domains_run --out)")
    args = parser.parse_args(argv)
    print(table(rejudge(json.loads(args.run.read_text(encoding="utf-8"))["rows"])))


if __name__ == "__main__":
    main()
