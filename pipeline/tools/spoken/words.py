"""Words as a transcript writes them, and the numbers in them as a caller says them.

Whisper writes a number as digits ("42", "4417", "18:00") or as words ("forty-two", "a hundred
and twenty", "four four one seven"), and a caller reads a long number in groups ("forty four
seventeen"). `words` splits a text into tokens that keep their place in it; `number_runs` reads
consecutive numbers, each run with every value its words can mean.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

_TOKEN = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?"  # a date written 6/3 or 06/03/2026
    r"|\d{1,2}:\d{2}(?::\d{2})?"  # a clock time
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 1,200
    r"|\d+(?:\.\d+)?"
    r"|[^\W\d_]+(?:'[^\W\d_]+)*"
    r"|[$€£#@%&+]")
_DIALECT = {"di": "the", "da": "the", "de": "the", "dis": "this", "dat": "that"}  # Caribbean, West African, Shetland
_DROPPED_G = re.compile(r"'(?![^\W\d_])")  # an apostrophe ending a word ("evenin' ")
_BREAK = re.compile(r"[.,;:!?()\[\]\"\u2014\u2013]")  # between two words, a pause a number does not run across
_ORDINAL_SUFFIX = {"st", "nd", "rd", "th"}
# the sounds a caller hesitates with, as Whisper writes them (not "mm", millimetres); "Em" may be a name
_HESITATIONS = frozenset("um umm uh uhh uhm er erm em emm ehm hmm".split())
_NAMES_TOO = frozenset({"em", "emm"})  # ... and a letter ("em en four five six"): one only with a pause after
_PAUSE_AFTER = re.compile(r"\s*(?:[,.;!?\u2014\u2013]|$)")

UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
UNITS |= {"nought": 0, "naught": 0, "twa": 2}  # "twa places", in Scots
TEENS = {w: 10 + i for i, w in enumerate(
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())}
TENS = {w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "dozen": 12}  # "a dozen", "two dozen"
ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split())}
ORDINALS |= {"twentieth": 20, "thirtieth": 30}
_ZERO_IN_RUN = {"oh", "o"}  # "nine oh seven": a zero, but only after another digit
_REPEAT = {"double": 2, "triple": 3}
_TIMES_OVER = {"once": 1, "twice": 2, "thrice": 3}  # how often: "twice a day" gives 2 doses
_HOW_OFTEN = {"a", "an", "per", "every", "each", "daily", "weekly", "monthly", "nightly", "yearly"}


@dataclass(frozen=True)
class Word:
    """One token: `text` lower-cased, `raw` as written, its characters `start:end` in the text,
    whether a pause (punctuation) stands between it and the word before (`after_break`), and
    whether a hyphen joins it to that word (`hyphened`)."""

    text: str
    raw: str
    start: int
    end: int
    after_break: bool = False
    hyphened: bool = False  # joined to the word before by a hyphen ("nine-kilogram")


def fold(text: str) -> str:
    """The text without its accents: "Inis Oírr" is "Inis Oirr", as a schema's `inis_oirr` writes it
    and as Whisper may or may not write it."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def words(text: str) -> list[Word]:
    """The tokens of a text, each knowing where it stands, read without accents ("Siobhán":
    siobhan) and with a dropped g put back ("evenin'": evening), a number's "'s" ("the twelfth's
    better") off, "di", "da", "de" and "dis" in lower case the "the" and "this" they are in Caribbean,
    West African and Shetland English; "5th" stays one token. A hesitation ("um", "em", in lower case) is no word, and
    the commas around it no pause ("at, em, eleven" is "at eleven")."""
    text = text.replace("\u2019", "'")
    out: list[Word] = []
    last_end = 0
    hesitated: bool | None = None  # after a hesitation: whether a pause other than its commas came with it
    for m in _TOKEN.finditer(text):
        raw = m.group()
        gap = text[last_end:m.start()]
        glued = bool(out) and m.start() == last_end  # "5th": no space between
        if glued and raw.lower() in _ORDINAL_SUFFIX and out[-1].text.isdigit():
            prev = out.pop()
            out.append(Word(prev.text + raw.lower(), prev.raw + raw, prev.start, m.end(),
                            prev.after_break))
        else:
            said = fold(raw.lower())
            if _DROPPED_G.match(text, m.end()) and said.endswith("in") and len(said) >= 4 and (
                    raw.islower() or not out or re.search(r"[.!?]", gap)):
                said += "g"  # "evenin'", "Mornin'": the g dropped, not a proper name in quotes ('Robin')
            if raw.islower():
                said = _DIALECT.get(said, said)  # "Saturday di twenty-seventh", "not dis Sunday"
            if said.endswith("'s") and (said[:-2] in ORDINALS or said[:-2] in TENS or said[:-2] in TEENS
                                        or said[:-2] in ("o'clock", "oclock")):
                said = said[:-2]  # "Friday the twelfth's better", "two o'clock's fine": the number, and "is"
            if said in _HESITATIONS and not text[max(0, m.start() - 1):m.start()] == "'" and (  # not "two of 'em"
                    said not in _NAMES_TOO or raw.islower() and _PAUSE_AFTER.match(text, m.end())):
                # "Friday at, em, eleven": the words either side of it run on
                hesitated = hesitated or bool(_BREAK.search(gap.replace(",", "")))
                last_end = m.end()
                continue
            pause = bool(_BREAK.search(gap.replace(",", "") if hesitated is not None else gap))
            out.append(Word(said, raw, m.start(), m.end(), bool(out) and (pause or bool(hesitated)), gap == "-"))
            hesitated = None
        last_end = m.end()
    return out


def is_number_word(text: str) -> bool:
    return text in UNITS or text in TEENS or text in TENS or text in SCALES


def digit_value(text: str) -> Decimal | None:
    """A token written in digits ("42", "1,200", "2.50") as a number; None for anything else."""
    if not text[:1].isdigit() or not re.fullmatch(r"[\d,]*\d(?:\.\d+)?", text):
        return None
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def read_group(ws: list[Word], i: int, *, in_run: bool = False) -> tuple[Decimal, str, int] | None:
    """One number starting at ws[i]: a token in digits, or number words up to where the next
    number starts ("sixty four fifty" is 64 then 50). Returns its value, its digits as the
    caller would key them ("oh" is "0", "one" is "1") and the index after it."""
    if i >= len(ws):
        return None
    token = ws[i].text
    if (value := digit_value(token)) is not None:
        return value, token.replace(",", ""), i + 1
    if in_run and token in _ZERO_IN_RUN and ws[i - 1].text not in SCALES and (
            token == "oh" or i + 1 < len(ws) and is_number_word(ws[i + 1].text)):  # not "a dozen o dem"
        return Decimal(0), "0", i + 1
    if not in_run and token in _TIMES_OVER and (token != "once" or i + 1 < len(ws) and ws[i + 1].text in _HOW_OFTEN):
        return Decimal(_TIMES_OVER[token]), str(_TIMES_OVER[token]), i + 1  # "once a week", not "once I'm in"
    total, current, j, last = 0, 0, i, ""  # last: the previous word's class
    while j < len(ws):
        word = ws[j].text
        if j > i and ws[j].after_break:
            break
        said_is = (in_run or j > i) and word.endswith("'s") and (
            word[:-2] in UNITS or word[:-2] in TEENS or word[:-2] in TENS)  # not "three's pushing it"
        word = word[:-2] if said_is else word  # "three oh eight one five's at": five, then "is"
        if word == "half" and j == i and [w.text for w in ws[j + 1:j + 3]] == ["a", "dozen"]:
            return Decimal(6), "6", j + 3  # "half a dozen"
        if word == "a" and j == i and j + 1 < len(ws) and ws[j + 1].text in SCALES:
            current, last, j = 1, "unit", j + 1  # "a hundred": one hundred
            continue
        if word == "and" and last == "scale" and j + 1 < len(ws) and (
                ws[j + 1].text in UNITS or ws[j + 1].text in TEENS or ws[j + 1].text in TENS):
            j += 1  # "a hundred and twenty"
            continue
        if word in SCALES:
            if last in ("", "scale") and not (last == "scale" and SCALES[word] > current):
                break
            current = max(current, 1) * SCALES[word]
            if SCALES[word] >= 1000:
                total, current = total + current, 0
            last = "scale"
        elif word in TENS:
            if last in ("unit", "teen", "tens"):
                break  # "sixty four fifty": fifty starts a new number
            current, last = current + TENS[word], "tens"
        elif word in TEENS:
            if last in ("unit", "teen", "tens"):
                break
            current, last = current + TEENS[word], "teen"
        elif word in UNITS:
            if last in ("unit", "teen") or (last == "tens" and current % 10):
                break  # "nine zero seven five": one digit each
            current, last = current + UNITS[word], "unit"
        else:
            break
        j += 1
        if said_is:
            break
    if j == i or (ws[j - 1].text == "a"):
        return None
    number = total + current
    return Decimal(number), str(number), j


def read_ordinal(ws: list[Word], i: int) -> tuple[int, int] | None:
    """An ordinal at ws[i] ("3rd", "third", "twenty-first") as its number and the index after."""
    if i >= len(ws):
        return None
    token = ws[i].text
    if (m := re.fullmatch(r"(\d{1,2})(st|nd|rd|th)", token)) is not None:
        return int(m.group(1)), i + 1
    if token in ORDINALS:
        return ORDINALS[token], i + 1
    if token in TENS and i + 1 < len(ws) and ws[i + 1].text in ORDINALS \
            and ORDINALS[ws[i + 1].text] < 10 and not ws[i + 1].after_break:
        return TENS[token] + ORDINALS[ws[i + 1].text], i + 2
    return None


@dataclass(frozen=True)
class NumberRun:
    """Consecutive numbers the caller said with no pause between: ws[start:end] as word indexes,
    `groups` as read (value, keyed digits), and every value the run can mean (`values`)."""

    start: int
    end: int
    groups: tuple[tuple[Decimal, str], ...]
    values: frozenset[Decimal] = field(default=frozenset())

    @property
    def digits(self) -> str:
        """The run keyed digit by digit: "forty four seventeen" is "4417"."""
        return "".join(text for _, text in self.groups)


def number_runs(ws: list[Word]) -> list[NumberRun]:
    """Every run of numbers in the words, with the values it can mean: each group when it is
    alone; the groups keyed one after another ("forty four seventeen": 4417, "two fifty": 250);
    a price read as units and hundredths ("two fifty": 2.50); "three and a half": 3.5."""
    out: list[NumberRun] = []
    i = 0
    while i < len(ws):
        groups: list[tuple[Decimal, str]] = []
        j = i
        while j < len(ws) and (not groups or not ws[j].after_break):
            if ws[j].text in _REPEAT and j + 1 < len(ws) and (
                    taken := read_group(ws, j + 1, in_run=True)) is not None \
                    and len(taken[1]) == 1:
                groups.append((Decimal(taken[1] * _REPEAT[ws[j].text]), taken[1] * _REPEAT[ws[j].text]))
                j = taken[2]
                continue
            taken = read_group(ws, j, in_run=bool(groups))
            if taken is None or groups and taken[2] < len(ws) and ws[taken[2]].hyphened \
                    and not is_number_word(ws[taken[2]].text):
                break  # "six nine-kilogram refills": six of the nine-kilogram kind, not 69
            groups.append((taken[0], taken[1]))
            j = taken[2]
        if not groups:
            i += 1
            continue
        values = set() if len(groups) > 1 else {groups[0][0]}
        if len(groups) > 1 and all(g[1].isdigit() for g in groups):
            values.add(Decimal("".join(g[1] for g in groups)))
        if len(groups) == 2 and groups[1][1].isdigit() and len(groups[1][1]) == 2 \
                and "." not in groups[0][1]:
            values.add(groups[0][0] + groups[1][0] / 100)  # "two fifty": 2.50 as well as 250
        if len(groups) == 1 and [w.text for w in ws[j:j + 3]] == ["and", "a", "half"]:
            values = {groups[0][0] + Decimal("0.5")}  # three and a half is not three
            j += 3
        elif len(groups) == 1 and (cents := _cents_after(ws, j)) is not None:
            values.add(groups[0][0] + cents[0] / 100)  # "sixty four dollars and fifty cents"
            j = cents[1]
        out.append(NumberRun(i, j, tuple(groups), frozenset(values)))
        i = j
    return out


_CURRENCY = {"dollars", "dollar", "bucks", "euros", "euro", "pounds", "pound"}


def _cents_after(ws: list[Word], j: int) -> tuple[Decimal, int] | None:
    """ "dollars fifty", "dollars and fifty cents" after a number: the cents, and the index of
    the word after them (None when the words after it are not that)."""
    if j >= len(ws) or ws[j].text not in _CURRENCY or ws[j].after_break:
        return None
    k = j + 1
    joined = k < len(ws) and ws[k].text == "and"
    k += joined
    taken = read_group(ws, k) if k < len(ws) and not ws[k].after_break else None
    if taken is None or taken[0] >= 100 or "." in taken[1]:
        return None
    end = taken[2]
    said_cents = end < len(ws) and ws[end].text in ("cents", "cent", "pence")
    if joined and not said_cents:
        return None  # "forty dollars and two people"
    return taken[0], end + said_cents


def spoken_number(text: str) -> Decimal | None:
    """A value written as one number ("42", "$42.00", "forty-two", "1,200 USD") as a number;
    None when it is not one number."""
    ws = [w for w in words(text) if w.text not in _NUMBER_DECOR]
    runs = number_runs(ws)
    if len(runs) != 1 or runs[0].start != 0 or runs[0].end != len(ws):
        return None
    run = runs[0]
    if len(run.groups) == 1:
        return run.groups[0][0]
    return Decimal(run.digits) if run.digits.isdigit() else None


_NUMBER_DECOR = {"$", "€", "£", "#", "usd", "eur", "gbp", "dollars", "dollar", "euros", "euro",
                 "pounds", "number", "no"}


_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+")


def sentences(text: str) -> list[str]:
    """The text's sentences (and clauses a semicolon ends), as a transcript punctuates them."""
    return _SENTENCE_BREAK.split(text)


# what follows a day, a time or a choice to turn it down: "Monday is no longer good for me", "the
# sixteenth nah work fi mi", "Friday's no good", "Saturday doesn't suit"
_TURNS_DOWN = re.compile(r"\W*(?:is|'s|are|was)?\s*(?:no longer|not|no|nah|nuh|doesn'?t|don'?t|won'?t|wouldn'?t|"
                         r"can'?t|isn'?t)(?:\s+(?:really|be|going to|gonna|any))*\s+(?:good|work|suit|possible|ok|okay|do)\b",
                         re.I)


def turned_down(after: str) -> bool:
    """Do the words after a value turn it down ("is no longer good", "nah work", "doesn't suit")?"""
    return _TURNS_DOWN.match(after.replace("’", "'")) is not None

