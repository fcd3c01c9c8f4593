"""Provenance: every argument of every tool traced to the caller's words, an earlier result, the
instructions or the agent's own prose, in domains the framework was not written for (a clinic, a
taxi line, a bank's card line), with tools declared as a realtime client declares them."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest

from pipeline.base.clock import SimClock
from pipeline.tools import Ledger, ToolCall, ToolRegistry, ToolSpec, tool
from pipeline.tools.evidence import Evidence
from pipeline.tools.provenance import rules, trace
from pipeline.tools.runner import ToolRunner
from pipeline.tools.spoken import Source, ValueKind

NOW = datetime(2026, 6, 3, 10, 0)  # a Wednesday morning


def client_tool(name: str, properties: dict, required: list[str]) -> ToolSpec:
    """A function as a realtime client declares it: a schema and no code."""
    return ToolSpec.from_openai({"type": "function", "name": name, "description": f"{name} it.",
                                 "parameters": {"type": "object", "properties": properties,
                                                "required": required}})


BOOK = client_tool("book_appointment", {
    "patient_name": {"type": "string", "description": "Full name of the patient"},
    "date": {"type": "string", "format": "date", "description": "Day of the appointment"},
    "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
    "doctor": {"type": "string", "description": "The doctor's name, if the caller asked for one"},
    "reason": {"type": "string", "description": "Why the patient is coming, in a few words"},
}, ["patient_name", "date", "time"])

RIDE = client_tool("book_ride", {
    "pickup_address": {"type": "string", "description": "Where to pick the passenger up"},
    "pickup_time": {"type": "string", "description": "When, HH:MM on the 24-hour clock"},
    "passengers": {"type": "integer", "description": "How many people"},
    "destination": {"type": "string", "description": "Where to, if the caller said"},
}, ["pickup_address", "pickup_time"])

DISPUTE = client_tool("dispute_charge", {
    "card_last4": {"type": "string", "description": "Last four digits of the card"},
    "merchant": {"type": "string", "description": "Who charged the card"},
    "amount": {"type": "number", "description": "The charge, in dollars"},
}, ["card_last4", "merchant", "amount"])


def said(*lines: str, instructions: str = "", asked: list[str] | None = None,
         results: list | None = None) -> Evidence:
    return Evidence(said=list(lines), asked=asked or [""] * len(lines), results=results or [],
                    instructions=instructions, now=NOW)


def test_a_call_on_a_line_that_asked_for_nothing_has_values_nobody_gave() -> None:
    line = said("I had an appointment last Thursday and it went really well.")
    traced = trace(BOOK, {"patient_name": "John Doe", "date": "2026-05-28", "time": "10:30"}, line)
    assert traced.missing == ["patient_name", "time"]  # "last Thursday" was said: the date was


def test_six_pm_is_eighteen_hundred_not_fourteen() -> None:
    line = said("Can I get a cab at the central station at 6 pm?")
    wrong = trace(RIDE, {"pickup_address": "Central Station", "pickup_time": "14:00"}, line)
    assert wrong.missing == [] and wrong.arguments["pickup_time"] == "18:00"  # the caller's, said again
    assert trace(RIDE, {"pickup_address": "Central Station", "pickup_time": "18:00"}, line).missing == []
    # "at six" is morning or evening: the model's 14:00 is neither, and nothing says which
    at_six = said("Can I get a cab at the central station at six?")
    assert trace(RIDE, {"pickup_address": "Central Station", "pickup_time": "14:00"}, at_six).missing \
        == ["pickup_time"]
    assert trace(RIDE, {"pickup_address": "Central Station", "pickup_time": "18:00"}, at_six).missing == []


def test_a_moment_written_wrong_is_said_again_as_the_caller_said_it() -> None:
    """Qwen wrote "2026-06-09" for "tomorrow", "12/30" for "the 12th", "2026-06-03T18:00" for
    "quarter to eight tonight": the caller's one moment of the kind asked replaces it."""
    ride = client_tool("book_ride", {
        "pickup_address": {"type": "string"},
        "pickup_time": {"type": "string", "description": "ISO 8601 date and time, or now"}},
        ["pickup_address", "pickup_time"])
    tonight = said("A van from the Grand Hotel at quarter to eight tonight.")
    assert trace(ride, {"pickup_address": "Grand Hotel", "pickup_time": "2026-06-03T18:00"},
                 tonight).arguments["pickup_time"] == "2026-06-03T19:45"
    soon = said("Pick me up from the Grand Hotel in twenty minutes.")
    assert trace(ride, {"pickup_address": "Grand Hotel", "pickup_time": "19:00"},
                 soon).arguments["pickup_time"] == "2026-06-03T10:20"
    checkup = said("It's Priya Raman, a checkup on the 12th at ten thirty.")
    traced = trace(BOOK, {"patient_name": "Priya Raman", "date": "12/30", "time": "10:30"}, checkup)
    assert traced.missing == [] and traced.arguments["date"] == "2026-06-12"
    # taken back: "five pm, not five in the morning" names one time
    corrected = said("Book me tomorrow at five, it's Omar Said.", "No, five pm, not five in the morning.")
    assert trace(BOOK, {"patient_name": "Omar Said", "date": "2026-06-04", "time": "05:00"},
                 corrected).arguments["time"] == "17:00"
    monday = said("Move my appointment to Monday at nine.", "Sorry, I meant Friday, not Monday.")
    assert trace(BOOK, {"patient_name": "Omar Said", "date": "2026-06-08", "time": "09:00"},
                 monday).arguments["date"] == "2026-06-05"
    # several days, or none: asked, not chosen
    either = said("Marcus Hale, Monday or Tuesday at 2 pm.")
    assert trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-10", "time": "14:00"},
                 either).missing == ["date"]
    nothing = said("Marcus Hale, I'd like an appointment.")
    assert trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-04", "time": "14:00"},
                 nothing).missing == ["date", "time"]
    # a value that is no moment at all is judged as it is
    assert trace(BOOK, {"patient_name": "Marcus Hale", "date": "soonest", "time": "14:00"},
                 said("Marcus Hale, tomorrow at 2 pm.")).missing == ["date"]


def test_a_bare_hour_is_the_one_of_its_readings_in_the_opening_hours() -> None:
    """"At 7:30" is morning or evening; at a restaurant open 12:00 to 15:00 and 18:00 to 22:30 it
    is 19:30, and the model's 18:00 is said again so. Where both readings, or neither, are open,
    or no hours are given, nothing says which: asked, not chosen."""
    table = client_tool("make_reservation", {
        "name": {"type": "string"}, "date": {"type": "string", "format": "date"},
        "time": {"type": "string", "description": "HH:MM, 24-hour"}}, ["name", "date", "time"])
    hours = "Today is Wednesday, June 3, 2026. Open Tuesday to Sunday, 12:00 to 15:00 and 18:00 to 22:30."
    line = "Hi, a table for four on Saturday at 7:30, under Jensen."
    wrote = {"name": "Jensen", "date": "2026-06-06", "time": "18:00"}
    assert trace(table, wrote, said(line, instructions=hours)).arguments["time"] == "19:30"
    assert trace(table, wrote, said(line)).missing == ["time"]  # no hours: which 7:30?
    clinic = "The clinic is open weekdays from 8:00 to 18:00."
    eleven = said("Could you move my appointment for Omar Said to Thursday at eleven?", instructions=clinic)
    assert trace(table, {"name": "Omar Said", "date": "2026-06-04", "time": "11:30"},
                 eleven).arguments["time"] == "11:00"
    all_day = said("Omar Said, Thursday at eleven.", instructions="Open 00:00 to 24:00.")
    assert trace(table, {"name": "Omar Said", "date": "2026-06-04", "time": "11:30"}, all_day).missing == ["time"]


def test_a_day_asked_for_as_a_date_reaches_the_tool_as_one() -> None:
    traced = trace(BOOK, {"patient_name": "Leo Martins", "date": "Friday", "time": "09:30"},
                   said("Can I see a doctor on Friday at half past nine? It's for Leo Martins."))
    assert traced.missing == [] and traced.arguments["date"] == "2026-06-05"


def test_right_now_is_the_time_it_was_said() -> None:
    line = said("I need a taxi at 42 Elm Street right now.")
    assert trace(RIDE, {"pickup_address": "42 Elm Street", "pickup_time": "10:00"}, line).missing == []
    assert trace(RIDE, {"pickup_address": "42 Elm Street", "pickup_time": "14:00"}, line
                 ).arguments["pickup_time"] == "10:00"  # "right now" was 10:00, not 14:00


def test_an_optional_argument_nobody_gave_is_left_out_not_invented() -> None:
    line = said("This is Marcus Hale, I'd like to see a doctor tomorrow at 2 pm.")
    traced = trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-04", "time": "14:00",
                          "doctor": "Dr. Smith", "reason": "a check-up"}, line)
    assert traced.missing == [] and traced.dropped == ["doctor", "reason"]  # prose about nothing said
    assert traced.arguments == {"patient_name": "Marcus Hale", "date": "2026-06-04", "time": "14:00"}
    knee = said("This is Marcus Hale, I'd like to see a doctor tomorrow at 2 pm about my knee, it keeps swelling.")
    assert trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-04", "time": "14:00",
                        "reason": "swollen knee"}, knee).arguments["reason"] == "swollen knee"  # the agent's words


def test_a_count_is_not_a_time_and_a_time_is_not_a_count() -> None:
    line = said("A cab from the airport at 6 for 4 people.")
    assert trace(RIDE, {"pickup_address": "the airport", "pickup_time": "18:00", "passengers": 4},
                 line).dropped == []
    # the time's 6 is no count: the call runs on the count the caller said for it ("for 4 people")
    assert trace(RIDE, {"pickup_address": "the airport", "pickup_time": "18:00", "passengers": 6},
                 line).arguments["passengers"] == 4
    assert trace(RIDE, {"pickup_address": "the airport", "pickup_time": "18:00", "passengers": 6},
                 said("A cab from the airport at 6.")).dropped == ["passengers"]


def test_the_instructions_are_a_source_with_their_labels() -> None:
    """The card on file comes from the account the deployment put in the instructions."""
    account = ("Caller's account: cards on file: Visa ending 4242, Mastercard ending 5555. "
               "Recent charges: Blue Bottle Coffee 12.40 dollars on the Visa.")
    line = said("There's a coffee charge on my card I don't recognise, twelve forty.",
                instructions=account)
    ok = {"card_last4": "4242", "merchant": "Blue Bottle Coffee", "amount": 12.40}
    assert trace(DISPUTE, ok, line).missing == []
    # an invented card never runs: the coffee charge the caller names is on the Visa, which runs
    assert trace(DISPUTE, {**ok, "card_last4": "9999"}, line).arguments["card_last4"] == "4242"
    assert trace(DISPUTE, {**ok, "card_last4": "9999"}, said("A charge on my card I don't recognise.",
                                                            instructions=account)).missing == ["card_last4"]
    assert trace(DISPUTE, {**ok, "merchant": "Bank of America"}, line).missing == ["merchant"]
    assert trace(DISPUTE, ok, said("There's a charge I don't recognise.")).missing \
        == ["card_last4", "merchant", "amount"]


def test_a_number_keeps_the_role_the_caller_gave_it() -> None:
    line = said("My card ending 1234 was charged 40 dollars by Acme.")
    assert trace(DISPUTE, {"card_last4": "1234", "merchant": "Acme", "amount": 40}, line).missing == []
    swapped = trace(DISPUTE, {"card_last4": "40", "merchant": "Acme", "amount": 1234}, line)
    # 40 was said as dollars, not as the card: refused; the amount is the one said in its role
    assert swapped.missing == ["card_last4"] and swapped.arguments["amount"] == 40


def test_a_count_of_us_is_the_people_not_another_argument() -> None:
    """fresh8's cottage line: "eight of us altogether, and we fancied a week away" is eight
    people, so it is no source for the nights (Qwen wrote nights 8); it is for the guests. A
    tool with no argument for people still takes it where nothing else names it."""
    stay = client_tool("check_stay", {
        "nights": {"type": "integer", "description": "Number of nights"},
        "guests": {"type": "integer", "description": "Total number of people staying"}}, ["nights"])
    line = said("We're a big family, eight of us altogether, and we fancied a week away.")
    assert trace(stay, {"nights": 8}, line).missing == ["nights"]
    assert trace(stay, {"nights": 8, "guests": 8}, line).missing == ["nights"]
    both = said("There's eight of us, for three nights.")
    assert trace(stay, {"nights": 3, "guests": 8}, both).missing == []
    seats = client_tool("book_seats", {"seats": {"type": "integer", "description": "How many seats"}}, ["seats"])
    assert trace(seats, {"seats": 3}, said("Three of us are coming.")).missing == []


GROOMER = ("Dogs on file: Biscuit (dog id D-5512), cockapoo, medium, usually has a full groom; Pepper (dog id "
           "D-5513), miniature schnauzer, small, usually has a bath and brush. Upcoming appointments: booking "
           "GB-70240, Pepper, bath and brush, Thursday 4 June 2026 at 14:00 with Kasia; booking GB-70215, Biscuit, "
           "full groom, Saturday 13 June 2026 at 10:30 with Bethan.")
GROOM = client_tool("book_groom", {
    "dog_id": {"type": "string", "description": "The dog's id from the record, such as D-1234"},
    "date": {"type": "string", "format": "date"},
    "add_ons": {"type": "array", "description": "Extras the caller asked for, if any",
                "items": {"type": "string", "enum": ["teeth_clean", "flea_treatment", "paw_balm"]}}},
    ["dog_id", "date"])


def test_a_list_of_choices_keeps_only_those_the_caller_named() -> None:
    """fresh8's groomer: Qwen added "teeth_clean" to a booking whose caller named no extra. Each
    item of a list of the schema's choices is traced as one choice is: those named stay, and an
    optional list with none named is left out."""
    unnamed = said("Could I book Pepper in on Friday?", instructions=GROOMER)
    traced = trace(GROOM, {"dog_id": "D-5513", "date": "2026-06-05", "add_ons": ["teeth_clean"]}, unnamed)
    assert traced.dropped == ["add_ons"] and "add_ons" not in traced.arguments and traced.missing == []
    named = said("Could I book Pepper in on Friday, and have her teeth cleaned?", instructions=GROOMER)
    traced = trace(GROOM, {"dog_id": "D-5513", "date": "2026-06-05", "add_ons": ["paw_balm", "teeth_clean"]}, named)
    assert traced.arguments["add_ons"] == ["teeth_clean"] and traced.dropped == []


LOCKOUT = client_tool("dispatch_lockout", {
    "address": {"type": "string", "description": "Where the caller is locked out"},
    "child_or_pet_inside": {"type": "boolean", "description": "True if the caller said a child or pet is shut inside"},
    "gift_wrap": {"type": "boolean", "x-source": ["caller", "composed"]},
    "urgent": {"type": "boolean"}}, ["address", "urgent"])


def test_an_optional_flag_runs_only_where_the_caller_touched_what_it_is_about() -> None:
    """fresh8's locksmith: Qwen set `child_or_pet_inside: true` on a line that spoke of no one
    inside. An optional flag, true or false, is left out unless the caller's words (or the question
    they answered) touch a word of its name or description; a required one, or one with its own
    `x-source`, is the model's to set."""
    nobody = said("I've locked myself out at 87 East Gay Street, can you send somebody?")
    args = {"address": "87 East Gay Street", "child_or_pet_inside": True, "gift_wrap": True, "urgent": True}
    traced = trace(LOCKOUT, args, nobody)
    assert traced.dropped == ["child_or_pet_inside"] and traced.missing == []
    assert traced.arguments == {"address": "87 East Gay Street", "gift_wrap": True, "urgent": True}
    assert trace(LOCKOUT, {**args, "child_or_pet_inside": False}, nobody).dropped == ["child_or_pet_inside"]
    dog = said("Please hurry, my dog is shut in the car at 87 East Gay Street.")
    assert trace(LOCKOUT, args, dog).arguments["child_or_pet_inside"] is True
    answered = said("87 East Gay Street.", "No, nobody.",
                    asked=["Where are you?", "Is a child or a pet shut inside?"])
    assert trace(LOCKOUT, {**args, "child_or_pet_inside": False}, answered).arguments["child_or_pet_inside"] is False


def test_of_two_records_the_caller_names_the_one_is_the_one_they_name_most() -> None:
    """fresh8's groomer: "Biscuit's in with you on Saturday, and I'd like to bring Pepper ... for a
    bath and brush" got Biscuit's id, and "move Pepper's appointment" Biscuit's booking (the new day,
    Saturday, is a word of Biscuit's entry). The entry the caller names most, a name counting twice,
    is the one; a record the caller points at alone still stands."""
    both = said("Biscuit's in with you on Saturday the thirteenth, and I'd like to bring Pepper at the same "
                "time for a bath and brush.", instructions=GROOMER)
    assert trace(GROOM, {"dog_id": "D-5512", "date": "2026-06-13"}, both).arguments["dog_id"] == "D-5513"
    assert trace(GROOM, {"dog_id": "D-5513", "date": "2026-06-13"}, both).missing == []
    move = client_tool("reschedule_appointment", {
        "booking_id": {"type": "string", "description": "The booking reference, such as GB-12345"},
        "new_date": {"type": "string", "format": "date"}}, ["booking_id", "new_date"])
    line = said("I need to move Pepper's appointment, could she come Saturday instead?", instructions=GROOMER)
    assert trace(move, {"booking_id": "GB-70215", "new_date": "2026-06-06"}, line).arguments["booking_id"] == "GB-70240"
    alone = said("Can Biscuit come in on Friday?", instructions=GROOMER)
    assert trace(GROOM, {"dog_id": "D-5512", "date": "2026-06-05"}, alone).missing == []


def test_an_answer_takes_the_role_of_the_question() -> None:
    lines = ["Acme charged me twenty dollars.", "It's 5521."]
    assert trace(DISPUTE, {"card_last4": "5521", "merchant": "Acme", "amount": 20},
                 said(*lines, asked=["", "What are the last four digits of the card?"])).missing == []
    assert trace(DISPUTE, {"card_last4": "5521", "merchant": "Acme", "amount": 20},
                 said(*lines, asked=["", "Okay, one moment."])).missing == ["card_last4"]


def test_a_result_grounds_a_value_but_not_in_a_field_named_for_another() -> None:
    results = [{"card_last4": "9075", "merchant": "Acme", "amount": 23.99}]
    line = said("What was that last charge?", results=results)
    assert trace(DISPUTE, {"card_last4": "9075", "merchant": "Acme", "amount": 23.99}, line).missing == []
    assert trace(DISPUTE, {"card_last4": "2399", "merchant": "Acme", "amount": 9075}, line).missing \
        == ["card_last4", "amount"]


def test_spelled_codes_and_misheard_names_match() -> None:
    check_in = client_tool("check_in", {"booking_code": {"type": "string"},
                                        "guest_name": {"type": "string"}}, ["booking_code", "guest_name"])
    line = said("It's under Katherine Oduya, code k seven q two.")
    assert trace(check_in, {"booking_code": "K7Q2", "guest_name": "Catherine Oduya"}, line).missing == []
    # a code miscopied is the one the caller spelled; with none spelled, nobody gave it
    assert trace(check_in, {"booking_code": "K7Q3", "guest_name": "Catherine Oduya"}, line).arguments \
        == {"booking_code": "K7Q2", "guest_name": "Catherine Oduya"}
    assert trace(check_in, {"booking_code": "K7Q3", "guest_name": "Catherine Oduya"},
                 said("It's under Katherine Oduya.")).missing == ["booking_code"]


def test_an_argument_may_say_where_its_value_comes_from() -> None:
    props = {"summary": {"type": "string", "description": "A summary of the call"},
             "ticket": {"type": "string", "x-source": "caller"}}
    spec = client_tool("file_ticket", props, ["summary", "ticket"])
    assert rules(spec)["summary"].sources >= {Source.COMPOSED}
    assert rules(spec)["ticket"].sources == frozenset({Source.CALLER})
    line = said("My laptop will not boot.", instructions="Open ticket: INC-4471.")
    assert trace(spec, {"summary": "Laptop won't boot", "ticket": "INC-4471"}, line).missing == ["ticket"]
    with pytest.raises(ValueError, match="x-source"):
        rules(client_tool("bad", {"x": {"type": "string", "x-source": "the moon"}}, ["x"]))


def test_kinds_come_from_the_schema() -> None:
    got = {name: rule.kind for name, rule in rules(RIDE).items()}
    assert got == {"pickup_address": ValueKind.ADDRESS, "pickup_time": ValueKind.TIME,
                   "passengers": ValueKind.NUMBER, "destination": ValueKind.ADDRESS}


@tool(side_effect=True, business_key=lambda a: f"ride:{a['pickup_address']}")
async def book_ride(pickup_address: str, pickup_time: str, destination: str = "") -> dict:
    """Book a taxi.

    Args:
        pickup_address: Where to pick the caller up.
        pickup_time: When, HH:MM.
        destination: Where to, if the caller said.
    """
    RIDES.append({"pickup_address": pickup_address, "pickup_time": pickup_time,
                  "destination": destination})
    return {"booked": True}


RIDES: list[dict] = []


def test_the_runner_refuses_a_required_value_and_leaves_out_an_optional_one(tmp_path) -> None:
    RIDES.clear()
    evidence = said("A taxi at 42 Elm Street at six please.")  # morning or evening: no one time
    runner = ToolRunner(ToolRegistry(specs=[book_ride]), ledger=Ledger(tmp_path / "l.sqlite3"),
                        clock=SimClock(), evidence=lambda: evidence)

    def run(arguments: dict):
        return asyncio.run(runner.run(ToolCall(name="book_ride", arguments=arguments), call_id="c", response_id="r",
                                      turn_id="t"))

    refused = run({"pickup_address": "42 Elm Street", "pickup_time": "14:00"})
    assert refused.output["status"] == "not_run" and refused.extra["ungrounded"] == ["pickup_time"]
    assert RIDES == []
    done = run({"pickup_address": "42 Elm Street", "pickup_time": "18:00", "destination": "the airport"})
    assert done.output["status"] == "committed", done.output
    assert done.extra["dropped"] == ["destination"]
    assert RIDES == [{"pickup_address": "42 Elm Street", "pickup_time": "18:00", "destination": ""}]
    assert json.loads(json.dumps(done.arguments)) == {"pickup_address": "42 Elm Street",
                                                      "pickup_time": "18:00"}


def test_a_python_tool_says_where_an_argument_comes_from(tmp_path) -> None:
    @tool(sources={"account_id": ["instructions"], "note": "caller"})
    async def open_case(account_id: str, note: str) -> dict:
        """Open a case.

        Args:
            account_id: The caller's account.
            note: What the caller reported.
        """
        return {}

    props = open_case.parameters["properties"]
    assert props["account_id"]["x-source"] == ["instructions"] and props["note"]["x-source"] == "caller"
    evidence = said("My account is AC-991 and the app crashes.", instructions="Caller's account: AC-118.")
    assert trace(open_case, {"account_id": "AC-118", "note": "the app crashes"}, evidence).missing == []
    assert trace(open_case, {"account_id": "AC-991", "note": "the app crashes"}, evidence).missing \
        == ["account_id"]  # from the instructions only: what the caller claims is not the record
    assert trace(open_case, {"account_id": "AC-118", "note": "the screen is cracked"}, evidence).missing \
        == ["note"]  # said by the caller, not composed
    with pytest.raises(ValueError, match="not one of its arguments"):
        tool(sources={"acount_id": "caller"})(open_case.fn)
    with pytest.raises(ValueError, match="x-source"):
        tool(sources={"note": "hearsay"})(open_case.fn)


def test_words_a_tool_declares_name_an_argument() -> None:
    """A card called by its brand: the brand names are the desk's words (`cues`), not the core's."""
    @tool(side_effect=True, business_key=lambda a: a["order_id"], cues={"card_last4": ["visa", "mastercard"]})
    async def refund(order_id: str, card_last4: str) -> dict:
        """Refund an order.

        Args:
            order_id: The order number.
            card_last4: The last four digits of the card.
        """
        return {}

    assert refund.parameters["properties"]["card_last4"]["x-cues"] == ["visa", "mastercard"]
    line = said("Give me a refund for order 4417. It's my Visa number 1111.")
    assert trace(refund, {"order_id": "4417", "card_last4": "1111"}, line).missing == []
    assert trace(refund, {"order_id": "1111", "card_last4": "4417"}, line).missing == ["order_id", "card_last4"]
    bare = client_tool("refund", {"order_id": {"type": "string"}, "card_last4": {"type": "string"}},
                       ["order_id", "card_last4"])
    assert trace(bare, {"order_id": "4417", "card_last4": "1111"}, line).missing == ["card_last4"]


def test_a_time_reaches_the_tool_as_its_schema_asks() -> None:
    line = said("A cab at 42 Elm Street at six thirty pm.")
    traced = trace(RIDE, {"pickup_address": "42 Elm Street", "pickup_time": "6 thirty PM"}, line)
    assert traced.missing == [] and traced.arguments["pickup_time"] == "18:30"
    ambiguous = trace(RIDE, {"pickup_address": "42 Elm Street", "pickup_time": "7"}, said("At 42 Elm Street at 7."))
    assert ambiguous.arguments["pickup_time"] == "7"  # morning or evening: left as written


async def _clients_call_said_at(now: datetime) -> tuple[list, list]:
    """A client's `book_appointment` written by a scripted model for "tomorrow at 2 pm", in a
    session whose caller said it at `now`: the calls handed to the client, and the items."""
    from pipeline.base import events as ev
    from pipeline.base.config import Config
    from pipeline.call.session import Session, Stages
    from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
    from pipeline.transports.scripted import ScriptedCaller
    from pipeline.turns import HeuristicCompleteness

    from .test_listeners import LoudVAD

    call = {"name": "book_appointment", "arguments": {"patient_name": "Marcus Hale", "date": "2026-06-04",
                                                      "time": "14:00"}}
    llm = ScriptedLLM(rules=[[r"tomorrow", call]])
    clock = SimClock()
    session = Session(Config.default(), Stages(vad=LoudVAD(), stt=ScriptedSTT(), completeness=HeuristicCompleteness(),
                                               llm=llm, tts=ToneTTS()), clock=clock, sink=ScriptedCaller([]))
    session.tools.now = lambda: now
    session.use_tools(ToolRegistry(specs=[BOOK]))
    session.client.update(text_only=True)
    handed: list = []
    session.listeners.add(lambda e: handed.append(e) if isinstance(e, ev.FunctionCallArgumentsDone) else None,
                          ev.EventPhase.OBSERVER)
    driver = asyncio.ensure_future(clock.drive())
    try:
        session.start()
        session.mark_ready()
        session.client.add_message("user", "It's Marcus Hale, book me tomorrow at 2 pm please.")
        session.client.request_response()
        while not session.idle:
            await clock.sleep(0.05)
        await session.close()
    finally:
        driver.cancel()
    return handed, session.conversation.items


def test_the_session_reads_tomorrow_from_when_the_caller_said_it() -> None:
    """`ToolDesk.now` (the wall clock by default) is when the caller's words were said: a call
    replayed or labelled on its own day sets it, and "tomorrow" is the day after that."""
    handed, items = asyncio.run(_clients_call_said_at(NOW))
    assert [json.loads(e.arguments)["date"] for e in handed] == ["2026-06-04"]
    handed, items = asyncio.run(_clients_call_said_at(datetime(2026, 6, 10, 9, 0)))
    # said a week later, "tomorrow" is the 11th: the model's "2026-06-04" is nobody's, and the
    # client's function gets the caller's day instead
    assert [json.loads(e.arguments)["date"] for e in handed] == ["2026-06-11"]


def test_the_instructions_hours_are_no_source_for_a_time_the_caller_named() -> None:
    """Qwen on the restaurant line: "Are you free on Saturday?" checked today at 18:00, the
    opening hour and the date the instructions hold. The caller named a day: those are no source."""
    hours = "Today is Wednesday, June 3, 2026. Open Tuesday to Sunday, 12:00 to 15:00 and 18:00 to 22:30."
    book = client_tool("check_availability", {"date": {"type": "string", "format": "date"},
                                              "time": {"type": "string", "description": "HH:MM"}}, ["date"])
    saturday = said("Are you free on Saturday?", instructions=hours)
    today = trace(book, {"date": "2026-06-03", "time": "18:00"}, saturday)
    assert today.arguments == {"date": "2026-06-06"} and today.dropped == ["time"]  # the caller's day
    assert trace(book, {"date": "2026-06-06", "time": "18:00"}, saturday).dropped == ["time"]
    assert trace(book, {"date": "2026-06-06"}, saturday).missing == []
    # asked about the menu, no day: the instructions' "today" is when the call is, not a day asked for
    pasta = said("Do you have gluten free pasta?", instructions=hours)
    assert trace(book, {"date": "2026-06-03"}, pasta).missing == ["date"]
    record = said("I'd like to cancel my next booking.", instructions=hours + " Next booking: June 9, 2026.")
    assert trace(book, {"date": "2026-06-09"}, record).missing == []  # a record's day is a source


def test_an_unnamed_number_in_the_instructions_is_no_source_and_a_phrase_is_no_code() -> None:
    party = client_tool("book_table", {"party_size": {"type": "integer", "description": "How many people"}},
                        ["party_size"])
    assert trace(party, {"party_size": 10}, said("A table, please.", instructions="Tables seat up to 10.")
                 ).missing == ["party_size"]
    card = client_tool("replace_card", {"card_last4": {"type": "string"}}, ["card_last4"])
    assert trace(card, {"card_last4": "200 Canal Street"},
                 said("Send a new Visa to my office at 200 Canal Street.")).missing == ["card_last4"]


def test_an_optional_value_from_the_record_is_left_out_and_a_number_is_no_name() -> None:
    """Qwen on the clinic line: the instructions' doctor filled in an optional `doctor` the
    caller never asked for, and the patient number P-20417 stood in for the patient's name."""
    record = "Doctors: Dr. Okafor and Dr. Lindqvist. Caller on file: Priya Raman, patient number P-20417."
    line = said("I'd like to come in Monday at eight for a blood test.", instructions=record)
    traced = trace(BOOK, {"patient_name": "Priya Raman", "date": "2026-06-08", "time": "08:00",
                          "doctor": "Dr. Okafor"}, line)
    assert traced.missing == [] and traced.dropped == ["doctor"]  # required: from the record; optional: not
    # the number is no name: the call runs on the name beside it on file (`record.name_beside`)
    assert trace(BOOK, {"patient_name": "P-20417", "date": "2026-06-08", "time": "08:00"}, line).arguments \
        ["patient_name"] == "Priya Raman"


def test_of_several_values_on_file_only_the_one_the_caller_means_is_given() -> None:
    """Two cards on file: "please freeze my card" names neither, so neither is given and the agent
    asks; "my debit card", "my Mastercard", a charge the record lists on one card, each names one."""
    record = ("Verified caller: Daniel Brooks. Cards on file: Visa debit ending 5521 and Mastercard credit "
              "ending 0387. Recent card transactions: 2026-06-01 Northwind Grocers 64.20 on 5521; "
              "2026-06-02 StreamPlus 10.99 on 0387.")
    freeze = client_tool("freeze_card", {"card_last4": {"type": "string", "description": "Last four digits of the card"}},
                         ["card_last4"])

    def given_cards(line: str) -> list[str]:
        return [card for card in ("5521", "0387")  # as the model wrote it, not said again
                if (t := trace(freeze, {"card_last4": card}, said(line, instructions=record))).arguments
                == {"card_last4": card} and not t.missing]

    assert given_cards("Please freeze my card.") == []
    assert given_cards("I lost my debit card, please freeze it.") == ["5521"]
    assert given_cards("I found my Mastercard.") == ["0387"]
    assert given_cards("There's a charge from StreamPlus I never signed up for.") == ["0387"]
    assert given_cards("Freeze the card ending 0387.") == ["0387"]  # said: the record is not asked
    one = "Cards on file: Visa ending 4242."
    assert not trace(freeze, {"card_last4": "4242"}, said("Please freeze my card.", instructions=one)).missing


def test_a_code_written_wrong_is_the_one_on_file_the_caller_points_at() -> None:
    """Qwen wrote card_last4 "5200" from "fifty two dollars on my credit card", and "200 Canal
    Street" for "a replacement Visa": of the two cards on file, the caller's words point at one,
    and that one is the value. Where they point at neither, the call is refused and the caller
    asked; where they said a card of their own, it is that one; where the record holds one card,
    it is that one."""
    record = ("Verified caller: Daniel Brooks. Cards on file: Visa debit ending 5521 and Mastercard credit "
              "ending 0387. Recent card transactions: 2026-06-02 Shell 52.00 on 0387.")
    dispute = said("I want to dispute the Shell charge of fifty two dollars on my credit card.", instructions=record)
    traced = trace(DISPUTE, {"card_last4": "5200", "merchant": "Shell", "amount": 52}, dispute)
    assert traced.missing == [] and traced.arguments["card_last4"] == "0387"
    replace_card = client_tool("send_replacement_card", {
        "card_last4": {"type": "string", "description": "Last four digits of the card to replace"},
        "delivery_address": {"type": "string", "description": "Where to send it"}}, ["card_last4"])
    visa = said("Please send a replacement Visa to my office at 200 Canal Street instead.", instructions=record)
    assert trace(replace_card, {"card_last4": "200 Canal Street"}, visa).arguments["card_last4"] == "5521"
    neither = said("Please send me a replacement card.", instructions=record)
    assert trace(replace_card, {"card_last4": "1234"}, neither).missing == ["card_last4"]
    own = said("Dispute the Shell charge of fifty two dollars on my card ending 9911.", instructions=record)
    assert trace(DISPUTE, {"card_last4": "5200", "merchant": "Shell", "amount": 52}, own).arguments["card_last4"] \
        == "9911"  # the card the caller said, not one on file
    one = said("Dispute the Shell charge of fifty two dollars on my card.", instructions="Cards on file: Visa ending 4242.")
    assert trace(DISPUTE, {"card_last4": "5200", "merchant": "Shell", "amount": 52}, one).arguments["card_last4"] \
        == "4242"  # the record's only card: what "my card" gives where the model copies it
    year = said("Dispute the charge on my card.", instructions="Car on file: 2019 Ford Focus.")
    assert trace(DISPUTE, {"card_last4": "5200", "merchant": "Shell", "amount": 52}, year).missing[0] == "card_last4"


def test_a_reading_outside_the_hours_a_self_contradicting_date_and_a_party_are_not_the_callers() -> None:
    """Qwen on "Do you have anything for eight people on Sunday around seven?" at a restaurant open
    in the evening: name "Eight people on Sunday around seven", date "Sunday, June 3, 2026" (a
    Wednesday), time "07:00". Each matches the caller's words; none is what the caller said."""
    hours = "Open Tuesday to Sunday, 12:00 to 15:00 and 18:00 to 22:30."
    table = client_tool("make_reservation", {
        "name": {"type": "string", "description": "The name the reservation is under"},
        "date": {"type": "string", "format": "date"},
        "time": {"type": "string", "description": "HH:MM, 24-hour"}}, ["date", "time"])
    line = said("Do you have anything for eight people on Sunday around seven?", instructions=hours)
    traced = trace(table, {"name": "Eight people on Sunday around seven", "date": "Sunday, June 3, 2026",
                           "time": "07:00"}, line)
    assert traced.arguments == {"date": "2026-06-07", "time": "19:00"} and traced.dropped == ["name"]
    assert trace(table, {"date": "2026-06-07", "time": "19:00"}, line).arguments["time"] == "19:00"
    # no hours given: "around seven" may be 07:00
    assert trace(table, {"date": "2026-06-07", "time": "07:00"}, said(line.said[0])).missing == []


HIRE = client_tool("reserve_car", {
    "driver_name": {"type": "string", "description": "Full name of the main driver"},
    "pickup_date": {"type": "string", "format": "date", "description": "The day the car is collected"},
    "return_date": {"type": "string", "format": "date", "description": "The day the car is brought back"},
}, ["driver_name", "pickup_date", "return_date"])


def test_a_calls_several_days_are_the_days_the_caller_named() -> None:
    """Told "from Friday, back Monday", a small model writes days of its own; the call runs on the
    caller's two, the earlier to the one it wrote earlier; a day said in the wrong place is set
    right with the others; where the caller named other than one day for each, it is refused."""
    line = said("A compact on Friday, bringing it back Monday, the name's Daniel Ferreira.")
    wrote = {"driver_name": "Daniel Ferreira", "pickup_date": "2026-06-15", "return_date": "2026-07-14"}
    traced = trace(HIRE, wrote, line)
    assert traced.missing == [] and (traced.arguments["pickup_date"], traced.arguments["return_date"]) \
        == ("2026-06-05", "2026-06-08")
    till = said("An economy car for Lucy Achterberg, tomorrow at eight in the morning till Friday.")
    swapped = trace(HIRE, {**wrote, "driver_name": "Lucy Achterberg", "pickup_date": "2026-06-03",
                           "return_date": "2026-06-04"}, till)  # "tomorrow" written as the return
    assert (swapped.arguments["pickup_date"], swapped.arguments["return_date"]) == ("2026-06-04", "2026-06-05")
    for words in ("A compact on Friday or Saturday, the name's Daniel Ferreira.",  # a choice, not two days
                  "A compact from Friday, the name's Daniel Ferreira.",  # one day for two
                  "A compact for the weekend, the name's Daniel Ferreira."):  # which days?
        assert trace(HIRE, wrote, said(words)).missing != [], words


def test_a_day_told_of_is_no_day_to_act_on() -> None:
    """ "Tomorrow at 2 pm, she's been limping since the weekend": the visit is tomorrow."""
    line = said("Could I bring Juno in tomorrow at 2 pm? She's been limping since the weekend.")
    traced = trace(BOOK, {"patient_name": "Juno", "date": "2026-06-11", "time": "14:00"}, line)
    assert traced.missing == [] and traced.arguments["date"] == "2026-06-04"


def test_a_spelled_name_reaches_the_tool_without_its_letters() -> None:
    line = said("Book me tomorrow at 2 pm, the name is Roisin, R O I S I N, Gallagher.")
    wrote = {"patient_name": "Roisin R O I S I N Gallagher", "date": "2026-06-04", "time": "14:00"}
    assert trace(BOOK, wrote, line).arguments["patient_name"] == "Roisin Gallagher"
    hire = client_tool("book_hire", {"delivery_address": {"type": "string", "description": "Where the tub is delivered"}},
                       ["delivery_address"])
    for line, copied, runs in (
            ("Twenty-three Cregagh Road, C-R-E-G-A-G-H.", "23 Cregagh Road, C-R-E-G-A-G-H", "23 Cregagh Road"),
            ("Gerard Kavanagh, K-A-V-A-N-A-G-H, one-eighteen LeMarchant Road.",
             "K-A-V-A-N-A-G-H, one-eighteen LeMarchant Road", "one-eighteen LeMarchant Road")):
        traced = trace(hire, {"delivery_address": copied}, said(line))
        assert (traced.missing, traced.arguments["delivery_address"]) == ([], runs), line
    # an address keeps a number: the rest of a name's spelling is none (fresh29)
    builder = said("I am Piotr Zielinski, Z-I-E-L-I-N-S-K-I, I am builder. It goes to 5 Psalter Lane.")
    assert trace(hire, {"delivery_address": "Z-I-E-L-I-N-S-K-I, I am builder"}, builder).missing == ["delivery_address"]
    initials = said("Book J. R. R. Tolkien tomorrow at 2 pm.")
    assert trace(BOOK, {**wrote, "patient_name": "J. R. R. Tolkien"}, initials).arguments["patient_name"] \
        == "J. R. R. Tolkien"  # initials are part of a name


CALLBACK = client_tool("request_callback", {
    "phone_number": {"type": "string", "description": "The number to ring back"},
}, ["phone_number"])


def test_a_phone_numbers_leading_zero_is_kept_as_said() -> None:
    line = said("Ring me back on oh seven seven one two three four five six seven eight.")
    assert trace(CALLBACK, {"phone_number": "7712345678"}, line).arguments == {"phone_number": "07712345678"}
    assert trace(CALLBACK, {"phone_number": "07712345678"}, line).missing == []
    # a digit miscopied: the number the caller said; with two numbers said, neither is the one
    assert trace(CALLBACK, {"phone_number": "7712345679"}, line).arguments == {"phone_number": "07712345678"}
    two = said("Ring me back on oh seven seven one two three four five six seven eight, or on oh seven "
               "seven one two three four five six seven nine.")
    assert trace(CALLBACK, {"phone_number": "7712345670"}, two).missing == ["phone_number"]


CANCEL = client_tool("cancel_appointment", {
    "patient_name": {"type": "string", "description": "Full name of the patient"},
    "date": {"type": "string", "format": "date", "description": "Day of the appointment to cancel"},
}, ["patient_name", "date"])
ON_FILE = ("Caller on file, matched by their phone number: Priya Raman, date of birth 1988-11-02, "
           "patient number P-20417; next appointment Tuesday, June 9, 2026 at 09:30.")


def test_a_name_written_as_the_records_number_is_the_name_beside_it() -> None:
    """ "Cancel my appointment next Tuesday": a small model writes the patient number on file as
    the patient's name; the call runs on the name of that entry. Not where the number is the
    caller's own words (a tag said aloud), nor where the entry names nobody or two people."""
    line = said("I need to cancel my appointment next Tuesday.", instructions=ON_FILE)
    traced = trace(CANCEL, {"patient_name": "P-20417", "date": "2026-06-09"}, line)
    assert traced.missing == [] and traced.arguments["patient_name"] == "Priya Raman"
    two = ON_FILE.replace("Priya Raman,", "Priya Raman and Omar Said,")
    assert trace(CANCEL, {"patient_name": "P-20417", "date": "2026-06-09"},
                 said("I need to cancel my appointment next Tuesday.", instructions=two)).missing == ["patient_name"]
    spoken = said("Cancel P 20417 next Tuesday.", instructions=ON_FILE)
    assert trace(CANCEL, {"patient_name": "P-20417", "date": "2026-06-09"}, spoken).missing == ["patient_name"]


def test_a_week_on_is_the_day_a_week_after() -> None:
    """ "a week today", "a week on Monday", "Tuesday week", "Thursday next week": said on
    Wednesday June 3rd, June 10th, 15th, 16th and 11th, not the day without its week."""
    for words, day in (("for a week today", "2026-06-10"), ("a week on Monday", "2026-06-15"),
                       ("Tuesday week", "2026-06-16"), ("Thursday next week", "2026-06-11"),
                       ("Thursday this week", "2026-06-04"), ("on Monday, week two", "2026-06-08")):
        line = said(f"Marcus Hale, {words}, at 2 pm.")
        traced = trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-03", "time": "14:00"}, line)
        assert traced.arguments["date"] == day, words


TRACK = client_tool("rebook_delivery", {
    "tracking_number": {"type": "string", "description": "The parcel's tracking number"},
    "parcels": {"type": "integer", "description": "How many parcels"},
}, ["tracking_number"])
TRACK_ONLY = client_tool("track_parcel", {
    "tracking_number": {"type": "string", "description": "The parcel's tracking number"},
}, ["tracking_number"])


def test_a_code_written_in_the_callers_words_reaches_the_tool_as_a_code() -> None:
    line = said("The card says S W zero zero six one five five three two eight nine.")
    traced = trace(TRACK_ONLY, {"tracking_number": "S W zero zero six one five five three two eight nine"}, line)
    assert traced.arguments == {"tracking_number": "SW0061553289"}
    # a digit short: not the caller's as written; the one code they said is the value
    assert trace(TRACK_ONLY, {"tracking_number": "S W zero zero six one five five three two eight"},
                 line).arguments == {"tracking_number": "SW0061553289"}
    assert trace(TRACK_ONLY, {"tracking_number": "SW0061553288"},
                 said("I've got a card through the door.")).missing == ["tracking_number"]


def test_a_code_no_count_could_be_is_the_only_numbered_arguments_among_several_numbers() -> None:
    """Three numbers said ("two two eight one, six six oh, four nine one"), no word naming the
    tracking number: a code with letters in it is the tracking number (the last words' one such
    code: no count could be it, on a tool with a count too); a bare number among several is not."""
    line = said("Could I get S W two two eight one, six six oh, four nine one redelivered?")
    assert trace(TRACK_ONLY, {"tracking_number": "SW2281660491"}, line).missing == []
    assert trace(TRACK, {"tracking_number": "SW2281660491"}, line).missing == []
    assert trace(TRACK_ONLY, {"tracking_number": "491"}, line).missing == ["tracking_number"]


CLASS = client_tool("book_class", {
    "class_name": {"type": "string", "description": "The class's name on the timetable"},
    "location": {"type": "string", "description": "The street address of the studio"},
}, ["class_name"])


def test_a_name_or_an_address_holding_more_than_itself_is_cut_to_it() -> None:
    line = said("Book me the spin on Monday morning at the studio on Mill Road, not Mill Lane.")
    traced = trace(CLASS, {"class_name": "Spin on Monday morning", "location": "Mill Road, not Mill Lane"}, line)
    assert traced.arguments == {"class_name": "Spin", "location": "Mill Road"}


REPORT = client_tool("report_missed_bin", {
    "address": {"type": "string", "description": "The street address of the bin"},
}, ["address"])


def test_an_address_from_the_record_is_its_whole_address_not_a_piece() -> None:
    record = "Caller on file: Tomasz Nowak, 41 Larch Avenue, Hartley HT4 7QD, council tax account 6041 8227."
    line = said("Our recycling didn't get picked up yesterday.", instructions=record)
    for piece in ("Hartley HT4 7QD", "Larch Avenue, Hartley HT4 7QD", "41 Larch Avenue, Hartley HT4 7QD"):
        assert trace(REPORT, {"address": piece}, line).arguments == {"address": "41 Larch Avenue, Hartley HT4 7QD"}
    assert trace(REPORT, {"address": "41 Larch Avenue"}, line).arguments == {"address": "41 Larch Avenue"}


def test_a_day_corrected_without_a_not_is_taken_back() -> None:
    """ "Saturday at 2 pm" then "Actually, make it Sunday instead": the booking is Sunday's; a
    model that keeps Saturday has its day said again as the caller's last words name it."""
    line = said("Marcus Hale, Saturday at 2 pm, please.", "Actually, make it Sunday instead.")
    traced = trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-06", "time": "14:00"}, line)
    assert traced.missing == [] and traced.arguments["date"] == "2026-06-07"
    same = said("Marcus Hale, Saturday at 2 pm, please.", "Actually, Saturday is right.")
    assert trace(BOOK, {"patient_name": "Marcus Hale", "date": "2026-06-06", "time": "14:00"},
                 same).arguments["date"] == "2026-06-06"


def test_the_one_code_or_number_the_caller_said_is_the_value_where_the_model_miscopied_it() -> None:
    """Qwen on caller lines it had never seen: "SW9943058" for "Sierra Whiskey, one nine nine four,
    three oh two, five five eight"; "077-729-5643" for "oh seven seven double oh, nine one two,
    four five six"; a meter reading of 7931 for "seven thousand nine hundred and twelve". Where the
    caller said one value in the argument's role, the call runs on it; not on a number said
    roughly, nor on a code of another length the model did not copy from ("back in 2019")."""
    assert trace(TRACK_ONLY, {"tracking_number": "SW9943058"},
                 said("Yeah, it's, um, Sierra Whiskey, one nine nine four, three oh two, five five eight. "
                      "I just want to know when it's turning up.")).arguments == {"tracking_number": "SW1994302558"}
    assert trace(CALLBACK, {"phone_number": "077-729-5643"},
                 said("Could somebody call me back on oh seven seven double oh, nine one two, four five six?")
                 ).arguments == {"phone_number": "07700912456"}
    assert trace(CALLBACK, {"phone_number": "1234567890"},
                 said("My brother learned with Priya back in 2019. Does she still teach?")).missing == ["phone_number"]
    reading = client_tool("submit_meter_reading", {
        "reading": {"type": "integer", "description": "The number on the meter"}}, ["reading"])
    assert trace(reading, {"reading": 7931}, said("Gas reading for you: seven thousand nine hundred and "
                                                  "twelve.")).arguments == {"reading": 7912}
    assert trace(reading, {"reading": 18422}, said("I sent you a reading of eighteen thousand four hundred "
                                                   "and something back in April.")).missing == ["reading"]


def test_the_records_only_code_is_the_value_where_the_model_wrote_a_placeholder() -> None:
    """An energy desk's record holds one account; Qwen wrote the schema's example "BW-1234567".
    The account on file is the value; a year on file is no registration, nor prose about codes
    ("ten digits") a code."""
    book = client_tool("book_meter_visit", {
        "account_number": {"type": "string", "description": "The account number, such as BW-1234567"},
        "date": {"type": "string", "format": "date", "description": "Day of the visit"}}, ["account_number", "date"])
    record = "Caller on file: Helen Mbeki, account number BW-4471902, 27 Larkspur Road."
    line = said("Could I book the smart meter fitting? Tuesday the ninth.", instructions=record)
    assert trace(book, {"account_number": "BW-1234567", "date": "2026-06-09"}, line).arguments \
        == {"account_number": "BW-4471902", "date": "2026-06-09"}
    service = client_tool("book_service", {
        "registration": {"type": "string", "description": "The car's registration"}}, ["registration"])
    car = said("Book my car in for a service.", instructions="Car on file: 2019 Ford Focus, tyres 205/55 R16.")
    assert trace(service, {"registration": "AB12 CDE"}, car).missing == ["registration"]
    # a piece of the plate on file is not the plate; nor is the record's year, where the caller read out their own
    plated = "Car on file: 2019 Ford Focus, registration LK19 XRT."
    assert trace(service, {"registration": "LK19 XRT"}, said("Book my car in.", instructions=plated)).missing == []
    own = said("Interim service for a van, the reg is Y-R-six-eight, space, K-L-O.", instructions=plated)
    assert trace(service, {"registration": "19"}, own).missing == ["registration"]
    track = said("Where is my parcel?", instructions="Tracking numbers are SW and then ten digits.")
    assert trace(TRACK_ONLY, {"tracking_number": "SW1234567890"}, track).missing == ["tracking_number"]


def test_a_clock_written_wrong_is_the_time_the_caller_said() -> None:
    """ "Half four" at a school whose lessons run 7:00 to 20:00: Qwen wrote "14:00 AM"."""
    lesson = client_tool("book_lesson", {
        "date": {"type": "string", "format": "date", "description": "Day of the lesson"},
        "time": {"type": "string", "description": "Pickup time, HH:MM on the 24-hour clock"}}, ["date", "time"])
    line = said("Can I get a lesson on Monday, half four?", instructions="Lessons run Monday to Saturday, 7:00 to 20:00.")
    assert trace(lesson, {"date": "2026-06-08", "time": "14:00 AM"}, line).arguments \
        == {"date": "2026-06-08", "time": "16:30"}


def test_a_day_of_the_month_written_alone_is_the_day_the_caller_said() -> None:
    """ "on Wednesday the seventeenth": Qwen wrote "7th", a day of no month, and the call was
    refused for a date nobody said; it is the caller's June 17."""
    workshop = client_tool("book_workshop", {
        "attendee_name": {"type": "string", "description": "Who is coming"},
        "date": {"type": "string", "format": "date", "description": "Day of the workshop"}}, ["attendee_name", "date"])
    line = said("Could I get my dad on the pottery one on Wednesday the seventeenth? Ray Milburn.")
    assert trace(workshop, {"attendee_name": "Ray Milburn", "date": "7th"}, line).arguments \
        == {"attendee_name": "Ray Milburn", "date": "2026-06-17"}
    assert trace(workshop, {"attendee_name": "Ray Milburn", "date": "17th"}, said("Ray Milburn, please.")).missing == ["date"]


def test_the_desks_own_name_and_a_code_given_as_an_example_are_nobodys() -> None:
    """Qwen booked a check-up for "Brightside Dental Practice" (the desk's name), and cancelled the
    ferry booking "WCF-4D88J" that the instructions give as what references look like."""
    desk = ("You answer the phone for Brightside Dental Practice. Dentists: Dr Helen Okafor. "
            "Booking references look like WCF-4D88J.")
    line = said("Could you book me in for a check-up on Tuesday at ten?", instructions=desk)
    assert trace(BOOK, {"patient_name": "Brightside Dental Practice", "date": "2026-06-09", "time": "10:00"},
                 line).missing == ["patient_name"]
    on_file = said("Could you book me in on Tuesday at ten?", instructions=desk + " The caller is Mr Desmond Achebe.")
    assert trace(BOOK, {"patient_name": "Desmond Achebe", "date": "2026-06-09", "time": "10:00"}, on_file).missing == []
    cancel = client_tool("cancel_booking", {"booking_reference": {"type": "string", "description": "The booking reference"}},
                         ["booking_reference"])
    assert trace(cancel, {"booking_reference": "WCF-4D88J"}, said("Cancel my booking.", instructions=desk)).missing \
        == ["booking_reference"]


def test_a_length_said_in_hours_reaches_a_tool_in_its_minutes() -> None:
    """ "Two hours if you can" for a lesson asked in minutes: Qwen wrote 2; the call runs on 120.
    "For an hour" written 60 is the caller's."""
    lesson = client_tool("book_lesson", {
        "pupil_name": {"type": "string", "description": "The learner's full name"},
        "duration_minutes": {"type": "integer", "description": "Length of the lesson in minutes"}}, ["pupil_name"])
    for line, wrote, runs in (("Chloe Brennan, two hours if you can.", 2, 120),
                              ("Sam Adeyemi, an hour and a half, please.", 1.5, 90),
                              ("Sam Adeyemi, for an hour.", 60, 60), ("Sam Adeyemi, ninety minutes.", 90, 90),
                              ("Sam Adeyemi, just for the hour.", 60, 60)):
        name = " ".join(line.split(",")[0].split()[:2])
        assert trace(lesson, {"pupil_name": name, "duration_minutes": wrote}, said(line)).arguments \
            == {"pupil_name": name, "duration_minutes": runs}, line


ROOM = client_tool("book_room", {
    "card_number": {"type": "string", "description": "The reader's library card number"},
    "room": {"type": "string", "description": "Which room", "enum": ["study_room", "meeting_room", "hall"]},
    "format": {"type": "string", "description": "Only this format, if the caller said",
               "enum": ["book", "ebook", "audiobook"]},
}, ["card_number", "room"])


def test_an_optional_enum_value_is_the_callers_to_add_a_required_one_the_models_choice() -> None:
    """An optional value nobody said is left out, an enum's too; a required enum is one of the
    schema's values, which the model picks from what the caller said: a kind with no word of it
    said ("somewhere for forty residents" written `hall`) is asked for (`picks.unnamed_pick`)."""
    line = said("Card 2900 4417 8823. Can I grab one of the study rooms, as an audiobook fan?")
    traced = trace(ROOM, {"card_number": "2900 4417 8823", "room": "study_room", "format": "audiobook"}, line)
    assert traced.arguments["format"] == "audiobook" and traced.dropped == []
    unsaid = trace(ROOM, {"card_number": "2900 4417 8823", "room": "hall", "format": "book"},
                   said("Card 2900 4417 8823. We need somewhere for forty residents on Friday."))
    assert unsaid.dropped == ["format"] and unsaid.missing == ["room"]  # which room is asked
    hall = trace(ROOM, {"card_number": "2900 4417 8823", "room": "hall", "format": "book"},
                 said("Card 2900 4417 8823. Can we have the hall for forty residents on Friday?"))
    assert hall.arguments == {"card_number": "2900 4417 8823", "room": "hall"} and hall.missing == []


def test_a_choice_the_caller_named_is_theirs_not_the_models() -> None:
    """Qwen booked "windows_exterior" for "could you do the gutters", and kept it through "make it the
    afternoon" after the conservatory roof was asked for: a choice one of whose words (and no other
    choice's) the caller said is theirs, from their latest turn that names one; optional ones too.
    Where a word of the model's own choice was said, its pick stands."""
    clean = client_tool("book_clean", {
        "service": {"type": "string", "description": "The job",
                    "enum": ["windows_exterior", "windows_inside_and_out", "conservatory_roof", "gutter_clear"]},
        "slot": {"type": "string", "description": "If the caller said", "enum": ["morning", "afternoon"]},
    }, ["service"])
    for lines, wrote, runs in (
            (["Could you do the gutters for me on Friday?"], "windows_exterior", "gutter_clear"),
            (["Can you do the conservatory roof on Tuesday?", "Better make it the afternoon."],
             "windows_exterior", "conservatory_roof"),
            (["Can you do the windows inside and out?"], "windows_exterior", "windows_inside_and_out"),
            (["The windows are filthy, and the gutters too."], "windows_exterior", "windows_exterior"),
            (["Whenever suits, I'm not fussy."], "gutter_clear", "gutter_clear")):
        traced = trace(clean, {"service": wrote, "slot": "morning"}, said(*lines))
        assert traced.arguments.get("service") == runs, lines
    assert trace(clean, {"service": "conservatory_roof", "slot": "morning"},
                 said("The roof, in the afternoon.")).arguments == {"service": "conservatory_roof", "slot": "afternoon"}


STAY = client_tool("book_stay", {
    "account_id": {"type": "string", "description": "The owner's account number"},
    "pet_names": {"type": "string", "description": "Names of the pets staying"},
    "kennel_block": {"type": "string", "description": "Which block", "enum": ["North Barn", "Orchard Lodge"]},
    "check_in_date": {"type": "string", "format": "date", "description": "Day the pets arrive"},
    "check_out_date": {"type": "string", "format": "date", "description": "Day the pets go home"},
}, ["account_id", "pet_names", "kennel_block", "check_in_date", "check_out_date"])
KENNEL = "The caller is Ruth Obi, account KB-5512. Pets on file: Rolo (spaniel), Fudge and Tansy (cats)."


def test_of_the_records_names_listed_in_one_value_only_those_the_caller_said_run() -> None:
    line = said("Can Rolo stay in the Orchard Lodge from the 10th to the 12th?", instructions=KENNEL)
    args = {"account_id": "KB-5512", "pet_names": "Rolo, Fudge and Tansy", "kennel_block": "Orchard Lodge",
            "check_in_date": "2026-06-10", "check_out_date": "2026-06-12"}
    assert trace(STAY, args, line).arguments["pet_names"] == "Rolo"
    all_of = said("Can all three stay in the Orchard Lodge from the 10th to the 12th?", instructions=KENNEL)
    assert trace(STAY, args, all_of).arguments["pet_names"] == "Rolo, Fudge and Tansy"


def test_a_required_choice_of_names_is_the_callers_to_say_a_word_of_its_own_names_it() -> None:
    """ "Orchard Lodge" from the schema's list is not the model's pick on a line that named no
    block; "the orchard one" names it (no other choice has "orchard"); a category ("plumbing")
    stays the model's choice (`test_an_optional_enum_value_is_the_callers_to_add...`)."""
    args = {"account_id": "KB-5512", "pet_names": "Rolo", "kennel_block": "Orchard Lodge",
            "check_in_date": "2026-06-10", "check_out_date": "2026-06-12"}
    unsaid = said("Can Rolo stay with you from the 10th to the 12th?", instructions=KENNEL)
    assert trace(STAY, args, unsaid).missing == ["kennel_block"]
    named = said("Can Rolo stay in the orchard one from the 10th to the 12th?", instructions=KENNEL)
    assert trace(STAY, args, named).missing == []


def test_a_correction_of_one_day_of_a_span_sets_that_day_right_and_keeps_the_other() -> None:
    line = said("Can Rolo stay in the North Barn from the twenty-fourth to the twenty-ninth of July?",
                "No, out on the twenty-ninth. The Wednesday.", instructions=KENNEL)
    args = {"account_id": "KB-5512", "pet_names": "Rolo", "kennel_block": "North Barn",
            "check_in_date": "2026-07-24", "check_out_date": "2026-07-27"}
    traced = trace(STAY, args, line)
    assert traced.missing == [] and traced.arguments["check_out_date"] == "2026-07-29"
    assert traced.arguments["check_in_date"] == "2026-07-24"


def test_a_record_id_written_after_its_label_is_the_callers() -> None:
    parcels = client_tool("check_parcels", {
        "student_id": {"type": "string", "description": "The student's 8-digit ID number"}}, ["student_id"])
    line = said("Have I got any parcels waiting?",
                instructions="The caller is Ana Ruiz, student ID 23104876, room 12 in Elm Hall.")
    assert trace(parcels, {"student_id": "23104876"}, line).missing == []
    miscopied = trace(parcels, {"student_id": "23104877"}, line)  # runs as the record's one
    assert miscopied.missing == [] and miscopied.arguments == {"student_id": "23104876"}


SERVICE = client_tool("book_service", {
    "customer_id": {"type": "string", "description": "The customer's number"},
    "bike": {"type": "string", "description": "Which bike, make and model"},
    "hall": {"type": "string", "description": "The customer's hall of residence"},
}, ["customer_id", "bike", "hall"])
GARAGE = ("Halls: Elm Hall, Oak Court and Ash House. The caller is Lena Park, customer number CU-4410, "
          "room 9 in Oak Court. Bikes on file: a Raleigh Pioneer hybrid and a Dahon Mariner folding bike.")


def test_one_of_the_records_alike_values_runs_only_where_the_caller_picked_it_out() -> None:
    """Two bikes on file and "book a service": which one is not said, so it is asked; "the
    folding one" or "the Dahon" picks it out. The caller's own hall, said in their entry, is
    theirs though the desk lists every hall."""
    args = {"customer_id": "CU-4410", "bike": "Dahon Mariner folding bike", "hall": "Oak Court"}
    assert trace(SERVICE, args, said("Could I book a service for Saturday?", instructions=GARAGE)).missing == ["bike"]
    for picked in ("Could I book the folding one in on Saturday?", "Could I book the Dahon in on Saturday?"):
        assert trace(SERVICE, args, said(picked, instructions=GARAGE)).missing == []


def test_a_number_to_ring_on_file_as_the_callers_mobile_is_given() -> None:
    """ "Give me a ring back on my mobile": the record's "mobile 07712 448390" is the number a
    `phone_number` wants (a mobile, a cell, a landline are phones in any domain). A name spelled for
    it ("L-E-W-I-S") is no number to ring."""
    callback = client_tool("request_callback", {
        "phone_number": {"type": "string", "description": "Number to call back"},
        "topic": {"type": "string", "description": "What about"}}, ["phone_number"])
    record = "The caller is Helen Fairbairn, patient number BW-20417, mobile 07712 448390."
    line = said("Could someone give me a ring back on my mobile about those varifocals?", instructions=record)
    assert trace(callback, {"phone_number": "07712 448390", "topic": "varifocals"}, line).missing == []
    assert trace(callback, {"phone_number": "L-E-W-I-S"}, said("It's Lewis. L-E-W-I-S.")).missing == ["phone_number"]


def test_a_title_with_a_number_word_in_it_the_caller_said_is_a_name() -> None:
    """ "three boxes of Dailies Total One": the product is "Dailies Total One", said so; a number word
    elsewhere in a name is still no name ("Eight people on Sunday")."""
    lenses = client_tool("order_lenses", {
        "product": {"type": "string", "description": "Lens product name"},
        "boxes": {"type": "integer", "description": "How many boxes"}}, ["product", "boxes"])
    line = said("Could you do three boxes of Dailies Total One for him?")
    assert trace(lenses, {"product": "Dailies Total One", "boxes": 3}, line).missing == []
    assert trace(lenses, {"product": "Three Boxes", "boxes": 3}, line).missing == ["product"]
    assert trace(BOOK, {"patient_name": "Eight people on Sunday", "date": "2026-06-07", "time": "19:00"},
                 said("Eight people on Sunday around seven.")).missing == ["patient_name"]


def test_the_records_code_is_not_the_one_the_caller_said_another_of() -> None:
    """ "His number's B W two oh four one eight": the record's BW-20417 (hers) is not given for him;
    the call runs on the one the caller said, written as the schema's example is."""
    lenses = client_tool("order_lenses", {
        "patient_number": {"type": "string", "description": "The patient number, like BW-20417"},
        "boxes": {"type": "integer", "description": "How many boxes"}}, ["patient_number", "boxes"])
    record = "The caller is Helen Fairbairn, patient number BW-20417."
    line = said("Three boxes for Graham. His number's B W two oh four one eight.", instructions=record)
    assert trace(lenses, {"patient_number": "BW-20417", "boxes": 3}, line).arguments["patient_number"] == "BW-20418"
    mine = said("Three boxes for me, please.", instructions=record)
    assert trace(lenses, {"patient_number": "BW-20417", "boxes": 3}, mine).missing == []


def test_a_code_read_out_in_groups_is_all_of_it_not_its_start() -> None:
    """ "W C F, four, D for delta, eight, eight, J for Juliet": Qwen wrote "WCF4D", the start of it;
    the call runs on the whole code. "C H three, eight double E" is CH38EE."""
    cancel = client_tool("cancel_booking", {
        "booking_reference": {"type": "string", "description": "The booking reference"}}, ["booking_reference"])
    line = said("I need to cancel booking W C F, four, D for delta, eight, eight, J for Juliet.")
    assert trace(cancel, {"booking_reference": "WCF4D"}, line).arguments == {"booking_reference": "WCF4D88J"}
    area = client_tool("check_area", {"postcode": {"type": "string", "description": "The postcode"}}, ["postcode"])
    traced = trace(area, {"postcode": "CH38E"}, said("Do you deliver to Tarvin? The postcode's C H three, eight double E."))
    assert traced.missing == [] and traced.arguments["postcode"].replace(" ", "").upper() == "CH38EE"


def test_a_number_the_schema_lists_is_said_not_picked() -> None:
    """ "I'd like to reserve another unit from Monday": Qwen reserved 50 square feet, one of the
    sizes the schema lists. A number is the caller's to say, whichever the schema allows; "the
    twenty-five" is, and "a small one" says no count, nor "the twenty-seventh" twenty."""
    unit = client_tool("reserve_unit", {
        "size_sqft": {"type": "integer", "description": "Unit size in square feet", "enum": [25, 50, 75, 100, 200]},
        "start_date": {"type": "string", "format": "date", "description": "First day"}}, ["size_sqft", "start_date"])
    assert trace(unit, {"size_sqft": 50, "start_date": "2026-06-08"},
                 said("I'd like to reserve another unit from Monday, please.")).missing == ["size_sqft"]
    assert trace(unit, {"size_sqft": 25, "start_date": "2026-07-01"},
                 said("Reserve us a small one as well, the twenty-five, from the first of July.")).missing == []
    crew = client_tool("check_crews", {
        "date": {"type": "string", "format": "date", "description": "Day of the move"},
        "crew_size": {"type": "integer", "description": "How many movers"}}, ["date", "crew_size"])
    assert trace(crew, {"date": "2026-06-27", "crew_size": 20},
                 said("Have you got a crew free on Saturday the twenty-seventh?")).missing == ["crew_size"]


def test_the_person_served_is_the_caller_on_file_unless_they_book_for_someone_of_theirs() -> None:
    """ "Can you reserve me one starting Monday?": Qwen wrote "John Doe", and the desk's own name
    another time; the call runs on the caller's name on file. "Can I book my granddaughter in?"
    is not for the caller: the record's name is not hers, so the agent asks; "My grandson ...
    Alfie Barnes" runs on the name said."""
    unit = client_tool("reserve_unit", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "start_date": {"type": "string", "format": "date", "description": "First day"}}, ["customer_name", "start_date"])
    desk = ("You answer for Stowaway Self Storage, Unit 4, Canal Road, Bradford. Staff: Lorraine Beck. "
            "The caller's phone number matches this account: Darren Pike, account number SS-30971.")
    for wrote in ("John Doe", "Stowaway Self Storage Unit 4, Canal Road, Bradford"):
        traced = trace(unit, {"customer_name": wrote, "start_date": "2026-06-08"},
                       said("Can you reserve me one starting Monday?", instructions=desk))
        assert traced.arguments["customer_name"] == "Darren Pike" and traced.missing == [], wrote
    other = said("Can you reserve one for Kofi Mensah starting Monday?", instructions=desk)
    assert trace(unit, {"customer_name": "John Doe", "start_date": "2026-06-08"}, other).missing == ["customer_name"]
    eyes = client_tool("book_eye_test", {
        "patient_name": {"type": "string", "description": "The patient's full name"},
        "date": {"type": "string", "format": "date", "description": "Day"}}, ["patient_name", "date"])
    record = "The caller's phone number matches this patient record: Helen Fairbairn, patient number BW-20417."
    granddaughter = said("Can I book my granddaughter in for a children's eye test on Friday?", instructions=record)
    assert trace(eyes, {"patient_name": "Helen Fairbairn", "date": "2026-06-05"}, granddaughter).missing == ["patient_name"]
    grandson = said("My grandson needs his eyes testing. Alfie Barnes, B-A-R-N-E-S. Could he come in Friday?",
                    instructions=record)
    assert trace(eyes, {"patient_name": "Helen Fairbairn", "date": "2026-06-05"}, grandson).arguments["patient_name"] \
        == "Alfie Barnes"
    herself = said("Could you book me in on Friday? My husband will drive me.", instructions=record)
    assert trace(eyes, {"patient_name": "Helen Fairbairn", "date": "2026-06-05"}, herself).missing == []


def test_an_integer_named_for_a_length_is_a_count_not_a_time_of_day() -> None:
    """ "for like three hours": `hours` (an integer, "Length of the rental in hours") was read as a
    time of day, so 3 was never said; it is how long, said as a number."""
    rental = client_tool("reserve_rental", {
        "start_time": {"type": "string", "description": "Start, HH:MM on the 24-hour clock"},
        "hours": {"type": "integer", "description": "Length of the rental in hours"}}, ["start_time", "hours"])
    line = said("I wanna grab two single kayaks tomorrow morning, nine o'clock, for like three hours.")
    assert trace(rental, {"start_time": "09:00", "hours": 3}, line).missing == []
    assert trace(rental, {"start_time": "09:00", "hours": 4}, line).arguments["hours"] == 3  # the caller's
    assert trace(rental, {"start_time": "09:00", "hours": 4},
                 said("Two kayaks tomorrow at nine, please.")).missing == ["hours"]


def test_next_tuesday_said_on_a_wednesday_is_the_coming_one() -> None:
    """Said on Wednesday June 3, "next Tuesday" is June 9 (this week's has gone by): a day the
    model wrote wrong ("2026-06-04") runs as that one. "Next Friday", whose this-week day is still
    ahead, may be either Friday, so one written wrong is asked about."""
    check = client_tool("check_availability", {
        "date": {"type": "string", "format": "date", "description": "Day to check"}}, ["date"])
    assert trace(check, {"date": "2026-06-04"}, said("What's Eilidh got free next Tuesday?")).arguments \
        == {"date": "2026-06-09"}
    assert trace(check, {"date": "2026-06-16"}, said("What's Eilidh got free next Tuesday?")).arguments \
        == {"date": "2026-06-09"}
    assert trace(check, {"date": "2026-06-04"}, said("Anything free next Friday?")).missing == ["date"]
    for friday in ("2026-06-05", "2026-06-12"):
        assert trace(check, {"date": friday}, said("Anything free next Friday?")).missing == []


def test_a_required_choice_the_caller_named_none_of_is_asked_where_they_named_two() -> None:
    """ "Ellie's desperate to try singing ... after her piano": Qwen booked drums. The caller named
    two choices, neither the model's: which one is asked, not guessed. A choice nobody named at all
    ("a lesson for Ellie") is asked for too (`picks.unnamed_pick`)."""
    lesson = client_tool("book_lesson", {
        "instrument": {"type": "string", "description": "Instrument or subject",
                       "enum": ["piano", "guitar", "violin", "drums", "singing"]},
        "date": {"type": "string", "format": "date", "description": "Day"}}, ["instrument", "date"])
    two = said("Ellie's desperate to try singing. Could you book her in on Tuesday, after her piano?")
    assert trace(lesson, {"instrument": "drums", "date": "2026-06-09"}, two).missing == ["instrument"]
    assert trace(lesson, {"instrument": "singing", "date": "2026-06-09"}, two).missing == []
    none = said("Could you book a lesson for Ellie on Tuesday?")
    assert trace(lesson, {"instrument": "drums", "date": "2026-06-09"}, none).missing == ["instrument"]


def test_a_number_the_caller_corrects_runs_as_they_said_it_last() -> None:
    """ "Three hundred, please." then "Sorry, three hundred and fifty. I said the wrong number.":
    Qwen paid 300, said in the first turn; the correction takes it back and the call runs on 350.
    A correction of something else ("No, make it Friday") leaves the amount said before."""
    pay = client_tool("make_payment", {
        "booking_id": {"type": "string", "description": "The booking, such as PCB-55817"},
        "amount": {"type": "number", "description": "Amount to pay in pounds"}}, ["booking_id", "amount"])
    line = said("Can I pay three hundred off booking PCB-55817?", "Sorry, three hundred and fifty. I said the wrong number.")
    traced = trace(pay, {"booking_id": "PCB-55817", "amount": 300}, line)
    assert traced.missing == [] and traced.arguments["amount"] == 350
    assert trace(pay, {"booking_id": "PCB-55817", "amount": 350}, line).arguments["amount"] == 350
    other = said("Can I pay three hundred off booking PCB-55817 on Thursday?", "No, make it Friday.")
    assert trace(pay, {"booking_id": "PCB-55817", "amount": 300}, other).arguments["amount"] == 300


def test_a_calls_one_day_of_two_said_is_the_one_it_is_moved_to() -> None:
    """ "My appointment with Priya tomorrow ... could we move it to Monday?": Qwen wrote a day
    nobody said for the new date; of the two days said, the one after "to" is where it goes.
    Two days with none moved to ("tomorrow or Monday") stay asked about."""
    move = client_tool("reschedule_appointment", {
        "appointment_id": {"type": "string", "description": "The appointment, such as APT-7731"},
        "new_date": {"type": "string", "format": "date", "description": "The new day"}}, ["appointment_id", "new_date"])
    line = said("I've got my appointment APT-7731 tomorrow, but could we move it to Monday?")
    assert trace(move, {"appointment_id": "APT-7731", "new_date": "2026-04-15"}, line).arguments["new_date"] == "2026-06-08"
    push = said("Can I push APT-7731 from tomorrow until Friday?")
    assert trace(move, {"appointment_id": "APT-7731", "new_date": "2026-06-04"}, push).arguments["new_date"] == "2026-06-05"
    either = said("Could APT-7731 be tomorrow or Monday instead?")
    assert trace(move, {"appointment_id": "APT-7731", "new_date": "2026-04-15"}, either).missing == ["new_date"]


REPAIRS = ("Caller: Dana Whitfield, customer FR-88123. Appliances: AP-301 washing machine, AP-302 fridge "
           "freezer. Booked visit: J-77810, Friday, fridge freezer.")
CANCEL_VISIT = client_tool("cancel_visit", {
    "job_id": {"type": "string", "description": "The visit's job id, such as J-12345"},
    "reason": {"type": "string", "description": "Why, in a few words"}}, ["job_id"])
ORDER_PART = client_tool("order_part", {
    "appliance_id": {"type": "string", "description": "The appliance's id, such as AP-301"},
    "part": {"type": "string", "enum": ["door_seal", "drawer", "filter"]}}, ["appliance_id", "part"])
RING_BACK = ToolSpec.from_openai({"type": "function", "name": "request_callback",
                                  "description": "Ask the shop to ring the caller back.", "parameters": {
                                      "type": "object", "required": ["phone_number"], "properties": {
                                          "phone_number": {"type": "string", "description": "The number to call back"}}}})


def test_an_act_on_values_all_on_file_runs_only_where_the_caller_asked_for_it() -> None:
    """fresh9's appliance desk: with one visit on file, Qwen cancelled it on "Could I order two of the
    drawers?", "Can I book an engineer?" and "I need to move my visit". Every value was on file, so
    no value was unsaid; the act was. An act whose values are all the record's runs where the
    caller's words name it (its verb, or a word English uses for it; a word of its name or its
    description where its verb is no known one), or one of its values or choices is theirs."""
    from pipeline.tools.unasked import unasked

    def asks(*lines: str, asked: list[str] | None = None) -> Evidence:
        return said(*lines, instructions=REPAIRS, asked=asked)

    visit = {"job_id": "J-77810", "reason": "The drawers have cracked"}
    for line in ("Could I order two of the drawers for the fridge freezer?", "Can I book an engineer?",
                 "I need to move my visit to next week some time.",
                 "We're having a new kitchen fitted in the autumn."):
        assert trace(CANCEL_VISIT, visit, asks(line)).missing == []  # every value is on file
        assert unasked(CANCEL_VISIT, visit, asks(line)), line
    for line in ("Please cancel Friday's visit.", "Can you call off the engineer on Friday?",
                 "I've sorted it myself, so we're cancelling the visit.",
                 "The engineer on Friday, we've sorted it. Better knock it on the head."):  # fresh45
        assert not unasked(CANCEL_VISIT, visit, asks(line)), line
    assert not unasked(CANCEL_VISIT, visit, asks("Yes, please.", asked=["Shall I cancel visit J-77810?"]))
    assert not unasked(CANCEL_VISIT, {"job_id": "J-77810"}, asks("Job J seven seven eight one oh, it's fixed."))
    drawer = {"appliance_id": "AP-302", "part": "drawer"}
    assert not unasked(ORDER_PART, drawer, asks("Could I get two of the drawers for the fridge freezer?"))  # its choice
    assert unasked(ORDER_PART, {**drawer, "part": "filter"}, asks("The fridge is humming again."))
    line = "Could someone give me a ring back about those varifocals?"  # a verb no table knows: its description's words
    assert not unasked(RING_BACK, {"phone_number": "07712 448390"},
                       said(line, instructions="Caller's mobile: 07712 448390."))


def test_a_place_the_instructions_list_in_full_is_said_by_a_part_of_it_they_use_for_nothing_else() -> None:
    """fresh9's coach line: "from London Victoria up to Manchester" for the stops' "Manchester
    Shudehill" was withheld as an unsaid destination. A part the instructions use only inside the one
    name gives it; a part they use for two does not; a person's name in another role does not."""
    search = client_tool("find_departures", {
        "origin": {"type": "string", "description": "Stop the coach leaves from"},
        "destination": {"type": "string", "description": "Stop the passenger travels to"}}, ["origin", "destination"])
    stops = "Stops: London Victoria, Birmingham Digbeth, Manchester Shudehill, Leeds City, Leeds Bradford Airport."
    line = said("A single from London Victoria up to Manchester on Friday, please.", instructions=stops)
    assert trace(search, {"origin": "London Victoria", "destination": "Manchester Shudehill"}, line).missing == []
    leeds = said("From London Victoria to Leeds, please.", instructions=stops)
    assert trace(search, {"origin": "London Victoria", "destination": "Leeds City"}, leeds).missing == ["destination"]
    staff = said("Could I book Friday at three with Fiona?", instructions="Hygienist: Fiona Beattie. Dentist: Omar Lacey.")
    wrote = {"patient_name": "Fiona Beattie", "date": "2026-06-05", "time": "15:00"}
    assert "patient_name" in trace(BOOK, wrote, staff).missing


PESTS = ("Typical prices: wasp nest 65, mice (three visits) 140. Visits can be moved or cancelled free up to "
         "24 hours ahead. Jobs on file: J-7731 \u2014 wasp nest treatment, Friday, June 5, afternoon slot; "
         "J-7745 \u2014 mouse treatment follow-up visit, Tuesday, June 9, morning slot.")
BAKES = ("Cakes need 48 hours' notice. Orders on file: CO-3302 \u2014 30 sausage rolls and a tray of 24 brownies, "
         "for collection on Friday, June 5 at 12:00; CO-3315 \u2014 8-inch chocolate birthday cake, for delivery "
         "on Saturday, June 13 at 14:00.")


def test_a_list_of_records_is_one_role_and_a_code_ends_at_a_dash_between_words() -> None:
    """fresh10's pest desk and bakery: the record's second job (no word for it beside it) was not
    counted a job, so the first ran for "the mouse follow-up on Tuesday"; and "CO-3302 \u2014 30" (of
    "CO-3302 \u2014 30 sausage rolls") ran as an order id. A code shaped as one in the role is of the
    list; a dash set between words ends a code; the words of asking ("need") point at no entry."""
    job = client_tool("cancel_visit", {"job_id": {"type": "string", "description": "The job number"}}, ["job_id"])
    mouse = said("You can cancel the mouse follow-up on Tuesday.", instructions=PESTS)
    assert trace(job, {"job_id": "J-7731"}, mouse).arguments["job_id"] == "J-7745"
    order = client_tool("cancel_order", {"order_id": {"type": "string", "description": "The order id"}}, ["order_id"])
    rolls = said("The sausage rolls and brownies for Friday, could you cancel them?", instructions=BAKES)
    assert trace(order, {"order_id": "CO-3302 \u2014 30"}, rolls).arguments == {"order_id": "CO-3302"}
    assert trace(order, {"order_id": "CO-3302 \u2014 30"}, rolls).missing == []
    which = said("Hi, I need to cancel my order, please.", instructions=BAKES)
    assert trace(order, {"order_id": "CO-3302"}, which).missing == ["order_id"]  # which of two: asked


def test_a_new_booking_takes_no_value_from_the_bookings_on_file() -> None:
    """fresh10's bakery: with "CO-3315 \u2014 8-inch chocolate birthday cake" on file, Qwen gave a new
    order `size_inches: 8` on a line that named no size. Where a tool makes a new thing (`place_`,
    `book_`), a value that only the record's list of things on file holds describes one of them, not
    the new one; the id of a thing on file (a pet to book in) still is the caller's choice of it."""
    place = client_tool("place_cake_order", {
        "flavour": {"type": "string", "enum": ["chocolate", "vanilla_sponge"]},
        "size_inches": {"type": "integer", "description": "Cake diameter in inches", "enum": [6, 8, 10, 12]},
        "date": {"type": "string", "format": "date"}}, ["flavour", "size_inches", "date"])
    line = said("I'd like to order a chocolate cake for Saturday week, please.", instructions=BAKES)
    wrote = {"flavour": "chocolate", "size_inches": 8, "date": "2026-06-13"}
    assert trace(place, wrote, line).missing == ["size_inches"]
    change = client_tool("change_order", {"order_id": {"type": "string", "description": "The order id"},
                                          "size_inches": {"type": "integer", "description": "Cake diameter in inches"}},
                         ["order_id", "size_inches"])
    same = said("The birthday cake for the thirteenth, could you make it the same size but chocolate?", instructions=BAKES)
    assert trace(change, {"order_id": "CO-3315", "size_inches": 8}, same).missing == []  # not a new thing
    groom = said("Could I book Pepper in on Friday?", instructions=GROOMER)
    assert trace(GROOM, {"dog_id": "D-5513", "date": "2026-06-05"}, groom).missing == []


def test_a_record_s_code_with_its_check_digit_after_a_dash_is_pointed_at_by_its_entry() -> None:
    """fresh11's water company: two accounts, "SV-448120-7 is her home, 22 Orchard Rise" and
    "SV-448120-9 is a flat she lets out, 4B Quay Street"; "the flat account" was withheld as an
    unsaid account number, since the entry's code was read as its pieces ("448120", "7")."""
    record = ("Mrs Helen Prosser has two accounts. Account SV-448120-7 is her home, 22 Orchard Rise, balance 0.00. "
              "Account SV-448120-9 is a flat she lets out, 4B Quay Street, balance 61.40.")
    balance = client_tool("get_account_balance", {"account_number": {"type": "string", "description": "The account number"}},
                          ["account_number"])
    flat = said("How much do I owe on the flat account?", instructions=record)
    assert trace(balance, {"account_number": "SV-448120-9"}, flat).missing == []
    assert trace(balance, {"account_number": "SV-448120-7"}, flat).arguments["account_number"] == "SV-448120-9"
    either = said("How much do I owe?", instructions=record)
    assert trace(balance, {"account_number": "SV-448120-9"}, either).missing == ["account_number"]


# --- a record's lists, read as the schema's example shows them (fresh12, read after its run) -------

STUDIO = ("You answer the phone for Lotus Hall. Class codes are the class, the level and the day: "
          "PIL-A1-TUE (Pilates beginners, Tuesdays, Ana Ruiz), YOG-B1-TUE (Yoga intermediate, Tuesdays, "
          "Ana Ruiz), YOG-A1-THU (Yoga beginners, Thursdays, Tom Hale). A class costs £90 for the term, "
          "or £60 at the student rate.")
ENROL = client_tool("enrol_member", {
    "member_name": {"type": "string", "description": "The member's full name"},
    "class_code": {"type": "string", "description": "The class code, e.g. PIL-A1-TUE"},
}, ["member_name", "class_code"])


def test_a_price_on_file_is_no_code_and_the_list_is_read_in_the_examples_form() -> None:
    """The record's "£60 at the student rate" is a price, whatever word stands by it; its codes are
    those of the form its schema's example shows, and the one the caller's words name most is meant
    (each entry "Yoga beginners" and "Pilates beginners" holds "beginners")."""
    line = said("Put me down for the yoga beginners at the student rate, please. Dana Reyes.", instructions=STUDIO)
    assert trace(ENROL, {"member_name": "Dana Reyes", "class_code": "60"}, line).missing == ["class_code"]
    assert trace(ENROL, {"member_name": "Dana Reyes", "class_code": "YOG-A1-THU"}, line).missing == []
    moved = trace(ENROL, {"member_name": "Dana Reyes", "class_code": "PIL-A1-TUE"}, line)
    assert moved.missing == [] and moved.arguments["class_code"] == "YOG-A1-THU"


def test_a_code_the_caller_says_with_its_letters_is_that_one() -> None:
    units = "The caller is Lee Park, account SS-40112. Units rented: A14 (50 sq ft) and C03 (100 sq ft drive-up)."
    add = client_tool("add_keyholder", {
        "account_number": {"type": "string", "description": "The account, e.g. SS-10001"},
        "unit_number": {"type": "string", "description": "The unit, e.g. B12"},
        "person_name": {"type": "string", "description": "Who may get in"},
        "mobile": {"type": "string", "description": "Their mobile phone"},
    }, ["account_number", "unit_number", "person_name"])
    line = said("Can you add my brother to A14 as well? Sam. Sam Ortiz. His mobile's oh seven seven one two, "
                "three four five six.",
                instructions=units)
    assert trace(add, {"account_number": "SS-40112", "unit_number": "A14", "person_name": "Sam Ortiz"}, line).missing == []
    other = trace(add, {"account_number": "SS-40112", "unit_number": "C03", "person_name": "Sam Ortiz"}, line)
    assert other.missing == ["unit_number"] or other.arguments["unit_number"] == "A14"


def test_a_day_or_a_time_of_day_is_no_code() -> None:
    """ "Paid on the 28th" is a day on file, not an account; "about nine this morning" a time, not a
    meter reading; and "send somebody out" points at no flat "she lets out"."""
    record = ("Account HX-220914-3 is the shop, 4 Mill Lane, paid monthly on the 28th, last reading 5120. "
              "Account HX-220914-5 is a flat she lets out, 2 Dock Road, last reading 731.")
    balance = client_tool("get_balance", {"account_number": {"type": "string", "description": "The account"}},
                          ["account_number"])
    shop = said("What's the balance on the shop account?", instructions=record)
    day = trace(balance, {"account_number": "28th"}, shop)
    assert day.missing == ["account_number"] or day.arguments["account_number"] == "HX-220914-3"
    assert trace(balance, {"account_number": "HX-220914-3"}, shop).missing == []
    reading = client_tool("submit_reading", {
        "account_number": {"type": "string", "description": "The account, e.g. HX-123456-1"},
        "reading": {"type": "integer", "description": "The meter reading (the black digits)"},
    }, ["account_number", "reading"])
    off = said("The power's gone at the shop, it went off about nine this morning.", instructions=record)
    assert "reading" in trace(reading, {"account_number": "HX-220914-3", "reading": 9}, off).missing
    out = said("Something's wrong with one of my places, can you send somebody out?", instructions=record)
    assert trace(balance, {"account_number": "HX-220914-5"}, out).missing == ["account_number"]


def test_a_value_on_file_put_for_the_models_is_of_about_its_length() -> None:
    """Where the caller's words point at one of the record's values, it takes the model's place
    only if it is of about as many digits: "123-456-7890" is no "11+" on the tutors' list."""
    tutors = "Tutors: Raj Banerjee (maths, 11+ to GCSE), Owen Pritchard (English, GCSE). GCSE is £40 an hour."
    ring = client_tool("book_callback", {"phone_number": {"type": "string", "description": "Number to ring"}},
                       ["phone_number"])
    line = said("She got a four in maths in her mocks, which isn't the end of the world.", instructions=tutors)
    assert trace(ring, {"phone_number": "123-456-7890"}, line).missing == ["phone_number"]  # not "11"


def test_an_address_copied_with_the_records_note_is_not_the_address() -> None:
    record = ("The caller is Ruth Ames. Properties on file: her home, 4 Elm Row, Leeds LS6 2AB (Baxi combi, "
              "serviced May 2025); a flat she lets out, 2B Dock Street, Leeds LS10 1JQ.")
    visit = client_tool("book_visit", {
        "address": {"type": "string", "description": "Where the engineer goes"},
        "date": {"type": "string", "format": "date", "description": "Day of the visit"},
    }, ["address", "date"])
    line = said("The boiler at home has packed in, can someone come tomorrow?", instructions=record)
    noted = trace(visit, {"address": "4 Elm Row, Leeds LS6 2AB (Baxi combi, serviced May 2025)",
                          "date": "2026-06-04"}, line)
    assert noted.missing == ["address"]
    assert trace(visit, {"address": "4 Elm Row, Leeds LS6 2AB", "date": "2026-06-04"}, line).missing == []


AT_A_TIME = client_tool("book_slot", {  # a booking of a day and a start time, corrected after its read-back
    "date": {"type": "string", "format": "date", "description": "Day of the booking"},
    "time": {"type": "string", "description": "Start time, HH:MM on the 24-hour clock"},
}, ["date", "time"])


def test_a_time_corrected_after_a_read_back_is_the_new_one() -> None:
    """The caller corrects the time the agent read back ("Ooh, sorry, the morning one. Eleven
    o'clock."): the call takes eleven, not the three first said."""
    line = said("Book our tasting for Wednesday the tenth at three, please.", "Ooh, sorry, the morning one. Eleven o'clock.",
                asked=["", "A tasting on Wednesday, June 10 at 15:00. Shall I book it?"],
                instructions="The office is open 9:30 to 17:30. Tastings run at 11:00 or 15:00.")
    traced = trace(AT_A_TIME, {"date": "2026-06-10", "time": "15:00"}, line)
    assert traced.missing == [] and traced.arguments == {"date": "2026-06-10", "time": "11:00"}


# --- read from fresh13 after its run -----------------------------------------------------------

CARE = ("The caller is Helen Markham, who arranges care for two relatives. On file: her mother, Edith "
        "Markham, client BW-3318, visited every day at 8:00 and at 18:30; and her father-in-law, Arthur "
        "Markham, client BW-3342, visited Monday, Wednesday and Friday at 11:00.")
EXTRA = client_tool("book_extra_visit", {
    "client_id": {"type": "string", "description": "The client ID, e.g. BW-3318"},
    "date": {"type": "string", "format": "date", "description": "Day of the visit"},
    "duration_minutes": {"type": "integer", "description": "Length of the visit in minutes: 30, 45 or 60"},
}, ["client_id", "date", "duration_minutes"])


def test_half_an_hour_is_thirty_minutes_not_the_clients_digits() -> None:
    line = said("Can you add a visit for B W three three one eight tomorrow? Half an hour should do it.",
                instructions=CARE)
    traced = trace(EXTRA, {"client_id": "BW-3318", "date": "2026-06-04", "duration_minutes": 3318}, line)
    assert traced.missing == [] and traced.arguments["duration_minutes"] == 30


def test_a_word_for_kin_points_at_the_relative_the_record_names() -> None:
    """ "Mum" is the record's "her mother": the one meant, over an entry only a weekday points at."""
    cancel = client_tool("cancel_visit", {
        "client_id": {"type": "string", "description": "The client ID, e.g. BW-3318"},
        "date": {"type": "string", "format": "date", "description": "Day of the visit"},
    }, ["client_id", "date"])
    line = said("Mum's got a hospital appointment on Friday so she won't need her visit.", instructions=CARE)
    assert trace(cancel, {"client_id": "BW-3318", "date": "2026-06-05"}, line).missing == []
    moved = trace(cancel, {"client_id": "BW-3342", "date": "2026-06-05"}, line)
    assert moved.missing == ["client_id"] or moved.arguments["client_id"] == "BW-3318"


def test_a_name_outweighs_the_tools_own_words_in_the_record() -> None:
    """ "The Zafira's MOT" books the Zafira: "MOT", a word of the tool's own name (and no name: an
    acronym), points at no car, though the Fiesta's entry says "MOT due"."""
    garage = ("The caller is Janet Mortimer. On file: a silver Ford Fiesta, registration LK19 XRT, MOT due "
              "by June 21, 2026; and a blue Vauxhall Zafira, registration YP16 NBA, last full service in March.")
    mot = client_tool("book_mot", {
        "registration": {"type": "string", "description": "Registration in capitals with a space, e.g. LK19 XRT"},
        "date": {"type": "string", "format": "date", "description": "Day of the test"},
    }, ["registration", "date"])
    line = said("The Zafira's MOT isn't due till August, but could I get it done Saturday the thirteenth?",
                instructions=garage)
    assert trace(mot, {"registration": "YP16 NBA", "date": "2026-06-13"}, line).missing == []
    fiesta = trace(mot, {"registration": "LK19 XRT", "date": "2026-06-13"}, line)
    assert fiesta.missing == ["registration"] or fiesta.arguments["registration"] == "YP16 NBA"


def test_miles_so_far_are_no_day() -> None:
    """ "It's done nearly ninety thousand miles now" is how far, not today: the correction keeps the
    day said before."""
    service = client_tool("book_service", {
        "service_type": {"type": "string", "enum": ["interim", "full", "major"], "description": "Which service"},
        "date": {"type": "string", "format": "date", "description": "Day of the service"},
    }, ["service_type", "date"])
    line = said("Full service on Thursday the eighteenth, please.",
                "Actually, make it a major service. It's done nearly ninety thousand miles now.",
                asked=["", "A full service on Thursday, June 18. Is that right?"])
    traced = trace(service, {"service_type": "major", "date": "2026-06-03"}, line)
    assert traced.missing == [] and traced.arguments["date"] == "2026-06-18"


def test_i_said_one_time_but_meant_another_is_the_other() -> None:
    """fresh14: "Sorry, I said half two but I meant half three." after a read-back of 14:30."""
    line = said("Wednesday the tenth at half two, please.", "Sorry, I said half two but I meant half three. Half past three.",
                asked=["", "An appointment on Wednesday, June 10 at 14:30. Shall I book it?"],
                instructions="The clinic is open Monday to Friday, 8:30 to 17:30.")
    traced = trace(AT_A_TIME, {"date": "2026-06-10", "time": "14:30"}, line)
    assert traced.missing == [] and traced.arguments["time"] == "15:30"


def test_a_choice_is_named_by_a_word_of_its_own_not_of_the_tools_name() -> None:
    """fresh14: "I paid the rent on the big plot back in October" ran `report_plot_issue` on the plot
    on file, its choice `overgrown_plot` taken as named by "plot", the word every report is about."""
    from pipeline.tools.unasked import unasked

    plots = "The caller is Graham Webb. On file: plot H-14, a full plot at Hollybrook Lane; plot F-07, a half plot."
    report = client_tool("report_plot_issue", {
        "plot_reference": {"type": "string", "description": "The plot, e.g. H-14"},
        "issue_type": {"type": "string", "enum": ["overgrown_plot", "water_leak", "broken_fence"]},
    }, ["plot_reference", "issue_type"])
    rent = said("I paid the rent on the big plot back in October. I'm all square on that one, am I?", instructions=plots)
    assert unasked(report, {"plot_reference": "H-14", "issue_type": "overgrown_plot"}, rent)
    weeds = said("The big plot next to mine is completely overgrown, brambles everywhere.", instructions=plots)
    assert not unasked(report, {"plot_reference": "H-14", "issue_type": "overgrown_plot"}, weeds)


def test_a_word_for_kin_is_no_name() -> None:
    """fresh15: "My mother died last night" booked a meeting for the deceased named "Mam"."""
    meeting = client_tool("book_arrangement_meeting", {
        "deceased_name": {"type": "string", "description": "Full name of the person who has died"},
        "date": {"type": "string", "format": "date", "description": "Day of the meeting"},
    }, ["deceased_name", "date"])
    line = said("My mother died last night. Could we come in tomorrow? Mam was Eileen Kelleher.")
    assert trace(meeting, {"deceased_name": "Mam", "date": "2026-06-04"}, line).missing == ["deceased_name"]
    assert trace(meeting, {"deceased_name": "Eileen Kelleher", "date": "2026-06-04"}, line).missing == []
    # fresh51: "Amma is starting hers on the fifteenth ... Anand Krishnan" booked a patient "Amma"
    amma = said("Amma is starting hers on the fifteenth, so book me from Monday the twenty-second. Anand Krishnan.")
    assert trace(meeting, {"deceased_name": "Amma", "date": "2026-06-22"}, amma).missing == ["deceased_name"]
    # fresh28: "the open doubles, with my lad, Sam Whitworth" entered a partner named "my lad"
    entry = client_tool("enter_league", {
        "player_name": {"type": "string", "description": "The player's full name"},
        "partner_name": {"type": "string", "description": "Doubles partner's full name, if any"},
    }, ["player_name"])
    lad = said("It's Derek Whitworth. The doubles, with my lad, Sam Whitworth, please.")
    assert trace(entry, {"player_name": "Derek Whitworth", "partner_name": "my lad"}, lad).dropped == ["partner_name"]
    assert trace(entry, {"player_name": "Derek Whitworth", "partner_name": "Sam Whitworth"}, lad).dropped == []
    # "Nikhil Rao, R-A-O": the caller's spelling of their own name is no partner's name
    spelt = said("I want to enter the doubles, please. Nikhil Rao, R-A-O.")
    assert trace(entry, {"player_name": "Nikhil Rao", "partner_name": "R-A-O"}, spelt).dropped == ["partner_name"]


def test_two_registrations_that_share_their_digits_are_two() -> None:
    """A code with letters is known whole, spaced or not: "LK19 XRT" and "YP19 NBA" share only "19"."""
    garage = ("On file: a silver Ford Fiesta, registration LK19 XRT; and a blue Vauxhall Zafira, "
              "registration YP19 NBA.")
    mot = client_tool("book_mot", {
        "registration": {"type": "string", "description": "Registration in capitals with a space, e.g. LK19 XRT"},
        "date": {"type": "string", "format": "date", "description": "Day of the test"},
    }, ["registration", "date"])
    line = said("Could I get the Zafira in for its test on Saturday the thirteenth?", instructions=garage)
    fiesta = trace(mot, {"registration": "LK19 XRT", "date": "2026-06-13"}, line)
    assert fiesta.missing == ["registration"] or fiesta.arguments["registration"] == "YP19 NBA"


REPAIR_DESK = ("Repair tickets look like RT-20417 (RT, a hyphen and five digits). On file: ticket RT-20433, "
               "iPad Air, quote $119 awaiting approval; ticket RT-20436, her son's Samsung Galaxy A54, quote $89 "
               "awaiting approval.")


def test_a_ticket_on_file_is_said_by_its_digits_alone() -> None:
    """fresh15: "It's the Samsung I'm saying no to. Two oh four three six." is the ticket RT-20436;
    digits said of no ticket on file are none."""
    quote = client_tool("respond_to_quote", {
        "ticket_number": {"type": "string", "description": "The repair ticket, e.g. RT-20433"},
        "decision": {"type": "string", "enum": ["approve", "decline"], "description": "Go ahead or not"},
    }, ["ticket_number", "decision"])
    line = said("I want to decline the quote on ticket RT-20433.",
                "No, wait, that's the wrong ticket. It's the Samsung I'm saying no to. Two oh four three six.",
                asked=["", "I'll decline the $119 quote on RT-20433, the iPad Air battery. Correct?"],
                instructions=REPAIR_DESK)
    assert trace(quote, {"ticket_number": "RT-20436", "decision": "decline"}, line).missing == []
    elsewhere = said("Decline the one ending two oh four three nine, please.", instructions=REPAIR_DESK)
    assert trace(quote, {"ticket_number": "RT-20436", "decision": "decline"}, elsewhere).missing == ["ticket_number"]


def test_a_make_and_model_is_a_name_said_and_twice_a_day_is_two() -> None:
    """fresh15: "it's a Google Pixel 8" and "an iPhone 15 Pro" were refused as codes nobody said (the
    schema's example has "S23" in it), and "twice a day" as a day nobody said for `doses_per_day`."""
    repair = client_tool("book_repair", {
        "device_model": {"type": "string", "description": "Make and model, e.g. iPhone 13 Pro or Samsung Galaxy S23"},
        "date": {"type": "string", "format": "date", "description": "Day the device is dropped off"},
    }, ["device_model", "date"])
    for model in ("Google Pixel 8", "iPhone 15 Pro"):
        line = said(f"My phone won't charge, it's a {model}. Could I bring it in tomorrow?", instructions=REPAIR_DESK)
        assert trace(repair, {"device_model": model, "date": "2026-06-04"}, line).missing == []
    other = said("My phone won't charge, it's a Google Pixel 8. Could I bring it in tomorrow?")
    assert trace(repair, {"device_model": "Google Pixel 7", "date": "2026-06-04"}, other).missing == ["device_model"]
    dose = client_tool("add_medication", {
        "medication": {"type": "string", "description": "Name of the medicine, e.g. Metacam"},
        "doses_per_day": {"type": "integer", "description": "How many times a day it is given"},
    }, ["medication", "doses_per_day"])
    twice = said("Biscuit's on Metacam now, twice a day with his breakfast and his tea.")
    assert trace(dose, {"medication": "Metacam", "doses_per_day": 2}, twice).missing == []
    assert trace(dose, {"medication": "Metacam", "doses_per_day": 1}, twice).arguments["doses_per_day"] == 2
    assert trace(dose, {"medication": "Metacam", "doses_per_day": 1},
                 said("Biscuit's on Metacam now, once I'm back he'll need it.")).missing == ["doses_per_day"]



def test_a_day_of_the_month_said_alone_is_of_the_month_talked_of() -> None:
    """fresh15: after "from the first to the fifth of September", "Ooh, no, the seventh, not the
    fifth. The Monday." is September 7 (a Monday): the fifth is taken back, and neither June 7 nor
    the Monday June 8 is written in; the first, which nobody corrected, stands."""
    stay = client_tool("book_stay", {
        "check_in_date": {"type": "string", "format": "date", "description": "Day the cat arrives"},
        "check_out_date": {"type": "string", "format": "date", "description": "Day the cat goes home"},
    }, ["check_in_date", "check_out_date"])
    line = said("Can you book Mabel into the cattery from the first to the fifth of September?",
                "Ooh, no, the seventh, not the fifth. The Monday.",
                asked=["", "That's Mabel checking in Tuesday, September 1 and going home Saturday, September 5. "
                           "Shall I book it?"])
    for written in ("2026-09-05", "2026-09-07"):
        traced = trace(stay, {"check_in_date": "2026-09-01", "check_out_date": written}, line)
        assert traced.missing == [] and traced.arguments == {"check_in_date": "2026-09-01",
                                                             "check_out_date": "2026-09-07"}
    tuesday = said(line.said[0], "Ooh, no, the seventh, not the fifth. The Tuesday.", asked=line.asked)
    assert trace(stay, {"check_in_date": "2026-09-01", "check_out_date": "2026-09-07"},
                 tuesday).arguments.get("check_out_date") != "2026-09-07"  # September 7 is a Monday


def test_two_choices_named_are_the_choice_for_both_and_a_code_is_written_in_its_examples_form() -> None:
    """fresh15: "on RIP.ie and in the Examiner as well" was placed on RIP.ie alone, where the schema
    has `both`; and the reference read out as "B F, twenty twenty-six, oh one four seven" is written
    as the schema's example writes its references (BF-2026-0147), as a back end looks it up."""
    notice = client_tool("place_death_notice", {
        "funeral_reference": {"type": "string", "description": "The funeral's reference, e.g. BF-2026-0152"},
        "publication": {"type": "string", "enum": ["rip_ie", "irish_examiner", "both"],
                        "description": "Where to publish the notice"},
    }, ["funeral_reference", "publication"])
    line = said("Could you put the notice for Dad on RIP.ie and in the Examiner as well? The reference you "
                "gave us is B F, twenty twenty-six, oh one four seven.")
    traced = trace(notice, {"funeral_reference": "BF20260147", "publication": "rip_ie"}, line)
    assert traced.missing == [] and traced.arguments == {"funeral_reference": "BF-2026-0147", "publication": "both"}
    one = said("Just on RIP.ie, please. The reference is B F, twenty twenty-six, oh one four seven.")
    assert trace(notice, {"funeral_reference": "BF-2026-0147", "publication": "rip_ie"}, one).arguments == {
        "funeral_reference": "BF-2026-0147", "publication": "rip_ie"}


def test_optional_prose_with_no_word_of_the_callers_is_left_out() -> None:
    """Qwen wrote "DAD" on a tribute card for the caller's nan, copied the schema's description into
    a table's notes, and put a refusal in a cancellation's reason: optional prose that shares no
    word with what the caller said is left out; prose in the caller's words, or a required note,
    stays."""
    flowers = client_tool("order_flowers", {
        "tribute": {"type": "string", "enum": ["wreath", "spray", "letters_tribute"], "description": "Which tribute"},
        "card_message": {"type": "string", "description": "What the card should say"},
        "notes": {"type": "string", "description": "A high chair or a birthday, in the caller's words"},
    }, ["tribute"])
    line = said("We'd like to order one of the letters tributes for Nan, with a card from all the grandchildren.")
    traced = trace(flowers, {"tribute": "letters_tribute", "card_message": "DAD",
                             "notes": "A high chair or a birthday"}, line)
    assert traced.arguments == {"tribute": "letters_tribute"} and set(traced.dropped) == {"card_message", "notes"}
    kept = trace(flowers, {"tribute": "letters_tribute", "card_message": "Love from all the grandchildren"}, line)
    assert kept.arguments["card_message"] == "Love from all the grandchildren"
    cancel = client_tool("cancel_booking", {
        "booking_reference": {"type": "string", "description": "The booking reference"},
        "reason": {"type": "string", "description": "Why it is cancelled, in a few words"},
    }, ["booking_reference"])
    refused = trace(cancel, {"booking_reference": "WCF4D88J", "reason": "I'm sorry, but I can't assist with that."},
                    said("I need to cancel booking W C F, four, D for delta, eight, eight, J for Juliet."))
    assert refused.arguments == {"booking_reference": "WCF4D88J"}


def test_a_choice_named_by_two_of_its_words_that_other_choices_share_one_each() -> None:
    """fresh16: "two performance snowboards" was hired as `ski_performance`: no word of
    `snowboard_performance` is its own, but it is the one choice both words name."""
    hire = client_tool("reserve_hire", {
        "lead_name": {"type": "string", "description": "Name the hire is booked under"},
        "package": {"type": "string", "enum": ["ski_standard", "ski_performance", "snowboard_standard",
                                               "snowboard_performance", "kids_ski"], "description": "Which package"},
    }, ["lead_name", "package"])
    line = said("Hi there, two performance snowboards for a week, please. Booking under Mei Chen.")
    assert trace(hire, {"lead_name": "Mei Chen", "package": "ski_performance"}, line).arguments["package"] \
        == "snowboard_performance"
    board = said("A snowboard for the week, please. Booking under Mei Chen.")  # which board is not said
    assert trace(hire, {"lead_name": "Mei Chen", "package": "snowboard_standard"}, board).arguments["package"] \
        == "snowboard_standard"


def test_a_choice_said_whole_is_named_though_another_choice_holds_its_word() -> None:
    """fresh16: "Isla's ballet" booked `salsa`; "ballet" is all of the choice `ballet` (and one word of
    `childrens_ballet`), so the model's salsa is against the caller's words."""
    book = client_tool("book_class", {
        "class_style": {"type": "string", "enum": ["salsa", "ballet", "hip_hop", "childrens_ballet"],
                        "description": "The style of class"},
        "date": {"type": "string", "format": "date", "description": "Day of the class"},
    }, ["class_style", "date"])
    line = said("Can you book Isla into ballet this Saturday?")
    assert trace(book, {"class_style": "salsa", "date": "2026-06-06"}, line).missing == ["class_style"]
    assert trace(book, {"class_style": "ballet", "date": "2026-06-06"}, line).missing == []
    # "ballet" is a word both ballets have: of the two, it names the one it is all of; the
    # children's class is asked about, not guessed (2026-12-05: "one of your bouncy castles")
    assert trace(book, {"class_style": "childrens_ballet", "date": "2026-06-06"}, line).missing == ["class_style"]
    children = said("Can you book Isla into the children's ballet this Saturday?")
    assert trace(book, {"class_style": "childrens_ballet", "date": "2026-06-06"}, children).missing == []


def test_a_choice_written_as_one_word_is_named_by_its_two_said_apart() -> None:
    """fresh44: "any of the hard-shell ones" names `hardshell_6` (Whisper writes "hard shell" too); a
    size both tubs have ("the six-seater") names neither."""
    check = client_tool("check_availability", {
        "start_date": {"type": "string", "format": "date", "description": "Day the hire would start"},
        "tub": {"type": "string", "enum": ["inflatable_4", "inflatable_6", "hardshell_6"],
                "description": "Only this tub, if the caller said"}}, ["start_date"])
    for line in ("Have you any of the hard-shell ones free on Friday?", "Have you a hard shell one free on Friday?"):
        traced = trace(check, {"start_date": "2026-06-05", "tub": "hardshell_6"}, said(line))
        assert (traced.arguments.get("tub"), traced.dropped) == ("hardshell_6", []), line
    traced = trace(check, {"start_date": "2026-06-05", "tub": "hardshell_6"}, said("Have you a six-seater free on Friday?"))
    assert "tub" not in traced.arguments


def test_a_required_kind_nobody_named_is_asked_for() -> None:
    """fresh16: "Something's not right with the system. Can you log it as a fault?" logged
    `battery_not_charging`, a kind of fault nobody named; the caller is asked which. A kind they
    named in other words of its own ("the battery isn't charging", "delivered" for `delivery`,
    "the cattery" for `cat`) stands."""
    fault = client_tool("log_fault", {
        "account_number": {"type": "string", "description": "The account, e.g. BR-20431"},
        "fault_type": {"type": "string", "enum": ["inverter_error", "panel_damage", "battery_not_charging", "other"],
                       "description": "What kind of fault"},
    }, ["account_number", "fault_type"])
    record = "The caller is Graham Whitlock, account BR-20431."
    vague = said("Something's not right with the system. Can you log it as a fault?", instructions=record)
    assert trace(fault, {"account_number": "BR-20431", "fault_type": "battery_not_charging"}, vague).missing \
        == ["fault_type"]
    named = said("The battery's not charging since Sunday. Can you log it as a fault?", instructions=record)
    assert trace(fault, {"account_number": "BR-20431", "fault_type": "battery_not_charging"}, named).missing == []
    cake = client_tool("order_cake", {
        "fulfilment": {"type": "string", "enum": ["collection", "delivery"], "description": "Collected or delivered"},
        "species": {"type": "string", "enum": ["dog", "cat"], "description": "Which pet"},
    }, ["fulfilment", "species"])
    line = said("Could I get it delivered on Friday? It's for the cattery party.")
    assert trace(cake, {"fulfilment": "delivery", "species": "cat"}, line).missing == []


def test_an_age_is_no_count() -> None:
    """fresh16: "passport photos for my little boy, he's four" booked `number_of_people: 4`; an age
    ("he's four.", "aged 9", "six years old") is only an age's."""
    photos = client_tool("book_photos", {
        "date": {"type": "string", "format": "date", "description": "Day of the appointment"},
        "number_of_people": {"type": "integer", "description": "How many people need photos"},
        "child_age": {"type": "integer", "description": "The child's age, if a child"},
    }, ["date"])
    line = said("I need passport photos for my little boy, he's four. Can we come in Saturday?")
    traced = trace(photos, {"date": "2026-06-06", "number_of_people": 4, "child_age": 4}, line)
    assert traced.arguments == {"date": "2026-06-06", "child_age": 4}
    two = said("Passport photos for the two of us on Saturday, please. My daughter's six years old.")
    assert trace(photos, {"date": "2026-06-06", "number_of_people": 2, "child_age": 6}, two).arguments == {
        "date": "2026-06-06", "number_of_people": 2, "child_age": 6}


def test_a_member_of_staff_is_no_customer() -> None:
    """fresh16: "Is Joanne in on Tuesday? ... Bogdan Ilie, that's I, L, I, E." booked the customer
    "Joanne", a photographer the instructions list (fresh3's driving school did the same with "a
    lesson with Tom"); the caller's own name stands."""
    shop = "You answer the phone for SnapID Photo Studio. Photographers: Ravi Mehta and Joanne Pike."
    book = client_tool("book_photo_appointment", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "date": {"type": "string", "format": "date", "description": "Day of the appointment"},
    }, ["customer_name", "date"])
    line = said("Is Joanne in on Tuesday? I'd like to see her for a visa photo. Bogdan Ilie, that's I, L, I, E.",
                instructions=shop)
    assert trace(book, {"customer_name": "Joanne", "date": "2026-06-09"}, line).missing == ["customer_name"]
    assert trace(book, {"customer_name": "Bogdan Ilie", "date": "2026-06-09"}, line).missing == []


def test_a_correction_after_a_read_back_gives_the_number_and_a_code_said_twice_is_said() -> None:
    """fresh16: "Ah, make it two, mate." after "I'll add 3 extra days" is two extra days; "It's six oh
    four seven four, SN-60474" says the order once in words and once as written. A corrected count
    goes to the argument the read-back named by its own words, not to every count ("Sorry,
    three." after "four balcony tickets" is no three concessions)."""
    extend = client_tool("extend_hire", {
        "booking_ref": {"type": "string", "description": "The booking, e.g. SH-51274"},
        "extra_days": {"type": "integer", "description": "How many days to add"},
    }, ["booking_ref", "extra_days"])
    line = said("Can I add three days on booking SH-51988?", "Ah, make it two, mate. The wife says three's pushing it.",
                asked=["", "I'll add 3 extra days to booking SH-51988. Is that right?"])
    assert trace(extend, {"booking_ref": "SH-51988", "extra_days": 2}, line).missing == []
    tickets = client_tool("book_tickets", {
        "quantity": {"type": "integer", "description": "Total number of tickets"},
        "concession_count": {"type": "integer", "description": "How many of the tickets are concessions"},
    }, ["quantity"])
    three = said("Four balcony tickets for the gala, please.", "Sorry, three. My sister's just dropped out.",
                 asked=["", "That's four balcony tickets for the gala. Shall I book them?"])
    assert "concession_count" not in trace(tickets, {"quantity": 3, "concession_count": 3}, three).arguments
    resend = client_tool("resend_digital_code", {
        "order_number": {"type": "string", "description": "The order, e.g. SN-60917"},
        "email": {"type": "string", "description": "Where to send it, if not the one on the order"},
    }, ["order_number"])
    twice = said("Can you resend the digital code for order SN-60447?",
                 "Oh, hold on, I've read that wrong. It's six oh four seven four, SN-60474.",
                 asked=["", "I'll resend the code for order SN-60447. Is that right?"])
    assert trace(resend, {"order_number": "SN-60474"}, twice).missing == []
    assert trace(resend, {"order_number": "SN-60447"}, twice).missing == ["order_number"]


def test_my_membership_is_the_callers_own_of_the_accounts_numbers() -> None:
    """fresh16: "I need to freeze my membership" on an account holding the caller's number and her
    daughter's was refused (or written as the schema's example, SA-10294): "my membership" points
    at the caller's own; "Isla's membership" at her daughter's."""
    studio = ("The caller is Fiona Gallagher, member number SA-30582, on the Monthly Unlimited plan. Her daughter "
              "Isla Gallagher, aged 9, is also a member on the account, member number SA-30583.")
    freeze = client_tool("freeze_membership", {
        "member_number": {"type": "string", "description": "The member's number, e.g. SA-10294"},
        "weeks": {"type": "integer", "description": "How many weeks, 1 to 8"},
    }, ["member_number", "weeks"])
    mine = said("I need to freeze my membership for four weeks, I've done my ankle in.", instructions=studio)
    for written in ("SA-30582", "SA-10294"):
        traced = trace(freeze, {"member_number": written, "weeks": 4}, mine)
        assert traced.missing == [] and traced.arguments["member_number"] == "SA-30582"
    isla = said("Could you freeze Isla's membership for four weeks? She's off to her gran's.", instructions=studio)
    for written in ("SA-30583", "SA-30582"):
        assert trace(freeze, {"member_number": written, "weeks": 4}, isla).arguments["member_number"] == "SA-30583"


def test_a_clients_look_up_of_the_record_runs_only_where_the_caller_asked_for_it() -> None:
    """fresh17: "How much would a setup be on an acoustic? I'm just pricing it up for my brother."
    looked up the repair ticket on file. A client's look-up whose values are all on file runs only
    where the caller's words name it; "Is my guitar ready yet?" names a status look-up."""
    from pipeline.tools.unasked import unasked
    status = client_tool("check_repair_status", {
        "ticket_number": {"type": "string", "description": "The repair ticket, e.g. RT-30512"}}, ["ticket_number"])
    shop = "The caller is Niamh Gallagher. On file: repair ticket RT-30518, her Martin acoustic, a neck reset."
    pricing = said("How much would a setup be on an acoustic? I'm just pricing it up for my brother.",
                   instructions=shop)
    assert unasked(status, {"ticket_number": "RT-30518"}, pricing)
    for line in ("Is my guitar ready yet? The one Declan's doing.", "Could you check on my repair for me?"):
        assert not unasked(status, {"ticket_number": "RT-30518"}, said(line, instructions=shop)), line


def test_a_value_no_word_calls_a_name_may_hold_digits_and_number_words() -> None:
    """The digits and number-word checks are for names ("Eight people on Sunday" is no patient): an
    asset tag described as "The device's asset tag" ("LT-3381"), or a title said with a number
    word, is what the caller said."""
    visit = client_tool("book_technician_visit", {
        "asset_tag": {"type": "string", "description": "The device's asset tag"},
        "date": {"type": "string", "format": "date", "description": "Day of the visit"},
    }, ["asset_tag", "date"])
    line = said("Could a technician look at laptop LT 3381 tomorrow at ten?")
    assert trace(visit, {"asset_tag": "LT-3381", "date": "2026-06-04"}, line).missing == []
    assert trace(BOOK, {"patient_name": "Eight people on Sunday", "date": "2026-06-07", "time": "12:00"},
                 said("Eight people on Sunday at noon, please.")).missing == ["patient_name"]


def test_so_many_of_us_is_the_head_count_whatever_the_tool_calls_it() -> None:
    """fresh17: "Ugh, sorry, it's six of us now" was refused as no count of `players`."""
    room = client_tool("book_room", {
        "room": {"type": "string", "description": "Which room"},
        "players": {"type": "integer", "description": "How many players, 2 to 8"},
    }, ["room", "players"])
    line = said("The Lab 13 room on Friday at six for four, please.", "Ugh, sorry, it's six of us now.",
                asked=["", "That's Lab 13 for four players on Friday at 18:00. Shall I book it?"])
    assert trace(room, {"room": "Lab 13", "players": 6}, line).missing == []


def test_a_thing_said_in_lower_case_is_no_customers_name() -> None:
    """fresh17: "We've jackdaws nesting in the chimney again" booked the customer "Jackdaws". In
    words that write names with capitals, a word said only in lower case is no person's name; a
    medicine or a class said so stays (only the person served is judged so)."""
    sweep = client_tool("book_sweep", {
        "customer_name": {"type": "string", "description": "The customer's full name"},
        "date": {"type": "string", "format": "date", "description": "Day of the visit"},
    }, ["customer_name", "date"])
    line = said("We've jackdaws nesting in the chimney again. Could someone come on Tuesday? Mairéad Fennelly.")
    assert trace(sweep, {"customer_name": "Jackdaws", "date": "2026-06-09"}, line).missing == ["customer_name"]
    assert trace(sweep, {"customer_name": "Mairéad Fennelly", "date": "2026-06-09"}, line).missing == []
    named = said("We've jackdaws nesting in the chimney again. Could someone come on Tuesday? It's Mairéad Fennelly.")
    assert trace(sweep, {"customer_name": "Jackdaws", "date": "2026-06-09"}, named).arguments["customer_name"] \
        == "Mairéad Fennelly"  # the name the caller gave as their own (fresh31)
    pills = client_tool("reorder_medication", {
        "medication": {"type": "string", "description": "Name of the medicine"}}, ["medication"])
    assert trace(pills, {"medication": "carprofen"}, said("More of the carprofen for Rex, please, Dr Shah said so.")
                 ).missing == []


def test_read_from_fresh18() -> None:
    """fresh18: "Ach, no, the eleventh. The Thursday." corrects ("ach"); "2066-09-26" for "the
    twenty-sixth of September" is a year nobody said; "job three oh eight one five's at" is the job
    on file MM-30815, not 3081; "That's Fraser still coming on Friday, aye?" checks with a tag."""
    from pipeline.tools.asks import asks_about_only
    move = client_tool("reschedule_job", {
        "job_id": {"type": "string", "description": "The job, e.g. MM-30772"},
        "new_date": {"type": "string", "format": "date", "description": "The new day"},
    }, ["job_id", "new_date"])
    line = said("Move job MM-30772 to Wednesday the tenth, please.", "Ach, no, the eleventh. The Thursday.",
                asked=["", "I'll move job MM-30772 to Wednesday, June 10. Is that right?"])
    assert trace(move, {"job_id": "MM-30772", "new_date": "2026-06-10"}, line).arguments["new_date"] == "2026-06-11"
    check = client_tool("check_date_available", {
        "date": {"type": "string", "format": "date", "description": "The wedding day"}}, ["date"])
    september = said("Is Ffion free on the twenty-sixth of September?")
    assert trace(check, {"date": "2066-09-26"}, september).arguments.get("date") != "2066-09-26"
    assert trace(check, {"date": "2026-09-26"}, september).missing == []
    status = client_tool("check_job_status", {
        "job_id": {"type": "string", "description": "The job, e.g. MM-30772"}}, ["job_id"])
    record = "The caller is Alasdair MacLeod. On file: job MM-30772, his Focus; his daughter Isla's job MM-30815."
    isla = said("Could you check where job three oh eight one five's at? Isla's heard nothing.", instructions=record)
    assert trace(status, {"job_id": "3081"}, isla).arguments == {"job_id": "MM-30815"}
    assert asks_about_only("That's Fraser still coming for the brakes on Friday morning, aye? Nine o'clock?")


# --- an entry on file named by the things its tool acts on (fresh50, read after its run) ----------

ROOFER = ("You answer the phone for a roofer. The caller is Dana Price, customer code RP-6604; on file: "
          "inspection I-2291 on Friday, June 5 at 9:00, for hail damage; replacement job J-880 starting "
          "Monday, June 22. Her son, Wade Price, customer code RP-6619; on file: leak repair R-4473 on "
          "Thursday, June 11 at 13:00.")
MOVE = ToolSpec.from_openai({"type": "function", "name": "reschedule_appointment",
                             "description": "Move an inspection, repair or replacement job to another day.",
                             "parameters": {"type": "object", "properties": {
                                 "appointment_ref": {"type": "string", "description": "The reference"},
                                 "new_date": {"type": "string", "format": "date", "description": "The new day"}},
                                 "required": ["appointment_ref", "new_date"]}})
TARP = ToolSpec.from_openai({"type": "function", "name": "request_tarp",
                             "description": "Send a crew to put a tarp on a damaged roof.",
                             "parameters": {"type": "object", "properties": {
                                 "phone_number": {"type": "string", "description": "A number to call"}},
                                 "required": ["phone_number"]}})


def test_an_entry_the_callers_words_point_at_is_the_reference_its_tool_acts_on() -> None:
    """"Could we move Friday's inspection to Monday?": the record writes "inspection I-2291", no
    word of the argument's ("appointment", "reference") beside it; the tool moves inspections."""
    from pipeline.tools.given import lacking
    friday = said("Could we move Friday's inspection to Monday, hon?", instructions=ROOFER)
    assert trace(MOVE, {"appointment_ref": "I-2291", "new_date": "2026-06-08"}, friday).missing == []
    assert lacking(MOVE, friday) == []
    unsaid = said("Could we move it to Tuesday, hon?", instructions=ROOFER)  # which of three: not said
    assert trace(MOVE, {"appointment_ref": "I-2291", "new_date": "2026-06-08"}, unsaid).missing == ["appointment_ref"]
    assert lacking(MOVE, unsaid) == ["appointment_ref"]
    # a code on file is no number to ring, whatever entry the words point at
    assert lacking(TARP, friday) == ["phone_number"]
    assert trace(TARP, {"phone_number": "I-2291"}, friday).missing == ["phone_number"]
    # the customer code is the account's, not a thing the tool moves
    assert trace(MOVE, {"appointment_ref": "RP-6604", "new_date": "2026-06-08"}, unsaid).missing == ["appointment_ref"]


def test_a_list_of_choices_is_the_ones_the_caller_named() -> None:
    """fresh52: "Thyroid profile and HbA1c, this Friday" booked "cbc", "lipid_profile", "hba1c":
    the tests are the two the caller named; where they name none, the model's list stands (a
    required list of the schema's choices is its to fill)."""
    lab = client_tool("book_home_collection", {
        "tests": {"type": "array", "description": "The tests to do", "items": {
            "type": "string", "enum": ["cbc", "lipid_profile", "hba1c", "thyroid_profile", "vitamin_d"]}},
    }, ["tests"])
    line = said("Thyroid profile and HbA1c, this Friday, quarter to seven.")
    assert trace(lab, {"tests": ["cbc", "lipid_profile", "hba1c"]}, line).arguments["tests"] == ["hba1c", "thyroid_profile"]
    assert trace(lab, {"tests": ["hba1c", "thyroid_profile"]}, line).arguments["tests"] == ["hba1c", "thyroid_profile"]
    vague = said("The usual blood tests, this Friday, quarter to seven.")
    assert trace(lab, {"tests": ["cbc"]}, vague).arguments["tests"] == ["cbc"]
