"""The rules read from fresh57 (a public sauna in Helsinki, a notary in Montreal, a water-tank
cleaner in Mumbai, a Crop Over band in Barbados): each behaviour on a desk of its own shape, not
the split's lines word for word."""

from __future__ import annotations

from pipeline.tools.provenance import trace
from pipeline.tools.schema import ToolSpec
from pipeline.tools.spoken import ValueKind
from pipeline.tools.spoken.kinds import kind_from_schema
from tests.test_provenance import said


def _tool(name: str, properties: dict, required: list[str]) -> ToolSpec:
    return ToolSpec.from_openai({"type": "function", "name": name, "description": f"{name} it.",
                                 "parameters": {"type": "object", "properties": properties, "required": required}})


SWIM = _tool("book_swim", {
    "swimmer_name": {"type": "string", "description": "The swimmer's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the swim"},
    "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
}, ["swimmer_name", "date", "time"])


def test_a_part_of_the_day_and_the_clock_after_a_comma_and_the_are_one_time() -> None:
    """ "on Sunday, in the evening, the eight o'clock one" booked 18:00: the evening settles the
    eight o'clock, and names no range of its own beside it. Across a sentence it does not ("in the
    evening. The eight o'clock one is full")."""
    line = said("It's Ola Berg. Saturday, in the evening, the seven o'clock one, please.")
    assert trace(SWIM, {"swimmer_name": "Ola Berg", "date": "2026-06-06", "time": "18:00"}, line).arguments["time"] == "19:00"
    assert trace(SWIM, {"swimmer_name": "Ola Berg", "date": "2026-06-06", "time": "19:00"}, line).missing == []
    apart = said("It's Ola Berg. Saturday in the evening. The seven o'clock one is full, I know.")
    assert trace(SWIM, {"swimmer_name": "Ola Berg", "date": "2026-06-06", "time": "19:00"}, apart).missing == []
    assert trace(SWIM, {"swimmer_name": "Ola Berg", "date": "2026-06-06", "time": "07:00"}, apart).missing == []


MOVE = _tool("move_visit", {
    "visit_ref": {"type": "string", "description": "The visit reference, e.g. V-1180"},
    "new_date": {"type": "string", "format": "date", "description": "The new day"},
    "new_time": {"type": "string", "description": "The new start time, HH:MM on the 24-hour clock"},
}, ["visit_ref", "new_date", "new_time"])
SURGERY = ("You answer the phone for Elm Row Surgery, open 8:00 to 19:00. The caller is Ruth Dale; on file: "
           "visit V-1180 on Thursday, June 4 at 18:00.")


def test_a_day_after_could_it_be_is_where_the_visit_goes_and_a_part_of_the_day_before_gives_no_time() -> None:
    """ "Her Thursday evening appointment ..., so could it be Friday the twelfth at ten?" was asked
    for the new day (the model wrote 2024-10-12) and let 17:30 through on "evening": the day after
    "could it be" is the one moved to, and the part of the day said of the old visit, before the
    clock time said, gives the new time nothing."""
    line = said("My Thursday evening visit, I'd rather come in the daytime, so could it be Friday the twelfth at ten?",
                instructions=SURGERY)
    traced = trace(MOVE, {"visit_ref": "V-1180", "new_date": "2024-10-12", "new_time": "17:30"}, line)
    assert traced.missing == [] and traced.arguments["new_date"] == "2026-06-12"
    assert traced.arguments["new_time"] == "10:00"
    evening = said("I finish at five, so any time in the evening on Friday would do.", instructions=SURGERY)
    assert trace(MOVE, {"visit_ref": "V-1180", "new_date": "2026-06-05", "new_time": "18:30"}, evening).missing == []


COPY = _tool("send_copy", {
    "client_file": {"type": "string", "description": "The client's file, e.g. 31-4407"},
    "document": {"type": "string", "enum": ["lease", "deed"], "description": "Which document"},
}, ["client_file", "document"])
LETTINGS = ("You answer the phone for Harbour Lettings. The caller is Omar Farouk, account 31-4407; on file: "
            "the lease of Flat 2. His sister, Hana Farouk, account 52-1190; on file: the deed of 9 Quay Street.")


def test_a_code_of_digits_said_whole_is_the_callers_and_another_on_file_is_not() -> None:
    """ "My file is, uh, nineteen, no, twenty-four, oh eight one seven." let the record's other
    client file (11-2290) through: a description's example of digits ("e.g. 24-0817") makes the
    argument a code, and a code of the record's said whole in its role rules out the record's
    others (here the one said is put in its place)."""
    assert kind_from_schema("client_file", COPY.parameters["properties"]["client_file"]) is ValueKind.CODE
    line = said("Could you send me a copy of the lease? My account is, um, thirty-one, forty-four oh seven.",
                instructions=LETTINGS)
    assert trace(COPY, {"client_file": "52-1190", "document": "lease"}, line).arguments["client_file"] == "31-4407"
    assert trace(COPY, {"client_file": "31-4407", "document": "lease"}, line).missing == []
