"""The tool choice (`tools.choice`): a caller who asks for a tool by its verb and its object, with
everything it requires given, gets that tool's call (`called_for`); the verb in the past, denied,
under an "if", or in a question about it, does not."""

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
])
def test_a_tool_asked_for_by_its_verb_and_object_must_be_called(line, called) -> None:
    assert [s.name for s in called_for(TOOLS, line)] == called
