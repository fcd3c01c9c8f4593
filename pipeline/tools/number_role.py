"""A number's role in what was said: the nearest word around it that names an argument.

"4417" is the `order_id` in "order 4417" and the `card_last4` in "the card ending 4417": the words
around a number (`role_here`: five before, four after, not past a pause or another number) decide
whose it is, by the argument's own cues and its rivals' (`argrules.Rule`: read from the tool's
parameter names and descriptions, nothing of any domain). "<noun> number 204" is that noun's
(`_label`); a number no word names takes the role of the agent's question it answers
(`question_role`). A result's field named for another argument is no source for this one
(`names_other`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import zip_longest
from typing import Any

from .argrules import Rule
from .spoken import ValueKind
from .spoken.kinds import name_words, stem
from .spoken.names import STREETS, UNITS, edit_distance
from .spoken.numbers import numbers_said
from .spoken.words import is_number_word, sentences, words

__all__ = ["closing_one", "folded", "keyed_scalars", "names_other", "question_role", "read_for_another", "role_here",
           "the_one_unclaimed"]

_BEFORE, _AFTER = 5, 4  # words around a value that may say what it is
_LAST_FOUR = re.compile(r"\blast\s+(?:four|4)\b", re.I)  # "the last four": no number of its own
_LABELS = frozenset("number no nr id code reference ref".split())  # "<noun> number 204"
_LINKS = frozenset("is was are be it it's its s".split())  # "my order number is 204"
_DETERMINERS = frozenset("my the your our a an this that his her their its which what for to on "
                         "in at of with under by from".split())
_PERSONS = frozenset("us them you".split())  # "eight of us", "the two of them"
_VERBS = frozenset("get want need have like take pick choose see try make give put use do".split())  # no nouns
_PEOPLE = frozenset("people person folk".split())  # "about eighty people": the guests, the diners, the party
_HEADS = frozenset("people person player guest party attendee passenger diner adult group size seat".split())
_COUNTS = frozenset("quantity number count many".split())  # a count of things: "just the one"
_YOUNG = frozenset("child children kid".split())  # a head count of children ("five altogether")
_AGED = frozenset("he's she's i'm they're".split())  # "he's four." at a clause's end: an age
_AGED_SPLIT = frozenset({"he is", "she is", "i am", "they are"})
_AGE = frozenset("age aged old years".split())


def folded(text: str) -> str:
    """The text with "the last four" as one word: that four is no number of its own."""
    return _LAST_FOUR.sub("lastfour", text)


def question_role(asked: str, rule: Rule) -> bool | None:
    """Does the agent's last question name this argument (True), another (False), or none?"""
    questions = [q for q in sentences(folded(asked)) if q.rstrip().endswith("?")]
    if not questions:
        return None
    said = {stem(w.text) for w in words(questions[-1])}
    if said & rule.cues - rule.rivals:
        return True
    return False if said & rule.rivals else None


_POINTING = frozenset("the that this which each any every another other same".split())


def role_here(text: str, span: tuple[int, int], rule: Rule) -> bool | None:
    """True: the nearest word around text[span] that names an argument names this one; False:
    another's; None: none names it (nor a pause or another number is crossed to find one)."""
    ws = words(text)
    inside = [k for k, w in enumerate(ws) if w.start >= span[0] and w.end <= span[1]]
    if not inside:
        return None
    first, last = inside[0], inside[-1]
    before: list[str] = []
    k = first - 1
    while k >= 0 and first - k <= _BEFORE and not ws[k + 1].after_break and not _is_number(ws, k):
        before.append(stem(ws[k].text))
        k -= 1
    after: list[str] = []
    k = last + 1
    while k < len(ws) and k - last <= _AFTER and not ws[k].after_break and not _is_number(ws, k):
        after.append(stem(ws[k].text))
        k += 1
    if _house_number(ws, last):
        return rule.kind is ValueKind.ADDRESS  # "deliver to my office at 1 Raffles Place": no one kilo
    if first == last and ws[first].text == "one" and first >= 2 and ws[first - 2].text in _POINTING \
            and not ws[first - 1].after_break and ws[first - 1].text not in ("just", "only"):
        return False  # "the premium one", "the nine o'clock one": which, no count ("just the one" is)
    if first == last and ws[first].text == "one" and not after and [w.text for w in ws[max(0, first - 2):first]] in (
            ["just", "the"], ["only", "the"]):
        return bool(rule.cues & (_HEADS | _COUNTS))  # "thirty-four inch, just the one": how many
    if first and ((ws[first - 1].text in _AGED or " ".join(w.text for w in ws[max(0, first - 2):first]) in _AGED_SPLIT)
                  and after[:1] in ([], ["but"]) or ws[first - 1].text == "aged") \
            or after[:2] in (["year", "old"], ["month", "old"]):  # "He is sixty-eight but very fit"
        return bool(rule.cues & _AGE)  # "my little boy, he's four": his age, no count of people
    if after[:1] == ["of"] and after[1:2] and after[1] in _PERSONS:
        after[:2] = ["people"]  # "eight of us": a count of people, whatever the tool calls them
        if rule.cues & _HEADS or rule.things:
            return True  # "it's six of us now": the players, the guests, the party; a tool's one count ("drivers")
    if after[:1] == ["altogether"] or after[:2] in (["in", "total"], ["in", "all"], ["all", "told"], ["all", "together"]):
        if rule.cues & (_HEADS | _YOUNG) or rule.lone and not rule.money and not rule.cues & _AGE:
            return True  # "my two and my sister's three, so five altogether": the tool's count
    if (after[:1] == ["time"] or ws[last].text in ("twice", "thrice")) and any(b + "ing" in rule.cues or b + "ings" in rule.cues for b in before[:2]):
        return True  # "read it four times": four readings; "air it three times", of `airings`
    if (labelled := _label(before, rule)) is not None:
        return labelled
    # nearest first, a word before ahead of one as near after ("the order was forty dollars":
    # "dollars" is nearer than "order")
    near = [w for pair in zip_longest(before, after) for w in pair if w is not None]
    for word in near:
        if _names(word, rule.cues) and not _names(word, rule.rivals) or word in _PEOPLE and rule.cues & _HEADS:
            return True
        if _names(word, rule.rivals):
            return False
    return None


def _names(word: str, cues: frozenset[str]) -> bool:
    """Is the word one of these, or one Whisper writes for it ("cart" for "card"), or the same unit
    ("kilo" for "kg")?"""
    if word in cues or word in UNITS and UNITS[word] in {UNITS.get(c, c) for c in cues}:
        return True
    return len(word) >= 4 and any(len(c) >= 4 and c[0] == word[0] and edit_distance(word, c) == 1
                                  for c in cues)


def _label(before: list[str], rule: Rule) -> bool | None:
    """ "my room number is 204": a number labelled "<noun> number" is that noun's. True where the
    noun names this argument, False where it names any other thing, None where no noun labels it
    ("the number is 204")."""
    words_before = [w for w in before if w not in _LINKS]
    if len(words_before) < 2 or words_before[0] not in _LABELS:
        return None
    noun = words_before[1]
    if _names(noun, rule.cues) and not _names(noun, rule.rivals):
        return True
    return None if noun in _DETERMINERS or noun in _VERBS else False  # "can I get number fourteen": no noun


def _house_number(ws: list[Any], last: int) -> bool:
    """Is the number a house's: a name and a street's word after it, capitalised ("22 Constant
    Spring Road", "1 Raffles Place")?"""
    for k, w in enumerate(ws[last + 1:last + 4]):
        if w.after_break or not w.raw[:1].isupper():
            return False
        if k and w.text in STREETS:
            return True
    return False


def _is_number(ws: list[Any], k: int) -> bool:
    """Is ws[k] a number ("the one ending 5678": that "one" is no number)?"""
    text = ws[k].text
    if text == "one" and k > 0 and ws[k - 1].text in _DETERMINERS:
        return False
    return text[0].isdigit() or is_number_word(text)


def names_other(key: str, rule: Rule) -> bool:
    """Does a result's field name another argument and not this one (`card_last4` for an order)?"""
    named = {stem(w) for w in name_words(key)}
    return bool(named & rule.rivals) and not named & rule.cues


def keyed_scalars(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from keyed_scalars(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from keyed_scalars(item, key)
    elif value is not None and not isinstance(value, bool):
        yield key, value


def the_one_unclaimed(said: Iterable[str], text: str, span: tuple[int, int], rule: Rule) -> bool:
    """Is the number at text[span] (one of `said`, folded), which no word names, the only number
    the caller said that no word names for another argument ("an outfitting package for two,
    starting Monday, for three days": three are the days, so two is the people)? A count of one
    kind only, and required: not a price, nor a length, nor where the tool takes no other number
    (`Rule.lone` judges that)."""
    if rule.kind is not ValueKind.NUMBER or rule.money or rule.lone or not rule.required or role_here(text, span, rule) is not None:
        return False
    found = [(t, n) for t in map(folded, said) for n in numbers_said(t) if not n.clock and not n.joined]
    if any(t == text and (n.start, n.end) == span and n.after and _measured(n.after[0]) for t, n in found):
        return False  # "two hours" is a length, whatever the argument's words
    others = [(t, (n.start, n.end)) for t, n in found if not (t == text and (n.start, n.end) == span)]
    return bool(others) and all(role_here(t, s, rule) is False for t, s in others)


def _measured(word: str) -> bool:
    """Does this word, after a number, make it a length, a weight or a measure ("hours", "kilos")?"""
    return stem(word) in _LENGTHS or UNITS.get(stem(word), stem(word)) in UNITS.values()


_LENGTHS = frozenset(stem(w) for w in "day night week month year mile acre".split())  # besides the UNITS (hour, kilogram)


def read_for_another(asked: str, rule: Rule) -> bool:
    """Did the agent's read-back give its numbers to other arguments and none to this one ("300
    acres of wheat in Ellis County ... Shall I book it?" for a count of combines)? A correction of a
    number is then another's ("scratch that, it's three hundred sixty"), not this one's."""
    text = folded(asked)
    read = [role_here(text, (n.start, n.end), rule) for n in numbers_said(text) if not n.clock]
    return False in read and True not in read


def closing_one(text: str, start: int, end: int) -> bool:
    """Is the "one" at text[start:end] one that closes a clause after a verb or a word of manner,
    no count ("confirm cannot stop one", "Dinner time I always OT one, nobody at home": Singapore
    English), not "just one.", "make it one.", "I only want one."?"""
    if text[start:end].lower() != "one" or not re.match(r"\s*(?:[.,!?;:]|$)", text[end:]):
        return False
    before = [w.text.lower() for w in words(text[:start])][-1:]
    return bool(before) and before[0] not in _COUNTED_BY and not is_number_word(before[0]) and not before[0].isdigit()


_COUNTED_BY = frozenset("it just only make the a to for is be that want need take have get of than and or plus extra "
                        "another with add same no more at but about around maybe".split())
