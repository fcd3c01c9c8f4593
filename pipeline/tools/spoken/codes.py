"""A code as a caller spells it: "K7Q2" is "k seven q two", "K 7 Q 2" or "k as in kilo, 7, q, 2".

A code (an id, a reference, a plate, a phone number, an e-mail address) is found when its letters
and digits, case and punctuation aside, are read by consecutive words of the text, each word read
as what a caller means by it: a letter ("k", "kay", "kilo"), digits ("seven", "forty one",
"double seven", "oh" after a digit), a separator said aloud ("dash", "dot", "at"), or itself
("john" in "john dot smith at mail dot com"). The words just before and after must not go on
spelling: "k seven q two three" does not say "K7Q2".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from .times import corrected_between
from .words import Word, is_number_word, number_runs, read_group, words

_LETTER_NAMES = {
    "ay": "a", "bee": "b", "be": "b", "cee": "c", "see": "c", "sea": "c", "dee": "d", "ee": "e",
    "eff": "f", "ef": "f", "gee": "g", "aitch": "h", "haitch": "h", "eye": "i", "jay": "j",
    "kay": "k", "el": "l", "ell": "l", "em": "m", "en": "n", "oh": "o", "pee": "p", "pea": "p",
    "cue": "q", "queue": "q", "ar": "r", "are": "r", "ess": "s", "es": "s", "tee": "t",
    "tea": "t", "you": "u", "vee": "v", "ex": "x", "why": "y", "zed": "z", "zee": "z",
}
_ALPHABET = {  # the spelling alphabet callers and agents read codes in
    "alpha": "a", "alfa": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e",
    "foxtrot": "f", "golf": "g", "hotel": "h", "india": "i", "juliet": "j", "juliett": "j",
    "kilo": "k", "lima": "l", "mike": "m", "november": "n", "oscar": "o", "papa": "p",
    "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t", "uniform": "u", "victor": "v",
    "whiskey": "w", "whisky": "w", "xray": "x", "yankee": "y", "zulu": "z",
}
_SEPARATORS = {"dash", "hyphen", "dot", "point", "slash", "underscore", "space", "at", "and",
               "then", "capital", "uppercase", "lowercase", "small", "letter", "number", "digit"}
_HOMOPHONES = {"to": "2", "too": "2", "for": "4", "won": "1", "ate": "8"}  # only mid-code
_REPEAT = {"double", "triple"}
_SAID_OF_ME = frozenset("meant mean think thought said say need needed want wanted have had am was guess believe "
                        "reckon know wrote put gave booked told just only".split())  # "three I meant": me, no I


def squash(text: str) -> str:
    """Letters and digits only, lower case: what a code is, whatever it is written with."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def code_said(value: str, text: str) -> tuple[int, int] | None:
    """Where (characters start, end) the text says this code, spelled or spoken; None if not."""
    target = squash(value)
    if not target:
        return None
    ws, edges = _read(text)
    for i in range(len(ws)):
        if ws[i].text in _SEPARATORS:
            continue
        for j in _match(target, ws, edges, i, 0):
            if _spells(ws, i - 1) and not ws[i].after_break:
                break  # the code said started earlier: "k k seven" is not "K7"
            if j < len(ws) and _spells(ws, j) and not ws[j].after_break:
                continue  # the code said goes on: "k seven q two three" is not K7Q2
            again = next((k for k in range(j + 1, min(j + 4, len(ws))) if ws[k].text[:1].isdigit() or is_number_word(ws[k].text)), 0)
            if again and corrected_between(ws, j, again):
                continue  # "two two nine one, no, two two nine zero": its end said again otherwise
            return ws[i].start, ws[j - 1].end
    return None


def spelled(value: str) -> str | None:
    """The code a value spells in words, as letters and digits ("S W zero zero six one" is
    "SW0061", "I F three oh nine" is "IF309"); None where a word in it spells nothing (it is a
    phrase, not a code said aloud) or it holds no digit."""
    ws, edges = _read(value)
    out: list[str] = []
    i = 0
    while i < len(ws):
        readings = [(reading, after) for reading, after in edges[i] if reading.isdigit() or len(reading) <= 1
                    or any(ch.isdigit() for ch in ws[i].text) or len(ws[i].text) <= 2
                    or ws[i].text in _REPEAT and reading != ws[i].text
                    or ws[i].raw.isupper() and len(ws[i].raw) <= 3]  # "LK19 XRT": a plate's letters
        if not readings:
            return None
        digits = [r for r in readings if r[0].isdigit()]  # "oh" by a digit is a zero
        by_digit = out and out[-1][-1:].isdigit() or i + 1 < len(ws) and ws[i].text == "oh" and (
            ws[i + 1].text[:1].isdigit() or is_number_word(ws[i + 1].text))
        letters = [r for r in readings if not r[0].isdigit()]  # "K-L-O": an O, not a zero
        if ws[i].text in _PLAIN_NAMES:
            letters.sort(key=lambda r: len(r[0]) != 1)  # "em en": M N, not EMEN
        reading, i = digits[0] if digits and (by_digit or not letters) else letters[0]
        out.append(reading)
    code = "".join(out).upper()
    return code if any(ch.isdigit() for ch in code) else None


@lru_cache(maxsize=64)  # the instructions are read for every argument of every call
def codes_in(text: str, *, pauses: bool = True) -> tuple[tuple[int, int, str], ...]:
    """The codes a text says, each as (characters start, end, the code in letters and digits): a
    run of words that spell ("S W, four four one oh, two nine eight", "oh seven seven double oh,
    nine one two", "W-K-seven-one, H-J-P"), read as `spelled` reads a value; only runs with a digit.
    A pause inside a run is how codes are read out, in groups (`pauses`; in a written list, "5120,
    4417", a comma ends one); a sentence's end, or a word that spells nothing, ends it."""
    ends = _SENTENCE_END if pauses else _PAUSE
    ws = _drop_as_in(words(text))  # "D for delta, eight": one D, and the code goes on
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(ws):
        j = i
        while j < len(ws) and _piece(ws, j) and (j == i or not ends.search(text[ws[j - 1].end:ws[j].start])):
            j += 1
        a, b = i, j
        while a < b and ws[a].text in _RUN_SEPARATORS:
            a += 1
        while b > a and ws[b - 1].text in _RUN_SEPARATORS:
            b -= 1
        while b - a > 1 and ws[a].text in _LABELS and text[ws[a].end:ws[a + 1].start].isspace():
            a += 1  # "student ID 23104876": the label is no part of the code
        if a < b and (code := spelled(text[ws[a].start:ws[b - 1].end])) is not None:
            out.append((ws[a].start, ws[b - 1].end, _said_once(code)))
        i = max(j, i + 1)
    return tuple(out)


def _said_once(code: str) -> str:
    """A code read out, then said again as written ("six oh four seven four, SN-60474": one run,
    60474SN60474): the code once, as written."""
    for k in range(1, len(code)):
        head, tail = code[:k], code[k:]
        if head.isdigit() and any(ch.isalpha() for ch in tail) and "".join(ch for ch in tail if ch.isdigit()) == head:
            return tail
    return code


_RUN_SEPARATORS = {"dash", "hyphen", "space", "slash"}
_LABELS = {"id", "no", "nr", "ref", "pin"}  # a code's label, written before it ("ID 2310", "Ref 44")
# a dash set between words ("CO-3302 — 30 sausage rolls") or a colon ("the bike one: C L, ...")
# ends a code as a sentence's end does
_SENTENCE_END = re.compile(r"[.!?;:\u2014\u2013]")
_PAUSE = re.compile(r"[.!?;:,()\u2014\u2013]")


def _me(ws: list[Word], i: int) -> bool:
    """Is ws[i] the caller saying "I" of themselves ("five one seven three I meant"), not a letter?"""
    return ws[i].raw == "I" and i + 1 < len(ws) and ws[i + 1].text in _SAID_OF_ME


def _piece(ws: list[Word], i: int) -> bool:
    """Can ws[i] be part of a code said aloud: a digit, a number word, a letter, "oh", a spelled
    separator, or a short capitalised group ("SW", "I F")?"""
    w = ws[i]
    if _me(ws, i):
        return False
    return ":" not in w.text and (_spells(ws, i) or w.text in ("oh", "o") or w.text in _RUN_SEPARATORS
                                  or _named_letters(ws, i)
                                  or any(ch.isdigit() for ch in w.text)  # "LK19", "HT4"
                                  or len(w.raw) <= 3 and w.raw.isalpha() and w.raw.isupper())


# letters said by their names that are no everyday word ("bee tee, three one one two oh": BT31120;
# not "see", "you", "are", "be", "tea", "why", which say "to see 3 films", "you two")
_PLAIN_NAMES = frozenset("bee cee dee eff gee aitch haitch jay kay ell em en pee cue ar ess tee vee zed zee".split())


def _named_letters(ws: list[Word], i: int) -> bool:
    """Is ws[i] one of at most three letters said by their names, just before a digit?"""
    j = i
    while j < len(ws) and j - i < 3 and ws[j].text in _PLAIN_NAMES:
        j += 1
    return j > i and _a_digit(ws, j)


Edge = tuple[str, int]  # what some words read as, and the index of the word after them


@lru_cache(maxsize=64)  # one text (a transcript, the instructions) is asked about many values
def _read(text: str) -> tuple[list[Word], list[list[Edge]]]:
    ws = _drop_as_in(words(text))
    return ws, _edges(ws)


def _match(target: str, ws: list[Word], edges: list[list[Edge]], i: int, k: int) -> Iterator[int]:
    """Word indexes just past a reading of target[k:] that starts at ws[i]."""
    if k == len(target):
        yield i
        return
    if i >= len(ws):
        return
    for reading, after in edges[i]:
        if reading == "" and k == 0:
            continue
        if k == 0 and ws[i].text in _HOMOPHONES and reading == _HOMOPHONES[ws[i].text]:
            continue  # "to" is a 2 only inside a code
        if target.startswith(reading, k):
            yield from _match(target, ws, edges, after, k + len(reading))


def _edges(ws: list[Word]) -> list[list[Edge]]:
    """What the words from each index on can stand for in a spelled code, and where they end."""
    out: list[set[Edge]] = []
    for i, w in enumerate(ws):
        if _me(ws, i):
            out.append(set())  # "It's five one seven three I meant": 5173, not 5173I
            continue
        e = {(squash(w.text), i + 1)}
        for table in (_LETTER_NAMES, _ALPHABET, _HOMOPHONES):
            if w.text in table:
                e.add((table[w.text], i + 1))
        if w.text in _SEPARATORS:
            e.add(("", i + 1))
        if w.text in ("oh", "o"):
            e.add(("0", i + 1))
            if _a_digit(ws, i - 1) and _a_digit(ws, i + 1):
                e = {("0", i + 1)}  # "four oh two nine": TV-402995, not TV-4OH2995
        if w.text in _REPEAT and i + 1 < len(ws) and (letter := _letter(ws[i + 1].text)) is not None:
            e.add((letter * (2 if w.text == "double" else 3), i + 2))  # "eight double E": 8EE
        out.append(e)
    for run in number_runs(ws):
        j = run.start
        for _value, digits in run.groups:  # each group over the words it was read from
            end = _group_end(ws, j, run.end, in_run=j > run.start)
            out[j].add((digits, end))
            j = end
    return [sorted(e, key=lambda edge: -len(edge[0])) for e in out]


def _a_digit(ws: list[Word], i: int) -> bool:
    """Does ws[i] say a digit ("4", "four")?"""
    return 0 <= i < len(ws) and (ws[i].text[:1].isdigit() or is_number_word(ws[i].text))


def _letter(text: str) -> str | None:
    """The letter a word says: itself, its name ("aitch"), its spelling-alphabet word ("echo")."""
    if len(text) == 1 and text.isalpha():
        return text
    return _LETTER_NAMES.get(text) or _ALPHABET.get(text)


def _group_end(ws: list[Word], j: int, limit: int, *, in_run: bool) -> int:
    """Where the number group read from ws[j] ends ("double seven" is two words)."""
    if ws[j].text in _REPEAT:
        return min(j + 2, limit)
    taken = read_group(ws, j, in_run=in_run)
    return min(taken[2], limit) if taken is not None else j + 1


def _spells(ws: list[Word], i: int) -> bool:
    """Does ws[i] go on spelling a code: a digit, a lone letter, a spelling-alphabet word?"""
    if i < 0 or i >= len(ws):
        return False
    text = ws[i].text
    return (text[:1].isdigit() or is_number_word(text) or text in _ALPHABET or text in _REPEAT
            or text.endswith("'s") and is_number_word(text[:-2])  # "... one five's at": the code's last digit
            or (len(text) == 1 and text.isalpha() and text not in ("a", "i"))
            or (text == "oh" and _spells(ws, i + 1)))  # "oh seven seven ...": a phone's leading zero


def _drop_as_in(ws: list[Word]) -> list[Word]:
    """ "k as in kilo", "b for bravo": the letter, once (the example word is not a letter)."""
    out: list[Word] = []
    i = 0
    while i < len(ws):
        out.append(ws[i])
        letter = ws[i].text
        if len(letter) == 1 and letter.isalpha():
            if [w.text for w in ws[i + 1:i + 3]] == ["as", "in"] and i + 3 < len(ws) \
                    and ws[i + 3].text.startswith(letter):
                i += 4
                continue
            if i + 2 < len(ws) and ws[i + 1].text == "for" and len(ws[i + 2].text) > 1 \
                    and ws[i + 2].text.startswith(letter):
                i += 3
                continue
        i += 1
    return out
