"""Scoring the multi-domain tool set's runs (`bench/tool_domains_run.py`) from its labels.

A line's outcome is read from the events a realtime client would see (the session's own, as dicts):
the calls handed out (`response.function_call_arguments.done`), the calls the provenance guard
withheld (a function call item that ended `incomplete`, answered by a `not_run` refusal), the
optional values it left out (`x.log`), and the reply's words. The same reader serves both paths,
so they are scored alike.

A value is *unsaid* when a call that ran holds it and the line did not give it: on an `expect:
tool` line, for the expected tool, a labelled argument whose value is not the label's
(`tool_domains.same_value`) or an argument with no label (an optional one nobody said); on any
other line or another tool, a value that is not in the line, its context or the instructions
(`spoken.said_in`). Prose an agent may compose (a reason, a note) and a choice the schema lists
(an enum, a boolean) are nobody's words and are not counted.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pipeline.tools import ToolSpec
from pipeline.tools.choice import offered
from pipeline.tools.evidence import evidence_from
from pipeline.tools.spoken import Source, said_in, sources_of

from . import tool_domains as td

PATHS = ("in_process", "realtime")
TARGETS = {"unsaid": "0", "recall": ">= 90%", "false_calls": "<= 10%"}


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text or "{}")
    except ValueError:
        return {"_unparsed": text}


def outcome_of(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What one line's events say: calls handed out, calls withheld, values left out, replies."""
    calls, incomplete, refusals, dropped, replies = [], {}, {}, [], []
    for e in events:
        kind, item = e.get("type", ""), e.get("item") or {}
        if kind == "response.function_call_arguments.done":
            calls.append({"name": e["name"], "arguments": _json(e["arguments"])})
        elif kind == "response.output_item.done" and item.get("type") == "function_call" \
                and item.get("status") == "incomplete":
            incomplete[item["call_id"]] = {"name": item.get("name"), "arguments": _json(item.get("arguments"))}
        elif item.get("type") == "function_call_output":
            output = _json(item.get("output"))
            if isinstance(output, dict) and output.get("status") == "not_run":
                refusals[item["call_id"]] = output.get("message", "")
        elif kind == "x.log" and "left out" in e.get("message", ""):
            dropped.append(e["message"])
        elif kind == "response.done":
            for out in e["response"].get("output", []):
                for part in out.get("content", []) if out.get("type") == "message" else []:
                    if text := (part.get("text") or part.get("transcript") or "").strip():
                        replies.append(text)
    # an incomplete call with no refusal is one the turn had already made (a repeat): not the guard's
    withheld = [{**call, "refusal": refusals[cid]} for cid, call in incomplete.items() if cid in refusals]
    return {"calls": calls, "withheld": withheld, "dropped": dropped, "reply": " ".join(replies)}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def unsaid(case: dict[str, Any], call: dict[str, Any]) -> list[dict[str, Any]]:
    """The values of a call that ran which the line did not give (see the module's docstring)."""
    domain, name = case["domain"], call["name"]
    props = next((t["parameters"]["properties"] for t in td.DOMAINS[domain]["tools"] if t["name"] == name), {})
    expected = case["expect"] == "tool" and name == case["tool"]
    given = td.given_text(case)
    out = []
    for arg, value in (call["arguments"] or {}).items():
        prop = props.get(arg)
        if prop is None:  # no such argument: nobody's
            out.append({"tool": name, "argument": arg, "value": value, "given": False})
            continue
        if expected and arg in case["arguments"]:
            if not td.same_value(case, arg, value):
                out.append({"tool": name, "argument": arg, "value": value,
                            "given": _in_given(domain, name, arg, value, given), "label": case["arguments"][arg]})
            continue
        if _free(domain, name, arg, prop):
            continue  # the schema's choice, or prose the agent may compose
        if expected or not _in_given(domain, name, arg, value, given):
            out.append({"tool": name, "argument": arg, "value": value,
                        "given": _in_given(domain, name, arg, value, given)})
    return out


def _free(domain: str, name: str, arg: str, prop: dict[str, Any]) -> bool:
    """An argument no caller's words decide: an enum, a boolean, or prose the agent composes."""
    return (td.kind_of(domain, name, arg) is None or "enum" in prop
            or Source.COMPOSED in sources_of(arg, prop))


def composed(case: dict[str, Any], call: dict[str, Any]) -> list[dict[str, Any]]:
    """Optional prose the call carries that no label asks for (a `reason` on a line that gave
    none): not counted as unsaid, which prose cannot be checked for, but shown."""
    tool = next((t for t in td.DOMAINS[case["domain"]]["tools"] if t["name"] == call["name"]), None)
    if tool is None:
        return []
    props, required = tool["parameters"]["properties"], set(tool["parameters"].get("required", []))
    labelled = (case["arguments"] or {}) if case["tool"] == call["name"] else {}
    return [{"tool": call["name"], "argument": arg, "value": value}
            for arg, value in (call["arguments"] or {}).items()
            if arg in props and arg not in required and arg not in labelled
            and Source.COMPOSED in sources_of(arg, props[arg])]


def _in_given(domain: str, name: str, arg: str, value: Any, given: str) -> bool:
    """Is the value anywhere in the line, its context or the instructions, as speech says it?"""
    kind = td.kind_of(domain, name, arg)
    if kind is None:
        return True
    return all(said_in(str(v), given, kind=kind, now=td.NOW) for v in _listed(value))


def judge(case: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """One line's verdict from its outcome and its labels."""
    calls = outcome["calls"]
    right = next((c for c in calls if case["expect"] == "tool" and c["name"] == case["tool"]), None)
    args_right = None
    if right is not None:
        args_right = all(arg in right["arguments"] and td.same_value(case, arg, right["arguments"][arg])
                         for arg in case["arguments"])
    values = [u for c in calls for u in unsaid(case, c)]
    return {"called": bool(calls), "right_tool": right is not None, "args_right": args_right,
            "unsaid": values, "unsaid_calls": sum(1 for c in calls if unsaid(case, c)),
            "asked": not calls and "?" in outcome["reply"],
            "composed": [x for c in calls for x in composed(case, c)]}


def kind(row: dict[str, Any]) -> str:
    """What became of a judged line, in a word or two: what the reading counts (a line's `tool`
    is the expected one; `withheld` are the calls the guard stopped)."""
    stopped = [w["name"] for w in row["withheld"]]
    if row["expect"] == "tool":
        if row["right_tool"]:
            return "right" if row["args_right"] else "right tool, wrong values"
        if row["called"]:
            return "wrong tool"
        if row["tool"] in stopped:
            return "right tool withheld"
        return "other tool withheld" if stopped else "no call"
    if row["called"]:
        return "called"
    if stopped:
        return "withheld, silent" if not row["reply"] else "withheld, words"
    if row["expect"] == "ask":
        return "asked" if row["asked"] else "words, no question"
    return "words"


def _share(hits: int, of: int) -> dict[str, Any]:
    return {"n": hits, "of": of, "rate": round(hits / of, 3) if of else None}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures for one split and path: rows are judged lines (`judge`'s fields, `expect`,
    `seconds`, `error`)."""
    tool = [r for r in rows if r["expect"] == "tool"]
    none = [r for r in rows if r["expect"] == "none"]
    ask = [r for r in rows if r["expect"] == "ask"]
    right = [r for r in tool if r["right_tool"]]
    seconds = [r["seconds"] for r in rows if r.get("seconds") is not None]
    return {
        "lines": len(rows),
        "unsaid_calls": sum(r["unsaid_calls"] for r in rows),
        "unsaid_lines": sum(1 for r in rows if r["unsaid"]),
        "recall": _share(len(right), len(tool)),
        "args_right": _share(sum(1 for r in right if r["args_right"]), len(right)),
        "args_right_of_tool_lines": _share(sum(1 for r in right if r["args_right"]), len(tool)),
        "false_calls": _share(sum(1 for r in none if r["called"]), len(none)),
        "asked_back": _share(sum(1 for r in ask if r["asked"]), len(ask)),
        "calls_on_ask_lines": _share(sum(1 for r in ask if r["called"]), len(ask)),
        "composed_calls": sum(1 for r in rows if r["composed"]),
        "withheld_calls": sum(len(r["withheld"]) for r in rows),
        "withheld_lines": sum(1 for r in rows if r["withheld"]),
        "kinds": {e: dict(Counter(kind(r) for r in rows if r["expect"] == e)) for e in ("tool", "none", "ask")},
        "errors": sum(1 for r in rows if r.get("error")),
        "median_s": round(statistics.median(seconds), 2) if seconds else None,
    }


def met(summary: dict[str, Any]) -> dict[str, bool | None]:
    """Which of the issue's targets this split and path meets."""
    recall, false = summary["recall"]["rate"], summary["false_calls"]["rate"]
    return {"unsaid": summary["unsaid_calls"] == 0,
            "recall": None if recall is None else recall >= 0.9,
            "false_calls": None if false is None else false <= 0.1}


def by_split_and_path(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for split in td.SPLITS:
        for path in PATHS:
            mine = [r for r in rows if r["split"] == split and r["path"] == path]
            if mine:
                out.setdefault(split, {})[path] = summarize(mine)
    return out


def _pct(share: dict[str, Any]) -> str:
    return "-" if share["rate"] is None else f"{share['rate']:.0%} ({share['n']}/{share['of']})"


def table(summaries: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The markdown table: one row per split and path."""
    head = ("| split | path | lines | unsaid (calls / lines) | recall | false calls | args right "
            "| asked back | calls on ask lines | withheld (calls / lines) | unlabelled optional prose "
            "| errors | median s/line |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for split, paths in summaries.items():
        for path, s in paths.items():
            out.append(f"| {split} | {path} | {s['lines']} | {s['unsaid_calls']} / {s['unsaid_lines']} "
                       f"| {_pct(s['recall'])} | {_pct(s['false_calls'])} | {_pct(s['args_right'])} "
                       f"| {_pct(s['asked_back'])} | {_pct(s['calls_on_ask_lines'])} "
                       f"| {s['withheld_calls']} / {s['withheld_lines']} | {s['composed_calls']} "
                       f"| {s['errors']} | {s['median_s']} |")
    return "\n".join(out)


def kinds_table(summaries: dict[str, dict[str, dict[str, Any]]]) -> str:
    """What became of the lines, by what they expect: one row per split and path."""
    out = ["| split | path | expect | what became of the lines |", "|---|---|---|---|"]
    for split, paths in summaries.items():
        for path, s in paths.items():
            for expect, kinds in ((e, k) for e, k in s["kinds"].items() if k):
                listed = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
                out.append(f"| {split} | {path} | {expect} | {listed} |")
    return "\n".join(out)


def offered_first(case: dict[str, Any], path: str) -> list[str]:
    """The tools the session's tool choice (`choice.offered`) lets the first reply to this line
    call, from the same evidence the session reads (the caller's turns, what the agent said
    before each, the instructions, the set's `now`): a tool it leaves out cannot be called.
    On the realtime path the tools are a client's: none is marked as acting on the world."""
    said, asked, agent = [], [], ""
    for turn in [*case.get("context", []), {"role": "user", "content": case["line"]}]:
        if turn["role"] == "assistant":
            agent = turn["content"]
        else:
            said, asked, agent = [*said, turn["content"]], [*asked, agent], ""
    evidence = evidence_from(said, [], asked, instructions=td.DOMAINS[case["domain"]]["instructions"],
                             now=td.NOW)
    specs = (td.registry(case["domain"]).specs() if path == "in_process"
             else [ToolSpec.from_openai(t) for t in td.DOMAINS[case["domain"]]["tools"]])
    return [spec.name for spec in offered(specs, evidence, last_said=said[-1])]


def ceiling(cases: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """Without the model: on how many `expect: tool` lines the tool choice offers the expected
    tool at all (recall can be no higher), per split and path; and the lines it does not."""
    out = ["| split | path | expected tool offered |", "|---|---|---|"]
    left_out = []
    for split in td.SPLITS:
        for path in PATHS:
            mine = [c for c in cases if c["split"] == split and c["expect"] == "tool"]
            if not mine:
                continue
            missed = [c for c in mine if c["tool"] not in offered_first(c, path)]
            out.append(f"| {split} | {path} | {_pct(_share(len(mine) - len(missed), len(mine)))} |")
            left_out += [f"{split} {path}: {c['domain']}: {c['line']!r} ({c['tool']}; offered "
                         f"{', '.join(offered_first(c, path)) or 'none'})" for c in missed]
    return "\n".join(out), left_out
