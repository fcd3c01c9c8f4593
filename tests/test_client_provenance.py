"""A realtime client's own functions under the provenance rule (fake stages, a real WebSocket):
a call with a value nobody gave never reaches the client (no `function_call_arguments.done`, its
item ends `incomplete`); the model reads the refusal and asks; an optional value nobody gave is
left out of the arguments the client gets; `x-source` in the client's schema is honoured."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pipeline.stages.fakes import ScriptedLLM

from .test_realtime_server import client, fake_stages, serving, user_text

RIDE = {"type": "function", "name": "book_ride", "description": "Book a taxi.", "parameters": {
    "type": "object", "properties": {
        "pickup_address": {"type": "string", "description": "Where to pick the caller up"},
        "pickup_time": {"type": "string", "description": "When, HH:MM on the 24-hour clock"},
        "destination": {"type": "string", "description": "Where to, if the caller said"},
        "account": {"type": "string", "description": "The caller's account", "x-source": "instructions"}},
    "required": ["pickup_address", "pickup_time"]}}


def ride(**arguments: Any) -> dict[str, Any]:
    return {"name": "book_ride", "arguments": {"pickup_address": "42 Elm Street", **arguments}}


def run(line: str, call: dict[str, Any], instructions: str = "You dispatch taxis.", *,
        tools: tuple[dict[str, Any], ...] = (RIDE,), llm: ScriptedLLM | None = None) -> list[dict[str, Any]]:
    stages = fake_stages()
    stages.llm = llm or ScriptedLLM(rules=[[r"not_run", "What time should the taxi come?"], [r"(?i)taxi|cab", call]])

    async def scenario() -> list[dict[str, Any]]:
        async with serving(stages) as server, client(server) as c:
            await c.send({"type": "session.update", "session": {
                "type": "realtime", "output_modalities": ["text"], "tools": list(tools), "instructions": instructions}})
            await c.wait_for("session.updated")
            await c.send(user_text(line))
            await c.wait_for("conversation.item.done")
            await c.send({"type": "response.create"})
            await c.wait_for("response.done", timeout=20)
            await asyncio.sleep(0.5)  # a refusal's reply, if any, comes on its own
            return c.events

    return asyncio.run(scenario())


def calls_handed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(e["arguments"]) for e in events if e["type"] == "response.function_call_arguments.done"]


def texts(events: list[dict[str, Any]]) -> str:
    return " ".join(e.get("text", "") for e in events if e["type"] == "response.output_text.done")


def test_a_value_nobody_gave_never_reaches_the_client_and_the_caller_is_asked() -> None:
    events = run("I need a cab at 42 Elm Street at six.", ride(pickup_time="14:00"))  # am or pm?
    assert calls_handed(events) == []
    items = [e["item"] for e in events if e["type"] == "response.output_item.done"
             and e["item"]["type"] == "function_call"]
    assert [i["status"] for i in items] == ["incomplete"]
    assert "Could you tell me the pickup time?" in texts(events)  # the session's, not the model's


def test_a_call_on_what_was_said_is_handed_over_without_an_invented_option() -> None:
    events = run("I need a cab at 42 Elm Street at six pm.",
                 ride(pickup_time="6 pm", destination="the airport"))
    assert calls_handed(events) == [{"pickup_address": "42 Elm Street", "pickup_time": "18:00"}]
    # the model's 14:00 for "six pm" reaches the client as the caller's 18:00
    restated = run("I need a cab at 42 Elm Street at six pm.", ride(pickup_time="14:00"))
    assert calls_handed(restated) == [{"pickup_address": "42 Elm Street", "pickup_time": "18:00"}]


def test_an_argument_the_client_sources_from_the_instructions() -> None:
    line = "I need a cab at 42 Elm Street at six pm, account K7Q2."
    said_only = run(line, ride(pickup_time="18:00", account="K7Q2"))
    assert calls_handed(said_only) == [{"pickup_address": "42 Elm Street", "pickup_time": "18:00"}]
    on_file = run(line, ride(pickup_time="18:00", account="K7Q2"), instructions="Caller's account: K7Q2.")
    assert calls_handed(on_file) == [{"pickup_address": "42 Elm Street", "pickup_time": "18:00", "account": "K7Q2"}]


class _Grammars(ScriptedLLM):
    """The scripted model, noting the grammar each reply was given."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.grammars: list[str | None] = []

    def stream(self, messages, *, cancel, grammar=None, **kwargs):
        self.grammars.append(grammar)
        return super().stream(messages, cancel=cancel, grammar=grammar, **kwargs)


def _typed(role: str, text: str) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "conversation.item.create",
            "item": {"type": "message", "role": role, "content": [{"type": part, "text": text}]}}


def test_a_clients_reply_to_a_correction_of_the_agents_own_read_back_must_be_a_call() -> None:
    """A text client's response.create right after the caller's words answers the caller as a
    committed turn does: "No, six pm, not five." to "A taxi ... at 5 pm, is that right?" must be
    answered by the call (its grammar leaves no words), and a question is answered in words."""

    def grammar_for(answer: str) -> str:
        stages = fake_stages()
        stages.llm = llm = _Grammars(replies=["Okay."])

        async def scenario() -> None:
            async with serving(stages) as server, client(server) as c:
                await c.send({"type": "session.update", "session": {
                    "type": "realtime", "output_modalities": ["text"], "tools": [RIDE],
                    "audio": {"input": {"turn_detection": None}}}})
                await c.wait_for("session.updated")
                for role, text in [("user", "A cab at 42 Elm Street at six pm."),
                                   ("assistant", "A taxi from 42 Elm Street at 5 pm, is that right?"),
                                   ("user", answer)]:
                    await c.send(_typed(role, text))
                    await c.wait_for("conversation.item.done")
                await c.send({"type": "response.create"})
                await c.wait_for("response.done", timeout=20)

        asyncio.run(scenario())
        return llm.grammars[-1] or ""

    assert grammar_for("No, six pm, not five.").startswith("root ::= call\n")
    # a question about a thing: words, and no booking within reach (`asks.asks_about_only`)
    assert grammar_for("What does it cost?").startswith("root ::= text\n")


CANCEL = {"type": "function", "name": "cancel_ride", "description": "Cancel a booked ride.", "parameters": {
    "type": "object", "properties": {"booking": {"type": "string", "description": "The ride's booking code"}},
    "required": ["booking"]}}


def test_an_act_on_the_record_nobody_asked_for_never_reaches_the_client() -> None:
    """fresh9: with one visit on file, Qwen cancelled it on "Can I order a filter?"; every value was
    on file. A client's function that acts, with all its values the record's, is handed over only
    where the caller's words name it (`tools/unasked.py`); the model reads the refusal instead."""
    on_file = "You dispatch taxis. The caller's booked ride: R-4412, tomorrow at 9:00 to the airport."

    def handed(line: str, *, insists: bool = False) -> list[dict[str, Any]]:
        cancel = {"name": "cancel_ride", "arguments": {"booking": "R-4412"}}
        llm = ScriptedLLM(rules=[[r"(?i)cab|ride|taxi", cancel]] if insists else [
            [r"not_run", "What can I do for you?"], [r"(?i)cab|ride|taxi", cancel]])
        events = run(line, cancel, on_file, tools=(CANCEL,), llm=llm)
        made.append(sum(e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"
                        for e in events))
        return calls_handed(events)

    made: list[int] = []
    assert handed("Could I get a cab to the station this afternoon?") == []
    # a model that writes the refused call again in the reply about its refusal is not asked again:
    # fresh11's realtime run looped nine times, until the prompt outgrew the context
    assert handed("Could I get a cab to the station this afternoon?", insists=True) == [] and made[-1] <= 2
    assert handed("Please cancel my ride tomorrow, I've got a lift.") == [{"booking": "R-4412"}]


def test_the_reply_after_an_act_nobody_asked_for_answers_the_caller_in_words() -> None:
    """fresh12: asked "When's our final balance due again?", Qwen wrote an update of the booking on
    file, refused as asked for by nobody; shown the refusal, it wrote the call again, or the call
    and its refusal as text after a ">", and the caller heard nothing. The reply about such a
    refusal answers the caller's words with the refused call out of its view and no tool offered."""
    on_file = "You dispatch taxis. The caller's booked ride: R-4412, tomorrow at 9:00 to the airport."
    llm = _Grammars(replies=[{"name": "cancel_ride", "arguments": {"booking": "R-4412"}},
                                    "Your ride to the airport is booked for tomorrow morning."])
    events = run("When is my ride tomorrow?", {}, on_file, tools=(CANCEL,), llm=llm)
    assert calls_handed(events) == []
    assert texts(events) == "Your ride to the airport is booked for tomorrow morning.", [e["type"] for e in events]
    second = llm.requests[-1]
    assert "cancel_ride" not in json.dumps(second[1:]) and "not_run" not in json.dumps(second)
    assert second[-1] == {"role": "user", "content": "When is my ride tomorrow?"}
    assert (llm.grammars[-1] or "").startswith("root ::= text\n")  # no tool offered


def test_the_reply_after_an_act_nobody_asked_for_is_never_silent() -> None:
    """fresh15: the words-only reply talked about the refused tool by its name, and was screened;
    the caller heard nothing. It asks them to say it again instead."""
    from pipeline.call.owed import NOTHING_SAID

    on_file = "You dispatch taxis. The caller's booked ride: R-4412, tomorrow at 9:00 to the airport."
    llm = _Grammars(replies=[{"name": "cancel_ride", "arguments": {"booking": "R-4412"}},
                             "I will use cancel_ride to do that."])
    events = run("When is my ride tomorrow?", {}, on_file, tools=(CANCEL,), llm=llm)
    assert calls_handed(events) == []
    assert texts(events) == NOTHING_SAID, [e.get("message") for e in events if e["type"] == "x.log"]
