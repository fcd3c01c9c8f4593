"""A desk's numbered list in its instructions ("Classes: sheep 12 Blackface ewe, 14 Cheviot tup;
cattle 22 Limousin heifer, 25 native breed cow"): the entry a caller names by its own words ("Ah've a
grand Cheviot tup ... Ah want him in the tup class"), its number, and the heading of the group it
stands in (`sheep`). A caller names the thing, not the number the schedule gives it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .argrules import Rule
from .evidence import Evidence
from .spoken import Source, ValueKind
from .spoken.codes import squash
from .spoken.kinds import name_words, stem
from .spoken.words import is_number_word, spoken_number

__all__ = ["Entry", "entries", "listed", "named_entry", "thing_listed"]

# one entry: an optional group heading before its number ("sheep 12 ..."), then a name of words
_ENTRY = re.compile(r"^\s*(?:(?P<head>[A-Za-z][\w'-]*)\s+)?(?:no\.?\s*|#)?(?P<number>\d{1,4})\.?\s+"
                    r"(?P<name>[A-Za-z][^,;:()\d$€£]*?)\s*(?:\([^)]*\)\s*)?$")  # no size: "4 cubic metres $280"
# or a named thing and its code in brackets after it: "the Winter Fine Art & Antiques sale (sale code WA26) on ..."
_CODED = re.compile(r"^\s*(?:the\s+)?(?P<name>[A-Za-z][^,;:()]*?)\s*\((?:[a-z ]*\s)?(?P<code>[A-Z]{1,4}-?\d{1,6})\)")
_SMALL = frozenset("a an the and or of for to in on at with by from per".split())


@dataclass(frozen=True)
class Entry:
    """One numbered entry: what the list is of (`label`, its words before the colon, "classes"),
    the group it stands in (`head`, "sheep"; empty where the list has none), its number and name."""

    label: frozenset[str]
    head: str
    number: int
    name: str
    code: str = ""  # of a named thing with a code ("WA26"); its number is then -1

    @property
    def words(self) -> frozenset[str]:
        """The name's words that say which thing: "Cheviot tup" is cheviot, tup."""
        return frozenset(stem(w) for w in re.findall(r"[a-z]+", self.name.lower())
                         if w not in _SMALL and not is_number_word(w))


@lru_cache(maxsize=64)
def entries(instructions: str) -> tuple[Entry, ...]:
    """The entries of every numbered list the instructions hold: a sentence "<label>: ..." whose
    comma-separated items, three or more of them, are each a number and the words of a thing, its
    groups split at semicolons, each group's first entry perhaps after a heading; or two or more
    groups each naming one thing with its code in brackets ("the Jewellery & Watches sale (JW26)").
    A record's lines
    ("on file: ... 3 bridesmaid bouquets, 6 buttonholes"), counts ("4 adults, 0 children") and a price
    list ("adult £15", "4 cubic metres $280") are none: a list's numbers rise within each group."""
    out: list[Entry] = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", instructions):
        label, colon, body = sentence.partition(":")
        if not colon or re.search(r"\d$", label):  # "8:00": a clock, no list
            continue
        found: list[Entry] = []
        of = _stems(re.findall(r"[a-z]+", label.lower())[-3:])  # what the list is of: "Classes", "Upcoming sales"
        for group in body.rstrip(".!? ").split(";"):
            head = ""
            if (coded := _CODED.match(group)) is not None:  # one named thing a group, its words no list's
                found.append(Entry(of, "", -1, coded["name"], coded["code"]))
                continue
            for k, item in enumerate(group.split(",")):
                if (m := _ENTRY.match(item)) is None or m["head"] and k:
                    continue
                head = (m["head"] or head).lower() if k == 0 else head
                found.append(Entry(of, head, int(m["number"]), m["name"]))
        rising = all(a.number < b.number for a, b in zip(found, found[1:], strict=False) if a.head == b.head and not a.code)
        if (len(found) >= 3 or len(found) >= 2 and all(e.code for e in found)) and rising and "file" not in found[0].label:
            out.extend(found)  # not "on file: 4 adults, 0 children", a record
    return tuple(out)


def _stems(ws: Iterable[str]) -> frozenset[str]:
    """Each word's stem, and of one ending "-es" the word without it too ("classes": class)."""
    return frozenset(f for w in ws for f in (stem(w), w.removesuffix("es")))


def named_entry(instructions: str, said: Iterable[str], cues: Iterable[str] = ()) -> Entry | None:
    """The one entry the caller's words name: of the entries whose name's words they said, the one
    with the most said, where no other has as many. `cues` (an argument's words), where given, must
    share a word with the list's label or the entry's heading ("class" of "Classes:"), so that a
    number of another list is no class number."""
    heard = {stem(w) for text in said for w in re.findall(r"[a-z]+", text.lower())}
    cues = set(_stems(cues))
    scored = sorted(((len(e.words & heard), e) for e in entries(instructions)
                     if e.words & heard and (not cues or cues & (e.label | _stems([e.head])))),
                    key=lambda pair: -pair[0])
    if not scored or len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return scored[0][1]


_AN_ID = frozenset("number no num id code ref".split())  # an argument that holds which one, not how many


def listed(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """The number a list in the instructions gives the entry the caller named, for an argument
    holding such a number ("class_number": "The class number from the schedule"); not an entry
    the instructions name again elsewhere (the caller's record: "on file: entry E-4415 in class 48,
    stottie cake"), which the caller may speak of as theirs."""
    picked = rule.kind is ValueKind.TEXT and str(value) in rule.choices  # "the winter sale" names the choice WA26
    if not (picked or rule.kind in (ValueKind.NUMBER, ValueKind.CODE) and Source.INSTRUCTIONS in rule.sources) \
            or not evidence.instructions or not _AN_ID & set(name_words(rule.name)):
        return False
    entry = named_entry(evidence.instructions, evidence.said, rule.cues - _AN_ID)
    if entry is None or evidence.instructions.lower().count(entry.name.lower()) > 1:
        return False  # "ah'm not to enter the stottie again": the one on file ("class 48, stottie cake"), no new pick
    return squash(str(value)) == squash(entry.code) if entry.code else spoken_number(str(value)) == entry.number


def thing_listed(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """A name that is a list's entry ("Ah want to enter me Border terrier in the best terrier. She's
    called Nell": no dog called "best terrier"), for an argument whose words name neither the list
    nor the entry's group; or one of the tool's other arguments' choices ("No, no, Sugar Apple ...
    frontline": a section, no masquerader's name)."""
    cues = _stems(rule.cues)
    return rule.kind is ValueKind.NAME and (str(value).strip().lower().replace("_", " ") in rule.others or any(
        e.name.lower() == str(value).strip().lower() and not cues & (e.label | _stems([e.head]))
        for e in entries(evidence.instructions)))
