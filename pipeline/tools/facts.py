"""Facts nobody gave: a number, price, time or limit an agent's sentence states that appears in
neither the caller's words, a tool result, nor the instructions.

Asked about a bank card, Qwen2.5-0.5B said "The daily limit for cash withdrawals is 10,000
dollars."; a dispatcher said "A ride to the airport usually costs $50."; a clinic said it "opens
on Saturdays at 8:00 AM". None of it was given. With `call.unsourced_facts` on, such a sentence
is not said, and the caller hears that the agent does not have that information instead
(`call.owed`), as an invented id is handled.

A fact here is what a caller would act on: an amount of money (a number with a currency word or
sign), a time of day, a percentage, or any number from 10 up (a limit, a count of days, a
distance). Small counts ("one moment", "two options") are the agent's own speech. A fact is
given when any source says the same value, however written ("$10,000", "ten thousand dollars";
"8:00 AM", "eight in the morning"). It is off by default: bench/facts.py measures how often it
fires on replies that were right (bench/results/), and that is the cost it must not exceed.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any

from .argrules import MONEY_MARKS
from .evidence import Evidence
from .number_role import keyed_scalars
from .spoken.kinds import stem
from .spoken.numbers import numbers_said
from .spoken.times import moments
from .spoken.words import words

_PERCENT = frozenset({"%", "percent"})
_CLOCK_WORDS = frozenset({"am", "pm", "a.m", "p.m", "oclock", "o'clock", "noon", "midnight"})
_CLOCK_BEFORE = frozenset({"at", "by", "until", "till", "from", "before", "after"})
_LEAST = Decimal(10)  # below this, a number without a currency is a count the agent may say


def unsourced(sentence: str, evidence: Evidence, notes: tuple[str, ...] = ()) -> list[str]:
    """The facts (as written in the sentence) that no source gives; [] when every one is given.
    `notes`: what else the reply was told (a reminder's outcome, a system note)."""
    sources = [*evidence.said, evidence.instructions, *notes,
               *(str(v) for _, v in keyed_scalars(evidence.results))]
    numbers, times = _known(tuple(s for s in sources if s))
    out: list[str] = []
    for start, end, values, clock in _facts(sentence):
        if clock is not None:
            if not clock & times:  # "9:30" is given by "09:30" or "21:30"
                out.append(sentence[start:end])
        elif not values & numbers:
            out.append(sentence[start:end])
    return out


def _facts(sentence: str) -> list[tuple[int, int, frozenset[Decimal], frozenset[int] | None]]:
    """Each fact the sentence states: characters start, end; the values a number can mean; the
    minutes of the day a time may name (None for a number). A day ("June 14") is no fact here."""
    ws = words(sentence)
    out: list[tuple[int, int, frozenset[Decimal], frozenset[int] | None]] = []
    named: list[tuple[int, int]] = []  # days and times: their numbers are not counts
    for moment in moments(ws, None, written=True):
        start, end = ws[moment.start].start, ws[moment.end - 1].end
        timed = bool(moment.spans) and not moment.daypart and _a_time(ws, moment.start, moment.end)
        if moment.days or timed:
            named.append((start, end))
        if timed:
            out.append((start, end, frozenset(), frozenset(a for a, _ in moment.spans)))
    for n in numbers_said(sentence):
        if n.clock or any(a <= n.start < b for a, b in named):
            continue
        near = {stem(w) for w in (*n.before[:1], *n.after[:1])} | {sentence[max(0, n.start - 1):n.start]}
        money_or_share = bool(near & (MONEY_MARKS | _PERCENT))
        if money_or_share or any(v >= _LEAST for v in n.values):
            out.append((n.start, n.end, n.values, None))
    return out


def _a_time(ws: list[Any], start: int, end: int) -> bool:
    """Is this a time of day as stated, not a count that could be one ("one moment")? Written
    with a colon, with am/pm or o'clock, or after "at", "by", "until", "from"."""
    said = {w.text for w in ws[start:end]}
    return any(":" in t for t in said) or bool(said & _CLOCK_WORDS) or (
        start > 0 and ws[start - 1].text in _CLOCK_BEFORE)


@lru_cache(maxsize=32)  # a call's sources are the same for every sentence of a reply
def _known(sources: tuple[str, ...]) -> tuple[frozenset[Decimal], frozenset[int]]:
    """Every number value and minute of the day the sources say."""
    numbers: set[Decimal] = set()
    times: set[int] = set()
    for text in sources:
        ws = words(text)
        named = []  # a date's or a time's numbers are no amount ("15:00" gives no "15 dollars")
        for moment in moments(ws, None, written=True):
            times |= {a for a, b in moment.spans if a == b}
            if moment.days or (moment.spans and _a_time(ws, moment.start, moment.end)):
                named.append((ws[moment.start].start, ws[moment.end - 1].end))
        for n in numbers_said(text):
            if not n.clock and not any(a <= n.start < b for a, b in named):
                numbers |= n.values
    return frozenset(numbers), frozenset(times)


NO_INFORMATION = "I'm sorry, I don't have that information."
