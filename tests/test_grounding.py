"""The provenance guard on the shop's refund desk: a tool runs only on arguments the caller gave in
this call (or an earlier result held); an invented one is refused back to the model and never
reaches the ledger. The words that give a number its role come from the tool's own schema
(`order_id`, "Last four digits of the card", "Dollars."), not from the core."""

from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.base.clock import SimClock
from pipeline.tools import Ledger, ToolCall, ToolRegistry, tool
from pipeline.tools.evidence import Evidence, evidence_from
from pipeline.tools.provenance import given, rules, trace
from pipeline.tools.runner import ToolRunner
from pipeline.tools.spoken import ValueKind

EFFECTS: list[dict] = []


@tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}")
async def refund(holding_line: str, order_id: str, amount: float, card_last4: str, reason: str,
                 notify: bool = True) -> dict:
    """Refund an order.

    Args:
        holding_line: What to say while it runs.
        order_id: The order number.
        amount: Dollars.
        card_last4: Last four digits of the card.
        reason: Why, in the caller's words.
        notify: Email a receipt.
    """
    EFFECTS.append({"order_id": order_id, "amount": amount})
    return {"refunded": amount}


@tool(spoken=("holding_line",))
async def look_up_order(holding_line: str, order_id: str) -> dict:
    """Look up an order.

    Args:
        holding_line: What to say while looking.
        order_id: The order number.
    """
    return {"order_id": order_id}


@tool(side_effect=True, business_key=lambda a: f"table:{a['name']}:{a['date']}")
async def book_table(name: str, date: str, time: str, party: int) -> dict:
    """Book a table.

    Args:
        name: The caller's name.
        date: YYYY-MM-DD.
        time: HH:MM.
        party: How many people.
    """
    return {"booked": True}


# What Whisper writes, and the argument it must ground (True) or must not (False).
FOLDING = [
    ("I'd like a refund of sixty four fifty.", 64.5, True),
    ("I'd like a refund of sixty-four fifty.", "64.50", True),
    ("That was $64.50.", 64.5, True),
    ("Sixty four dollars and fifty cents, please.", 64.5, True),
    ("Twenty dollars back.", 20, True),
    ("Twenty dollars back.", "20.00", True),
    ("One hundred and twenty dollars.", 120, True),
    ("It was a hundred dollars.", 100, True),
    ("I'd like a refund of sixty four fifty.", 65.4, False),
    ("I'd like a refund of sixty four fifty.", 100.0, False),
    ("Order A one two three four.", "A1234", True),
    ("Order A-1234.", "A1234", True),
    ("Order a1234.", "A1234", True),
    ("Order A1234.", "A-1234", True),
    ("Order A one two three four.", "A1243", False),
    ("Order A one two three four.", "B1234", False),
    ("Order forty four seventeen.", "4417", True),
    ("Order four four one seven.", "4417", True),
    ("Order 4417.", "4417", True),
    ("Order 4417.", "441", False),
    ("Order 4417.", "12345", False),
    ("Card ending nine oh seven five.", "9075", True),
    ("Card ending ninety seventy-five.", "9075", True),
    ("The card ends in 1234.", "1234", True),
    ("The card ends in 1234.", "5678", False),
    ("Order fifty five twenty one.", "5521", True),
    ("This is Jane Smith.", "Jane Smith", True),
    ("This is Jane Smith.", "John Smith", False),
    ("For December fifth, please.", "2026-12-05", True),
    ("On the 5th of December.", "2026-12-05", True),
    ("For December fifth, please.", "2026-12-06", False),
    ("At seven thirty.", "19:30", True),
    ("At 7:30 pm.", "19:30", True),
    ("At seven o'clock.", "19:00", True),
    ("At seven thirty.", "20:30", False),
    ("A table for four.", 4, True),
    ("A table for four.", 5, False),
]


def _argument_for(value) -> tuple:
    """The argument a FOLDING value is offered as."""
    text = str(value)
    if isinstance(value, int) and value < 10:
        return book_table, "party"
    if isinstance(value, int | float) or "." in text or text in ("20", "120"):
        return refund, "amount"
    if "-" in text and text[:4].isdigit():
        return book_table, "date"
    if ":" in text:
        return book_table, "time"
    if text.isdigit() and len(text) == 4 and text not in ("4417", "5521"):
        return refund, "card_last4"
    if text[0].isalpha() and not any(ch.isdigit() for ch in text):
        return book_table, "name"
    return refund, "order_id"


@pytest.mark.parametrize(("said", "value", "expected"), FOLDING)
def test_whispers_spellings_of_numbers_are_folded(said: str, value, expected: bool) -> None:
    spec, name = _argument_for(value)
    assert given(value, rules(spec)[name], Evidence(said=[said])) is expected


# Said AS that thing: (the caller's turns, what the agent asked before each, the value, the
# argument it is offered as, grounded?). "1234" said as card digits is no order id.
ROLES = [
    # card digits offered as an order id
    (["I'd like a refund to my card ending 1234."], [], "1234", "order_id", False),
    (["I'd like a refund to my card ending 1234."], [], "1234", "card_last4", True),
    (["The last four are 9075, order 4417."], [], "9075", "order_id", False),
    (["The last four are 9075, order 4417."], [], "9075", "card_last4", True),
    (["Refund order 4417 to the card ending one two three four."], [], "1234", "order_id", False),
    (["4417 is my order number and the card ends in 1234."], [], "1234", "order_id", False),
    # an order id said plainly
    (["Refund order 4417, please."], [], "4417", "order_id", True),
    (["My order number is four four one seven."], [], "4417", "order_id", True),
    (["Order forty four seventeen."], [], "4417", "order_id", True),
    (["Order A one two three four."], [], "A1234", "order_id", True),
    (["It's for #4417, $64.50."], [], "4417", "order_id", True),
    (["4417 is my order number and the card ends in 1234."], [], "4417", "order_id", True),
    (["My order number is four four one seven."], [], "4417", "card_last4", False),
    # an amount said as money, or never said
    (["I want a refund, it was forty dollars."], [], 40, "amount", True),
    (["I want a refund, it was forty bucks."], [], 40.0, "amount", True),
    (["It's for #4417, $64.50."], [], 64.5, "amount", True),
    (["Sixty four dollars and fifty cents, order 4417."], [], 64.5, "amount", True),
    (["One hundred and twenty dollars for order 55."], [], 120, "amount", True),
    (["Order 4417 for 23.99, card ending 1234."], [], 23.99, "amount", True),
    (["Refund order 4417 to the card ending 1234."], [], 40, "amount", False),
    (["Refund order 4417 to the card ending 1234."], [], 4417, "amount", False),
    (["I want a refund, it was forty dollars."], [], "40", "order_id", False),
    (["Forty dollars for order 4417."], [], "40", "order_id", False),  # that "order" is 4417's
    (["Forty dollars for order 4417."], [], 40, "amount", True),
    (["The order was forty dollars, card 1234."], [], "40", "order_id", False),
    # "sixty four fifty" is 64.50 or order 6450 alike ("forty four seventeen" is 4417): without
    # a money word it is no amount once another number is in the call
    (["Order 4417, sixty four fifty."], [], 64.5, "amount", False),
    (["A refund of sixty four fifty, please."], [], 64.5, "amount", True),  # the only number
    # the answer to the agent's question has the role the question asked for
    (["I want a refund of twenty dollars.", "It's 5521."], ["", "What's the order number?"], "5521",
     "order_id", True),
    (["I want a refund of twenty dollars.", "It's 5521."], ["", "What's the order number?"], "5521",
     "card_last4", False),
    (["I want a refund of twenty dollars.", "It's 5521."], ["", "Okay. Let me see."], "5521",
     "order_id", False),
    (["Order 4417.", "Nine oh seven five."], ["", "Which card should I use? Its last four digits?"],
     "9075", "card_last4", True),
    # an unmarked number is any role only while it is the only number said
    (["Refund 4417, please."], [], "4417", "order_id", True),
    (["Refund 4417, please."], [], 4417, "amount", True),
    (["Refund 4417 please, card 1234."], [], "4417", "order_id", False),
    (["Refund 4417 please.", "Oh and it was 20."], [], "4417", "order_id", False),
]


@pytest.mark.parametrize(("said", "asked", "value", "name", "expected"), ROLES)
def test_a_number_grounds_only_what_it_was_said_as(said, asked, value, name, expected) -> None:
    evidence = evidence_from(said, [], asked)
    assert given(value, rules(refund)[name], evidence) is expected


def test_an_identifying_argument_left_blank_is_not_given() -> None:
    """Qwen, refused, wrote the refund again with "order_id": "" - blank is not what the caller said."""
    said = Evidence(said=["Twenty dollars back to the card ending 1234, please."])
    args = {"holding_line": "One moment.", "order_id": " ", "amount": 20.0, "card_last4": "1234",
            "reason": ""}
    assert trace(refund, args, said).missing == ["order_id"]  # `reason` is prose: the agent's to compose


def test_what_an_argument_is_comes_from_its_schema() -> None:
    assert {n: r.kind for n, r in rules(refund).items()} == {
        "holding_line": None, "order_id": ValueKind.CODE, "amount": ValueKind.NUMBER,
        "card_last4": ValueKind.CODE, "reason": ValueKind.TEXT, "notify": None}
    assert rules(refund)["amount"].money and not rules(refund)["order_id"].money


def test_a_result_grounds_a_value_as_the_field_that_holds_it() -> None:
    evidence = evidence_from(["What's in my last order?"],
                             [json.dumps({"order_id": "5120", "total": 23.99, "card_last4": "9075",
                                          "note": "ref 7781"})])
    order, amount, card = (rules(refund)[n] for n in ("order_id", "amount", "card_last4"))
    assert given("5120", order, evidence) and given(23.99, amount, evidence)
    assert given("9075", card, evidence) and not given("9075", order, evidence)
    assert not given("5120", card, evidence)
    assert given("7781", order, evidence)  # a field that names no argument: any


def test_which_arguments_are_traced() -> None:
    # not the spoken line, not a boolean, not prose (the agent may compose a reason)
    assert [n for n, r in rules(refund).items() if r.traced] == ["order_id", "amount", "card_last4"]
    assert [n for n, r in rules(look_up_order).items() if r.traced] == ["order_id"]
    assert [n for n, r in rules(book_table).items() if r.traced] == ["name", "date", "time", "party"]
    args = {"holding_line": "One moment.", "order_id": "4417", "amount": 64.5, "card_last4": "1234",
            "reason": "it arrived cracked", "notify": True}
    said = Evidence(said=["Refund order 4417, sixty four dollars fifty, card ending one two three four."])
    assert trace(refund, args, said).missing == []
    assert trace(refund, {**args, "reason": "damaged in box 7"}, said).missing == []


def test_a_tool_may_name_what_must_be_grounded() -> None:
    @tool(side_effect=True, business_key=lambda a: a["order_id"], grounded=("order_id",))
    async def cancel(order_id: str, amount: float) -> dict:
        """Cancel an order.

        Args:
            order_id: The order.
            amount: Dollars.
        """
        return {}

    assert [n for n, r in rules(cancel).items() if r.traced] == ["order_id"]
    assert trace(cancel, {"order_id": "77", "amount": 3.0}, Evidence(said=["order 77"])).missing == []
    assert trace(cancel, {"order_id": "78", "amount": 3.0}, Evidence(said=["my last order"])).missing == ["order_id"]
    with pytest.raises(ValueError, match="grounded"):
        tool(side_effect=True, business_key=lambda a: "k", grounded=("nope",))(cancel.fn)


def test_earlier_results_ground_but_refusals_and_errors_do_not() -> None:
    outputs = [json.dumps({"order_id": "5120", "total": 23.99}),
               json.dumps({"status": "not_run", "message": "the caller has not said the order_id 9999"}),
               json.dumps({"error": "ValueError: order 8888 is not valid"})]
    evidence = evidence_from(["What's in my last order?"], outputs)
    order, amount = rules(refund)["order_id"], rules(refund)["amount"]
    assert given("5120", order, evidence) and given(23.99, amount, evidence)
    assert not given("9999", order, evidence) and not given("8888", order, evidence)


CALLER = "And so my fellow Americans, ask not what your country can do for you."


def _run(tmp_path, said: list[str], arguments: dict, *, outputs: list[str] = ()):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    runner = ToolRunner(ToolRegistry(specs=[refund, look_up_order]), ledger=ledger, clock=SimClock(),
                        evidence=lambda: evidence_from(said, outputs))
    result = asyncio.run(runner.run(ToolCall(name=refund.name, arguments=arguments), call_id="c1",
                                    response_id="r1", turn_id="t1"))
    return result, ledger


INVENTED = {"holding_line": "Let me process that refund.", "order_id": "12345", "amount": 100.0,
            "card_last4": "1234", "reason": "requested"}


def test_an_invented_order_id_is_refused_and_nothing_reaches_the_ledger(tmp_path) -> None:
    EFFECTS.clear()
    result, ledger = _run(tmp_path, [CALLER], INVENTED)
    assert result.output["status"] == "not_run"
    assert "order_id and amount and card_last4" in result.output["message"]
    assert "Ask the caller" in result.output["message"]
    assert result.business_key is None  # the desk does not count it as an effect of this call
    assert EFFECTS == []
    assert ledger.get("refund:12345") is None and ledger.untold() == []


def test_the_same_call_runs_once_the_caller_has_said_it(tmp_path) -> None:
    EFFECTS.clear()
    said = [CALLER, "Order one two three four five, a hundred dollars, card ending one two three four."]
    result, ledger = _run(tmp_path, said, INVENTED)
    assert result.output["status"] == "committed", result.output
    assert EFFECTS == [{"order_id": "12345", "amount": 100.0}]
    assert ledger.get("refund:12345").state == "committed"


def test_one_invented_argument_is_enough_to_refuse(tmp_path) -> None:
    EFFECTS.clear()
    said = ["Refund order 12345 to the card ending 1234, please."]  # no amount given
    result, ledger = _run(tmp_path, said, INVENTED)
    assert result.output["status"] == "not_run" and result.extra["ungrounded"] == ["amount"]
    assert EFFECTS == [] and ledger.get("refund:12345") is None


def test_card_digits_offered_as_the_order_id_are_refused(tmp_path) -> None:
    """The slip this guards against: "refund to my card ending 1234" read as a refund of order
    1234. Every number in the call was said, but not as the order."""
    EFFECTS.clear()
    said = ["I'd like a refund of forty dollars to my card ending 1234."]
    swapped = {**INVENTED, "order_id": "1234", "amount": 40.0}
    result, ledger = _run(tmp_path, said, swapped)
    assert result.output["status"] == "not_run" and result.extra["ungrounded"] == ["order_id"]
    assert "Ask the caller for the order_id" in result.output["message"]
    assert EFFECTS == [] and ledger.get("refund:1234") is None and ledger.untold() == []
    result, _ = _run(tmp_path, [*said, "The order number is fifty five twenty one."],
                     {**swapped, "order_id": "5521"})
    assert result.output["status"] == "committed", result.output
    assert EFFECTS == [{"order_id": "5521", "amount": 40.0}]


def test_what_the_ledger_holds_for_the_key_counts_as_given(tmp_path) -> None:
    """A repeat of an effect recorded earlier (before a restart, say) is not an invention."""
    EFFECTS.clear()
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        effect = {k: v for k, v in INVENTED.items() if k != "holding_line"}
        ledger.intend(business_key="refund:12345", tool="refund", arguments=effect, target="", call_id="old")
    result, _ = _run(tmp_path, ["Did my refund for order one two three four five go through?"], INVENTED)
    assert result.output["status"] != "not_run", result.output


def test_a_runner_without_evidence_runs_as_before(tmp_path) -> None:
    EFFECTS.clear()
    runner = ToolRunner(ToolRegistry(specs=[refund]), ledger=Ledger(tmp_path / "l.sqlite3"), clock=SimClock())
    result = asyncio.run(runner.run(ToolCall(name="refund", arguments=INVENTED), call_id="c1",
                                    response_id="r1", turn_id=None))
    assert result.output["status"] == "committed"


def test_a_model_that_keeps_guessing_is_not_asked_again_and_again(tmp_path) -> None:
    """A whole call (fake stages): the model answers every turn and every result with the same
    invented refund. The refusal is answered by the session's question back, so the model never
    guesses again: two responses, one refusal, nothing in the ledger, and the call goes on."""
    from pipeline.base.config import load
    from pipeline.call.session import Stages
    from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
    from pipeline.testing.calls import call
    from pipeline.transports.scripted import Clip
    from pipeline.turns import HeuristicCompleteness

    from .test_listeners import LoudVAD, caller_tone

    EFFECTS.clear()
    guess = {"name": "refund", "arguments": INVENTED}
    llm = ScriptedLLM(rules=[[".", guess]])
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["I want a refund, please."]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3)],  # the tool choice off: the guesses get through
               config=load(overrides=["call.tool_choice=false"]),
               setup=lambda s: s.use_tools(ToolRegistry(specs=[refund]), ledger=ledger))
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert [o["status"] for o in outputs] == ["not_run"], rec.timeline()
    # the reply about the refusal is the session's question: the model is not asked to guess again
    assert [r.purpose for r in rec.session.responder.responses] == ["turn", "tool_result"]
    assert rec.agent_lines[-1].startswith("Could you tell me the order number"), rec.timeline()
    assert EFFECTS == [] and ledger.untold() == [] and ledger.get("refund:12345") is None


@pytest.mark.parametrize(("question", "runs"), [("What's the order number?", True),
                                                 ("Okay, one moment.", False)])
def test_the_desk_reads_an_answer_as_what_the_agent_asked_for(tmp_path, question, runs) -> None:
    """A whole call (fake stages): "It's 5521" grounds the order id when it answers "What's the
    order number?", and grounds nothing when the agent asked nothing (twenty dollars and 5521
    are two numbers, and 5521 was not said as anything)."""
    from pipeline.call.session import Stages
    from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
    from pipeline.testing.calls import call
    from pipeline.transports.scripted import Clip, after_stage
    from pipeline.turns import HeuristicCompleteness

    from .test_listeners import LoudVAD, caller_tone

    EFFECTS.clear()
    args = {"holding_line": "One moment.", "order_id": "5521", "amount": 20.0,
            "card_last4": "1234", "reason": "requested"}
    llm = ScriptedLLM(rules=[[r"result of refund", "Thank you."], [r"5521", {"name": "refund", "arguments": args}],
                             [".", question]])
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[
                        # not "a refund": the tool asked for by name is asked about (tools.ask)
                        "I want my money back, twenty dollars to the card ending 1234.", "It's 5521."]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    # each tone as long as its words take to say (the call refuses words the speech cannot hold)
    rec = call(stages, [Clip(caller_tone(3.2), at_s=0.3),
                        Clip(caller_tone(1.2), None, after=after_stage("heard_in_full", 1), delay_s=0.3)],
               setup=lambda s: s.use_tools(ToolRegistry(specs=[refund]), ledger=ledger))
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert [o["status"] for o in outputs] == (["committed"] if runs else ["not_run"]), rec.timeline()
    assert EFFECTS == ([{"order_id": "5521", "amount": 20.0}] if runs else [])
    assert (ledger.get("refund:5521") is not None) is runs
