"""A tool call written inside a spoken reply is never spoken; it runs as the reply's call, or is
dropped where the turn already made it; the reply about a result does not say the holding line
again; and the tool choice keeps out of the grammar what the model could not use (scripted
model, tone caller, simulated clock)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.call.callctl import end_call_tool
from pipeline.call.session import Stages
from pipeline.chunker import SentenceChunker
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.calls import call
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.tools.choice import must_close, offered, sounds_closing
from pipeline.tools.dialect import QWEN
from pipeline.tools.evidence import Evidence
from pipeline.tools.stream import CallMarkup
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

ASK = "Please refund order 4417 to the card ending 9075."


def guarded(pieces: list[str]) -> tuple[str, str | None]:
    markup = CallMarkup()
    said = "".join(markup.push(p) for p in pieces) + markup.finish()
    return said, markup.call


def test_markup_is_cut_from_the_words_wherever_the_pieces_split_it() -> None:
    text = 'Let me check. <tool_call>\n{"name": "look_up_order", "arguments": {"order_id": "4417"}}\n</tool_call>'
    for cut in range(1, len(text)):
        said, written = guarded([text[:cut], text[cut:]])
        assert said == "Let me check. ", cut
        assert written == '{"name": "look_up_order", "arguments": {"order_id": "4417"}}', cut
    said, written = guarded(["Sure. ", "{", ' "na', 'me": "x", "arguments": {}}'])
    assert said == "Sure. " and written == '{ "name": "x", "arguments": {}}'


def test_an_object_of_arguments_in_the_words_is_never_said_and_the_words_after_it_are() -> None:
    """fresh32: Qwen wrote 'arguments: {"customer_name": "Paddy Hession", ...}' as its reply, and
    '... a phone number. { "customer_name": ... } Could you tell me the number?' over the protocol;
    both went to the voice. Wherever the pieces split it, the object (nested braces, a brace inside
    a string) is cut, "arguments:" with it; an object left open is never said."""
    text = 'Sure. arguments: {"customer_name": "Paddy Hession", "note": "a } b", "x": {"a": 1}} Anything else?'
    for cut in range(1, len(text)):
        assert guarded([text[:cut], text[cut:]]) == ("Sure.  Anything else?", None), cut
    assert guarded(list(text)) == ("Sure.  Anything else?", None)
    assert guarded(['I need your name. { "customer_name": "Paddy']) == ("I need your name. ", None)
    assert guarded(list("Any arguments? A dog, a cat.")) == ("Any arguments? A dog, a cat.", None)


def test_braces_and_angles_that_are_no_call_are_said() -> None:
    for text in ["Hi {there}.", "It is a < b.", "Fine. {", "Tags like <b> stay."]:
        assert guarded([text]) == (text, None), text


def refund_desk(effects: list[dict], *, clock: Any = None, latency_s: float = 0.0) -> ToolRegistry:
    """The refund tool; with a clock, each refund takes `latency_s` on it."""

    @tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"))
    async def refund(holding_line: str, order_id: str, card_last4: str) -> dict:
        """Refund an order to the caller's card.

        Args:
            holding_line: What to say while the refund runs.
            order_id: The order number.
            card_last4: The last four digits of the card.
        """
        if clock is not None:
            await clock.sleep(latency_s)
        effects.append({"order_id": order_id, "card_last4": card_last4})
        return {"refunded": True, "order_id": order_id, "card_last4": card_last4}

    return ToolRegistry(specs=[refund])


REFUND = {"name": "refund", "arguments": {"holding_line": "One moment while I process that refund.",
                                          "order_id": "4417", "card_last4": "9075"}}


def run(llm: ScriptedLLM, tmp_path):
    effects: list[dict] = []
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[ASK]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(2.4), at_s=0.3)],
               setup=lambda s: s.use_tools(refund_desk(effects), ledger=ledger))
    return rec, effects, ledger


def test_a_call_written_after_words_runs_and_its_markup_is_not_spoken(tmp_path) -> None:
    written = "Let me do that now. <tool_call>\n" + json.dumps(REFUND).replace("{", "{{").replace("}", "}}") + \
        "\n</tool_call>"
    llm = ScriptedLLM(rules=[[r"result of refund", "Done: order {order_id} went back to the card ending "
                                                   "{card_last4}."], [r"refund", written]])
    rec, effects, ledger = run(llm, tmp_path)
    story = rec.timeline()
    assert effects == [{"order_id": "4417", "card_last4": "9075"}], story
    assert [c.name for c in rec.of("response.function_call_arguments.done")] == ["refund"], story
    assert not any("tool_call" in line or "{" in line for line in rec.agent_lines), story
    assert rec.agent_lines[0] == "Let me do that now.", story
    first = rec.done[0].response
    assert [o["type"] for o in first["output"]] == ["message", "function_call"], story
    assert any("card ending 9075" in line for line in rec.agent_lines), story
    assert ledger.get("refund:4417").told, story


def test_the_call_written_again_after_its_result_is_not_run_and_not_spoken(tmp_path) -> None:
    again = "One moment while I process that refund. " + json.dumps(REFUND).replace("{", "{{").replace("}", "}}")
    llm = ScriptedLLM(rules=[[r"result of refund", again], [r"refund", REFUND]])
    rec, effects, ledger = run(llm, tmp_path)
    story = rec.timeline()
    assert len(effects) == 1, story
    assert [c.name for c in rec.of("response.function_call_arguments.done")] == ["refund"], story
    outputs = [i for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert len(outputs) == 1, story
    # the reply about the result neither said the holding line again nor the call
    assert rec.agent_lines.count("One moment while I process that refund.") == 1, story
    assert not any("{" in line for line in rec.agent_lines), story


def test_the_reply_about_a_result_skips_the_holding_line_and_says_the_rest(tmp_path) -> None:
    llm = ScriptedLLM(rules=[[r"result of refund", "One moment while I process that refund. Your order "
                                                   "{order_id} went back to the card ending {card_last4}."],
                             [r"refund", REFUND]])
    rec, _effects, ledger = run(llm, tmp_path)
    story = rec.timeline()
    assert rec.agent_lines == ["One moment while I process that refund.",
                               "Your order 4417 went back to the card ending 9075."], story
    assert ledger.get("refund:4417").told, story


def test_a_sentence_said_before_in_the_turn_is_dropped_alone() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    chunker.said_before(["One moment. Let me process that refund."])
    out = chunker.push("Let me process that refund. It went through. Let me process that refund. More.")
    assert out + chunker.flush() == ["It went through.", "More."]
    chunker.said_before(["One moment."])
    out = chunker.push("One moment. It went through. It went through. More.")
    assert out + chunker.flush() == ["It went through."]  # a repeat within the reply still ends it


@pytest.mark.parametrize("pieces", [["Okay, switching it to the other card. Done."],
                                    ["Okay", ",", " switching it", " to the other card.", " Done."]])
def test_a_sentence_said_before_is_dropped_even_where_a_quick_fragment_would_begin(pieces) -> None:
    """With quick first fragments on (the default), "Okay," would go out alone before the rest
    of a holding line said before, and the repeat was no longer a whole sentence to drop."""
    chunker = SentenceChunker()
    chunker.said_before(["Okay, switching it to the other card."])
    out = [c for p in pieces for c in chunker.push(p)]
    assert out + chunker.flush() == ["Done."]
    fresh = SentenceChunker()
    fresh.said_before(["Okay, switching it to the other card."])
    assert fresh.push("Okay, so the refund went through. ")[0] == "Okay,"  # another sentence: quick


def test_the_tool_choice_offers_what_the_callers_words_can_use() -> None:
    effects: list[dict] = []
    specs = [*refund_desk(effects).specs(), end_call_tool()]

    def names(line: str, called: tuple[str, ...] = ()) -> list[str]:
        return [s.name for s in offered(specs, Evidence(said=[line]), last_said=line, called=called)]

    assert names(ASK) == ["refund"]
    assert names("I want a refund.") == []  # no order, no card: ask for them
    assert names("Refund order 4417, please.") == []  # no card yet
    assert names("I paid sixty four fifty for it.") == []
    assert names("That's all, thanks, goodbye.") == ["end_call"]
    assert names(ASK, called=("refund",)) == []
    # a reply about a side effect's outcome says it: no tool, even one the words could ground
    assert offered(specs, Evidence(said=[ASK]), last_said=ASK, telling=True) == []
    # an earlier answer to "what's the card?" counts: the evidence is the whole call's
    two = Evidence(said=["Refund order 4417, please.", "9075"], asked=["", "What are the card's last four digits?"])
    assert [s.name for s in offered(specs, two, last_said="9075")] == ["refund"]
    # a look-up too: no order said, no order looked up; a person's name is a capitalised word
    @tool()
    async def look_up_order(order_id: str) -> dict:
        """Look up an order."""
        return {}

    @tool()
    async def look_up_booking(last_name: str) -> dict:
        """Look up a booking by the guest's last name."""
        return {}

    looks = [look_up_order, look_up_booking]
    for line, want in [("Where is my order 5120?", ["look_up_order"]), ("Where is my order?", []),
                       ("The booking is under Okafor.", ["look_up_booking"]),
                       ("Can you find my reservation? Last name Garcia.", ["look_up_booking"]),
                       ("I'd like to check my booking.", []), ("Good morning!", []),
                       ("My room number is 204 and the view is lovely.", [])]:
        assert [s.name for s in offered(looks, Evidence(said=[line]), last_said=line)] == want, line
    for line in ["Okay, bye bye.", "That's everything, have a nice day.", "No, nothing else, bye."]:
        assert sounds_closing(line), line
    for line in ["What time do you close today?", "Thanks.", "Is breakfast included?"]:
        assert not sounds_closing(line), line
    # closing and asking nothing more: the hang-up is the one choice (the model writes the goodbye)
    assert [s.name for s in must_close(specs, "That's all, thanks, goodbye.")] == ["end_call"]
    assert must_close(specs, "That's all, but when will it arrive?") == []
    assert must_close(specs, ASK) == []


def test_qwen_reads_a_result_in_its_own_tool_role() -> None:
    messages = [{"role": "user", "content": ASK},
                {"role": "assistant", "content": "One moment. " + json.dumps(REFUND)},
                {"role": "user", "content": '[result of refund: {"refunded": true}]'},
                {"role": "user", "content": '[result of refund (completed during an interruption): {"a": 1}]'}]
    out = QWEN.history(messages)
    assert out[1]["content"].startswith("One moment.\n<tool_call>\n")
    assert out[2] == {"role": "tool", "content": '{"refunded": true}'}
    assert out[3] == {"role": "tool", "content": '{"a": 1} (completed during an interruption)'}
    assert out[0] == messages[0]


def test_a_fenced_call_of_a_tool_the_reply_was_not_offered_is_neither_said_nor_run(tmp_path) -> None:
    """Kept from the refund (no order, no card said), a model writes it in a markdown block:
    the fence and the call are not spoken and the refund does not run."""
    fenced = "```json\n" + json.dumps(REFUND).replace("{", "{{").replace("}", "}}") + "\n```"
    llm = ScriptedLLM(rules=[[r"refund", fenced]])
    effects: list[dict] = []
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["I want a refund."]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3)],
               setup=lambda s: s.use_tools(refund_desk(effects), ledger=ledger))
    story = rec.timeline()
    assert rec.of("response.function_call_arguments.done") == [] and effects == [], story
    assert not any("`" in line or "{" in line or "json" in line for line in rec.agent_lines), story
    assert any("not offered to it" in e.message for e in rec.of("x.log")), story
    # and the caller is asked for what the refund needs, not left in silence (`tools.ask`)
    assert rec.agent_lines == ["Could you tell me the order number and the last four digits of the card?"], story
    assert guarded(["Sure. ```", "json\n", '{"name": "a", "arguments": {}}\n```']) == \
        ("Sure. ", '{"name": "a", "arguments": {}}')
