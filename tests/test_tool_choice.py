"""The tool choice (`tools.choice`): a caller who asks for a tool by its verb and its object, or
by a verb no other tool has said as a request, with everything it requires given, gets that
tool's call (`called_for`); the verb in the past, denied, under an "if", or in a question about
it, does not."""

from __future__ import annotations

from datetime import datetime

import pytest

from pipeline.tools.choice import called_for
from pipeline.tools.choice import offered as offered_tools
from pipeline.tools.evidence import Evidence
from pipeline.tools.schema import ToolSpec


def _tool(name: str) -> ToolSpec:
    return ToolSpec.from_openai({"type": "function", "name": name, "description": f"{name}.",
                                 "parameters": {"type": "object", "properties": {}, "required": []}})


TOOLS = [_tool("book_appointment"), _tool("cancel_appointment"), _tool("freeze_card"), _tool("check_availability")]


@pytest.mark.parametrize(("line", "called"), [
    ("Please freeze the card ending 0387.", ["freeze_card"]),
    ("Can you cancel the appointment for Hannah Cole on Friday?", ["cancel_appointment"]),
    ("I'd like to book an appointment with Dr. Okafor tomorrow at 2 pm.", ["book_appointment"]),
    ("I booked an appointment last week.", []),  # past: told of, not asked for
    ("Don't cancel my appointment yet.", []),
    ("If I cancel the appointment, is there a fee?", []),
    ("What does it cost to book an appointment?", []),  # a question about it
    ("My card was frozen last week.", []),  # no verb as the tool says it
    ("I want to book.", []),  # the verb without its object: which tool?
    ("Cancel the appointment, that's all, goodbye.", []),  # a close: the hang-up's to answer
    # a verb no other tool has, said as a request with what it acts on
    ("We can't make it after all, so please cancel it.", ["cancel_appointment"]),
    ("Could you freeze it for now?", ["freeze_card"]),
    ("Freeze it, please.", ["freeze_card"]),
    ("I froze it myself and then I unfroze it.", []),
    ("They said they would freeze.", []),  # nothing it acts on
    ("I don't want you to cancel it.", []),
    # fresh51: a noun naming a thing on file is no verb ("The order number's S two seven seven four")
    ("The book appointment number is B four four one. Is it still on?", []),
    ("My book appointment B four four one, what time is it?", []),
    ("Could y'all cancel my appointment on Friday?", ["cancel_appointment"]),  # "y'all" asks as "you" does
])
def test_a_tool_asked_for_by_its_verb_and_object_must_be_called(line, called) -> None:
    assert [s.name for s in called_for(TOOLS, line)] == called


def test_a_tool_asked_for_by_verb_and_object_without_its_values_offers_none_and_is_asked_about() -> None:
    """"I'd like to book an appointment, please." names `book_appointment` (a client's function,
    not marked as a side effect) and gives none of what it needs: no tool is offered, so the
    model cannot book a guess or look up a neighbour, and the reply owes the question back."""
    from pipeline.tools.choice import asked_for, offered
    from pipeline.tools.evidence import Evidence

    book = ToolSpec.from_openai({"type": "function", "name": "book_appointment", "description": "Book.",
                                 "parameters": {"type": "object", "properties": {
                                     "date": {"type": "string", "format": "date"}}, "required": ["date"]}})
    callback = ToolSpec.from_openai({"type": "function", "name": "request_callback", "description": "Call back.",
                                     "parameters": {"type": "object", "properties": {
                                         "topic": {"type": "string"}}, "required": []}})
    line = "I'd like to book an appointment, please."
    assert asked_for([callback, book], line) is book
    assert offered([callback, book], Evidence(said=[line]), last_said=line) == []
    assert asked_for([callback, book], "I booked an appointment last week.") is None
    assert asked_for([callback, book], "How do I book an appointment?") is None  # asked about


def test_an_effect_a_crash_left_unknown_is_offered_to_the_caller_who_names_it() -> None:
    """After a restart, the ledger holds a refund whose outcome nobody knows. The caller asks
    about it by its order number and says no card: the refund is offered anyway (its call is
    answered by the ledger, `already_done` or run once), but not to a caller naming another
    order, and not from a row nobody named."""
    from types import SimpleNamespace

    from pipeline.tools.choice import offered
    from pipeline.tools.evidence import Evidence
    from pipeline.tools.given import with_unsettled

    refund = ToolSpec.from_openai({"type": "function", "name": "refund", "description": "Refund an order.",
                                   "parameters": {"type": "object", "properties": {
                                       "order_id": {"type": "string", "description": "The order number"},
                                       "card_last4": {"type": "string", "description": "Last four digits of the card"}},
                                       "required": ["order_id", "card_last4"]}})
    row = SimpleNamespace(arguments={"order_id": "4417", "card_last4": "9075"})

    def offers(line: str) -> list[str]:
        evidence = with_unsettled([row], Evidence(said=[line], asked=[""]))
        return [s.name for s in offered([refund], evidence, last_said=line)]

    assert offers("I'm calling about my refund, order forty four seventeen. Did it go through?") == ["refund"]
    assert offers("I'm calling about my refund, order fifty five twenty. Did it go through?") == []
    assert offers("I'm calling about my refund. Did it go through?") == []


def _desk_tool(name: str, description: str, **properties: dict) -> ToolSpec:
    return ToolSpec.from_openai({"type": "function", "name": name, "description": description,
                                 "parameters": {"type": "object", "properties": properties, "required": []}})


KAYAKS = [_desk_tool("book_kayak", "Book a kayak for a day on the river.", date={"type": "string", "format": "date"}),
          _desk_tool("cancel_kayak_booking", "Cancel a kayak booking.", booking_ref={"type": "string"}),
          _desk_tool("get_hire_details", "Look up a kayak hire: its day and status.", booking_ref={"type": "string"}),
          _desk_tool("check_river_slots", "List free kayak slots on a day.", date={"type": "string", "format": "date"})]


@pytest.mark.parametrize(("line", "looks"), [
    # "kayak" is every tool's word here: it asks of no look-up (fresh29: "How much is a mini skip
    # these days?" looked up the caller's hire)
    ("How much is a kayak these days?", []),
    # a question about the hours asks of no look-up by its day (fresh29: free lanes on Sunday)
    ("What time are you open till on a Sunday?", []),
    # how a thing stands asks of the look-up of its status, whatever words the desk shares
    ("Is my kayak ready yet?", ["get_hire_details"]),
    ("Any free slots on Sunday?", ["check_river_slots"]),
    # fresh52: a question whether there is asks of the look-ups that check or search
    ("Have you got any doubles going on Sunday?", ["check_river_slots"]),
    ("Has Jim got anything free on Sunday?", ["check_river_slots"]),
])
def test_a_question_asks_of_a_look_up_by_its_own_words(line, looks) -> None:
    from pipeline.tools.choice import offered
    from pipeline.tools.evidence import Evidence

    assert [s.name for s in offered(KAYAKS, Evidence(said=[line]), last_said=line)] == looks


@pytest.mark.parametrize(("line", "offered"), [
    # fresh38: an act meant and then not asked for; Qwen cancelled each
    ("I was going to cancel the appointment with all the rain, but sure look, we'll chance it.", False),
    ("Ah wis gonnae cancel Friday 'cause the wee one's sick, but ach, naw, leave it.", False),
    ("Mi did a go cancel di appointment, but di trip get push back, so mi wi come same way.", False),
    # fresh40: the act someone else wanted, let go
    ("My brother wanted me to cancel the appointment, but I've spoken to him and we'll keep it.", False),
    ("My wife wanted me to cancel the appointment, but could you book an appointment for Friday instead?", True),
    # a request after the "but" asks
    ("I was going to cancel online, but could you cancel the appointment for me?", True),
    ("I was going to cancel, but please book an appointment for Friday instead.", True),
])
def test_an_act_meant_and_then_let_go_offers_no_tool(line: str, offered: bool) -> None:
    evidence = Evidence(said=[line], asked=[""], now=datetime(2026, 6, 3, 10, 0))
    assert bool([s.name for s in offered_tools(TOOLS, evidence, last_said=line)]) is offered


SUPPERS = [_desk_tool("book_room", "Book a private room.", date={"type": "string", "format": "date"}),
           _desk_tool("cancel_booking", "Cancel a room booking.", booking_ref={"type": "string"}),
           _desk_tool("change_booking", "Move a room booking to another day or time.", booking_ref={"type": "string"},
                      new_date={"type": "string", "format": "date"}),
           _desk_tool("check_availability", "Free rooms on a day.", date={"type": "string", "format": "date"})]


@pytest.mark.parametrize(("said", "offered"), [
    # fresh50: a thing on file said "instead" of another day; Qwen booked the room again
    (["Eh, can shift my Friday night booking, the big room, to Saturday instead? Same time, eight o'clock."],
     ["change_booking"]),
    (["The christening got moved. Can the room be on Sunday instead, same time, eleven?"], ["change_booking"]),
    # a correction of what this call asked: the booking asked for, said again
    (["Book the big room for Friday night, eight o'clock.", "Sorry, make it Saturday instead."],
     ["book_room", "cancel_booking", "change_booking", "check_availability"]),
    # "instead of" says no other day
    (["Could you book the big room for Friday instead of me coming in to do it?"], ["book_room"]),
])
def test_a_day_said_instead_changes_the_thing_on_file(said, offered) -> None:
    evidence = Evidence(said=said, asked=[""] * len(said), now=datetime(2026, 6, 3, 10, 0))
    assert [s.name for s in offered_tools(SUPPERS, evidence, last_said=said[-1])] == offered


@pytest.mark.parametrize(("line", "offered"), [
    # fresh51: a goodbye asks for nothing; Qwen booked an assessment for today at ten
    ("Alright, that's everything I needed. Y'all have a blessed day now.", []),
    ("Thank you so much, sugar. Y'all have a blessed day now.", []),
    # a request with its values before the goodbye still asks
    ("Book me a room for Friday, that's all, bye.", ["book_room"]),
])
def test_a_goodbye_that_asks_nothing_offers_no_tool(line, offered) -> None:
    evidence = Evidence(said=[line], asked=[""], now=datetime(2026, 6, 3, 10, 0))
    assert [s.name for s in offered_tools(SUPPERS, evidence, last_said=line)] == offered


def test_a_verb_before_a_count_is_still_a_verb() -> None:
    """"Can I book three tickets?": "book" before a count asks (not a label, as "order S one eight
    zero six" is)."""
    assert [s.name for s in called_for(TOOLS, "Can I book three appointments for Saturday?")] == ["book_appointment"]


def test_that_s_all_right_closes_nothing() -> None:
    """fresh4: "... and I'll collect it from Millbrook if that's all right" asks for the hold."""
    from pipeline.tools.choice import sounds_closing

    assert not sounds_closing("I'll collect it from Millbrook if that's all right, it's nearer my work.")
    assert sounds_closing("That's all, thanks.")
