"""What the call has given so far, before any call is written: the required arguments a tool
still lacks (`lacking`), and the ids an agent's sentence states that nobody gave (`stated_ids`).

`provenance.trace` judges a value the model wrote; these judge what could be written. The tool
choice (`choice.offered`) keeps a tool out of the model's reach while a required argument has no
candidate at all (no time said for a booking's time, no number said that its words could make
an id), so a small model asks instead of inventing; the question back names what is lacking
(`ask.question`). A candidate is judged by kind, from the argument's sources:
- a number or an id: a number (or a word with a digit) the caller said that the words around it
  name as this argument, or that answers the agent's question for it, or, where no other
  argument could take it, a lone unnamed one; one the instructions label as this one; an earlier
  result's field;
- a name: a capitalised word the caller said inside a sentence (Whisper writes names so), a
  result's value, or the instructions where they use the argument's own words ("patient" for
  `patient_name`);
- a time or a date: a day or a time of day the caller or a result named ("tomorrow", "six pm");
- an address or prose: anything the caller said.
Nothing here knows a domain: the words come from the tool's own schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .evidence import Evidence
from .number_role import folded, keyed_scalars, names_other, question_role, role_here
from .provenance import Rule, accepts, pointed_at, rules, spans_of_numbers
from .record import as_record
from .schema import ToolSpec
from .spoken import Source, ValueKind, said_in
from .spoken.codes import code_said, codes_in
from .spoken.kinds import stem
from .spoken.times import moments
from .spoken.words import sentences, words

# A capitalised word after a sentence's first word ("the name is Patel"), not "I", "I'm", "I'd"
_PROPER = re.compile(r"(?<=\s)(?!I\b|I'[a-z]+\b)[A-Z][a-zA-Z'-]+")
_TIMES = (ValueKind.TIME, ValueKind.DATE, ValueKind.DATETIME)


def with_unsettled(rows: Iterable[Any], evidence: Evidence) -> Evidence:
    """The evidence, with the arguments of each unsettled ledger row (`Ledger.unsettled`: an effect
    whose outcome a crash left unknown) the caller's words point at by one of its numbers ("my
    refund, order forty four seventeen"): its call may be made again, and the ledger answers
    whether it went through. Another caller's row, or one nobody named, gives nothing."""
    pointed = [row.arguments for row in rows if any(
        any(ch.isdigit() for ch in str(value)) and any(code_said(str(value), text) for text in evidence.said)
        for value in row.arguments.values() if isinstance(value, str | int))]
    return replace(evidence, results=[*evidence.results, *pointed]) if pointed else evidence


def lacking(spec: ToolSpec, evidence: Evidence) -> list[str]:
    """The required arguments (by name) nothing given so far could fill."""
    return [name for name, rule in rules(spec).items()
            if rule.required and rule.traced and not _candidate(rule, evidence)]


def offers_value(spec: ToolSpec, text: str, evidence: Evidence, *,
                 loose: tuple[ValueKind, ...] = (ValueKind.TEXT,)) -> bool:
    """Do these words (one turn) give a value one of the tool's arguments could take: a time for
    its time, a number its words could make its id? ("No, make it six thirty" for a booking.)
    `loose`: the kinds any words could fill, which count for nothing here."""
    turn = Evidence(said=[text], asked=[""], now=evidence.now)
    return any(rule.traced and rule.kind not in loose and _candidate(rule, turn)
               for rule in rules(spec).values())


def stated_ids(text: str, specs: Iterable[ToolSpec], evidence: Evidence) -> list[tuple[ToolSpec, str]]:
    """The ids (tool, argument) an agent's words state that nobody gave: asked "Where is my
    order?", Qwen2.5-0.5B said "The order number is 4417." (its schema's example). An id is a
    number the words around it name as a tool's id argument ("order number 4417" for an
    `order_id`); given means given anywhere (the caller, a result, the instructions), in any role:
    words act on nothing, and a read-back of a number the caller left unmarked is not dropped."""
    out: list[tuple[ToolSpec, str]] = []
    text = folded(text)  # "its last four digits" states no number
    for spec in specs:
        for name, rule in rules(spec).items():
            if rule.kind is not ValueKind.CODE or not rule.traced:
                continue
            for span in spans_of_numbers(text):
                if role_here(text, span, rule) is not True:
                    continue
                if not _anywhere(text[span[0]:span[1]], evidence):
                    out.append((spec, name))
                    break
    return out


def _anywhere(value: str, evidence: Evidence) -> bool:
    """Is this id in anything given, in any role?"""
    texts = [*evidence.said, evidence.instructions, *(str(v) for _, v in keyed_scalars(evidence.results))]
    return any(said_in(value, text, kind=ValueKind.CODE) for text in texts if text)


def _candidate(rule: Rule, evidence: Evidence) -> bool:
    """Could anything given so far be this argument's value?"""
    if Source.RESULT in rule.sources and any(
            not (key and names_other(key, rule)) and _could_be(rule, value)
            for key, value in keyed_scalars(evidence.results)):
        return True
    said = evidence.said if Source.CALLER in rule.sources else []
    instructions = evidence.instructions if Source.INSTRUCTIONS in rule.sources else ""
    if rule.kind in _TIMES:
        return any(moments(words(text), evidence.now) for text in said)
    if rule.kind in (ValueKind.NUMBER, ValueKind.CODE):
        for i, text in enumerate(folded(t) for t in said):
            asked = evidence.asked[i] if i < len(evidence.asked) else ""
            for span in spans_of_numbers(text):
                # an id no word names fills this argument only where it has no rival: "I paid
                # sixty four fifty" could be an order or a card, and is neither yet; a count or
                # a price may ("a table for four"), and the guard judges the call made
                if (role_here(text, span, rule) is not None or not rule.rivals
                        or rule.kind is ValueKind.NUMBER) and \
                        accepts(text, span, rule, evidence, asked, caller=True):
                    return True
                if _question(asked, rule) and accepts(text, span, rule, evidence, asked, caller=True):
                    return True
        if instructions and any(role_here(instructions, span, rule) is True
                                for span in spans_of_numbers(instructions)):
            return True
        # an entry on file no word names in this role, which the caller's words point at
        # ("Could we move Friday's inspection?": "inspection I-2291 on Friday, June 5")
        record = as_record(instructions)
        return bool(record) and rule.kind is ValueKind.CODE and any(
            pointed_at(record[a:b], rule, evidence) for a, b, code in codes_in(record, pauses=False)
            if any(ch.isdigit() for ch in code) and any(ch.isalpha() for ch in code))
    if rule.kind is ValueKind.NAME:
        if any(_PROPER.search(sentence) for text in said for sentence in sentences(text)):
            return True
        named = {stem(w.text) for w in words(instructions)}
        return bool(named & (rule.cues - rule.rivals))
    return any(text.strip() for text in said)  # an address, prose: the caller said something


def _question(asked: str, rule: Rule) -> bool:
    """Did the agent's last question ask for this argument ("What's the order number?")?"""
    return question_role(asked, rule) is True


def _could_be(rule: Rule, value: Any) -> bool:
    """Could a result's value be one of this kind (a number for a count, a digit in an id)?"""
    if rule.kind is ValueKind.NUMBER:
        return isinstance(value, int | float) or bool(re.fullmatch(r"\$?\d[\d,]*(\.\d+)?", str(value)))
    if rule.kind is ValueKind.CODE:
        return any(ch.isdigit() for ch in str(value)) or bool(re.fullmatch(r"[A-Z0-9-]{3,}", str(value)))
    return isinstance(value, str)
