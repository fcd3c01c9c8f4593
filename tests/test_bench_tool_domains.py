"""The multi-domain tool set (`bench/tool_domains.json`) is well formed: its tools load, every
expected call names a tool of its domain with values given in the line, its context or the
instructions, and both splits (by domain) are there. Model-free."""

from __future__ import annotations

import re

import pytest

from bench import tool_domains as td
from pipeline.tools import tool_call_grammar
from pipeline.tools.spoken import Source, cue_words, said_in, sources_of

CASES = td.cases()
EXPECTS = {"tool", "ask", "none"}
CATEGORIES = {"action", "mention", "partial", "correction"}
# lines the issue quotes: the set is written from what callers say, not from them
QUOTED = ("I had an appointment last Thursday and it went really well",
          "I took a taxi to Elm Street yesterday", "I found my card again, it was in my coat",
          "a cab at the central station at 6 pm", "no, six pm, not five",
          "I paid 42 dollars last year for a lamp and I loved it")


def _ids(case: dict) -> str:
    return f"{case['domain']}:{case['line'][:40]}"


def test_size_and_splits() -> None:
    assert len(td.DOMAINS) >= 6
    assert len(CASES) >= 120
    for split in td.SPLITS:
        domains = {name for name, d in td.DOMAINS.items() if d["split"] == split}
        assert len(domains) >= 3, split
        assert td.cases(split), split
    assert {d["split"] for d in td.DOMAINS.values()} == set(td.SPLITS)
    assert len(td.cases("dev")) + len(td.cases("heldout")) == len(CASES)
    with pytest.raises(ValueError, match="use one of dev, heldout"):
        td.cases("test")


def test_every_domain_has_each_kind_of_line() -> None:
    for name in td.DOMAINS:
        mine = [c for c in CASES if c["domain"] == name]
        assert {c["category"] for c in mine} == CATEGORIES, name
        assert {c["expect"] for c in mine} == EXPECTS, name


def test_tools_load_as_the_session_holds_a_clients_functions() -> None:
    for name, domain in td.DOMAINS.items():
        registry = td.registry(name)
        assert set(domain["acts"]) <= {spec.name for spec in registry}, name
        assert domain["instructions"].strip()
        assert any(spec.side_effect for spec in registry)


def test_each_domains_tools_make_a_call_grammar() -> None:
    for name in td.DOMAINS:
        assert "call" in tool_call_grammar(list(td.registry(name)))


def test_lines_are_distinct_and_not_the_issues_own() -> None:
    lines = [(c["domain"], c["line"]) for c in CASES]
    assert len(set(lines)) == len(lines)
    squash = lambda t: re.sub(r"[^a-z0-9]", "", t.lower())  # noqa: E731
    for case in CASES:
        for quoted in QUOTED:
            assert squash(quoted) not in squash(case["line"]), case["line"]


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_case_is_well_formed(case: dict) -> None:
    assert case["domain"] in td.DOMAINS
    assert case["expect"] in EXPECTS and case["category"] in CATEGORIES
    if case["category"] == "correction":
        assert case.get("context"), "a correction corrects something said before it"
    for turn in case.get("context", []):
        assert turn["role"] in ("user", "assistant") and turn["content"].strip()
    if case["expect"] != "tool":
        assert case["tool"] is None and case["arguments"] is None and not case.get("absent")
        return
    params = td.tool(case["domain"], case["tool"])["parameters"]
    props, required = params["properties"], set(params.get("required", []))
    assert set(case["arguments"]) <= set(props)
    absent = set(case.get("absent", []))
    assert absent <= set(props) - required - set(case["arguments"])
    for name in required - set(case["arguments"]):
        # a required argument the line leaves out is one the agent may compose (a summary)
        assert Source.COMPOSED in sources_of(name, props[name]), name


@pytest.mark.parametrize("case", [c for c in CASES if c["expect"] == "tool"], ids=_ids)
def test_every_expected_value_was_given(case: dict) -> None:
    """Each value is in the line, its context or the instructions, as speech says it."""
    props = td.tool(case["domain"], case["tool"])["parameters"]["properties"]
    given = td.given_text(case)
    for name, value in case["arguments"].items():
        kind = td.kind_of(case["domain"], case["tool"], name)
        assert kind is not None, name
        rivals = set().union(*(cue_words(n, p) for n, p in props.items() if n != name))
        for item in value if isinstance(value, list) else [value]:
            assert said_in(item, given, kind=kind, now=td.NOW, cues=cue_words(name, props[name]),
                           rivals=rivals), f"{name}={item!r} is not in {given!r}"


def test_same_value_compares_by_meaning() -> None:
    case = next(c for c in CASES if c["tool"] == "book_appointment" and c["arguments"]["time"] == "14:00")
    assert td.same_value(case, "time", "2 PM") and td.same_value(case, "time", "14:00")
    assert not td.same_value(case, "time", "10:30")
    assert td.same_value(case, "patient_name", case["arguments"]["patient_name"].upper())
    travel = next(c for c in CASES if c["tool"] == "set_travel_notice")
    assert td.same_value(travel, "countries", ["Spain", "Portugal"])
    assert not td.same_value(travel, "countries", ["Spain"])
    ride = next(c for c in CASES if c["tool"] == "book_ride" and c["arguments"]["pickup_time"] == "now")
    assert td.same_value(ride, "pickup_time", "2026-06-03T10:05")
    assert not td.same_value(ride, "pickup_time", "10:00 PM")


def test_messages_put_the_instructions_first_and_the_line_last() -> None:
    case = next(c for c in CASES if c.get("context"))
    got = td.messages(case)
    assert got[0]["role"] == "system" and got[-1] == {"role": "user", "content": case["line"]}
    assert got[1:-1] == case["context"]
