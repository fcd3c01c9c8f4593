"""Codes read out letter by letter, first names of people on file, and a choice the instructions
name: the rules read from fresh19's failures (2026-12-05), each shown in another desk than the
line it was read from."""

from __future__ import annotations

from pipeline.tools import ToolSpec
from pipeline.tools.provenance import trace
from pipeline.tools.spoken import ValueKind, said_in
from pipeline.tools.spoken.codes import code_said, codes_in
from pipeline.tools.spoken.kinds import kind_from_schema
from pipeline.tools.unasked import unasked

from .test_provenance import NOW, client_tool, said

KENNELS = ("You answer the phone for Oakfield Kennels. Today is Wednesday, June 3, 2026. Staff: Nadia "
           "Okoye (manager), Tomasz Wrona and Ellen Park; Tomasz also does grooming. The caller is Joan "
           "Reid, account KN-5102; on file: stay KN-30417, her spaniel Bramble, June 12 to June 15. "
           "Her daughter, Amy Reid, has her own entry, account KN-5177: a collie, Skye.")

MOVE = client_tool("move_stay", {
    "stay_ref": {"type": "string", "description": "The stay's reference, e.g. KN-30417"},
    "new_date": {"type": "string", "format": "date", "description": "The new first day"},
    "new_time": {"type": "string", "description": "Drop-off time, HH:MM on the 24-hour clock, if given"},
}, ["stay_ref", "new_date"])


def test_a_code_said_with_the_values_letters_is_the_callers_not_the_one_on_file() -> None:
    """ "I've a stay, K N, three oh five five two": no word names the reference, but a code of the
    same letters and shape as the one on file is the caller's own; the model's copy of the one on
    file does not run, the caller's does. Digits read out in it are no drop-off time."""
    line = said("Hiya, I've got a stay, K N three oh six nine eight, and I need to move it to Tuesday "
                "the thirtieth. Whatever time suits.", instructions=KENNELS)
    traced = trace(MOVE, {"stay_ref": "KN-30417", "new_date": "2026-06-30", "new_time": "15:06"}, line)
    assert traced.arguments == {"stay_ref": "KN-30698", "new_date": "2026-06-30"}
    assert traced.dropped == ["new_time"]
    mine = said("Can you move my stay to Tuesday the thirtieth?", instructions=KENNELS)
    assert trace(MOVE, {"stay_ref": "KN-30417", "new_date": "2026-06-30"}, mine).arguments["stay_ref"] == "KN-30417"


def test_digits_read_out_are_no_time_of_day_but_a_time_said_is() -> None:
    for text in ("P T two oh six nine eight", "flight BA two fifteen", "it's four four one oh nine"):
        assert not said_in("14:06" if "oh six" in text else "14:15" if "fifteen" in text else "13:09",
                           text, kind=ValueKind.TIME, now=NOW), text
    for value, text in (("14:06", "Could you come at two oh six?"), ("20:30", "the half eight one, please"),
                        ("16:00", "it's the four o'clock one"), ("14:00", "A two o'clock slot, please")):
        assert said_in(value, text, kind=ValueKind.TIME, now=NOW), text


def test_oh_between_digits_is_a_zero_and_letters_said_by_their_names_spell() -> None:
    card = "Card's T V four oh two nine nine five."
    assert code_said("TV-402995", card) is not None
    assert code_said("TV-4OH2995", card) is None
    assert [code for _, _, code in codes_in("the reference is bee tee, three one one two oh.")] == ["BT31120"]
    assert [code for _, _, code in codes_in("it's em en four five six")] == ["MN456"]
    assert all(any(ch.isalpha() for ch in code) is False
               for _, _, code in codes_in("I want to see 3 films with you two"))  # no "C3", no "U2"


def test_a_colon_ends_a_code_read_out() -> None:
    """ "the stolen bike one: C L, twenty twenty-five, ..." is CL-2025-11902, not 1CL202511902."""
    claim = client_tool("check_claim", {
        "claim_reference": {"type": "string", "description": "Claim reference, e.g. CL-2026-05531"},
    }, ["claim_reference"])
    line = said("I've an old claim here from last autumn, the stolen bike one: C L, twenty twenty-five, one "
                "one nine oh two. Was that ever closed?",
                instructions="The caller is Ann Cole; on file: claim CL-2026-05531, a burst pipe.")
    assert trace(claim, {"claim_reference": "CL-2026-05531"}, line).arguments == {"claim_reference": "CL-2025-11902"}


def test_a_person_on_file_said_by_the_first_name() -> None:
    """ "Is Tomasz free Saturday?" asks for Tomasz Wrona, the one Tomasz the instructions name (said
    alone again there: "Tomasz also does grooming"); a surname two staff share names neither. "My
    daughter Amy" is Amy Reid, whose own account the instructions hold; a member of staff is still
    nobody's customer."""
    slots = client_tool("check_slots", {
        "date": {"type": "string", "format": "date", "description": "The day to look at"},
        "staff": {"type": "string", "description": "Only this person's slots, full name, if the caller asked"},
    }, ["date"])
    line = said("What's Tomasz got free on Saturday?", instructions=KENNELS)
    assert trace(slots, {"date": "2026-06-06", "staff": "Tomasz Wrona"}, line).dropped == []
    shared = said("What's Park got free on Saturday?", instructions=KENNELS.replace("Tomasz Wrona", "Tomasz Park"))
    assert trace(slots, {"date": "2026-06-06", "staff": "Ellen Park"}, shared).dropped == ["staff"]
    book = client_tool("book_stay", {
        "owner_name": {"type": "string", "description": "Name of the dog's owner"},
        "date": {"type": "string", "format": "date", "description": "First day of the stay"},
    }, ["owner_name", "date"])
    kin = said("It's Joan. Could you book my daughter Amy's collie in on Friday the twelfth?", instructions=KENNELS)
    assert trace(book, {"owner_name": "Amy Reid", "date": "2026-06-12"}, kin).missing == []
    staff = said("Is Ellen in on Friday the twelfth? I'd like to book a stay.", instructions=KENNELS)
    assert trace(book, {"owner_name": "Ellen Park", "date": "2026-06-12"}, staff).missing == ["owner_name"]


def test_a_choice_is_not_named_by_the_arguments_own_word_but_by_the_instructions_phrase() -> None:
    """ "my boiler" names no `boiler_type` "combi_boiler" (the word is the argument's own); "the
    hook-up's tripped" names `electric` where the instructions sell an "electric hook-up", and no
    kind at all where they do not."""
    repair = client_tool("request_repair", {
        "customer_name": {"type": "string", "description": "Name of the customer"},
        "boiler_type": {"type": "string", "enum": ["combi_boiler", "system", "regular"],
                        "description": "Kind of boiler, if said"},
    }, ["customer_name"])
    line = said("It's Joan Reid. My boiler's making a banging noise, can someone look at it?")
    assert trace(repair, {"customer_name": "Joan Reid", "boiler_type": "combi_boiler"}, line).dropped == ["boiler_type"]
    fault = client_tool("report_fault", {
        "pitch": {"type": "string", "description": "Pitch number, e.g. 27"},
        "issue": {"type": "string", "enum": ["electric", "water", "gas", "other"], "description": "Kind of fault"},
    }, ["pitch", "issue"])
    camp = "Pitches are numbered 1 to 60; an electric hook-up is £5 a night extra."
    tripped = "We're on pitch twenty-seven and the hook-up's tripped again."
    assert trace(fault, {"pitch": "27", "issue": "electric"}, said(tripped, instructions=camp)).missing == []
    assert trace(fault, {"pitch": "27", "issue": "electric"}, said(tripped)).missing == ["issue"]


def test_a_correction_of_the_day_keeps_the_code_read_back() -> None:
    """After "I'll move stay KN-30417 to Saturday, June 13. Shall I?", "Ah no, Thursday the eleventh
    I meant." corrects the day: the stay read back stands, not another on file the model wrote."""
    line = said("It's Joan. Can you move our stay to start Saturday the thirteenth?",
                "Ah no, Thursday the eleventh I meant. Earlier, not later.",
                asked=["", "I'll move stay KN-30417 to start Saturday, June 13. Shall I go ahead?"],
                instructions=KENNELS.replace("a collie, Skye.", "a collie, Skye; stay KN-30488, June 22."))
    traced = trace(MOVE, {"stay_ref": "KN-30488", "new_date": "2026-06-11"}, line)
    assert traced.arguments == {"stay_ref": "KN-30417", "new_date": "2026-06-11"}
    other = said("It's Joan. Can you move our stay to start Saturday the thirteenth?",
                 "Ah no, sorry, it's Amy's stay, KN-30488, the thirteenth.",
                 asked=["", "I'll move stay KN-30417 to start Saturday, June 13. Shall I go ahead?"],
                 instructions=KENNELS.replace("a collie, Skye.", "a collie, Skye; stay KN-30488, June 22."))
    assert trace(MOVE, {"stay_ref": "KN-30488", "new_date": "2026-06-13"}, other).arguments["stay_ref"] == "KN-30488"


def test_good_morning_is_a_greeting_not_a_time() -> None:
    """ "Good morning o. ... Pick it up half past ten today." booked 10:00, the morning's time the
    greeting was read as; the caller's time is 10:30."""
    pickup = client_tool("book_pickup", {
        "address": {"type": "string", "description": "Where to collect"},
        "pickup_time": {"type": "string", "description": "Collection time, HH:MM on the 24-hour clock"},
    }, ["address", "pickup_time"])
    line = said("Good morning o. Please collect an envelope from 18 Park Square East. Pick it up half past "
                "ten today.")
    assert trace(pickup, {"address": "18 Park Square East", "pickup_time": "10:00"}, line).missing == ["pickup_time"]
    assert trace(pickup, {"address": "18 Park Square East", "pickup_time": "10:30"}, line).missing == []
    morning = said("Please collect an envelope from 18 Park Square East, some time in the morning.")
    assert trace(pickup, {"address": "18 Park Square East", "pickup_time": "10:00"}, morning).missing == []


def test_the_day_said_picks_the_booking_on_file_on_that_day() -> None:
    """Of two bookings on file, "cancel the one on the twelfth" is the one on June 12, not the
    past one the model wrote."""
    cancel = client_tool("cancel_booking", {
        "booking_reference": {"type": "string", "description": "Booking reference, e.g. KN-30417"},
    }, ["booking_reference"])
    record = ("The caller is Joan Reid, account KN-5102; on file: past stay KN-30211, Tuesday October 14, "
              "2025; upcoming stay KN-30588, Friday June 12, 2026, two nights.")
    line = said("Look, I'll have to cancel the stay on the twelfth altogether, we're moving house.",
                instructions=record)
    assert trace(cancel, {"booking_reference": "KN-30211"}, line).arguments == {"booking_reference": "KN-30588"}
    assert trace(cancel, {"booking_reference": "KN-30588"}, line).missing == []


def test_a_caller_who_names_themselves_as_nobody_on_file_holds_no_account() -> None:
    """ "Name's Dale Hruska, H-R-U-S-K-A ... can I drop it off Friday?" on a line whose account is
    Travis Dunlap's: the model moved Travis's drop-off. A caller who gives a name the record holds
    nowhere is not that account; its codes are no values they gave. Its holder, their kin, or a
    name given for someone else ("book it for Emily Carter, C-A-R-T-E-R") leave it theirs."""
    shop = ("The caller is Travis Dunlap, account HC-5512; on file: service order HC-20417, a full overhaul "
            "of his mountain bike, drop-off Thursday, June 4 at 9:00. His wife, Corinne Dunlap, has her own "
            "entry, account HC-5530.")
    move = client_tool("reschedule_drop_off", {
        "order_ref": {"type": "string", "description": "Service order, e.g. HC-20417"},
        "new_date": {"type": "string", "format": "date", "description": "The new drop-off day"},
    }, ["order_ref", "new_date"])
    args = {"order_ref": "HC-20417", "new_date": "2026-06-05"}
    for stranger in ("Hey, my kid's BMX needs brakes. Can I drop it off Friday? Name's Dale Hruska, H-R-U-S-K-A.",
                     "I can drop it Friday. Brianna Solheim, S-O-L-H-E-I-M.",
                     "Good morning, here is Jürgen Albrecht. Can I drop it off Friday?"):
        assert trace(move, args, said(stranger, instructions=shop)).missing == ["order_ref"], stranger
    for holder in ("It's Travis. Can I drop my overhaul off Friday instead?",
                   "Hi, I'm Corinne, Travis's wife. Can he drop his overhaul off Friday instead?",
                   "Can I drop my overhaul off Friday? It's booked for Emily Carter, C-A-R-T-E-R, no wait, for me."):
        assert trace(move, args, said(holder, instructions=shop)).missing == [], holder


def test_a_word_every_castle_has_names_no_one_castle() -> None:
    """ "one of your bouncy castles" picks no `standard_castle` of four castles: which is asked;
    "the superhero one" names its own; "e-bike" is the `ebike_service`'s word."""
    hire = client_tool("book_hire", {
        "customer_name": {"type": "string", "description": "Name for the booking"},
        "item": {"type": "string", "enum": ["standard_castle", "princess_castle", "superhero_castle",
                                             "assault_course"], "description": "What to hire"},
    }, ["customer_name", "item"])
    line = said("I want to book one of your bouncy castles, name's Jordan Pike.")
    assert trace(hire, {"customer_name": "Jordan Pike", "item": "standard_castle"}, line).missing == ["item"]
    named = said("The superhero one, please. Name's Jordan Pike.")
    assert trace(hire, {"customer_name": "Jordan Pike", "item": "superhero_castle"}, named).missing == []
    service = client_tool("book_service", {
        "service_type": {"type": "string", "enum": ["basic_service", "full_service", "ebike_service"],
                         "description": "Which service"},
    }, ["service_type"])
    ebike = said("I've just bought an e-bike, a Cube, and I'd like it looked over.")
    assert trace(service, {"service_type": "ebike_service"}, ebike).missing == []


def test_the_debit_one_is_which_card_not_an_amount() -> None:
    pay = client_tool("take_payment", {
        "booking_ref": {"type": "string", "description": "Booking reference, e.g. BC-20417"},
        "amount_pounds": {"type": "integer", "description": "Amount to charge, in whole pounds"},
        "card_last_four": {"type": "string", "description": "Last four digits of the card, e.g. 6042"},
    }, ["booking_ref", "amount_pounds", "card_last_four"])
    line = said("I'll pay the deposit on BC-20417.", "Actually, no, use my other card, the debit one, ends four four seven oh.",
                asked=["", "Thirty pounds on BC-20417, charged to your card ending 6042. Shall I go ahead?"])
    traced = trace(pay, {"booking_ref": "BC-20417", "amount_pounds": 1, "card_last_four": "4470"}, line)
    assert "amount_pounds" in traced.missing
    one = said("A table for one, please, on BC-20417, that's one pound, card ending 4470.")
    assert trace(pay, {"booking_ref": "BC-20417", "amount_pounds": 1, "card_last_four": "4470"}, one).missing == []


def test_a_day_taken_back_in_the_same_breath_is_not_the_one_booked() -> None:
    """ "for Saturday week, the thirteenth... no, hang on, the twentieth": the twentieth; "Sunday,
    sorry, not Saturday" keeps Sunday."""
    book = client_tool("book_hire", {
        "customer_name": {"type": "string", "description": "Name for the booking"},
        "date": {"type": "string", "format": "date", "description": "Day of the hire"},
    }, ["customer_name", "date"])
    line = said("Hiya, a castle for Saturday week, the thirteenth... no, hang on, the twentieth, it's the "
                "twentieth. Name's Tracey Wilkins.")
    assert trace(book, {"customer_name": "Tracey Wilkins", "date": "2026-06-13"}, line).arguments["date"] == "2026-06-20"
    assert trace(book, {"customer_name": "Tracey Wilkins", "date": "2026-06-20"}, line).missing == []
    kept = said("Name's Tracey Wilkins, for Sunday, sorry, not Saturday. He's working Saturday.")
    assert trace(book, {"customer_name": "Tracey Wilkins", "date": "2026-06-07"}, kept).missing == []


def test_a_friends_booking_is_none_on_the_callers_account() -> None:
    """ "Can you cancel my buddy's repair?" cancelled the caller's wife's order, the only other on
    file: a friend's thing is no code the account holds."""
    shop = ("The caller is Travis Dunlap, account HC-5512; on file: service order HC-20417. His wife, "
            "Corinne Dunlap, has her own entry, account HC-5530: order HC-20455, a basic tune-up.")
    cancel = client_tool("cancel_service", {
        "order_ref": {"type": "string", "description": "Service order, e.g. HC-20417"},
    }, ["order_ref"])
    for friend in ("Can you cancel my buddy's repair? He's out of town fishing.",
                   "A friend of mine has a tune-up booked with ye, and she asked me to ring and cancel it."):
        assert trace(cancel, {"order_ref": "HC-20455"}, said(friend, instructions=shop)).missing == ["order_ref"]
    wife = said("Can you cancel Corinne's tune-up? She's taking it to the dealer.", instructions=shop)
    assert trace(cancel, {"order_ref": "HC-20455"}, wife).missing == []


def test_a_word_the_tools_own_description_has_names_no_choice() -> None:
    """ "Could your van come get my bike?" picked `e_bike_diagnostic` by "bike", a word every job
    of a tool that books bikes in has: which job is asked."""
    book = ToolSpec.from_openai({"type": "function", "name": "book_service", "description": "Book a bike in for a service.",
                                 "parameters": {"type": "object", "required": ["customer_name", "service"], "properties": {
                                     "customer_name": {"type": "string", "description": "Name of the customer"},
                                     "service": {"type": "string", "enum": ["basic_tune_up", "brake_service",
                                                                             "e_bike_diagnostic"],
                                                 "description": "Which job"}}}})
    line = said("Could your van come get my bike on Thursday? I'm Lakshmi Nandakumar.")
    assert trace(book, {"customer_name": "Lakshmi Nandakumar", "service": "e_bike_diagnostic"}, line).missing == ["service"]
    named = said("My e-bike's display keeps showing an error, could you run a diagnostic? I'm Lakshmi Nandakumar.")
    assert trace(book, {"customer_name": "Lakshmi Nandakumar", "service": "e_bike_diagnostic"}, named).missing == []


def test_a_clock_in_a_correction_is_the_reading_near_the_time_read_back() -> None:
    """ "Nah, half five." after "to end at 17:00?" is 17:30; the model's 15:00 is set right. With
    nothing read back, "half five" is morning or evening, and not guessed."""
    extend = client_tool("extend_booking", {
        "booking_ref": {"type": "string", "description": "Booking reference, e.g. FW-20417"},
        "new_end_time": {"type": "string", "description": "New end, HH:MM on the 24-hour clock"},
    }, ["booking_ref", "new_end_time"])
    line = said("Can I push FW-20417 out to five o'clock?", "Nah, half five. Might as well give meself a buffer.",
                asked=["", "Extending booking FW-20417 to end at 17:00 on Saturday, June 6. Is that right?"])
    assert trace(extend, {"booking_ref": "FW-20417", "new_end_time": "15:00"}, line).arguments["new_end_time"] == "17:30"
    bare = said("Can I push FW-20417 out to half five?")
    assert trace(extend, {"booking_ref": "FW-20417", "new_end_time": "15:00"}, bare).missing == ["new_end_time"]


def test_a_range_said_sets_the_start_and_the_end() -> None:
    """ "say seven in the morning through to four" ran with the end at 07:00; "midday till five"
    was refused for a start of 14:00. A range in the caller's last words gives the start its first
    clock and the end its second, the end after the start ("four" is 16:00 after seven), in the
    part of the day the words name where two readings are left ("One till half five", arvo)."""
    book = client_tool("book_car", {
        "date": {"type": "string", "format": "date", "description": "Day of the booking"},
        "start_time": {"type": "string", "description": "Start, HH:MM on the 24-hour clock"},
        "end_time": {"type": "string", "description": "End, HH:MM on the 24-hour clock"},
    }, ["date", "start_time", "end_time"])
    for line, start, end in (("I need the SUV Sunday the fourteenth, say seven in the morning through to four?", "07:00", "16:00"),
                             ("Is there a van going on Sunday the fourteenth, midday till five?", "12:00", "17:00"),
                             ("An EV for Sunday the fourteenth in the arvo? One till half five.", "13:00", "17:30")):
        traced = trace(book, {"date": "2026-06-14", "start_time": "07:00", "end_time": "07:00"}, said(line))
        assert (traced.arguments["start_time"], traced.arguments["end_time"]) == (start, end), line
    clock = said("The SUV on Sunday the fourteenth, from quarter to six till eight in the evening.")
    traced = trace(book, {"date": "2026-06-14", "start_time": "17:45", "end_time": "20:00"}, clock)
    assert (traced.arguments["start_time"], traced.arguments["end_time"]) == ("17:45", "20:00")


def test_the_latest_choice_named_decides_and_a_code_read_again_takes_the_old_back() -> None:
    """ "Ah no, sorry, I meant the honey extraction one" after a turn naming queen rearing: the
    model kept queen_rearing, named first. "the last bit's one three, not three one. Seven oh
    eight, two one three." after hire 708231: the code said again, digits alone, is 708213. "P E,
    twenty twenty-six, oh five oh two" holds no time "five oh two"."""
    course = client_tool("book_course", {
        "course": {"type": "string", "enum": ["beginners", "queen_rearing", "honey_extraction"], "description": "Which course"},
        "places": {"type": "integer", "description": "How many places"},
    }, ["course", "places"])
    line = said("Book me on the queen rearing course, two places.",
                "Ah no, sorry, I meant the honey extraction one in August. Still the two places.",
                asked=["", "Two places on Queen Rearing, Saturday, July 11. Is that correct?"])
    assert trace(course, {"course": "queen_rearing", "places": 2}, line).arguments["course"] == "honey_extraction"
    extend = client_tool("extend_hire", {
        "hire_number": {"type": "string", "description": "Hire number, e.g. 708213"},
    }, ["hire_number"])
    code = said("Extend hire seven oh eight two three one, please.",
                "Ah, no, the last bit's one three, not three one. Seven oh eight, two one three.",
                asked=["", "Hire 708231. Shall I go ahead?"])
    assert trace(extend, {"hire_number": "708231"}, code).arguments == {"hire_number": "708213"}
    assert not said_in("17:02", "On the limo booking, P E, twenty twenty-six, oh five oh two, can we stop?",
                       kind=ValueKind.TIME, now=NOW)


def test_a_span_written_the_wrong_way_round_is_put_in_order() -> None:
    """ "Collect on the twenty-sixth and bring it back on the first of July" was written pickup July 1,
    return June 26; "from four till seven" at a studio open 10:00 to 20:00 is 16:00 to 19:00. Two
    days not of one span ("move it from the 20th to the 12th") stay as written."""
    change = client_tool("change_hire_dates", {
        "booking_ref": {"type": "string", "description": "Booking, e.g. WA-77140"},
        "new_pickup_date": {"type": "string", "format": "date", "description": "New collection day"},
        "new_return_date": {"type": "string", "format": "date", "description": "New return day"},
    }, ["booking_ref", "new_pickup_date", "new_return_date"])
    line = said("Could we push WA-77140 back a week? Collect on the twenty-sixth and bring it back on the "
                "first of July instead.")
    traced = trace(change, {"booking_ref": "WA-77140", "new_pickup_date": "2026-07-01", "new_return_date": "2026-06-26"}, line)
    assert (traced.arguments["new_pickup_date"], traced.arguments["new_return_date"]) == ("2026-06-26", "2026-07-01")
    move = client_tool("move_visit", {
        "old_date": {"type": "string", "format": "date", "description": "The day booked now"},
        "new_date": {"type": "string", "format": "date", "description": "The day to move to"},
    }, ["old_date", "new_date"])
    earlier = said("Can you move my visit from the twentieth to the twelfth?")
    assert trace(move, {"old_date": "2026-06-20", "new_date": "2026-06-12"}, earlier).arguments == {
        "old_date": "2026-06-20", "new_date": "2026-06-12"}
    party = client_tool("book_party", {
        "date": {"type": "string", "format": "date", "description": "Day of the party"},
        "start_time": {"type": "string", "description": "Start, HH:MM on the 24-hour clock"},
        "end_time": {"type": "string", "description": "End, HH:MM on the 24-hour clock"},
    }, ["date", "start_time", "end_time"])
    studio = said("A pottery party on Saturday the twentieth, from four till seven?",
                  instructions="The studio is open Tuesday to Sunday, 10:00 to 20:00.")
    traced = trace(party, {"date": "2026-06-20", "start_time": "19:00", "end_time": "19:00"}, studio)
    assert (traced.arguments["start_time"], traced.arguments["end_time"]) == ("16:00", "19:00")


# --- read from fresh23 (2026-12-05) ---------------------------------------------------------------

def test_a_choice_written_in_digits_is_named_by_its_number_said_in_words() -> None:
    """ "a twelve-seater, please" names `12_seater` of 6, 12 and 20 seaters (a required pick with
    its number said in words was asked for again); "a big one" names none of them."""
    hire = client_tool("hire_boat", {
        "boat": {"type": "string", "description": "Which boat", "enum": ["6_seater", "12_seater", "20_seater"]},
        "date": {"type": "string", "format": "date", "description": "Day of the hire"},
    }, ["boat", "date"])
    line = said("Could we have a twelve-seater on Saturday?")
    traced = trace(hire, {"boat": "12_seater", "date": "2026-06-06"}, line)
    assert not traced.missing and traced.arguments["boat"] == "12_seater"
    vague = said("Could we have a big one on Saturday?")
    assert trace(hire, {"boat": "12_seater", "date": "2026-06-06"}, vague).missing == ["boat"]


def test_kids_are_children_counted_and_no_age() -> None:
    """ "nine kids including her" is how many children come, not the birthday child's age; "she's
    turning six" is her age; written the other way round, each is the one said in its role."""
    party = client_tool("book_party", {
        "children": {"type": "integer", "description": "How many children are coming"},
        "child_age": {"type": "integer", "description": "The age the child is turning, if said"},
        "date": {"type": "string", "format": "date", "description": "Day of the party"},
    }, ["children", "date"])
    line = said("A party for my girl on Saturday, she's turning six, and there'll be nine kids including her.")
    traced = trace(party, {"children": 9, "child_age": 6, "date": "2026-06-06"}, line)
    assert not traced.missing and traced.arguments == {"children": 9, "child_age": 6, "date": "2026-06-06"}
    swapped = trace(party, {"children": 6, "child_age": 9, "date": "2026-06-06"}, line)
    assert swapped.arguments == {"children": 9, "child_age": 6, "date": "2026-06-06"}  # each the one said in its role
    weans = said("A party for my wee girl on Saturday, she'll be seven, sixteen weans in all.")
    assert trace(party, {"children": 16, "date": "2026-06-06"}, weans).missing == []  # Scots for children


def test_one_of_a_kind_is_no_count_and_no_record_of_several() -> None:
    """ "one of them pottery classes for me and me sister": the class is one of a kind, not one
    person (the caller is asked how many); "cancel one of the bookings" points at no booking of the
    two on file."""
    book = client_tool("book_class", {
        "class_type": {"type": "string", "description": "Which class", "enum": ["pottery", "painting"]},
        "people": {"type": "integer", "description": "How many people are coming"},
    }, ["class_type", "people"])
    line = said("I wanna do one of them pottery classes for me and me sister.")
    assert trace(book, {"class_type": "pottery", "people": 1}, line).missing == ["people"]
    assert not trace(book, {"class_type": "pottery", "people": 1}, said("Just one of us, pottery.")).missing
    desk = ("You answer the phone for Kiln Street Studio. The caller is Ana Silva, account KS-201; on file: "
            "class KS-30411, pottery on Saturday, June 6. Her partner, Rui Costa, has his own entry, "
            "account KS-207: class KS-30452, painting on Friday, June 12.")
    cancel = client_tool("cancel_class", {"booking_ref": {"type": "string", "description": "e.g. KS-30411"}},
                         ["booking_ref"])
    which = said("Can you cancel one of the classes on our accounts? Plans have changed.", instructions=desk)
    assert trace(cancel, {"booking_ref": "KS-30411"}, which).missing == ["booking_ref"]


def test_a_day_correcting_one_read_back_is_the_nearest_ones_and_its_weekday_no_other_day() -> None:
    """Read back "from Friday, June 12 to Sunday, June 14", the caller's "The fifteenth, sorry. We
    leave on the Monday." moves the last day (the 15th is that Monday, not June 8), and "No, the
    eleventh." the first; the model's copy of the day read back does not stand."""
    stay = client_tool("book_cottage", {
        "arrival": {"type": "string", "format": "date", "description": "First night"},
        "departure": {"type": "string", "format": "date", "description": "Day they leave"},
    }, ["arrival", "departure"])
    read_back = "A stay from Friday, June 12 to Sunday, June 14. Shall I book it?"
    first = "Can we have the cottage from the twelfth to the fourteenth?"
    later = said(first, "The fifteenth, sorry. We leave on the Monday.", asked=["", read_back])
    assert trace(stay, {"arrival": "2026-06-12", "departure": "2026-06-14"}, later).arguments == {
        "arrival": "2026-06-12", "departure": "2026-06-15"}
    sooner = said(first, "No, the eleventh.", asked=["", read_back])
    assert trace(stay, {"arrival": "2026-06-12", "departure": "2026-06-14"}, sooner).arguments == {
        "arrival": "2026-06-11", "departure": "2026-06-14"}


# --- read from fresh24 (2026-12-05) ---------------------------------------------------------------

def test_a_name_with_its_spelling_hyphenated_is_the_name_and_a_greeting_is_none() -> None:
    """ "Name is Tomasz, T-O-M-A-S-Z, Lis" written with its spelling is "Tomasz Lis"; "Kia ora"
    (the caller's hello) written as the name names nobody, and is asked for."""
    join = client_tool("join_club", {"member_name": {"type": "string", "description": "The member's full name"},
                                     "start_date": {"type": "string", "format": "date", "description": "First day"}},
                       ["member_name", "start_date"])
    line = said("I'd like to join from Monday. Name is Tomasz, T-O-M-A-S-Z, Lis.")
    traced = trace(join, {"member_name": "Tomasz, T-O-M-A-S-Z, Lis", "start_date": "2026-06-08"}, line)
    assert not traced.missing and traced.arguments["member_name"] == "Tomasz Lis"
    hello = said("Kia ora, could I join from Monday? It's Aroha, A-R-O-H-A, Ngata.")
    assert trace(join, {"member_name": "Kia ora", "start_date": "2026-06-08"}, hello).missing == ["member_name"]
    assert trace(join, {"member_name": "G'day", "start_date": "2026-06-08"}, said("G'day, join me up from Monday.")).missing \
        == ["member_name"]


def test_a_range_said_gives_a_call_with_one_start_time_its_start() -> None:
    """ "the hall tomorrow from two till five" for a call with a start and a length: the start is
    14:00 (of the readings within the hours the instructions give), not the end the model wrote;
    a call whose one time is no start keeps its own."""
    hall = client_tool("book_hall", {
        "start_time": {"type": "string", "description": "Start, HH:MM on the 24-hour clock"},
        "hours": {"type": "integer", "description": "How many hours"},
    }, ["start_time", "hours"])
    line = said("Can we have the hall tomorrow from two till five, so three hours?",
                instructions="The hall is open every day, 9:00 to 21:00.")
    assert trace(hall, {"start_time": "17:00", "hours": 3}, line).arguments == {"start_time": "14:00", "hours": 3}
    drop = client_tool("drop_off", {"time": {"type": "string", "description": "When, HH:MM on the 24-hour clock"}}, ["time"])
    assert trace(drop, {"time": "17:00"}, line).arguments == {"time": "17:00"}


def test_another_week_is_one_week() -> None:
    """ "can we keep the van another week?" gives `extra_weeks: 1`; "another lot" gives no count."""
    extend = client_tool("extend_hire", {
        "hire_ref": {"type": "string", "description": "The hire, e.g. VH-2231"},
        "extra_weeks": {"type": "integer", "description": "How many more weeks"},
    }, ["hire_ref", "extra_weeks"])
    line = said("Hire VH-2231, can we keep the van another week?")
    assert not trace(extend, {"hire_ref": "VH-2231", "extra_weeks": 1}, line).missing
    assert trace(extend, {"hire_ref": "VH-2231", "extra_weeks": 1}, said("Hire VH-2231, I've another lot to move.")).missing \
        == ["extra_weeks"]


def test_an_address_put_together_from_several_entries_of_the_record_is_none_given() -> None:
    """ "the same place as last time" written "Fenton, Hanley, Staffordshire": the caller's town, their
    sister's and the desk's county, each in the record, no entry holding them together; the
    caller's own address on file, one entry's, is given."""
    desk = ("You answer the phone for Potteries Removals in Stoke-on-Trent, Staffordshire. The caller is Amy "
            "Shaw, account PR-118; on file: move M-2207 from 4 Kiln Lane, Fenton. Her sister, Jo Shaw, has "
            "her own entry: move M-2231 from 12 Bell Street, Hanley.")
    move = client_tool("book_move", {"address": {"type": "string", "description": "Where we collect from"},
                                     "date": {"type": "string", "format": "date", "description": "Day of the move"}},
                       ["address", "date"])
    line = said("Another move from the same place as last time, on Friday please.", instructions=desk)
    assert trace(move, {"address": "Fenton, Hanley, Staffordshire", "date": "2026-06-05"}, line).missing == ["address"]
    assert not trace(move, {"address": "4 Kiln Lane, Fenton", "date": "2026-06-05"}, line).missing


# --- read from fresh25 (2026-12-05) ---------------------------------------------------------------

def test_a_choice_said_with_its_accents_is_named() -> None:
    """ "the boat to Inis Oírr" names `inis_oirr`, "Dún Laoghaire" `dun_laoghaire`: the caller's
    (and Whisper's) accents are no other word; "ten packs" names no battery size "10"."""
    ferry = client_tool("check_sailings", {
        "port": {"type": "string", "description": "Which port", "enum": ["dun_laoghaire", "inis_oirr", "rosslare"]},
        "date": {"type": "string", "format": "date", "description": "Day of the crossing"},
    }, ["port", "date"])
    for line, port in (("Any room on the boat to Inis Oírr on Sunday?", "inis_oirr"),
                       ("Is there a sailing from Dún Laoghaire on Sunday?", "dun_laoghaire")):
        assert not trace(ferry, {"port": port, "date": "2026-06-07"}, said(line)).missing, line
    batteries = client_tool("order_batteries", {
        "size": {"type": "string", "description": "Battery size", "enum": ["10", "13", "312"]},
        "packs": {"type": "integer", "description": "How many packs"},
    }, ["size", "packs"])
    assert trace(batteries, {"size": "10", "packs": 10}, said("Ten packs, same as last time.")).missing == ["size"]
    assert not trace(batteries, {"size": "312", "packs": 10}, said("Ten packs of the 312s, please.")).missing


def test_a_week_on_a_weekday_said_then_its_day_of_the_month_is_that_day() -> None:
    """ "Not this Saturday, a week on Saturday. The thirteenth." is June 13 (a week on from the 6th),
    not the 20th (a week on from "Saturday the thirteenth")."""
    check = client_tool("check_slots", {"date": {"type": "string", "format": "date", "description": "The day"}}, ["date"])
    line = said("Oh, not this Saturday, a week on Saturday. The thirteenth.")
    assert trace(check, {"date": "2026-06-20"}, line).arguments == {"date": "2026-06-13"}


def test_a_clock_in_a_correction_takes_the_place_of_the_one_time_read_back() -> None:
    """Read back "on the 09:00 tour. Is that right?", "Actually, make it the later one, the two
    o'clock." is 14:00, where the model kept the nine o'clock said before."""
    tour = client_tool("book_tour", {"tour_time": {"type": "string", "description": "Start, HH:MM on the 24-hour clock"},
                                     "date": {"type": "string", "format": "date", "description": "Day of the tour"}},
                       ["tour_time", "date"])
    line = said("Can we do the nine o'clock tour on Friday?", "Actually, make it the later one, the two o'clock.",
                asked=["", "A tour on Friday, June 5 on the 09:00 tour. Is that right?"])
    assert trace(tour, {"tour_time": "09:00", "date": "2026-06-05"}, line).arguments == {"tour_time": "14:00", "date": "2026-06-05"}


def test_day_after_tomorrow_without_the_is_two_days_on() -> None:
    """ "What slots are free day after tomorrow?" (no "the", as many callers say it) is June 5,
    not tomorrow: the model's June 4 is the caller's day said again."""
    check = client_tool("check_slots", {"date": {"type": "string", "format": "date", "description": "The day"}}, ["date"])
    line = said("What slots are free day after tomorrow? Just checking.")
    assert trace(check, {"date": "2026-06-04"}, line).arguments == {"date": "2026-06-05"}
    assert said_in("2026-06-01", "it was the day before yesterday", kind=ValueKind.DATE, now=NOW)


# --- read from fresh26 (2026-12-05) ---------------------------------------------------------------

def test_a_word_that_only_says_which_thing_names_no_kind() -> None:
    """ "The phone model, e.g. iPhone 13 or Galaxy S23" is a make and model said in words, no phone
    number: "a Samsung Galaxy A fifty-four" gives it as said. "The customer's phone number" and "a
    phone to call back on" still hold a number to ring."""
    def kind(description: str) -> ValueKind | None:
        return kind_from_schema("device", {"type": "string", "description": description})
    assert kind("The phone model, e.g. iPhone 13 or Galaxy S23") is ValueKind.NAME
    assert kind("The customer's phone number") is ValueKind.CODE
    assert kind("A phone to call back on") is ValueKind.CODE
    repair = client_tool("book_repair", {"model": {"type": "string", "description": "The phone model, e.g. iPhone 13"}},
                         ["model"])
    line = said("It's a Samsung, the Galaxy A fifty-four, the battery won't hold its charge.")
    assert not trace(repair, {"model": "Galaxy A fifty-four"}, line).missing


def test_an_act_said_in_a_phrase_is_asked_for() -> None:
    """ "I won't be needing Saturday's fitting anymore" asks for the cancel and "go ahead and do it"
    for the approval, with every value on file; "I won't need a receipt" asks for neither."""
    desk = "The caller is Dana Roe; on file: fitting F-2231 on Saturday, June 6; quote Q-118 for 90 dollars."
    cancel = client_tool("cancel_fitting", {"fitting_ref": {"type": "string", "description": "e.g. F-2231"}}, ["fitting_ref"])
    approve = client_tool("approve_quote", {"quote_ref": {"type": "string", "description": "e.g. Q-118"}}, ["quote_ref"])
    for spec, value, line, asked in (
            (cancel, {"fitting_ref": "F-2231"}, "I got it done elsewhere, so I won't be needing Saturday's fitting anymore.", True),
            (approve, {"quote_ref": "Q-118"}, "The ninety dollars? Yeah, go ahead and do it.", True),
            (cancel, {"fitting_ref": "F-2231"}, "Thanks, and I won't need a receipt.", False),
            (approve, {"quote_ref": "Q-118"}, "Thanks, and I won't need a receipt.", False)):
        assert unasked(spec, value, said(line, instructions=desk)) is not asked, line


def test_a_name_said_with_a_word_spelled_out_between_and_tickets_counted_as_seats() -> None:
    """ "My name is Piotr, P-I-O-T-R, Zieliński" says "Piotr Zieliński"; "Mi want four ticket" says
    how many seats, beside another count (two of them concessions)."""
    book = client_tool("book_show", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "seats": {"type": "integer", "description": "How many seats"},
        "concessions": {"type": "integer", "description": "How many of them are concessions, if said"},
    }, ["customer_name", "seats"])
    line = said("Mi want four ticket fi Saturday, an' two a dem is concessions. My name is Piotr, P-I-O-T-R, Zieliński.")
    traced = trace(book, {"customer_name": "Piotr Zieliński", "seats": 4, "concessions": 2}, line)
    assert not traced.missing and traced.arguments == {"customer_name": "Piotr Zieliński", "seats": 4, "concessions": 2}


# --- read from fresh27 (2026-12-05) ---------------------------------------------------------------

def test_a_request_for_another_act_by_its_verb_runs_no_act_it_did_not_name() -> None:
    """ "Can you check booking B, four four one two, for me?" asks for a look: a cancel of that
    booking, its code said, does not run; "could you shift it to Thursday?" moves the visit on
    file, and a new booking of it does not run. A booking asked for by its own verb still runs,
    and "a contact lens check" or "a sofa to move" asks for no other act."""
    desk = "The caller is Jo Hart; on file: booking B-4412, a pest visit on Tuesday, June 9, afternoon."
    cancel = client_tool("cancel_booking", {"booking_ref": {"type": "string", "description": "e.g. B-4412"}}, ["booking_ref"])
    book = client_tool("book_visit", {"date": {"type": "string", "format": "date", "description": "Day of the visit"}},
                       ["date"])
    for spec, value, line, asked in (
            (cancel, {"booking_ref": "B-4412"}, "Can you check booking B, four four one two, for me? It's my partner's.", False),
            (book, {"date": "2026-06-09"}, "The visit on Tuesday, love, could you shift it to Thursday?", False),
            (book, {"date": "2026-06-09"}, "Can you book me a visit for Tuesday? I'll check the loft first.", True),
            (book, {"date": "2026-06-05"}, "A contact lens check on Friday, please.", True),
            (book, {"date": "2026-06-05"}, "Friday, please, I've only got a sofa to move.", True)):
        assert unasked(spec, value, said(line, instructions=desk)) is not asked, line


def test_a_day_said_from_today_picks_the_booking_on_file_on_that_day() -> None:
    """ "Can you cancel my court tomorrow night?" (said on Wednesday, June 3) is the court booked
    for Thursday, June 4, of the caller's two, and the other, written by the model, is put right;
    "the court on Monday" is the other."""
    cancel = client_tool("cancel_court", {
        "booking_ref": {"type": "string", "description": "The court booking's reference"},
    }, ["booking_ref"])
    record = ("The caller is Omar Haddad, member WV-3310; on file: court booking C-7031 on Thursday, June 4 "
              "at 18:00; court booking C-7048 on Monday, June 8 at 17:00.")
    tomorrow = said("My knee's gone again, so can you cancel my court tomorrow night?", instructions=record)
    assert trace(cancel, {"booking_ref": "C-7031"}, tomorrow).missing == []
    assert trace(cancel, {"booking_ref": "C-7048"}, tomorrow).arguments == {"booking_ref": "C-7031"}
    monday = said("Can you cancel the court on Monday? Exams.", instructions=record)
    assert trace(cancel, {"booking_ref": "C-7048"}, monday).missing == []
    assert trace(cancel, {"booking_ref": "C-7031"}, monday).arguments == {"booking_ref": "C-7048"}


def test_a_description_with_two_examples_of_two_forms_holds_both_on_file() -> None:
    """ "e.g. B-3820 or D-417" (a ticket's and a dining booking's): the dining booking on file is
    the one "the Sunday lunch on the fourteenth" points at, though its form is not the first
    example's (fresh30: refused as a reference nobody said)."""
    cancel = client_tool("cancel_booking", {
        "booking_ref": {"type": "string", "description": "The booking reference, e.g. B-3820 or D-417"},
    }, ["booking_ref"])
    record = ("The caller is Ann Pascoe; on file: ticket booking B-5820, 2 adults on Saturday, June 6; "
              "dining booking D-519, the Sunday lunch train for 4 on Sunday, June 14.")
    line = said("We'll have to cancel the Sunday lunch on the fourteenth, I'm afraid.", instructions=record)
    assert trace(cancel, {"booking_ref": "D-519"}, line).missing == []
    assert trace(cancel, {"booking_ref": "B-5820"}, line).arguments == {"booking_ref": "D-519"}


def test_a_line_s_opening_sound_is_no_name() -> None:
    """ "Och, naw, sorry, the morning.": a session booked for a child named "Och" (fresh30)."""
    book = client_tool("book_session", {
        "child_name": {"type": "string", "description": "The child's full name"},
        "date": {"type": "string", "format": "date", "description": "Day of the session"},
    }, ["child_name", "date"])
    line = said("Och, naw, sorry, Friday. He's wabbit by the afternoon.")
    assert trace(book, {"child_name": "Och", "date": "2026-06-05"}, line).missing == ["child_name"]
