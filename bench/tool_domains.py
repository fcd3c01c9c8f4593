"""A labelled tool set across domains the framework was not written for (`tool_domains.json`).

Twenty agents, each declared the way a client declares one: JSON Schema function tools (the
realtime protocol's form), the instructions a deployment gives (some hold the caller's record: an
account with its cards, a booking, prescriptions on file), and which tools act on the world
(`acts`). Each caller line is one user turn, after its `context` (the turns before a correction),
said at the set's `now` (Wednesday 2026-06-03, 10:00). Lines by `category`:
- action: asks for something; expect the tool and the argument values given (by the caller, or
  by the instructions' record), written as the schema asks ("tomorrow": "2026-06-04");
- mention: values said about the past or in passing ("Dr. Okafor saw me last Thursday"); no tool;
- partial: something a tool needs was not said; a question back (`ask`), or a tool called with only
  what was said (`absent`: optional arguments that must be left out, not invented);
- correction: the caller corrects the agent's read-back ("No, seven thirty, not six thirty").

The split is by domain: `dev` (clinic front desk, taxi dispatch, bank card line, restaurant
reservations) is what rules may be designed and tuned on; `heldout` (hotel front desk, IT
helpdesk, pharmacy refills, airline) is only reported, to say whether they hold on domains they
were not made on. `fresh` (vet, car rental, broadband, salon) and `fresh2` (home repair dispatch,
gym membership desk, parcel courier, council waste line) were each written later by an author who
had not read the guard's rules or code, and are judged once. `fresh3` (driving school, energy
supplier, tyre and service garage, cinema box office) was written on 2026-12-03, later the same
day, by an author who had not read the guard's rules, its code or any split's failures, and is
judged once; so is `fresh4` (dental practice, library desk, home-insurance claims line, ferry ticket
office), written on 2026-12-03 in the evening the same way, after the rules judged on `fresh3`, and
`fresh5` (removals firm, bicycle repair shop, student accommodation office, pet boarding kennels),
written late that evening the same way, to judge the rules written after reading `fresh4`; and
`fresh6` (optician, self-storage, florist, window cleaner), written that night the same way, to
judge the rules written after reading `fresh5`; `fresh7` (physiotherapy practice, boat hire,
music school, garden centre), written on 2026-12-04 the same way, to judge the rules written
after reading `fresh6`; and `fresh8` (locksmith, dog groomer, holiday cottages, hearing clinic),
written later that day the same way, to judge the rules written after reading `fresh7`. Values are compared by meaning (`same_value`: "6 PM" is "18:00").
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline.tools import ToolRegistry, ToolSpec
from pipeline.tools.spoken import ValueKind, kind_from_schema, said_in

SET = Path(__file__).resolve().with_name("tool_domains.json")
DATA: dict[str, Any] = json.loads(SET.read_text(encoding="utf-8"))
DOMAINS: dict[str, dict[str, Any]] = DATA["domains"]
NOW = datetime.fromisoformat(DATA["now"])
SPLITS = ("dev", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "fresh24", "fresh25", "fresh26", "fresh27", "fresh28", "fresh29", "fresh30", "fresh31", "fresh32", "fresh33", "fresh34", "fresh35", "fresh36", "fresh37", "fresh38", "fresh39", "fresh40", "fresh41", "fresh42", "fresh43", "fresh44", "fresh45", "fresh46", "fresh47", "fresh48", "fresh49", "fresh50", "fresh51", "fresh52", "fresh53", "fresh54", "fresh55", "fresh56", "fresh57", "fresh58", "fresh59", "fresh60")


def cases(split: str | None = None) -> list[dict[str, Any]]:
    """The labelled lines (of one split, or all), each with its domain's `split`."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}: use one of {', '.join(SPLITS)}.")
    out = [{**case, "split": DOMAINS[case["domain"]]["split"]} for case in DATA["cases"]]
    return [case for case in out if split is None or case["split"] == split]


def tool(domain: str, name: str) -> dict[str, Any]:
    """A domain's tool definition by name."""
    return next(t for t in DOMAINS[domain]["tools"] if t["name"] == name)


def registry(domain: str) -> ToolRegistry:
    """The domain's tools as the session holds a client's functions (no code behind them)."""
    acts = set(DOMAINS[domain]["acts"])
    return ToolRegistry(specs=[
        ToolSpec.from_openai(t, side_effect=t["name"] in acts,
                             business_key=lambda a, n=t["name"]: f"{n}:{json.dumps(a, sort_keys=True)}")
        for t in DOMAINS[domain]["tools"]])


def messages(case: dict[str, Any]) -> list[dict[str, str]]:
    """The conversation up to the line: instructions, the turns before it, the line."""
    return [{"role": "system", "content": DOMAINS[case["domain"]]["instructions"]},
            *case.get("context", []), {"role": "user", "content": case["line"]}]


def given_text(case: dict[str, Any]) -> str:
    """Everything a value in this line's call may come from: the line, its context, the
    instructions."""
    return "\n".join(m["content"] for m in messages(case))


def kind_of(domain: str, tool_name: str, argument: str) -> ValueKind | None:
    return kind_from_schema(argument, tool(domain, tool_name)["parameters"]["properties"][argument])


def same_value(case: dict[str, Any], argument: str, got: Any) -> bool:
    """Is the model's value the one the line expects, by meaning ("6 PM" is "18:00", "SK 283" is
    "SK283", "Dr Okafor" is "Dr. Okafor")?"""
    expected = case["arguments"][argument]
    kind = kind_of(case["domain"], case["tool"], argument) or ValueKind.TEXT
    if isinstance(expected, list):
        got_items = got if isinstance(got, list) else [got]
        return len(got_items) == len(expected) and all(
            any(said_in(str(g), str(e), kind=kind, now=NOW) for e in expected) for g in got_items)
    return said_in(str(got), str(expected), kind=kind, now=NOW)
