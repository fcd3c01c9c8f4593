"""A read-back put right, and the days, choices and numbers a correction says: the choice the
caller names instead of the one read back, though they say the old one again ("semi-skimmed, the
whole's for me dad"); the number that replaces the one read back; a time or a day read back and
said again as the reason. Read from the corrections of fresh31 to fresh37 (2026-12-05), each shown
here in another desk."""

from __future__ import annotations

from pipeline.tools.on_file import said_as_new
from pipeline.tools.provenance import trace
from pipeline.tools.spoken.times import days_named
from pipeline.tools.spoken.words import words

from .test_provenance import NOW, client_tool, said

LOAVES = client_tool("add_loaf", {
    "bread": {"type": "string", "enum": ["white", "wholemeal", "sourdough", "rye"], "description": "Which loaf"},
    "count": {"type": "integer", "description": "How many loaves"},
}, ["bread", "count"])

READ_BACK = "Two white loaves on Saturday's order. Shall I add them?"


def test_the_choice_a_correction_names_replaces_the_one_read_back_though_the_old_is_said_again() -> None:
    put_right = said("Two loaves on Saturday, please.", "No, sorry, the sourdough. White's only for the kids.",
                     asked=["", READ_BACK])
    traced = trace(LOAVES, {"bread": "white", "count": 2}, put_right)
    assert traced.missing == [] and traced.arguments["bread"] == "sourdough"
    # not a correction: the model's pick of a choice said last stands
    asked_for = said("Two loaves on Saturday, please.", "The white, and the sourdough's lovely too.",
                     asked=["", READ_BACK])
    assert trace(LOAVES, {"bread": "white", "count": 2}, asked_for).arguments["bread"] == "white"
    # a correction naming two others says not which: neither is picked for the caller
    two = said("Two loaves on Saturday, please.", "No, sorry, rye or sourdough, not white.", asked=["", READ_BACK])
    assert trace(LOAVES, {"bread": "white", "count": 2}, two).arguments.get("bread") not in ("rye", "sourdough")


PRINTS = client_tool("order_print", {
    "album_code": {"type": "string", "description": "The album's code, e.g. AL-1234"},
    "photo_number": {"type": "integer", "description": "The photo's number in the album"},
    "copies": {"type": "integer", "description": "How many copies"},
}, ["album_code", "photo_number", "copies"])


def test_a_number_that_puts_a_read_back_right_takes_the_role_of_the_one_it_replaces() -> None:
    """ "Photo 14 from album AL-5521, three copies. Shall I order it?" "Oh, sorry, not fourteen.
    Forty-one." The new number is the photo's, though no word names it; the one taken back is not."""
    asked = "Photo 14 from album AL-5521, three copies. Shall I order it?"
    put_right = said("Could I order photo fourteen from AL-5521? Three copies.",
                     "Oh, sorry, not fourteen. Forty-one. The one by the lake.", asked=["", asked])
    good = trace(PRINTS, {"album_code": "AL-5521", "photo_number": 41, "copies": 3}, put_right)
    assert good.missing == []
    # "the one by the lake" is no photo number one
    assert trace(PRINTS, {"album_code": "AL-5521", "photo_number": 1, "copies": 3}, put_right).missing == ["photo_number"]
    # a count put right among other numbers ("Make it two. Three's too many, one's for me")
    fewer = said("Could I order photo fourteen from AL-5521? Three copies.",
                 "Ah, make it two. Three's too many, I've one already.", asked=["", asked])
    assert trace(PRINTS, {"album_code": "AL-5521", "photo_number": 14, "copies": 2}, fewer).missing == []
    # no correction: an unlabelled number among several is nobody's
    aside = said("Could I order photo fourteen from AL-5521? Three copies.",
                 "Lovely. Two of them are for my nan, one's for me.", asked=["", asked])
    assert "copies" in trace(PRINTS, {"album_code": "AL-5521", "photo_number": 14, "copies": 2}, aside).missing


LIGHTS = client_tool("add_extras", {
    "booking_ref": {"type": "string", "description": "The booking reference, e.g. B-1234"},
    "item": {"type": "string", "enum": ["bunting", "lanterns", "heaters"], "description": "What to add"},
    "quantity": {"type": "integer", "description": "How many strings of lanterns or patio heaters"},
}, ["booking_ref", "item", "quantity"])


def test_a_code_in_the_arguments_own_form_is_its_though_another_arguments_word_is_near() -> None:
    """ "Add the lanterns to B-2208": "lanterns" is the item's word, and the nearest to the code,
    but a code written in the booking reference's own form (B-1234) is the reference."""
    line = said("Would you add four strings of lanterns to B-2208?")
    assert trace(LIGHTS, {"booking_ref": "B-2208", "item": "lanterns", "quantity": 4}, line).missing == []
    # a number in no such form stays the word's near it: four is the quantity, not the reference
    assert "booking_ref" in trace(LIGHTS, {"booking_ref": "4", "item": "lanterns", "quantity": 4}, line).missing


GROOM = client_tool("book_groom", {
    "dog_name": {"type": "string", "description": "The dog's name"},
    "date": {"type": "string", "format": "date", "description": "Day of the groom"},
    "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
    "dogs": {"type": "integer", "description": "How many dogs"},
}, ["dog_name", "date", "time", "dogs"])
GROOM_ASKED = "A groom for Biscuit on Friday, June 5 at 15:00, two dogs. Shall I book it?"


def test_a_correction_that_says_the_old_day_or_time_again_as_its_reason_puts_the_one_read_back_right() -> None:
    """ "the half four one instead? We won't be back by three": the three read back, said again,
    is the one taken back, and the call runs at 16:30; "make it three, sorry, the neighbour's will
    want one too" is three dogs; "Can we make it Saturday? Friday's the day we drive up" is Saturday."""
    first = "Could Biscuit come in Friday at three? Two dogs."
    day = said(first, "Ah, sorry, can we make it Saturday? Friday's the day we drive up to the coast.",
               asked=["", GROOM_ASKED])
    traced = trace(GROOM, {"dog_name": "Biscuit", "date": "2026-06-05", "time": "15:00", "dogs": 2}, day)
    assert traced.arguments["date"] == "2026-06-06"
    time = said(first, "Ah, could we do half four instead? We won't be back from the beach by three.",
                asked=["", GROOM_ASKED])
    traced = trace(GROOM, {"dog_name": "Biscuit", "date": "2026-06-05", "time": "15:00", "dogs": 2}, time)
    assert traced.arguments["time"] == "16:30"
    dogs = said(first, "Actually, make it three, sorry. The neighbour's will want one too.", asked=["", GROOM_ASKED])
    traced = trace(GROOM, {"dog_name": "Biscuit", "date": "2026-06-05", "time": "15:00", "dogs": 2}, dogs)
    assert traced.arguments["dogs"] == 3
    # not a correction: the caller agrees and tells of another day; the day read back stands
    told = said(first, "Yes, that's grand. Saturday we're away.", asked=["", GROOM_ASKED])
    traced = trace(GROOM, {"dog_name": "Biscuit", "date": "2026-06-05", "time": "15:00", "dogs": 2}, told)
    assert traced.arguments["date"] == "2026-06-05"



def test_a_number_said_as_the_new_value_is_not_a_time_or_a_length_of_another_unit() -> None:
    def new(text: str, number: str, cues: frozenset[str]) -> bool:
        start = text.index(number)
        return said_as_new(text, start, start + len(number), cues)
    assert new("Actually, make it three, sorry. He'll want one too.", "three", frozenset({"dog"}))
    assert not new("Actually, make it three, sorry. He'll want one too.", "one", frozenset({"dog"}))
    assert not new("Oh, sorry, not eleven, make it two in the arvo.", "two", frozenset({"child"}))
    assert not new("Oh wait, make that two hours. Ninety minutes is never enough.", "two", frozenset({"minute"}))
    assert new("Ah, make it three days, we're staying on.", "three", frozenset({"day", "extra"}))


def test_a_dropped_g_is_read_as_the_word() -> None:
    """ "Could y'all move it to Tuesday evenin'?": the evening slot (fresh37's air conditioning
    desk kept the model's afternoon, and refused it); a name in quotes is not changed."""
    move = client_tool("move_visit", {
        "visit_ref": {"type": "string", "description": "The visit, e.g. V-1234"},
        "new_date": {"type": "string", "format": "date", "description": "The new day"},
        "new_window": {"type": "string", "enum": ["morning", "afternoon", "evening"], "description": "Time of day"},
    }, ["visit_ref", "new_date", "new_window"])
    line = said("It's about visit V-5521. Monday mornin' don't work no more. Could y'all move it to Tuesday evenin'?")
    traced = trace(move, {"visit_ref": "V-5521", "new_date": "2026-06-09", "new_window": "afternoon"}, line)
    assert traced.missing == [] and traced.arguments["new_window"] == "evening"
    assert [w.text for w in words("We call him 'Robin' at home.")][3] == "robin"
    # a choice only turned down is no choice made
    down = said("It's about visit V-5521. Evenin's are no good for me, Tuesday if you can.")
    assert trace(move, {"visit_ref": "V-5521", "new_date": "2026-06-09", "new_window": "afternoon"},
                 down).arguments.get("new_window") != "evening"


def test_a_correction_that_names_the_day_read_back_as_well_puts_that_day_right() -> None:
    """fresh37: "Oh, sorry, no, I'm back on the Saturday, not the Sunday. The thirteenth, so." kept
    the Sunday read back (two days said), and "Nah, hang on, Thursday's my late shift. Friday the
    twelfth's better." kept the Thursday: the day read back, said again, is the one taken back."""
    stay = client_tool("book_stay", {
        "guest_name": {"type": "string", "description": "The guest's full name"},
        "arrival": {"type": "string", "format": "date", "description": "Day of arrival"},
        "departure": {"type": "string", "format": "date", "description": "Day of departure"},
    }, ["guest_name", "arrival", "departure"])
    asked = "Ruth Bell, from Wednesday, June 10 to Sunday, June 14. Shall I book it?"
    line = said("A room from the tenth to the Sunday, please. Ruth Bell.",
                "Oh, sorry, no, I'm leaving on the Saturday, not the Sunday. The thirteenth, so.", asked=["", asked])
    traced = trace(stay, {"guest_name": "Ruth Bell", "arrival": "2026-06-10", "departure": "2026-06-14"}, line)
    assert traced.arguments["departure"] == "2026-06-13" and traced.arguments["arrival"] == "2026-06-10"
    move = client_tool("move_drop_off", {
        "job_ref": {"type": "string", "description": "The job, e.g. J-1234"},
        "new_date": {"type": "string", "format": "date", "description": "The new drop-off day"},
    }, ["job_ref", "new_date"])
    later = said("Can I drop job J-4410 off later, Thursday maybe?",
                 "Nah, hang on, Thursday's my late shift. Friday the twelfth's better.",
                 asked=["", "I'll move the drop-off of job J-4410 to Thursday, June 11. Is that right?"])
    assert trace(move, {"job_ref": "J-4410", "new_date": "2026-06-11"}, later).arguments["new_date"] == "2026-06-12"


def test_a_weekday_said_beside_a_date_is_that_date_but_a_weekday_said_twice_is_kept() -> None:
    assert days_named("I'm back on the Saturday, not the Sunday. The thirteenth, so.", NOW) == ["2026-06-13"]
    # a date named with its weekday stays, though "now" (a Wednesday) is said too
    assert "2026-06-17" in (days_named("It's the seventeenth, the Wednesday. I've his card in front of me now.", NOW) or [])
    assert days_named("I'm in for me hip on Monday, so stop the milk from Monday and start it again "
                      "Wednesday the seventeenth.", NOW) == ["2026-06-08", "2026-06-17"]


def test_the_day_after_is_the_day_after_the_last_day_said_and_a_day_said_before_instead_is_the_new_one() -> None:
    """fresh37: "I can't get the bike down to you on Tuesday after all. Could I drop it the day
    after instead?" kept Tuesday the 9th; the day after it, the 10th, is the one asked for."""
    assert days_named("I can't make it on Tuesday after all. Could I come the day after instead?", NOW) \
        == ["2026-06-09", "2026-06-10"]
    assert days_named("We fly on the twelfth, so we want the car from the day before.", NOW) == ["2026-06-12", "2026-06-11"]
    assert days_named("Can I come the day after tomorrow?", NOW) == ["2026-06-05"]
    assert days_named("The day after, I was fine.", NOW) == []  # no day said before it
    move = client_tool("move_walk", {
        "walk_ref": {"type": "string", "description": "The walk, e.g. W-1234"},
        "new_date": {"type": "string", "format": "date", "description": "The new day"},
    }, ["walk_ref", "new_date"])
    line = said("It's about walk W-3380. I can't be in on Tuesday after all. Could Rex go the day after instead?")
    assert trace(move, {"walk_ref": "W-3380", "new_date": "2026-06-09"}, line).arguments["new_date"] == "2026-06-10"


def test_a_code_put_right_by_its_ending_is_the_code_read_back_with_that_ending() -> None:
    """fresh37: "No sir, it ends three eight one." to "We'll ring you on 210-555-0318. Is that
    right?" kept 0318 (refused); fresh34's "Nah, five five oh at the end." the same. The code read
    back with the ending said is the caller's; a digit said to be missing says not where."""
    ring = client_tool("request_callback", {
        "name": {"type": "string", "description": "Who to ring"},
        "phone_number": {"type": "string", "description": "The number to ring"},
        "visit_ref": {"type": "string", "description": "The visit, e.g. V-1234"},
    }, ["name", "phone_number"])
    asked = "We'll ring Ada Moss on 0161 496 0318 about visit V-2210. Is that right?"
    first = "Could someone ring me about visit V-2210? Ada Moss, oh one six one, four nine six, oh three eight one."
    for answer in ("No, it ends three eight one. Three, eight, one.", "Nah, three eight one at the end."):
        line = said(first, answer, asked=["", asked])
        traced = trace(ring, {"name": "Ada Moss", "phone_number": "0161 496 0318", "visit_ref": "V-2210"}, line)
        assert traced.missing == [] and traced.arguments["phone_number"] == "0161 496 0381", answer
        assert traced.arguments["visit_ref"] == "V-2210"
    missed = said(first, "No, you've dropped a digit, it ends three eight one.", asked=["", asked])
    assert "phone_number" in trace(ring, {"name": "Ada Moss", "phone_number": "0161 496 0318"}, missed).missing



def test_a_clause_is_no_persons_name() -> None:
    """fresh39: "Boss, mih car dead on de highway ..." was written as the caller's name, and ran."""
    tow = client_tool("request_tow", {
        "caller_name": {"type": "string", "description": "The caller's full name"},
        "location": {"type": "string", "description": "Where the car is"},
    }, ["caller_name", "location"])
    line = said("Boss, mih car dead on de highway, right by de flyover. Name is Marlon Baptiste.")
    assert "caller_name" in trace(tow, {"caller_name": "Boss, mih car dead on de highway", "location": "by de flyover"},
                                  line).missing
    assert trace(tow, {"caller_name": "Marlon Baptiste", "location": "by de flyover"}, line).missing == []


def test_a_number_said_after_another_arguments_new_value_corrects_nothing_of_this_one() -> None:
    """fresh50: "Wait ah, make it three hours. Once they start singing Jay Chou, confirm cannot
    stop one." after a room read back for six people: the hours are three, the guests still six
    (the Singlish "one" closing a sentence is no count)."""
    room = client_tool("book_room", {
        "hours": {"type": "integer", "description": "How many hours"},
        "guests": {"type": "integer", "description": "Number of guests"},
    }, ["hours", "guests"])
    line = said("A room for six people, two hours, please.",
                "Wait ah, make it three hours. Once they start singing, confirm cannot stop one.",
                asked=["", "A room for 6 people for 2 hours. Shall I book it?"])
    assert trace(room, {"hours": 3, "guests": 6}, line).arguments == {"hours": 3, "guests": 6}
    # a count said as new beside it is still the count's
    both = said("A room for six people, two hours, please.", "Wait, make it three hours, and make it seven people.",
                asked=["", "A room for 6 people for 2 hours. Shall I book it?"])
    assert trace(room, {"hours": 3, "guests": 6}, both).arguments == {"hours": 3, "guests": 7}


def test_a_count_said_after_scratch_that_is_the_new_count() -> None:
    """fresh51: "Ah, scratch that, it's seven. The in-laws wanna come along too." after five
    places read back: seven places (not seven o'clock)."""
    places = client_tool("book_workshop", {
        "contact_name": {"type": "string", "description": "Who the booking is under"},
        "people": {"type": "integer", "description": "Number of places"},
    }, ["contact_name", "people"])
    line = said("Can you book five of us into the workshop? Under Hamish Reid.",
                "Ah, scratch that, it's seven. The in-laws wanna come along too.",
                asked=["", "Five places at the workshop under Hamish Reid. Shall I book it?"])
    assert trace(places, {"contact_name": "Hamish Reid", "people": 5}, line).arguments["people"] == 7
    assert trace(places, {"contact_name": "Hamish Reid", "people": 7}, line).missing == []


def test_the_one_number_no_word_names_for_another_argument_is_the_count() -> None:
    """fresh51: "an outfitting package for two, starting Monday the twenty-second, for three
    days": three are the days, so two is the people; with two numbers unnamed, neither is."""
    package = client_tool("book_package", {
        "days": {"type": "integer", "description": "Trip length in days"},
        "people": {"type": "integer", "description": "Number of people on the trip"},
    }, ["days", "people"])
    line = said("I'd like an outfitting package for two, starting Monday the twenty-second, for three days.")
    assert trace(package, {"days": 3, "people": 2}, line).missing == []
    assert trace(package, {"days": 3, "people": 3}, line).missing == ["people"]
    unnamed = said("I'd like an outfitting package for two, or maybe three, starting Monday, for three days.")
    assert trace(package, {"days": 3, "people": 2}, unnamed).missing == ["people"]


def test_a_correction_of_a_number_read_back_for_another_argument_sets_no_count_of_its_own() -> None:
    """fresh49: "Oh, shoot, scratch that, it's three hundred sixty." after "300 acres of wheat ...
    Shall I book it?": the acres are corrected; the combines nobody counted stay unsaid."""
    harvest = client_tool("book_harvest", {
        "acres": {"type": "integer", "description": "How many acres"},
        "combines": {"type": "integer", "description": "How many combines, if the caller said"},
    }, ["acres"])
    line = said("Put me down for three hundred acres of wheat.", "Oh, shoot, scratch that, it's three hundred sixty.",
                asked=["", "300 acres of wheat. Shall I book it?"])
    assert "combines" not in trace(harvest, {"acres": 360, "combines": 2}, line).arguments


def test_two_days_of_a_span_written_one_right_one_wrong_keep_the_start_first() -> None:
    """fresh23: "From Saturday the twentieth to the Tuesday after, the twenty-third." written
    start "Saturday, 20th" (said) and end "2026-06-09" (nobody's): the end is the 23rd, the start
    still the 20th (the model's earlier day was not the start's)."""
    boarding = client_tool("book_boarding", {
        "start_date": {"type": "string", "format": "date", "description": "First night"},
        "end_date": {"type": "string", "format": "date", "description": "Day of collection"},
    }, ["start_date", "end_date"])
    line = said("Could I book her in? From Saturday the twentieth to the Tuesday after, the twenty-third.")
    traced = trace(boarding, {"start_date": "Saturday, 20th", "end_date": "2026-06-09"}, line)
    assert traced.arguments == {"start_date": "2026-06-20", "end_date": "2026-06-23"}


def test_a_one_closing_a_clause_after_a_verb_is_no_count() -> None:
    """fresh52: "Wait ah, sorry, make it lunch, not dinner. Dinner time I always OT one, nobody at
    home." after three dishes read back set the dishes to 1 ("one" closing a clause, in Singapore
    English, is no number); "Sorry, just one." still is."""
    from pipeline.tools.number_role import closing_one

    tiffin = client_tool("start_subscription", {
        "meal": {"type": "string", "enum": ["lunch", "dinner"], "description": "Which meal"},
        "dishes": {"type": "integer", "description": "Dishes a day"},
    }, ["meal", "dishes"])
    line = said("Dinner, three dishes, please.", "Wait ah, sorry, make it lunch, not dinner. Dinner time I always OT one, nobody at home.",
                asked=["", "Dinner with 3 dishes. Shall I start it?"])
    assert trace(tiffin, {"meal": "lunch", "dishes": 3}, line).arguments == {"meal": "lunch", "dishes": 3}
    text = "Sorry, just one. I always OT one, nobody home. Cannot stop one."
    found = [closing_one(text, m.start(), m.end()) for m in __import__("re").finditer("one", text)]
    assert found == [False, True, True]
