"""Whose the record is and which of its people a line means, numbers said over or in total, and a
day told roughly: the rules read from fresh31's failures (2026-12-05), each shown in another desk
than the line it was read from."""

from __future__ import annotations

from pipeline.tools.asks import tells_only
from pipeline.tools.callers import a_stranger, introduced
from pipeline.tools.provenance import trace
from pipeline.tools.record import FULL_NAME, the_callers_name
from pipeline.tools.spoken.times import days_named

from .test_provenance import NOW, client_tool, said

GOLF = ("You answer the phone for Lundin Links Golf Club. The caller is Tom Reid, member GC-1042, of 8 "
        "Links Road, Lundin Links KY8 6AT, mobile 07700 900411. His granddaughter, Ella Reid, age 12, "
        "member GC-2077, has a junior membership; Tom often books for her.")

LESSON = client_tool("book_lesson", {
    "golfer_name": {"type": "string", "description": "Full name of the golfer"},
    "date": {"type": "string", "format": "date", "description": "Day of the lesson"},
}, ["golfer_name", "date"])

WINDOWS = ("You answer the phone for Clearview Window Cleaning. The caller is Jan Cole, account WC-3301, "
           "of 4 Mill Lane; her clean is every other Tuesday. She also manages the account of her "
           "mother, Rita Cole, account WC-3390, of 9 Park Row; her clean is every fourth Friday.")

MISSED = client_tool("report_missed_clean", {
    "account_code": {"type": "string", "description": "The customer's account code, e.g. WC-1234"},
}, ["account_code"])


def test_a_kin_on_file_as_a_member_is_given_where_the_caller_speaks_of_them() -> None:
    """ "Put our Ella in for a lesson": the granddaughter on file, a member of her own, is the
    golfer (fresh31's fishery refused the grandson); a line that names nobody is not hers."""
    ours = said("Put our Ella in for a lesson on Friday, will you? She's been nagging me.", instructions=GOLF)
    assert trace(LESSON, {"golfer_name": "Ella Reid", "date": "2026-06-05"}, ours).missing == []
    nobody = said("Can I book a lesson on Friday?", instructions=GOLF)
    assert trace(LESSON, {"golfer_name": "Ella Reid", "date": "2026-06-05"}, nobody).missing == ["golfer_name"]


def test_of_two_accounts_the_callers_own_where_the_line_points_at_neither() -> None:
    """ "Nothing got done yesterday": the caller's own account, not her mother's, which the model
    may have written instead; "me mam's windows" is her mother's, though she says her own name."""
    own = said("Nobody turned up yesterday, the windows are filthy.", instructions=WINDOWS)
    assert trace(MISSED, {"account_code": "WC-3301"}, own).missing == []
    assert trace(MISSED, {"account_code": "WC-3390"}, own).arguments == {"account_code": "WC-3301"}
    mams = said("It's Jan. Nobody came to do me mam's windows on Friday.", instructions=WINDOWS)
    assert trace(MISSED, {"account_code": "WC-3390"}, mams).missing == []
    assert trace(MISSED, {"account_code": "WC-3301"}, mams).arguments == {"account_code": "WC-3390"}


def test_a_caller_who_gives_a_name_the_record_lacks_gave_none_of_its_values() -> None:
    """ "It's Geordie Bell", "it's Marty here", "I'm ringing for me neighbour": the record is
    someone else's; "It's Lewis, not Liam" and "It's Unit 4" are no introductions of the caller."""
    for line in ("Aye, hello there. It's Geordie Bell, up at Ridge Farm. Can somebody come out?",
                 "Right, it's Marty here, Marty Devlin. Friday, please.",
                 "I'm ringing for me neighbour, she's no idea what her account is."):
        assert a_stranger([line], GOLF), line
    for line in ("It's Lewis, not Liam. L-E-W-I-S.", "Can you collect it from my office? It's Unit 4, Station Way.",
                 "It's Tom. Put our Ella in on Friday."):
        assert not a_stranger([line], GOLF), line
    stranger = said("It's Geordie Bell. Can you book me a lesson on Friday?", instructions=GOLF)
    assert trace(LESSON, {"golfer_name": "Ella Reid", "date": "2026-06-05"}, stranger).missing == ["golfer_name"]


def test_a_name_with_a_capital_inside_or_an_accent_is_a_full_name() -> None:
    """ "Niamh McCartan", "Ciarán Ó Dálaigh": the caller on file, whose name the session booked
    for a child's instead where the record's name was not read as one."""
    assert the_callers_name("The caller is Niamh McCartan, customer code JJ-7712.") == "Niamh McCartan"
    assert [m.group(0) for m in FULL_NAME.finditer("Gráinne McAuley and Ciarán Doherty")] == [
        "Gráinne McAuley", "Ciarán Doherty"]
    swim = client_tool("book_session", {
        "adult_name": {"type": "string", "description": "Full name of the adult booking"},
        "children": {"type": "integer", "description": "How many children"},
    }, ["adult_name", "children"])
    record = "The caller is Niamh McCartan, customer code JJ-7712; her children are Oisín and Saoirse."
    line = said("Niamh here. Could I get a session for me and the two of mine? Oisín and Saoirse.", instructions=record)
    assert trace(swim, {"adult_name": "Oisín", "children": 2}, line).arguments == {
        "adult_name": "Niamh McCartan", "children": 2}


def test_a_total_is_the_head_count_and_a_number_said_over_is_the_one_said_instead() -> None:
    """ "my two and my sister's three, so five altogether" is the count of children; "About eighteen
    weans, no, put twenty" is twenty; "six months, no twelve" is not twelve."""
    play = client_tool("book_play", {
        "children": {"type": "integer", "description": "How many children"},
        "socks": {"type": "integer", "description": "Pairs of grip socks to buy, if any"},
    }, ["children"])
    total = said("There'll be, let me count, my two and my sister's three, so five altogether.")
    assert trace(play, {"children": 5}, total).missing == []
    party = client_tool("book_party", {"guests": {"type": "integer", "description": "How many children"}}, ["guests"])
    over = said("About eighteen weans, no, put twenty, she's asking the whole class.")
    assert trace(party, {"guests": 18}, over).arguments == {"guests": 20}
    plan = client_tool("set_plan", {"months": {"type": "integer", "description": "Months to pay over"}}, ["months"])
    assert trace(plan, {"months": 6}, said("Ach, make it six months, no twelve. Twelve's a lot in one go.")).missing == []


def test_thanks_passed_on_and_a_rough_while_ask_for_nothing() -> None:
    """ "I just wanted to pass on my thanks" tells only; "in a week or so" names no day, and its
    "or" does not make the days after it a choice."""
    assert tells_only("Callum sorted her feet out after she went lame and she's been sound since. "
                      "I just wanted to pass on my thanks.", "", [LESSON])
    assert days_named("I'm in hospital Monday and I'll be in a week or so, so stop it from Monday and "
                      "start again Wednesday the seventeenth.", NOW) == ["2026-06-08", "2026-06-17"]


def test_the_person_served_is_the_one_who_gave_their_name_not_the_one_they_named() -> None:
    """ "... she's called Pepper. I'm Dawn Fenwick": the customer is Dawn Fenwick, not the mare
    (fresh31); a guest registered by name ("Name is Farhan Qureshi") and one a member books for
    keep theirs, and "It Ruaridh" is no name."""
    shoe = client_tool("book_shoeing", {
        "customer_name": {"type": "string", "description": "The owner's full name"},
        "horse_name": {"type": "string", "description": "The horse's name"},
    }, ["customer_name", "horse_name"])
    line = said("I've just moved me mare up to Hill Top Stables. She needs a full set, she's called Pepper. "
                "I'm Dawn Fenwick, F-E-N-W-I-C-K.")
    assert trace(shoe, {"customer_name": "Pepper", "horse_name": "Pepper"}, line).arguments["customer_name"] == "Dawn Fenwick"
    guest = client_tool("register_guest", {
        "member_name": {"type": "string", "description": "The member's full name"},
        "guest_name": {"type": "string", "description": "The guest's full name"},
    }, ["member_name", "guest_name"])
    divya = said("Hi, this is Divya Menon, I'm a member. For my guest tomorrow, Meenakshi Iyer, please.")
    assert trace(guest, {"member_name": "Divya Menon", "guest_name": "Meenakshi Iyer"}, divya).missing == []
    assert introduced(["It's Ruaridh, R-U-A-R-I-D-H, Sinclair."]) == ["Ruaridh"]
    assert introduced(["Can you come out? It's School Lane, by the church."]) == []


def test_a_code_written_as_only_its_letters_is_the_code_said() -> None:
    """ "account H D, four two double eight" written "HD", "the reference is F, seven seven two
    one" written "F": the letters alone were never the caller's code; the code they begin is."""
    report = client_tool("report_problem", {
        "account_code": {"type": "string", "description": "The customer's account code"},
    }, ["account_code"])
    line = said("Morning, it's Mrs Okafor, account H D, four two double eight. A bottle was smashed on the step.")
    assert trace(report, {"account_code": "HD"}, line).arguments == {"account_code": "HD4288"}
    cancel = client_tool("cancel_booking", {"booking_ref": {"type": "string", "description": "The booking reference"}},
                         ["booking_ref"])
    ref = said("Hello, I need to cancel a booking, the reference is F, seven seven two one.")
    assert trace(cancel, {"booking_ref": "F"}, ref).arguments == {"booking_ref": "F7721"}


# --- read from fresh32 (2026-12-05) ---------------------------------------------------------------

def test_a_code_named_by_its_kind_is_a_code_and_its_name_is_no_part_of_it() -> None:
    """ "The Eircode of the property" holds a code, not a name: "KS-0918", the mother's account,
    is none of it, and the one on file for her is; "Eircode H54 P8D5", as the model copied it,
    is the code H54 P8D5. An account's code is no scooter's either."""
    desludge = client_tool("book_desludge", {
        "customer_name": {"type": "string", "description": "Full name of the customer"},
        "eircode": {"type": "string", "description": "The Eircode of the property"},
    }, ["customer_name", "eircode"])
    record = ("Jobs are found by the Eircode of the property. The calling number is on file for Paddy Hession, "
              "account KS-1042, of Cloonfush, Tuam, Eircode H54 R6K2. His mother, Nora Hession, account KS-0918, "
              "of Gardenfield, Tuam, Eircode H54 W3P9.")
    mother = said("Could ye do me mother's tank as well? Ye have her down already, Nora Hession.", instructions=record)
    assert trace(desludge, {"customer_name": "Nora Hession", "eircode": "H54 W3P9"}, mother).missing == []
    assert trace(desludge, {"customer_name": "Nora Hession", "eircode": "KS-0918"}, mother).arguments["eircode"] \
        != "KS-0918"
    own = said("Book a lorry to empty the tank. Tom Cunniffe, Eircode H54 P8D5.")
    assert trace(desludge, {"customer_name": "Tom Cunniffe", "eircode": "Eircode H54 P8D5"}, own).arguments == {
        "customer_name": "Tom Cunniffe", "eircode": "H54 P8D5"}
    service = client_tool("book_service", {
        "scooter_ref": {"type": "string", "description": "The reference of the customer's scooter, e.g. SC-4471"},
    }, ["scooter_ref"])
    scooters = ("The calling number is on file for Glenys Williams, account OM-2290; her own large scooter is "
                "SC-4471.")
    assert trace(service, {"scooter_ref": "OM-2290"}, said("Can I get me scooter in for a service?",
                                                          instructions=scooters)).arguments == {"scooter_ref": "SC-4471"}


def test_a_tools_one_count_counts_the_things_its_choices_name_and_an_order_is_a_new_thing() -> None:
    """ "Could you deliver four lemon sole tomorrow? ... it's 2 Chapel Street": four is the
    quantity, by the product it counts (fresh32: refused, two numbers said and no word naming
    either); the record's "60 concrete blocks" on a booked delivery is labelled by its own words,
    no count of a new collection by the tool's choices."""
    order = client_tool("place_order", {
        "product": {"type": "string", "enum": ["cod", "lemon_sole", "kippers"], "description": "What to order"},
        "quantity": {"type": "integer", "description": "How many portions"},
        "address": {"type": "string", "description": "Where to deliver"},
    }, ["product", "quantity"])
    line = said("We're at 2 Chapel Street. Could you deliver four lemon sole tomorrow?")
    assert trace(order, {"product": "lemon_sole", "quantity": 4, "address": "2 Chapel Street"}, line).missing == []
    blocks = client_tool("order_collection", {
        "product": {"type": "string", "enum": ["cement", "concrete_blocks"], "description": "What to collect"},
        "quantity": {"type": "integer", "description": "How many"},
    }, ["product", "quantity"])
    record = "The caller is Sharon Magee, account LB-8120; on file: delivery order D-90241, 60 concrete blocks, on June 9."
    told = said("Can I get some concrete blocks put by for collection?", instructions=record)
    assert trace(blocks, {"product": "concrete_blocks", "quantity": 60}, told).missing == ["quantity"]


def test_a_newcomer_a_letters_word_and_a_names_spelling_give_no_value() -> None:
    """ "Eileen Moss, I've not used you before": the record's address is not hers. "No, V. V for
    Victor, not B." names nobody Victor. "Martin Fahy, F-A-H-Y. Eircode H five four, N two Y six.":
    the spelling is no Eircode, and the code said is."""
    repair = client_tool("book_repair_visit", {
        "customer_name": {"type": "string", "description": "Full name of the customer"},
        "address": {"type": "string", "description": "Where the scooter is"},
    }, ["customer_name", "address"])
    record = "The calling number is on file for Glenys Williams, account OM-2290, of 7 Bryniau Road, Llandudno."
    new = said("The brakes are squealing. Tomorrow afternoon's fine. Eileen Moss, I've not used you before.",
               instructions=record)
    assert trace(repair, {"customer_name": "Eileen Moss", "address": "7 Bryniau Road, Llandudno"}, new).missing == ["address"]
    callout = client_tool("emergency_callout", {
        "customer_name": {"type": "string", "description": "Full name of the customer"},
        "eircode": {"type": "string", "description": "The Eircode of the property"},
    }, ["customer_name", "eircode"])
    victor = said("No, V. V for Victor, not B. V nine C one.")
    assert "customer_name" in trace(callout, {"customer_name": "Victor", "eircode": "H54 V9C1"}, victor).missing
    fahy = said("I'm selling the house. Martin Fahy, F-A-H-Y. Eircode H five four, N two Y six.")
    assert trace(callout, {"customer_name": "Martin Fahy", "eircode": "F-A-H-Y"}, fahy).arguments["eircode"] == "H54N2Y6"


# --- read from fresh33 (2026-12-05) ---------------------------------------------------------------

def test_the_parent_or_the_buyer_is_the_caller_whoever_they_book_for() -> None:
    """ "... a birthday party for my daughter Ruby ... I'm Kylie Nguyen": the parent is Kylie,
    though the caller books for another (fresh33: the party ran for the parent "Ruby Nguyen")."""
    party = client_tool("book_party", {
        "parent_name": {"type": "string", "description": "Full name of the parent booking"},
        "child_name": {"type": "string", "description": "The birthday child's name"},
    }, ["parent_name", "child_name"])
    line = said("I'm after a birthday party for my daughter Ruby, she's turning nine. I'm Kylie Nguyen.")
    assert trace(party, {"parent_name": "Ruby Nguyen", "child_name": "Ruby"}, line).arguments == {
        "parent_name": "Kylie Nguyen", "child_name": "Ruby"}


def test_so_many_of_us_is_a_tools_one_count_whatever_it_counts() -> None:
    """ "There'll be, uh, ten of us. Saturday the twentieth, say seven pm?": ten is the drivers
    (fresh33: the model's 12 was refused, and the ten said not found in its place)."""
    karts = client_tool("book_session", {
        "session_type": {"type": "string", "enum": ["grand_prix", "junior"], "description": "Which session"},
        "drivers": {"type": "integer", "description": "How many will drive"},
    }, ["session_type", "drivers"])
    line = said("I wanna book a grand prix. There'll be, uh, ten of us. Saturday the twentieth, say seven pm?")
    assert trace(karts, {"session_type": "grand_prix", "drivers": 12}, line).arguments["drivers"] == 10


def test_a_value_of_someone_else_on_file_is_not_the_callers_unless_they_point_at_them() -> None:
    """ "Eileen here. Could you send one of your boxes out to me at the house?": the caller on file
    is Eileen, and her son's address (his sentence of the record) is not hers (fresh33); "my son's
    house" points at it."""
    box = client_tool("send_postal_box", {
        "customer_name": {"type": "string", "description": "Full name of the customer"},
        "postal_address": {"type": "string", "description": "Where to post the box"},
    }, ["customer_name", "postal_address"])
    record = ("The caller is Eileen McCartan, customer code HS-5502, of 12 Cherryvalley Park, Belfast BT5 6PN. "
              "Her son, Ciarán McCartan, customer code HS-5519, of 41 Castle Street, Comber BT23 5DY.")
    own = said("Eileen here. Could you send one of your boxes out to me at the house?", instructions=record)
    sons = {"customer_name": "Eileen McCartan", "postal_address": "41 Castle Street, Comber BT23 5DY"}
    assert trace(box, sons, own).missing == ["postal_address"]
    assert trace(box, {**sons, "postal_address": "12 Cherryvalley Park, Belfast BT5 6PN"}, own).missing == []
    pointed = said("Eileen here. Could you send one of your boxes to my son's house?", instructions=record)
    assert trace(box, sons, pointed).missing == []


# --- read from fresh34 (2026-12-05) ---------------------------------------------------------------

def test_so_many_people_are_the_guests_and_a_verb_names_no_number() -> None:
    """ "about eighty people" is the guests (fresh34: refused, "people" naming no argument); "Can I
    get number fourteen as an eight by ten?" gives image 14 ("get" is no noun the number labels)."""
    quote = client_tool("request_quote", {
        "phone_number": {"type": "string", "description": "Number to ring back"},
        "guests": {"type": "integer", "description": "Roughly how many guests"},
    }, ["phone_number", "guests"])
    line = said("We'd be looking at about eighty people. My mobile's oh eight seven, two two three, four five nine one.")
    assert trace(quote, {"phone_number": "087 223 4591", "guests": 80}, line).missing == []
    prints = client_tool("order_prints", {
        "image_number": {"type": "string", "description": "The image number in the gallery"},
        "copies": {"type": "integer", "description": "How many copies"},
    }, ["image_number", "copies"])
    asked = said("Can I get number fourteen as an eight by ten? Two copies.")
    assert trace(prints, {"image_number": "14", "copies": 2}, asked).missing == []


# --- read from fresh35 (2026-12-05; judged on fresh37) -----------------------------------------------

def test_the_weekday_after_is_the_one_after_the_last_day_said() -> None:
    """ "Saturday's a no-go. Could we go the Saturday after instead?" is June 13 (fresh35: the
    booking's June 6 ran); "The job on the twelfth ... the Friday after" the 19th; "we fly out
    Sunday the fourteenth and we're back the Saturday after" the 20th; in "the Saturday after the
    wedding" the "after" belongs to the wedding, and the Saturday is read as it was."""
    from pipeline.tools.spoken.times import days_named
    assert days_named("Keith's put his back out, so Saturday's a no-go. Could we go the Saturday after instead?", NOW) \
        == ["2026-06-13"]
    assert days_named("The job on the twelfth, would ye push it out to the Friday after?", NOW) == ["2026-06-12", "2026-06-19"]
    assert days_named("We fly out Sunday the fourteenth and we're back the Saturday after.", NOW) == ["2026-06-14", "2026-06-20"]
    assert days_named("Can we do the Saturday after the wedding?", NOW) == ["2026-06-06"]


# --- read from fresh37 (2026-12-05) ----------------------------------------------------------------

def test_a_name_and_an_address_opening_a_sentence_introduce_the_caller() -> None:
    """ "Monday at half past eight? Yusuf Jacobs, 4 Durban Road, Wynberg." gives the caller's own
    name (fresh37's locksmith booked the record's caller, at his address); "send it to Mary Jones,
    4 Durban Road" gives someone else's."""
    assert introduced(["Monday at half past eight? Yusuf Jacobs, 4 Durban Road, Wynberg."]) == ["Yusuf Jacobs"]
    assert introduced(["Samples, please. Aisha Rahman, seven Clifton Dale, York."]) == ["Aisha Rahman"]
    assert introduced(["Could you send it to Mary Jones, 4 Durban Road?"]) == []
    line = said("I'd like a window cleaned on Monday. Dev Patel, 12 Orchard Close.", instructions=WINDOWS)
    assert a_stranger(line.said, WINDOWS)
    clean = client_tool("book_clean", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "address": {"type": "string", "description": "The address to clean"},
        "date": {"type": "string", "format": "date", "description": "Day of the clean"},
    }, ["customer_name", "address", "date"])
    traced = trace(clean, {"customer_name": "Jan Cole", "address": "4 Mill Lane", "date": "2026-06-08"}, line)
    assert "address" in traced.missing and traced.arguments["customer_name"] != "Jan Cole"


GIFTS = ("You answer the phone for Hollin Spa. The caller is Maya Holt, client HS-118, gift card GC-5521 "
         "with £40 left on it. Her partner, Sam Holt, client HS-120, gift card GC-5530 with £15 left on it.")

MASSAGE = client_tool("book_massage", {
    "client_name": {"type": "string", "description": "Full name of the client"},
    "date": {"type": "string", "format": "date", "description": "Day of the massage"},
    "gift_card": {"type": "string", "description": "Gift card code to pay with, if the caller asked"},
    "therapist": {"type": "string", "description": "The therapist's name, if the caller asked for one"},
}, ["client_name", "date"])


def test_an_optional_code_on_file_the_caller_names_by_its_word_is_given() -> None:
    """ "Put it on my gift card": the card on file, though its code was never said (fresh40's
    voucher was left out); a caller who named no card, or turned it down, adds none; a therapist
    the record does not hold is not named by "therapist" alone."""
    asked = said("Maya Holt, a massage on Friday please, and put it on my gift card.", instructions=GIFTS)
    call = {"client_name": "Maya Holt", "date": "2026-06-05", "gift_card": "GC-5521"}
    assert trace(MASSAGE, call, asked).arguments == call
    assert trace(MASSAGE, {**call, "gift_card": "GC-9999"}, asked).dropped == ["gift_card"]
    plain = said("Maya Holt, a massage on Friday please.", instructions=GIFTS)
    assert trace(MASSAGE, call, plain).dropped == ["gift_card"]
    declined = said("Maya Holt, a massage on Friday, and I won't use the gift card this time.", instructions=GIFTS)
    assert trace(MASSAGE, call, declined).dropped == ["gift_card"]
    anyone = said("Maya Holt, a massage on Friday, any therapist is fine.", instructions=GIFTS)
    assert trace(MASSAGE, {**call, "gift_card": None, "therapist": "Sam Holt"}, anyone).dropped == ["therapist"]


STUDIO = ("You answer the phone for Lantern Yoga. The caller is Ines Ferro, member LY-402; on file: booking "
          "B-7713, a private class with Oona on Thursday, June 11 at 17:45; booking B-7720, a workshop "
          "on Saturday, June 13 at 09:15.")

MOVE = client_tool("move_booking", {
    "booking_ref": {"type": "string", "description": "The booking's reference, e.g. B-1234"},
    "new_date": {"type": "string", "format": "date", "description": "The new day"},
    "new_time": {"type": "string", "description": "The new start time, HH:MM on the 24-hour clock"},
}, ["booking_ref", "new_date", "new_time"])


def test_same_time_keeps_the_time_of_the_booking_on_file_the_call_moves() -> None:
    """ "Move my private class to the Friday, same time's fine": 17:45, the time of the booking the
    call names (fresh40's salon asked for a time the caller had kept); a time the model wrote
    instead is set to it. "Same day" keeps its day; "same time as the workshop" is another
    booking's, and a line that keeps nothing keeps no time."""
    keep = said("Could you move my private class on the eleventh to the Friday? Same time's fine.", instructions=STUDIO)
    call = {"booking_ref": "B-7713", "new_date": "2026-06-12", "new_time": "17:45"}
    assert trace(MOVE, call, keep).missing == []
    assert trace(MOVE, {**call, "new_time": "14:00"}, keep).arguments == call
    day = said("The workshop, could it start at half ten instead? Same day.", instructions=STUDIO)
    assert trace(MOVE, {"booking_ref": "B-7720", "new_date": "2026-06-03", "new_time": "10:30"}, day).arguments == {
        "booking_ref": "B-7720", "new_date": "2026-06-13", "new_time": "10:30"}
    other = said("Move my private class to the Friday, same time as the workshop.", instructions=STUDIO)
    assert trace(MOVE, call, other).missing == ["new_time"]
    nothing = said("Could you move my private class to the Friday?", instructions=STUDIO)
    assert trace(MOVE, call, nothing).missing == ["new_time"]


def test_a_name_given_after_a_greeting_or_as_the_name_is_the_callers_own() -> None:
    """ "Eileen Byrne's the name", "Yeah, g'day, Tom Reilly, I rent one of yours": a caller the
    record holds nowhere, whose call takes nothing from it (fresh41 enrolled the record's dog for
    Eileen, and looked up the record's rent for Tom); a greeting before a day names nobody."""
    assert introduced(["I want to put me dog on the obedience course. Eileen Byrne's the name."]) == ["Eileen Byrne"]
    assert introduced(["Yeah, g'day, Tom Reilly, I rent one of yours over in Manly."]) == ["Tom Reilly"]
    assert introduced(["Oh, Saturday Morning, is that free?", "Hello, Good Morning, I need a van."]) == []
    assert a_stranger(["Yeah, g'day, Dan Morrow, I play here most weekends."], GOLF)
    assert not a_stranger(["Hiya, Tom Reid, can I book a lesson for our Ella?"], GOLF)


def test_a_thing_under_anothers_name_unsaid_takes_nothing_from_the_record() -> None:
    """ "I gotta cancel our tour, it's under my mama's name, and I don't have no confirmation
    number": whose tour is not said, so the record's booking is no value the caller gave (fresh41
    and fresh43 cancelled one); said with the name, or where the record holds that relative of the
    caller's, it may be."""
    under = "I need to cancel a lesson, it's booked under my husband's name, and I haven't a clue what the reference is."
    assert a_stranger([under], GOLF)
    assert not a_stranger(["It's under my husband's name, Tom Reid."], GOLF)
    assert not a_stranger(["Cancel the lesson under my granddaughter's name, would you?"], GOLF)
    assert not a_stranger(["Put it under my name, please."], GOLF)
