"""A name or an address as Whisper writes what the caller said.

Whisper spells a name it has not heard before as it sounds ("Katherine" for "Catherine", "Smyth"
for "Smith", "Mac Donald" for "MacDonald"), writes numbers as words or digits ("42 Elm Street",
"forty two elm street"), and abbreviates or not ("St", "Street"). A value is said when its words,
in the same sequence, are consecutive words of the text (a "the" or "a" between them, or a title of
the value's own the caller left out, "Mr." or "Dr.", aside), each the same word read loosely:
- case and punctuation aside; a street type, a compass point or a title in short or in full
  ("St" is "Street" or "Saint", "Ave" "Avenue", "Dr" "Drive" or "Doctor", "N" "North");
- an ordinal as its number ("5th", "fifth": 5), a number in digits or words, read over as many
  words as it takes ("forty two": 42, "sixteen oh four": 1604);
- a word sounds the same (`sound_key`, a small phonetic key) and is close in spelling, or (six
  letters or more) is within a quarter of its letters by edit distance; a word of two letters
  or fewer only as itself; digits only as themselves;
- a word split or joined ("MacDonald" and "Mac Donald").
An address in parts ("42 Elm Street, Springfield") is said when each part is, anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from .kinds import stem
from .words import NumberRun, Word, number_runs, read_ordinal, words

_SHORT = {
    "st": ("street", "saint"), "str": ("street",), "ave": ("avenue",), "av": ("avenue",),
    "rd": ("road",), "blvd": ("boulevard",), "dr": ("drive", "doctor"), "ln": ("lane",),
    "ct": ("court",), "pl": ("place",), "sq": ("square",), "hwy": ("highway",),
    "pkwy": ("parkway",), "ter": ("terrace",), "cres": ("crescent",), "cir": ("circle",),
    "apt": ("apartment",), "ste": ("suite",), "fl": ("floor",), "bldg": ("building",),
    "n": ("north",), "s": ("south",), "e": ("east",), "w": ("west",), "ne": ("northeast",),
    "nw": ("northwest",), "se": ("southeast",), "sw": ("southwest",), "mt": ("mount",),
    "ft": ("fort",), "mr": ("mister",), "mrs": ("missus",), "ms": ("miss",), "jr": ("junior",),
    "sr": ("senior",), "no": ("number",), "intl": ("international",), "ctr": ("center",),
    "centre": ("center",), "theatre": ("theater",),
}
_SKIPPABLE = {"the", "a", "an", "of", "and", "at", "on", "in"}  # optional on either side
# the words that end a street's name ("22 Constant Spring Road", "School Lane")
STREETS = frozenset("road street lane avenue close drive way crescent terrace place court gardens park row "
                    "square hill grove boulevard highway parade walk mews quay wharf".split())
_TITLES = {"mr", "mister", "mrs", "missus", "ms", "miss", "dr", "doctor", "prof", "professor",
           "sir", "madam"}  # a value's own title the caller may leave out ("Mr. Hale": "Hale")
_VOWELS = re.compile(r"[aeiouy]")
_SPELLED_OUT = re.compile(r"(?<![\w-])(?:[A-Za-z]-){2,}[A-Za-z](?![\w-])")  # a word spelled out between a name's words


def name_said(value: str, text: str) -> tuple[int, int] | None:
    """Where (characters start, end) the text says this name, address or phrase; None if not.
    An address in parts must have every part said; the span is the first part's."""
    parts = [p for p in re.split(r"[,;\n]", value) if _slots(words(p))]
    if not parts:
        return None
    ws, said = _read(_SPELLED_OUT.sub(lambda m: " " * len(m.group()), text))  # "Piotr, P-I-O-T-R, Zieliński": Piotr Zieliński
    first: tuple[int, int] | None = None
    for part in parts:
        span = _find(_slots(words(part)), said, ws)
        if span is None:
            return None
        first = first or span
    return first


def choice_said(value: str, choices: tuple[str, ...], text: str, *, besides: Collection[str] = ()) -> bool:
    """Does the text name this one of a schema's named choices: all of it, or a word of it no
    other choice has ("from the station": "Central Station" of "Airport", "Central Station",
    "Harbour")? A word all the choices share ("Court", "Hall") tells none apart, nor one the
    argument's own name has (`besides`: "my piano" names no `piano_type`, player_piano)."""
    if name_said(value, text) is not None:
        return True
    told = " ".join(w.text for w in words(text) if stem(w.text) not in {stem(b) for b in besides})
    return value in choice_words_said(choices, told)


_FILLER = frozenset("and or the of a an with to in on for at by".split())


def choice_named(choices: tuple[str, ...], text: str) -> str | None:
    """The one of a schema's word choices ("gutter_clear", "conservatory_roof") this text names
    most: more of its words said ("the gutters": gutter_clear; "windows inside and out":
    windows_inside_and_out over windows_exterior) than any other choice's, one of them a word no
    other choice has. None where the text names none, or two as much."""
    score = choice_words_said(choices, text)
    if not score:
        return None
    best = max(score.values())
    top = [c for c, n in score.items() if n == best]
    rival = max((n for c, n in choice_words_said(choices, text, shared=True).items() if c not in top), default=0)
    return top[0] if len(top) == 1 and best > rival else None


def choice_words_said(choices: tuple[str, ...], text: str, *, shared: bool = False) -> dict[str, int]:
    """Of each choice one of whose words no other choice has is said, or two or more of whose words
    are, more than any other choice has of them ("performance snowboards": snowboard_performance,
    though ski_performance and snowboard_standard share a word each), or all of whose words are, no
    other choice more ("ballet" beside childrens_ballet), how many of its words are (`shared`: of
    every choice)."""
    if choices and all(c.lower() in _SIZES for c in choices):
        return _sizes_said(choices, text)
    heard, plain = heard_words(text), {stem(w.text) for w in words(text)}
    own = _choice_words(choices)
    said = {c: ws & (plain if all(w.isdigit() for w in ws) else heard) for c, ws in own.items()}  # "ten packs" names no size "10"
    return {c: len(said[c]) for c, ws in own.items()
            if shared or said[c] - set().union(*(o for d, o in own.items() if d != c))
            or len(said[c]) > 1 and not any(d != c and said[d] >= said[c] for d in own)
            or said[c] and said[c] == ws and not any(d != c and said[d] > said[c] for d in own)}


def heard_words(text: str) -> set[str]:
    """The text's words, singular, each two beside each other as one ("hard-shell" says
    hardshell), and each number it says in digits: "a sixteen-seater" says
    16 as well as "sixteen", as a choice "16_seater" writes it (a choice of digits alone, a size
    "10", is named by its digits only: "ten packs" is no size)."""
    ws = words(text)
    joined = {stem(a.text + b.text) for a, b in zip(ws, ws[1:], strict=False)  # "hard-shell", "hard shell": hardshell
              if b.start - a.end == 1 and text[a.end] in "- " and a.text.isalpha() and b.text.isalpha()}
    return {UNITS.get(stem(w.text), stem(w.text)) if w.raw.islower() else stem(w.text) for w in ws} | joined | {
        str(int(v)) for run in number_runs(ws) for v in run.values if v == v.to_integral()}


# a unit's other names, each to one (as stems): "six kilo" for a weight in `kg`, "a nine-kay" for the choice "9kg"
UNITS = {"kilo": "kilogram", "kg": "kilogram", "kgs": "kilogram", "kilogramme": "kilogram", "kay": "kilogram",
         "lb": "pound", "lbs": "pound", "litre": "liter", "ltr": "liter", "metre": "meter", "min": "minute",
         "mins": "minute", "hr": "hour", "hrs": "hour", "gramme": "gram", "ft": "foot", "feet": "foot",
         "km": "kilometer", "kilometre": "kilometer", "inche": "inch",
         # how often, as the period: "the yearly membership" is `annual`, "the month" `monthly`
         "yearly": "year", "annual": "year", "annually": "year", "monthly": "month", "weekly": "week", "daily": "day"}


_MEASURES = frozenset(UNITS.values()) | frozenset("cubic yard seater seat gallon ml cm mm oz".split())


def choice_tokens(choice: str) -> list[str]:
    """A choice's words, a number apart from its unit, each unit as choices write it ("9kg": 9 and
    kg; "16_seater")."""
    return [UNITS.get(stem(w), stem(w)) for w in re.findall(r"\d+|[^\W\d_]+", choice.lower())]


def number_with_unit(choice: str, text: str) -> bool | None:
    """Does the text say a choice written as a number and a measure ("9kg", "16_seater",
    "4_cubic_metres") as that number beside that measure ("a nine-kilogram", "sixteen-seater", "four
    cubic metres"; not "four things")? None for a choice that is no number and measure."""
    tokens = choice_tokens(choice)
    numbers, rest = {t for t in tokens if t.isdigit()}, {t for t in tokens if not t.isdigit()}
    if not numbers or not rest or rest - _MEASURES:
        return None  # a size "10" is its digits (`choice_words_said`); "batteries_312" its word too
    ws = words(text)

    def beside(run: NumberRun) -> set[str]:  # the word after the number, and the one before ("stage one")
        return {UNITS.get(stem(w.text), stem(w.text)) for w in ws[max(0, run.start - 1):run.start] + ws[run.end:run.end + 1]}
    return any(str(int(v)) in numbers and (not rest or beside(run) & rest) for run in number_runs(ws)
               for v in run.values if v == v.to_integral())


def _choice_words(choices: tuple[str, ...]) -> dict[str, set[str]]:
    return {c: {w for w in choice_tokens(c) if w not in _FILLER} for c in choices}


# clothing sizes as a schema writes them, and as callers say them, the longest first
_SIZES = {"xxs": "double extra small", "xxl": "double extra large", "2xl": "double extra large",
          "xs": "extra small", "xl": "extra large", "s": "small", "m": "medium", "l": "large"}
_SIZE_SAID = re.compile(r"(?<![\w'’])(" + "|".join(sorted({*_SIZES.values(), *_SIZES}, key=len, reverse=True)) + r")(?![\w'’])", re.I)


def _sizes_said(choices: tuple[str, ...], text: str) -> dict[str, int]:
    """Of clothing sizes ("XS" to "XXL"), those said by their letters or in words, each phrase read
    whole ("extra large" is XL, not L; "size medium" is M)."""
    said = {m.group(1).lower() for m in _SIZE_SAID.finditer(text)}
    return {c: 1 for c in choices if c.lower() in said or _SIZES[c.lower()] in said}


Slot = tuple[int, int, frozenset[str]]  # words [start, end) and what they can be read as


@lru_cache(maxsize=64)  # one text (a transcript, the instructions) is asked about many values
def _read(text: str) -> tuple[list[Word], list[Slot]]:
    ws = words(text)
    return ws, _slots(ws)


def _slots(ws: list[Word]) -> list[Slot]:
    """Each word's readings, and numbers over the words they were said in."""
    out: list[Slot] = []
    numbers = {run.start: run for run in number_runs(ws)}
    i = 0
    while i < len(ws):
        if (run := numbers.get(i)) is not None:
            readings = {str(int(v)) if v == v.to_integral() else str(v) for v in run.values}
            readings.add(run.digits)
            out.append((i, run.end, frozenset(_plain(r) for r in readings)))
            i = run.end
            continue
        if (ordinal := read_ordinal(ws, i)) is not None:
            out.append((i, ordinal[1], frozenset({str(ordinal[0])})))
            i = ordinal[1]
            continue
        text = _plain(ws[i].text)
        if text:
            out.append((i, i + 1, frozenset({text, *_SHORT.get(text, ())})))
        i += 1
    return out


def _plain(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower().replace("'s", ""))


def _find(want: list[Slot], said: list[Slot], ws: list[Word]) -> tuple[int, int] | None:
    for start in range(len(said)):
        end = _align(want, 0, said, start)
        if end is not None and end > start:
            return ws[said[start][0]].start, ws[said[end - 1][1] - 1].end
    return None


def _align(want: list[Slot], k: int, said: list[Slot], i: int) -> int | None:
    """The index in `said` just past a reading of want[k:] that starts at said[i]."""
    if k == len(want):
        return i
    readings = want[k][2]
    if (readings & _SKIPPABLE or (k == 0 and readings & _TITLES)) \
            and (end := _align(want, k + 1, said, i)) is not None:
        return end  # the value's own "of", "the" or "Mr." left out by the caller
    if i >= len(said):
        return None
    if k > 0 and said[i][2] & _SKIPPABLE and (end := _align(want, k, said, i + 1)) is not None:
        return end  # "central (the) station"
    if _alike(readings, said[i][2]) and (end := _align(want, k + 1, said, i + 1)) is not None:
        return end
    if i + 1 < len(said) and _joined(readings, said[i][2], said[i + 1][2]) \
            and (end := _align(want, k + 1, said, i + 2)) is not None:
        return end  # "MacDonald" said as "Mac Donald"
    if k + 1 < len(want) and _joined(said[i][2], readings, want[k + 1][2]) \
            and (end := _align(want, k + 2, said, i + 1)) is not None:
        return end  # "Mac Donald" written "MacDonald"
    return None


def _alike(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(similar(x, y) for x in a for y in b)


def _joined(one: frozenset[str], first: frozenset[str], second: frozenset[str]) -> bool:
    return any(similar(x, y + z) for x in one for y in first for z in second
               if not (y.isdigit() or z.isdigit()))


@lru_cache(maxsize=65536)
def similar(a: str, b: str) -> bool:
    """Two words a caller may mean the same by, as Whisper may write them."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit() or min(len(a), len(b)) <= 2:
        return False
    if a + "s" == b or b + "s" == a:  # "Mary's" written "Marys"
        return True
    longest = max(len(a), len(b))
    most = 1 if longest <= 5 else (longest + 1) // 3  # "Park" and "Mark" are two streets
    if abs(len(a) - len(b)) > most or (distance := edit_distance(a, b)) > most:
        return False
    if longest > 5 and distance <= longest // 4:
        return True
    return sound_key(a) == sound_key(b)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: insertions, deletions and substitutions, one each."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


_SOUND_RULES = [(re.compile(p), r) for p, r in (
    (r"^(kn|gn|pn|wr|ps)", lambda m: m.group()[1]), (r"^x", "s"), (r"^wh", "w"), (r"mb$", "m"),
    (r"ph", "f"), (r"gh(?![aeiouy])", ""), (r"ck", "k"), (r"sch", "sk"), (r"tch", "ch"),
    (r"c(?=[iey])", "s"), (r"[cs]h", "x"), (r"th", "0"), (r"dg(?=[eiy])", "j"),
    (r"g(?=[eiy])", "j"), (r"[cq]", "k"), (r"x", "ks"), (r"z", "s"), (r"v", "f"),
    (r"d", "t"), (r"(?<=[aeiou])[wy](?![aeiou])", ""), (r"h(?![aeiou])", ""),
)]


@lru_cache(maxsize=65536)
def sound_key(word: str) -> str:
    """A short key that words sounding alike share ("smith", "smyth"; "catherine", "katherine";
    "stephen", "steven"): consonants as they sound, vowels after the first letter dropped, a
    letter doubled once."""
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return ""
    for pattern, repl in _SOUND_RULES:
        w = pattern.sub(repl, w)  # type: ignore[arg-type]
    if not w:
        return ""
    head = "a" if _VOWELS.match(w[0]) else w[0]
    tail = _VOWELS.sub("", w[1:])
    key = head
    for ch in tail:
        if ch != key[-1]:
            key += ch
    return key
