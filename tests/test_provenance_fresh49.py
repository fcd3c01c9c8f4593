"""The rules read from fresh49 (kente weavers near Kumasi, a custom harvester in Kansas, a badminton
hall in Kuala Lumpur, camel treks at Alice Springs): each on a desk of its own shape."""

from __future__ import annotations

from pipeline.tools.provenance import trace
from tests.test_provenance import client_tool, said

RIDE = client_tool("book_ride", {
    "rider_name": {"type": "string", "description": "The lead rider's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the ride"},
    "time": {"type": "string", "description": "Departure, HH:MM on the 24-hour clock"},
}, ["rider_name", "date", "time"])


def test_the_time_then_one_is_the_one_at_that_time() -> None:
    """ "the ten-thirty one" is the 10:30 departure, not 10:31 (which ran)."""
    line = said("Nadia Costa. Tomorrow, the ten-thirty one, please.")
    assert trace(RIDE, {"rider_name": "Nadia Costa", "date": "2026-06-04", "time": "10:31"}, line).missing == ["time"]
    assert trace(RIDE, {"rider_name": "Nadia Costa", "date": "2026-06-04", "time": "10:30"}, line).missing == []
    exact = said("Nadia Costa. Tomorrow at ten thirty-one, please.")  # said as a time, it is one
    assert trace(RIDE, {"rider_name": "Nadia Costa", "date": "2026-06-04", "time": "10:31"}, exact).missing == []


def test_next_weekday_after_not_this_one_is_the_week_after() -> None:
    """ "not this Saturday, next Saturday" said on a Wednesday is June 13; this Saturday, June 6,
    ran as the model wrote it."""
    line = said("Nadia Costa, Saturday at ten.", "Sorry, not this Saturday, next Saturday. This week she's away.",
                asked=["", "A ride for Nadia Costa on Saturday, June 6 at 10:00. Shall I book it?"])
    traced = trace(RIDE, {"rider_name": "Nadia Costa", "date": "2026-06-06", "time": "10:00"}, line)
    assert traced.arguments["date"] == "2026-06-13"
