"""A stored multi-domain run (`bench.tool_domains_run --out`) judged again by the guard as it is
now: each call the model made and each call the guard withheld is traced again
(`pipeline.tools.provenance.trace`) on the same line, context and instructions. It tells what a
change to the guard does to the same model outputs, without the model; a fresh run may differ,
as the tool choice changes what the model is offered.

    python -m bench.tool_domains_rejudge bench/results/2026-12-02-tool-domains.json
    python -m bench.tool_domains_rejudge --written bench/results/2026-12-06-tool-domains-fresh*.json

`--written`: what the model itself wrote on the lines that need a tool, before any guard (the
calls that ran and those withheld together), beside what ran: on how many it wrote the right tool
at all, and with every labelled value right. No guard can run the right tool more often than the
model writes it, so the first is recall's ceiling for this model.
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
from .tool_domains_score import offered_first, unsaid


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


def written(rows: list[dict[str, Any]]) -> collections.Counter[str]:
    """Of the lines that need a tool: the model wrote the right tool (run or withheld), wrote it
    with every labelled value right, and the guard ran it (`judge`'s recall); and of the values
    the guard refuses now in the right tool's withheld calls, those the label gives otherwise
    (the guard stopped a wrong value) and those it gives so (a right value refused); and of the
    lines where it wrote no right tool, those on which the tool choice as it is now does not offer
    it."""
    cases = {(c["domain"], c["line"]): c for c in td.cases()}
    out: collections.Counter[str] = collections.Counter()
    for r in rows:
        case = cases[(r["domain"], r["line"])]
        if case["expect"] != "tool":
            continue
        mine = [c for c in [*r["calls"], *r["withheld"]] if c["name"] == case["tool"]]
        out["tool lines"] += 1
        out["wrote the right tool"] += bool(mine)
        if not mine:  # what the tool choice as it is now offers on this line and path
            out["missed, not offered" if case["tool"] not in offered_first(case, r["path"]) else "missed, offered"] += 1
        out["with every value right"] += any(all(a in c["arguments"] and td.same_value(case, a, c["arguments"][a])
                                                 for a in case["arguments"]) for c in mine)
        out["ran the right tool"] += any(c["name"] == case["tool"] for c in r["calls"])
        spec, given = td.registry(case["domain"])[case["tool"]], evidence(case)
        for call in (c for c in r["withheld"] if c["name"] == case["tool"]):
            for arg in trace(spec, call["arguments"], given).missing:
                if arg in case["arguments"]:
                    right = arg in call["arguments"] and td.same_value(case, arg, call["arguments"][arg])
                    out["refused, right" if right else "refused, wrong"] += 1
    return out


def written_table(runs: dict[str, collections.Counter[str]]) -> str:
    """One row per run and one for all: each count of `written` as a share of the tool lines."""
    keys = ("wrote the right tool", "with every value right", "ran the right tool")
    lines = ["| run | tool lines | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
    total = sum(runs.values(), collections.Counter())
    for name, st in [*runs.items(), ("all", total)]:
        n = st["tool lines"]
        lines.append(f"| {name} | {n} | " + " | ".join(f"{st[k]} ({st[k] / max(1, n):.0%})" for k in keys) + " |")
    return "\n".join(lines) + (f"\n\nValues refused in the right tool's withheld calls (the label's own arguments): "
                               f"{total['refused, wrong']} unlike the label, {total['refused, right']} as the label gives them. "
                               f"Lines where the model wrote no right tool: {total['missed, not offered']} not offered it "
                               f"by the tool choice as it is now, {total['missed, offered']} offered it.")


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
    parser.add_argument("runs", type=Path, nargs="+", help="a run's JSON (bench.tool_domains_run --out)")
    parser.add_argument("--written", action="store_true", help="what the model wrote before any guard, "
                        "per run: recall's ceiling for this model")
    args = parser.parse_args(argv)
    rows = {run.stem: json.loads(run.read_text(encoding="utf-8"))["rows"] for run in args.runs}
    if args.written:
        print(written_table({name: written(r) for name, r in rows.items()}))
        return
    for name, r in rows.items():
        print(f"{name}\n\n{table(rejudge(r))}\n" if len(rows) > 1 else table(rejudge(r)))


if __name__ == "__main__":
    main()
