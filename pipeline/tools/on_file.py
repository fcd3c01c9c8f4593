"""Where a record (the instructions) holds values in an argument's role, and where a text says a
number at all: what `provenance` reads a record's entries and the caller's numbers with."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from .argrules import Rule
from .asks import corrects
from .evidence import Evidence
from .number_role import folded, role_here
from .record import alike, as_record, code_form, code_shape
from .spoken import Source, ValueKind
from .spoken.codes import code_said, codes_in, spelled, squash
from .spoken.kinds import cue_words, stem
from .spoken.numbers import NumberSaid, numbers_said
from .spoken.words import spoken_number, words

__all__ = ["a_piece_said", "by_its_digits", "held_by_digits", "lettered", "named_on_file", "on_file", "other_code_said",
           "outside_lists", "made_new_for_another", "new_ending", "put_right", "said_as_new", "shaped_alike", "spans_of_numbers", "unmistakable"]

_CLOCKISH = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?|\d{4}-\d{1,2}-\d{1,2}.*|\d{1,2}/\d{1,2}(?:/\d{2,4})?")


def on_file(value: Any, record: str, rule: Rule) -> list[tuple[int, int]]:
    """Where the record holds values in this role, of the value's form: each number, or the whole
    code it is in ("BW-4471902", "LK19 XRT"), written with digits (not the desk's "SW and ten
    digits"); and a code shaped as one in the role, or of the form its description's example has,
    where no word names it another's ("Jobs on file: J-7731 ...; J-7745 ...": both are jobs, and
    the caller's words choose; "MAN-A1-TUE (Mandarin beginners ...)" for "e.g. FRE-A1-TUE")."""
    runs = codes_in(record, pauses=False) if rule.kind is ValueKind.CODE else []
    out: list[tuple[int, int]] = []
    loose: list[tuple[int, int]] = []
    for span in spans_of_numbers(record):
        whole = next(((a, b) for a, b, _ in runs if a <= span[0] and span[1] <= b), span)
        if whole in out or not alike(value, text := record[whole[0]:whole[1]]) or (
                rule.kind is ValueKind.CODE and (not any(ch.isdigit() for ch in text) or _ORDINAL.fullmatch(text))):
            continue  # "the 28th" is a day, no code
        if (role := role_here(record, whole, rule)) is True:
            out.append(whole)
        elif role is None and rule.kind is ValueKind.CODE and not _an_account(record, whole, rule):
            loose.append(whole)
    shapes = {code_shape(record[a:b]) for a, b in out} | rule.shapes  # and the shapes its examples show
    found = out + [s for s in loose if s not in out and (code_shape(record[s[0]:s[1]]) in shapes
                                                          or code_form(record[s[0]:s[1]]) == rule.form
                                                          or not out and _of_its_things(record, s, rule))]
    # where the schema shows its code's form, the record's values of that form are the role's
    # ("e.g. FRE-A1-TUE": the courses, not "£120 at the concession rate" beside "course")
    if rule.form is None:
        return found
    if _form(str(value)) != _form(rule.form):
        return []  # not of the role's form: "120" for "e.g. FRE-A1-TUE" holds no course on file
    return [(a, b) for a, b in found if _form(record[a:b]) == _form(rule.form)] or found


def _an_account(record: str, span: tuple[int, int], rule: Rule) -> bool:
    """Is the code at record[span] written as an account's ("account OM-2290", "account number
    KS-0918"), where this argument is not one: a scooter's or an Eircode's role holds none."""
    before = [w.text for w in words(record[max(0, span[0] - 40):span[0]])][-2:]
    return "account" in before and "account" not in rule.cues


def _of_its_things(record: str, span: tuple[int, int], rule: Rule) -> bool:
    """Is the code at record[span] one of the things its tool acts on, by the word it is written
    after ("inspection I-2291" for a tool that moves "an inspection, repair or replacement job";
    not "customer code TR-6604"), where no word names a code in this argument's own role?"""
    before = [w.text for w in words(record[max(0, span[0] - 40):span[0]])][-1:]
    return bool(before) and stem(before[0]) in rule.about - rule.tool - _NAMES_NO_THING


_NAMES_NO_THING = frozenset(stem(w) for w in "code number ref reference account customer".split())


def _form(code: str) -> str:
    """A code's form, whatever marks or spaces it is written with ("FRE A1 TUE": AAAA9AAA)."""
    return code_form(re.sub(r"[\W_]", "", code))


_ORDINAL = re.compile(r"\d{1,2}(?:st|nd|rd|th)", re.I)
_CURRENCY = ("$", "€", "£", "¥")  # written before a price


def written_as_money(text: str, span: tuple[int, int]) -> bool:
    """Is the number at text[span] written as a price ("£120", "$ 45")?"""
    return text[:span[0]].rstrip().endswith(_CURRENCY)


def spans_of_numbers(text: str) -> list[tuple[int, int]]:
    """Where the text says a number (not a time of day), or an id with a digit in it."""
    out = [(n.start, n.end) for n in numbers_said(text) if not n.clock]
    out += [(w.start, w.end) for w in words(text) if any(ch.isdigit() for ch in w.text)
            and not any(a <= w.start < b for a, b in out) and not _CLOCKISH.fullmatch(w.text)]
    return out


def unmistakable(said: str) -> bool:
    """A code said with letters in it, or of six digits or more ("S W two two eight one, six six
    oh, ..."): on a tool with no other number, no count, price or time of day is read as it."""
    code = spelled(said) or ""
    return len(code) >= 6 or any(ch.isalpha() for ch in code) and any(ch.isdigit() for ch in code)


def lettered(said: str) -> bool:
    """A code of five characters or more with letters and digits, as said ("SN-60474")."""
    code = spelled(said) or ""
    return len(code) >= 5 and any(ch.isalpha() for ch in code) and any(ch.isdigit() for ch in code)


_AS_NEW = re.compile(r"\b(make (it|that)|put( it)?|say|call it|(bump|change|up|move|take) (it|that) (up |down )?to)\s+$", re.I)
# after a number, what makes it a time, a length or a sum rather than a count ("make it two in the
# arvo", "make that two hours"), unless it is the argument's own word ("make it three days")
_UNIT = re.compile(r"^\W*(hours?|minutes?|mins?|days?|nights?|weeks?|months?|years?|o'?clock|[ap]\.?m\b\.?|tonight|"
                   r"in the (morning|afternoon|arvo|evening|night)|thirty|fifteen|forty|quid|pounds?|dollars?|"
                   r"euros?|bucks?|percent)\b", re.I)


def said_as_new(text: str, start: int, end: int, cues: frozenset[str]) -> bool:
    """Do the words just before the number at text[start:end] say it as the new value ("Actually,
    make it", "bump it to")? Of the numbers a correction says ("make it three, sorry ... he'll want
    one too"), that one is the value; not a time or a length ("make it two in the arvo", "make that
    two hours") where the argument counts something else."""
    unit = _UNIT.match(text[end:])
    return bool(_AS_NEW.search(text[:start])) and (unit is None or stem(unit[1].split()[-1].lower()) in cues)


_PRONOUN_ONE = re.compile(r"\b(the|that|this|which|each|any|every|no|a|another|other|same)\s+one$", re.I)


def made_new_for_another(text: str, numbers: Iterable[NumberSaid], rule: Rule) -> bool:
    """Do the words say one of these numbers as another argument's new value ("make it three
    hours", for a count of guests)? Another number they say is then no correction of this one
    ("Wait ah, make it three hours. Once they start singing, confirm cannot stop one.")."""
    return any(role_here(text, (n.start, n.end), rule) is False and said_as_new(text, n.start, n.end, rule.rivals)
               for n in numbers)


def put_right(asked: str, said: str, span: tuple[int, int], rule: Rule) -> bool | None:
    """Is the number at said[span], in words that put the agent's read-back right ("One canvas of
    image 22. Shall I order it?" "Oh shoot, sorry, not twenty-two. Twenty-seven."), this argument's?
    A new number takes the role of the one the agent's words gave this argument (True: 27), where
    they gave it one; that one said again is the number taken back (False: 22). None: the agent
    gave this argument no number, or the words correct nothing; nor a number beside the one said
    "X, not" the read-back's ("it's sixteen, not twelve. I forgot the four on the back porch")."""
    if not asked or not corrects(said) or _PRONOUN_ONE.search(said[:span[1]]) and said[span[0]:span[1]].lower() == "one":
        return None  # "the one you've got", "the one where he's throwing his cap": no number
    agent, own = folded(asked), replace(rule, cues=rule.cues - rule.shared)  # "four tickets": no concessions
    read = [spelled(agent[a:b]) for a, b in spans_of_numbers(agent) if role_here(agent, (a, b), own) is True]
    if len(read) > 1:  # "16x20 canvas of image 22 from gallery G-7719": the one the caller says again
        again = {spelled(said[a:b]) for a, b in spans_of_numbers(said)}
        read = [number for number in read if number in again]
    if len(read) != 1:
        return None
    new = spelled(said[span[0]:span[1]]) != read[0]
    instead = [(a, b) for a, b in spans_of_numbers(said) if (m := re.match(r",?\s+not\s+([\w-]+)", said[b:b + 40]))
               and (spelled(m.group(1)) or str(spoken_number(m.group(1)))) == read[0]]
    return None if new and instead and span not in instead else new  # "it's sixteen, not twelve. I forgot the four": not four


# "it ends three eight one", "five five oh at the end", "the last three are ...": a code's ending
_ENDING = re.compile(r"\bends? (?:in |with )?(?P<a>[^.!?]+)|(?P<b>[^.!?,]+?) (?:at|on) the end\b"
                     r"|\blast (?:bit|bits|digits?|numbers?|two|three|four)(?:'s| is| are)? (?P<c>[^.!?]+)", re.I)
_MISSED = re.compile(r"\b(dropped|missed|left (?:off|out)|missing)\b", re.I)


def new_ending(value: Any, rule: Rule, evidence: Evidence) -> str | None:
    """The code the agent read back with its ending as the caller's correction says it ("We'll
    ring 210-555-0318. Is that right?" "No sir, it ends three eight one.": 210-555-0381), written as
    read back, where the value is that code or already the one put right; None where the words say
    no ending of two to four digits, or the caller says a digit was left out (which, is not said)."""
    if rule.kind is not ValueKind.CODE or not evidence.said or not corrects(said := evidence.said[-1]) \
            or _MISSED.search(said) or (m := _ENDING.search(said)) is None:
        return None
    told = re.sub(r"^\s*(?:it'?s|it is|that'?s)\s+", "", next(g for g in m.groups() if g), flags=re.I)  # "it's two three eight one at the end"
    ending = "".join(ch for ch in spelled(told) or "" if ch.isdigit())
    mine, agent, out = squash(str(value)), evidence.last_asked, set()
    for a, b, read in codes_in(agent, pauses=False):
        code, digits = list(agent[a:b]), iter(reversed(ending))
        places = [k for k, ch in enumerate(code) if ch.isdigit()]
        if 2 <= len(ending) <= 4 and len(places) > len(ending):
            for k in reversed(places[-len(ending):]):
                code[k] = next(digits)
            if mine in (squash(read), squash("".join(code))):
                out.add("".join(code))
    return next(iter(out)) if len(out) == 1 else None


def outside_lists(spans: list[tuple[int, int]], record: str, *, counts: bool = False) -> list[tuple[int, int]]:
    """These spans of the record, less those inside an entry of a list of records, each with its own
    code of one shape ("CO-3302 \u2014 30 sausage rolls ...; CO-3315 \u2014 8-inch chocolate cake ...").
    Those describe the things on file, so a new thing's values are not theirs: Qwen gave a new cake
    order `size_inches: 8`, the 8-inch cake on file's, on a line that named no size. Of `counts`,
    less those in any entry with a code of its own too ("on file: party PB-441 ... for 15 children"):
    a new session is not for the party's fifteen."""
    codes = [(a, code) for a, _, code in codes_in(record, pauses=False) if any(ch.isalpha() for ch in code)]
    shapes = [code_shape(code) for _, code in codes]
    starts = [a for (a, _), shape in zip(codes, shapes, strict=True) if counts or shapes.count(shape) > 1]
    entries = [(m.start(), m.end()) for m in re.finditer(r"[^;\n]+", record)]
    listed = [(a, b) for a, b in entries if any(a <= at < b for at in starts)]
    return [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in listed)
            and not (counts and _PRICED.search(record, 0, s[0]))]  # "$5 a person" counts nobody


# a price's sign before a number: the desk's "entry is $5 a person" is no party of five
_PRICED = re.compile(r"(?:[$€£¥₹₦]|\b(?:Rs\.?|KSh|Ksh|R|TT\$|J\$|GH₵|USD|EUR|GBP|INR|KES|ZAR|NGN)\s?)\Z")


def held_by_digits(digits: str, record: str, rule: Rule) -> str | None:
    """The record's one code in this role whose digits these are, letters and all ("30815" said
    for the job on file MM-30815); None where none is, or several."""
    if rule.kind is not ValueKind.CODE or len(digits) < 4 or not digits.isdigit():
        return None
    held = {record[a:b] for a, b in on_file(rule.form or "X" + digits, record, rule)}
    same = [code for code in held if "".join(ch for ch in code if ch.isdigit()) == digits]
    return same[0] if len(same) == 1 else None


def by_its_digits(value: Any, record: str, rule: Rule, said: list[str]) -> bool:
    """A code on file in this role said by its digits alone, the letters every code of its form
    shares left out ("Two oh four three six" for the ticket RT-20436 where tickets are RT and five
    digits): the record's only code in the role with those digits (`held_by_digits`), said as one
    number."""
    mine = squash(str(value))
    digits = "".join(ch for ch in mine if ch.isdigit())
    if not any(ch.isalpha() for ch in mine) or (held := held_by_digits(digits, record, rule)) is None:
        return False
    return squash(held) == mine and any(code_said(digits, text) is not None for text in said)


def shaped_alike(a: str, b: str) -> bool:
    """Two codes of one shape: about as many letters and digits ("BW20418", "BW20417"; not a
    word spelled out, "METHIMAZOLE2", nor a kind's name with half the digits, "D24" beside D-5547)."""
    letters, digits = (sum(ch.isalpha() for ch in a), sum(ch.isalpha() for ch in b)), \
        (sum(ch.isdigit() for ch in a), sum(ch.isdigit() for ch in b))
    return min(letters) > 0 and abs(letters[0] - letters[1]) <= 1 and abs(digits[0] - digits[1]) <= 2 \
        and min(digits) * 2 > max(digits)


def a_piece_said(value: str, span: tuple[int, int], text: str) -> bool:
    """A code with letters that is only the start of one the caller read out in groups ("WCF4D" of
    "W C F, four, D for delta, eight, eight, J for Juliet"): not the code they said."""
    mine = squash(value)
    digits = "".join(ch for ch in mine if ch.isdigit())
    return any(ch.isalpha() for ch in mine) and any(
        a <= span[0] and span[1] <= b and (b - a) > (span[1] - span[0]) and len(squash(code)) > len(mine)
        and any(ch.isalpha() for ch in squash(code)) and squash(code) not in (digits + mine, mine + digits)
        for a, b, code in codes_in(text))  # "six oh four seven four, SN-60474": said twice, not a piece


def other_code_said(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """The caller said a code of their own in this role, not this one ("His number's B W two oh
    four one eight"): the record's other code (BW-20417, hers) is not the one they gave. A code
    of the value's letters and shape is in its role though no word names it ("cancel a booking,
    it's P T, two oh five five two": not PT-20417 on file). Of codes of digits alone, another of the
    record's in this role said whole ("My file is ... twenty-four, oh eight one seven": not 11-2290)."""
    mine = squash(str(value))
    if rule.kind is not ValueKind.CODE or Source.CALLER not in rule.sources:
        return False
    if not any(ch.isalpha() for ch in mine):  # digits alone: an amount, a time or a phone's pieces may be read as
        record = as_record(evidence.instructions)  # one; only another code on file in this role, said whole, is one
        return any(squash(record[a:b]) != mine and code_said(record[a:b], text) is not None
                   for a, b in on_file(value, record, rule) for text in evidence.said)  # "My file is, uh, twenty-four, oh eight one seven"
    return any(squash(code) != mine and shaped_alike(squash(code), mine)
               and ((role := role_here(text, (a, b), rule)) is True or role is None and _letters(code) == _letters(mine))
               for text in map(folded, evidence.said) for a, b, code in codes_in(text))


def _letters(code: str) -> str:
    """A code's letters, in order: "PT20552" and "PT-20417" are codes of one kind."""
    return "".join(ch for ch in squash(code) if ch.isalpha()).upper()


# words any argument's name may hold: they name no one thing a caller could point at ("code", "new")
_PLAIN = frozenset("code id ref reference number no nr num name full date day time new current old value "
                   "detail details info type kind optional s".split())
_DENIED = frozenset("not no never without don't won't wouldn't didn't isn't can't cannot nae".split())


def named_on_file(value: Any, rule: Rule, evidence: Evidence, given: Callable[[Any, Rule], bool]) -> bool:
    """An optional value of the record that the caller's last words name by a word of the
    argument's own name ("I'll use me voucher": the gift voucher on file for `voucher_code`;
    "Rego's on file, mate" for `rego`), not denied ("I won't use the voucher"): traced against the
    record as a required value is (`given`, the instructions a source); a caller who named none
    adds none (`argrules`). Codes and names only: of the kinds a caller points at this way, the
    sets' labels keep no other."""
    if rule.required or rule.choices or rule.kind not in (ValueKind.CODE, ValueKind.NAME) \
            or Source.CALLER not in rule.sources or Source.INSTRUCTIONS in rule.sources \
            or not evidence.said or not evidence.instructions:
        return False  # a choice is the caller's to name; "same address as before" says no street
    own = cue_words(rule.name, {}) - _PLAIN - rule.tool  # "book a sweep" names no `preferred_sweep`
    said = [w.text for w in words(evidence.said[-1])]
    if not any(stem(w) in own and not _DENIED & set(said[max(0, i - 4):i]) for i, w in enumerate(said)):
        return False
    return given(value, replace(rule, sources=rule.sources | {Source.INSTRUCTIONS}))
