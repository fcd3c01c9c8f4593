"""The rules read from fresh58 (an auction house in Adelaide, a university registrar in Kingston,
a makerspace in Cape Town, road-race entries in Bengaluru): each behaviour on a desk of its own
shape, not the split's lines word for word."""

from __future__ import annotations

from pipeline.tools.provenance import trace
from tests.test_provenance import client_tool, said

ENTER = client_tool("enter_swimmer", {
    "swimmer_name": {"type": "string", "description": "The swimmer's full name"},
    "age": {"type": "integer", "description": "The swimmer's age on the day"},
    "lane_number": {"type": "integer", "description": "The lane, if the caller asked for one"},
}, ["swimmer_name", "age"])


def test_he_is_and_a_number_then_but_is_an_age() -> None:
    """ "Name is Raghavan Srinivasan ... He is sixty-eight but very fit" was refused its age: "he is",
    as "he's", before a number that ends its clause or goes on "but", says an age. "They're eight
    and eleven" names two ages, not an age and a count."""
    line = said("I want to enter my grandad, Tom Price. He is seventy-one but he swims every day. Lane 4, please.")
    assert trace(ENTER, {"swimmer_name": "Tom Price", "age": 71, "lane_number": 4}, line).missing == []
    assert trace(ENTER, {"swimmer_name": "Tom Price", "age": 4, "lane_number": 4}, line).arguments["age"] == 71


PLAN = client_tool("join_club", {
    "member_name": {"type": "string", "description": "The member's full name"},
    "plan": {"type": "string", "enum": ["annual", "monthly", "day_pass"], "description": "Which plan"},
}, ["member_name", "plan"])


def test_how_often_is_said_as_its_period() -> None:
    """ "I'd like to join you, the yearly membership" was refused `annual`; "the ten times or the
    month?" named no `monthly`: a choice of how often is said by its period ("yearly", "the
    month")."""
    assert trace(PLAN, {"member_name": "Ada Obi", "plan": "annual"}, said("It's Ada Obi, the yearly one, please.")).missing == []
    assert trace(PLAN, {"member_name": "Ada Obi", "plan": "monthly"}, said("It's Ada Obi. By the month, please.")).missing == []
    assert trace(PLAN, {"member_name": "Ada Obi", "plan": "annual"}, said("It's Ada Obi. By the month, please.")).arguments["plan"] \
        == "monthly"


REFUND = client_tool("refer_student", {
    "student_number": {"type": "string", "description": "The nine-digit student number"},
}, ["student_number"])


def test_its_and_an_ending_at_the_end_puts_the_read_back_right() -> None:
    """ "No, no, it's two three eight one at the end." after a read-back of 620152318 kept the
    read-back's ending: "it's" before the ending said is no part of it."""
    line = said("Student number six two oh one five two three eight one.", "No, no, it's two three eight one at the end.",
                asked=["", "That's student number 620152318. Shall I send it?"])
    assert trace(REFUND, {"student_number": "620152318"}, line).arguments["student_number"] == "620152381"


DELIVERY = client_tool("register_delivery", {
    "reader_name": {"type": "string", "description": "The reader's full name"},
    "frequency": {"type": "string", "enum": ["weekly", "fortnightly", "monthly"], "description": "How often"},
}, ["reader_name", "frequency"])
LIBRARY = ("You answer the phone for the Dale Library van. Loans last three weeks. Home delivery can be weekly, "
           "fortnightly or monthly.")


def test_a_number_word_joins_no_word_of_the_instructions_to_the_callers() -> None:
    """ "Card T V, five nine oh, three three two." let `weekly` through once "weekly" was said as its
    period: the instructions' "three weeks" joined "week" to the caller's "three". A number word
    joins nothing."""
    line = said("It's Ann Lowe, card five nine oh, three three two. I'd like the home delivery.", instructions=LIBRARY)
    assert trace(DELIVERY, {"reader_name": "Ann Lowe", "frequency": "weekly"}, line).missing == ["frequency"]
    weekly = said("It's Ann Lowe. I'd like the home delivery, every week.", instructions=LIBRARY)
    assert trace(DELIVERY, {"reader_name": "Ann Lowe", "frequency": "weekly"}, weekly).missing == []


GALLERY = ("You answer the phone for Quayside Galleries. Upcoming shows: the Spring Ceramics show (show code SC26) on "
           "May 2; the Coastal Photography show (CP26) on June 6; the Printmakers show (PM26) on July 11.")
SHOW_TICKETS = client_tool("buy_show_tickets", {
    "show_code": {"type": "string", "enum": ["SC26", "CP26", "PM26"], "description": "Which show"},
    "tickets": {"type": "integer", "description": "How many tickets"},
}, ["show_code", "tickets"])


def test_a_named_thing_the_desk_lists_with_its_code_is_that_code() -> None:
    """ "What's the estimate on lot fifty-seven in the winter sale?" was asked which sale: the desk
    lists "the Winter Fine Art & Antiques sale (sale code WA26)", and the caller named it by its
    words. A word every entry has ("show") names none of them."""
    line = said("Two tickets for the photography show, please.", instructions=GALLERY)
    assert trace(SHOW_TICKETS, {"show_code": "CP26", "tickets": 2}, line).missing == []
    assert trace(SHOW_TICKETS, {"show_code": "PM26", "tickets": 2}, line).missing == ["show_code"]
    vague = said("Two tickets for the show, please.", instructions=GALLERY)
    assert trace(SHOW_TICKETS, {"show_code": "CP26", "tickets": 2}, vague).missing == ["show_code"]
