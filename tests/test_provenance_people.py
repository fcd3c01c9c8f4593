"""What fresh42's desks were refused for, the caller having said it: a count of people said as
the people ("me and my cousin": `pipeline.tools.people`), and a choice said as a verb and its
particle apart ("pick 'em up": `pickup`)."""

from __future__ import annotations

import pytest

from pipeline.tools.people import party
from pipeline.tools.provenance import trace

from .test_provenance import client_tool, said


@pytest.mark.parametrize(("text", "counted"), [
    ("Could I book me and my cousin on the bridge bungy tomorrow?", (2, 2, 0)),
    ("The boat for myself and the wife and our two young lads, they're eight and eleven.", (4, 2, 2)),
    ("Me and me two kids, they're twelve and fourteen, are keen as.", (3, 1, 2)),
    ("Me and three of me mates wanna give the scuba a crack.", (4, 4, 0)),
    ("I wants to get meself and the missus and the car over to the Cove.", (2, 2, 0)),
    ("Could ye book the Links for me and ma brother-in-law?", (2, 2, 0)),
    ("It's meself and the three wee ones.", (4, 1, 3)),
    ("Just me, on my own.", (1, 1, 0)),
    ("Just me and him, he's nine.", (2, None, None)),
    ("Me and Amy have split up.", (2, None, None)),
])
def test_the_people_a_caller_lists_are_counted(text: str, counted: tuple[int, int | None, int | None]) -> None:
    assert party(text) == counted


@pytest.mark.parametrize("text", [
    "Can I book a pool table for me and me mates Saturday night?",  # how many mates?
    "The door slammed behind me and my keys are sitting inside.",
    "Email it to me and I'll sort it.",
    "For me and the two of mine?",
])
def test_words_that_count_no_one_surely_count_nothing(text: str) -> None:
    assert party(text) is None


JUMP = client_tool("book_jump", {
    "lead_name": {"type": "string", "description": "Full name of the lead jumper"},
    "jumpers": {"type": "integer", "description": "How many people are jumping"},
}, ["lead_name", "jumpers"])

TRIP = client_tool("book_trip", {
    "lead_name": {"type": "string", "description": "Full name of the lead passenger"},
    "adults": {"type": "integer", "description": "Number of adults"},
    "children": {"type": "integer", "description": "Number of children under 15"},
}, ["lead_name", "adults"])


def test_a_count_said_as_the_people_is_given_in_its_part() -> None:
    """Two jumpers for "me and my cousin", not three; one adult and two children for "me and me two
    kids", not two adults; no children on "me and my partner" is the tool's default, not a count."""
    cousin = said("Kia ora, it's Jess Ruawai. Could I book me and my cousin on the bridge bungy?")
    assert trace(JUMP, {"lead_name": "Jess Ruawai", "jumpers": 2}, cousin).missing == []
    assert trace(JUMP, {"lead_name": "Jess Ruawai", "jumpers": 3}, cousin).missing == ["jumpers"]
    kids = said("Gidday, Shane McKenzie here. Me and me two kids are keen as for the dolphin swim.")
    assert trace(TRIP, {"lead_name": "Shane McKenzie", "adults": 1, "children": 2}, kids).missing == []
    assert trace(TRIP, {"lead_name": "Shane McKenzie", "adults": 2, "children": 2}, kids).missing == ["adults"]
    pair = said("Priya Shah, it's me and my partner.")
    assert trace(TRIP, {"lead_name": "Priya Shah", "adults": 2, "children": 0}, pair).dropped == ["children"]


PANS = client_tool("order_pan", {
    "customer_name": {"type": "string", "description": "Full name of the customer"},
    "fulfilment": {"type": "string", "enum": ["pickup", "delivery"], "description": "Picked up or delivered"},
}, ["customer_name", "fulfilment"])


def test_a_choice_that_joins_a_verb_and_its_particle_is_named_by_them_apart() -> None:
    """ "I'll swing by and pick 'em up Friday": `pickup`, though the caller never said the word
    (fresh42's caterer asked back); a line that names neither is still asked."""
    picked = said("This is Troy Fontenot. Three half pans of gumbo, I'll swing by and pick 'em up Friday.")
    assert trace(PANS, {"customer_name": "Troy Fontenot", "fulfilment": "pickup"}, picked).missing == []
    neither = said("This is Troy Fontenot. Three half pans of gumbo for Friday.")
    assert trace(PANS, {"customer_name": "Troy Fontenot", "fulfilment": "pickup"}, neither).missing == ["fulfilment"]


GAME = client_tool("book_game", {
    "lead_name": {"type": "string", "description": "Full name of the organiser"},
    "players": {"type": "integer", "description": "Number of players; the premium package needs ten or more"},
}, ["lead_name", "players"])


def test_one_after_a_word_that_points_is_which_not_how_many() -> None:
    """ "The premium one with the three hundred balls": which package, not one player (fresh43 booked
    one player for "we are sixteen"); "just the one" is a count."""
    okes = said("Riaan van der Merwe. For the okes from work, we are sixteen. The premium one, hey.")
    assert trace(GAME, {"lead_name": "Riaan van der Merwe", "players": 1}, okes).missing == ["players"]
    assert trace(GAME, {"lead_name": "Riaan van der Merwe", "players": 16}, okes).missing == []
    alone = said("Riaan van der Merwe. Just the one player, the premium one.")
    assert trace(GAME, {"lead_name": "Riaan van der Merwe", "players": 1}, alone).missing == []
