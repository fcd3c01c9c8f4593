"""The rules read from fresh53 (jet boats in Queenstown, a wine estate in Stellenbosch, a yoga
studio in Pune, batting cages in San Antonio): each behaviour on a desk of its own shape, not the
split's lines word for word."""

from __future__ import annotations

from pipeline.tools.provenance import trace
from pipeline.tools.schema import ToolSpec
from pipeline.tools.spoken.numbers import numbers_said
from tests.test_provenance import client_tool, said


def _tool(name: str, description: str, properties: dict, required: list[str]) -> ToolSpec:
    return ToolSpec.from_openai({"type": "function", "name": name, "description": description,
                                 "parameters": {"type": "object", "properties": properties, "required": required}})


SAUNA = ("You answer the phone for Harbour Sauna, Tromso. Passes can be frozen for 7 to 30 days once a year. "
         "The caller is Ines Moreau, customer code HS-1102; on file: season pass P-4410, valid to September 30; "
         "towel locker 88. Her husband, Luc Moreau, customer code HS-1103; on file: season pass P-4425, valid to "
         "December 31.")
FREEZE = _tool("freeze_pass", "Freeze a season pass for a number of days.", {
    "pass_ref": {"type": "string", "description": "The pass reference, e.g. P-4410"},
    "days": {"type": "integer", "description": "How many days, 7 to 30"},
}, ["pass_ref", "days"])


def test_my_pass_is_the_one_in_the_sentence_of_whom_the_caller_is() -> None:
    """ "please pause my membership" on a record whose caller's sentence runs on past a semicolon
    ("The caller is ..., customer code ...; on file: quarterly membership M-2093") was refused: the
    caller's own is in their sentence; said by one who names themselves, in theirs."""
    mine = said("Can you freeze my pass for ten days? I'm off to Lisbon.", instructions=SAUNA)
    assert trace(FREEZE, {"pass_ref": "P-4410", "days": 10}, mine).missing == []
    assert trace(FREEZE, {"pass_ref": "P-4425", "days": 10}, mine).arguments["pass_ref"] == "P-4410"
    luc = said("It's Luc Moreau. Can you freeze my pass for ten days?", instructions=SAUNA)
    assert trace(FREEZE, {"pass_ref": "P-4425", "days": 10}, luc).missing == []
    assert trace(FREEZE, {"pass_ref": "P-4410", "days": 10}, luc).arguments["pass_ref"] == "P-4425"
    nobodys = said("Can you freeze a pass for ten days?", instructions=SAUNA)
    assert trace(FREEZE, {"pass_ref": "P-4410", "days": 10}, nobodys).missing == ["pass_ref"]


STUDIO = ("You answer the phone for Lotus Room, a dance studio in Leeds. Classes last 60 minutes. The caller "
          "is Asha Patel, customer code LR-201; on file: class booking C-7713 on Saturday, June 6 at 10:00 with "
          "Meera; private session S-52 on Friday, June 5 at 18:00 at home with Rohan; card on file Visa ending 1180.")
CANCEL = _tool("cancel_booking", "Cancel a class booking or a private session.", {
    "booking_ref": {"type": "string", "description": "The booking reference, e.g. C-7713 or S-52"},
}, ["booking_ref"])


def test_the_codes_shaped_as_any_example_of_the_description_are_the_roles() -> None:
    """ "Friday's home session with Rohan, please cancel it." cancelled the Saturday class: its code
    was the only one of the description's first example's shape. Each example's shape is the role's,
    and the caller's words pick the session (the class's code, twice its digits, is not put right)."""
    line = said("Friday's home session with Rohan, please cancel it. My knee is bad.", instructions=STUDIO)
    assert trace(CANCEL, {"booking_ref": "S-52"}, line).missing == []
    assert trace(CANCEL, {"booking_ref": "C-7713"}, line).missing == ["booking_ref"]


CAGES = ("You answer the phone for Home Run Alley, Tulsa. Parties last 2 hours with two lanes and the party "
         "room, $300 for up to 10 kids. Coaching sessions last 60 minutes, every day from 9:00 to 21:00. "
         "The caller is Dana Price, customer code HR-88; on file: lane rental R-4410 on Saturday, June 6 at "
         "10:00, 60 minutes; coaching session LN-51 for her son Theo Price on Tuesday, June 9 at 17:30. Her "
         "neighbour, Shay Cole, customer code HR-91; on file: birthday party P-72 on Sunday, June 14 at 13:00 "
         "for 12 kids.")
CANCEL_CAGE = _tool("cancel_booking", "Cancel a lane rental, a coaching session or a party.", {
    "booking_ref": {"type": "string", "description": "The booking reference, e.g. R-4410, LN-51 or P-72"},
}, ["booking_ref"])


def test_an_entry_the_day_points_at_leaves_the_other_lists_codes_unmeant() -> None:
    """ "I gotta call off the party on the fourteenth" let the lane rental through: the desk's
    prose of parties ("two lanes ... up to 10 kids") lent the rental its words. The desk's prose,
    before the caller's record, lends no entry words; an entry the day said points at is the one."""
    line = said("Shay Cole. I gotta call off the party on the fourteenth, my little one broke his arm.",
                instructions=CAGES)
    assert trace(CANCEL_CAGE, {"booking_ref": "P-72"}, line).missing == []
    assert trace(CANCEL_CAGE, {"booking_ref": "R-4410"}, line).missing == ["booking_ref"]
    theo = said("Theo twisted his ankle, so Tuesday's coaching can't happen. Please cancel it.", instructions=CAGES)
    assert trace(CANCEL_CAGE, {"booking_ref": "LN-51"}, theo).missing == []
    assert trace(CANCEL_CAGE, {"booking_ref": "R-4410"}, theo).missing == ["booking_ref"]


LESSON = client_tool("book_lesson", {
    "player_name": {"type": "string", "description": "The player's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the lesson"},
    "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
}, ["player_name", "date", "time"])


def test_kin_the_record_writes_so_is_named_by_their_first_name_unless_the_caller_books_themselves() -> None:
    """ "Can Mateo get thirty minutes ...?" was refused "Mateo Castillo", written in the record "for
    his son Mateo Castillo"; "Would Donal give me a lesson? ... since I was expecting Ciara" books
    the caller, not her daughter."""
    theo = said("Can Theo get a lesson Thursday the eleventh at four?", instructions=CAGES)
    assert trace(LESSON, {"player_name": "Theo Price", "date": "2026-06-11", "time": "16:00"}, theo).missing == []
    me = said("Would you give me a lesson Thursday the eleventh at four? I've not swung a bat since Theo was born.",
              instructions=CAGES)
    assert trace(LESSON, {"player_name": "Theo Price", "date": "2026-06-11", "time": "16:00"}, me).missing \
        == ["player_name"]


TOUR = client_tool("book_tour", {
    "lead_name": {"type": "string", "description": "The group leader's full name"},
    "date": {"type": "string", "format": "date", "description": "Day of the tour"},
    "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
}, ["lead_name", "date", "time"])


def test_an_associate_with_an_account_of_their_own_is_a_customer_by_name() -> None:
    """ "Nomsa Dlamini. Another cellar tour, please" was refused her name: the record's "His
    business partner, Nomsa Dlamini, customer code KW-2237" is a customer, not the desk's staff."""
    farm = ("You answer the phone for Rooiberg Cellars. Tours are led by Pieter Louw. The caller is Johan Smit, "
            "customer code RC-10. His business partner, Nomsa Dlamini, customer code RC-14; on file: tour T-8.")
    line = said("Nomsa Dlamini. A cellar tour, please, Wednesday the seventeenth at eleven.", instructions=farm)
    assert trace(TOUR, {"lead_name": "Nomsa Dlamini", "date": "2026-06-17", "time": "11:00"}, line).missing == []
    assert trace(TOUR, {"lead_name": "Pieter Louw", "date": "2026-06-17", "time": "11:00"}, line).missing \
        == ["lead_name"]


def test_a_required_choice_an_optional_argument_given_is_named_for_is_implied() -> None:
    """ "Can Meera come to my flat? Address is Flat 302, ..." was asked where: a `home_address` said
    names `home`; a required argument sharing a choice's word names nothing ("my plots": no
    `overgrown_plot`)."""
    session = client_tool("book_session", {
        "student_name": {"type": "string", "description": "The student's full name"},
        "location": {"type": "string", "enum": ["studio", "home"], "description": "Where it takes place"},
        "home_address": {"type": "string", "description": "Address for a home session, if the caller gave one"},
    }, ["student_name", "location"])
    line = said("Kavya Rao this side. Can Meera come to my flat? Address is Flat 302, Silver Oak, Baner.")
    args = {"student_name": "Kavya Rao", "location": "home", "home_address": "Flat 302, Silver Oak, Baner"}
    assert trace(session, args, line).missing == []
    assert trace(session, {"student_name": "Kavya Rao", "location": "home"}, line).missing == ["location"]
    report = client_tool("report_issue", {
        "plot_reference": {"type": "string", "description": "The plot, e.g. H-14"},
        "issue_type": {"type": "string", "enum": ["overgrown_plot", "broken_tap"], "description": "What is wrong"},
    }, ["plot_reference", "issue_type"])
    vague = said("Can you log a problem on H-14? Something's not right up there.")
    assert "issue_type" in trace(report, {"plot_reference": "H-14", "issue_type": "overgrown_plot"}, vague).missing


PARTY = client_tool("book_party", {
    "host_name": {"type": "string", "description": "The full name of the adult booking"},
    "date": {"type": "string", "format": "date", "description": "Day of the party"},
    "kids": {"type": "integer", "description": "Number of children coming"},
}, ["host_name", "date", "kids"])


def test_more_like_corrects_the_count_read_back_and_a_count_before_now_is_no_moment() -> None:
    """ "Hold up, it's more like sixteen now" after "for 12 kids ... Shall I book it?" was refused
    the 16, and its "now" let today through as the day."""
    line = said("Birthday party for twelve kids, Sunday the twenty-first. Name's Jolene Parker.",
                "Hold up, it's more like sixteen now, my sister's bringing all her boys.",
                asked=["", "A birthday party for 12 kids for Jolene Parker on Sunday, June 21. Shall I book it?"])
    traced = trace(PARTY, {"host_name": "Jolene Parker", "date": "2026-06-03", "kids": 16}, line)
    assert traced.arguments["kids"] == 16 and traced.arguments["date"] == "2026-06-21" and traced.missing == []


def test_a_quarter_of_six_is_a_time_of_day() -> None:
    """ "He's got band practice till quarter of six" set a 30-minute lesson's length to 6."""
    assert [n.clock for n in numbers_said("till quarter of six")] == [True]
    assert [n.clock for n in numbers_said("till a quarter to six")] == [True]
    assert [n.clock for n in numbers_said("a quarter of the cake, six slices")] == [False]
    lesson = client_tool("book_lesson", {
        "player_name": {"type": "string", "description": "The player's full name"},
        "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
        "duration_minutes": {"type": "integer", "description": "Length of the lesson: 30 or 60"},
    }, ["player_name", "time", "duration_minutes"])
    line = said("Book Theo Price a half hour at five-thirty.",
                "Wait, scratch that, six o'clock would work better. He's got band practice till quarter of six.",
                asked=["", "A 30-minute lesson for Theo Price at 17:30. Shall I book it?"])
    assert "duration_minutes" in trace(lesson, {"player_name": "Theo Price", "time": "18:00",
                                                "duration_minutes": 6}, line).missing


ENROL = client_tool("enrol_lesson", {
    "swimmer_name": {"type": "string", "description": "Full name of the swimmer"},
    "level": {"type": "string", "enum": ["stage_5", "stage_6"], "description": "The lesson level"},
    "day": {"type": "string", "enum": ["monday", "tuesday"], "description": "Preferred day, if the caller said"},
    "swimmer_age": {"type": "integer", "description": "The swimmer's age in years, if the caller said"},
}, ["swimmer_name", "level"])


def test_a_choice_taken_back_is_not_kept_and_an_age_counts_no_choices() -> None:
    """ "Oh, hang on, Kofi said Stage 6 is Mondays, didn't he. Yeah, Monday, not Tuesday." kept
    the Tuesday read back, and took "Stage 6" for the swimmer's age ("said" of "if the caller
    said" named it, and an age counted the tool's choices as its things)."""
    line = said("Can Ada Oyelaran move up to Stage 6 on Tuesdays?",
                "Oh, hang on, Kofi said Stage 6 is Mondays, didn't he. Yeah, Monday, not Tuesday.",
                asked=["", "I'll put Ada Oyelaran down for Stage 6 on Tuesdays. Correct?"])
    traced = trace(ENROL, {"swimmer_name": "Ada Oyelaran", "level": "stage_6", "day": "tuesday", "swimmer_age": 6}, line)
    assert traced.arguments["day"] == "monday" and "swimmer_age" in traced.dropped


def test_a_habit_is_no_day_of_a_correction() -> None:
    """ "Wait, no, Thursday the eleventh. I'm in the office on Fridays." after "to Friday, June 12"
    was read back kept the Friday: "on Fridays" was read as a second new day."""
    move = client_tool("change_delivery_date", {
        "order_ref": {"type": "string", "description": "The order reference, e.g. F-9021"},
        "new_date": {"type": "string", "format": "date", "description": "The new delivery day"},
    }, ["order_ref", "new_date"])
    line = said("Can you move order F-9034 to Friday the twelfth?",
                "Wait, no, Thursday the eleventh. I'm in the office on Fridays.",
                asked=["", "I'll move order F-9034 to Friday, June 12. Is that right?"])
    assert "new_date" in trace(move, {"order_ref": "F-9034", "new_date": "2026-06-12"}, line).missing


# --- read from fresh54 (a livestock mart in Mullingar, a pawnshop in Cebu, land surveyors in Abuja, a
# metal fabricator in Kingston), after its one run

MOVE = client_tool("reschedule_visit", {
    "job_ref": {"type": "string", "description": "The job reference, e.g. J-4471"},
    "new_date": {"type": "string", "format": "date", "description": "The new day"},
}, ["job_ref", "new_date"])


def test_a_day_the_words_after_it_turn_down_is_no_new_day() -> None:
    """ "Please move the Mabushi survey, Monday is no longer good for me." moved it to Monday; so
    "di sixteenth nah work fi mi"."""
    for text, day in (("Please move job J-4471, Monday is no longer good for me.", "2026-06-08"),
                      ("Mi need fi move job J-4471, di sixteenth nah work fi mi.", "2026-06-16"),
                      ("Can you move job J-4471? Friday doesn't really suit.", "2026-06-05")):
        assert trace(MOVE, {"job_ref": "J-4471", "new_date": day}, said(text)).missing == ["new_date"], text
    kept = said("Can you move job J-4471 to Monday? Monday is not a problem for us.")
    assert trace(MOVE, {"job_ref": "J-4471", "new_date": "2026-06-08"}, kept).missing == []


FINISH = client_tool("change_finish", {
    "order_ref": {"type": "string", "description": "The order reference, e.g. G-3318"},
    "finish": {"type": "string", "enum": ["black", "white", "bronze"], "description": "The new paint colour"},
}, ["order_ref", "finish"])


def test_a_choice_the_caller_says_they_no_longer_like_is_not_theirs_but_a_fault_told_is() -> None:
    """ "Change di colour pon mi grill order, mi nuh like di black again." changed it to black; a
    fault told with a negation ("the van won't start") still names its choice."""
    line = said("Change di colour pon order G-3318, mi nuh like di black again.")
    assert trace(FINISH, {"order_ref": "G-3318", "finish": "black"}, line).missing == ["finish"]
    fault = client_tool("report_fault", {
        "booking_ref": {"type": "string", "description": "The booking, e.g. WA-77163"},
        "problem": {"type": "string", "enum": ["wont_start", "flat_tyre", "warning_light"], "description": "What is wrong"},
    }, ["booking_ref", "problem"])
    van = said("Booking WA-77163. The van won't start at all, not a sound.")
    assert trace(fault, {"booking_ref": "WA-77163", "problem": "wont_start"}, van).missing == []


def test_ay_and_mek_it_open_a_correction() -> None:
    """ "Ay, sorry, Talisay pala. ... Colon is so traffic." kept the Colon read back; "No, mek it
    eleven" is Jamaican for "make it"."""
    from pipeline.tools.asks import corrects
    assert corrects("Ay, sorry, Talisay pala. Tabunok is near my house.")
    assert corrects("Mek it eleven, mi haffi drop di likkle one first.")
    book = client_tool("book_appraisal", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "branch": {"type": "string", "enum": ["colon", "mandaue", "talisay"], "description": "Which branch"},
    }, ["customer_name", "branch"])
    line = said("Book me an appraisal at Colon. Name is Kristine Go.",
                "Ay, sorry, Talisay pala. Tabunok is near my house, Colon is so traffic.",
                asked=["", "An appraisal for Kristine Go at the Colon branch. Shall I book it?"])
    assert trace(book, {"customer_name": "Kristine Go", "branch": "colon"}, line).arguments["branch"] == "talisay"


def test_an_irish_county_address_on_file_is_one_entry_and_a_story_of_a_neighbour_is_no_errand() -> None:
    """ "Co. Westmeath" ended the record's entry, so the caller's address on file read as pieced
    together from two; "A neighbour of mine made me an offer" took the caller for a stranger ringing
    about the neighbour's thing."""
    mart = ("You answer the phone for Lakeside Mart. The caller is Seamus Walsh, customer code LM-55, of Clonmore, "
            "Rathowen, Co. Westmeath N91 X2F7; on file: entry E-2304, 40 lambs for Thursday, June 11. His brother, "
            "Francis Walsh, customer code LM-56, of Ballinalack, Co. Westmeath N91 K6R3; on file: entry E-2310, 12 "
            "weanlings for Saturday, June 6.")
    haul = client_tool("book_haulage", {
        "entry_ref": {"type": "string", "description": "The entry, e.g. E-2304"},
        "pickup_address": {"type": "string", "description": "Where the lorry should collect the animals"},
    }, ["entry_ref", "pickup_address"])
    home = said("Can the lorry collect the lambs for the eleventh from the home place?", instructions=mart)
    args = {"entry_ref": "E-2304", "pickup_address": "Clonmore, Rathowen, Co. Westmeath N91 X2F7"}
    assert trace(haul, args, home).missing == []
    withdraw = client_tool("withdraw_entry", {
        "entry_ref": {"type": "string", "description": "The entry, e.g. E-2304"}}, ["entry_ref"])
    story = said("Francis Walsh here. Take the weanlings out of Saturday's sale. A neighbour of mine made me an offer.",
                 instructions=mart)
    assert trace(withdraw, {"entry_ref": "E-2310"}, story).missing == []
    friend = said("Could I get the weanlings taken out of Saturday's sale for a friend of mine?", instructions=mart)
    assert trace(withdraw, {"entry_ref": "E-2310"}, friend).missing == ["entry_ref"]


def test_a_word_the_instructions_write_in_brackets_after_a_choice_names_it() -> None:
    """ "I want una to do the boundary survey" was asked which kind, where the desk prices a
    "perimeter (boundary) survey"."""
    survey = client_tool("book_survey", {
        "client_name": {"type": "string", "description": "The client's full name"},
        "survey_type": {"type": "string", "enum": ["perimeter", "topographic", "as_built"], "description": "Kind of survey"},
    }, ["client_name", "survey_type"])
    desk = "Prices: perimeter (boundary) survey 350,000; topographic survey 600,000; as-built survey 450,000."
    line = said("My name is Emeka Nwosu. I want the boundary survey before I fence the plot.", instructions=desk)
    assert trace(survey, {"client_name": "Emeka Nwosu", "survey_type": "perimeter"}, line).missing == []
    assert trace(survey, {"client_name": "Emeka Nwosu", "survey_type": "topographic"}, line).missing == ["survey_type"]


def test_the_callers_own_name_is_not_the_customer_where_they_book_another_they_name() -> None:
    """ "Hi po, Joy Dela Cruz. Can I book my mother for an appraisal? Lourdes Abellana, A-B-E-L-L-A-N-A."
    booked the appraisal for Joy: the customer is the mother the caller names; one who books
    herself keeps her own name, and a booker's argument (`host_name`) is the caller's."""
    appraisal = client_tool("book_appraisal", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "item_type": {"type": "string", "enum": ["gold_jewellery", "phone"], "description": "What is appraised"},
    }, ["customer_name", "item_type"])
    line = said("Hi po, Joy Dela Cruz. Can I book my mother for an appraisal? Lourdes Abellana, "
                "A-B-E-L-L-A-N-A. She has two gold bangles.")
    assert trace(appraisal, {"customer_name": "Joy Dela Cruz", "item_type": "gold_jewellery"}, line).missing \
        == ["customer_name"]
    assert trace(appraisal, {"customer_name": "Lourdes Abellana", "item_type": "gold_jewellery"}, line).missing == []
    herself = said("Hi po, Joy Dela Cruz. Can I book an appraisal for my gold bangles?")
    assert trace(appraisal, {"customer_name": "Joy Dela Cruz", "item_type": "gold_jewellery"}, herself).missing == []
    host = client_tool("book_party", {
        "host_name": {"type": "string", "description": "The full name of the adult booking"},
        "child_name": {"type": "string", "description": "The birthday child's full name"},
    }, ["host_name", "child_name"])
    party = said("Hiya, Dawn Ridley. I'd like a party for my daughter, Ellie Ridley, please.")
    assert trace(host, {"host_name": "Dawn Ridley", "child_name": "Ellie Ridley"}, party).missing == []


# --- read from fresh55 (a grain elevator near Brandon, a hatchery near Kumasi, a wool shop in
# Lerwick, a genealogy service in St. John's), after its one run

def test_a_time_before_suit_or_do_is_a_time_and_twa_is_two() -> None:
    """ "Would Monday at ten suit?" was refused its 10:00 ("ten suit" read as ten of something);
    "Could du make dat twa places?" is two, in Scots."""
    from pipeline.tools.spoken import ValueKind, said_in
    from tests.test_provenance import NOW
    assert said_in("10:00", "Would Monday at ten suit?", kind=ValueKind.TIME, now=NOW)
    assert not said_in("10:00", "I need ten work gloves.", kind=ValueKind.TIME, now=NOW)
    assert [n.values for n in numbers_said("twa places")] == [frozenset({2})]


def test_a_correction_naming_the_day_read_back_beside_another_takes_it_back() -> None:
    """ "Ach, sorry, I've got dat wrang, Friday I'm on da boat sooth. Thursday, same time." after
    "Friday, June 5 at 14:00" was read back kept the Friday."""
    visit = client_tool("book_fitting", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "date": {"type": "string", "format": "date", "description": "Day of the fitting"},
    }, ["customer_name", "date"])
    line = said("A fitting for Lewis Manson on Friday, please.",
                "Ach, sorry, I've got dat wrang, Friday I'm on da boat sooth. Thursday, same time.",
                asked=["", "A fitting for Lewis Manson on Friday, June 5 at 14:00. Shall I book it?"])
    assert trace(visit, {"customer_name": "Lewis Manson", "date": "2026-06-05"}, line).missing == ["date"]


def test_a_name_said_outright_is_the_callers_over_one_only_spelled() -> None:
    """ "I wants to find me great-grandfather's marriage. Patrick Hynes, H-Y-N-E-S, ... I'm Gloria
    Dalton." took Patrick Hynes, spelled at a sentence's start, for the caller; and the spelled
    name alone is no name of the caller's that another's would rule out ("Could I get my dad on
    the knife skills one? ... Ray Milburn, M-I-L-B-U-R-N.")."""
    from pipeline.tools.callers import introduced
    line = ("I wants to find me great-grandfather's marriage. Patrick Hynes, H-Y-N-E-S, married in "
            "Trepassey. I'm Gloria Dalton.")
    assert introduced([line]) == ["Gloria Dalton"]
    search = client_tool("order_record_search", {
        "client_name": {"type": "string", "description": "The client's full name"},
        "ancestor_name": {"type": "string", "description": "The ancestor's full name"},
    }, ["client_name", "ancestor_name"])
    assert trace(search, {"client_name": "Patrick Hynes", "ancestor_name": "Gloria Dalton"}, said(line)) \
        .arguments["client_name"] == "Gloria Dalton"
    workshop = client_tool("book_workshop", {
        "attendee_name": {"type": "string", "description": "The attendee's full name"},
    }, ["attendee_name"])
    dad = said("Could I get my dad on the knife skills one? It's his Father's Day present. Ray Milburn, M-I-L-B-U-R-N.")
    assert trace(workshop, {"attendee_name": "Ray Milburn"}, dad).missing == []


def test_a_look_ups_today_said_in_passing_asks_for_nothing() -> None:
    """ "What're ya payin' for canola today?" and "... or is it all direct deposit now?" ran a
    client's slot look-up for today: today, said in passing, rests no look-up on the caller; a
    look-up the words name ("anything open today?") or another day still runs."""
    from pipeline.tools.unasked import unasked
    slots = _tool("check_delivery_slots", "List open delivery slots on a day.", {
        "date": {"type": "string", "format": "date", "description": "The day to look at"},
    }, ["date"])
    for text in ("What're ya payin' for canola today?", "Do you fellas still pay by cheque, or is it all direct deposit now?"):
        assert unasked(slots, {"date": "2026-06-03"}, said(text)), text
    assert not unasked(slots, {"date": "2026-06-03"}, said("Have you got any slots open today?"))
    assert not unasked(slots, {"date": "2026-06-05"}, said("What about Friday?"))


# --- read from fresh56 (hurricane shutters in Nassau, an interpreting agency in Kampala, an
# agricultural show office near Rothbury, announcements on a Berbice radio station), after its run

def test_a_count_said_as_times_a_thing_is_done_is_the_count_of_its_doings() -> None:
    """ "Start it tomorrow in the evenin', and read it four times." was refused its `readings`: the
    verb before "four times" names the count written as its noun ("read": readings); another verb
    names nothing ("I've rung four times")."""
    announce = client_tool("book_announcement", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "readings": {"type": "integer", "description": "Total number of readings"},
        "guests": {"type": "integer", "description": "How many guests, if the caller said"},
    }, ["customer_name", "readings"])
    line = said("Me grandfather pass away last night, ninety-one years old. Me name is Anita Persaud. "
                "Start it tomorrow in the evenin', and read it four times.")
    assert trace(announce, {"customer_name": "Anita Persaud", "readings": 4}, line).missing == []
    from pipeline.tools.argrules import rules
    from pipeline.tools.number_role import role_here
    readings = rules(announce)["readings"]
    for text, role in (("read it four times", True), ("I've rung four times", None)):
        assert role_here(text, (text.index("four"), text.index("four") + 4), readings) is role, text


def test_twice_and_thrice_are_counts_of_the_doing_they_follow() -> None:
    """ "I want an anniversary greeting on Saturday the thirteenth, in the midday, read it twice." was
    refused its two readings: "twice" is a count wherever it stands ("once" only before "a", "every":
    "once I'm in" is no count), and names the readings after "read" as "read it four times" does;
    "rung twice" names none of them."""
    announce = client_tool("book_announcement", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "readings": {"type": "integer", "description": "Total number of readings"},
    }, ["customer_name", "readings"])
    line = said("Hi, my name is Marcia Bacchus. I want an anniversary greeting on Saturday, read it twice.")
    assert trace(announce, {"customer_name": "Marcia Bacchus", "readings": 2}, line).missing == []
    assert trace(announce, {"customer_name": "Marcia Bacchus", "readings": 3}, line).arguments["readings"] == 2
    rung = said("Hi, my name is Marcia Bacchus. I've rung twice about a greeting, and I want it read three times.")
    assert trace(announce, {"customer_name": "Marcia Bacchus", "readings": 2}, rung).arguments["readings"] == 3
    once = said("Hi, my name is Marcia Bacchus. Once I'm in, I'll want a greeting.")
    assert trace(announce, {"customer_name": "Marcia Bacchus", "readings": 1}, once).missing == ["readings"]


def test_a_choice_taken_back_in_the_same_breath_is_the_later_one() -> None:
    """ "I need the Bahama shutters, no, wait, the storm panels, for the shop front." booked a survey
    for Bahama shutters; "grab 'em Tuesday, nah, Wednesday's better" takes back no choice."""
    survey = client_tool("book_survey", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "shutter_type": {"type": "string", "enum": ["bahama", "storm_panels", "roll_down"], "description": "Which shutters"},
    }, ["customer_name", "shutter_type"])
    line = said("It's Anya Strachan. I need the Bahama shutters, no, wait, the storm panels, for the shop front.")
    assert trace(survey, {"customer_name": "Anya Strachan", "shutter_type": "bahama"}, line).arguments["shutter_type"] \
        == "storm_panels"
    assert trace(survey, {"customer_name": "Anya Strachan", "shutter_type": "storm_panels"}, line).missing == []


def test_a_number_beside_the_one_said_instead_of_the_read_back_is_not_its_correction() -> None:
    """ "Wait, it's sixteen, not twelve. I forgot the four on the back porch." after "for 12 openings"
    was read back booked 4 openings: the correction is sixteen."""
    visit = client_tool("book_visit", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "openings": {"type": "integer", "description": "Number of windows and doors"},
    }, ["customer_name", "openings"])
    line = said("Put up my shutters Friday. Kendra Sawyer. Twelve openings.",
                "Wait, it's sixteen, not twelve. I forgot the four on the back porch.",
                asked=["", "A put-up visit for Kendra Sawyer, for 12 openings on Friday. Shall I book it?"])
    assert trace(visit, {"customer_name": "Kendra Sawyer", "openings": 4}, line).missing == ["openings"]
    assert trace(visit, {"customer_name": "Kendra Sawyer", "openings": 16}, line).missing == []


TAKEAWAY = ("You take phone orders for Spice Lane, Leicester. Today is Wednesday, June 3, 2026. Menu: starters "
            "1 onion bhaji, 2 vegetable samosa, 3 chicken pakora; mains 10 chicken korma, 12 lamb rogan josh, "
            "14 vegetable biryani; sides 20 pilau rice, 21 garlic naan. The caller is Priya Shah; on file: "
            "3 poppadoms, 5 chutneys from her last visit.")
ADD_DISH = _tool("add_dish", "Add a dish to the caller's takeaway.", {
    "dish_number": {"type": "integer", "description": "The dish's number on the menu"},
    "course": {"type": "string", "enum": ["starters", "mains", "sides"], "description": "Which part of the menu"},
    "portions": {"type": "integer", "description": "How many portions"},
}, ["dish_number", "course", "portions"])


def test_a_number_the_desks_list_gives_the_thing_the_caller_names_is_theirs() -> None:
    """ "Ah've a grand Cheviot tup this year ... Ah want him in the tup class." was refused its class
    14 and section `sheep`: the schedule in the instructions ("Classes: sheep 12 Blackface ewe, 14
    Cheviot tup, ...") numbers the thing the caller named, and heads its group. A number of another
    entry, a record's counts and a count argument are not given so."""
    line = said("Hiya, it's Priya. Could I get two of the lamb rogan josh, please?", instructions=TAKEAWAY)
    assert trace(ADD_DISH, {"dish_number": 12, "course": "mains", "portions": 2}, line).missing == []
    assert trace(ADD_DISH, {"dish_number": 14, "course": "mains", "portions": 2}, line).missing == ["dish_number"]
    assert trace(ADD_DISH, {"dish_number": 12, "course": "sides", "portions": 2}, line).missing == ["course"]
    both = said("Hiya, could I get two of the chicken, please?", instructions=TAKEAWAY)  # korma or pakora
    assert trace(ADD_DISH, {"dish_number": 10, "course": "mains", "portions": 2}, both).missing == ["dish_number", "course"]
    from pipeline.tools.catalogue import entries
    assert {e.number for e in entries(TAKEAWAY)} == {1, 2, 3, 10, 12, 14, 20, 21}  # not her 3 poppadoms
    counted = said("Could I get some of the garlic naan?", instructions=TAKEAWAY)
    assert trace(ADD_DISH, {"dish_number": 21, "course": "sides", "portions": 21}, counted).missing == ["portions"]


GARDEN_SHOW = ("You answer the phone for the Ambleside Flower Show. Today is Wednesday, June 3, 2026. Classes: "
               "flowers 1 single rose, 2 sweet peas, 3 dahlia; fruit 10 gooseberries, 11 rhubarb. The caller is "
               "Tom Birch, member code AF-220.")
ENTER_SHOW = _tool("enter_show", "Enter an exhibit in a class of the show.", {
    "entrant_name": {"type": "string", "description": "The entrant's full name"},
    "class_number": {"type": "integer", "description": "The class number from the schedule"},
    "exhibit_name": {"type": "string", "description": "The variety's name, if the caller gave one"},
}, ["entrant_name", "class_number"])


def test_a_lists_entry_is_no_name_and_an_entrant_is_the_one_who_says_who_they_are() -> None:
    """ "Howay, it's Norman Dodd ... enter me Border terrier in the best terrier. She's called Nell"
    gave `entry_name` "best terrier", the class, and `exhibitor_name` "Nell", the dog: a list's entry
    names no animal or variety, and an exhibitor, like a customer, is the one who said who they are."""
    line = said("It's Tom Birch. Put me in for the sweet peas, they're called Cupid.", instructions=GARDEN_SHOW)
    entered = trace(ENTER_SHOW, {"entrant_name": "Tom Birch", "class_number": 2, "exhibit_name": "sweet peas"}, line)
    assert entered.missing == [] and "exhibit_name" not in entered.arguments
    assert trace(ENTER_SHOW, {"entrant_name": "Tom Birch", "class_number": 2, "exhibit_name": "Cupid"},
                 line).arguments["exhibit_name"] == "Cupid"
    assert trace(ENTER_SHOW, {"entrant_name": "Cupid", "class_number": 2}, line).arguments["entrant_name"] != "Cupid"
