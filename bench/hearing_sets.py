"""The sets the hearing defaults are chosen on (bench/hearing.py): what callers say, with the
words that carry each request marked (`[refund]`, bench/hearing_keys.py), and the agent each is
said to (its instructions and tools: what `turn.context` tells the recogniser).

DEV: the end-of-turn set's whole sentences (bench/eot_set.py PHRASES, its Piper and espeak-ng
voices and noise), on which earlier defaults were tuned, each given the agent of its domain.

HELD-OUT: HELD_OUT below was written before anything of this benchmark was run, and is not
changed after seeing results: new sentences of the kinds callers say to such agents (requests
with names, codes and amounts, corrections, short answers), in 7 domains, each said after the
agent's question it answers. Voiced by every espeak-ng English voice that synthesizes here (the
`gmw` ones of `espeak-ng --voices=en`; the mbrola ones need voice files that are not installed)
at espeak's own rate, by Piper at length 0.8 and 1.25 with sampling noise on (the dev set's Piper
has none), the refund sentence also by the tests' caller voice (pipeline.testing CALLER_VOICE),
and jfk.wav cut at its phrases (the one real voice). Conditions: clean, 0.8 and 1.25 pace
(bench/conditions.py `stretch`), the phone band, 10 dB pink noise.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import wave
from dataclasses import dataclass

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, read_wav, resample, write_wav
from pipeline.stages.stt_context import CallContext
from pipeline.testing import jfk
from pipeline.testing.sounds import CALLER_VOICE, caller_tts
from pipeline.testing.voices import trim

from .clips import CACHE
from .conditions import as_heard
from .eot_set import JFK_WORDS, PHRASES, build, jfk_phrases
from .hearing_keys import plain

SET_CACHE = CACHE / "hearing"
VERSION = 1  # bump when a recipe changes: the cache key includes it
LEAD_S = 0.3  # the turn's prefix padding
TAIL_S = 0.25  # the final pass's audio runs this far past the speech (pipeline.stt SPEECH_PAD_MS)

# domain: (instructions, [(tool, [argument names])], the agent's opening question)
AGENTS: dict[str, tuple[str, list[tuple[str, list[str]]], str]] = {
    "hotel": ("You are the front desk of the Harbour View Hotel. Help callers book, change or "
              "cancel rooms, and answer questions about check-in, checkout and the hotel's services.",
              [("book_room", ["check_in_date", "nights", "guests", "room_type"]),
               ("change_reservation", ["confirmation_code", "new_date"]),
               ("cancel_reservation", ["confirmation_code"]), ("report_room_problem", ["room_number", "problem"])],
              "Harbour View Hotel, how can I help?"),
    "restaurant": ("You take phone bookings and takeaway orders for Luigi's, an Italian restaurant. "
                   "Confirm the party size, the date and the time.",
                   [("book_table", ["party_size", "date", "time", "name"]),
                    ("place_order", ["items", "pickup_time"]), ("opening_hours", ["day"])],
                   "Luigi's, how can I help you?"),
    "it": ("You are the IT help desk. Help staff reset passwords, unlock accounts, and report "
           "problems with laptops, printers, the VPN and email.",
           [("reset_password", ["username"]), ("unlock_account", ["username"]),
            ("open_ticket", ["device", "problem_description", "priority"]), ("ticket_status", ["ticket_number"])],
           "IT help desk, what's the problem?"),
    "airline": ("You are the customer service line of Northwind Airlines. Help callers change, "
                "cancel or check flights, and manage seats and baggage.",
                [("look_up_booking", ["booking_reference", "last_name"]),
                 ("change_flight", ["booking_reference", "new_date", "destination"]),
                 ("flight_status", ["flight_number"]), ("add_baggage", ["booking_reference", "bags"])],
                "Northwind Airlines, how can I help you?"),
    "shop": ("You are the phone support desk of an online shop. Help callers with orders, "
             "deliveries, payments, returns and refunds. Be brief and friendly.",
             [("look_up_order", ["order_id"]), ("track_parcel", ["tracking_number"]),
              ("issue_refund", ["order_id", "card_last4", "amount"]), ("start_return", ["order_id", "item"])],
             "How can I help you today?"),
    "bank": ("You are the telephone banking service of City Bank. Help callers check balances, "
             "block lost or stolen cards, and make transfers.",
             [("check_balance", ["account_number"]), ("block_card", ["card_last4"]),
              ("transfer_money", ["from_account", "to_account", "amount"])],
             "City Bank, how can I help?"),
    "clinic": ("You are the reception of the Elm Street medical clinic. Book, move and cancel "
               "appointments, and take prescription refill requests.",
               [("book_appointment", ["patient_name", "date_of_birth", "date", "time", "doctor"]),
                ("cancel_appointment", ["patient_name", "date"]),
                ("refill_prescription", ["patient_name", "medication"])],
               "Elm Street clinic, how can I help?"),
    "speeches": ("You answer questions about famous speeches of American presidents: who said "
                 "what, when and where.",
                 [("find_speech", ["president", "year"]), ("quote", ["speech_title"])],
                 "Which speech are you looking for?"),
}
# The wrong agent for each domain: its context must not make things worse where it does not fit.
WRONG = {"hotel": "bank", "restaurant": "it", "it": "clinic", "airline": "shop", "shop": "restaurant",
         "bank": "airline", "clinic": "hotel", "speeches": "shop"}


def context(domain: str) -> CallContext:
    instructions, tools, _ = AGENTS[domain]
    return CallContext.of(instructions, tools)


# The dev set: PHRASES's whole sentences (in its order) with their key words, and their domain.
DEV_KEYS: tuple[tuple[str, str], ...] = (
    ("hotel", "I'd like to [book] a [room] for [two] [nights]."),
    ("it", "Can you tell me how to [reset] my [password]?"),
    ("hotel", "I want to [change] my [reservation] for [tomorrow]."),
    ("shop", "Could you send me the [invoice] by [email]?"),
    ("shop", "I'd like to [pay] with my [credit card]."),
    ("restaurant", "We need a [table] for [four] people at [eight]."),
    ("hotel", "I was wondering if you have any [rooms] left."),
    ("airline", "I'm calling because my [flight] was [cancelled]."),
    ("hotel", "The problem is that the [heater] doesn't [work]."),
    ("bank", "So basically what happened was my [card] got [declined]."),
    ("restaurant", "I'd like a [large] [pizza] with [mushrooms]."),
    ("restaurant", "[Book] it for [Friday] if you can."),
    ("shop", "I need [eggs], [milk], and [bread]."),
    ("restaurant", "I'll have a [coffee], a [muffin], and a glass of [water]."),
    ("shop", "[Red], [green], and [blue]."),
    ("bank", "My number is [five five five], [two one two], [three four five six]."),
    ("shop", "The [order] number is [four seven nine two]."),
    ("shop", "My [address] is [twelve] [Oak Street]."),
    ("shop", "The [total] was [forty two] [dollars]."),
    ("shop", "I want, um, the [blue] one."),
    ("airline", "Let me think, uh, I'll take the [early] [flight]."),
    ("restaurant", "Hmm, what time do you [close] [today]?"),
    ("clinic", "Okay, so I need to [cancel] my [appointment]."),
    ("hotel", "[Yes], that's [right]."),
    ("restaurant", "[No], thank you."),
    ("it", "That's [all] for today."),
    ("airline", "[Two] [adults] and [one] [child]."),
    ("hotel", "It's [nine one two]."),
    ("shop", "Thanks, [bye]."),
    ("hotel", "What time is [checkout]?"),
)

# The held-out set: (domain, the agent's question before it, the caller's words). Not tuned on.
REFUND = "I would like a [refund] for my last [order], please."
HELD_OUT: tuple[tuple[str, str, str], ...] = (
    ("shop", "How can I help you today?", REFUND),
    ("shop", "How can I help you today?", "Where is my [parcel]? The [tracking number] is [eight three one five two]."),
    ("shop", "What is the order number?", "It's [A four seven seven one]."),
    ("shop", "Which card should I refund?", "The [Visa] ending in [six six zero three]."),
    ("shop", "Would you like a refund or a replacement?", "A [replacement], please. The [blender] arrived [broken]."),
    ("restaurant", "Luigi's, how can I help you?", "Can I [book] a [table] for [six] on [Saturday] at [seven thirty]?"),
    ("restaurant", "What name is the booking under?", "Under [Kowalski]."),
    ("restaurant", "Shall I book it for Wednesday?", "[No], [Thursday]."),
    ("restaurant", "Anything else with your order?", "Add [two] [garlic breads] and a [lemonade]."),
    ("restaurant", "Is that for delivery?", "[Yes]."),
    ("airline", "Northwind Airlines, how can I help you?", "I need to [change] my [flight] to [Lisbon]."),
    ("airline", "What's your booking reference?", "It's [K seven X nine two Q]."),
    ("airline", "Which flight is it?", "Flight [N W four one eight] to [Denver]."),
    ("airline", "How many bags are you checking?", "[Two] [checked bags] and one [carry-on]."),
    ("airline", "Is everything correct?", "[No], my [last name] is [Morgan], not [Martin]."),
    ("hotel", "Harbour View Hotel, how can I help?", "I'd like to [extend] my [stay] by [two] [nights]."),
    ("hotel", "What's the room number?", "Room [four twelve]."),
    ("hotel", "Anything else I can do?", "Could I get a [late checkout] on [Sunday]?"),
    ("hotel", "Do you want breakfast included?", "[Yes], [breakfast] for [two], please."),
    ("hotel", "Is the booking under Mr Patel?", "[No], it's under [Alvarez]."),
    ("it", "IT help desk, what's the problem?", "My [laptop] won't [connect] to the [VPN]."),
    ("it", "What's your username?", "My username is [J Parker]."),
    ("it", "Which printer is it?", "The [printer] on the [third floor] is [jammed]."),
    ("it", "Shall I reset it now?", "[Yes], [reset] it, please."),
    ("it", "Do you have a ticket number?", "[Ticket] [five zero eight one]."),
    ("bank", "City Bank, how can I help?", "I [lost] my [debit card] and need to [block] it."),
    ("bank", "How much would you like to transfer?", "[Two hundred and fifty] [pounds] to my [savings] account."),
    ("bank", "What are the last four digits of the card?", "[Nine zero seven five]."),
    ("bank", "Was that eight hundred?", "[No], [eight fifty]."),
    ("clinic", "Elm Street clinic, how can I help?", "I'd like to [book] an [appointment] with doctor [Ramirez]."),
    ("clinic", "What's your date of birth?", "[March] third, [nineteen eighty-four]."),
    ("clinic", "Which medication is it?", "A [refill] of my [inhaler], please."),
    ("clinic", "Can you come on Tuesday at ten?", "[Tuesday] is fine, but [eleven] is better."),
    ("clinic", "Is that all?", "[Cancel] my appointment on [Friday] too."),
)
JFK_KEYS = ("And so my fellow [Americans]", "[ask not]", "what your [country] can do for you",
            "ask what you can do for your [country].")

HELD_OUT_ESPEAK = ("en-gb", "en-us", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp",
                   "en-gb-x-gbcwmd", "en-029", "en-us-nyc")
# Piper at other lengths than the dev set's (1.0, 0.8 and 1.3 with no sampling noise), and with
# sampling noise on: the audio is made once and cached, so runs agree
HELD_OUT_PIPER = {"piper-0.8": dict(length_scale=0.8, noise_scale=0.667, noise_w_scale=0.8),
                  "piper-1.25": dict(length_scale=1.25, noise_scale=0.4, noise_w_scale=0.5)}
CONDITIONS: dict[str, dict] = {"clean": {}, "pace0.8": {"speed": 0.8}, "pace1.25": {"speed": 1.25},
                               "phone": {"phone": True}, "pink@10dB": {"noise_snr_db": 10.0}}


@dataclass
class HearingClip:
    set: str  # "dev" or "held-out"
    marked: str  # the words said, key words in brackets
    domain: str
    asked: str  # the agent's last turn
    voice: str
    condition: str
    audio: np.ndarray  # 16 kHz: LEAD_S, the speech, TAIL_S (the final pass's audio)

    @property
    def text(self) -> str:
        return plain(self.marked)


def dev_set() -> list[HearingClip]:
    """The end-of-turn set's whole synthetic sentences (its voices and noise), each in its domain."""
    wholes = {" ".join(p.strip() for p in marked.split("|")): i for i, (_, marked) in enumerate(PHRASES)}
    assert [plain(m) for _, m in DEV_KEYS] == list(wholes), "DEV_KEYS must follow PHRASES"
    out = []
    for clip in build():
        if not clip.finished or clip.source == "jfk":
            continue
        domain, marked = DEV_KEYS[wholes[clip.text]]
        speech_end = int((clip.speech_end_s + TAIL_S) * INPUT_RATE_HZ)
        out.append(HearingClip("dev", marked, domain, AGENTS[domain][2], clip.voice, clip.condition,
                               clip.audio[:speech_end]))
    return out


def _espeak(text: str, voice: str) -> np.ndarray:
    out = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
        rate = w.getframerate()
    return trim(resample(x, rate, INPUT_RATE_HZ).astype(np.float32))


def _piper(text: str, **voice: float) -> np.ndarray:
    tts = _TTS.get(tuple(sorted(voice.items())))
    if tts is None:
        tts = _TTS[tuple(sorted(voice.items()))] = caller_tts(**voice)
    return trim(resample(tts.synthesize(text), tts.sample_rate_hz, INPUT_RATE_HZ).astype(np.float32))


_TTS: dict = {}


def _speech(text: str, voice: str) -> np.ndarray:
    if voice == "caller":
        return _piper(text, **CALLER_VOICE)
    if voice in HELD_OUT_PIPER:
        return _piper(text, **HELD_OUT_PIPER[voice])
    return _espeak(text, voice)


def _cached(key: str, make) -> np.ndarray:
    path = SET_CACHE / f"{hashlib.sha256(repr((VERSION, key)).encode()).hexdigest()[:16]}.wav"
    if not path.is_file():
        SET_CACHE.mkdir(parents=True, exist_ok=True)
        write_wav(path, make(), INPUT_RATE_HZ)
    return read_wav(path).mono().astype(np.float32)


def held_out_recipes() -> list[tuple[int, str, str]]:
    """Every (sentence, voice, condition) of the held-out synthetic set, and the refund sentence
    in the caller's voice in every condition."""
    voices = [*HELD_OUT_ESPEAK, *HELD_OUT_PIPER]
    out = [(s, v, c) for s in range(len(HELD_OUT)) for v in voices for c in CONDITIONS]
    return out + [(0, "caller", c) for c in CONDITIONS]


def held_out_clip(s: int, voice: str, condition: str) -> HearingClip:
    domain, asked, marked = HELD_OUT[s]
    seed = 7000 + 97 * s + sum(map(ord, voice))  # the same noise for a clip on every run
    speech = _cached(f"{voice}|{plain(marked)}", lambda: _speech(plain(marked), voice))
    audio = _cached(f"{voice}|{plain(marked)}|{condition}|{seed}", lambda: as_heard(
        speech, seed=seed, lead_s=LEAD_S, tail_s=TAIL_S, **CONDITIONS[condition]))
    return HearingClip("held-out", marked, domain, asked, voice, condition, audio)


def jfk_set() -> list[HearingClip]:
    """jfk.wav cut at its phrases (each phrase alone, from the end of the one before), in every
    condition."""
    assert [plain(k) for k in JFK_KEYS] == list(JFK_WORDS), "JFK_KEYS must follow JFK_WORDS"
    x, ends = jfk(), jfk_phrases()[:len(JFK_KEYS)]
    starts = [0.0, *ends[:-1]]
    out = []
    for k, (a, b) in enumerate(zip(starts, ends, strict=True)):
        phrase = x[int(a * INPUT_RATE_HZ):int(b * INPUT_RATE_HZ)]
        for condition, params in CONDITIONS.items():
            audio = as_heard(phrase, seed=90 + k, tail_s=TAIL_S, **params)
            out.append(HearingClip("held-out", JFK_KEYS[k], "speeches", AGENTS["speeches"][2], "jfk",
                                   condition, audio))
    return out
