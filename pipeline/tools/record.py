"""Which of a record's values the caller means: the instructions may hold several for one argument.

A deployment puts the caller's account in the instructions ("Cards on file: Visa debit ending
5521 and Mastercard credit ending 0387."). A value there fills an argument (`provenance`) only
where it is the one the caller means: the only value of that role in the record, or the one whose
own words the caller said ("my debit card": 5521; "put it on my Mastercard": 0387). "Please freeze
my card" names neither, so neither is given, and the agent asks which. Where the model wrote a
value nobody gave ("5200" from "fifty two dollars on my credit card"), the one the caller's words
point at, or the record's only one, is the value (`the_one_meant`), as a moment is said again as
the caller said it. Where it wrote an entry's number for a name ("P-20417" as the patient's name),
the one name of that entry is (`name_beside`). Of a list of alike values ("Bikes on file: a Trek
road bike and a Brompton folding bike"), a name or a phrase is given only where the caller's words
pick it out by a word of its own (`one_of_several`: "book a service" names neither bike).

A value's own words are those of its entry: the record's clause around it (split at ";", at line
ends and sentence ends), cut at the values of the same role before and after it. The words between
two values are the later one's ("Visa debit ending 5521 and Mastercard credit ending 0387"), up to
a comma after the earlier ("5120 (kettle), 4417 (skillet)"). Less the words every such entry
shares ("ending", "card": they tell none apart) and the words that name this argument or another
("order", "dollars": what an entry holds, not which one it is).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import datetime

from .kin import ASSOCIATE, KINSHIP
from .kin import record_word as _word
from .spoken.codes import codes_in, squash
from .spoken.days import CALENDAR, days_at, month_of
from .spoken.kinds import stem
from .spoken.words import read_ordinal, words

ENTRY = re.compile(r"[;\n]|\.(?=\s)")  # an entry ends at ";", a line's end or a sentence's
_QUIET = frozenset("a an the and or of on with to for in at by is was my your their his her its "
                   "this that paid file i me we us you it hi hello please need want like would could "
                   "can will just be do does did have has had am are were so not no yes okay ok "
                   "thanks thank out up off back down over round around about one".split())
# words of asking, and particles, which point at no entry ("Cakes need 48 hours"; "send somebody
# out" is not the flat "she lets out")


_DIGIT = re.compile(r"\d")
_HOURS_AND_PRICES = re.compile(r"\b\d{1,2}:\d{2}\b|[£$€]\s?\d[\d,.]*")


def code_shape(code: str) -> str:
    """A code's letters and marks, each digit a 9: "J-7731" and "J-7745" are one list's, J-9999."""
    return _DIGIT.sub("9", code.upper())


def code_form(code: str) -> str:
    """A code's form: each letter an A, each digit a 9, its marks kept ("FRE-A1-TUE" and
    "MAN-A1-TUE" are both AAA-A9-AAA)."""
    return re.sub(r"[^\W\d_]", "A", _DIGIT.sub("9", code))


def in_form(code: str, form: str) -> str | None:
    """A code written in the form its schema's example shows ("BF20260147" for "e.g. BF-2026-0152":
    BF-2026-0147), where its letters and digits are the form's and only its marks differ."""
    bare, marks = re.sub(r"[\W_]", "", code), re.sub(r"[\W_]", "", form)
    if code_form(bare) != marks or code_form(code) == form:
        return None
    chars = iter(bare)
    return "".join(next(chars) if ch in "A9" else ch for ch in form)


def example_form(description: str) -> str | None:
    """The form of the code a schema's description gives as its example ("The course code, e.g.
    FRE-A1-TUE"), if it gives one with a digit in it; none for two of two forms ("B-3820 or D-417")."""
    found = _EXAMPLE_CODE.search(description)
    other = found and re.match(r"\s*(?:or|and|,|/)\s*([A-Za-z0-9-]*\d[A-Za-z0-9-]*)", description[found.end():])
    return None if not found or other and code_form(other.group(1)) != code_form(found.group(1)) else code_form(found.group(1))


def singled_out(value_spans: Sequence[tuple[int, int]], role_spans: Sequence[tuple[int, int]],
                record: str, said: Sequence[str], own_words: Collection[str], now: datetime | None = None) -> bool:
    """Is the value at `value_spans` in `record` the one the caller means, among all the values of
    its role there (`role_spans`, its own among them)? See the module."""
    values = {_digits(record[a:b]) for a, b in role_spans}
    if len(values) <= 1:  # the role's one value, or none said: not where the value is another role's ("account OM-2290")
        return not role_spans or any(r[0] < b and a < r[1] for a, b in value_spans for r in role_spans)
    labels = {s: _label(record, s, role_spans) for s in role_spans}
    shared = set.intersection(*labels.values()) if labels else set()
    own = {stem(w) for w in own_words}
    mine = [r for r in role_spans if any(r[0] < b and a < r[1] for a, b in value_spans)]
    if not mine:
        return False
    value = _digits(record[mine[0][0]:mine[0][1]])
    named = values & {_digits(code) for text in said for _, _, code in codes_in(text) if any(ch.isalpha() for ch in code)}
    if named:  # the caller said one of them, letters and all ("add the wife to B12"): that one
        return named == {value}
    heard = {_word(w.text) for text in said for w in words(text)}
    # an entry the caller's own words point at ("the coffee charge": "Blue Bottle Coffee 12.40 on
    # the Visa") names the value ("StreamPlus 10.99 on 0387"), or lends its words ("Visa")
    # Of several entries it points at ("Biscuit's in on Saturday, and I'd like to bring Pepper for
    # a bath and brush"), the one it names most, a name counting twice
    cue, days, near, own_name = heard - own - _QUIET, _days_said(said), _days_from_now(said, now), _own_name(record)
    pointed: list[tuple[int, str, int]] = []
    desk = m.start() if (m := _CALLER_ENTRY.search(record)) else 0
    for entry in ENTRY.split(record):
        said_of, on_day = {_word(w.text) for w in words(entry)}, 2 * bool(days & _days_in(entry)) or bool(near & _days_in(entry))  # "Friday": half "the 12th"
        if not cue & said_of and not on_day:
            continue
        present = values & ({_digits(w.text) for w in words(entry) if any(ch.isdigit() for ch in w.text)}
                            | {_digits(code) for _, _, code in codes_in(entry, pauses=False)})  # "SV-448120-7"
        if len(present) == 1:  # the day it is on names it as a name does ("the sweep on the twelfth")
            pointed.append((_weighed(entry, cue, own_name) + on_day, next(iter(present)), on_day))
        if not present and _DIGIT.search(_HOURS_AND_PRICES.sub(" ", entry)) and record.find(entry) >= desk:
            heard |= said_of  # a record's line, not the desk's prose (before "The caller is ..."; its hours and
            # prices are no record's: "a morning slot (9:00 to 12:00)", "Sessions last 60 minutes (RM 90)")
    if not pointed and (callers := _the_callers(record, role_spans, said if _of_mine(said, own) else ())) and (
            _of_mine(said, own) or shared and not heard & KINSHIP):  # of alike values ("account ..."), none said
        return callers == mine  # "Can I freeze my membership?", "Nothing came this morning": the caller's own, not their daughter's
    if pointed:
        if value in {v for score, v, _ in pointed if score == max(p[0] for p in pointed)}:
            return True
        if len({v for _, v, _ in pointed}) > 1 or len({code_shape(record[a:b]) for a, b in role_spans}) == 1 \
                or any(day for _, _, day in pointed):  # "the party on the fourteenth": P-118, no cage rental
            return False  # it points at several, another one most; or at another of a list of records, or day
    # of one list's values, not one whose own words the caller names less than another's ("the
    # Mandarin beginners": MAN-A1-TUE, "Mandarin beginners", not SPA-A1-MON, "Spanish beginners")
    form = code_form(record[mine[0][0]:mine[0][1]])  # among the list's values of one form (not a price)
    hits = {r: len((labels[r] - shared) & cue) for r in role_spans if code_form(record[r[0]:r[1]]) == form}
    if max(hits.get(r, 0) for r in mine) < max(hits.values()):
        return False
    return any((labels[r] - shared - own - _QUIET) & heard for r in mine)


def _the_callers(record: str, role_spans: Sequence[tuple[int, int]], mine: Sequence[str] = ()) -> list[tuple[int, int]]:
    """The role's values in the record's entry about the caller ("The caller is Fiona Gallagher,
    member number SA-30582"), where exactly one is; else, given the words that asked for their own
    ("my membership"), in the sentence about whom they said they are ("It's Mélanie Lafleur. Can
    you move my delivery?": "Their daughter, Mélanie Lafleur, ...; on file: order F-9034"), or,
    naming nobody, the caller's ("The caller is ..., PP-5108; on file: membership M-2093, ...")."""
    entries = [(m.start(), m.end()) for m in re.finditer(r"[^.;\n]+", record) if _CALLER_ENTRY.search(m.group())]
    if len(found := [r for r in role_spans if any(a <= r[0] and r[1] <= b for a, b in entries)]) == 1 or not mine:
        return found if len(found) == 1 else []
    named = {w.text for text in mine for w in words(" ".join(re.findall(r"(?<=[^.!?\s] )(?!I\b|I')[A-Z][\w'-]+", text)))
             if w.text not in CALENDAR | _QUIET}  # a name, not a sentence's first word, a day or "I've"
    sentences = [(m.start(), m.end(), len(named & {w.text for w in words(m.group())}), bool(_CALLER_ENTRY.search(m.group())))
                 for m in re.finditer(r"(?:[^.\n]|\.(?!\s))+", record)]
    best = max((hits for _, _, hits, _ in sentences), default=0)
    entries = [(a, b) for a, b, hits, caller in sentences if (hits == best if best else caller)]
    return found if len(found := [r for r in role_spans if any(a <= r[0] and r[1] <= b for a, b in entries)]) == 1 else []


def _own_name(record: str) -> set[str]:
    """The words of the caller's own name on file: saying it ("It's Lorraine.") introduces them,
    and points at none of their entries over their father's ("... me dad's milk")."""
    return {_word(w.text) for w in words(the_callers_name(record) or "")}


def _of_mine(said: Sequence[str], own: Collection[str]) -> bool:
    """Does the caller speak of the thing as their own ("my membership", "my booking")?"""
    return any(a.text == "my" and stem(b.text) in own for text in said
               for a, b in zip(words(text), words(text)[1:], strict=False))


def _days_said(said: Sequence[str]) -> set[int]:
    """The days of a month the caller names by their ordinal ("the twelfth", "12th")."""
    out = set()
    for text in said:
        ws = words(text)
        out |= {found[0] for i in range(len(ws)) if (found := read_ordinal(ws, i)) is not None and 1 <= found[0] <= 31}
    return out


def _days_from_now(said: Sequence[str], now: datetime | None) -> set[int]:
    """The days of a month the caller names, said at `now`, as one day ("tomorrow", "on Thursday")."""
    return {day for ws in map(words, said) for i in range(len(ws)) if now and (n := days_at(ws, i, now.date())) and len(n.days) == 1 for _, _, day in n.days}


def _days_in(entry: str) -> set[int]:
    """The days of a month an entry is on, written by their month ("Friday June 12, 2026", "12 June")."""
    ws = words(entry)
    return {int(w.text) for i, w in enumerate(ws) if w.text.isdigit() and int(w.text) <= 31
            and any(0 <= j < len(ws) and month_of(ws[j].text, written=True) for j in (i - 1, i + 1))}


def _weighed(entry: str, cue: set[str], own_name: Collection[str] = ()) -> int:
    """How much of an entry the caller's words name: each word once, a name (capitalised, not a
    day, a month or an acronym) or a word for kin twice; the caller's own name once, as saying it
    introduces them ("It's Lorraine. Can you up me dad's milk": her father's)."""
    named = {_word(w.text): w.raw for w in words(entry) if _word(w.text) in cue}
    return sum(2 if (text[:1].isupper() and not text.isupper() and word not in CALENDAR and word not in own_name)
               or word in KINSHIP else 1 for word, text in named.items())  # "MOT" is no name; "mother" says who


_ONE_OF = re.compile(r"\bone of (?:the|my|our|your|them|those|these|his|her|their)\b", re.I)


def the_one_meant(role_spans: Sequence[tuple[int, int]], record: str, said: Sequence[str],
                  own_words: Collection[str], now: datetime | None = None) -> str | None:
    """Of the values of one role in `record`, the one the caller means: the only one there (the
    account on file, where the model wrote "BW-1234567"), or of two or more, the one the caller's
    words point at ("the Shell charge on my credit card": 0387), where exactly one is (see the
    module); else None."""
    if len(values := {_digits(record[a:b]): record[a:b] for a, b in role_spans}) == 1:
        return next(iter(values.values()))  # what `singled_out` gives where the model copied it
    if any(_ONE_OF.search(text) for text in said):
        return None  # "Can you cancel one of the bookings on our accounts?": which one is not said
    meant = {_digits(record[a:b]): record[a:b] for a, b in role_spans
             if singled_out([(a, b)], role_spans, record, said, own_words, now)}
    return next(iter(meant.values())) if len(meant) == 1 else None


_EXAMPLE_OF = r"\b(?:looks? like|such as|e\.g\.?|for example|for instance|like|format)[:,]?\s+"
_EXAMPLE = re.compile(_EXAMPLE_OF + r"[A-Za-z0-9-]*\d[A-Za-z0-9-]*", re.I)  # "Booking references look like WCF-4D88J"
# a schema's example code, a second group of capitals kept ("e.g. LK19 XRT")
_EXAMPLE_CODE = re.compile(_EXAMPLE_OF + r"([A-Za-z0-9-]*\d[A-Za-z0-9-]*(?: [A-Z0-9]{2,4}\b)?)")
_CALLER = frozenset("caller file".split())  # "The caller is ...", "Caller on file: ..."


def as_record(instructions: str) -> str:
    """The instructions as a record to take values from: "Cards on file: Visa ending 4242" read
    across the colon, and a code the desk gives as an example of its form ("Booking references
    look like WCF-4D88J") taken out: it is nobody's."""
    return _EXAMPLE.sub(" ", re.sub(r":\s", " ", instructions))


def named_as(name: str, record: str, cues: Collection[str], said: Sequence[str] | None = None) -> bool:
    """Is this name (for an argument that holds one: `patient_name`), in the record, the caller's or
    one in this argument's role: its entry says "caller" or "on file", or a word that names the
    argument ("Dentists: Dr Helen Okafor" for a `dentist`), or it is the caller's kin's account (given
    `said`, kin the caller speaks of: "Put our Jordan in", not Jordan for "Can I book a peg")? The
    desk's own name ("You answer the phone for Brightside Dental Practice") is no patient's. A name
    no entry holds word for word is left to the matching that found it."""
    wanted = {w.text for w in words(name) if len(w.text) > 1}
    holding = [entry for entry in ENTRY.split(record) if wanted <= {w.text for w in words(entry)}]
    own = (set(cues) - {"name", "s"}) | _CALLER
    return not holding or any({stem(w.text) for w in words(entry)} & own or (_kin_account(entry) or _kin_named(name, entry, said)) and (
        said is None or _spoken_of(name, entry, said)) for entry in holding)


def _kin_named(name: str, entry: str, said: Sequence[str] | None) -> bool:
    """Is the name written as the caller's kin's ("for his son Mateo Castillo"), a customer's, where
    the caller's last words are not of themselves ("Would Donal give me a lesson? ... since I was
    expecting Ciara": Ciara is no rider)?"""
    held, first = [w.text for w in words(entry)], words(name)[0].text
    if not said or {"me", "myself"} & {w.text for w in words(said[-1])}:
        return False
    return any(_word(held[i - 1]) in KINSHIP | {"law"} for i in range(1, len(held)) if held[i] == first)


def _spoken_of(name: str, entry: str, said: Sequence[str]) -> bool:
    """Does the caller speak of this kin of theirs: by the first word of their name ("our Jordan"),
    or the word for who they are ("my wife": "His wife, Funmi Oyelaran")?"""
    spoken = [w.text for text in said for w in words(text)]
    named = words(name)
    return bool(named) and named[0].text in spoken \
        or bool({_word(w) for w in spoken} & KINSHIP & {_word(w.text) for w in words(entry)})


def _kin_account(entry: str) -> bool:
    """The caller's kin or associate with an account of their own ("Her son, Daniel Ellison, has his
    own entry, account PT-4471"; "His business partner, Nomsa Dlamini, customer code KW-2237"): a
    customer of the desk, as the caller is."""
    held = {_word(w.text) for w in words(entry)}
    return bool(held & (KINSHIP | ASSOCIATE)) and bool(held & _AN_ACCOUNT)


_AN_ACCOUNT = frozenset("account entry member membership customer".split())


def alike(value: object, other: str) -> bool:
    """Of one form: both with letters ("BW-4471902", "LK19 XRT"), or both digits only (a card's
    last four, a year): a year on file is no registration, whatever words stand by it. A phrase
    ("200 Canal Street" written for a card) has no form to compare, and is like any."""
    if len(re.findall(r"[A-Za-z]{3,}", str(value))) >= 2:
        return True
    return any(ch.isalpha() for ch in squash(str(value))) == any(ch.isalpha() for ch in squash(other))


def _label(record: str, span: tuple[int, int], role_spans: Sequence[tuple[int, int]]) -> set[str]:
    start = max((m.end() for m in ENTRY.finditer(record, 0, span[0])), default=0)
    ends = [m.start() for m in ENTRY.finditer(record, span[1])]
    end = ends[0] if ends else len(record)
    earlier = [b for a, b in role_spans if b <= span[0] and a >= start]
    later = [a for a, b in role_spans if a >= span[1] and b <= end]
    if earlier:  # "5521 and Mastercard credit ending 0387": the words before a value are its own,
        comma = record.find(",", max(earlier), span[0])  # but "5120 (kettle), 4417": up to a comma, the earlier's
        start = comma + 1 if comma != -1 else max(earlier)
    if later:
        comma = record.find(",", span[1], min(later))
        end = comma if comma != -1 else span[1]
    return {_word(w.text) for w in words(record[start:span[0]] + " " + record[span[1]:end])
            if not any(ch.isdigit() for ch in w.text)}


def _digits(text: str) -> str:
    """A value's identity in the record: its digits ("Visa ending 4242": 4242), or a code with
    letters in it whole ("SPA-A1-MON" and "FRE-A1-TUE" share their digits, not their code)."""
    code = squash(text).upper()
    if sum(ch.isalpha() for ch in code) >= 2 and any(ch.isdigit() for ch in code):
        return code
    return re.sub(r"\D", "", text) or text.strip().lower()


_CAPITALISED = r"[A-ZÀ-Þ][a-zß-ÿ'’-]+(?:[A-ZÀ-Þ][a-zß-ÿ'’-]+)?"  # "Raman", "McCartan", "Ciarán"
FULL_NAME = re.compile(rf"\b{_CAPITALISED}(?:\s+{_CAPITALISED})+\b")  # "Priya Raman": two capitalised words or more


def name_beside(code: str, record: str) -> str | None:
    """The one name in the record's one entry holding this code ("Priya Raman, date of birth
    1988-11-02, patient number P-20417"); None where no entry or several hold it, or the entry
    holds no name or several."""
    if not code.strip() or not any(ch.isdigit() for ch in code):
        return None
    holding = [entry for entry in ENTRY.split(record) if re.search(rf"(?<!\w){re.escape(code)}(?!\w)", entry)]
    names = {m.group(0) for m in FULL_NAME.finditer(holding[0])} if len(holding) == 1 else set()
    return next(iter(names)) if len(names) == 1 else None


_LISTED = re.compile(r"(?P<head>\b(?:[A-Za-z]+s|children)(?:\s+on\s+file)?):\s+(?P<items>[^\n]+?)(?:\.(?=\s)|\n|$)")
_TOP_COMMA = re.compile(r"[,;&]\s*|\s+and\s+")


def one_of_several(value: object, instructions: str, said: Sequence[str]) -> bool:
    """Is this value one item of a list of alike ones in the record ("Bikes on file: a Trek Domane
    road bike and a Brompton folding bike", "Pets on file: Bramble (spaniel), Pickle (cat), Miso
    (cat)"), which the caller's words do not pick out by a word of its own ("book a service for
    Saturday", "one of the cats needs her Metacam")? Then which one is not said: asked. Where they
    name words of several items ("Biscuit's in on Saturday, and I'd like to bring Pepper for a bath
    and brush"), the item they name most is the one, a name counting twice. A list is a plural head
    and a colon, its items split at semicolons where it has them (each a record of its own, its
    commas inside it); a value found outside such lists too ("The caller is Dan Hughes", "Caller on
    file: ...", "room 214 in Calder Hall" beside "Halls: Calder Hall, Aire Court") is not judged.
    So of the people on file: a value of someone else's the caller's words do not point at
    (`someone_elses`) is not said."""
    if someone_elses(value, instructions, said):
        return True
    text = str(value).strip().lower()
    heard = {stem(w.text) for line in said for w in words(line)}
    lists = list(_LISTED.finditer(instructions))
    found = [m.start() for m in re.finditer(re.escape(text), instructions.lower())] if text else []
    if any(not any(m.start("items") <= at < m.end("items") for m in lists) for at in found):
        return False  # also said outside a list: "room 214 in Calder Hall" is the caller's hall
    judged = False
    for m in lists:
        items = _entries(m.group("items"))
        mine = [k for k, item in enumerate(items) if text and text in item.lower()]
        if len(items) < 2 or len(mine) != 1:
            continue
        scores = [_named(k, items, heard) for k in range(len(items))]
        if scores[mine[0]] > 0 and scores[mine[0]] >= max(scores):
            return False
        judged = True
    return judged


def someone_elses(value: object, instructions: str, said: Sequence[str]) -> bool:
    """Is this value (an address, a name) written only in the record's sentences about someone
    other than the caller, their kin or another customer ("Her son, Ciarán McCartan, ... of 41
    Castle Street"; not "Recent charges: Blue Bottle Coffee ..."), where one says who
    calls, and the caller's words name nothing of them: no name or place there, no word for kin
    ("Eileen here. Could you send a box out to me at the house?")? Then it is theirs, not the caller's."""
    text = str(value).strip().lower()
    sentences = [(m.group(), bool(_CALLER_ENTRY.search(m.group()))) for m in re.finditer(r"(?:[^.\n]|\.(?!\s))+", as_record(instructions))]
    holding = [s for s, callers in sentences if text and text in s.lower() and not callers
               and {_word(w.text) for w in words(s)} & (KINSHIP | {"another"})]  # the kin's, another customer's
    if not holding or not any(callers for _, callers in sentences) or any(text in s.lower() for s, callers in sentences if callers):
        return False
    heard = {_word(w.text) for line in said for w in words(line)}
    return not any({_word(w.text) for w in words(s) if w.raw[:1].isupper() and w.text not in CALENDAR or _word(w.text) in KINSHIP}
                   & heard for s in holding)


def _entries(listed: str) -> list[str]:
    """A list's items: its semicolon-separated records where it has them, else `items_of`."""
    if ";" in listed:
        return [e.strip() for e in listed.split(";") if e.strip()]
    return items_of(listed)


def _named(k: int, items: list[str], heard: set[str]) -> int:
    """How much of item k's own words (no other item's) the caller said: a name counts two."""
    others = {stem(w.text) for j, item in enumerate(items) if j != k for w in words(item)}
    own = {stem(w.text) for w in words(items[k]) if len(w.text) > 2} - others - _QUIET
    return _weighed(items[k], own & heard)


def items_of(listed: str) -> list[str]:
    """A list's items, split at its top-level commas, semicolons, "&" and "and" (not inside
    brackets): "Bramble (spaniel, 6), Pickle and Miso" is Bramble (spaniel, 6), Pickle, Miso."""
    depth, cuts, out, start = 0, [], [], 0
    for i, ch in enumerate(listed):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and (m := _TOP_COMMA.match(listed, i)) and (ch in ",;&" or ch.isspace()):
            cuts.append((i, m.end()))
    for a, b in cuts:
        if a >= start:
            out.append(listed[start:a])
            start = b
    return [item.strip() for item in [*out, listed[start:]] if item.strip()]


_CALLER_ENTRY = re.compile(r"\bcaller\b|\bcalling number\b", re.I)  # "The calling number is on file for ..."
NOT_NAMES = frozenset("mr mrs ms miss dr mx sir madam the a it".split())  # titles and articles, no part of a name


def the_callers_name(instructions: str) -> str | None:
    """The name of the person the record says is calling: the first name after "caller" in an
    entry that says it ("Caller on file: Priya Raman, ...", "The caller's phone number matches this
    account: Darren Pike, ..."; a title aside); None where no entry says one, or it says two ("Priya
    Raman and Omar Said")."""
    for entry in ENTRY.split(as_record(instructions)):
        if (m := _CALLER_ENTRY.search(entry)) is None:
            continue
        for found in FULL_NAME.finditer(entry, m.end()):
            parts = [w for w in found.group(0).split() if w.lower().strip(".") not in NOT_NAMES]
            if len(parts) >= 2:  # "Priya Raman and Omar Said": which of them calls is not said
                return None if re.match(r"\s*(?:and|&)\s+[A-Z]", entry[found.end():]) else " ".join(parts)
    return None
