"""The rules read from fresh47 (a hall hire in Shetland, cricket nets in Trinidad, an orchard in
Appalachia, a public service centre in Kisumu): each behaviour on a desk of its own shape, not the
split's lines word for word."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.tools.choice import offered
from pipeline.tools.evidence import Evidence
from pipeline.tools.fit import best_fit
from pipeline.tools.provenance import trace
from pipeline.tools.schema import ToolSpec
from pipeline.tools.spoken.numbers import numbers_said
from tests.test_fit import _tool
from tests.test_provenance import NOW, client_tool, said


@pytest.mark.parametrize(("text", "values"), [
    ("could you put down a dozen of the folding chairs", [12]),
    ("a dozen o dem chairs", [12]),  # "o" for "of", no zero
    ("two dozen bread rolls", [24]),
    ("half a dozen eggs", [6]),
    ("room nine o seven", [907]),  # "o" between digits is still a zero
    ("dozens of people came", []),
])
def test_a_dozen_is_twelve(text: str, values: list[int]) -> None:
    found = [sorted(n.values) for n in numbers_said(text)]
    assert found == [[Decimal(v)] for v in values]
    assert not any(n.clock for n in numbers_said(text))  # "half a dozen" is no half past


VAN = client_tool("book_van", {
    "hirer_name": {"type": "string", "description": "The hirer's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the hire"},
    "roof_rack": {"type": "boolean", "description": "Whether they want a roof rack, if the caller asked"},
    "use_card_on_file": {"type": "boolean", "description": "Whether to charge the card on file, if the caller asked"},
}, ["hirer_name", "date"])


@pytest.mark.parametrize(("line", "flags"), [
    ("Ifeoma Obi. The van on Friday, and just put it on the card you have.", {"use_card_on_file": True}),
    ("Ifeoma Obi. The van on Friday. No roof rack, mind, it's only boxes.", {"roof_rack": False}),
    ("Ifeoma Obi. The van on Friday with a roof rack, but not on the card, I'll pay cash.",
     {"roof_rack": True, "use_card_on_file": False}),
])
def test_an_optional_flag_is_as_the_callers_words_say_it(line: str, flags: dict[str, bool]) -> None:
    """ "put it on the card" is true whatever the model wrote; "No roof rack" false."""
    wrong = {name: not value for name, value in flags.items()}
    traced = trace(VAN, {"hirer_name": "Ifeoma Obi", "date": "2026-06-05", **wrong}, said(line))
    assert {name: traced.arguments.get(name) for name in flags} == flags


def test_a_flag_the_words_touch_both_ways_or_by_a_little_word_stays_the_models() -> None:
    both = said("Ifeoma Obi, the van on Friday. A roof rack? No roof rack. Well, maybe a roof rack.")
    traced = trace(VAN, {"hirer_name": "Ifeoma Obi", "date": "2026-06-05", "roof_rack": False}, both)
    assert traced.arguments.get("roof_rack") is False
    shuttle = client_tool("book_minibus", {
        "school_name": {"type": "string", "description": "The school's name"},
        "with_driver": {"type": "boolean", "description": "Whether a driver comes with it, if asked"},
    }, ["school_name"])
    line = said("Hillside Primary. The one with the wheelchair lift, and a driver please, not self-drive.")
    assert trace(shuttle, {"school_name": "Hillside Primary", "with_driver": True}, line).arguments["with_driver"] is True


PICKING = client_tool("book_slot", {
    "picker_name": {"type": "string", "description": "The lead picker's name"},
    "date": {"type": "string", "format": "date", "description": "Day of the slot"},
    "people": {"type": "integer", "description": "How many are coming"},
}, ["picker_name", "date", "people"])
FARM = ("You answer the phone for a fruit farm. Entry is $5 a person, credited against fruit. "
        "The caller is Dana Kerr; on file: slot S-204 on Saturday, June 6 for 6 people.")


def test_a_price_on_the_desk_is_no_count_of_people() -> None:
    """The desk's "$5 a person" does not make a party of five; the caller never said how many."""
    line = said("It's Dana Kerr. Me and my sister for the twentieth, please.", instructions=FARM)
    traced = trace(PICKING, {"picker_name": "Dana Kerr", "date": "2026-06-20", "people": 5}, line)
    assert "people" in traced.missing



# a boathouse: every tool speaks of the boathouse, one has it in its name
BOOK = _tool("book_boathouse", "Book a room at the boathouse.", room={"type": "string", "enum": ["boathouse_loft", "deck"]},
             date={"type": "string", "format": "date"}, hours={"type": "integer"})
CANCEL = _tool("cancel_booking", "Cancel a boathouse booking.", booking_ref={"type": "string"})
MOVE = _tool("move_booking", "Move a boathouse booking to another day.", booking_ref={"type": "string"},
             new_date={"type": "string", "format": "date"})
FREE = _tool("check_free_times", "List free times for the rooms on a day.",
             room={"type": "string", "enum": ["boathouse_loft", "deck"]}, date={"type": "string", "format": "date"})
DESK = [BOOK, CANCEL, MOVE, FREE]


def _offered(line: str, desk: list[ToolSpec], instructions: str = "") -> list[str]:
    evidence = Evidence(said=[line], asked=[""], instructions=instructions, now=NOW)
    return [s.name for s in offered(desk, evidence, last_said=line)]


def test_a_word_every_other_tool_declares_names_no_tool_apart() -> None:
    """ "boathouse" is the desk's word, not `book_boathouse`'s: a question about free times is
    not narrowed to the booking."""
    assert "check_free_times" in _offered("Is the boathouse loft free any time on the twenty-first?", DESK)


def test_a_tool_named_by_its_object_yields_to_another_act_said_in_a_phrase() -> None:
    hayride = _tool("book_wagon_ride", "Book a wagon ride for a group.", date={"type": "string", "format": "date"})
    cancel = _tool("cancel_booking", "Cancel a booking.", booking_ref={"type": "string"})
    desk = [hayride, cancel, _tool("order_pies", "Order pies for collection.", quantity={"type": "integer"})]
    record = "The caller is Ruth Ames; on file: wagon ride W-330 on Sunday, June 7 at 13:00 for 28 people."
    assert "cancel_booking" in _offered("We'll have to call off that wagon ride on Sunday, half of them are away.",
                                        desk, record)
    assert _offered("Could we get a wagon ride on Sunday for thirty?", desk) == ["book_wagon_ride"]


def test_where_a_thing_has_got_to_asks_its_status() -> None:
    book = _tool("book_appointment", "Book an appointment at the office.",
                 service={"type": "string", "enum": ["passport", "driving_licence"]}, date={"type": "string", "format": "date"})
    status = _tool("check_application_status", "Look up where an application has got to.", application_ref={"type": "string"})
    assert best_fit([book, status], "I want to know where my passport thing has reached, it's been a week.") is status
    assert best_fit([book, status], "I'd like a passport appointment on Friday.") is book


def test_a_verb_only_one_tool_has_counts_for_nothing_where_its_object_is_another_tools_choice() -> None:
    book = _tool("book_appointment", "Book an appointment at the office.",
                 service={"type": "string", "enum": ["business_name", "land_search"]}, date={"type": "string", "format": "date"})
    alerts = _tool("register_text_alerts", "Send a text when an application is ready.", phone_number={"type": "string"})
    desk = [book, alerts, _tool("cancel_appointment", "Cancel an appointment.", appointment_ref={"type": "string"})]
    assert "book_appointment" in _offered("I want to register a business name, Tuesday the ninth at two.", desk)
    assert _offered("I want to register for the text alerts, my number is 0712 345 678.", desk) == ["register_text_alerts"]
    assert best_fit(desk, "Could you cancel the land search on Friday?") is desk[2]  # a cancel acts on any kind of thing


def test_a_flag_named_for_what_is_left_out_is_wanted_by_saying_no() -> None:
    """fresh52: "tell Auntie Lim no chilli ah, my kids cannot take spicy" is `no_chilli: true`;
    Qwen wrote false, and "no" before "chilli" read it as not wanted."""
    tiffin = client_tool("start_subscription", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "no_chilli": {"type": "boolean", "description": "Cook without chilli, if the caller asked"},
    }, ["customer_name"])
    line = said("Jasmine Goh. Lunch from Monday, and tell Auntie Lim no chilli ah, my kids cannot take spicy.")
    assert trace(tiffin, {"customer_name": "Jasmine Goh", "no_chilli": False}, line).arguments["no_chilli"] is True
    spicy = said("Jasmine Goh. Lunch from Monday, and the chilli is fine, we like it spicy.")
    assert trace(tiffin, {"customer_name": "Jasmine Goh", "no_chilli": True}, spicy).arguments["no_chilli"] is False
