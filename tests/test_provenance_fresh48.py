"""The rules read from fresh48 (a hurley maker in Kilkenny, gas delivery in Johannesburg, a mehndi
studio in Jaipur, airboat tours in Louisiana): each behaviour on a desk of its own shape, not the
split's lines word for word."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.tools.choice import called_for
from pipeline.tools.provenance import trace
from pipeline.tools.spoken.names import number_with_unit
from pipeline.tools.spoken.numbers import numbers_said
from tests.test_fit import _tool
from tests.test_provenance import client_tool, said

ORDER = client_tool("order_paddles", {
    "customer_name": {"type": "string", "description": "The customer's full name"},
    "length_cm": {"type": "integer", "description": "Paddle length in centimetres"},
    "quantity": {"type": "integer", "description": "How many paddles"},
}, ["customer_name", "length_cm", "quantity"])


def test_just_the_one_is_a_count_and_the_one_before_a_noun_is_not_taken_for_it() -> None:
    line = said("Orla Byrne here. A two hundred and ten centimetre paddle, just the one, please.")
    assert trace(ORDER, {"customer_name": "Orla Byrne", "length_cm": 210, "quantity": 1}, line).missing == []
    months = client_tool("pause_membership", {"months": {"type": "integer", "description": "How many months"},
                                              "member_name": {"type": "string", "description": "The member's name"}},
                         ["member_name"])
    line = said("Orla Byrne. Can you pause it? Just the one month.")
    assert trace(months, {"member_name": "Orla Byrne", "months": 1}, line).arguments.get("months") == 1


@pytest.mark.parametrize(("text", "values"), [
    ("six nine-kilogram refills", [6, 9]),  # six of the nine-kilogram kind, not 69
    ("two nineteen-kays", [2, 19]),
    ("forty-four", [44]),
    ("four four seventeen", [4417]),  # keyed digits still run on
])
def test_a_number_joined_to_a_word_by_a_hyphen_ends_a_run(text: str, values: list[int]) -> None:
    assert [max(n.values) for n in numbers_said(text)] == [Decimal(v) for v in values]


@pytest.mark.parametrize(("choice", "text", "named"), [
    ("9kg", "six nine-kilogram refills", True),
    ("19kg", "two nineteen-kays and the empties", True),
    ("9kg", "nine of them, please", False),  # the number alone names no size
    ("4_cubic_metres", "an old wardrobe and a bed, so four things", False),
    ("4_cubic_metres", "the four cubic metre one", True),
    ("16_seater", "a sixteen-seater with a driver", True),
    ("stage_1", "she's just turned one", None),  # a word and a number: not a measure
    ("10", "ten packs", None),
])
def test_a_choice_of_a_number_and_a_measure_is_named_by_both(choice: str, text: str, named: bool | None) -> None:
    assert number_with_unit(choice, text) is named


GAS = client_tool("order_gas", {
    "customer_name": {"type": "string", "description": "The customer's full name"},
    "cylinder_size": {"type": "string", "enum": ["9kg", "19kg", "48kg"], "description": "Cylinder size"},
}, ["customer_name", "cylinder_size"])


def test_a_size_said_with_its_unit_names_the_choice_and_a_bare_count_does_not() -> None:
    assert trace(GAS, {"customer_name": "Thabo Nkosi", "cylinder_size": "48kg"},
                 said("Thabo Nkosi. A forty-eight kay for the geyser, please.")).missing == []
    assert trace(GAS, {"customer_name": "Thabo Nkosi", "cylinder_size": "9kg"},
                 said("Thabo Nkosi. Nine of your cylinders, please.")).missing == ["cylinder_size"]



BOOK = _tool("book_session", "Book a henna session.", date={"type": "string", "format": "date"})
MOVE = _tool("reschedule_booking", "Move a booking to another day.", new_date={"type": "string", "format": "date"})
LOOK = _tool("get_booking_status", "Look up a booking.", booking_ref={"type": "string"})
DESK = [BOOK, MOVE, LOOK]


@pytest.mark.parametrize(("line", "tools"), [
    ("Our session on the fourteenth, kindly prepone it to the thirteenth.", ["reschedule_booking"]),
    ("Would ye get the booking status for me?", ["get_booking_status"]),  # "ye" asks as "you" does
    ("Just checking you're still coming Friday? I'll need to move the car.", []),  # the caller's own doing
    ("I'd like to move it to the thirteenth.", ["reschedule_booking"]),
    ("Can ye get someone out today?", []),  # "get" says nothing without its object
    ("Make it the thirteenth, actually.", []),  # "make" is no booking
])
def test_a_tool_is_called_for_by_its_verb_or_another_word_for_its_act_said_as_a_request(line: str, tools: list[str]) -> None:
    assert [s.name for s in called_for(DESK, line)] == tools
