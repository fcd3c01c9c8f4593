"""What a number the caller said was said as: an order, a card, an amount (`grounding`).

The words around a number give it its roles ("order 4417", "the card ending 1234", "forty
dollars", "$64.50"), and so does the agent's question it answers ("What's the order number?");
an argument's name gives it the role it needs (`role_of`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .confirms import spoken_tokens

MAX_SPAN = 12  # tokens one value may be spoken in ("A one two three four five six")
_ROLE_NAMES = (  # card and amount first: "card_number" is a card, "order_total" an amount
    ("card", re.compile(r"card|last4|last_four|digits|account|iban", re.I)),
    ("amount", re.compile(r"amount|total|price|cost", re.I)),
    ("order", re.compile(r"order|booking|reservation|reference|confirmation|invoice|(^|_)ref($|_)",
                         re.I)),
)
# The caller's words that say what the number next to them is ("hashsign" stands for "#",
# "lastfour" for "last four": the four is no number of its own there).
_CUES = {
    "order": {"order", "orders", "ordered", "booking", "reservation", "reference", "confirmation",
              "invoice", "hashsign"},
    "card": {"card", "cards", "cart", "ending", "ends", "ended", "lastfour", "digits", "visa",
             "mastercard", "amex", "account"},
}
_MONEY_AFTER = {"dollars", "dollar", "bucks", "buck", "cents", "euros", "euro", "pounds", "usd"}
_MONEY_ASKED = {"much", "amount", "dollars", "total", "cost", "price"}  # "how much was it?"
SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_CUE_BACK = 5  # words before a number that may say what it is ("the card it ends in")


@dataclass(frozen=True)
class Mention:
    """One number the caller said: tokens[start:end] of its sentence, and what it was said as."""

    start: int
    end: int
    roles: frozenset[str]


def role_of(name: str) -> str | None:
    """What an argument (or a result's field) is, by its name: "order", "card", "amount" or None."""
    for role, pattern in _ROLE_NAMES:
        if pattern.search(name):
            return role
    return None


def cue_text(text: str) -> str:
    """The caller's words with their written cues spelled: "$40" is "40 dollars", "#4417" is
    "hashsign 4417", "last four" one word."""
    text = re.sub(r"\$\s*(\d[\d,]*(?:\.\d+)?)", r"\1 dollars", text)
    text = re.sub(r"#\s*", " hashsign ", text)
    return re.sub(r"\blast\s+(four|4)\b", "lastfour", text, flags=re.I)


def asked_roles(asked: str) -> frozenset[str]:
    """What the agent's questions asked for ("What's the order number?": an order)."""
    roles: set[str] = set()
    for sentence in SENTENCE.split(cue_text(asked)):
        if not sentence.rstrip().endswith("?"):
            continue
        words = set(spoken_tokens(sentence))
        roles |= {role for role, cues in _CUES.items() if words & cues}
        if words & _MONEY_ASKED:
            roles.add("amount")
    return frozenset(roles)


def find_mentions(tokens: list[str], asked: frozenset[str]) -> list[Mention]:
    """The numbers in one sentence's tokens, each with the roles its neighbouring words give it."""
    runs: list[list[int]] = []  # [start, end)
    for i, token in enumerate(tokens):
        if not token[0].isdigit():
            continue
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        elif runs and _joins(tokens, runs[-1], i):
            runs[-1][1] = i + 1  # "one hundred and twenty", "sixty four dollars and fifty cents"
        else:
            runs.append([i, i + 1])
    # each number's nearest cue before it (a token index), within _CUE_BACK words and after
    # the number before it
    cued: list[int | None] = []
    for n, (start, _) in enumerate(runs):
        floor = max(runs[n - 1][1] if n else 0, start - _CUE_BACK)
        cued.append(next((k for k in range(start - 1, floor - 1, -1) if _role(tokens[k])), None))
    out = []
    for n, (start, end) in enumerate(runs):
        upto = runs[n + 1][0] if n + 1 < len(runs) else len(tokens)
        roles: set[str] = set()
        money = bool(set(tokens[end:end + 2]) & _MONEY_AFTER) or any("." in t for t in tokens[start:end])
        if money:
            roles.add("amount")
        cue = cued[n]
        if cue is not None and money and cue != start - 1:
            cue = None  # "the order was forty dollars": money; "order 40 dollars" would be both
        if cue is None and not money:
            # "4417 is my order number": the first cue after it that the next number does not
            # take as its own ("forty dollars for order 4417": that "order" is 4417's)
            taken = cued[n + 1] if n + 1 < len(runs) else None
            cue = next((k for k in range(end, min(upto, end + _CUE_BACK))
                        if _role(tokens[k]) and k != taken), None)
        if cue is not None and (role := _role(tokens[cue])) is not None:
            roles.add(role)
        out.append(Mention(start, end, frozenset(roles or asked)))
    return out


def _role(word: str) -> str | None:
    return next((role for role, cues in _CUES.items() if word in cues), None)


def _joins(tokens: list[str], run: list[int], i: int) -> bool:
    """Do the words between a number and the next make them one amount?"""
    gap = tokens[run[1]:i]
    last = tokens[run[1] - 1]
    if gap == ["point"]:
        return True
    if gap == ["and"] and last.isdigit() and int(last) % 100 == 0 and int(tokens[i]) < 100:
        return True
    return (len(gap) <= 2 and gap[0] in _MONEY_AFTER and gap[1:] in ([], ["and"])
            and tokens[i + 1:i + 2] in (["cents"], ["cent"]))


def span_overlaps(wanted: str, tokens: list[str], mention: Mention) -> bool:
    """Is `wanted` a run of consecutive tokens that takes in some of this mention's?"""
    if not wanted:
        return False
    squashed = [squash(t) for t in tokens]
    for i in range(max(0, mention.start - MAX_SPAN), mention.end):
        joined = ""
        for j in range(i, min(len(squashed), i + MAX_SPAN)):
            joined += squashed[j]
            if joined == wanted:
                if j >= mention.start:
                    return True
                break
            if not wanted.startswith(joined):
                break
    return False


def squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())
