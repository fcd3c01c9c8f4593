"""The multi-domain tool set (`bench/tool_domains.json`) is well formed: its tools load, every
expected call names a tool of its domain with values given in the line, its context or the
instructions, and both splits (by domain) are there; and a run of it (`bench/tool_domains_run.py`)
is scored from its labels (`bench/tool_domains_score.py`) as the issue defines. Model-free."""

from __future__ import annotations

import json
import re

import pytest

from bench import tool_domains as td
from bench import tool_domains_score as score
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
    assert sum(len(td.cases(split)) for split in td.SPLITS) == len(CASES)
    with pytest.raises(ValueError, match="use one of dev, heldout, fresh, fresh2, fresh3, fresh4, fresh5, fresh6, fresh7, fresh8"):
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


# A split judged once is not read here by the guard's own recogniser (`said_in`): a miss of it
# would show the split's failures before its one judgement. Its author checked that each value is
# given; here only the value's form is checked (`test_a_judged_once_value_has_its_schemas_form`).
JUDGED_ONCE = {"fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "fresh24", "fresh25", "fresh26", "fresh27", "fresh28", "fresh29", "fresh30", "fresh31", "fresh32", "fresh33", "fresh34", "fresh35", "fresh36", "fresh37", "fresh38", "fresh39", "fresh40", "fresh41", "fresh42", "fresh43", "fresh44", "fresh45", "fresh46", "fresh47", "fresh48", "fresh49", "fresh50", "fresh51", "fresh52", "fresh53", "fresh54", "fresh55", "fresh56", "fresh57", "fresh58", "fresh59", "fresh60"}


@pytest.mark.parametrize("case", [c for c in CASES if c["expect"] == "tool"
                                  and c["split"] not in JUDGED_ONCE], ids=_ids)
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


@pytest.mark.parametrize("case", [c for c in CASES if c["expect"] == "tool"
                                  and c["split"] in JUDGED_ONCE],
                         ids=lambda c: f"{c['domain']}:{c['tool']}")
def test_a_judged_once_value_has_its_schemas_form(case: dict) -> None:
    """Dates as the schema asks, times HH:MM, whole integers, numbers, listed choices, text not
    empty, a boolean true or false."""
    from datetime import date

    props = td.tool(case["domain"], case["tool"])["parameters"]["properties"]
    for name, value in case["arguments"].items():
        prop = props[name]
        if prop.get("type") == "boolean":  # a yes or no: nothing to trace, compared as written
            assert isinstance(value, bool), name
            continue
        assert td.kind_of(case["domain"], case["tool"], name) is not None, name
        for item in value if isinstance(value, list) else [value]:
            if prop.get("type") == "integer":
                assert isinstance(item, int), name
            elif prop.get("type") == "number":  # an amount: 45.5
                assert isinstance(item, int | float) and not isinstance(item, bool), name
            elif prop.get("format") == "date":
                assert date.fromisoformat(item), name
            elif "HH:MM" in prop.get("description", ""):
                assert re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", item), name
            elif "enum" in prop:
                assert item in prop["enum"], name
            else:
                assert isinstance(item, str) and item.strip(), name


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


# --- scoring a run (bench/tool_domains_score.py) on canned outcomes: no model --------------------

MARCUS = CASES[0]  # "Hi, this is Marcus Hale, ... Dr. Okafor tomorrow at 2 pm."
SOFIA = next(c for c in CASES if c["line"].startswith("My name is Sofia Petrova"))  # doctor: absent
PICKUP = next(c for c in CASES if c["line"].startswith("My usual pickup is 18 Willow Crescent"))
A_TAXI = next(c for c in CASES if c["line"] == "I need a taxi.")
BOOK = {"patient_name": "Marcus Hale", "date": "2026-06-04", "time": "14:00", "doctor": "Dr. Okafor"}


def _done(name: str, arguments: dict) -> dict:
    return {"type": "response.function_call_arguments.done", "name": name, "arguments": json.dumps(arguments)}


def _reply(text: str, *calls: dict) -> dict:
    return {"type": "response.done", "response": {"output": [
        {"type": "message", "content": [{"type": "output_text", "text": text}]}, *calls]}}


def _outcome(calls=(), withheld=(), reply="") -> dict:
    return {"calls": list(calls), "withheld": list(withheld), "dropped": [], "reply": reply}


def test_a_lines_events_say_what_ran_what_was_withheld_and_what_was_said() -> None:
    withheld = {"type": "function_call", "status": "incomplete", "call_id": "c2", "name": "book_appointment",
                "arguments": json.dumps({**BOOK, "time": "10:30"})}
    repeat = {**withheld, "call_id": "c3"}  # incomplete with no refusal: a repeat, not the guard's
    refusal = {"type": "function_call_output", "call_id": "c2",
               "output": json.dumps({"status": "not_run", "message": "Ask the caller for the time."})}
    got = score.outcome_of([
        _done("book_appointment", BOOK),
        {"type": "response.output_item.done", "item": withheld},
        {"type": "response.output_item.done", "item": repeat},
        {"type": "conversation.item.added", "item": refusal},
        {"type": "conversation.item.added", "item": {"type": "function_call_output", "call_id": "c1",
                                                     "output": json.dumps({"ok": True})}},
        {"type": "x.log", "message": "book_ride: left out destination, which nobody gave"},
        _reply("What time would suit you?", withheld), _reply("")])
    assert got["calls"] == [{"name": "book_appointment", "arguments": BOOK}]
    assert [(w["arguments"]["time"], w["refusal"]) for w in got["withheld"]] == [
        ("10:30", "Ask the caller for the time.")]
    assert got["dropped"] == ["book_ride: left out destination, which nobody gave"]
    assert got["reply"] == "What time would suit you?"


def test_unsaid_values_are_those_the_line_did_not_give() -> None:
    assert score.unsaid(MARCUS, {"name": "book_appointment", "arguments": {**BOOK, "time": "2 PM"}}) == []
    # the instructions' own appointment date: in the given text, but not the caller's "tomorrow"
    wrong = score.unsaid(MARCUS, {"name": "book_appointment", "arguments": {**BOOK, "date": "2026-06-09"}})
    assert [(u["argument"], u["given"], u["label"]) for u in wrong] == [("date", True, "2026-06-04")]
    # an optional argument the line must leave out
    sofia = {"patient_name": "Sofia Petrova", "date": "2026-06-08", "time": "08:00"}
    assert score.unsaid(SOFIA, {"name": "book_appointment", "arguments": sofia}) == []
    extra = score.unsaid(SOFIA, {"name": "book_appointment", "arguments": {**sofia, "doctor": "Dr. Okafor"}})
    assert [u["argument"] for u in extra] == ["doctor"]
    # prose the agent composes is not counted, but shown; nor is a choice the schema lists
    reason = {"name": "book_appointment", "arguments": {**BOOK, "reason": "a walk in the park"}}
    assert score.unsaid(MARCUS, reason) == []
    assert score.composed(MARCUS, reason) == [{"tool": "book_appointment", "argument": "reason",
                                               "value": "a walk in the park"}]
    # on a line that asks for nothing, a value said in it is the caller's, an invented one is not
    ride = {"name": "book_ride", "arguments": {"pickup_address": "18 Willow Crescent", "vehicle": "van",
                                              "pickup_time": "2026-06-03T18:00"}}
    assert [u["argument"] for u in score.unsaid(PICKUP, ride)] == ["pickup_time"]
    assert [u["argument"] for u in score.unsaid(A_TAXI, {"name": "book_ride", "arguments": {
        "pickup_address": "12 Main Street"}})] == ["pickup_address"]
    assert score.unsaid(A_TAXI, {"name": "book_ride", "arguments": {"no_such": 1}})[0]["given"] is False


def test_the_figures_per_split_and_path() -> None:
    def row(case: dict, outcome: dict, path: str = "in_process", seconds: float = 1.0) -> dict:
        return {"split": case["split"], "expect": case["expect"], "tool": case["tool"], "path": path,
                "seconds": seconds,
                **outcome, **score.judge(case, outcome)}

    invented = {"name": "book_ride", "arguments": {"pickup_address": "12 Main Street", "pickup_time": "now"}}
    rows = [row(MARCUS, _outcome([{"name": "book_appointment", "arguments": BOOK}]), seconds=2.0),
            row(SOFIA, _outcome([{"name": "book_appointment", "arguments": {
                "patient_name": "Sofia Petrova", "date": "2026-06-09", "time": "08:00"}}]), seconds=4.0),
            row(PICKUP, _outcome([invented]), seconds=6.0),
            row(A_TAXI, _outcome(withheld=[{"name": "book_ride", "arguments": {}, "refusal": "Ask."}],
                                 reply="Where should we pick you up?"), seconds=8.0),
            row(MARCUS, _outcome(reply="Sure."), path="realtime")]
    got = score.by_split_and_path(rows)
    assert set(got) == {"dev"} and set(got["dev"]) == {"in_process", "realtime"}
    s = got["dev"]["in_process"]
    assert s["lines"] == 4 and s["recall"] == {"n": 2, "of": 2, "rate": 1.0}
    assert s["args_right"] == {"n": 1, "of": 2, "rate": 0.5}
    assert (s["unsaid_calls"], s["unsaid_lines"]) == (2, 2)  # Sofia's date, and the invented pickup
    assert s["false_calls"] == {"n": 1, "of": 1, "rate": 1.0}
    assert s["asked_back"]["rate"] == 1.0 and s["calls_on_ask_lines"]["n"] == 0
    assert (s["withheld_calls"], s["withheld_lines"]) == (1, 1)
    assert s["median_s"] == 5.0
    assert s["kinds"] == {"tool": {"right": 1, "right tool, wrong values": 1}, "none": {"called": 1},
                          "ask": {"withheld, words": 1}}
    assert score.met(s) == {"unsaid": False, "recall": True, "false_calls": False}
    realtime = got["dev"]["realtime"]
    assert realtime["recall"]["rate"] == 0.0 and realtime["false_calls"]["rate"] is None
    assert score.met(realtime) == {"unsaid": True, "recall": False, "false_calls": None}
    table = score.table(got).splitlines()
    assert len(table) == 4 and table[2].startswith("| dev | in_process | 4 | 2 / 2 | 100% (2/2) | 100% (1/1)")
    assert "| dev | realtime | tool | no call 1 |" in score.kinds_table(got)


def test_a_run_picks_lines_by_split_domain_and_limit() -> None:
    from bench.tool_domains_run import chosen

    two = chosen("heldout", None, 2)
    assert [c["domain"] for c in two] == [d for d in td.DOMAINS if td.DOMAINS[d]["split"] == "heldout"
                                          for _ in range(2)]
    assert all(td.cases()[c["index"]]["line"] == c["line"] for c in two)
    assert {c["domain"] for c in chosen(None, "taxi,hotel", None)} == {"taxi", "hotel"}
    with pytest.raises(SystemExit, match="unknown spa"):
        chosen(None, "spa", None)


def test_a_stored_call_is_judged_again_by_the_guard_as_it_is() -> None:
    from bench.tool_domains_rejudge import rejudge

    case = next(c for c in td.cases("dev") if c["expect"] == "tool" and c["domain"] == "taxi")
    made = {"name": case["tool"], "arguments": dict(case["arguments"])}
    invented = {"name": case["tool"], "arguments": {**case["arguments"], next(iter(case["arguments"])): "Nowhere Lane 999"}}
    rows = [{"path": "p", "domain": case["domain"], "line": case["line"], "calls": [invented], "withheld": [made]}]
    judged = rejudge(rows)["p"]
    assert judged["refused now"] == 1 and judged["runs now"] == 1 and judged["right tool"] == 1
def test_the_ceiling_counts_every_line_that_needs_a_tool_on_each_path() -> None:
    """Model-free: the tool choice's verdict on each labelled line (what it offers is the guard's
    business, so only the counting is checked here)."""
    table, left_out = score.ceiling([c for c in CASES if c["domain"] in ("clinic", "hotel")])
    rows = table.splitlines()[2:]
    assert [r.split(" | ")[:2] for r in rows] == [["| dev", "in_process"], ["| dev", "realtime"],
                                                  ["| heldout", "in_process"], ["| heldout", "realtime"]]
    for r in rows:
        n, of = re.search(r"\((\d+)/(\d+)\)", r).groups()
        split = r.split(" | ")[0].strip("| ")
        domain = "clinic" if split == "dev" else "hotel"
        assert int(of) == sum(1 for c in CASES if c["domain"] == domain and c["expect"] == "tool")
        assert int(of) - int(n) == sum(1 for x in left_out if x.startswith(f"{split} {r.split(' | ')[1]}:"))
    assert "book_appointment" in score.offered_first(MARCUS, "in_process")  # every value given


def test_what_the_model_wrote_counts_withheld_calls_and_values_before_any_guard() -> None:
    from bench.tool_domains_rejudge import written

    case = next(c for c in td.cases("dev") if c["expect"] == "tool" and c["domain"] == "taxi")
    none = next(c for c in td.cases("dev") if c["expect"] == "none" and c["domain"] == "taxi")
    made = {"name": case["tool"], "arguments": dict(case["arguments"])}
    wrong = {"name": case["tool"], "arguments": {**case["arguments"], next(iter(case["arguments"])): "Nowhere Lane 999"}}
    rows = [{"path": "p", "domain": case["domain"], "line": case["line"], "calls": [], "withheld": [made]},
            {"path": "q", "domain": case["domain"], "line": case["line"], "calls": [wrong], "withheld": []},
            {"path": "q", "domain": none["domain"], "line": none["line"], "calls": [made], "withheld": []},
            {"path": "p", "domain": case["domain"], "line": case["line"], "calls": [], "withheld": [wrong]},
            {"path": "p", "domain": case["domain"], "line": case["line"], "calls": [], "withheld": []}]
    st = written(rows)
    assert (st["tool lines"], st["wrote the right tool"], st["with every value right"], st["ran the right tool"]) == (4, 3, 1, 1)
    assert st["refused, wrong"] == 1 and st["refused, right"] == 0  # the made-up address, refused
    assert st["missed, not offered"] + st["missed, offered"] == 1
