"""Read-back (`call.readback`): a consequential tool's values said back before it runs, run on
the caller's plain yes with the confirmation on the ledger's row, and read back again after a
correction; nothing runs on a no. Fake stages: a tone caller, scripted words and model."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from pipeline.call.readback import affirms, confirmed_in_words, read_back
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.calls import call
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.tools.asks import corrects
from pipeline.tools.choice import offered
from pipeline.tools.evidence import Evidence
from pipeline.tools.schema import ToolSpec
from pipeline.transports.scripted import Clip, after_stage
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

RIDES: list[dict] = []


@tool(side_effect=True, business_key=lambda a: f"ride:{a['pickup_address']}",
      read_back="A taxi from {pickup_address} at {pickup_time}", tells="for {pickup_time}")
async def book_ride(pickup_address: str, pickup_time: str) -> dict:
    """Book a taxi.

    Args:
        pickup_address: Where to pick the caller up.
        pickup_time: When, HH:MM on the 24-hour clock.
    """
    RIDES.append({"pickup_address": pickup_address, "pickup_time": pickup_time})
    return {"booked": True, "pickup_time": pickup_time}


def ride(time: str) -> dict:
    return {"name": "book_ride", "arguments": {"pickup_address": "42 Elm Street", "pickup_time": time}}


def run(tmp_path, lines: list[str]):
    RIDES.clear()
    llm = ScriptedLLM(rules=[[r"result of book_ride.*committed", "Your taxi is booked for {pickup_time}."],
                             [r"six thirty", ride("18:30")], [r"taxi", ride("18:00")],
                             [r"(?i)^no\b", "Sorry, what should I change?"]])
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=lines), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    clips = [Clip(caller_tone(2.4), at_s=0.3)] + [
        Clip(caller_tone(1.2), None, after=after_stage("heard_in_full", n + 1), delay_s=0.3)
        for n in range(len(lines) - 1)]
    rec = call(stages, clips, setup=lambda s: s.use_tools(ToolRegistry(specs=[book_ride]), ledger=ledger))
    return rec, ledger


def test_a_yes_runs_the_call_as_read_back_and_the_ledger_keeps_it(tmp_path) -> None:
    rec, ledger = run(tmp_path, ["A taxi at 42 Elm Street at six pm, please.", "Yes, please."])
    story = rec.timeline()
    assert "A taxi from 42 Elm Street at 6 PM, is that right?" in " ".join(rec.agent_lines), story
    assert RIDES == [{"pickup_address": "42 Elm Street", "pickup_time": "18:00"}], story
    confirmed = ledger.confirmation("ride:42 Elm Street")
    assert confirmed == "A taxi from 42 Elm Street at 6 PM, is that right? / Yes, please.", story
    assert ledger.get("ride:42 Elm Street").told, story
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert [o["status"] for o in outputs] == ["awaiting_confirmation", "committed"], story


def test_a_correction_is_read_back_again_and_only_the_confirmed_values_run(tmp_path) -> None:
    rec, ledger = run(tmp_path, ["A taxi at 42 Elm Street at six pm, please.", "No, six thirty.", "Yes."])
    story = rec.timeline()
    said = " ".join(rec.agent_lines)
    assert said.index("at 6 PM, is that right?") < said.index("at 6:30 PM, is that right?"), story
    assert RIDES == [{"pickup_address": "42 Elm Street", "pickup_time": "18:30"}], story
    assert "6:30 PM" in ledger.confirmation("ride:42 Elm Street"), story


def test_a_no_runs_nothing(tmp_path) -> None:
    rec, ledger = run(tmp_path, ["A taxi at 42 Elm Street at six pm, please.", "No."])
    assert RIDES == [] and ledger.get("ride:42 Elm Street") is None, rec.timeline()


@pytest.mark.parametrize(("text", "yes"), [
    ("Yes.", True), ("Yes please, go ahead.", True), ("That's right.", True), ("Okay.", True),
    ("Correct!", True), ("No.", False), ("Yes, but at seven.", False), ("Yes, six thirty.", False),
    ("Is it?", False), ("Actually, make it the airport.", False), ("Wait.", False),
])
def test_only_a_plain_yes_confirms(text: str, yes: bool) -> None:
    assert affirms(text) is yes


def test_the_values_are_said_as_a_person_says_them() -> None:
    @tool(read_back=True)
    async def book_table(name: str, date: str, time: str, party_size: int) -> dict:
        """Book a table.

        Args:
            name: The guest's name.
            date: YYYY-MM-DD.
            time: HH:MM.
            party_size: How many people.
        """
        return {}

    said = read_back(book_table, {"name": "Okafor", "date": "2026-06-04", "time": "19:30", "party_size": 4})
    assert said == ("To confirm: name Okafor, date Thursday, June 4, time 7:30 PM, party size 4, "
                    "is that right?")
    with pytest.raises(ValueError, match="reads back"):
        tool(read_back="A table for {guests}")(book_table.fn)


# --- the model's own read-back, in words -------------------------------------------------------

def _client(name: str, properties: dict, required: list[str]) -> ToolSpec:
    return ToolSpec.from_openai({"type": "function", "name": name, "description": f"{name.replace('_', ' ')}.",
                                 "parameters": {"type": "object", "properties": properties, "required": required}})


CLINIC = [
    _client("book_appointment", {"patient_name": {"type": "string", "description": "Full name of the patient"},
                                 "time": {"type": "string", "description": "HH:MM"}}, ["patient_name", "time"]),
    _client("cancel_ride", {"booking_reference": {"type": "string", "description": "The booking's reference"}},
            ["booking_reference"]),
]


def _turns(*pairs: tuple[str, str]) -> Evidence:
    """(what the agent said before, what the caller said), oldest first."""
    return Evidence(said=[s for _, s in pairs], asked=[a for a, _ in pairs], now=datetime(2026, 6, 3, 10, 0))


def test_a_yes_or_a_correction_to_the_models_own_question_must_be_answered_by_a_call() -> None:
    booked = ("", "Book me tomorrow at five, it's Omar Said.")
    question = "Omar Said tomorrow at 5:00 am, is that right?"
    assert [s.name for s in confirmed_in_words(CLINIC, _turns(booked, (question, "Yes, that's right.")))] \
        == ["book_appointment"]
    assert [s.name for s in confirmed_in_words(CLINIC, _turns(booked, (question, "No, five pm, not five am.")))] \
        == ["book_appointment"]
    # the question names the tool: only that one
    cancel = _turns(("", "Cancel booking TX4419."), ("Booking TX4491, shall I cancel it?", "No, it's four four one nine."))
    assert [s.name for s in confirmed_in_words(CLINIC, cancel)] == ["cancel_ride"]
    # a plain no, a question, a correction with no value a tool takes, or no question asked: the model talks
    for answer in ("No.", "What time do you close?", "Actually, never mind the rest."):
        assert confirmed_in_words(CLINIC, _turns(booked, (question, answer))) == []
    assert confirmed_in_words(CLINIC, _turns(booked, ("I've noted that.", "Yes."))) == []


def test_a_correction_after_a_sound_or_said_as_the_value_again_is_answered_by_a_call() -> None:
    """Callers correct a read-back in many ways: "Ah, no, five pm", "Hang on, no. Five in the
    evening.", or by saying the value again ("Five pm, seventeen hundred."). Each is a correction;
    "No, don't, I'll ring back at five" calls the booking off."""
    booked = ("", "Book me tomorrow at five, it's Omar Said.")
    question = "Omar Said tomorrow at 5:00 am, is that right?"
    for answer in ("Ah, no, five pm.", "Hang on, no. Five in the evening.", "Five pm, seventeen hundred.",
                   "Hmm, no, make that five pm."):
        assert [s.name for s in confirmed_in_words(CLINIC, _turns(booked, (question, answer)))] \
            == ["book_appointment"], answer
    for answer in ("No, don't, I'll ring back at five.", "Forget it, I'll call at five tomorrow."):
        assert confirmed_in_words(CLINIC, _turns(booked, (question, answer))) == [], answer
    assert corrects("Oh, no, sorry, the evening one.") and corrects("Ah, actually, just the interim one.")
    assert not corrects("Oh, that's lovely.") and not corrects("Is it Sunday?")


SWEEP = [
    _client("book_sweep", {"customer_name": {"type": "string", "description": "The customer's full name"},
                           "date": {"type": "string", "format": "date", "description": "Day of the visit"},
                           "slot": {"type": "string", "enum": ["morning", "afternoon"], "description": "Time of day"},
                           "flues": {"type": "integer", "description": "How many flues to sweep"}},
            ["customer_name", "date", "slot", "flues"]),
    _client("get_visit", {"visit_ref": {"type": "string", "description": "The visit's reference"}}, ["visit_ref"]),
]


def test_a_correction_asked_as_a_question_or_naming_a_choice_is_answered_by_a_call() -> None:
    """Callers put a read-back right politely ("Can it be the afternoon?", "Could we do Friday
    instead?"), by naming another of the schema's choices, or by a number among others ("Make it
    two. Three's too many, I've one done already"). Each is answered by the call; a question about
    something, or a no, is not."""
    booked = ("", "Could the sweep come to me Thursday? Aled Pryce, three flues.")
    question = "Three flues for Aled Pryce on Thursday, June 4, in the morning. Shall I book it?"
    for answer in ("Sorry, can it be the afternoon? I don't want you there when the kids are home.",
                   "Oh, the afternoon, actually.", "Could we do Friday instead?",
                   "Ah, make it two. Three's too many, I had one done last year.",
                   "How about the afternoon?"):
        assert [s.name for s in confirmed_in_words(SWEEP, _turns(booked, (question, answer)))] \
            == ["book_sweep"], answer
    for answer in ("Is it Thursday?", "Could you check if Friday's free?", "Can you tell me what it costs?",
                   "Oh, actually, don't book it. I'll ring back on Friday.", "I don't need it any more.",
                   "Is that the afternoon?"):
        assert confirmed_in_words(SWEEP, _turns(booked, (question, answer))) == [], answer
    assert corrects("Yes, but at seven.") and corrects("Could we do Friday instead?") and corrects("Nah, the afternoon.")
    assert not corrects("Is it Thursday?") and not corrects("Could you check if Friday's free?")


UPHOLSTERY = [
    _client("book_pickup", {"job_ref": {"type": "string", "description": "The job reference, e.g. J-1234"},
                            "date": {"type": "string", "format": "date", "description": "Day of the pickup"}},
            ["job_ref", "date"]),
    _client("book_fitting", {"customer_name": {"type": "string", "description": "The customer's full name"},
                             "date": {"type": "string", "format": "date", "description": "Day of the fitting"},
                             "item": {"type": "string", "enum": ["sofa", "armchair", "curtains"],
                                      "description": "What to fit"}},
            ["customer_name", "date", "item"]),
]


def test_a_correction_to_a_read_back_is_answered_by_the_tool_the_question_names_not_the_one_its_words_fit() -> None:
    """ "I'll book the pickup of job J-6095 on Thursday. Is that right?" "Not tomorrow, the Thursday
    after. When you bring the sofa back." The answer's words fit the fitting (its sofa) better; the
    question names the pickup, and of two tools to book, the one whose object it says."""
    booked = ("", "Can the van pick up job J-6095 on Thursday? I'm Nora Pratt.")
    question = "I'll book the pickup of job J-6095 on Thursday, June 4. Is that right?"
    evidence = _turns(booked, (question, "Not tomorrow, the Thursday after. When you bring the sofa back."))
    assert [s.name for s in confirmed_in_words(UPHOLSTERY, evidence)] == ["book_pickup"]
    last = evidence.said[-1]
    assert [s.name for s in offered(UPHOLSTERY, evidence, last_said=last)] == ["book_fitting"]  # the sofa
    wide = offered(UPHOLSTERY, evidence, last_said=last, narrow=False)
    assert [s.name for s in confirmed_in_words(wide, evidence)] == ["book_pickup"]
