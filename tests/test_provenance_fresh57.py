"""The rules read from fresh57 (a public sauna in Helsinki, a notary in Montreal, a water-tank
cleaner in Mumbai, a Crop Over band in Barbados): each behaviour on a desk of its own shape, not
the split's lines word for word."""

from __future__ import annotations

from pipeline.tools.provenance import trace
from pipeline.tools.spoken import ValueKind
from pipeline.tools.spoken.kinds import kind_from_schema
from tests.test_provenance import client_tool, said

SWIM = client_tool("book_swim", {
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


MOVE = client_tool("move_visit", {
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


COPY = client_tool("send_copy", {
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


PASSES = client_tool("buy_pass", {
    "holder": {"type": "string", "description": "The pass holder's full name"},
    "pass_type": {"type": "string", "enum": ["weekly", "annual"], "description": "Which pass"},
}, ["holder", "pass_type"])
SLOTS = client_tool("book_slot", {
    "customer_name": {"type": "string", "description": "The customer's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the visit"},
    "slot_time": {"type": "string", "enum": ["08:00", "10:00", "13:00", "15:00"], "description": "Start of the slot"},
}, ["customer_name", "date", "slot_time"])


def test_a_choice_asked_between_turned_down_or_named_by_a_part_of_the_day_is_not_the_callers() -> None:
    """Three picks nobody made (fresh57): "Which ones do you have, the ten times or the month? Ah,
    I'll decide later" (asked between two); "Move me to a different section, please, I tired of
    Flying Fish" (the one turned down); "tomorrow ... Morning time is better" for slots at 9:00 and
    11:00 (a part of the day holding two slots). Said outright, or with "whichever", each stands."""
    asked = said("It's Jo Hart. Do you do a weekly or an annual pass? I'll think about it, just put me down.")
    assert trace(PASSES, {"holder": "Jo Hart", "pass_type": "weekly"}, asked).missing == ["pass_type"]
    either = said("It's Jo Hart. A weekly or an annual pass, whichever, I don't mind.")
    assert trace(PASSES, {"holder": "Jo Hart", "pass_type": "weekly"}, either).missing == []
    tired = said("It's Jo Hart. Change my pass, I'm sick of the weekly one.")
    assert trace(PASSES, {"holder": "Jo Hart", "pass_type": "weekly"}, tired).missing == ["pass_type"]
    morning = said("It's Jo Hart, for tomorrow. Morning time is better.")
    assert trace(SLOTS, {"customer_name": "Jo Hart", "date": "2026-06-04", "slot_time": "08:00"}, morning).missing == ["slot_time"]
    ten = said("It's Jo Hart, for tomorrow morning at ten.")
    assert trace(SLOTS, {"customer_name": "Jo Hart", "date": "2026-06-04", "slot_time": "10:00"}, ten).missing == []
    afternoon = said("It's Jo Hart, tomorrow, but not before lunch: the afternoon.")
    assert trace(SLOTS, {"customer_name": "Jo Hart", "date": "2026-06-04", "slot_time": "13:00"}, afternoon).missing == ["slot_time"]


def test_i_must_say_asks_for_nothing() -> None:
    """ "Last time your boys did a superb job ... Very happy, I must say." was offered a look-up:
    "I must say" is a way of telling, no request ("must" is one elsewhere)."""
    from pipeline.tools.asks import tells_only
    assert tells_only("Last time your lads did a grand job, they even swept up. Very happy, I must say.", "", [SLOTS])
    assert not tells_only("Your lads did a grand job last time. I must book them again.", "", [SLOTS])


REGISTER = client_tool("register_player", {
    "player_name": {"type": "string", "description": "The player's full name"},
    "team": {"type": "string", "enum": ["red_kites", "blue_herons"], "description": "Which team"},
    "nickname": {"type": "string", "description": "What the team calls them, if the caller said"},
}, ["player_name", "team"])


def test_another_arguments_choice_is_no_name() -> None:
    """ "No, no, Sugar Apple. I mix up de names. Sugar Apple, frontline." registered a masquerader
    named "Sugar Apple", the section: a name that is one of the tool's other arguments' choices is
    that choice, no one's name (re-judging also dropped an `occasion` "Lab 13", the room)."""
    line = said("It's Sam Reid. No, no, the Red Kites. I mix up the names. Red Kites.")
    assert trace(REGISTER, {"player_name": "Red Kites", "team": "red_kites"}, line).missing == ["player_name"]
    assert trace(REGISTER, {"player_name": "Sam Reid", "team": "red_kites", "nickname": "Red Kites"}, line).dropped == ["nickname"]
    assert trace(REGISTER, {"player_name": "Sam Reid", "team": "red_kites"}, line).missing == []


TEES = client_tool("order_tees", {
    "buyer_name": {"type": "string", "description": "The buyer's full name"},
    "size": {"type": "string", "enum": ["XS", "S", "M", "L", "XL", "XXL"], "description": "T-shirt size"},
}, ["buyer_name", "size"])


def test_a_clothing_size_said_in_words_is_its_letters() -> None:
    """ "Register my lil sister too ... size medium" left `costume_size` "M" out as nobody's; "Nah,
    extra large, man" put right no read-back: sizes written as letters are said in words, each
    phrase whole ("extra large" is XL, not L), and "I'm", "it's" say no M or S."""
    from pipeline.tools.spoken.names import choice_words_said
    sizes = ("XS", "S", "M", "L", "XL", "XXL")
    assert choice_words_said(sizes, "Backline, size medium.") == {"M": 1}
    assert choice_words_said(sizes, "Nah, extra large, man.") == {"XL": 1}
    assert choice_words_said(sizes, "Double extra large, he's a big lad.") == {"XXL": 1}
    assert choice_words_said(sizes, "I'm sure it's fine.") == {}
    line = said("It's Ife Bello. One shirt, a large, please.")
    assert trace(TEES, {"buyer_name": "Ife Bello", "size": "XL"}, line).arguments["size"] == "L"
