"""The tool choice (`tools.choice`): a caller who asks for a tool by its verb and its object, or
by a verb no other tool has said as a request, with everything it requires given, gets that
tool's call (`called_for`); the verb in the past, denied, under an "if", or in a question about
it, does not."""

from __future__ import annotations

import pytest

from pipeline.tools.choice import called_for
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
