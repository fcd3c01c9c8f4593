"""Did the caller hear an effect confirmed? Judged from the words actually played.

Whichever response said it (a reply to a tool result, a reminder, or the answer to "did that go
through?"), a finished side effect counts as told only when the heard words state it:

- committed: within one or two adjacent sentences, the outcome is stated as done ("went
  through", "is on its way") and every fact the tool names is named as it would be spoken: an
  amount ("64.50", "$64.50", "64.50 dollars", "sixty-four fifty", "sixty-four dollars and fifty
  cents"), digits ("9075", "nine zero seven five", "ninety seventy-five"; a long number by its
  last four), anything else as written;
- failed: a sentence states the failure ("did not go through", "was declined");
- words that leave the outcome open ("still processing", "can't tell yet") never confirm, and a
  sentence that says it failed never confirms a committed effect.

Which facts, the tool says (`ToolSpec.tells`, phrases with fields in braces: "{amount} dollars",
"to the card ending {card_last4}"), whatever its domain; each value comes from the row's result
(what actually moved) before its arguments (what was asked). A tool that names none is told by
its outcome alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from .ledger_rows import Row
from .spoken.clock import said_clock
from .spoken.times import time_said

Tells = tuple[str, ...]  # `ToolSpec.tells`: the phrases that state an effect, its fields in braces
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")  # a time of day as a schema writes it
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_MONEY = re.compile(r"[$€£]?\s*\d[\d,]*\.\d{1,2}|[$€£]\s*\d[\d,]*|\d{1,3}")  # "64.50", "$42", "20"
_DONE = re.compile(r"\b(went|gone|go|goes|is|are|been) through\b|\bdone\b|\bcomplete(d)?\b|\bprocessed\b"
                   r"|\bissued\b|\bsent\b|\bon (its|their|the) way\b|\bsucceeded\b"
                   r"|\bsuccessful(ly)?\b|\bconfirmed\b|\bbooked\b|\breserved\b|\bscheduled\b|\bwent (back )?to\b|\bwent out\b|\bmoved\b")
_NEGATED = re.compile(r"\bnot\b|\bnever\b|n't\b|\bcannot\b")
_FAILED_WORDS = re.compile(r"\b(declined|failed|refused|rejected|bounced|unsuccessful|denied)\b")
_OPEN = re.compile(r"\bstill\s+(processing|pending|going|in progress|waiting|working|checking)\b"
                   r"|\bnot\s+(yet|sure)\b|\b(can't|cannot|can not|couldn't|could not)\s+(yet\s+)?tell\b"
                   r"|\b(don't|doesn't|do not|does not)\s+(yet\s+)?know\b|\b(may|might)\s+still\b"
                   r"|\bpending\b|\bunknown\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[a-z]+")

_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = {w: 10 + i for i, w in enumerate(
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000}
_DIGIT_ZERO = {"oh", "o"}  # "nine oh seven five": a zero, but only inside a run of digits


@dataclass(frozen=True)
class Verdict:
    """Whether the heard words confirm a row's outcome, and if not, what was missing."""

    told: bool
    why: str


def confirms(row: Row, heard: str, tells: Tells = ()) -> Verdict:
    """Do these heard words state this finished effect's outcome (and its facts, `tells`)?"""
    # a question states nothing: "did that go through?" is not "that went through"
    sentences = [s for s in _SENTENCE_END.split(heard.lower().replace("-", " "))
                 if s.strip() and not s.rstrip().endswith("?")]
    if row.state == "failed":
        if any(_states_failure(s) and not _OPEN.search(s) for s in sentences):
            return Verdict(True, "the failure was heard")
        return Verdict(False, "no heard sentence says it did not go through")
    if row.state != "committed":
        return Verdict(False, f"it is {row.state}: only a finished effect can be told")
    needed = facts(row, tells)
    windows = sentences + [a + " " + b for a, b in zip(sentences, sentences[1:], strict=False)]
    missing = "no heard sentence says it went through"
    for text in windows:
        if not _DONE.search(text) or _states_failure(text) or _OPEN.search(text):
            continue
        unheard = [name for name, value in needed.items() if not _heard(value, text)]
        if unheard:
            missing = f"the {unheard[0]} {needed[unheard[0]]} was not heard"
            continue
        return Verdict(True, "the outcome and its facts were heard")
    return Verdict(False, missing)


def claims_done(sentence: str) -> bool:
    """The sentence says something went through ("Yes, it went through."), not that it may or
    did not, and asks nothing."""
    text = sentence.lower().replace("-", " ").strip()
    return (bool(_DONE.search(text)) and not text.endswith("?") and not _NEGATED.search(text)
            and not _OPEN.search(text) and not _states_failure(text))


def statement(row: Row, tells: Tells = ()) -> str | None:
    """The sentence that tells this finished effect, its facts as `confirms` reads them: what the
    session says after a reply about the effect that did not state it ("The refund was committed
    and succeeded." names none of them). Each phrase of `tells` whose fields the row holds is
    said, in order ("{amount} dollars", "to the card ending {card_last4}": "That went through:
    64.50 dollars to the card ending 9075."). None for an effect not yet finished."""
    if row.state == "failed":
        return "I'm sorry, that did not go through."
    if row.state != "committed":
        return None
    values = facts(row, tells)
    kept = [phrase for phrase in tells if all(n in values for n in _fields(phrase))]
    if not kept:
        return "That went through."
    said = " ".join(p.format(**{n: _spoken(values[n]) for n in _fields(p)}) for p in kept)
    # "That went through: 64.50 dollars ...", but "That went through to the card ending 1234."
    return f"That went through{': ' if kept[0].startswith('{') else ' '}{said}."


def facts(row: Row, tells: Tells = ()) -> dict[str, str]:
    """The values the caller must hear (each field `tells` names), from what moved (the result)
    before what was asked (the arguments)."""
    out: dict[str, str] = {}
    for name in dict.fromkeys(n for phrase in tells for n in _fields(phrase)):
        for source in (row.result or {}, row.arguments):
            value = next((v for k, v in _flat(source) if k == name.lower()), None)
            if value not in (None, "") and not isinstance(value, bool | dict | list):
                out[name] = str(value)
                break
    return out


def spoken_amounts(text: str) -> set[Decimal]:
    """Every amount these words can mean: "64.50", "sixty-four fifty", "64 dollars and 50 cents"."""
    found: set[Decimal] = set()
    tokens = _TOKEN.findall(text.lower().replace("-", " "))
    for run, after in _number_runs(tokens):
        values = [v for v, _ in run]
        found.update(values)
        for (a, a_text), (b, _) in zip(run, run[1:], strict=False):
            if b == int(b) and 10 <= b <= 99 and "." not in a_text:  # "sixty-four fifty"
                found.add(a + b / 100)
        if len(run) == 1 and after[:1] == ["point"]:
            cents = _number_runs(after[1:])
            if cents and cents[0][0]:
                digits = "".join(t for _, t in cents[0][0])
                found.add(values[0] + Decimal("0." + digits))
    # "64 dollars and 50 cents", "sixty four dollars fifty"
    runs = _number_runs(tokens)
    for (run, after), (next_run, _) in zip(runs, runs[1:], strict=False):
        if after[:1] in (["dollars"], ["dollar"], ["euros"], ["euro"], ["pounds"], ["pound"]):
            between = after[1:2]
            if between in ([], ["and"]) or _is_number(between[0] if between else ""):
                found.add(run[-1][0] + next_run[0][0] / 100)
    return found


def spoken_digit_runs(text: str) -> list[str]:
    """Digit strings as spoken: "nine zero seven five" and "ninety seventy-five" are "9075"."""
    tokens = _TOKEN.findall(text.lower().replace("-", " "))
    runs: list[str] = []
    for run, _ in _number_runs(tokens, digits_context=True):
        runs.append("".join(t for _, t in run))
        runs.extend(t for _, t in run)
    return runs


def spoken_tokens(text: str) -> list[str]:
    """The words in order, each spoken number as its digits, one token a number: "order A one two
    three four" is order, a, 1, 2, 3, 4; "forty four seventeen" is 44, 17; "A1234" is a, 1234."""
    tokens = _TOKEN.findall(text.lower().replace("-", " "))
    out: list[str] = []
    i, in_run = 0, False
    while i < len(tokens):
        taken = _read_number(tokens, i, in_run=in_run)
        if taken is None:
            out.append(tokens[i])
            i, in_run = i + 1, False
        else:
            _, digits, i = taken
            out.append(digits)
            in_run = True
    return out


# --- reading numbers --------------------------------------------------------------------------------

def _number_runs(tokens: list[str], *, digits_context: bool = False
                 ) -> list[tuple[list[tuple[Decimal, str]], list[str]]]:
    """Runs of consecutive numbers: [(value, as written in digits)], and the tokens after the run."""
    out: list[tuple[list[tuple[Decimal, str]], list[str]]] = []
    i = 0
    while i < len(tokens):
        run: list[tuple[Decimal, str]] = []
        while i < len(tokens):
            taken = _read_number(tokens, i, in_run=bool(run) or digits_context)
            if taken is None:
                break
            value, text, i = taken
            run.append((value, text))
        if run:
            out.append((run, tokens[i:i + 3]))
        else:
            i += 1
    return out


def _read_number(tokens: list[str], i: int, *, in_run: bool) -> tuple[Decimal, str, int] | None:
    """One number at tokens[i]: a digit string, or number words up to where a new number starts."""
    token = tokens[i]
    if token[0].isdigit():
        plain = token.replace(",", "")
        try:
            return Decimal(plain), plain, i + 1
        except InvalidOperation:
            return None
    if in_run and token in _DIGIT_ZERO:
        return Decimal(0), "0", i + 1
    if not _is_number(token):
        return None
    total, current, j = 0, 0, i
    last = ""  # what the previous word was: "unit", "teen", "tens" or "scale"
    while j < len(tokens) and _is_number(tokens[j]) and not tokens[j][0].isdigit():
        word = tokens[j]
        if word in _SCALES:
            if last in ("", "scale"):
                break
            current = max(current, 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0
            last = "scale"
        elif word in _TENS:
            if last in ("unit", "teen", "tens"):
                break  # "sixty four fifty": fifty starts a new number
            current, last = current + _TENS[word], "tens"
        elif word in _TEENS:
            if last in ("unit", "teen", "tens"):
                break
            current, last = current + _TEENS[word], "teen"
        else:
            if last in ("unit", "teen") or (last == "tens" and current % 10):
                break  # "nine zero seven five": one digit each
            current, last = current + _UNITS[word], "unit"
        j += 1
    if j == i:
        return None
    value = total + current
    spelled = str(value) if not (last == "unit" and j - i == 1) else str(_UNITS[tokens[i]])
    return Decimal(value), spelled, j


def _is_number(token: str) -> bool:
    return token[:1].isdigit() or token in _UNITS or token in _TEENS or token in _TENS or token in _SCALES


def _states_failure(sentence: str) -> bool:
    """ "did not go through", "could not be processed", "was declined"."""
    if _FAILED_WORDS.search(sentence):
        return True
    for done in _DONE.finditer(sentence):
        if _NEGATED.search(sentence[max(0, done.start() - 24):done.start()]):
            return True
    return False


def _flat(value: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    for key, item in value.items():
        if isinstance(item, dict):
            yield from _flat(item)
        else:
            yield key.lower(), item


def _decimal(value: Any) -> Decimal | None:
    found = re.search(r"\d[\d,]*(?:\.\d+)?", str(value))
    return Decimal(found.group().replace(",", "")) if found else None


def _fields(phrase: str) -> list[str]:
    return _PLACEHOLDER.findall(phrase)


def _heard(value: str, text: str) -> bool:
    """Is this fact in the heard words, as speech says it: an amount by value ("sixty-four
    fifty"), digits in a run of spoken digits (a long number by its last four, as a card or an
    account is read out), anything else as written?"""
    if _CLOCK.fullmatch(value.strip()):
        return time_said(value.strip(), text, None) not in (None, False)  # "18:30" heard as "6:30 PM"
    amount = _decimal(value) if _MONEY.fullmatch(value.strip()) else None
    if amount is not None and amount in spoken_amounts(text):
        return True
    digits = re.sub(r"\D", "", value)
    if digits and len(digits) >= len(value.replace(" ", "").replace("-", "")) - 4:
        tail = digits[-4:] if len(digits) > 6 else digits
        if any(tail in run for run in spoken_digit_runs(text)):
            return True
    return value.strip().lower().replace("-", " ") in text


def _spoken(value: str) -> str:
    """A fact as the session says it: a time of day as a person says it ("6:30 PM"), an amount
    without a currency sign or needless cents ("64.50", "42"), a long number by its last four
    digits, anything else as it is."""
    if (clock := _CLOCK.fullmatch(value.strip())) is not None:
        return said_clock(int(clock.group(1)) * 60 + int(clock.group(2)))
    if _MONEY.fullmatch(value.strip()) and (amount := _decimal(value)) is not None:
        return f"{amount:.2f}" if amount != amount.to_integral_value() else f"{int(amount)}"
    digits = re.sub(r"\D", "", value)
    if len(digits) > 6 and len(digits) >= len(re.sub(r"[\s-]", "", value)) - 4:
        return digits[-4:]
    return value
