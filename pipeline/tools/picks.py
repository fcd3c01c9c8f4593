"""The schema's word choices (an enum of words) against the caller's words: the one they named
where the model wrote another, "both" where they named two, and a required pick of the model's
that is none of those they named (`provenance.trace` asks these)."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from .asks import corrects
from .catalogue import named_entry
from .evidence import Evidence
from .flags import same_word
from .schema import ToolSpec
from .spoken.kinds import name_words, stem
from .spoken.names import (
    choice_named,
    choice_tokens,
    choice_words_said,
    heard_words,
    number_with_unit,
)
from .spoken.times import corrected_between, moments
from .spoken.words import fold, is_number_word, words

__all__ = ["named_choice", "one_part_of_day", "passed_over", "unnamed_pick", "word_choices"]


def passed_over(spec: ToolSpec, name: str, value: Any, evidence: Evidence) -> bool:
    """The caller named choices of the schema's (two, as much: "singing", "piano"), none of them the
    model's ("drums"), and no word of the model's said: its pick is against their words, and which
    they meant is not said. Or their latest words naming one turn the model's down ("Change di
    colour pon mi grill order, mi nuh like di black again": no `black`)."""
    choices = word_choices(spec, name)
    if value not in choices:
        return False
    latest = next((text for text in reversed(evidence.said) if choice_words_said(choices, text)), "")
    if any(_DISLIKED.search(part) and value in choice_words_said(choices, part) for part in _CLAUSES.split(latest)):
        return True  # not "the van won't start": a fault told, no choice turned down
    if _open_either(choices, value, latest):
        return True  # "Which ones do you have, the ten times or the month? Ah, I'll decide later"
    said = [choice_words_said(choices, text) for text in evidence.said]
    touched = any(choice_words_said(choices, text, shared=True).get(value) for text in evidence.said)
    return any(said) and not any(value in named for named in said) and not touched  # "ballet": childrens_ballet may be


def word_choices(spec: ToolSpec, name: str) -> tuple[str, ...]:
    """The schema's choices for this argument, where they are words (not numbers)."""
    prop = spec.parameters.get("properties", {}).get(name)
    choices = tuple(prop.get("enum") or ()) if isinstance(prop, dict) else ()
    return choices if all(isinstance(c, str) for c in choices) else ()


def named_choice(spec: ToolSpec, name: str, value: Any, evidence: Evidence) -> str | list[str] | None:
    """The schema's choice the caller named (`names.choice_named`: "the gutters" is gutter_clear),
    in their latest turn that names one, where the model wrote another ("windows_exterior"); the
    choice for both or all where that turn names it, or two others. Of a list of choices, the ones
    that turn names (`_named_list`)."""
    if isinstance(value, list):
        return _named_list(spec, name, value, evidence)
    choices = word_choices(spec, name)
    if not choices or not isinstance(value, str):
        return None
    latest, last = next(((text, found) for text in reversed(evidence.said)
                         if (found := choice_words_said(choices, text))), ("", {}))
    every = [c for c in choices if {"both", "all"} & set(re.findall(r"[a-z]+", c.lower()))]
    if len(every) == 1 and (every[0] in last or len(last.keys() - set(every)) > 1):
        return every[0] if value != every[0] else None  # "on RIP.ie and in the Examiner": both, not one
    refused = _refused(choices, latest)
    if value in choices and value in last and value not in refused:
        # a word of the model's own, and of no other choice, was said last: its pick stands, unless
        # that word is the read-back's the caller puts right with another ("Whole milk, shall I add
        # them?" "Ooh, no, sorry, semi-skimmed. The whole's only for me dad.")
        return _chosen_instead(choices, value, last, evidence)
    if len(kept := [c for c in last if c not in refused]) == 1 and refused:
        return kept[0] if kept[0] != value else None  # "Monday mornin' don't work ... Tuesday evenin'?"
    for text in reversed(evidence.said):
        if (named := choice_named(choices, text)) is not None:
            return named if named != value else None
    return None


def _named_list(spec: ToolSpec, name: str, value: list[Any], evidence: Evidence) -> list[str] | None:
    """The choices of a list argument ("tests": an array of "cbc", "lipid_profile", ...) that the
    caller's latest turn naming any of them names ("Thyroid profile and HbA1c"), where the model
    listed others (fresh52: "cbc", "lipid_profile", "hba1c", two tests nobody asked for); None
    where no turn names one, or the turn names the model's."""
    prop = spec.parameters.get("properties", {}).get(name)
    items = prop.get("items") if isinstance(prop, dict) else None
    choices = tuple(items.get("enum") or ()) if isinstance(items, dict) else ()
    if not choices or not all(isinstance(c, str) for c in choices):
        return None
    last = next((found for text in reversed(evidence.said) if (found := choice_words_said(choices, text))), {})
    named = [c for c in choices if c in last]
    return named if named and set(named) != set(value) else None


# a clause that turns a choice down: "Monday mornin' don't work no more", "not the morning",
# "evenings are no good for me"
_TURNED_DOWN = re.compile(r"\b(not|don'?t|doesn'?t|won'?t|can'?t|cannot|isn'?t|ain'?t|never|no good|no use|no longer|nuh|"
                          r"nah (?:work|like|want|good))\b", re.I)  # "mi nuh like di black again"
_DISLIKED = re.compile(r"\b(?:don'?t|doesn'?t|nuh|not|no longer|never) (?:like|want|fancy|suit|work|good)\b"
                       r"|\b(?:tired|sick|fed up) (?:of|with)\b", re.I)  # "I tired of Flying Fish"
_INDIFFERENT = re.compile(r"\b(?:either|whichever|any of|don'?t mind|doesn'?t matter)\b", re.I)


def _open_either(choices: tuple[str, ...], value: str, latest: str) -> bool:
    """The caller's latest words naming choices ask between two ("the ten times or the month?") in
    their last sentence that names any, the model's among them, and do not say either will do
    ("whichever", "I don't mind")."""
    sentences = [(sentence, found) for sentence in re.split(r"(?<=[.!?])\s+", latest)
                 if (found := choice_words_said(choices, sentence))]
    return bool(sentences) and not _INDIFFERENT.search(latest) and value in sentences[-1][1] \
        and len(sentences[-1][1]) >= 2 and re.search(r"\bor\b", sentences[-1][0]) is not None


_CLAUSES = re.compile(r"[,.;:!?]|\bbut\b", re.I)


def _refused(choices: tuple[str, ...], text: str) -> set[str]:
    """The choices these words name only in a clause that turns them down, and those taken back in
    the same breath for another ("I need the Bahama shutters, no, wait, the storm panels")."""
    clauses = _CLAUSES.split(text.replace("’", "'"))
    down = {c for part in clauses if _TURNED_DOWN.search(part) for c in choice_words_said(choices, part)}
    named = [set(choice_words_said(choices, part)) for part in clauses]
    over = {c for k, chosen in enumerate(named) if chosen and (j := next((j for j in range(k + 1, len(named)) if named[j]), 0))
            and named[j] - chosen and corrected_between(ws := words(" ".join(clauses[k + 1:j])), 0, len(ws)) for c in chosen}
    return down - {c for part in clauses if not _TURNED_DOWN.search(part) for c in choice_words_said(choices, part)} | over


def _chosen_instead(choices: tuple[str, ...], value: str, last: dict[str, int], evidence: Evidence) -> str | None:
    """The one other choice a correction of the agent's read-back names, where the model kept the
    choice read back."""
    if not evidence.said or not evidence.asked or not corrects(evidence.said[-1]) or \
            last != choice_words_said(choices, evidence.said[-1]):
        return None
    read = choice_words_said(choices, evidence.asked[-1] or "")
    others = [c for c in last if c != value and c not in read]
    return others[0] if value in read and len(others) == 1 else None


_NO_KIND = frozenset("and or the of an with to in on for at by not no non un".split())  # "battery_not_charging"


def unnamed_pick(spec: ToolSpec, name: str, value: Any, evidence: Evidence, given: Collection[str] = ()) -> bool:
    """A required choice of words the model picked with no word of it in what the caller said, or
    in the agent's question they answered: fresh16's "Something's not right with the system. Can
    you log it as a fault?" logged `battery_not_charging`, a kind nobody named; the caller is
    asked which. In the stored runs such picks were the right one on 17 of 1337 right-tool calls
    (most of them "delivered" for `delivery`, which the shared prefix now reads), and on 65 calls
    on lines that asked for nothing or left a value out. A word the instructions join to one the
    caller said names it too (`_joined`). A word other choices have too names none of them
    ("one of your bouncy castles": no `standard_castle` of four castles), nor one the tool's own
    description has ("Book a bike in for a service": "my bike" is no `e_bike_diagnostic`). The heading
    of a numbered list's group whose entry the caller names is named (`catalogue`). Nor is
    one another, optional argument is named for, whose value was `given` ("Can Meera come to my
    flat? Address is Flat 302, ...": `home` beside a `home_address` said; "three cases to the
    Paarl house": `delivery` beside a `delivery_address` on file)."""
    choices = word_choices(spec, name)
    if value not in choices or len(choices) < 2 or spec.grounded is not None or any(
            w in name_words(other) for other in given if other not in spec.parameters.get("required", ())
            for w in choice_tokens(str(value)) if len(w) > 2):
        return False
    lettered = {w for w in choice_tokens(str(value)) if not w.isdigit()} - {
        w for c in choices if c != value for w in choice_tokens(c) if not w.isdigit()}
    if not lettered and (by_number := [number_with_unit(str(value), t) for t in evidence.exchanged]) and None not in by_number:
        return not any(by_number)  # told apart by its number: "9kg" is "a nine-kilogram", not "nine"; no "four things"
    own = _kind_words(str(value))
    own = own - set().union(*(_kind_words(c) for c in choices if c != value)) or own  # "castle": no standard_castle
    own = own - _kind_words(spec.description) or own  # "my bike" names no e_bike_diagnostic where every job is a bike's
    heard = {stem(w) for text in evidence.exchanged for w in re.findall(r"[a-z0-9']+", fold(text.lower()))}
    if not all(w.isdigit() for w in _kind_words(str(value))):  # "sixteen": 16_seater; "ten packs" names no size "10"
        heard |= set().union(*(heard_words(text) for text in evidence.exchanged))
    heard |= {stem(w.replace("-", "")) for text in evidence.exchanged  # "e-bike": ebike_service
              for w in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+", fold(text.lower()))}
    heard |= {verb + particle for text in evidence.exchanged for verb, particle in _PHRASAL.findall(fold(text.lower()))}
    heard |= _joined(evidence.instructions, heard - {stem(w) for w in name_words(spec.name) + name_words(name)})
    if entry := named_entry(evidence.instructions, evidence.said):
        heard.add(stem(entry.head))  # "the tup class": the sheep of the schedule's "sheep 12 ..., 14 Cheviot tup"
    return not any(same_word(w, h) or len(w) >= 3 and h.startswith(w) for w in own for h in heard)  # "cattery": cat


# a verb and its particle, a word or two apart, said for the choice that joins them: "I'll swing by
# and pick 'em up" is `pickup`, "drop it off" `dropoff`, "check us in" `checkin`
_PHRASAL = re.compile(r"\b(pick|drop|check|take|set|carry|walk|ring|call|top|sign|log|hand|send)(?:\s+'?[a-z]+){0,2}?"
                      r"\s+(up|off|in|out|back|away|over|on)\b")


def _kind_words(text: str) -> set[str]:
    """The words of a choice (or a description) that could say which kind: "battery_not_charging":
    battery, charging."""
    return {w for w in choice_tokens(text) if len(w) > 1 and w not in _NO_KIND}


_COMMON = frozenset("from with that this have will your they them when what into about there their been were "
                    "would could should just like some more only also than then each over after before "
                    "here where which while very much many".split())


def _content(word: str) -> bool:
    return len(word) >= 4 and word not in _COMMON and not is_number_word(word)  # "three weeks" joins no "week" to a "three"


def _joined(instructions: str, heard: set[str]) -> set[str]:
    """The instructions' words set next to a word the caller said, as one name: "electric" of
    their "electric hook-up" where the caller said "the hook-up's tripped" (words of four letters
    or more; not the tool's own words: "session" of "book_session" joins no "one-to-one")."""
    out: set[str] = set()
    for m in re.finditer(r"\b(?=([a-z]+)(?:[ -]| \()([a-z]+))", instructions.lower()):  # every pair, overlapping,
        # and a word with another in brackets after it: "perimeter (boundary) survey"
        first, second = stem(m.group(1)), stem(m.group(2))
        if _content(second) and second in heard and _content(first):
            out.add(first)
        if _content(first) and first in heard and _content(second):
            out.add(second)
    return out


def one_part_of_day(value: Any, times: tuple[str, ...], evidence: Evidence) -> bool:
    """A slot of the schema's times ("09:00", "11:00", "14:00", "16:00") the caller named only by a
    part of the day that holds two or more of them ("Morning time is better": 9:00 or 11:00), no
    clock time of theirs being it: which one is theirs to say."""
    at = [int(m[1]) * 60 + int(m[2]) if (m := re.fullmatch(r"(\d{1,2}):(\d{2})", str(t))) else -1 for t in (value, *times)]
    if -1 in at or evidence.now is None:
        return False
    said = [m for text in evidence.said for m in moments(words(text), evidence.now)]
    within = [(lo, hi) for m in said if m.daypart for lo, hi in m.spans if lo <= at[0] <= hi]
    return bool(within) and not any(lo <= at[0] <= hi for m in said if not m.daypart for lo, hi in m.spans) \
        and sum(lo <= t <= hi for t in at[1:] for lo, hi in within[-1:]) >= 2
