"""Key-word error: of the words that carry a request (the action, the names, the numbers and
codes), marked by hand in brackets ("I would like a [refund] for my last [order]"), the share the
transcript misses. Word error rate averages them away among "I would like"; a caller notices them.

Words are compared lower-case, without punctuation, a hyphen as a space, "£250" as "250 pounds";
numbers by value, as digit strings (pipeline.tools.confirms `spoken_tokens`), so "[four four one
seven]" is found in "4417", "44 17" and "forty four seventeen". A key of several words is found where its words stand
together, or run together ("[late checkout]" in "late check-out", "[J Parker]" in "J. Parker").
"""

from __future__ import annotations

import re

from pipeline.tools.confirms import spoken_tokens

_KEY = re.compile(r"\[([^\]]+)\]")
_CURRENCY = re.compile(r"([£$€])\s?(\d[\d,]*(?:\.\d+)?)")
_CURRENCY_WORDS = {"£": "pounds", "$": "dollars", "€": "euros"}
_SCALE_AND = re.compile(r"\b(hundred|thousand) and\b", re.IGNORECASE)  # "two hundred and fifty": 250


def plain(marked: str) -> str:
    """The sentence as said: the brackets gone."""
    return _KEY.sub(r"\1", marked)


def keys(marked: str) -> list[str]:
    """The bracketed spans, in order."""
    return _KEY.findall(marked)


def items(text: str) -> list[str]:
    """Normalised words, each run of spoken or written digits one item: "it's K7 X92Q" and
    "it's K seven X nine two Q" are both it, s, k, 7, x, 92, q."""
    text = _CURRENCY.sub(lambda m: f"{m[2]} {_CURRENCY_WORDS[m[1]]}", text.replace("-", " "))
    out: list[str] = []
    for token in spoken_tokens(_SCALE_AND.sub(r"\1", text)):
        digits = token.replace(",", "").replace(".", "")
        if digits.isdigit() and out and out[-1].isdigit():
            out[-1] += digits
        else:
            out.append(digits if digits.isdigit() else token)
    return out


def found(key: str, heard: list[str]) -> bool:
    """Is `key` in the transcript's items? Its items together, or run together into one string,
    or, for a code of 3 digits or more, inside a longer run of digits ("555" in "5552123456")."""
    want = items(key)
    if not want:
        return True
    n = len(want)
    if any(heard[i:i + n] == want for i in range(len(heard) - n + 1)):
        return True
    joined = "".join(want)
    for i in range(len(heard)):
        run = ""
        for j in range(i, len(heard)):
            run += heard[j]
            if run == joined:
                return True
            if len(run) >= len(joined):
                break
    return joined.isdigit() and len(joined) >= 3 and any(joined in h for h in heard if h.isdigit())


def key_errors(marked: str, hypothesis: str) -> tuple[int, int]:
    """(key words missed, key words): each bracketed span counts as one key."""
    wanted = keys(marked)
    heard = items(hypothesis)
    return sum(not found(k, heard) for k in wanted), len(wanted)
