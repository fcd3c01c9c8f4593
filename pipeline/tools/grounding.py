"""A side effect runs only on what the caller gave: the grounding guard.

A small model invents: asked nothing, it refunds 100.00 on order "12345". Before a
side-effecting tool runs, each of its identifying arguments must be found in what the caller
said in this call (the transcripts of their turns, or text they typed) or in an earlier tool
result; a call with one that is not is refused back to the model as a tool error that tells it
to ask the caller, and nothing reaches the ledger.

Found means found as Whisper writes it (`confirms.spoken_tokens`, `confirms.spoken_amounts`):
- an amount (a number, or a string that is one: "64.50", "$20") among the amounts the words
  can mean: "64.50", "sixty four fifty", "64 dollars and 50 cents", "one hundred and twenty";
- an id, card digits or any value with a digit, letters and digits alike, as consecutive
  tokens of the words: "A1234" in "A one two three four", "A-1234" or "a 1 2 34"; "4417" in
  "forty four seventeen";
- a date (YYYY-MM-DD) by its month's name and its day ("December fifth", "the 5th of
  December"); a time (HH:MM) by its hour and minutes ("seven thirty", "19:30", "7 o'clock");
- other text (a name) as the same words in the same order.

Found also means found AS THAT THING. "A refund to my card ending 1234" holds "1234", but as card
digits: an order id of "1234" is not grounded by it. An argument named like an order (`order_id`,
`booking`, `reference`), a card (`card_last4`, `account`) or an amount (`amount`, `total`) has
that role, and a number the caller said has the roles its words give it:
- an order: "order", "order number", "booking", "reference", "#" before it (the nearest such
  word, within five; or after it, "4417 is my order number", when nothing before it says what
  it is and the next number does not have that word as its own);
- a card: "card", "card ending", "ends in", "last four", "digits", "account" the same way;
- money: "$" before it, "dollars", "bucks", "cents" after it, or a decimal ("64.50"); money is
  not also an order unless the word is right before it ("the order was forty dollars": money);
  "sixty four fifty" is how Whisper writes a price and an id alike ("forty four seventeen"), so
  with no money word it is an amount only as the call's one number;
- a number with no cue of its own, said in answer to the agent's question ("What's the order
  number?" - "It's 5521"), has the roles that question asks for.
A number with no role at all is accepted for any role only when it is the only number the caller
has said in the call: then there is nothing for it to be confused with, and refusing "refund
4417" for want of the word "order" would only make the caller repeat themselves. With two or more
numbers, an unmarked one is exactly where a small model swaps them, so it grounds no role. An
earlier result's value has the role of the field that holds it (`{"order_id": "5120"}`), or any
role in a field that names none. Arguments with no role (a name, a date, a party size) are
checked as before.

An identifying argument left blank ("order_id": "", which Qwen wrote once refused) is refused
like an invented one: a blank order is not one the caller gave.

Which arguments identify: those a tool names (`ToolSpec.grounded`); by default every argument
of a side-effecting tool that is not spoken, not a boolean and not an enum, and is a number, has a
digit in it, or is named like an id, amount, card, account, name, date or time.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from .confirms import spoken_amounts, spoken_tokens
from .evidence import Evidence, as_amount, hundred_and
from .roles import (
    MAX_SPAN,
    SENTENCE,
    cue_text,
    find_mentions,
    role_of,
    span_overlaps,
    squash,
)
from .schema import ToolSpec

_IDENTIFYING = re.compile(r"(^|_)(id|ids|order|orders|amount|total|card|last4|digits|account|iban|"
                          r"name|names|date|day|time|phone|email|number|reference|ref|booking|"
                          r"reservation|room|sku|code)($|_)", re.I)
_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?$")
_MONTHS = ("january february march april may june july august september october november "
           "december").split()


def identifying(spec: ToolSpec) -> tuple[str, ...]:
    """The arguments of this tool that must be grounded (none for a tool without side effects)."""
    if spec.grounded is not None:
        return spec.grounded
    if not spec.side_effect:
        return ()
    out = []
    for name, prop in spec.parameters.get("properties", {}).items():
        if name in spec.spoken or "enum" in prop or prop.get("type") == "boolean":
            continue
        kind = prop.get("items", {}).get("type") if prop.get("type") == "array" else prop.get("type")
        if kind in ("number", "integer") or _IDENTIFYING.search(name):
            out.append(name)
        elif kind == "string":
            out.append(name)  # checked only where its value has a digit (`_needs_grounding`)
    return tuple(out)


def ungrounded(spec: ToolSpec, arguments: dict[str, Any], evidence: Evidence) -> list[str]:
    """The identifying arguments (by name) whose values the evidence does not hold."""
    missing = []
    explicit = spec.grounded is not None
    for name in identifying(spec):
        if name not in arguments:
            continue
        values = arguments[name] if isinstance(arguments[name], list) else [arguments[name]]
        named = explicit or bool(_IDENTIFYING.search(name))
        role = role_of(name)
        for value in values:
            if named and isinstance(value, str) and not value.strip():
                missing.append(name)  # an order id left blank is no more given than a made-up one
                break
            if _needs_grounding(value, named=named) and not grounded(value, evidence, role=role):
                missing.append(name)
                break
    return missing


def groundable(spec: ToolSpec, evidence: Evidence) -> bool:
    """Could a call of this tool be made on what the caller said (`not_given` is empty)? The
    session's tool choice offers no other (`choice`): the model asks for what is missing
    instead of inventing it."""
    return not not_given(spec, evidence)


def not_given(spec: ToolSpec, evidence: Evidence) -> list[str]:
    """The required arguments (by name) the caller has given nothing for: an order, a card or an
    amount (`role_of`) the caller never said a number as (and no earlier result holds one under
    such a name), a person's name when they said none (a capitalised word inside a sentence:
    Whisper writes names so). What the agent asks for when the model reaches for the tool
    anyway (`ask.question`)."""
    needed: dict[str, str] = {}
    for name in spec.required:
        if name in spec.spoken:
            continue
        role = "name" if _PERSON.search(name) else role_of(name)
        if role is not None:
            needed[name] = role
    if not needed:
        return []
    have = {role for _tokens, mentions in evidence.mentions() for m in mentions for role in m.roles}
    have |= {role for key, _value in _keyed_scalars(evidence.results) if (role := role_of(key))}
    if any(_PROPER.search(sentence) for text in evidence.said for sentence in SENTENCE.split(text)):
        have.add("name")
    have |= {"name" for key, _value in _keyed_scalars(evidence.results) if _PERSON.search(key)}
    return [name for name, role in needed.items() if role not in have]


# A person's name as an argument, and as the caller says one: a capitalised word after the
# sentence's first word ("the name is Patel"), not "I", "I'm", "I'd", "I'll", "I've".
_PERSON = re.compile(r"(^|_)(name|surname|last_name|first_name|guest)($|_)", re.I)
_PROPER = re.compile(r"(?<=\s)(?!I\b|I'[a-z]+\b)[A-Z][a-z'-]+")


def grounded(value: Any, evidence: Evidence, role: str | None = None) -> bool:
    """Is this one value in the caller's words (as spoken) or an earlier result? With a role
    ("order", "card", "amount"), a number must have been given as that."""
    if isinstance(value, bool) or value is None:
        return True
    if role is not None and any(ch.isdigit() for ch in str(value)):
        return _grounded_as(value, role, evidence)
    amount = as_amount(value)
    if amount is not None and amount in evidence.amounts():
        return True
    text = str(value).strip()
    if (date := _DATE.match(text)) is not None:
        return _date_said(int(date.group(2)), int(date.group(3)), evidence)
    if (time := _TIME.match(text)) is not None:
        return _time_said(int(time.group(1)), int(time.group(2)), evidence)
    return _in_tokens(spoken_tokens(text), evidence.tokens())


def invented_ids(text: str, evidence: Evidence | Callable[[], Evidence]) -> list[str]:
    """The roles ("order", "card") of the ids an agent's words state that nobody gave: asked
    "Where is my order?", Qwen2.5-0.5B said "The order number is 4417." (its schema's example).
    Said at all is enough here (as anything: words act on nothing, and a read-back of a number
    the caller left unmarked is not to be dropped). `evidence` may be made only when needed."""
    out: list[str] = []
    for sentence in SENTENCE.split(cue_text(text)):
        tokens = spoken_tokens(sentence)
        for mention in find_mentions(tokens, frozenset()):
            if not (roles := sorted(mention.roles & {"order", "card"})):
                continue
            if callable(evidence):
                evidence = evidence()
            if not grounded("".join(tokens[mention.start:mention.end]), evidence):
                out += roles
    return out


def refusal(spec: ToolSpec, missing: list[str]) -> dict[str, Any]:
    """The tool error the model reads instead of a result: nothing was done; ask the caller."""
    names = " and ".join(missing)
    return {"status": "not_run", "error": "arguments not given by the caller",
            "message": f"{spec.name} was not run: the caller has not said the {names}. Ask the "
                       f"caller for the {names}; never guess them."}


def is_refusal(output: Any) -> bool:
    return isinstance(output, dict) and output.get("status") == "not_run"


def evidence_from(user_texts: Iterable[str], outputs: Iterable[str],
                  asked: Iterable[str] = (), *, instructions: str = "",
                  now: datetime | None = None) -> Evidence:
    """Evidence from the caller's texts and the JSON outputs of earlier calls; error outputs
    (a refusal names the arguments it refused) ground nothing. `asked`: what the agent said
    before each of the caller's texts, in the same order ("" where nothing)."""
    results: list[Any] = []
    for raw in outputs:
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            value = raw
        if isinstance(value, dict) and ("error" in value or is_refusal(value)):
            continue
        results.append(value)
    pairs = [(t, q) for t, q in itertools.zip_longest(user_texts, asked, fillvalue="") if t]
    return Evidence(said=[t for t, _ in pairs], results=results, asked=[q for _, q in pairs],
                    instructions=instructions, now=now)


# --- roles ---------------------------------------------------------------------------------------

def _grounded_as(value: Any, role: str, evidence: Evidence) -> bool:
    """Was this value given as `role`: by the caller, said as that, or in a result's field of it?"""
    amount = as_amount(value) if role == "amount" else None
    wanted = squash("".join(spoken_tokens(str(value).strip())))
    for key, scalar in _keyed_scalars(evidence.results):
        if role_of(key) not in (None, role):
            continue
        if amount is not None and as_amount(scalar) == amount:
            return True
        if wanted and _in_tokens([wanted], [spoken_tokens(str(scalar))]):
            return True
    said = evidence.mentions()
    alone = sum(len(found) for _, found in said) == 1
    for tokens, found in said:
        for mention in found:
            if mention.roles and role not in mention.roles:
                continue
            if not mention.roles and not alone:
                continue  # an unmarked number among others: which one it is, nobody said
            if amount is not None:
                window = tokens[mention.start:mention.end + 3]
                if amount in spoken_amounts(" ".join(window)) | hundred_and(window):
                    return True
            elif span_overlaps(wanted, tokens, mention):
                return True
    return False


def _keyed_scalars(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _keyed_scalars(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from _keyed_scalars(item, key)
    elif value is not None and not isinstance(value, bool):
        yield key, value


# --- helpers ------------------------------------------------------------------------------------

def _needs_grounding(value: Any, *, named: bool) -> bool:
    """Numbers always; a string when it has a digit or its parameter names an identity."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return True
    text = str(value).strip()
    return bool(text) and (named or any(ch.isdigit() for ch in text))


def _in_tokens(wanted: list[str], haystacks: list[list[str]]) -> bool:
    """Is the value, squashed to letters and digits, some run of consecutive tokens?"""
    target = squash("".join(wanted))
    if not target:
        return True
    for tokens in haystacks:
        squashed = [squash(t) for t in tokens]
        for i in range(len(squashed)):
            joined = ""
            for j in range(i, min(len(squashed), i + MAX_SPAN)):
                joined += squashed[j]
                if joined == target:
                    return True
                if not target.startswith(joined):
                    break
    return False


def _date_said(month: int, day: int, evidence: Evidence) -> bool:
    if not 1 <= month <= 12:
        return False
    name = _MONTHS[month - 1]
    for tokens in evidence.date_words():
        if (name in tokens or name[:3] in tokens) and str(day) in tokens:
            return True
    return _in_tokens([f"{month}", f"{day}"], evidence.tokens())


def _time_said(hour: int, minute: int, evidence: Evidence) -> bool:
    hours = {str(hour), str(hour % 12 or 12)}
    for tokens in evidence.tokens():
        for a, b in zip(tokens, [*tokens[1:], ""], strict=False):
            said_minutes = (b in (f"{minute:02d}", str(minute))) if minute else \
                b in ("oclock", "am", "pm", "")
            if a in hours and said_minutes:
                return True
            if a.replace(".", "") in {f"{h}{minute:02d}" for h in hours}:  # "19:30" read as 1930
                return True
    return False


