"""Was this value said in this text? One question for every kind of value.

Each kind is judged the way a caller says it and Whisper writes it: times and dates by what they
mean (`times`), codes letter by letter (`codes`), numbers by value and role (`numbers`), names,
addresses and prose word by word, loosely (`names`). A value that is not what its kind expects
("ASAP" for a time, "Gold" for a code) is judged as words.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from .codes import code_said, codes_in, squash
from .kinds import ValueKind
from .names import name_said
from .numbers import number_said
from .times import SLACK_MIN, time_said

Span = tuple[int, int]
_TIMES = (ValueKind.TIME, ValueKind.DATE, ValueKind.DATETIME)


def find_said(value: str | int | float, text: str, *, kind: ValueKind,
              now: datetime | None = None, cues: Collection[str] = (),
              rivals: Collection[str] = (), asked: str = "", slack_min: int = SLACK_MIN
              ) -> Span | None:
    """Where (characters start, end) `text` says `value`, read as `kind`; None if it does not.

    `now`: when the text was said, for "tomorrow", "Thursday", "right now" (a value within
    `slack_min` minutes of `now` is "now"). For a number: `cues` and `rivals`, the words that
    name this argument and those that name the tool's others (`kinds.cue_words`); `asked`, what
    the agent said before the text (its question gives an unmarked number its role).
    A blank value is never said."""
    raw = str(value).strip()
    if not raw:
        return None
    if kind in _TIMES:
        found = time_said(raw, text, now, slack_min=slack_min)
        if isinstance(found, tuple) and _in_a_code(found, text):
            return None  # "P T two oh six nine eight" holds no time "two oh six"
        return name_said(raw, text) if found is False else found or None
    if kind is ValueKind.NUMBER:
        found = number_said(raw, text, cues=cues, rivals=rivals, asked=asked)
        return name_said(raw, text) if found is False else found or None
    if kind is ValueKind.CODE:
        found = code_said(raw, text)
        if found is None and not any(ch.isdigit() for ch in raw):
            found = name_said(raw.replace(".", " ").replace("@", " ").replace("_", " "), text)
        return found
    found = name_said(raw, text)
    if found is None and kind is ValueKind.NAME and len(squash(raw)) >= 3:
        found = code_said(raw, text)  # spelled: "S M I T H"
    return found


def _in_a_code(span: Span, text: str) -> bool:
    """The span lies in a code read out with letters ("P T two oh six nine eight")."""
    return any(a <= span[0] and span[1] <= b and len(code) >= 5 and any(ch.isalpha() for ch in code)
               and any(ch.isdigit() for ch in code) for a, b, code in codes_in(text))


def said_in(value: str | int | float, text: str, *, kind: ValueKind, now: datetime | None = None,
            cues: Collection[str] = (), rivals: Collection[str] = (), asked: str = "",
            slack_min: int = SLACK_MIN) -> bool:
    """Does `text` say `value`, read as `kind`? (`find_said` tells where.)"""
    return find_said(value, text, kind=kind, now=now, cues=cues, rivals=rivals, asked=asked,
                     slack_min=slack_min) is not None
