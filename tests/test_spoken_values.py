"""Was a tool argument's value said? Speech-aware matching by kind, and kinds and sources read
from a JSON Schema (`pipeline.tools.spoken`). Model-free."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.tools.spoken import (
    Source,
    ValueKind,
    cue_words,
    default_sources,
    find_said,
    kind_from_schema,
    said_in,
    sources_of,
)
from pipeline.tools.spoken.codes import codes_in
from pipeline.tools.spoken.names import similar, sound_key
from pipeline.tools.spoken.times import days_named, moments
from pipeline.tools.spoken.words import number_runs, spoken_number, words

NOW = datetime(2026, 6, 3, 9, 58)  # a Wednesday morning
T, D, DT = ValueKind.TIME, ValueKind.DATE, ValueKind.DATETIME
CODE, NUM, NAME, ADDR, TEXT = (ValueKind.CODE, ValueKind.NUMBER, ValueKind.NAME,
                               ValueKind.ADDRESS, ValueKind.TEXT)


# --- times and dates ---------------------------------------------------------------------------

@pytest.mark.parametrize("said", [
    "six pm", "6 pm", "6pm", "6 p.m.", "18:00", "at six in the evening", "a cab at six tonight",
    "six o'clock this evening", "eighteen hundred hours", "a cab at the central station at 6 pm",
    "a court tomorrow evening, six o'clock, and the ball machine",  # a comma alone between them
])
def test_six_pm_said_many_ways_is_18_00(said: str) -> None:
    assert said_in("18:00", said, kind=T, now=NOW)
    assert said_in("6:00 PM", said, kind=T, now=NOW)


@pytest.mark.parametrize("said", ["a fitting on Saturday at eleven again", "a week on Saturday, eleven again",
                                  "tomorrow, eleven, if that's all right"])
def test_a_bare_hour_again_or_right_after_its_day_is_a_time(said: str) -> None:
    assert said_in("11:00", said, kind=T, now=NOW)


@pytest.mark.parametrize(("value", "said"), [
    ("14:00", "a cab at the central station at 6 pm"),
    ("06:00", "six pm"),
    ("19:00", "six in the evening"),  # the evening settled the hour: it names no range of its own
    ("18:30", "six pm"),
    ("18:00", "a table for six"),  # six people, not six o'clock
    ("17:00", "I live at 5 Elm Street"),
    ("14:00", "tomorrow morning"),
    ("09:00", "a quarter past nine"), ("08:15", "quarter past eight in the evening"),
    ("09:30", "half an hour"),
    ("06:00", "a court tomorrow evening, six o'clock"), ("21:30", "Saturday morning, half nine"),
    ("18:00", "a table for Saturday, six people"),
    ("22:52", "fae eight till eleven at night"),  # a range: eight minutes to eleven is said with "minutes"
])
def test_times_not_said_do_not_match(value: str, said: str) -> None:
    assert not said_in(value, said, kind=T, now=NOW)


@pytest.mark.parametrize(("value", "said"), [
    ("12:00", "at noon"), ("00:00", "midnight"), ("17:30", "half past five"),
    ("05:30", "half past five"), ("18:45", "a quarter to seven"), ("09:15", "a quarter past nine"),
    ("18:10", "ten past six"), ("18:40", "twenty to seven"), ("18:30", "at six thirty tonight"),
    ("18:05", "six oh five pm"), ("07:00", "seven o'clock"), ("20:00", "at 8 please"),
    ("23:00", "eleven at night"), ("6", "at six"), ("18", "at 6 pm"), ("17:00", "at 5"),
    ("18:30", "6.30pm"), ("7:45 am", "seven forty five in the morning"),
    ("09:30", "half nine"), ("21:30", "half nine tonight"), ("00:00", "12 am"),
    ("12:30", "twelve thirty pm"), ("18:00", "around 6-ish"), ("13:00", "1 o'clock in the afternoon"),
])
def test_clock_times(value: str, said: str) -> None:
    assert said_in(value, said, kind=T, now=NOW)


@pytest.mark.parametrize("said", ["right now", "now please", "as soon as possible", "ASAP",
                                  "straight away", "immediately"])
def test_now_is_the_moment_it_was_said(said: str) -> None:
    assert said_in("10:00", said, kind=T, now=NOW)  # two minutes after NOW
    assert said_in("2026-06-03T10:10:00", said, kind=DT, now=NOW)
    assert said_in("now", said, kind=T, now=NOW)
    assert not said_in("11:00", said, kind=T, now=NOW)
    assert not said_in("2026-06-04T10:00", said, kind=DT, now=NOW)  # tomorrow is not now


def test_a_time_that_is_not_now_is_not_right_now() -> None:
    afternoon = datetime(2026, 6, 3, 14, 30)
    assert not said_in("10:00 AM", "I need a cab right now", kind=T, now=afternoon)
    assert said_in("14:40", "I need a cab right now", kind=T, now=afternoon)
    assert not said_in("14:00", "I need a cab right now", kind=T, now=afternoon)  # already gone


def test_now_without_a_clock_matches_only_now_words() -> None:
    assert said_in("now", "right now please", kind=T)
    assert said_in("ASAP", "as soon as you can", kind=T)
    assert not said_in("10:00 AM", "right now", kind=T)


@pytest.mark.parametrize("said", ["for now I just have a question", "Now, about my bill",
                                  "I know that until now"])
def test_now_that_is_not_a_time(said: str) -> None:
    assert not said_in("10:00", said, kind=T, now=NOW)


def test_in_a_while() -> None:
    assert said_in("10:30", "in half an hour", kind=T, now=NOW)
    assert said_in("10:20", "in twenty minutes", kind=T, now=NOW)
    assert said_in("11:00", "in an hour", kind=T, now=NOW)
    assert not said_in("12:00", "in twenty minutes", kind=T, now=NOW)


@pytest.mark.parametrize(("value", "said"), [
    ("2026-06-04T09:30", "tomorrow morning"), ("09:30", "tomorrow morning"),
    ("2026-06-04", "tomorrow"), ("2026-06-05", "the day after tomorrow"),
    ("2026-06-04", "Thursday"), ("2026-06-04", "on thursday please"), ("2026-06-04", "next Thursday"),
    ("2026-06-11", "next Thursday"), ("2026-05-28", "last Thursday"), ("2026-06-03", "June 3rd"),
    ("2026-06-03", "the 3rd of June"), ("2026-06-03", "the third of june"), ("2026-06-03", "June third"),
    ("2026-06-03", "3 June"), ("2026-06-03", "2026-06-03"), ("2026-06-03", "June 3rd, twenty twenty six"),
    ("June 3", "june the third"), ("3 June 2026", "on the 3rd of June"), ("2026-06-06", "this weekend"),
    ("2026-06-07", "this weekend"), ("2026-06-05", "in two days"), ("2026-06-10", "in a week"),
    ("2026-06-03T18:00", "at 6 pm"), ("2026-06-04T18:00:00Z", "tomorrow at six in the evening"),
    ("Thu 6pm", "thursday at six"), ("tomorrow morning", "tomorrow morning"), ("Thursday", "thursday"),
    ("2026-06-12", "on the 12th"), ("2026-12-24", "12/24"), ("2026-06-03", "today"),
    ("1985-04-12", "I was born April twelfth nineteen eighty five"),
    ("2026-06-11", "Thursday the eleventh"), ("2026-06-11", "Thursday, June 11, 2026"),
    ("2026-06-11", "next Thursday the eleventh"), ("2026-06-08", "on Monday, the 8th"),
    ("2026-06-16", "it's the sixteenth. The Tuesday."), ("2026-06-16", "June 16th, a Tuesday"),
    ("2026-06-28", "Sunday 28th"), ("2026-06-16", "Tuesday sixteenth, six o'clock"),  # no "the"
    ("2026-06-17", "Could you do a fortnight today, nine in the morning?"), ("2026-06-17", "two weeks today"),
    ("2026-06-19", "a fortnight on Friday"), ("2026-06-17", "in a fortnight"),
    ("2026-06-08", "for two weeks from Monday"), ("2026-06-08", "for a week from Monday"),  # a stay's first day
])
def test_dates_and_date_times(value: str, said: str) -> None:
    kind = DT if ("T" in value or ":" in value or "pm" in value) else D
    assert said_in(value, said, kind=kind, now=NOW)


@pytest.mark.parametrize(("value", "said"), [
    ("2026-06-07", "Sunday 28th"),  # the Sunday that is the 28th, not this one
    ("2026-06-03T09:30", "tomorrow morning"), ("2026-06-04T14:00", "tomorrow morning"),
    ("2026-06-04", "last Thursday"), ("2026-06-04", "I had an appointment last Thursday"),
    ("2026-06-05T18:00", "at 6 pm"), ("2026-06-04T06:00", "tomorrow at six in the evening"),
    ("2026-06-03", "June 3rd, 2027"), ("2026-06-13", "this weekend"), ("2026-06-04", "Friday"),
    ("2026-06-04", "I took a taxi yesterday"), ("2026-07-03", "June 3rd"),
])
def test_dates_not_said_do_not_match(value: str, said: str) -> None:
    kind = DT if "T" in value else D
    assert not said_in(value, said, kind=kind, now=NOW)


def test_thursday_said_on_a_thursday_is_today_or_next_week() -> None:
    thursday = datetime(2026, 6, 4, 8, 0)
    assert said_in("2026-06-04", "thursday", kind=D, now=thursday)
    assert said_in("2026-06-11", "thursday", kind=D, now=thursday)


def test_relative_days_without_now_match_the_same_words_only() -> None:
    assert said_in("tomorrow", "tomorrow please", kind=D)
    assert not said_in("2026-06-04", "tomorrow please", kind=D)


def test_find_said_gives_the_span() -> None:
    text = "I need a cab at the central station at 6 pm"
    start, end = find_said("18:00", text, kind=T, now=NOW)  # type: ignore[misc]
    assert text[start:end] == "6 pm"


def test_counts_next_to_a_part_of_the_day_are_not_times() -> None:
    assert not said_in("13:00", "checking in tomorrow for one night", kind=T, now=NOW)
    assert not said_in("14:00", "for two people tonight at eight", kind=T, now=NOW)
    assert said_in("20:00", "for two people tonight at eight", kind=T, now=NOW)


def test_an_hour_and_its_minutes_alone_are_a_time_but_still_a_number() -> None:
    assert said_in("07:30", "No, seven thirty, not six thirty.", kind=T, now=NOW)
    assert said_in("730", "seven thirty", kind=NUM) and said_in("7.30", "seven thirty", kind=NUM)
    assert not said_in("07:30", "seven", kind=T, now=NOW)


def test_what_the_issue_saw_invented_is_not_said() -> None:
    thursday = "I had an appointment last Thursday and it went really well"
    assert not said_in("John Doe", thursday, kind=NAME)
    assert not said_in("2026-06-04T10:30", thursday, kind=DT, now=NOW)
    assert not said_in("10:30 AM", thursday, kind=T, now=NOW)
    taxi = "I took a taxi to Elm Street yesterday"
    assert not said_in("2026-06-03T10:00", taxi, kind=DT, now=NOW)
    assert not said_in("now", taxi, kind=T, now=NOW)
    card = "I found my card again, it was in my coat"
    assert not said_in("Bank of America", card, kind=NAME)
    assert not said_in(10.99, card, kind=NUM)
    cab = "a cab at the central station at 6 pm"
    assert not said_in("14:00", cab, kind=T, now=NOW)
    assert said_in("Central Station", cab, kind=ADDR)
    assert not said_in("10:00 AM", "right now", kind=T, now=datetime(2026, 6, 3, 16, 0))


# --- codes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("said", [
    "K7Q2", "k7q2", "K 7 Q 2", "k seven q two", "kay seven cue two", "kilo seven quebec two",
    "k as in kilo, seven, q as in quebec, two", "my code is k seven q two.", "K-7-Q-2",
])
def test_a_code_spelled_or_spoken(said: str) -> None:
    assert said_in("K7Q2", said, kind=CODE)


@pytest.mark.parametrize("said", ["HB-41", "HB 41", "h b forty one", "h b four one", "hb41",
                                  "it's h as in hotel, b as in bravo, forty-one"])
def test_a_code_with_a_number_in_it(said: str) -> None:
    assert said_in("HB-41", said, kind=CODE)


@pytest.mark.parametrize(("value", "said"), [
    ("4417", "forty four seventeen"), ("4417", "four four one seven"), ("9075", "nine oh seven five"),
    ("7730", "seven seven three zero"), ("7730", "double seven thirty"), ("A1234", "A one two three four"),
    ("5550142", "five five five oh one four two"), ("john.smith@mail.com",
                                                     "it's john dot smith at mail dot com"),
    ("BX-907", "b x nine oh seven"), ("1990", "nineteen ninety"),
])
def test_codes_as_callers_read_them(value: str, said: str) -> None:
    assert said_in(value, said, kind=CODE)


@pytest.mark.parametrize(("value", "said"), [
    ("K7Q2", "k seven q two three"),  # the code said goes on
    ("7Q2", "k seven q two"),  # and started before
    ("K7Q3", "k seven q two"), ("44", "forty four seventeen"), ("HB-41", "hb forty"),
    ("4417", "I called about four times"), ("12345", "I found my card again"), ("K7Q2", ""),
    ("5173I", "It's five one seven three I meant."),  # "I" of the caller, no letter (fresh15)
])
def test_codes_not_said(value: str, said: str) -> None:
    assert not said_in(value, said, kind=CODE)


def test_homophones_read_as_digits_only_inside_a_code() -> None:
    assert said_in("K2", "k to", kind=CODE)
    assert not said_in("2", "to", kind=CODE)


# --- numbers ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "said"), [
    ("42", "I paid 42 dollars"), ("42", "forty-two"), ("42.00", "$42"), (42, "forty two bucks"),
    ("120", "a hundred and twenty"), ("120", "one hundred twenty"), ("250", "two fifty"),
    ("2.50", "two fifty"), ("3.5", "three and a half"), ("1200", "twelve hundred"),
    ("1200", "1,200"), ("2026", "two thousand twenty six"), ("4", "a table for four"),
    ("forty-two", "42"),
])
def test_numbers_said(value: str | int, said: str) -> None:
    assert said_in(value, said, kind=NUM)


@pytest.mark.parametrize(("value", "said"), [
    ("42", "forty-three"), ("24", "forty-two"), ("50", "two fifty"), ("6", "a table for 4 at 6"),
    ("10.99", "I found my card again"), ("100", "a hundred and twenty"), ("3", "three and a half"),
])
def test_numbers_not_said(value: str, said: str) -> None:
    assert not said_in(value, said, kind=NUM, cues={"party", "size"})


def test_numbers_keep_the_role_they_were_said_in() -> None:
    ref = cue_words("reference", {"description": "The booking reference number"})
    last4 = cue_words("last4", {"description": "Last four digits of the account"})
    text = "change booking 4417 and charge the account ending 1234"
    assert said_in("4417", text, kind=NUM, cues=ref, rivals=last4)
    assert said_in("1234", text, kind=NUM, cues=last4, rivals=ref)
    assert not said_in("1234", text, kind=NUM, cues=ref, rivals=last4)
    assert not said_in("4417", text, kind=NUM, cues=last4, rivals=ref)
    assert said_in("4417", "4417 is my booking number", kind=NUM, cues=ref, rivals=last4)
    assert said_in("4417", "it's 4417", kind=NUM, cues=ref, rivals=last4)  # unmarked: any
    # unmarked, in answer to a question: the question's role
    asked_last4 = "Thanks. And what are the last four digits of the account?"
    assert not said_in("4417", "it's 4417", kind=NUM, cues=ref, rivals=last4, asked=asked_last4)
    assert said_in("4417", "it's 4417", kind=NUM, cues=last4, rivals=ref, asked=asked_last4)
    assert said_in("4417", "it's 4417", kind=NUM, cues=ref, rivals=last4,
                   asked="What is the booking reference?")
    # a word in the line itself outranks the question
    assert said_in("4417", "booking 4417", kind=NUM, cues=ref, rivals=last4, asked=asked_last4)


def test_a_time_of_day_is_not_a_count_unless_the_argument_is_a_time() -> None:
    party = cue_words("party_size", {"description": "How many people"})
    assert said_in("4", "a table for 4 at 6", kind=NUM, cues=party)
    assert not said_in("6", "a table for 4 at 6", kind=NUM, cues=party)
    assert said_in("6", "a table for 4 at 6", kind=NUM, cues={"hour"})


def test_spoken_number_parsing() -> None:
    assert spoken_number("forty-two") == 42
    assert spoken_number("$1,200.50") == 1200.5
    assert spoken_number("a hundred and twenty") == 120
    assert spoken_number("Elm") is None
    assert spoken_number("42 Elm") is None
    runs = number_runs(words("forty four seventeen, then 5"))
    assert [r.digits for r in runs] == ["4417", "5"]
    assert {Decimal(4417), Decimal("44.17")} <= runs[0].values


# --- names and addresses ----------------------------------------------------------------------

@pytest.mark.parametrize(("value", "said"), [
    ("Catherine Smith", "my name is Katherine Smyth"), ("Stephen", "this is steven"),
    ("John Doe", "john doe"), ("Jon", "John here"), ("Dr. Patel", "I see doctor patil"),
    ("MacDonald", "it's mac donald"), ("Mac Donald", "macdonald"), ("Smith", "S M I T H"),
    ("O'Brien", "obrien"), ("Amazon", "a charge from amazon I don't recognise"),
    ("The Grand Hotel", "the grand hotel please"), ("The Grand Hotel", "grand hotel"),
    ("Mr. Hale", "this is Marcus Hale"), ("Dr Okafor", "can I see Okafor"),
])
def test_names_as_whisper_writes_them(value: str, said: str) -> None:
    assert said_in(value, said, kind=NAME)


@pytest.mark.parametrize(("value", "said"), [
    ("John Doe", "I had an appointment last Thursday and it went really well"),
    ("Bank of America", "I found my card again, it was in my coat"),
    ("Park Street", "mark street"), ("Maria Lopez", "my name is Mario"), ("Doe", "do it"),
    ("Lee", "I see"), ("Anna", "and a"), ("Mr. Smith", "mister"), ("Dr. Patel", "a doctor"),
])
def test_names_not_said(value: str, said: str) -> None:
    assert not said_in(value, said, kind=NAME)


@pytest.mark.parametrize(("value", "said"), [
    ("42 Elm Street", "forty two elm street"), ("42 Elm St.", "I'm at 42 Elm Street"),
    ("42 Elm Street", "42 elm st"), ("5th Avenue", "fifth avenue"), ("Fifth Ave", "on 5th avenue"),
    ("1604 Oak Rd", "sixteen oh four oak road"), ("St. Mary's Hospital", "saint marys hospital"),
    ("Central Station", "a cab at the central station at 6 pm"),
    ("Central Station, 6 PM", "a cab at the central station at 6 pm"),
    ("42 Elm Street, Springfield", "42 elm street in springfield"),
    ("221B Baker Street", "two twenty one b baker street"),
    ("E 12th St", "east twelfth street"),
])
def test_addresses(value: str, said: str) -> None:
    assert said_in(value, said, kind=ADDR)


@pytest.mark.parametrize(("value", "said"), [
    ("43 Elm Street", "forty two elm street"), ("42 Elm Street, Springfield", "42 elm street"),
    ("Airport", "I took a taxi to Elm Street yesterday"), ("42 Oak Street", "42 elm street"),
    ("5th Avenue", "sixth avenue"), ("Oak Dr", "oak road"),
])
def test_addresses_not_said(value: str, said: str) -> None:
    assert not said_in(value, said, kind=ADDR)


def test_sound_key_and_similar() -> None:
    assert sound_key("Smith") == sound_key("Smyth")
    assert sound_key("Catherine") == sound_key("Katherine")
    assert sound_key("Knight") == sound_key("night")
    assert similar("stephen", "steven") and similar("phillip", "philip")
    assert not similar("park", "mark") and not similar("42", "43") and not similar("a", "i")


def test_blank_values_are_never_said() -> None:
    for kind in ValueKind:
        assert not said_in("", "anything at all", kind=kind, now=NOW)
        assert not said_in("  ", "", kind=kind, now=NOW)


def test_text_kind_matches_words() -> None:
    assert said_in("window seat", "a window seat please", kind=TEXT)
    assert not said_in("aisle seat", "a window seat please", kind=TEXT)


# --- kinds and sources from a schema -----------------------------------------------------------

@pytest.mark.parametrize(("name", "schema", "kind"), [
    ("pickup_time", {"type": "string"}, T), ("when", {"type": "string"}, DT),
    ("start", {"type": "string", "format": "date-time"}, DT),
    ("day", {"type": "string", "format": "date"}, D), ("date_of_birth", {"type": "string"}, D),
    ("slot", {"type": "string", "description": "Date and time of the visit"}, DT),
    ("pickup_address", {"type": "string"}, ADDR), ("destination", {"type": "string"}, ADDR),
    ("street_name", {"type": "string"}, NAME), ("patient_name", {"type": "string"}, NAME),
    ("merchant", {"type": "string"}, NAME), ("user_id", {"type": "integer"}, CODE),
    ("phone_number", {"type": "string"}, CODE), ("contact", {"type": "string", "format": "email"}, CODE),
    ("confirmationCode", {"type": "string"}, CODE), ("last4", {"type": "string"}, CODE),
    ("plate", {"type": "string", "pattern": "^[A-Z0-9]+$"}, CODE),
    ("registration", {"type": "string"}, CODE),
    ("vehicle", {"type": "string", "description": "The van, such as AB12 CDE"}, CODE),
    ("vehicle", {"type": "string", "description": "The van, such as a Ford Transit"}, NAME),
    ("device_model", {"type": "string", "description": "Make and model, e.g. iPhone 13 Pro or Samsung Galaxy S23"},
     NAME),  # a product's name, its "S23" no code of its own
    ("doses_per_day", {"type": "integer"}, NUM), ("visits_per_week", {"type": "integer"}, NUM),
    ("x", {"type": "string", "pattern": "^[A-Z]{2}[0-9]+$"}, CODE),
    ("number_of_guests", {"type": "integer"}, NUM), ("party_size", {"type": "integer"}, NUM),
    ("nights", {"type": "integer"}, NUM), ("quantity", {"type": "string"}, NUM),
    ("reason", {"type": "string"}, TEXT), ("notes", {"type": "string"}, TEXT),
    ("vehicle", {"type": "string", "enum": ["car", "van"]}, TEXT),
    ("anything", {"type": "string", "maxLength": 500}, TEXT),
    ("names", {"type": "array", "items": {"type": "string"}}, NAME),
    ("what", {"type": "string", "x-kind": "time"}, T),
])
def test_kind_from_schema(name: str, schema: dict, kind: ValueKind) -> None:
    assert kind_from_schema(name, schema) is kind


@pytest.mark.parametrize("schema", [{"type": "boolean"}, {"type": "object"}, {"const": "x"}])
def test_nothing_to_trace(schema: dict) -> None:
    assert kind_from_schema("x", schema) is None
    assert default_sources(None) == frozenset(Source)


def test_default_sources() -> None:
    said = {Source.CALLER, Source.RESULT, Source.INSTRUCTIONS}
    for kind in (T, D, DT, CODE, NUM, NAME, ADDR):
        assert default_sources(kind) == said
    assert default_sources(TEXT) == frozenset(Source)
    assert sources_of("reason", {"type": "string"}) == frozenset(Source)
    assert sources_of("pickup_time", {"type": "string"}) == said


def test_x_source_overrides_the_default() -> None:
    assert sources_of("pickup_time", {"type": "string", "x-source": "composed"}) == {Source.COMPOSED}
    assert sources_of("reason", {"type": "string", "x-source": "caller"}) == {Source.CALLER}
    assert sources_of("last4", {"type": "string", "x-source": ["caller", "instructions"]}) == {
        Source.CALLER, Source.INSTRUCTIONS}


@pytest.mark.parametrize("bad", ["user", [], ["caller", "model"], 3])
def test_a_bad_x_source_is_a_sentence_that_says_what_to_use(bad: object) -> None:
    with pytest.raises(ValueError, match=r"'when' has \"x-source\".*use one of caller, result"):
        sources_of("when", {"type": "string", "x-source": bad})


def test_a_bad_x_kind_says_what_to_use() -> None:
    with pytest.raises(ValueError, match="use one of time, date"):
        kind_from_schema("when", {"x-kind": "moment"})


def test_cue_words() -> None:
    assert cue_words("party_size", {"description": "How many guests"}) >= {"party", "size", "guest"}
    assert "the" not in cue_words("x", {"description": "the thing"})


# --- anything a transcript may hold ------------------------------------------------------------

_PIECES = st.sampled_from(
    list("abkmopst 0123456789:-/.,'$") + [
        "six ", "pm ", "at ", "half ", "past ", "june ", "the ", "3rd ", "of ", "forty ", "oh ",
        "double ", "now ", "in ", "a ", "hundred ", "and ", "next ", "thursday ", "quarter ",
        "to ", "tonight ", "k as in kilo ", "st. ", "o'clock ", "2026-06-03T18:00 "])
_TEXTS = st.lists(_PIECES, max_size=16).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, _TEXTS, st.sampled_from(list(ValueKind)), st.booleans())
def test_any_value_and_text_give_an_answer(value: str, text: str, kind: ValueKind,
                                           with_now: bool) -> None:
    span = find_said(value, text, kind=kind, now=NOW if with_now else None)
    assert span is None or 0 <= span[0] < span[1] <= len(text)


def test_x_source_and_x_kind_travel_in_a_clients_function() -> None:
    from pipeline.tools import ToolSpec, tool_call_grammar

    definition = {"type": "function", "name": "book", "description": "Book a ride.",
                  "parameters": {"type": "object", "required": ["when"], "properties": {
                      "when": {"type": "string", "x-kind": "time",
                               "x-source": ["caller", "instructions"]}}}}
    spec = ToolSpec.from_openai(definition)
    prop = spec.parameters["properties"]["when"]
    assert kind_from_schema("when", prop) is T
    assert sources_of("when", prop) == {Source.CALLER, Source.INSTRUCTIONS}
    assert tool_call_grammar([spec])


def test_a_weekday_and_a_date_that_disagree_are_two_days() -> None:
    """ "Thursday the twelfth": June 12th 2026 is a Friday; which one the caller means is asked."""
    found = moments(words("Thursday the twelfth"), NOW)
    assert [sorted(m.days) for m in found] == [[(2026, 6, 4)], [(2026, 6, 12)]]


@pytest.mark.parametrize(("text", "codes"), [
    ("The number's S W, four four one oh, two nine eight, seven seven three.", ["SW4410298773"]),
    ("Yeah, it's, um, Sierra Whiskey, one nine nine four, three oh two. I just want it.", ["SW1994302"]),
    ("Call me back on oh seven seven double oh, nine one two, four five six?", ["07700912456"]),
    ("Registration W-K-seven-one, H-J-P. Thursday, at eight.", ["WK71HJP", "8"]),
    ("The reg is Y-R-six-eight, space, K-L-O.", ["YR68KLO"]),
    ("Car on file: 2019 Ford Focus, registration LK19 XRT.", ["2019", "LK19XRT"]),
    ("Could I book a table for two?", ["2"]),
    ("No code here at all.", []),
    ("Oh, no, not that. It's five one seven three I meant.", ["5173"]),
    ("It's A B one I, please.", ["AB1I"]),
])
def test_the_codes_a_caller_reads_out(text: str, codes: list[str]) -> None:
    assert [code for _, _, code in codes_in(text)] == codes


def test_a_written_list_of_codes_is_codes_apart() -> None:
    assert [c for _, _, c in codes_in("Orders on file: 5120 (kettle), 4417 (skillet).", pauses=False)] \
        == ["5120", "4417"]


@pytest.mark.parametrize(("text", "day"), [
    ("Your plumber came out on Friday about the leak", (2026, 5, 29)),
    ("I took it Sunday morning, sorry", (2026, 5, 31)),
    ("I dropped the book in the returns box on Monday", (2026, 6, 1)),
    ("I booked it for Friday", (2026, 6, 5)),  # the day aimed at
    ("I'd like it delivered Friday", (2026, 6, 5)),  # no subject: a participle, not a past
    ("Can you come Friday?", (2026, 6, 5)),
])
def test_a_weekday_told_of_in_the_past_is_the_one_gone_by(text: str, day: tuple[int, int, int]) -> None:
    assert [sorted(m.days) for m in moments(words(text), NOW) if m.days] == [[day]]


@pytest.mark.parametrize(("text", "days"), [
    # a weekday beside a date with no month says which month: the next of the two that agrees
    ("Out on the twenty-ninth. The Wednesday.", ["2026-07-29"]),  # June 29th is a Monday
    ("back on the Monday, the thirty-first", ["2026-08-31"]),  # July 31st is a Friday
    # a range's first day takes the month said after its last
    ("from the twenty-fourth to the twenty-ninth of July", ["2026-07-24", "2026-07-29"]),
    ("the 28th through to the 3rd of August", ["2026-07-28", "2026-08-03"]),
    # a weekend named as some other one, or as one said already, is not this weekend
    ("for the bank holiday weekend, Friday the 28th of August", ["2026-08-28"]),
    ("on the twentieth, I'm away that weekend", ["2026-06-20"]),
])
def test_days_a_phrase_around_them_places(text: str, days: list[str]) -> None:
    assert days_named(text, NOW) == days


def test_a_label_written_before_a_code_is_no_part_of_it() -> None:
    """ "student ID 23104876": the code is the digits (a value written as the record's id is the
    record's, not a piece of "ID23104876"); written solid, "ID4471" is a code as it stands."""
    assert [code for _, _, code in codes_in("Caller: Ana Ruiz, student ID 23104876, room 12.")] == ["23104876", "12"]
    assert [code for _, _, code in codes_in("Ref 4471 9920 on file")] == ["44719920"]
    assert [code for _, _, code in codes_in("Badge ID4471.")] == ["ID4471"]


@pytest.mark.parametrize("text", ["We need it from the twenty-fourth to", "the 3rd of", "June the", "from the 5th till"])
def test_words_cut_off_after_a_range_word_name_no_day_and_raise_nothing(text: str) -> None:
    """A turn cut short ("from the twenty-fourth to") read past its last word and raised, so the
    guard could not trace the call at all."""
    assert days_named(text, NOW) in (None, [], ["2026-06-24"], ["2026-06-03"], ["2026-06-05"])


def test_a_hesitation_is_no_word_and_its_commas_no_pause() -> None:
    """ "Friday at, em, eleven" is a time, as "Friday at eleven" is; "two o'clock's fine" is two
    o'clock; "two of 'em" keeps its "em", "1200 mm" its unit, and "Em" may be a name."""
    assert said_in("11:00", "Could I come Friday at, em, eleven?", kind=ValueKind.TIME, now=NOW)
    assert said_in("14:00", "Two o'clock's still fine.", kind=ValueKind.TIME, now=NOW)
    assert [w.text for w in words("make that two of 'em, 1200 mm, for Em")] == [
        "make", "that", "two", "of", "em", "1200", "mm", "for", "em"]
    assert [(w.text, w.after_break) for w in words("at, um, half six. Uh, then")] == [
        ("at", False), ("half", False), ("six", False), ("then", True)]


@pytest.mark.parametrize(("text", "days"), [
    ("Skye's shoeing on the twelfth, could Lewis do the Saturday instead?", ["2026-06-12", "2026-06-13"]),
    ("Could you move my appointment on the ninth to the Friday instead?", ["2026-06-09", "2026-06-12"]),
    ("From Friday the nineteenth right through to the Sunday.", ["2026-06-19", "2026-06-21"]),
    ("Can I book the Saturday?", ["2026-06-06"]),
    ("The twelfth, the Friday.", ["2026-06-12"]),
])
def test_the_weekday_after_another_day_said_is_in_that_days_week(text: str, days: list[str]) -> None:
    """ "On the twelfth, could Lewis do the Saturday instead?": the Saturday of that week (the 13th),
    not the coming one (fresh31's farrier); to the end of a span, the first after it; said just
    after a day, it names that day (its month the words' to say), not one of that week gone by."""
    assert days_named(text, NOW) == days
    assert "2026-06-02" not in (days_named("Make it the seventh, actually. The Tuesday.", NOW) or [])
