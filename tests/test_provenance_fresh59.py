"""The rules read from fresh59 (a heritage museum in Singapore, towing in Houston, home cleaning in
Nairobi, portable toilet hire on the Sunshine Coast): each behaviour on a desk of its own shape,
not the split's lines word for word."""

from __future__ import annotations

from pipeline.tools.provenance import trace
from pipeline.tools.spoken.codes import code_said
from tests.test_provenance import client_tool, said

TOUR = client_tool("book_walk", {
    "leader_name": {"type": "string", "description": "The group leader's full name"},
    "group_size": {"type": "integer", "description": "How many people"},
}, ["leader_name", "group_size"])


def test_just_him_alone_is_one() -> None:
    """ "My father is coming in on Tuesday ... The English one at four o'clock, just him alone." was
    refused its group of one: "just him", "her alone", "on his own" count one, as "just me" does."""
    for words in ("just him alone", "only her", "on his own", "by herself"):
        line = said(f"It's for my dad, Ray Cole. Book the walk, {words}.")
        assert trace(TOUR, {"leader_name": "Ray Cole", "group_size": 1}, line).missing == [], words
    assert trace(TOUR, {"leader_name": "Ray Cole", "group_size": 1}, said("It's for my dad, Ray Cole, and his pals.")).missing \
        == ["group_size"]


RELEASE = client_tool("release_car", {
    "plate": {"type": "string", "description": "The car's plate, e.g. AB1 2CD"},
    "address": {"type": "string", "description": "Where the caller lives"},
}, ["plate", "address"])


def test_a_value_put_right_in_the_same_breath_is_not_the_first_one() -> None:
    """ "The plate is K, seven, Q, uh, two two nine one, no, two two nine zero." let K7Q2291 through,
    and "house number twenty-two, sorry, twenty-four, and the landlord wants it cleaned" and
    "Kawana Way, Nah, Lake Kawana Boulevard" went through as addresses: a code whose end is said
    again after "no" is not said there, and an address or a name holding a take-back is not one."""
    text = "The plate is K seven Q two two nine one, no, two two nine zero."
    assert code_said("K7Q2291", text) is None
    assert code_said("K7Q2291", "The plate is K seven Q two two nine one, no problem.") is not None
    line = said(text + " I'm at 24 Mill Road.")
    assert trace(RELEASE, {"plate": "K7Q2291", "address": "24 Mill Road"}, line).missing == ["plate"]
    moved = said("The plate is K seven Q two two nine zero. I'm at Mill Road, house twenty-two, sorry, twenty-four.")
    assert "address" in trace(RELEASE, {"plate": "K7Q2290", "address": "Mill Road, house twenty-two, sorry, twenty-four"},
                              moved).missing
