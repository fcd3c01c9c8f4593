"""Values the model wrote wrong in a way the caller's words, or the record, set right: the value
the call runs on instead, where that is given (`provenance.trace` asks, after `moments.restated`
and `record.the_one_meant`):

- a name or an address (keeping a number) with the caller's spelling inside, without the letters
  ("Roisin R O I S I N Gallagher", "23 Cregagh Road, C-R-E-G-A-G-H"); initials are part of a name;
- a code the model wrote as a number, its leading zero lost ("oh seven seven ..." written
  7712345678 is "07712345678"), or in the caller's words ("S W zero zero six ..." is "SW006...");
- a name written as the record's number ("P-20417" for the patient) is the one name of the
  record's entry holding that number (`record.name_beside`), unless the caller said the number;
- a name or an address holding more than itself, cut to it: what the caller took back ("Mill
  Road, not Mill Lane"), a moment after a name ("Spin on Monday morning"); of names listed in one
  value (the record's three pets), the ones the caller said ("book Bramble in");
- a piece of the record's address ("Hartley HT4 7QD" of "41 Larch Avenue, Hartley HT4 7QD"): all of it;
- a name nobody said ("John Doe", the desk's own name) for the person served (`patient_name`,
  `customer_name`, `name`), where the caller asks for themselves ("reserve me one") and names nobody
  else: the caller's name the record gives (`record.the_callers_name`); for "my grandson ... Alfie
  Barnes", whose name the record's caller's is not (`for_another`), the one full name said;
- a number the caller's correction says again ("Sorry, three hundred and fifty", after "three
  hundred"): the earlier one is taken back, and the call runs on the new one (`retold`);
- a name for the person served that the caller gave someone else, where they gave their own ("...
  she's called Pepper. I'm Dawn Fenwick"): theirs (`not_introduced`, `callers.introduced`);
- a number said over in the same breath ("About eighteen weans, no, put twenty"): the one said
  instead (`retold`); a code written as only its letters ("HD" for "account H D, four two double
  eight", `letters_of_a_code`) is not given, and `provenance` finds the code said;
- a length said in another unit than the schema's (`in_its_unit`: "two hours" for minutes is 120),
  asked by `provenance.trace` before all else, as the model's 2 is "said" but not the caller's.

`more_than_itself` and `a_piece` also tell `provenance.given` that such a value, as written, was
not given: its words are all in the transcript, but it is not what anyone said it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from .argrules import Rule
from .asks import corrects
from .callers import introduced, own_for_another
from .evidence import Evidence
from .number_role import closing_one, folded, question_role, read_for_another, role_here
from .on_file import made_new_for_another, said_as_new, shaped_alike, spans_of_numbers
from .record import FULL_NAME, items_of, name_beside, named_as, the_callers_name
from .spoken import Source, ValueKind, said_in
from .spoken.codes import code_said, codes_in, spelled, squash
from .spoken.kinds import name_words, stem
from .spoken.names import name_said
from .spoken.numbers import numbers_said, plain
from .spoken.times import moments
from .spoken.words import spoken_number, words

__all__ = ["a_piece", "amended", "code_taken_back", "corrected_here", "corrected_to", "for_another", "more_than_itself", "retold",
           "scattered", "serves"]

_SPELLED = re.compile(r"(?:(?<=[\s,])|^)(?:[A-Za-z](?:[\s,]+|-))(?:[A-Za-z](?:[\s,]+|-)){1,}[A-Za-z](?=[\s,.]|$)")  # "R O I S I N", "R-A-J-E-S-H", not "J. R. R."
_NOT = re.compile(r",?\s+(?:and\s+)?not\s+.*$|,\s*\d+$", re.I)  # "Mill Road, not Mill Lane"; "Tomás Griffin, 2019"
_LEADING_INTO = frozenset("on at for in by from this next".split())


def amended(value: Any, rule: Rule, evidence: Evidence, given: Callable[[str], bool]) -> str | None:
    """The value the call runs on instead of this one (see the module), where `given` says it was
    given; None where there is none."""
    if not isinstance(value, str):
        value = str(value) if isinstance(value, int) and rule.kind is ValueKind.CODE else None
        if value is None:
            return None
    if rule.kind is ValueKind.CODE and Source.CALLER in rule.sources and value.isdigit():
        for zeros in ("0", "00"):  # a number's leading zeros, lost
            if any(code_said(zeros + value, text) for text in evidence.said):
                return zeros + value
    if rule.kind is ValueKind.CODE and (code := spelled(value)) is not None and code != value and given(code):
        return code
    if rule.kind is ValueKind.NAME and Source.INSTRUCTIONS in rule.sources \
            and not any(code_said(value, text) for text in evidence.said):  # said, it is a tag ("LT 3381")
        if (name := name_beside(value.strip(), evidence.instructions)) is not None and given(name):
            return name
    for other in (_unspelled(value, rule.kind), _trimmed(value, rule.kind, evidence.now), _the_caller(rule, evidence),
                  _the_ones_said(value, rule.kind, evidence.said),
                  Source.INSTRUCTIONS in rule.sources and _whole_address(value, evidence.instructions, rule.kind)):
        if other and given(other):
            return other
    return None


# the person a tool serves, by its argument's name ("patient_name", "customer_name", "name")
_SERVED = frozenset("customer patient caller client member guest passenger pupil student learner holder tenant owner "
                    "policyholder account contact booking lead your full adult parent person attendee participant visitor "
                    "booker purchaser buyer organiser organizer payer exhibitor entrant competitor applicant subscriber resident".split())
# the people a caller books for, in any domain ("my granddaughter needs her eyes testing")
_RELATIONS = frozenset("son daughter wife husband partner mum mom mother dad father grandson granddaughter "
                       "grandma grandmother granny nan nana grandad grandpa grandfather brother sister kid kids "
                       "child children boy girl baby friend neighbour neighbor colleague boss aunt uncle nephew "
                       "niece cousin fiance fiancee fiancée girlfriend boyfriend mate lodger tenant".split())
_FIRST_PERSON = frozenset("i i'm i'd i'll i've me my myself we we're we'd we've us our".split())
_MINE = frozenset("my our".split())


def serves(rule: Rule) -> bool:
    """Does this argument name the person the tool serves ("patient_name", "name"), not a member of
    staff, a sender or a recipient?"""
    ws = name_words(rule.name)
    return bool(ws) and ws[-1] == "name" and (len(ws) == 1 or bool(set(ws[:-1]) & _SERVED))


def for_another(said: str) -> bool:
    """Does the caller speak of someone of theirs, and not of themselves ("Can I book my
    granddaughter in?"; not "book me and my husband in")?"""
    ws = [w.text for w in words(said)]
    return any(a in _MINE and b in _RELATIONS for a, b in zip(ws, ws[1:], strict=False)) and not {"me", "myself"} & set(ws)


def not_introduced(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """Is this, for the person served, a name the caller gave someone else, where they gave their own and speak for
    nobody else ("... she's called Pepper. I'm Dawn Fenwick": not the mare; their own name is, `_the_caller`)? Or their
    own, where they book another they name ("Joy Dela Cruz. Can I book my mother? Lourdes Abellana, A-B-E-...")?"""
    own, said = _introduced_for(rule, evidence), evidence.said[-1] if evidence.said else ""
    return bool(own) and all(name_said(str(value), name) is None and name_said(name, str(value)) is None for name in own) or (
        rule.kind is ValueKind.NAME and serves(rule) and not set(name_words(rule.name)) & _BOOKER and for_another(said) and own_for_another(str(value), said))


def _introduced_for(rule: Rule, evidence: Evidence) -> set[str]:
    """The full names the caller gave as their own, where this argument names the person served
    and they speak for nobody else; not where the argument is what the tool acts on
    (`register_guest`'s guest)."""
    if rule.kind is not ValueKind.NAME or not serves(rule) or set(name_words(rule.name)) & rule.tool \
            or not evidence.said or for_another(evidence.said[-1]) and not set(name_words(rule.name)) & _BOOKER:
        return set()  # the parent, the buyer, the lead: the caller, whoever they book for ("my daughter Ruby")
    return {name for name in introduced(evidence.said, surely=True) if len(name.split()) >= 2}


_BOOKER = frozenset("parent booker purchaser buyer organiser organizer lead payer".split())  # who books and pays


def _the_caller(rule: Rule, evidence: Evidence) -> str | None:
    """The name the caller gave as their own, or else their name on file, for the person served
    where the model wrote one nobody gave and the caller asks for themselves, naming nobody (see
    the module)."""
    if rule.kind is not ValueKind.NAME or not evidence.said or not serves(rule):
        return None
    last = evidence.said[-1]
    if len(own := _introduced_for(rule, evidence)) == 1:
        return next(iter(own))  # "I'm Dawn Fenwick": theirs, whatever the record holds
    if Source.INSTRUCTIONS not in rule.sources:
        return None
    name = the_callers_name(evidence.instructions)
    if for_another(last):  # "My grandson ... Alfie Barnes, B-A-R-N-E-S": the one name they said
        named = {m.group(0) for m in FULL_NAME.finditer(last) if name is None or name_said(m.group(0), name) is None}
        return next(iter(named)) if len(named) == 1 else None
    if name is None or not {w.text for w in words(last)} & _FIRST_PERSON:
        return None
    if any(m.group(0) != name and not name_said(m.group(0), name) for text in evidence.said
           for m in FULL_NAME.finditer(text)):
        return None  # a name of someone said: theirs to give, not the record's
    return name


def retold(value: Any, rule: Rule, evidence: Evidence) -> int | float | None:
    """The one number the caller's correction says in this argument's place ("Sorry, three hundred
    and fifty. I said the wrong number." after "three hundred"), where it is not this value: the
    earlier turn's is taken back. Only where the last words correct, say one number (not a time),
    named for no other argument, nor answer a question for another; else None."""
    if spoken_number(str(value)) is None:
        return None
    if rule.kind is ValueKind.NUMBER and Source.CALLER in rule.sources and evidence.said:
        for first, then in _put_right(folded(evidence.said[-1])):  # "about eighteen, no, put twenty"
            if spoken_number(str(value)) == first:
                return plain(then)
    said = corrected_to(rule, evidence)
    return None if said is None or spoken_number(str(value)) == said else plain(said)


# between a number and the one said over it in the same breath: a word or two ("eighteen weans"),
# then "no", "sorry", "actually", "wait", and "put", "make it", "say" ("About eighteen weans, no,
# put twenty"; "four, sorry, five of us"), but not "not" ("six months, no twelve": not twelve)
_FIX = r"(?:no|sorry|actually|wait|or rather)\b"
_SAY = r"(?:put|make it|make that|say|call it|let's say)\s+"
_OVER = re.compile(rf"^\s*(?:[a-z']+\s*){{0,2}}[,.;!?]?\s*(?:{_FIX}[,.!]?\s*)*{_FIX}(?:[,.!]\s*(?:{_SAY})?|\s+{_SAY})$", re.I)


def _put_right(text: str) -> list[tuple[Decimal, Decimal]]:
    """The numbers (not times) the caller said over in the same breath, each with the one said instead."""
    found = [n for n in numbers_said(text) if not n.clock and len(n.values) == 1]
    return [(next(iter(a.values)), next(iter(b.values))) for a, b in zip(found, found[1:], strict=False)
            if _OVER.match(text[a.end:b.start])]


def corrected_to(rule: Rule, evidence: Evidence) -> Decimal | None:
    """The one number the caller's correcting last words say in this argument's place ("Ah, make
    it two, mate." after "I'll add 3 extra days"), whether or not the model wrote it; None where they
    do not correct, say no one number (not a time, nor another's said again), or name it for another."""
    if rule.kind is not ValueKind.NUMBER or Source.CALLER not in rule.sources or len(evidence.said) < 2 \
            or not corrects(evidence.said[-1]) or question_role(evidence.last_asked, rule) is False or read_for_another(evidence.last_asked, rule):
        return None  # "It's 5521" answers "What's the order number?": another argument's number
    text = folded(evidence.said[-1])
    said = [n for n in numbers_said(text) if not n.clock and len(n.values) == 1 and not closing_one(text, n.start, n.end)]  # "nineteen Fulford Road. One nine."
    found = [n for n in said if not n.values <= {v for o in said if role_here(text, (o.start, o.end), rule) is False
                                                  for v in o.values}]
    found = found if len(found) < 2 and not made_new_for_another(text, said, rule) else [n for n in found if said_as_new(text, n.start, n.end, rule.cues)]
    return next(iter(found[0].values)) if len(found) == 1 else None


_PER_MINUTES = {"minute": 1, "min": 1, "hour": 60, "hr": 60}  # a length of time, in minutes
_HOUR_PHRASES = ((re.compile(r"\b(?:an?|one) hour and a half\b", re.I), 90), (re.compile(r"\bhalf an hour\b", re.I), 30),
                 (re.compile(r"(?<!half )\b(?:an|one|for the|just the) hour\b(?! and a half)", re.I), 60))  # not "half an hour"


def in_its_unit(value: Any, rule: Rule, evidence: Evidence) -> int | float | None:
    """A length the caller's last words say in another unit than the schema asks, in the schema's:
    "two hours" for `duration_minutes` is 120 and "an hour and a half" 90, where a small model
    writes 2 or 1.5 (and "an hour", written 60, is given). None where the schema names no unit of
    time, or the caller said no length or several."""
    unit = next((_PER_MINUTES[c] for c in rule.cues if c in _PER_MINUTES), None)
    if rule.kind is not ValueKind.NUMBER or unit is None or not evidence.said or isinstance(value, bool):
        return None
    text = evidence.said[-1]
    said = [float(minutes) for phrase, minutes in _HOUR_PHRASES if phrase.search(text)]
    said += [float(next(iter(n.values))) * _PER_MINUTES[n.after[0]] for n in numbers_said(text)
             if n.after and n.after[0] in _PER_MINUTES and len(n.values) == 1 and not n.clock]
    if len(set(said)) != 1:
        return None
    return plain(Decimal(str(said[0] / unit)))


def more_than_itself(value: Any, kind: ValueKind | None, evidence: Evidence) -> bool:
    """A name or an address with the caller's spelling in it, or holding more than itself, or
    names listed where the caller named only some of them."""
    return isinstance(value, str) and (_unspelled(value, kind) is not None or _trimmed(value, kind, evidence.now) is not None
                                       or _the_ones_said(value, kind, evidence.said) is not None)


_ALL_OF = frozenset("both all them everyone everybody each".split())  # "both dogs": all of the record's


def _the_ones_said(value: str, kind: ValueKind | None, said: Sequence[str]) -> str | None:
    """Of names listed in one value ("Bramble, Pickle, Miso", the record's three pets), those the
    caller said, where they said some and not all ("book Bramble in"): the others are the
    record's, not the caller's request. None where they said all, none, or spoke of all."""
    items = items_of(value) if kind is ValueKind.NAME else []
    if len(items) < 2 or any(w.text in _ALL_OF for text in said for w in words(text)):
        return None
    heard = [item for item in items if any(name_said(item, text) for text in said)]
    return ", ".join(heard) if 0 < len(heard) < len(items) else None


_SET_DASH = re.compile(r"\s+[\u2014\u2013]\s.*$", re.S)


def before_dash(value: Any, rule: Rule | None = None) -> Any:
    """A code the model copied with what follows it on file ("CO-3302 \u2014 30", of "CO-3302 \u2014
    30 sausage rolls"), or with the word that names it ("Eircode H54 P8D5", "Ref: TS-7100"): the
    code alone. A dash set between words ends a code (`codes_in`)."""
    if not isinstance(value, str):
        return value
    value = _SET_DASH.sub("", value)
    if rule is not None and (named := re.match(r"\s*([A-Za-z]+)\s*[:#]?\s+(?=\S*\d)", value)) \
            and not named.group(1).isupper() and stem(named.group(1).lower()) in rule.cues:  # not "SK 283"
        return value[named.end():]
    return value


def said_short(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """A name or a place the instructions hold in full, said by the caller by a part of it that the
    instructions use for nothing else: "up to Manchester" for the stops' "Manchester Shudehill"
    (fresh9's coach line withheld the search as an unsaid destination). Not a part they use
    elsewhere too ("Leeds" where the list has "Leeds City" and "Leeds Bradford")."""
    if rule.kind not in (ValueKind.NAME, ValueKind.ADDRESS) or not isinstance(value, str) or not evidence.instructions:
        return False
    full, record = value.lower().strip(), evidence.instructions.lower()
    parts = re.findall(r"[a-z0-9']+", full)
    if len(parts) < 2 or full not in record or rule.kind is ValueKind.NAME and not named_as(
            value, evidence.instructions, rule.cues):
        return False  # a person in another role: "with Fiona" is the hygienist, Fiona Beattie, no patient
    wholes = record.count(full)
    for text in evidence.said:
        heard = set(re.findall(r"[a-z0-9']+", text.lower()))
        piece = [w for w in parts if w in heard and len(w) > 2 and not w.isdigit()]
        if piece and len(piece) < len(parts) and all(
                len(re.findall(rf"\b{re.escape(w)}\b", record)) == wholes * parts.count(w)
                or rule.kind is ValueKind.NAME and not _in_other_names(w, value, evidence.instructions) for w in piece):
            return True
    return False


def _in_other_names(part: str, name: str, instructions: str) -> bool:
    """Does the instructions' text use this part of a name in another name ("Leeds City" beside
    "Leeds Bradford")? Said alone elsewhere ("Ravi Mistry ...; Ravi also does repairs"), it is the
    same person."""
    for m in re.finditer(rf"\b{re.escape(part)}\b", instructions, re.I):
        before = re.search(r"([A-Za-z][\w']*) +$", instructions[max(0, m.start() - 40):m.start()])
        after = re.match(r" +([A-Za-z][\w']*)", instructions[m.end():m.end() + 40])
        around = [found.group(1) for found in (before, after) if found]  # joined by a space, no stop
        if not instructions.lower().startswith(name.lower(), m.start()) and not instructions.lower()[
                :m.end()].endswith(name.lower()) and any(w[:1].isupper() for w in around):
            return True
    return False


def a_piece(value: Any, record: str, kind: ValueKind | None) -> bool:
    """An address cut out of the record's one ("Larch Avenue" or "Hartley HT4 7QD" of "41 Larch
    Avenue, Hartley HT4 7QD"): after its house number, or a part without a number after a comma."""
    text = str(value).strip()
    if kind is not ValueKind.ADDRESS or not text:
        return False
    found = [record[:m.start()].rstrip() for m in re.finditer(re.escape(text), record, re.I)]
    return bool(found) and all(before[-1:].isdigit() or before.endswith(",") and not text[:1].isdigit()
                               for before in found)


# where one entry of a record ends: a ";", a line's end, or a sentence's ("Kent St. New Farm" goes on)
_ENTRY_END = re.compile(r"[;\n]|(?<!\bSt)(?<!\bRd)(?<!\bDr)(?<!\bAve)(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bNo)(?<!\bCo)(?<!\bMt)(?<!\bFt)(?<!\bLn)\.\s")  # "Co. Westmeath" ends none


def scattered(value: Any, record: str, kind: ValueKind | None) -> bool:
    """An address put together from parts of several entries of the record ("Paddington, New Farm,
    Queensland, Australia" of the caller's Paddington, their partner's New Farm and the desk's own
    state): no one entry holds every part."""
    parts = [p for p in str(value).split(",") if p.strip()]
    if kind is not ValueKind.ADDRESS or len(parts) < 2:
        return False
    return not any(all(name_said(p, entry) is not None for p in parts) for entry in _ENTRY_END.split(record))


def letters_of_a_code(value: Any, evidence: Evidence) -> bool:
    """Is this code only the letters a code the caller said begins with ("HD" of "account H D, four
    two double eight"), or the spelling of a word they said ("F-A-H-Y" after "Martin Fahy")? Its
    digits were not copied, or it is a name: not the code, as written."""
    code = squash(str(value)).upper()
    if code.isalpha() and spelling_only(str(value)) and any(code == w.text.upper() for text in evidence.said for w in words(text)):
        return True
    return code.isalpha() and any(len(said := squash(found)) > len(code) and said.upper().startswith(code)
                                  and any(ch.isdigit() for ch in said) for text in evidence.said[-1:]
                                  for _, _, found in codes_in(text))


def spelling_only(value: str) -> bool:
    """Is this value a name's spelling and nothing else ("R-A-O", "P A R K"), not a name?"""
    return bool(_SPELLED.fullmatch(value.strip(" .")))


def _unspelled(value: str, kind: ValueKind | None) -> str | None:
    if kind not in (ValueKind.NAME, ValueKind.ADDRESS) or not _SPELLED.search(value):
        return None
    rest = " ".join(re.sub(r"[\s,]*\0[\s,]*", " ", _SPELLED.sub("\0", value)).split()).strip(" ,")
    return rest if rest and (kind is ValueKind.NAME or numbers_said(rest)) else None  # not "I am builder"


def _trimmed(value: str, kind: ValueKind | None, now: datetime | None) -> str | None:
    if kind not in (ValueKind.NAME, ValueKind.ADDRESS):
        return None
    cut = _NOT.sub("", value)
    if kind is ValueKind.NAME and (found := moments(ws := words(cut), now)):
        head = ws[:min(m.start for m in found)]
        while head and head[-1].text in _LEADING_INTO:
            head.pop()
        cut = cut[:head[-1].end] if head else ""
    cut = cut.strip(" ,")
    return cut if cut and cut != value.strip() else None


def _whole_address(value: str, record: str, kind: ValueKind | None) -> str | None:
    if not a_piece(value, record, kind):
        return None
    at = re.search(re.escape(value.strip()), record, re.I)
    assert at is not None
    number = re.search(r"(?:^|[\s:;,(])(\d+[A-Za-z]?)(?:\s+[^,;:.\d]+(?:,\s*[^,;:.\d]+)?)?,?\s*$", record[:at.start()])
    return record[number.start(1):at.end()].strip() if number else None


def corrected_here(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """Is this number the one the caller's correction says (`corrected_to`), for the argument the
    agent's read-back named by its own words ("3 extra days" read back, "make it two" said)?"""
    if (said := corrected_to(rule, evidence)) is None or spoken_number(str(value)) != said:
        return False
    read_back, named = folded(evidence.last_asked), replace(rule, cues=frozenset(map(stem, name_words(rule.name))))
    return any(role_here(read_back, span, named) for span in spans_of_numbers(read_back))


def code_taken_back(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """A code with letters (or of five digits or more) said before, where the caller's correcting
    last words say another of its shape and not it ("Oh, hold on, I've read that wrong. It's ...
    SN-60474" after SN-60447; "the last bit's one three, not three one. Seven oh eight, two one
    three." after 708231)."""
    mine = squash(str(value))
    if rule.kind is not ValueKind.CODE or len(evidence.said) < 2 or not corrects(evidence.said[-1]) \
            or not any(ch.isalpha() for ch in mine) and sum(ch.isdigit() for ch in mine) < 5:
        return False  # digits alone, only a code's: "Seven oh eight, two one three" after 708231
    last = folded(evidence.said[-1])
    return code_said(str(value), last) is None and any(
        squash(code) != mine and (shaped_alike(squash(code), mine) or squash(code).isdigit() and mine.isdigit()
                                  and len(squash(code)) == len(mine)) for _, _, code in codes_in(last))


def read_back_code(value: Any, rule: Rule, evidence: Evidence, others: Sequence[Any] = ()) -> str | None:
    """The one code of this one's letters and shape the agent read back ("I'll move booking
    CP-20431 to ...?"), where the model wrote another on file (CP-20488, the caller's mother's) and
    the caller's answer corrects another argument's day or time ("Ah no, Thursday the eleventh I
    meant.", `others`: the call's other values) and says no code, no number of three digits, no word
    naming this argument. The code read back stands."""
    mine = squash(str(value))
    if rule.kind is not ValueKind.CODE or not evidence.said or not evidence.last_asked \
            or not corrects(evidence.said[-1]) or mine not in squash(evidence.instructions) \
            or sum(ch.isdigit() for ch in mine) < 3 or not any(
                said_in(v, evidence.said[-1], kind=kind, now=evidence.now) for v in others if isinstance(v, str)
                for kind in (ValueKind.DATE, ValueKind.TIME)):
        return None
    letters = "".join(ch for ch in mine if ch.isalpha())
    asked = evidence.last_asked
    read = {asked[a:b] for a, b, code in codes_in(asked, pauses=False)
            if squash(code) != mine and shaped_alike(squash(code), mine)
            and "".join(ch for ch in squash(code) if ch.isalpha()) == letters}
    last = folded(evidence.said[-1])
    if not letters or len(read) != 1 or {stem(w.text) for w in words(last)} & rule.cues or any(
            sum(ch.isdigit() for ch in code) >= 3 for _, _, code in codes_in(last)):
        return None
    return next(iter(read))
