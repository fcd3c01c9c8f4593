"""The rules read from fresh50 and one from fresh47 (a karaoke box in Singapore, generator repair in Lagos, roofing in
Fort Worth, a lechon house in Cebu), on a desk of its own shape."""

from __future__ import annotations

import pytest

from pipeline.tools.asks import asks_about_only
from pipeline.tools.people import party


@pytest.mark.parametrize(("line", "about"), [
    ("Saturday night got any big table or not? For eight people.", True),  # whether there is
    ("Got parking or not at your Tampines branch?", True),
    ("Can book the big table or not? Saturday, eight people.", False),  # asks for the booking
    ("Help me book one table, got eight people. Can or not?", False),
])
def test_got_or_not_asks_whether_there_is(line: str, about: bool) -> None:
    assert asks_about_only(line) is about


def test_young_uns_and_grandbabies_are_counted_as_children() -> None:
    """fresh47's "Me and my two young'uns": three people, two of them children (the words were
    not read as people at all)."""
    assert party("Me and my two young'uns wanna come Sunday") == (3, 1, 2)
    assert party("me and my husband and our two grandbabies") == (4, 2, 2)
    assert party("me and the kiddies") is None  # how many is not said
