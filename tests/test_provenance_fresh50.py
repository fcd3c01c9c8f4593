"""The rule read from fresh50 (a karaoke box in Singapore, generator repair in Lagos, roofing in
Fort Worth, a lechon house in Cebu), on a desk of its own shape."""

from __future__ import annotations

import pytest

from pipeline.tools.asks import asks_about_only


@pytest.mark.parametrize(("line", "about"), [
    ("Saturday night got any big table or not? For eight people.", True),  # whether there is
    ("Got parking or not at your Tampines branch?", True),
    ("Can book the big table or not? Saturday, eight people.", False),  # asks for the booking
    ("Help me book one table, got eight people. Can or not?", False),
])
def test_got_or_not_asks_whether_there_is(line: str, about: bool) -> None:
    assert asks_about_only(line) is about
