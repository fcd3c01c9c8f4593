"""The question back (`pipeline.tools.ask`): where the model reached for a tool the caller has
not given enough for, the caller is asked for exactly what is missing, in the tool's own words,
and only where the reply asked nothing itself (scripted model, tone caller, simulated clock)."""

from __future__ import annotations

import json

from pipeline.base import config as cfg
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.calls import call
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.tools.ask import names_a_tool, question, talks_about_calling, what
from pipeline.tools.evidence import Evidence
from pipeline.tools.given import lacking
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone
from .test_written_calls import refund_desk


def desk() -> ToolRegistry:
    @tool(spoken=("holding_line",))
    async def look_up_booking(holding_line: str, last_name: str, arrival: str) -> dict:
        """Find a booking.

        Args:
            holding_line: What to say while looking.
            last_name: The guest's last name, e.g. "Patel".
            arrival:
        """
        return {}

    return ToolRegistry(specs=[look_up_booking, *refund_desk([]).specs()])


def test_each_argument_is_asked_for_in_the_tools_own_words() -> None:
    tools = desk()
    assert what(tools["look_up_booking"], "last_name") == "the guest's last name"
    assert what(tools["look_up_booking"], "arrival") == "the arrival"  # no description: its name
    assert what(tools["refund"], "order_id") == "the order number"
    assert question(tools["refund"], ["order_id"]) == "Could you tell me the order number?"
    assert question(tools["refund"], []) is None


def test_what_is_missing_is_what_the_caller_has_not_said() -> None:
    refund = desk()["refund"]
    assert lacking(refund, Evidence(said=["I want a refund."])) == ["order_id", "card_last4"]
    assert lacking(refund, Evidence(said=["A refund to my card ending 1234, please."])) == ["order_id"]
    assert lacking(refund, Evidence(said=["Refund order 4417 to the card ending 1234."])) == []
    # "1234" said as the card's digits gives no order number
    assert lacking(refund, Evidence(said=["Refund my card ending 1234."])) == ["order_id"]


def refused_call(tmp_path, said: str, reply_about_refusal: str):
    """The guard refuses an invented order id (the tool choice off, so the call gets that far).
    The caller's tone lasts as long as the words take (14 syllables: more than 1.6 s at the
    speech-rate bound `unspoken` holds a transcript to)."""
    invented = {"name": "refund", "arguments": {"holding_line": "One moment.", "order_id": "12345",
                                                "card_last4": "1234"}}
    llm = ScriptedLLM(rules=[[r"not run", reply_about_refusal], [r"refund", invented]])
    effects: list[dict] = []
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[said]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(2.0), at_s=0.3)], config=cfg.load(overrides=["call.tool_choice=false"]),
               setup=lambda s: s.use_tools(refund_desk(effects), ledger=ledger))
    return rec, effects, ledger


def one_turn(tmp_path, said: str, llm: ScriptedLLM, tools: ToolRegistry, config: cfg.Config | None = None):
    """One caller turn (`said`) to the scripted model, with these tools and a ledger file."""
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[said]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    return call(stages, [Clip(caller_tone(1.2), at_s=0.3)], config=config,
                setup=lambda s: s.use_tools(tools, ledger=Ledger(tmp_path / "l.sqlite3")))


def refund_turn(tmp_path, said: str, llm: ScriptedLLM, *, tone_s: float):
    """One caller turn (`said`, a tone as long as its words take) to the refund desk: the record
    and the effects its refunds made."""
    effects: list[dict] = []
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[said]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(tone_s), at_s=0.3)],
               setup=lambda s: s.use_tools(refund_desk(effects), ledger=Ledger(tmp_path / "l.sqlite3")))
    return rec, effects


def test_the_reply_about_a_refusal_asks_for_what_was_refused(tmp_path) -> None:
    rec, effects, ledger = refused_call(tmp_path, "I want a refund to my card ending 1234.",
                                        "Sorry about that.")
    story = rec.timeline()
    assert effects == [] and ledger.get("refund:12345") is None, story
    assert " ".join(rec.agent_lines) == "One moment. Could you tell me the order number?", story


def test_the_reply_about_a_refusal_is_the_sessions_question_not_the_models(tmp_path) -> None:
    """Kept from guessing again, Qwen2.5-0.5B wrote "I can't help with that" (or Chinese) before the
    question: the reply about a refusal alone is the session's question, the model not asked."""
    rec, effects, _ledger = refused_call(tmp_path, "I want a refund to my card ending 1234.",
                                         "Which order should I refund?")
    story = rec.timeline()
    assert effects == [], story
    assert rec.agent_lines == ["One moment.", "Could you tell me the order number?"], story


def test_a_reply_that_asks_itself_is_not_asked_again(tmp_path) -> None:
    """A reply that asks in its own words, then writes a call it was not offered: no call, and no
    second question."""
    call_text = "Which order should I refund? ```json\n" + json.dumps(
        {"name": "refund", "arguments": {"holding_line": "One moment.", "order_id": "12345", "card_last4": "1234"}}) + "\n```"
    llm = ScriptedLLM(rules=[[r"refund", call_text.replace("{", "{{").replace("}", "}}")]])
    rec, effects = refund_turn(tmp_path, "I want a refund to my card ending 1234.", llm, tone_s=2.0)
    story = rec.timeline()
    assert effects == [], story
    assert rec.agent_lines == ["Which order should I refund?"], story


def test_a_call_cut_off_mid_markup_is_still_asked_about(tmp_path) -> None:
    """A reply that ends inside the call it writes (its token limit) names the tool, not all its
    arguments: the caller is asked for what that tool needs."""
    cut = "Sure. ```json\n" + json.dumps({"name": "refund", "arguments": {"holding_line": "One"}})[:48]
    llm = ScriptedLLM(rules=[[r"refund", cut.replace("{", "{{").replace("}", "}}")]])
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["I want a refund, please."]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3)],
               setup=lambda s: s.use_tools(refund_desk([]), ledger=Ledger(tmp_path / "l.sqlite3")))
    story = rec.timeline()
    assert " ".join(rec.agent_lines) == "Sure. Could you tell me the order number and the last four digits of the card?", story


def test_a_reply_about_an_effect_that_does_not_state_it_is_followed_by_the_statement(tmp_path) -> None:
    """Qwen2.5-0.5B answered a refund's result with "The refund was committed and succeeded.":
    no card, nothing the caller can check. The session says the outcome after it, and the effect
    is told once that is heard; a reply that states it is left as it is."""
    from .test_written_calls import REFUND, run

    vague = ScriptedLLM(rules=[[r"result of refund", "The refund was committed and succeeded."], [r"refund", REFUND]])
    rec, effects, ledger = run(vague, tmp_path)
    story = rec.timeline()
    assert len(effects) == 1, story
    assert rec.agent_lines[-1].endswith("That went through to the card ending 9075."), story
    assert ledger.get("refund:4417").told, story
    assert len(rec.done) == 2, story  # the call's reply and the one about its result: no reminder

    clear = ScriptedLLM(rules=[[r"result of refund", "Done: order {order_id} went back to the card ending "
                                                     "{card_last4}."], [r"refund", REFUND]])
    (tmp_path / "clear").mkdir()
    rec, _effects, ledger = run(clear, tmp_path / "clear")
    assert not any("That went through" in line for line in rec.agent_lines), rec.timeline()
    assert ledger.get("refund:4417").told


def test_a_sentence_about_a_tools_identifier_is_never_said() -> None:
    specs = desk().specs()
    assert names_a_tool("You may call the `refund` function with the arguments.", specs) == "refund"
    assert names_a_tool("Call look_up_booking with the name.", specs) == "look_up_booking"
    assert names_a_tool("I will use the refund tool now.", specs) == "refund"
    for said in ["Your refund is on its way.", "The function room is upstairs.",
                 "I can look up your booking.", "A refund takes five days."]:
        assert names_a_tool(said, specs) is None, said


def test_a_reply_that_talks_about_calling_the_tool_asks_the_caller_instead(tmp_path) -> None:
    """Qwen2.5-0.5B kept from the refund (no order, no card said) answered "You may call the
    `refund` function with the arguments ...": the caller hears the question back instead."""
    talk = 'You may call the `refund` function with the arguments "Let me process that refund."'
    rec = one_turn(tmp_path, "I want a refund.", ScriptedLLM(rules=[[r"refund", talk]]), refund_desk([]))
    story = rec.timeline()
    assert " ".join(rec.agent_lines) == ("Could you tell me the order number and the last four digits "
                                         "of the card?"), story
    assert any("talks about the tool refund" in e.message for e in rec.of("x.log")), story


def test_a_reply_about_making_a_call_that_names_no_tool_is_not_said_either(tmp_path) -> None:
    """On fresh7 Qwen2.5-0.5B answered "To respond to this, you could return the following JSON
    object:" and "Here's a json object with the function name and arguments:": no caller is to
    hear that. "The function room is upstairs, call us back" is said."""
    assert talks_about_calling("To respond to this, you could return the following JSON object:")
    assert talks_about_calling("Here's a json object with the function name and arguments:")
    assert not talks_about_calling("The function room is upstairs.")
    # fresh14, fresh27, fresh48: the tool prompt said back, word for word
    assert talks_about_calling("To answer the phone for Kirkstall Pest Solutions, you may call one or more functions "
                               "to assist with the user query.")
    assert talks_about_calling("You are provided with function signatures within <tools></tools> XML tags: <tools>")
    assert not talks_about_calling("We have two function suites, both free on Saturday.")
    assert not talks_about_calling("I'll call you back when the refund lands.")
    talk = "To respond to this, you could return the following JSON object with the function arguments."
    rec = one_turn(tmp_path, "I want a refund.", ScriptedLLM(rules=[[r"refund", talk]]), refund_desk([]))
    story = rec.timeline()
    heard = " ".join(rec.agent_lines)  # a first clause put out before the rest was written is said
    assert "JSON" not in heard and "function" not in heard, story
    assert heard.endswith("could you tell me the order number and the last four digits of the card?"), story
    assert any("talks about making a call" in e.message for e in rec.of("x.log")), story


def written_turn(tmp_path, said: str, llm: ScriptedLLM, tools: ToolRegistry):
    """`one_turn` with the session's replies written (text only), as a text client asks."""
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[said]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))

    def setup(s) -> None:
        s.use_tools(tools, ledger=Ledger(tmp_path / "l.sqlite3"))
        s.client.update(text_only=True)

    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3)], setup=setup, tail_s=4.0)
    return rec, "".join(e.delta for e in rec.of("response.output_text.delta"))


def test_a_written_reply_is_screened_as_a_spoken_one_is(tmp_path) -> None:
    """A text client is not shown what a caller would not hear: the sentence about making a call
    and the id nobody gave are not written, and the question back is; the item holds what was
    written. A written reply with nothing to screen is written whole."""
    talk = "Sure. To respond to this, you could return the following JSON object with the function arguments."
    rec, text = written_turn(tmp_path, "I want a refund.", ScriptedLLM(rules=[[r"refund", talk]]), refund_desk([]))
    story = rec.timeline()
    assert "JSON" not in text and "function" not in text, story
    assert text.startswith("Sure.") and text.endswith("the last four digits of the card?"), story
    assert rec.session.responses[0].item.text == text, story
    assert not rec.of("response.output_audio.delta"), story
    rec, text = written_turn(tmp_path, "Where is my order?",
                             ScriptedLLM(rules=[[r"where", "Sure. The order number is 4417."]]), order_desk([]))
    assert text == "Sure. Could you tell me the order number?", rec.timeline()
    fine = "Refunds take five days. Anything else?"
    rec, text = written_turn(tmp_path, "How long does a refund take?", ScriptedLLM(rules=[[r"long", fine]]),
                             refund_desk([]))
    assert text == fine, rec.timeline()


def test_a_claim_that_a_running_effect_went_through_is_not_said(tmp_path) -> None:
    """Asked "Did that go through?" while the refund still ran, Qwen2.5-0.5B answered "Yes, it
    went through.": the caller hears the honest state instead, and the outcome once it lands."""
    from pipeline.call.owed import STILL_RUNNING
    from pipeline.transports.scripted import after_stage

    from .test_written_calls import ASK, REFUND
    llm = ScriptedLLM(rules=[[r"result of refund", "Done: order {order_id} went back to the card ending "
                                                   "{card_last4}."],
                             [r"go through", "Yes, it went through."], [r"refund", REFUND]])
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[ASK, "Did that go through?"]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(2.4), at_s=0.3),
                        Clip(caller_tone(1.2), None, after=after_stage("heard_in_full", 1), delay_s=0.3)],
               setup=lambda s: s.use_tools(refund_desk([], clock=s.clock, latency_s=6.0), ledger=ledger))
    story = rec.timeline()
    heard = " ".join(rec.agent_lines)
    assert "Yes, it went through." not in heard, story
    assert "Yes, " + STILL_RUNNING[0].lower() + STILL_RUNNING[1:] in heard, story  # after the "Yes," said
    assert heard.index("still going through") < heard.index("went back to the card ending 9075"), story
    assert ledger.get("refund:4417").told, story


def test_owed_words_follow_what_was_said() -> None:
    from pipeline.tools.ask import after_words

    assert after_words("", "Could you tell me the order number?") == "Could you tell me the order number?"
    assert after_words("Sure.", "Could you tell me?") == " Could you tell me?"
    assert after_words("Yes,", "It's still going.") == " it's still going."
    assert after_words("Yes,", "I'm sorry.") == " I'm sorry."


def order_desk(effects: list[dict]) -> ToolRegistry:
    """The refund and its neighbour, an order look-up (no side effect)."""
    @tool(spoken=("holding_line",))
    async def look_up_order(holding_line: str, order_id: str) -> dict:
        """Look an order up.

        Args:
            holding_line: What to say while looking.
            order_id: The order number.
        """
        return {"order_id": order_id, "status": "shipped"}

    return ToolRegistry(specs=[look_up_order, *refund_desk(effects).specs()])


def test_a_side_effect_asked_for_by_name_and_not_given_enough_offers_no_neighbour() -> None:
    """Qwen2.5-0.5B, kept from the refund on "Refund order 4417, please." (no card), looked the
    order up instead: the reply is offered no tool and asks."""
    from pipeline.tools.choice import asked_for, offered

    specs = order_desk([]).specs()

    def names(line: str) -> list[str]:
        return [s.name for s in offered(specs, Evidence(said=[line]), last_said=line)]

    assert asked_for(specs, "Refund order 4417, please.").name == "refund"
    assert names("Refund order 4417, please.") == []
    # given all it needs, the refund is offered; and alone, the words fitting it (`tools.fit`)
    assert names("Can you refund order 4417, please? The card ends in 1234.") == ["refund"]
    assert names("Where is order 4417?") == ["look_up_order"]  # no refund asked for
    # a question about refunds asks for none; "refunds" is not the tool's name either
    assert asked_for(specs, "How long does a refund take for order 4417?") is None
    assert names("How long does a refund take for order 4417?") == ["look_up_order"]
    assert asked_for(specs, "How long do refunds usually take?") is None


def test_a_reply_to_a_side_effect_asked_for_without_enough_asks_for_the_rest(tmp_path) -> None:
    llm = ScriptedLLM(rules=[[r"refund", "Sure, I can help with that."]])
    rec = one_turn(tmp_path, "Refund order 4417, please.", llm, order_desk([]))
    story = rec.timeline()
    assert " ".join(rec.agent_lines) == ("Sure, I can help with that. Could you tell me the last four "
                                         "digits of the card?"), story
    assert not rec.of("response.function_call_arguments.done"), story


def test_an_order_nobody_gave_is_not_stated_and_is_asked_for(tmp_path) -> None:
    """Asked "Where is my order?", Qwen2.5-0.5B said "The order number is 4417." (its schema's
    example): that sentence is not said; the caller is asked for the order number, by the tool
    that needs least else (the look-up, not the refund)."""
    llm = ScriptedLLM(rules=[[r"where", "Sure. The order number is 4417."]])
    rec = one_turn(tmp_path, "Where is my order?", llm, order_desk([]))
    story = rec.timeline()
    assert " ".join(rec.agent_lines) == "Sure. Could you tell me the order number?", story
    assert any("states an id nobody gave (order_id)" in e.message for e in rec.of("x.log")), story


def test_an_order_the_instructions_or_a_result_give_is_said() -> None:
    from pipeline.tools.given import stated_ids

    specs = order_desk([]).specs()

    def invented(text: str, evidence: Evidence) -> set[str]:
        return {name for _, name in stated_ids(text, specs, evidence)}

    nobody = Evidence(said=["Where is my order?"])
    assert invented("The order number is 4417.", nobody) == {"order_id"}
    assert invented("It went to the card ending 9999.", nobody) == {"card_last4"}
    assert invented("Refunds take 5 days and cost 2 dollars.", nobody) == set()  # no id
    assert invented("Order 5120 has shipped.", Evidence(said=["Where is my order?"],
                                                        results=[{"order_id": "5120"}])) == set()
    # said by the caller in words, or left unmarked among other numbers: a read-back is said
    assert invented("Order 4417, to the card ending 1234.",
                    Evidence(said=["Refund forty four seventeen, card one two three four, 20 dollars."])) == set()
    told = Evidence(said=["Where is my order?"], instructions="You are the desk for order 5120.")
    assert invented("Your order 5120 is on its way.", told) == set()


def test_an_order_the_desks_instructions_give_is_said(tmp_path) -> None:
    llm = ScriptedLLM(rules=[[r"where", "Your order 5120 is on its way."]])
    from dataclasses import replace

    config = cfg.Config.default()
    config.response = replace(config.response, instructions="You answer for the caller's order 5120, a chef's knife.")
    rec = one_turn(tmp_path, "Where is my order?", llm, order_desk([]), config)
    assert rec.agent_lines == ["Your order 5120 is on its way."], rec.timeline()


def test_a_reminder_states_the_card_its_ledger_row_holds(tmp_path) -> None:
    """An effect recorded before a restart is told in this call by a reminder, whose card is in
    the ledger's row (the reminder's note), not in anything this caller said: it is said."""
    ledger = Ledger(tmp_path / "l.sqlite3")
    ledger.intend(business_key="refund:4417", tool="refund", arguments={"order_id": "4417", "card_last4": "9075"},
                  target="", call_id="c1")
    ledger.commit("refund:4417", {"refunded": True, "order_id": "4417", "card_last4": "9075"})
    llm = ScriptedLLM(rules=[[r"not heard this outcome", "Just to confirm, it went to the card ending {card_last4}."]],
                      replies=["Shipping takes three days."])
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["How long does shipping take?"]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))

    def setup(session) -> None:
        session.use_tools(refund_desk([]), ledger=ledger)
        session.tools.ledger_keys |= {"refund:4417"}  # this caller's effect

    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3)], setup=setup)
    assert "Just to confirm, it went to the card ending 9075." in rec.agent_lines, rec.timeline()


def test_a_refused_call_written_again_in_the_reply_about_its_refusal_is_not_silence(tmp_path) -> None:
    """The model guesses an order the caller did not name, and would write the same guess again in
    the reply about the refusal (Qwen2.5-0.5B did, and that refused too, the caller heard nothing):
    the reply is the session's question back, so the guess is refused once and the caller is asked."""
    invented = {"name": "refund", "arguments": {"holding_line": "One moment.", "order_id": "12345",
                                                "card_last4": "1234"}}
    llm = ScriptedLLM(rules=[[r"refund", invented]])  # the same call, whatever it is asked
    rec, effects = refund_turn(tmp_path, "Refund my order to my card ending 1234.", llm, tone_s=2.4)
    story = rec.timeline()
    assert effects == [], story
    assert rec.agent_lines[-1].endswith("Could you tell me the order number?"), story
    assert sum("refund not run" in line for line in story.splitlines()) == 1, story


def test_the_sessions_question_back_is_said_whatever_numbers_its_words_hold(tmp_path) -> None:
    """fresh12: the question back for `books` ("the number of books of ten permits") was screened
    as stating a permit number nobody gave ("number ... ten"), and the caller heard nothing. The
    session's own words are said unscreened, as its owed words are."""

    @tool(side_effect=True, business_key=lambda a: f"books:{a['books']}")
    async def order_visitor_permits(books: int) -> dict:
        """Order books of visitor permits.

        Args:
            books: The number of books of ten permits, 1 to 5.
        """
        return {"ordered": books}

    @tool()
    async def check_permit(permit_number: str) -> dict:
        """Look up a resident permit.

        Args:
            permit_number: The permit number, e.g. RP-204518.
        """
        return {}

    llm = ScriptedLLM(rules=[[r"not_run", "Sure."], [r"permits", {"name": "order_visitor_permits",
                                                                    "arguments": {"books": 5}}]])
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["Can I order some more visitor permits, please?"]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(2.4), at_s=0.3)], config=cfg.load(overrides=["call.tool_choice=false"]),
               setup=lambda s: s.use_tools(ToolRegistry(specs=[order_visitor_permits, check_permit]),
                                           ledger=Ledger(tmp_path / "l.sqlite3")))
    assert rec.agent_lines == ["Could you tell me the number of books of ten permits?"], rec.timeline()


def test_a_reply_with_nothing_the_caller_may_hear_asks_again(tmp_path) -> None:
    """fresh9 run again: the model's only sentence read back an order nobody gave ("that's order
    DC-5719?" for "D C, five, seven, nine, one"); screened, the caller heard nothing. A reply to the
    caller with nothing they may hear asks them to say it again."""
    from pipeline.call.owed import NOTHING_SAID

    @tool()
    async def order_status(order_id: str) -> dict:
        """Where an order is.

        Args:
            order_id: The order number.
        """
        return {"status": "shipped"}

    llm = ScriptedLLM(rules=[[r"order", "Just to check, that's order 5719?"]])
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=["Where's my order? It's five seven nine one."]),
                    completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(2.4), at_s=0.3)],
               setup=lambda s: s.use_tools(ToolRegistry(specs=[order_status]), ledger=Ledger(tmp_path / "l.sqlite3")))
    story = rec.timeline()
    assert " ".join(rec.agent_lines) == NOTHING_SAID, story
