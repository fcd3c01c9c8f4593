"""How many people a caller's words count, where they name them instead of a number.

"Could I book me and my cousin on the bridge bungy?" asks for two jumpers; "myself and the wife
and our two young lads" for two adults and two children, four in all; "Just me, on my own" for
one, and "just him alone" one, the caller not among them. The caller said the count as surely as
"two of us", so a count argument holding it is given (`provenance`): the whole party for a count of people ("jumpers", "guests", "passengers"), the
grown-ups for "adults", the young for "children". A list the words do not close ("me and me
mates": how many?) counts nothing, and nor does one that is no list of people ("behind me and my
keys are inside").
"""

from __future__ import annotations

import re

from .argrules import Rule
from .spoken import ValueKind
from .spoken.kinds import name_words, stem
from .spoken.words import TEENS, UNITS, Word, words

__all__ = ["counted", "party"]

_SELF = frozenset("me myself meself mysel".split())
_ALONE = re.compile(r"\b(?:just|only)\s+(?:me|myself|meself)\b(?!\s+and\b)|\bon\s+my\s+own\b|\bby\s+myself\b", re.I)
_ANOTHER_ALONE = re.compile(r"\b(?:just|only)\s+(?:him|her)\b(?!\s+and\b)|\b(?:him|her)\s+alone\b"
                            r"|\bon\s+(?:his|her)\s+own\b|\bby\s+(?:himself|herself)\b", re.I)
_DETERMINERS = frozenset("my me our the ma mi mah a an his her their yer of mine ours".split())
_DESCRIBING = frozenset("young wee little small baby best old older elder eldest younger youngest teenage "
                        "grown adult two-year-old".split())
_YOUNG = frozenset("kid child children son daughter boy girl wean bairn one grandson granddaughter grandkid "
                   "grandchild youngster toddler baby nipper young'un young'uns youngun younguns grandbaby "
                   "grandbabies kiddie kiddies kiddo kiddos".split())
_GROWN = frozenset("wife husband partner missus hubby fella boyfriend girlfriend mate friend buddy pal cousin "
                   "brother sister mum mam mom mother dad da father colleague fiance fiancee neighbour neighbor "
                   "gran nan granny grandad grandpa grandma uncle aunt auntie bloke wifey".split())
_NOT_A_LIST = frozenset("i i'll i'm i've i'd we we'll we're you he he's she she's they they're it it's "
                        "that's there's".split())
# a count of people by the argument's own words; "adults" and "children" count their part only
_PARTY = frozenset("people person guest passenger party pax player rider jumper thrower traveller traveler group "
                   "bowler diver swimmer climber walker attendee place seat ticket head".split())
_ADULTS = frozenset({"adult", "grown"})
_CHILDREN = frozenset({"child", "children", "kid", "junior", "young"})


def party(text: str) -> tuple[int, int | None, int | None] | None:
    """The people these words count, the caller among them: (all, adults, children), a part None
    where a word does not say which ("me and Amy"); None where they count no one surely."""
    if _ALONE.search(text.replace("\u2019", "'")):
        return 1, 1, 0
    if _ANOTHER_ALONE.search(text.replace("\u2019", "'")):
        return 1, None, None  # "he wants to join a tour also ... just him alone": one, grown or not
    ws = words(text)
    for i, w in enumerate(ws[:-2]):
        if w.text in _SELF and ws[i + 1].text == "and" and not ws[i + 1].after_break \
                and (found := _listed(ws, i + 2)) is not None:
            grown, young, unknown = found
            return 1 + grown + young + unknown, None if unknown else 1 + grown, None if unknown else young
    return None


def _listed(ws: list[Word], i: int) -> tuple[int, int, int] | None:
    """The people ws[i:] name, joined by "and", as (grown, young, unknown) counts."""
    counts = [0, 0, 0]
    while i < len(ws):
        if (found := _one_item(ws, i)) is None:
            return None
        kind, n, i = found
        counts[kind] += n
        if i >= len(ws) or ws[i].text != "and" or i + 1 >= len(ws) or ws[i + 1].text in _NOT_A_LIST:
            break  # "me and my cousin on the bridge", "me and my wife and I'll ...": the list is said
        if _one_item(ws, i + 1) is None:
            break  # "meself and the missus and the car": the people are listed
        i += 1
    return counts[0], counts[1], counts[2]


def _one_item(ws: list[Word], i: int) -> tuple[int, int, int] | None:
    """One person or a counted group at ws[i] ("my cousin", "our two young lads", "three of me
    mates", "Amy"): (0 grown, 1 young, 2 unknown; how many; the index after it), or None where it
    is no person ("my keys") or a group not counted ("me mates")."""
    if i >= len(ws) or ws[i].text in _NOT_A_LIST:
        return None
    if ws[i].raw[:1].isupper() and ws[i].text not in _DETERMINERS:
        end = i + 1 + (i + 1 < len(ws) and ws[i + 1].raw[:1].isupper() and not ws[i + 1].after_break)
        return 2, 1, end  # "me and Amy", "me and Paul Hesketh"
    if ws[i].text in ("him", "her"):
        return 2, 1, i + 1
    count, young = None, False
    numbers = UNITS | TEENS
    while i < len(ws) and (ws[i].text in _DETERMINERS or ws[i].text in _DESCRIBING or ws[i].text in numbers
                           or ws[i].text.isdigit() and len(ws[i].text) <= 2):
        t = ws[i].text
        young = young or t in ("young", "wee", "little")
        if t in numbers or t.isdigit():
            count = numbers[t] if t in numbers else int(t)
        i += 1
    if i >= len(ws):
        return None
    noun = ws[i].text
    end = i + 1 + 2 * (noun in ("brother", "sister", "mother", "father") and [w.text for w in ws[i + 1:i + 3]] == ["in", "law"])
    kinds = {noun, stem(noun)}
    kind = 1 if kinds & _YOUNG or noun in ("children", "ones") or young and "lad" in kinds \
        else 0 if kinds & _GROWN else 2 if "lad" in kinds else None
    if kind is None:
        return None  # "my keys", "the car": no person
    single = (stem(noun) == noun or noun in _GROWN) and noun not in ("children", "ones")
    if count is None:
        return (kind, 1, end) if single else None  # "me mates": how many?
    return kind, count, end


def counted(value: object, rule: Rule, text: str) -> bool:
    """Is this count the people the caller's words count, in the argument's part of them?"""
    if rule.kind is not ValueKind.NUMBER or isinstance(value, bool) or not isinstance(value, int | float) \
            or value <= 0 and not rule.required or (found := party(text)) is None:
        return False  # no children on "me and my partner": the tool's own default, not a count said
    for own in ({stem(w) for w in name_words(rule.name)}, rule.cues):  # its name first: "people, children too"
        part = 1 if own & _ADULTS else 2 if own & _CHILDREN else 0 if own & _PARTY else None
        if part is not None:
            return found[part] is not None and value == found[part]
    return False
