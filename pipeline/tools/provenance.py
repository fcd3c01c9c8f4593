"""Where every argument of a tool call came from: nothing runs on a value nobody gave.

A small model fills a schema with whatever fits: asked nothing, it books "John Doe" at 10:30; told
"a cab at the central station at 6 pm", it writes `pickup_time: "14:00"`. Before any tool runs
(ours, a realtime client's function, an MCP server's tool), each argument's value is traced to a
source it may have (`spoken.Source`):
- what the caller said in this call (their turns' transcripts, text they typed), read as speech
  (`spoken.said_in`: "six pm" is 18:00, "k seven q two" is K7Q2, a name as Whisper mishears it);
- an earlier tool result (not a value in a field named for another argument: an id is no card's);
- the instructions, which hold what the deployment put there (the caller's account, a booking);
- the agent's own composition, for prose (a reason, a note, a summary).

Which sources an argument may have comes from its schema (`spoken.sources_of`): its `x-source`
keyword, which a client may send and `@tool(sources=...)` writes; else its kind's default: a name,
an id, a code, a date, a time, a number, an address must be said (by the caller, a result or the
instructions); prose may be composed. An object, a required flag or enum value is the model's
choice within what the schema allows (a list of times is a time's, and one of its list); an
optional enum value is the caller's to name, or a result's, and an optional flag runs only where
the caller's words touch what it is about (`flags`). `ToolSpec.grounded` narrows the check.

A number keeps the role the caller gave it: the words around it that name an argument decide
whether "4417" is the `order_id` or the `card_last4` (`spoken.cue_words`, read from the tool's own
parameter names and descriptions: nothing here knows what an order is).

What is not given decides what runs (`trace`): a required argument nobody gave refuses the call
(the model asks the caller: `refusal`); an optional or blank one nobody gave is left out. A time
asked for as HH:MM reaches the tool so ("6 pm": "18:00"), a day asked as a date as "2026-06-06".
A time or a day the model wrote wrong is said again as the caller said it (`moments.restated`):
told "tomorrow at 2 pm" on June 3rd, a small model books "2026-06-09", and the call runs on
"2026-06-04"; where the caller named none, or several, it is refused.
Told "from tomorrow to Saturday", a call's two days are the caller's two (`moments.spread_days`). Of
several numbers the instructions hold for one argument (two cards on file), only the one the
caller's words point at is given (`record.singled_out`: "my debit card"), and is the value where
the model wrote one nobody gave (`record.the_one_meant`), as the record's only one is.
A code or a number the model miscopied ("SW9943058" for "Sierra Whiskey, one nine nine four,
three oh two, five five eight") is the one the caller said in its role (`_the_callers_one`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from . import amends, catalogue, number_role
from .amends import a_piece, amended, for_another, in_its_unit, more_than_itself, retold, serves
from .argrules import MONEY_MARKS, NUMBERS, Rule, rules
from .callers import a_stranger, said_lowercase, spelt_with, titled
from .evidence import Evidence
from .flags import flag_as_said, unasked_flags, unsaid_prose
from .kin import is_kin
from .moments import (
    as_date,
    as_hhmm,
    corrected_moment,
    in_its_month,
    in_span_order,
    moved,
    restated,
    spread_days,
    spread_times,
    the_clock,
    took_back,
)
from .number_role import folded, keyed_scalars, names_other, question_role, role_here
from .on_file import (
    a_piece_said,
    by_its_digits,
    held_by_digits,
    lettered,
    named_on_file,
    new_ending,
    on_file,
    other_code_said,
    outside_lists,
    put_right,
    spans_of_numbers,
    unmistakable,
    written_as_money,
)
from .people import counted
from .picks import named_choice, one_part_of_day, passed_over, unnamed_pick, word_choices
from .record import (
    as_record,
    code_form,
    in_form,
    named_as,
    one_of_several,
    singled_out,
    the_callers_name,
    the_one_meant,
)
from .same import kept_from_booking
from .schema import ToolSpec
from .spoken import Source, ValueKind, said_in
from .spoken.codes import code_said, codes_in, spelled, squash
from .spoken.kinds import is_greeting, name_words, stem
from .spoken.names import choice_said, name_said
from .spoken.numbers import TIME_CUES, numbers_said, plain
from .spoken.times import moments
from .spoken.words import is_number_word, spoken_number, words

_DIALLED = frozenset("phone mobile cell telephone tel landline".split())  # a number to ring has digits
_WORDY = re.compile(r"[A-Za-z]{3,}")
_PRICE = re.compile(r"\d+\.\d{2}")
_ROUGHLY = re.compile(r"[\s,-]*(?:and|or)\s+(?:something|so)\b|[\s-]*(?:odd|ish)\b", re.I)  # "four hundred and something"


@dataclass
class Traced:
    """A call's arguments after tracing: what may run, what nobody gave."""
    arguments: dict[str, Any]
    missing: list[str] = field(default_factory=list)  # required, untraced: the call is refused
    dropped: list[str] = field(default_factory=list)  # optional, untraced: left out


def trace(spec: ToolSpec, arguments: dict[str, Any], evidence: Evidence) -> Traced:
    """Trace every argument of this call to its sources (see the module's docstring)."""
    checked = {name: rule for name, rule in rules(spec).items() if name in arguments and rule.traced}
    arguments = {n: amends.before_dash(v, checked[n]) if n in checked and checked[n].kind is ValueKind.CODE else v
                 for n, v in arguments.items()}  # "CO-3302 — 30" of the record's "CO-3302 — 30 rolls"
    arguments = {**arguments, **{name: kept for name, rule in checked.items()
                                 if rule.choices and isinstance(arguments[name], list)
                                 and (kept := [v for v in arguments[name] if given(v, rule, evidence)])}}
    out = Traced(dict(arguments))  # of a list of choices, those said ("teeth cleaned", not "paw balm")
    held = {name: all(given(v, rule, evidence) for v in (arguments[name] if isinstance(arguments[name], list)
                                                          else [arguments[name]]))
            and not took_back(arguments[name], rule.kind, evidence, rule.written) and retold(arguments[name], rule, evidence) is None
            and not (rule.choices and isinstance(arguments[name], str) and named_choice(spec, name, arguments[name], evidence))  # "Monday, not Tuesday"
            and not amends.read_back_code(arguments[name], rule, evidence, [v for n, v in arguments.items() if n != name])
            for name, rule in checked.items()}
    days = {name for name, rule in checked.items() if rule.written == "date" and Source.CALLER in rule.sources}
    days_said = spread_days({n: arguments[n] for n in days if not held[n]}, {n: arguments[n] for n in days if held[n]},
                            evidence, order=list(checked)) or in_span_order({n: arguments[n] for n in checked if n in days}, evidence)
    span = spread_times([n for n, r in checked.items() if r.kind is ValueKind.TIME and Source.CALLER in r.sources],
                        evidence)  # "One till half five": the start's and the end's, each its own
    for name, rule in checked.items():
        value = arguments[name]
        if rule.clock24 and isinstance(value, str) and (hhmm := as_hhmm(value, evidence.now)) is not None:
            out.arguments[name] = hhmm  # "6 pm" as the schema asks: "18:00" (traced as said)
        if name in span:
            out.arguments[name] = span[name]
            continue
        if (units := in_its_unit(value, rule, evidence)) is not None:
            out.arguments[name] = units  # "two hours" asked in minutes: 120, not the model's 2
            continue
        if days == {name} and "new" in rule.cues and (to := moved(value, evidence)) is not None:
            out.arguments[name] = to  # "move it from tomorrow to Monday": the new day is Monday
            continue
        if held[name] and name not in days_said and corrected_moment(value, rule, evidence) is None:
            if rule.written == "date" and isinstance(value, str) and (day := as_date(value, evidence)) is not None:
                out.arguments[name] = day  # "Saturday" as the schema asks: "2026-06-06"
            continue
        # the moment(s) the caller said, not the model's (of a call's several days, each its own:
        # one day said is not two); the code on file their words point at
        if (again := corrected_moment(value, rule, evidence) or rule.written == "date" and in_its_month(value, evidence) or days_said.get(name)
                or retold(value, rule, evidence)
                or Source.CALLER in rule.sources and (name not in days or len(days) == 1)
                and restated(value, rule.kind, rule.written, evidence)
                or amends.read_back_code(value, rule, evidence, [v for n, v in arguments.items() if n != name])
                or new_ending(value, rule, evidence)  # "No sir, it ends three eight one"
                or Source.INSTRUCTIONS in rule.sources and pointed_at(value, rule, evidence)
                or kept_from_booking(value, rule, evidence, [v for n, v in arguments.items() if n != name])
                or _the_callers_one(value, rule, evidence, {squash(str(v)) for n, v in arguments.items() if n != name})
                or amended(value, rule, evidence, partial(given, rule=rule, evidence=evidence))):
            out.arguments[name] = again
            continue
        if rule.choices and (named := named_choice(spec, name, value, evidence)) is not None:
            out.arguments[name] = named  # an optional choice the caller named, not the model's
            continue
        if named_on_file(value, rule, evidence, partial(given, evidence=evidence)):
            continue  # "I'll use me voucher": the one on file
        if rule.required or spec.grounded is not None:
            out.missing.append(name)
        else:
            out.dropped.append(name)
            del out.arguments[name]
    for name, value in arguments.items():  # a required choice is the model's, but not against the caller's word
        if name in checked:
            continue
        if (named := named_choice(spec, name, value, evidence)) is not None:
            out.arguments[name] = named
        elif (passed_over(spec, name, value, evidence) or unnamed_pick(spec, name, value, evidence, set(out.arguments) - {*out.missing})) \
                and name in spec.parameters.get("required", ()):
            out.missing.append(name)  # "try singing ... after her piano", written "drums": which is asked
    for name, rule in checked.items():  # "BF20260147" as the schema's example writes its codes: BF-2026-0147
        if rule.form and isinstance(out.arguments.get(name), str) and (shaped := in_form(out.arguments[name], rule.form)):
            out.arguments[name] = shaped
        elif rule.kind is ValueKind.TIME and (times := word_choices(spec, name)) and (out.arguments.get(name, times[0]) not in times
                                                                                 or one_part_of_day(out.arguments.get(name), times, evidence)):
            out.missing = [*dict.fromkeys([*out.missing, name])]  # "half five" for a tour at 18:00, 20:00 or 22:00; "Morning time"
    out.dropped += (flags := unasked_flags(spec, out.arguments, evidence)  # optional flags nothing touched
                    + unsaid_prose(spec, out.arguments, evidence))  # and prose of nothing said
    out.arguments = {name: flag_as_said(spec, name, value, evidence) for name, value in out.arguments.items() if name not in flags}
    return out


def _the_callers_one(value: Any, rule: Rule, evidence: Evidence, taken: set[str]) -> str | int | float | None:
    """The one code or number the caller's last words say in this argument's role, for one the
    model wrote that nobody gave ("SW9943058" for "Sierra Whiskey, one nine nine four, three oh two,
    five five eight"): a number the words around it name so, said exactly ("four hundred and
    something" is none); a code so named, or answering the agent's question for it, or, on a tool
    taking no other number, one no count could be (`unmistakable`), within three characters of the
    model's length (not "1234567890" for "back in 2019"), or begun by it ("HD" for "H D, four two
    double eight"). Not an earlier turn's ("use a different card instead"); none where they said
    several, or it is another argument's value."""
    if Source.CALLER not in rule.sources or rule.kind not in NUMBERS or not evidence.said:
        return None
    written = squash(spelled(str(value)) or str(value))
    asked = evidence.last_asked
    said = folded(evidence.said[-1])  # where codes are read: a colon ends one ("the bike one: C L, ...")
    text = re.sub(r":\s", "  ", said)  # where roles are: "Gas reading for you: 7912", named across the colon
    found: set[str | int | float] = {
        plain(next(iter(n.values))) for n in numbers_said(text) if not n.clock and len(n.values) == 1
        and role_here(text, (n.start, n.end), rule) is True and not _ROUGHLY.match(text, n.end)
    } if rule.kind is ValueKind.NUMBER else {
        code for start, end, code in codes_in(said)
        if squash(code) not in taken and (abs(len(squash(code)) - len(written)) <= 3 or written.isalpha() and squash(code).upper().startswith(written.upper()))
        and ((role := role_here(text, (start, end), rule)) is True or role is None and (
            (question := question_role(asked, rule)) is True
            or question is None and rule.lone and unmistakable(text[start:end])))}
    value = next(iter(found)) if len(found) == 1 else None
    if isinstance(value, str) and evidence.instructions and (
            held := held_by_digits(value, as_record(evidence.instructions), rule)) is not None:
        value = held  # "three oh eight one five": the job on file, MM-30815
    return value if value is not None and given(value, rule, evidence) else None


def given(value: Any, rule: Rule, evidence: Evidence) -> bool:
    """Was this one value given from one of the argument's sources?"""
    if value is None or isinstance(value, bool):
        return True
    if not str(value).strip():
        return False  # a blank id is no more given than a made-up one
    if rule.kind is ValueKind.CODE and (sum(not w.isupper() for w in _WORDY.findall(str(value))) >= 2
                                        or amends.letters_of_a_code(value, evidence)):
        return False  # "200 Canal Street" is a phrase, not a code; "MAN-A1-TUE" is one; "HD" of "H D, four two ..."
    if rule.kind is ValueKind.CODE and rule.cues & _DIALLED and not any(ch.isdigit() for ch in str(value)):
        return False  # "L-E-W-I-S" spelled for a phone number: a name, not a number to ring
    if rule.kind is ValueKind.NAME and rule.cues & _A_NAME and (
            sum(c.isdigit() for c in str(value)) > sum(c.isalpha() for c in str(value))
            or any(is_number_word(w.text.lower()) for w in words(str(value))) and not titled(str(value), evidence.said)
            or len(words(str(value))) > 5):  # "Boss, mih car dead on de Solomon Hochoy Highway": a clause
        return False  # "P-20417" is a patient number, "Eight people on Sunday" a party: no names (a `new_value` may be)
    if rule.kind is ValueKind.NAME and serves(rule) and said_lowercase(str(value), evidence.said) or amends.not_introduced(value, rule, evidence):
        return False  # "We've jackdaws nesting in the chimney": no customer called Jackdaws; "she's called Pepper. I'm Dawn Fenwick"
    if rule.kind is ValueKind.NAME and (is_kin(str(value)) or is_greeting(str(value)) or spelt_with(str(value), evidence.said)
                                        or not rule.required and amends.spelling_only(str(value)) or catalogue.thing_listed(value, rule, evidence)):
        return False  # "Mam" for the deceased's name: who she is to the caller; "Kia ora"; "V for Victor"; a partner "R-A-O"; a class
    if rule.kind is ValueKind.NAME and serves(rule) and not named_as(str(value), evidence.instructions, rule.cues, evidence.said):
        return False  # "Is Joanne in on Tuesday?": the photographer the instructions list, no customer
    if rule.kind in (ValueKind.ADDRESS, ValueKind.NAME) and re.search(r"[()\[\]]|,\s*(?:sorry|nah|no|wait|I mean),", str(value), re.I):
        return False  # "27 Larch Avenue ... M20 6RT (Worcester Bosch combi boiler, ...)": a note; "twenty-two, sorry, twenty-four"
    if more_than_itself(value, rule.kind, evidence) or amends.code_taken_back(value, rule, evidence):
        return False  # "Roisin R O I S I N Gallagher", "Mill Road, not Mill Lane": more than the name; a code put right
    assert rule.kind is not None
    if Source.CALLER in rule.sources and rule.kind is ValueKind.DATE and in_its_month(value, evidence) in (
            as_date(str(value), evidence) or "-",):
        return True  # "the seventh, not the fifth" after turns about September: September 7
    if Source.CALLER in rule.sources:
        for text, asked in zip(evidence.said, [*evidence.asked, *[""] * len(evidence.said)], strict=False):
            if _in_text(value, text, rule, evidence, asked, caller=True):
                return True
    if amends.corrected_here(value, rule, evidence) or catalogue.listed(value, rule, evidence):
        return True  # "Ah, make it two, mate." after the read-back's "3 extra days"; "the tup class": "14 Cheviot tup"
    if Source.CALLER in rule.sources and amends.said_short(value, rule, evidence):
        return True  # "up to Manchester": the instructions' "Manchester Shudehill", their only one
    if Source.CALLER in rule.sources and Source.INSTRUCTIONS in rule.sources and evidence.instructions \
            and by_its_digits(value, as_record(evidence.instructions), rule, evidence.said):
        return True  # "two oh four three six": the ticket on file RT-20436
    if Source.INSTRUCTIONS in rule.sources and evidence.instructions and not _caller_named(rule, evidence) \
            and not the_clock(value, rule.kind, evidence) and not other_code_said(value, rule, evidence) \
            and (rule.kind in _MOMENTS or not a_stranger(evidence.said, evidence.instructions)):  # not their account
        record, labelled = as_record(evidence.instructions), replace(rule, cues=rule.cues - rule.things) if rule.things else rule
        if _in_text(value, record, labelled, evidence, "", caller=False) and (
                rule.kind not in NUMBERS or _meant(value, record, labelled, evidence)) and not a_piece(value, record, rule.kind) and not amends.scattered(value, record, rule.kind) \
                and ("name" not in rule.cues or named_as(str(value), record, rule.cues, evidence.said)) \
                and not (serves(rule) and evidence.said and for_another(evidence.said[-1])
                         and name_said(str(value), the_callers_name(evidence.instructions) or "") is not None) \
                and (rule.kind in NUMBERS or not one_of_several(value, evidence.instructions, evidence.said)):
            return True
    if Source.RESULT in rule.sources:
        for key, scalar in keyed_scalars(evidence.results):
            if key and names_other(key, rule):
                continue
            if said_in(value, str(scalar), kind=rule.kind, now=evidence.now) or (
                    _numeric(value, rule) and spoken_number(str(value)) == spoken_number(str(scalar))):
                return True
    return False


_MOMENTS = (ValueKind.TIME, ValueKind.DATE, ValueKind.DATETIME)  # the desk's hours serve anyone
_A_NAME = frozenset("name names surname firstname lastname fullname person who contact holder".split())


def _meant(value: Any, record: str, rule: Rule, evidence: Evidence) -> bool:
    """Of the record's values in this role, is this the one meant (`record.singled_out`)? ("19" of "LK19 XRT" is none)"""
    runs = codes_in(record, pauses=False) if rule.kind is ValueKind.CODE else []
    if any(a <= start and end <= b and squash(code) != squash(str(value)) for start, end in _spans(value, record, rule)
           for a, b, code in runs):
        return False
    spans, role = _spans(value, record, rule), on_file(value, record, rule)
    if rule.form is not None and not role:
        return False  # not of the form the schema shows, none of the role's ("4" for "e.g. CV-1188")
    fresh = rule.fresh and rule.kind is not ValueKind.CODE  # a pet's id books it; not its booking's size
    if fresh and not (spans := outside_lists(spans, record, counts=rule.kind is ValueKind.NUMBER)):
        return False  # a new booking's values are none of the bookings' on file
    role = outside_lists(role, record) if fresh else role
    return singled_out(spans, role, record, evidence.said, {*name_words(rule.name), *rule.rivals, *rule.tool}, evidence.now)


def pointed_at(value: Any, rule: Rule, evidence: Evidence) -> str | None:
    """The record's one code in this role, of the value's form, the caller's words point at
    (`record.the_one_meant`); none where the caller said one of their own (in this role, or one no
    count could be: "the reg is Y-R-six-eight, space, K-L-O")."""
    record, own = as_record(evidence.instructions), {*name_words(rule.name), *rule.rivals, *rule.tool}
    if rule.kind is not ValueKind.CODE or a_stranger(evidence.said, evidence.instructions) or any(role_here(f, span, rule) for f in map(folded, evidence.said)
                                              for span in spans_of_numbers(f)) or any(
            unmistakable(f[a:b]) and role_here(f, (a, b), rule) is not False
            for f in map(folded, evidence.said) for a, b, _ in codes_in(f)):
        return None
    meant = the_one_meant(on_file(value, record, rule), record, evidence.said, own, evidence.now)
    # of about as many digits as the model's: "4471-2290" is no "15.00", "123-456-7890" no "11+"
    counts = sorted(sum(ch.isdigit() for ch in str(v)) for v in (value, meant or ""))
    return meant if counts[0] * 2 > counts[1] else None


def refusal(spec: ToolSpec, missing: list[str]) -> dict[str, Any]:
    """The tool error the model reads instead of a result: nothing was done; ask the caller."""
    names = " and ".join(missing)
    return {"status": "not_run", "error": "arguments not given by the caller",
            "message": f"{spec.name} was not run: the caller has not said the {names}. Ask the "
                       f"caller for the {names}; never guess them."}


# --- matching --------------------------------------------------------------------------------------

def _in_text(value: Any, text: str, rule: Rule, evidence: Evidence, asked: str, *, caller: bool) -> bool:
    """Is the value in this text, as its kind is said, and in its role where it is a number?"""
    assert rule.kind is not None
    text = folded(text)
    if _numeric(value, rule):  # a count of people may be said as them: "me and my cousin" (`people`)
        return _number_in(value, text, rule, evidence, asked, caller=caller) or caller and counted(value, rule, text)
    if rule.choices:
        return choice_said(str(value), rule.choices, text, besides=name_words(rule.name))
    return said_in(value, text, kind=rule.kind, now=evidence.now)


def _caller_named(rule: Rule, evidence: Evidence) -> bool:
    """The caller said when, a day or a time of their own: the instructions' hours and dates ("open
    until 18:00", "today is June 3") are then no source for a time or a date ("Saturday at eight"
    is not today at 18:00)."""
    if rule.kind not in (ValueKind.TIME, ValueKind.DATE, ValueKind.DATETIME):
        return False
    return any(moments(words(text), evidence.now) for text in evidence.said)


def _numeric(value: Any, rule: Rule) -> bool:
    """A count, a price, or an id with digits: a value whose role the words around it give."""
    return spoken_number(str(value)) is not None if rule.kind is ValueKind.NUMBER \
        else rule.kind is ValueKind.CODE and any(ch.isdigit() for ch in str(value))


def _number_in(value: Any, text: str, rule: Rule, evidence: Evidence, asked: str, *,
               caller: bool) -> bool:
    """A number said in its role. The nearest word around it that names an argument decides
    (this one's: yes; another's: no). A number no word names takes the role of the agent's
    question it answers ("What's the order number?" - "It's 5521"); with no question, it may be
    any argument only while it is the only number the caller has said in the call: among two,
    an unmarked one is exactly where a small model swaps them, unless the tool takes no other
    number and this one is a code no count or price could be (`unmistakable`: "S W two two
    eight one, six six oh, four nine one" among "three parcels"). The instructions' numbers are
    the deployment's, written with their labels: an unmarked one there is taken as given."""
    return any(accepts(text, span, rule, evidence, asked, caller=caller)
               for span in _spans(value, text, rule) if not (caller and a_piece_said(str(value), span, text)))


def accepts(text: str, span: tuple[int, int], rule: Rule, evidence: Evidence, asked: str, *,
            caller: bool) -> bool:
    """Is the number at text[span] this argument's, by the words around it (`_number_in`)?"""
    if _priced(text[span[0]:span[1]]) or written_as_money(text, span):
        return rule.money  # "23.99", "sixty four dollars fifty", "£120": said as money, and only money
    role = role_here(text, span, rule)
    if not caller:  # the deployment's text names what its numbers are: an unnamed one is no source,
        # bar a code of the form the argument's own example shows ("e.g. FRE-A1-TUE": MAN-A1-TUE)
        return role is True or role is None and rule.form is not None and code_form(text[span[0]:span[1]]) == rule.form
    if role is not True and rule.form is not None and lettered(said := text[span[0]:span[1]]) and code_form(said) == rule.form:
        role = True  # "the fairy lights to M-4405": a code in the argument's own form is its, whatever is near
    if role is not None or (role := put_right(asked, text, span, rule)) is not None:
        return role  # a correction of a read-back: the new number takes the old one's role
    if rule.kind is ValueKind.CODE and text == folded(evidence.said[-1]) and lettered(text[span[0]:span[1]]) \
            and sum(lettered(text[a:b]) for a, b, _ in codes_in(text)) == 1:
        return True  # "It's six oh four seven four, SN-60474": the last words' one code with letters
    question = question_role(asked, rule)
    return question is True or (question is None and (_numbers_said(evidence) <= 1 or rule.lone
                                                      and unmistakable(text[span[0]:span[1]])
                                                      or number_role.the_one_unclaimed(evidence.said, text, span, rule)))


def _priced(said: str) -> bool:
    return bool(_PRICE.fullmatch(said.strip("$€£ "))) or bool({stem(w.text) for w in words(said)} & MONEY_MARKS)


def _spans(value: Any, text: str, rule: Rule) -> list[tuple[int, int]]:
    """Where the text says this number (characters start, end)."""
    if rule.kind is ValueKind.CODE:  # not a time of day ("about seven this morning" is no reading 7)
        found = code_said(str(value), text)
        return [] if found is None or not rule.cues & TIME_CUES and any(
            n.clock and n.start <= found[0] and found[1] <= n.end for n in numbers_said(text)) else [found]
    wanted = spoken_number(str(value))
    return [(n.start, n.end) for n in numbers_said(text)
            if wanted in n.values and not (n.clock and not rule.cues & TIME_CUES)]


def _numbers_said(evidence: Evidence) -> int:
    """How many numbers (not times of day, nor a kind: "nine-kilogram") the caller has said in the call."""
    return sum(1 for text in map(folded, evidence.said) for n in numbers_said(text) if not n.clock and not n.joined)


