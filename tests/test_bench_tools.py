"""bench/tools.py: the labelled tool-choice set is well formed, its verdicts count right, and the
grounding guard passes the arguments its side-effect lines give."""

from __future__ import annotations

import json
from collections import Counter

from bench import tools as bt
from pipeline.tools.evidence import Evidence
from pipeline.tools.provenance import trace


def test_the_set_has_every_kind_of_line_and_names_real_tools() -> None:
    assert len(bt.CASES) >= 60
    kinds = Counter((c["desk"], c["expect"]) for c in bt.CASES)
    for desk in ("refund", "front"):
        assert all(kinds[(desk, e)] >= 3 for e in ("tool", "ask", "none")), kinds
    lines = " ".join(c["line"].lower() for c in bt.CASES)
    assert "reefing" in lines and "master cart" in lines  # Whisper's mishearings
    desks = bt.desk_tools()
    for case in bt.CASES:
        if case["expect"] == "tool":
            spec = desks[case["desk"]][case["tool"]]
            params = set(spec.parameters["properties"])
            assert set(case["arguments"] or {}) <= params, case
            assert set(spec.required) - set(spec.spoken) <= set(case["arguments"] or {}) | {"reason"}, case
        else:
            assert case["tool"] is None and case["arguments"] is None, case


def _call(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": {"holding_line": "One moment.", **arguments}})


def test_verdicts_and_their_tally() -> None:
    desks = bt.desk_tools()
    by_line = {c["line"]: c for c in bt.CASES}
    right = by_line["I'd like a refund for order 4417 to my card ending 1234."]
    ask = by_line["I want a refund."]
    none = by_line["What time do you close today?"]
    rows = [
        {**bt.judge(right, _call("refund", order_id="4417", card_last4="1234"), desks["refund"]),
         "expect": "tool", "first_ms": 100, "ms": 900},
        {**bt.judge(right, _call("refund", order_id="4471", card_last4="1234"), desks["refund"]),
         "expect": "tool", "first_ms": 120, "ms": 950},
        {**bt.judge(ask, _call("refund", order_id="12345", card_last4="1234"), desks["refund"]),
         "expect": "ask", "first_ms": 90, "ms": 800},
        {**bt.judge(none, "We close at nine tonight.", desks["refund"]),
         "expect": "none", "first_ms": 80, "ms": 400},
        {**bt.judge(none, '{"name": "end_call", "arguments": {', desks["refund"]),
         "expect": "none", "first_ms": 70, "ms": 300},
    ]
    assert [r["picked"] for r in rows] == ["refund", "refund", "refund", None, "unparsed"]
    assert [r["args_ok"] for r in rows] == [True, False, None, None, None]
    # 4471 miscopies the order the caller said: the call runs on 4417; 12345, on a line that said
    # no order, is invented: the guard stops it
    assert [r["refused"] for r in rows] == [False, False, True, None, None]
    t = bt.tally(rows)
    assert (t["calls_made"], t["calls_expected"]) == (2, 2)
    assert (t["args_right"], t["args_checked"]) == (1, 2)
    assert (t["false_calls"], t["plain_expected"]) == (1, 3)  # the invented refund; unparsed is no call
    assert (t["asks_right"], t["asks_expected"]) == (0, 1)
    assert (t["guard_refused"], t["side_effect_calls"]) == (1, 3)
    assert t["guard_wrongly_refused"] == 0 and t["invented_let_through"] == 0
    assert t["first_ms_median"] == 90
    assert "recall 2/2 (100%)" in bt.summary_line(t)


def _labelled_effects() -> list[tuple[str, object, dict]]:
    desks = bt.desk_tools()
    return [(case["line"], desks[case["desk"]][case["tool"]], case["arguments"]) for case in bt.CASES
            if case["expect"] == "tool" and desks[case["desk"]][case["tool"]].side_effect
            and case.get("arguments")]


def test_every_labelled_line_grounds_its_right_arguments_and_not_them_swapped() -> None:
    """The tool-choice set's side-effect lines (bench/tool_set.json): the arguments the line
    gives pass the guard; the same numbers in each other's places (the card's digits as the
    order, the order as the card) do not."""
    cases = _labelled_effects()
    assert len(cases) >= 10
    for line, spec, args in cases:
        evidence = Evidence(said=[line])
        assert trace(spec, args, evidence).missing == [], line
        swapped = {**args, "order_id": args["card_last4"], "card_last4": args["order_id"]}
        assert sorted(trace(spec, swapped, evidence).missing) == ["card_last4", "order_id"], line
