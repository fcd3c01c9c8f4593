"""What the caller said and earlier tools returned, read as Whisper writes it: the evidence an
argument is grounded in (`grounding`), and the readers of its amounts, tokens and dates."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from .confirms import spoken_amounts, spoken_tokens
from .roles import SENTENCE, Mention, asked_roles, cue_text, find_mentions

_AMOUNT = re.compile(r"^\$?\s*(\d[\d,]*(?:\.\d+)?)$")
_ORDINALS = {"first": "one", "second": "two", "third": "three", "fourth": "four", "fifth": "five",
             "sixth": "six", "seventh": "seven", "eighth": "eight", "ninth": "nine", "tenth": "ten",
             "eleventh": "eleven", "twelfth": "twelve", "thirteenth": "thirteen",
             "fourteenth": "fourteen", "fifteenth": "fifteen", "sixteenth": "sixteen",
             "seventeenth": "seventeen", "eighteenth": "eighteen", "nineteenth": "nineteen",
             "twentieth": "twenty", "thirtieth": "thirty"}
_ORDINAL_WORD = re.compile(r"\b(" + "|".join(_ORDINALS) + r")\b")
_ORDINAL_DIGITS = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")
_A_SCALE = re.compile(r"\ba (hundred|thousand)\b", re.I)  # "a hundred dollars": one hundred
_OCLOCK = re.compile(r"\bo'?\s?clock\b", re.I)  # "seven o'clock": not "seven oh"


@dataclass
class Evidence:
    """What an argument may be grounded in: the caller's words and earlier tool results."""

    said: list[str] = field(default_factory=list)  # each turn's transcript or typed text
    results: list[Any] = field(default_factory=list)  # tool outputs (JSON values), prior intents
    asked: list[str] = field(default_factory=list)  # what the agent said before each turn ("" none)
    instructions: str = ""  # the session's: what the deployment told the agent (an account, a record)
    now: datetime | None = None  # when the caller said it: "tomorrow", "right now"

    def __post_init__(self) -> None:
        self.said = [_OCLOCK.sub(" oclock", _A_SCALE.sub(r"one \1", t)) for t in self.said]
        self._tokens: list[list[str]] | None = None
        self._amounts: set[Decimal] | None = None
        self._mentions: list[tuple[list[str], list[Mention]]] | None = None

    def mentions(self) -> list[tuple[list[str], list[Mention]]]:
        """Each sentence the caller said (as tokens) with the numbers in it and their roles."""
        if self._mentions is None:
            self._mentions = []
            for i, text in enumerate(self.said):
                asked = asked_roles(self.asked[i] if i < len(self.asked) else "")
                for sentence in SENTENCE.split(cue_text(text)):
                    tokens = spoken_tokens(sentence)
                    self._mentions.append((tokens, find_mentions(tokens, asked)))
        return self._mentions

    def tokens(self) -> list[list[str]]:
        """Token lists: one per turn, one per scalar of a result (a value never spans two)."""
        if self._tokens is None:
            self._tokens = [spoken_tokens(text) for text in self.said]
            self._tokens += [spoken_tokens(str(v)) for v in scalars(self.results)]
        return self._tokens

    def amounts(self) -> set[Decimal]:
        if self._amounts is None:
            found: set[Decimal] = set()
            for text in self.said:
                found |= spoken_amounts(text)
                found |= hundred_and(spoken_tokens(text))
            for value in scalars(self.results):
                if (amount := as_amount(value)) is not None:
                    found.add(amount)
                elif isinstance(value, str):
                    found |= spoken_amounts(value)
            self._amounts = found
        return self._amounts

    def date_words(self) -> list[list[str]]:
        """The caller's words with ordinals read as numbers ("fifth", "5th": 5)."""
        out = []
        for text in [*self.said, *map(str, scalars(self.results))]:
            folded = _ORDINAL_DIGITS.sub(r"\1", _ORDINAL_WORD.sub(lambda m: _ORDINALS[m.group(1)],
                                                                   text.lower()))
            out.append(spoken_tokens(folded))
        return out


def as_amount(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if isinstance(value, str) and (m := _AMOUNT.match(value.strip())):
        try:
            return Decimal(m.group(1).replace(",", ""))
        except InvalidOperation:
            return None
    return None


def hundred_and(tokens: list[str]) -> set[Decimal]:
    """ "one hundred and twenty": Whisper's words read as 100, and, 20; the amount is 120."""
    out = set()
    for a, mid, b in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if mid == "and" and a.isdigit() and b.isdigit() and int(a) % 100 == 0 and int(b) < 100:
            out.add(Decimal(int(a) + int(b)))
    return out


def scalars(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from scalars(item)
    elif value is not None and not isinstance(value, bool):
        yield value
