"""A number the caller said, with the words that say what it is ("42 dollars", "a table for 4",
"at 6", "the reference ending 1234").

A value is said as a number when some number the caller said can mean it (`words.number_runs`:
"forty-two", "a hundred and twenty", "two fifty" as 250 or 2.50), and said in its role: the
nearest word around that number that names an argument decides. A word among this argument's
own cues ("party", "guest" for `party_size`) takes it; a word among another argument's cues only
(`rivals`) keeps it from this one; a number no such word marks has the role of the agent's question
it answers, if that names one, or may be any. A time of day ("6 pm",
"at 6") is not a count or a price unless the argument is itself a time. "Another week" or "an
extra night" says one of that unit; "one of them taster sessions" says no count.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from .clock import clock_at
from .kinds import stem
from .words import NumberRun, Word, is_number_word, number_runs, read_ordinal, spoken_number, words

_BEFORE = 5  # words before a number that may say what it is ("the one it ends in 1234")
_AFTER = 4
TIME_CUES = frozenset({"time", "hour", "clock", "when", "at"})


# words before a "one" that make it a thing, not a count ("a small one", "the other one"; "just the
# one" is a count)
_BEFORE_PRONOUN = frozenset("this that which each another every any other same usual new old small "
                            "big large little long short early late last next right wrong good nice cheap "
                            "bigger smaller cheaper earlier later".split())


@dataclass(frozen=True)
class NumberSaid:
    """One number in a text: characters start:end, what it can mean, the words around it
    (nearest first, not past a pause or another number), whether it was a time of day, and whether
    a hyphen joins it to the word after as a kind of thing ("a nine-kilogram refill": `joined`)."""

    start: int
    end: int
    values: frozenset[Decimal]
    before: tuple[str, ...]
    after: tuple[str, ...]
    clock: bool
    joined: bool = False


_DETERMINERS = frozenset("the my your his her our their this that".split())


def _named_one(ws: list[Word], i: int) -> bool:
    """ "the debit one," "my old one.": "one" at a phrase's end after a determiner and a word."""
    return i >= 2 and ws[i - 2].text in _DETERMINERS and not ws[i - 1].after_break \
        and not is_number_word(ws[i - 1].text) and (i + 1 == len(ws) or ws[i + 1].after_break)


_UNITS = frozenset("minute hour day night week fortnight month year session lesson visit".split())
_THOSE = frozenset("them those these the your our".split())
_NOT_A_NOUN = frozenset("is are was were will would can could who that which and or but has have had".split())


def _one_of_those(ws: list[Word], run: NumberRun) -> bool:
    """ "one of them taster sessions", "one of your bouncy castles": "one" picking one of a kind
    the next words name (not "one of us", nor "one of them" alone, which may count people)."""
    k = run.start
    return run.end == k + 1 and ws[k].text == "one" and k + 3 < len(ws) and ws[k + 1].text == "of" \
        and ws[k + 2].text in _THOSE and not any(w.after_break for w in ws[k + 1:k + 4]) \
        and not is_number_word(ws[k + 3].text) and ws[k + 3].text not in _NOT_A_NOUN


@lru_cache(maxsize=64)  # one text is asked about many values
def numbers_said(text: str) -> tuple[NumberSaid, ...]:
    ws = words(text)
    runs = number_runs(ws)
    in_run = {k for run in runs for k in range(run.start, run.end)}
    out: list[NumberSaid] = []
    for run in runs:
        if (ordinal := read_ordinal(ws, run.start)) is not None and ordinal[1] > run.end:
            continue  # "the twenty-seventh": a day of the month, not twenty
        if run.end - run.start == 1 and ws[run.start].text == "one" and run.start > 0 \
                and not ws[run.start].after_break and (ws[run.start - 1].text in _BEFORE_PRONOUN or _named_one(ws, run.start)):
            continue  # "a small one", "the late one", "the debit one,": which thing, not how many
        if _one_of_those(ws, run):
            continue  # "one of them taster sessions": which kind, not how many (nor "of them" people)
        before: list[str] = []
        k = run.start - 1
        while k >= 0 and len(before) < _BEFORE and not ws[k + 1].after_break and k not in in_run:
            before.append(stem(ws[k].text))
            k -= 1
        after: list[str] = []
        k = run.end
        while k < len(ws) and len(after) < _AFTER and not ws[k].after_break and k not in in_run:
            after.append(stem(ws[k].text))
            k += 1
        clock = ws[run.start].text != "half" and _clock_starts(ws, run.start)  # "half a dozen"
        joined = run.end < len(ws) and ws[run.end].hyphened and not is_number_word(ws[run.end].text)
        out.append(NumberSaid(ws[run.start].start, ws[run.end - 1].end, run.values,
                              tuple(before), tuple(after), clock, joined))
    for k, w in enumerate(ws):  # "another week", "an extra night": one of that unit
        unit = k + 1 + (w.text == "an" and k + 1 < len(ws) and ws[k + 1].text in ("extra", "additional"))
        if (w.text == "another" or unit == k + 2) and unit < len(ws) and stem(ws[unit].text) in _UNITS \
                and not any(x.after_break for x in ws[k + 1:unit + 1]):
            out.append(NumberSaid(w.start, w.end, frozenset({Decimal(1)}), (),
                                  tuple(stem(x.text) for x in ws[unit:unit + _AFTER]), False))
    return tuple(sorted(out, key=lambda n: n.start))


def number_said(value: str, text: str, *, cues: Collection[str] = (),
                rivals: Collection[str] = (), asked: str = "") -> tuple[int, int] | Literal[False] | None:
    """Where the text says this number in this role (characters start, end); None when it does
    not; False when the value is no number (judge it another way). `asked`: what the agent said
    before the text; a number no word of the text names has the role the question asked for
    ("What are the last four digits?" - "It's 4417")."""
    wanted = spoken_number(value)
    if wanted is None:
        return False
    own = {stem(c) for c in cues}
    other = {stem(c) for c in rivals} - own
    question = _role(NumberSaid(0, 0, frozenset(), tuple(stem(w.text) for w in words(asked)), (),
                                False), own, other)
    for said in numbers_said(text):
        if wanted not in said.values:
            continue
        if said.clock and not own & TIME_CUES:
            continue  # "at 6" is not six people
        role = _role(said, own, other)
        if role is True or (role is None and question is not False):
            return said.start, said.end
    return None


def _role(said: NumberSaid, own: set[str], other: set[str]) -> bool | None:
    """True: the nearest naming word is this argument's; False: another's; None: none names it."""
    for word in [*said.before, *said.after]:
        if word in own and word not in other:
            return True
        if word in other:
            return False
    return None


def _clock_starts(ws: list[Word], i: int) -> bool:
    """Is the number at ws[i] a time of day ("6 pm", "at 6", "six thirty tonight", the hour of "a
    quarter to six")?"""
    for start in range(i, i - 4, -1):
        found = clock_at(ws, start) if start >= 0 else None
        if found is not None and found.end > i and not (found.daypart or found.bare):
            return True
    return False


def plain(number: Decimal) -> int | float:
    """A number as the schema's JSON holds it: 7912, not Decimal("7912"); 2.5 as a float."""
    return int(number) if number == int(number) else float(number)
