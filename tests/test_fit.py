"""The tool the caller's words fit best (`tools.fit`): where one tool's declared words (its name,
its act, its choices, its description, its arguments' names) fit the caller's clearly better than
any other's, the reply to the caller is offered only it; where two fit alike, or none does, all."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pipeline.tools.choice import offered
from pipeline.tools.evidence import Evidence
from pipeline.tools.fit import best_fit
from pipeline.tools.schema import ToolSpec


def _tool(name: str, description: str, **properties: dict[str, Any]) -> ToolSpec:
    return ToolSpec.from_openai({"type": "function", "name": name, "description": description,
                                 "parameters": {"type": "object", "properties": properties, "required": []}})


# a ski school: two tools with the same verb, a hire, a change and a look-up
LESSON = _tool("book_lesson", "Book a ski or snowboard lesson with an instructor.",
               instructor={"type": "string", "enum": ["Anja", "Pierre"]}, date={"type": "string", "format": "date"},
               level={"type": "string", "enum": ["beginner", "intermediate", "advanced"]})
HIRE = _tool("book_equipment_hire", "Reserve hire equipment for collection at the shop.",
             item={"type": "string", "enum": ["skis", "helmet", "boots", "poles"]},
             date={"type": "string", "format": "date"}, days={"type": "integer"})
MOVE = _tool("reschedule_lesson", "Move a booked lesson to another day.",
             booking_ref={"type": "string"}, date={"type": "string", "format": "date"})
PASS = _tool("check_lift_pass_price", "Say what a lift pass costs for a number of days.",
             days={"type": "integer"})
HANG_UP = replace(_tool("end_call", "End the call."), closes=True)
DESK = [LESSON, HIRE, MOVE, PASS]


@pytest.mark.parametrize(("line", "fits"), [
    # a choice of the tool's own, beside another tool of the same verb
    ("Could I book boots and poles for Saturday?", "book_equipment_hire"),
    ("Can you book me in with Pierre on Saturday? I'm a beginner.", "book_lesson"),
    # its name's own words
    ("How much is a lift pass for six days?", "check_lift_pass_price"),
    # a word for its act ("move")
    ("Could you move my lesson to Sunday?", "reschedule_lesson"),
    # nothing that tells them apart: every tool is left to the model
    ("Can I book something for Saturday?", None),
    ("Hello, is that the ski school?", None),
])
def test_the_tool_the_words_fit_clearly_better_than_any_other(line, fits) -> None:
    best = best_fit(DESK, line)
    assert (best.name if best else None) == fits


def test_a_word_every_tool_declares_tells_none_apart() -> None:
    """"date" is every tool's argument here, "book" two tools' verb: neither picks one; a choice
    only one declares does, where the caller says enough of them."""
    both = [LESSON, HIRE]
    assert best_fit(both, "Book it for that date.") is None
    assert best_fit(both, "Book the helmet and poles for that date.") is HIRE


def test_a_hang_up_is_not_among_the_tools_to_fit_and_one_tool_is_no_choice() -> None:
    assert best_fit([HIRE, HANG_UP], "Skis for Saturday, please.") is None
    assert best_fit([HIRE], "Skis for Saturday, please.") is None


def test_the_reply_to_the_caller_is_offered_only_the_tool_that_fits() -> None:
    """Qwen2.5-0.5B booked a lesson for a caller who asked for boots and poles; the reply to that
    line is offered the hire alone (and the hang-up, were the caller closing); the reply about a
    turn's results is offered the tools it was (the tool it called aside)."""
    line = "Could I book boots and poles for Saturday, three days?"
    evidence = Evidence(said=[line])
    assert [s.name for s in offered([*DESK, HANG_UP], evidence, last_said=line)] == ["book_equipment_hire"]
    closing = "Could I book boots and poles for Saturday, three days? That's all, goodbye."
    assert [s.name for s in offered([*DESK, HANG_UP], Evidence(said=[closing]), last_said=closing)] == [
        "book_equipment_hire", "end_call"]
    after = offered(DESK, evidence, last_said=line, called=["book_equipment_hire"])
    assert [s.name for s in after] == ["book_lesson", "reschedule_lesson", "check_lift_pass_price"]


def test_a_choice_s_little_words_name_nothing() -> None:
    """"over" of a race's "over_40s" choice is no word of the race's in "my turns are all over the
    place" (Qwen2.5-0.5B was offered a tournament alone for a lesson so asked for)."""
    race = _tool("enter_race", "Enter the end-of-season race.",
                 category={"type": "string", "enum": ["open", "over_40s", "juniors"]})
    assert best_fit([LESSON, race], "My turns are all over the place, what can I do?") is None


def test_the_tool_the_words_fit_lacking_what_it_needs_offers_no_other() -> None:
    """"Can I keep the skis a bit longer? Not sure how long yet." fits the extension, which has no
    new return day: no tool is offered (the reply asks for it), where Qwen2.5-0.5B looked the hire
    up instead (fresh29)."""
    extend = ToolSpec.from_openai({"type": "function", "name": "extend_hire",
                                   "description": "Keep hired equipment for longer than booked.",
                                   "parameters": {"type": "object", "properties": {
                                       "hire_ref": {"type": "string", "description": "The hire's reference"},
                                       "new_return_date": {"type": "string", "format": "date"}},
                                       "required": ["hire_ref", "new_return_date"]}})
    look = _tool("get_hire_details", "Look up a hire: the equipment and its return day.",
                 hire_ref={"type": "string", "description": "The hire's reference"})
    record = "The caller is Ana Ruiz; on file: hire SK-2291, skis and boots, back on Friday, June 5."
    line = "Can I keep the skis a bit longer? Not sure how long yet."
    assert best_fit([extend, look], line) is extend
    assert offered([extend, look], Evidence(said=[line], instructions=record), last_said=line) == []
    later = "Can I keep the skis till Monday?"
    assert offered([extend, look], Evidence(said=[later], instructions=record), last_said=later) == [extend]


def test_a_tool_asked_for_by_its_own_verb_is_offered_though_the_words_fit_another_better() -> None:
    """fresh44: "Me son-in-law is after cleanin' the eavestroughs himself ... so ye can cancel
    Friday's" fits the cleaning (no day said) by its words, and asks for the cancel by its verb: the
    cancel is offered (nothing was, and Qwen2.5-0.5B answered in words); since fresh47 no tool fits
    best where the words say another tool's act and not its own."""
    clean = ToolSpec.from_openai({"type": "function", "name": "book_cleaning",
                                  "description": "Book an eavestrough cleaning.",
                                  "parameters": {"type": "object", "properties": {
                                      "date": {"type": "string", "format": "date", "description": "Day of the cleaning"}},
                                      "required": ["date"]}})
    cancel = ToolSpec.from_openai({"type": "function", "name": "cancel_job", "description": "Cancel a booked job.",
                                   "parameters": {"type": "object", "properties": {
                                       "job_ref": {"type": "string", "description": "The job reference"}},
                                       "required": ["job_ref"]}})
    record = "The caller is Leo Hickey; on file: job J-5134, eavestrough cleaning on Friday, June 5."
    line = "Me son-in-law is after cleanin' the eavestroughs himself, so ye can cancel Friday's, me son."
    assert best_fit([clean, cancel], line) is None  # the words fit the cleaning, but say the cancel's act
    assert offered([clean, cancel], Evidence(said=[line], instructions=record), last_said=line) == [cancel]


def test_longer_asks_for_the_extension_and_no_longer_does_not() -> None:
    """fresh44: "could we hang onto it a wee bit longer?" fit the cancel (its description's
    "booked", said as "the tub I've got booked") better than the extension; "longer" is the
    extension's word, "no longer" is not."""
    cancel = _tool("cancel_hire", "Cancel a booked hot tub hire.", booking_ref={"type": "string"})
    extend = _tool("extend_hire", "Add extra days to the end of a hire.", booking_ref={"type": "string"},
                   extra_days={"type": "integer"})
    look = _tool("check_availability", "List which hot tubs are free.", start_date={"type": "string"})
    assert best_fit([cancel, extend, look], "Could we hang onto the tub a wee bit longer?") is extend
    assert best_fit([cancel, extend, look], "We no longer need the tub, so cancel it.") is cancel


def test_a_choice_of_several_words_counts_once() -> None:
    """fresh45: "The Mao Shan Wang coming on Saturday, can shift to Sunday instead?" fit the order
    (its variety `mao_shan_wang`, three words counted three times) better than the change the
    caller asked for by "shift"; a choice counts once."""
    order = _tool("order_durians", "Order whole durians for delivery or collection.",
                  variety={"type": "string", "enum": ["mao_shan_wang", "black_thorn", "d24"]})
    change = _tool("change_order", "Change the day or time of an order.", order_ref={"type": "string"})
    look = _tool("track_order", "Say where an order is.", order_ref={"type": "string"})
    line = "The Mao Shan Wang coming on Saturday, can shift to Sunday instead? Sunday eight pm okay."
    assert best_fit([order, change, look], line) is change
    assert best_fit([order, change, look], "Can I get two kilo of Mao Shan Wang for Saturday?") is order
