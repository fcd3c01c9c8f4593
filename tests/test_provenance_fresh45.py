"""The rules read from fresh45 and fresh46 (a register office, a sound-system hire in Kingston, stargazing tours
at Tekapo, a durian stall in Geylang): each behaviour on a desk of its own shape, not the split's
lines word for word."""

from __future__ import annotations

from pipeline.tools.callers import a_stranger, introduced
from pipeline.tools.moments import as_hhmm
from pipeline.tools.provenance import trace
from pipeline.tools.spoken.kinds import is_greeting
from tests.test_provenance import NOW, client_tool, said

HIRE = client_tool("book_set", {
    "organiser_name": {"type": "string", "description": "The organiser's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the event"},
    "start_time": {"type": "string", "description": "When the music starts, HH:MM on the 24-hour clock"},
}, ["organiser_name", "date", "start_time"])


def test_di_and_dis_are_the_and_this_and_a_weekday_and_its_date_are_one_day() -> None:
    """ "Saturday di twenty-seventh" is June 27 (a Saturday), not this Saturday, June 6."""
    line = said("Mi name Omar Reid. Book di set fi Saturday di twenty-seventh, from nine o'clock a night.")
    traced = trace(HIRE, {"organiser_name": "Omar Reid", "date": "2026-06-06", "start_time": "21:00"}, line)
    assert (traced.missing, traced.arguments["date"]) == ([], "2026-06-27")
    taken_back = said("Book it fi Shanice Walters, from three. Not dis Sunday, man. Di fourteenth.")
    traced = trace(HIRE, {"organiser_name": "Shanice Walters", "date": "2026-06-07", "start_time": "15:00"}, taken_back)
    assert traced.arguments["date"] == "2026-06-14"
    # and Shetland's and Trinidad's "da" and "de" (fresh47): "Sunday, da twenty-eighth", "Tuesday de sixteenth"
    for said_as, day in (("Ingrid Halcrow. I meant da Sunday, da twenty-eighth, fae three.", "2026-06-28"),
                         ("Devendra Singh. Book me Tuesday de sixteenth, three o'clock.", "2026-06-16")):
        traced = trace(HIRE, {"organiser_name": said_as.split(".")[0], "date": "2026-06-07", "start_time": "15:00"},
                       said(said_as))
        assert traced.arguments["date"] == day, said_as
    assert trace(HIRE, {"organiser_name": "Di Marco", "date": "2026-06-06", "start_time": "15:00"},
                 said("It's for Di Marco, Saturday at three.")).missing == []  # a capital Di is a name


TOUR = client_tool("book_tour", {
    "lead_name": {"type": "string", "description": "The lead guest's full name"},
    "date": {"type": "string", "format": "date", "description": "Night of the tour"},
    "departure_time": {"type": "string", "enum": ["18:00", "20:00", "22:00"],
                       "description": "Departure time from the office"},
}, ["lead_name", "date", "departure_time"])


def test_a_time_the_schema_lists_is_heard_as_a_time_and_is_one_of_its_list() -> None:
    """ "the eight o'clock" of a tour leaving at 18:00, 20:00 or 22:00 is 20:00: the model's 18:00
    no longer runs as the enum's pick (fresh45: it ran); a time said that is none of the list is
    asked about."""
    line = said("Josh Pemberton. The crater tour on Friday, the eight o'clock, please.")
    assert trace(TOUR, {"lead_name": "Josh Pemberton", "date": "2026-06-05", "departure_time": "20:00"}, line).missing == []
    assert trace(TOUR, {"lead_name": "Josh Pemberton", "date": "2026-06-05", "departure_time": "18:00"},
                 line).missing == ["departure_time"]
    off_list = said("Josh Pemberton. The crater tour on Friday at half seven.")
    assert trace(TOUR, {"lead_name": "Josh Pemberton", "date": "2026-06-05", "departure_time": "20:00"},
                 off_list).missing == ["departure_time"]


MOVE = client_tool("move_tour", {
    "booking_ref": {"type": "string", "description": "The booking reference"},
    "new_date": {"type": "string", "format": "date", "description": "The new night"},
    "new_start_time": {"type": "string", "description": "The new start, HH:MM on the 24-hour clock"},
}, ["booking_ref", "new_date", "new_start_time"])


def test_a_corrected_hour_keeps_the_half_of_the_day_read_back_and_the_first_sentence_says_it() -> None:
    """ "Ten o'clock, not nine" to "starting at 21:00" is 22:00, though the model wrote 10:00; "the
    eight o'clock, sorry. The kids have netball till half five" to "at 18:00" is 20:00, the reason's
    time told, not taken."""
    record = "On file: booking K-3307, Saturday, June 6 at 22:00."
    late = said("Move K-3307 to Friday the nineteenth, start nine o'clock.", "Ten o'clock, not nine. Nobody comes before ten.",
                           instructions=record,
                           asked=["", "I'll move K-3307 to Friday, June 19, starting at 21:00. Is that right?"])
    traced = trace(MOVE, {"booking_ref": "K-3307", "new_date": "2026-06-19", "new_start_time": "10:00"}, late)
    assert (traced.missing, traced.arguments["new_start_time"]) == ([], "22:00")
    reason = said("Move K-3307 to Sunday at six.", "Ah, actually the eight o'clock, sorry. The kids have got netball till half five.",
                  instructions=record, asked=["", "I'll move K-3307 to Sunday, June 7 at 18:00. Is that right?"])
    traced = trace(MOVE, {"booking_ref": "K-3307", "new_date": "2026-06-07", "new_start_time": "18:00"}, reason)
    assert traced.arguments["new_start_time"] == "20:00"


def test_a_time_written_with_more_beside_it_reaches_the_tool_as_its_time() -> None:
    assert as_hhmm("19:00 at 9 Mannings Hill Road, Kingston", NOW) == "19:00"
    assert as_hhmm("Friday 6 PM", NOW) == "18:00"
    assert as_hhmm("Friday 6 PM") is None  # no day to read it on: as before


ORDER = client_tool("order_fruit", {
    "customer_name": {"type": "string", "description": "The customer's full name"},
    "kg": {"type": "integer", "description": "Whole-fruit weight in kilograms"},
    "delivery_address": {"type": "string", "description": "Where to deliver"},
}, ["customer_name", "kg"])


def test_a_house_number_is_no_count_and_a_kilo_is_a_kilogram() -> None:
    no_count = said("Desmond Teo. Deliver to my office at 1 Raffles Place. How many kilo I don't know.")
    assert trace(ORDER, {"customer_name": "Desmond Teo", "kg": 1}, no_count).missing == ["kg"]
    kilo = said("I'm Rajesh Pillai. Red Prawn, six kilo, I collect tomorrow. Don't give me too ripe one ah.")
    assert trace(ORDER, {"customer_name": "Rajesh Pillai", "kg": 6}, kilo).missing == []


PARTY = client_tool("book_party", {
    "host_name": {"type": "string", "description": "The host's full name"},
    "package": {"type": "string", "enum": ["classic", "premium"], "description": "Which package"},
}, ["host_name", "package"])


def test_an_opening_sound_is_no_name_and_a_name_with_a_year_is_the_name() -> None:
    assert is_greeting("Aiyah") and is_greeting("Wah gwaan") and not is_greeting("Aisha")
    line = said("Book a party, classic. Name Gary Ong.", "Aiyah, change to premium lah.",
                asked=["", "A classic party for Gary Ong. Shall I book it?"])
    assert "host_name" in trace(PARTY, {"host_name": "Aiyah", "package": "premium"}, line).missing
    cert = client_tool("order_certificate", {
        "name_on_certificate": {"type": "string", "description": "The full name on the certificate"}},
        ["name_on_certificate"])
    year = said("A marriage cert for Tomás Griffin, married in 2019. Make that four copies.")
    assert trace(cert, {"name_on_certificate": "Tomás Griffin, 2019"}, year).arguments == {
        "name_on_certificate": "Tomás Griffin"}


def test_a_name_given_after_name_alone_is_the_callers() -> None:
    assert introduced(["Book it for Sunday at 4 Hope Road. Name Shanice Walters."]) == ["Shanice Walters"]
    assert introduced(["Wah gwaan. Mi name Omar Reid, R-E-I-D."]) == ["Omar Reid"]
    assert introduced(["The name Smith rings a bell."]) == []


CANCEL = client_tool("cancel_order", {
    "ref": {"type": "string", "description": "The order or party reference"}}, ["ref"])
STALL = ("The caller is Jasmine Lim; on file: order D-5531, Mao Shan Wang, delivery Saturday. Her father, "
         "Lim Chee Meng; on file: order D-5547, D24, collection Friday.")


def test_a_kinds_name_is_no_reference_and_kins_thing_off_file_is_not_the_records() -> None:
    """ "The D24 I order, the one I collect Friday" names a durian, not another order than D-5547;
    "My auntie order durian from you" is the auntie's order, and no auntie is on file."""
    line = said("Lim Chee Meng speaking. The D24 I order, the one I collect Friday, you cancel for me.", instructions=STALL)
    assert trace(CANCEL, {"ref": "D-5547"}, line).missing == []
    auntie = ["My auntie order durian from you for Saturday, but she go Malaysia already. Can cancel for her?"]
    assert a_stranger(auntie, STALL)
    assert trace(CANCEL, {"ref": "D-5531"}, said(*auntie, instructions=STALL)).missing == ["ref"]
    assert not a_stranger(["My father ordered durian for Friday, can cancel?"], STALL)  # on file
    assert not a_stranger(["My dad had a fall, so cancel my Saturday one."], STALL)  # no thing of his


def test_the_morra_and_a_week_from_friday_and_a_buddy_who_has_a_thing() -> None:
    """Read from fresh46: "the morra night" is tomorrow (the north's "the morrow"); "week from
    Friday", no "a", is a week after that Friday (not "for one week, from Monday"); "My buddy's got a
    trailer-load he's sellin' me" makes no caller a stranger to their own record ("my buddy's
    repair" still does)."""
    pitch = client_tool("book_pitch", {
        "booker_name": {"type": "string", "description": "The booker's full name"},
        "date": {"type": "string", "format": "date", "description": "Day of the game"}}, ["booker_name", "date"])
    line = said("Can I book a five-a-side for the morra night, seven o'clock? Name's Darren Hedley.")
    assert trace(pitch, {"booker_name": "Darren Hedley", "date": "2026-06-30"}, line).arguments["date"] == "2026-06-04"
    later = said("Darren Hedley. Book us in week from Friday, afternoon's fine.")
    assert trace(pitch, {"booker_name": "Darren Hedley", "date": "2026-06-05"}, later).arguments["date"] == "2026-06-12"
    week = said("Darren Hedley. Two pitches for one week, from Monday.")
    assert trace(pitch, {"booker_name": "Darren Hedley", "date": "2026-06-08"}, week).missing == []
    record = "The caller is Cody Dietert; on file: delivery D-7745 of 20 bags of deer corn on Tuesday, June 9."
    assert not a_stranger(["Cancel that deer corn for Tuesday. My buddy's got a whole trailer-load he's sellin' me."], record)
    assert a_stranger(["Can you cancel my buddy's deer corn?"], record)
    # a friend's or off-file kin's booking, told of as theirs: not the record's
    assert a_stranger(["Me mate booked a pitch for Sunday but he's done his ankle in, can ye cancel it for him?"], record)
    assert a_stranger(["Please, my uncle booked your people for his water testing. Cancel it for him."], record)
    assert not a_stranger(["My son booked the deer corn, can I move it?"], record + " His son, Cody, on file too.")
