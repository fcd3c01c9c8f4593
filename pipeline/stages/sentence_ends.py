"""Where a sentence ends in text: the marks that end one, the abbreviations and titles that do
not, and the scans a streaming chunker makes around a candidate boundary (`pipeline/chunker.py`).

Every scan looks at a bounded stretch of text after the candidate and answers None when that
stretch has not arrived yet (`final` False), so a decision never changes once made.
"""

from __future__ import annotations

import re

TERMINALS = ".!?…;"

# Markup and closing marks that belong to the sentence before them: `"stop."`, `(see above.)`,
# `**Sure!**`. Openers are skipped when looking at the word before or after a boundary.
CLOSERS = "\"'”’»)]}*_`~"

OPENERS = "\"'“‘«([{*_`~"

# Never end a sentence: a name (or a number) always follows.
TITLES = frozenset("Dr Mr Mrs Ms Mx St Prof Rev Fr Sgt Capt Lt Col Gen Gov Sen Rep".split())

NEVER_FINAL = frozenset("e.g i.e vs approx cf viz jr sr fig".split())

# Often end a sentence: a boundary only if an uppercase word (not a title) follows.
MAYBE_FINAL = frozenset("etc a.m p.m u.s u.k u.s.a inc ltd co corp".split())

# "No. 5" is an abbreviation; "The answer is no. Try again." is a sentence end.
BEFORE_NUMBER = frozenset({"no", "nos"})

# A reply's opener, said alone before a comma, colon or dash: "Sure, I can do that." voices
# "Sure," first whatever the fragment's word minimum.
OPENER_PHRASES = frozenset({
    "sure", "okay", "ok", "yes", "yeah", "yep", "no", "nope", "well", "alright", "all right",
    "right", "of course", "certainly", "absolutely", "great", "perfect", "thanks", "thank you",
    "hi", "hello", "hey", "got it", "no problem", "understood", "i see", "oh", "ah", "so", "now",
    "actually", "honestly", "sorry", "i'm sorry", "good", "good news", "excellent", "done",
})

WORD_EDGE = "\"'“”‘’«»()[]{}*_`~,.!?;:…"

INITIALS = re.compile(r"[A-Z](?:\.[A-Z])*")  # "J", "J.R.R"

DOTTED = re.compile(r"[A-Za-z](?:\.[A-Za-z])+")  # "x.y": some abbreviation we don't know

WORD = re.compile(r"\w")

EMOJI_CLASS = (
    "\U0001f000-\U0001faff"  # pictographs, emoticons, transport, flags, supplemental symbols
    "\u2600-\u27bf"  # miscellaneous symbols, dingbats
    "\u2b00-\u2bff"  # stars, arrows used as emoji
    "\u231a\u231b\u2328\u23cf\u23e9-\u23fa"  # watch, hourglass, media buttons
    "\u200d\ufe0e\ufe0f\u20e3"  # joiners, variation selectors, keycap
    "\U000e0020-\U000e007f"  # flag tag sequences
)

EMOJI = re.compile(f"[{EMOJI_CLASS}]+")


def bare(token: str) -> str:
    return token.strip(WORD_EDGE).lower().replace("’", "'")


def is_opener(text: str) -> bool:
    """Whether `text` is only a reply's opener ("Sure", "**Of course**")."""
    return " ".join(bare(t) for t in text.split()) in OPENER_PHRASES


def next_words(s: str, i: int, count: int, final: bool) -> list[str] | None:
    """Up to `count` whole words after position i, bare and lowercase; a word ending at
    punctuation ends the list. None while the text may still be growing into them."""
    words: list[str] = []
    j = i
    while len(words) < count:
        while j < len(s) and s[j].isspace():
            j += 1
        if j >= len(s):
            return words if final else None
        start = j
        while j < len(s) and not s[j].isspace():
            j += 1
        if j >= len(s) and not final:
            return None  # the word may still grow ("and" into "android")
        token = s[start:j]
        words.append(bare(token))
        if token[-1:] in WORD_EDGE:  # "and," ends the clause start: look no further
            break
    return words


def sentence_ends(s: str, i: int, j: int, k: int, final: bool) -> bool | None:
    """Whether the punctuation run s[i:j] (closers up to k, whitespace at k) ends a sentence.

    None means the answer depends on text that has not arrived.
    """
    run = s[i:j]
    if ";" in run:
        return True
    if k > j:
        # After a closing quote or bracket a lowercase word continues the sentence:
        # `She asked "why?" and left.`
        nxt = next_char(s, k, final)
        if nxt is None:
            return None
        if nxt.islower():
            return False
    if "!" in run or "?" in run:
        return True
    if "…" in run or len(run) > 1:
        nxt = next_char(s, k, final)  # "well... maybe" continues; "Wait... What?" does not
        return None if nxt is None else not nxt.islower()
    start, word = word_before(s, i)
    if not word:
        return True
    lower = word.lower()
    if word in TITLES or lower in NEVER_FINAL:
        return False
    if word.isdigit() and len(word) <= 3 and (start == 0 or s[:start].rstrip().endswith(":")):
        return False  # a numbered list item: "1. Preheat the oven"
    if lower in BEFORE_NUMBER:
        nxt = next_char(s, k, final)
        return None if nxt is None else not nxt.isdigit()
    if lower in MAYBE_FINAL:
        return starts_sentence(s, k, final)
    if (word != "I" and INITIALS.fullmatch(word)) or DOTTED.fullmatch(word):
        return False  # "J. R. R. Tolkien"
    return True


def starts_sentence(s: str, k: int, final: bool) -> bool | None:
    """Whether the word after k is capitalised and not a title (None: not known yet)."""
    m = skip(s, k, OPENERS, space=True)
    if m >= len(s):
        return True if final else None
    if not s[m].isupper():
        return False
    e = m
    while e < len(s) and s[e].isalpha():
        e += 1
    word = s[m:e]
    # "Dr" may still be growing into "Drive"; wait only while it could become a title.
    if e >= len(s) and not final and any(t.startswith(word) for t in TITLES):
        return None
    return word not in TITLES


def next_char(s: str, k: int, final: bool) -> str | None:
    """The first visible character at or after k ("" at the end of a final text)."""
    m = skip(s, k, OPENERS, space=True)
    if m < len(s):
        return s[m]
    return "" if final else None


def word_before(s: str, i: int) -> tuple[int, str]:
    """Start and text (openers stripped) of the whitespace-delimited token ending at i."""
    start = i
    while start > 0 and not s[start - 1].isspace():
        start -= 1
    return start, s[start:i].lstrip(OPENERS)


def run_end(s: str, i: int, chars: str) -> int:
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def skip_closers(s: str, i: int) -> int:
    return skip(s, i, CLOSERS, space=False)


def skip(s: str, i: int, chars: str, *, space: bool) -> int:
    while i < len(s) and (s[i] in chars or EMOJI.match(s[i]) or (space and s[i].isspace())):
        i += 1
    return i


def count_words(text: str) -> int:
    return sum(1 for token in text.split() if WORD.search(token))


def runaway_end(s: str, limit: int) -> int:
    """Cut overlong text at its last whitespace within `limit` chars, else hard at `limit`."""
    for m in range(limit, 0, -1):
        if s[m].isspace():
            return m
    return limit
