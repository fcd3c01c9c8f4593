"""The question back: what the agent asks when the model reached for a tool it could not use.

A small model asked "I want a refund" writes the refund call anyway, with an order id nobody
said. The session's tool choice keeps the call out of the grammar, and the provenance guard
refuses one that gets through, but then the caller hears nothing, or the model's second guess.
What the caller is owed is the question: "Could you tell me the order number and the last four
digits of the card to refund to?".

The question names the arguments the caller has not given (`given.lacking` for a call the
model only wrote, the refusal's list for one the guard refused), each in the tool's own words:
the first sentence of the argument's description ("The order number, e.g. \\"4417\\"." is "the
order number"), up to its first comma ("Start time, HH:MM on the 24-hour clock" is "the start
time"), else its name's words ("pickup_time": "the pickup time"), as for a description that
gives a format or a clause about the caller ("When, HH:MM", "where to pick the caller up").
The reply about a refused call is this question alone, in the session's words (`call.desk`).
It is said only where the model's own words asked nothing (`owes_question`): a reply that
already asks "Which order is it?" is not asked again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .schema import ToolSpec
from .spoken.kinds import name_words

_FORMAT = re.compile(r"\b(HH|MM|YYYY|ISO|E\.164)\b|\d")  # "HH:MM on the 24-hour clock": how, not what
# "When, HH:MM", "where to pick the caller up": a clause about the caller; the name says what
_WH = frozenset("when where who what which how whom why whose".split())
_EXAMPLE = re.compile(r"[,;(]?\s*(e\.g\.|\b(for example|such as)\b).*$", re.I | re.S)


def question(spec: ToolSpec, missing: Iterable[str]) -> str | None:
    """One question asking for these arguments of `spec` (None when there are none)."""
    wanted = list(dict.fromkeys(what(spec, name) for name in missing))
    if not wanted:
        return None
    listed = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " and " + wanted[-1]
    return f"Could you tell me {listed}?"


def what(spec: ToolSpec, name: str) -> str:
    """An argument as the agent asks for it: "the order number"."""
    prop = spec.parameters.get("properties", {}).get(name, {})
    described = str(prop.get("description", "")).strip()
    if described:
        first = re.split(r"(?<=[.!?])\s", _EXAMPLE.sub("", described), maxsplit=1)[0]
        first = re.split(r"[,;:(]", first, maxsplit=1)[0].strip().rstrip(".!?:,; ")  # not its format
        if first and not _FORMAT.search(first) and first.split()[0].lower() not in _WH:
            head = first[0].lower() + first[1:]
            return head if re.match(r"(the|a|an|your|their|its)\b", head) else f"the {head}"
    return "the " + " ".join(name_words(name))


def asking_for(argument: str, specs: Iterable[ToolSpec],
               missing: Callable[[ToolSpec], list[str]]) -> ToolSpec | None:
    """The tool to ask about for an argument of this name ("order_id"): the one that takes it
    and needs the least else nothing has given yet (`missing`), the look-up before the refund."""
    having = [s for s in specs if argument in s.parameters.get("properties", {})]
    return min(having, key=lambda s: len(missing(s)), default=None)


def owes_question(said: str) -> bool:
    """The reply's own words ask the caller nothing: the question back is still owed."""
    return "?" not in said


def names_a_tool(sentence: str, specs: Iterable[ToolSpec]) -> str | None:
    """The tool a sentence talks about by its identifier, which is never said to a caller: a
    small model that cannot make the call writes about it instead ("You may call the `refund`
    function with the arguments ..."). Named means written as code (`refund`, `refund(`), with
    "function" or "tool" beside it ("the refund function", "call look_up_order"), or, for a name
    no caller would say (`look_up_order`, `end_call`), at all."""
    for spec in specs:
        name = re.escape(spec.name)
        pattern = (rf"`{name}`|\b{name}\(|\b{name}\s+(function|tool)\b|\b(function|tool|call)\s+`?{name}\b")
        if "_" in spec.name:
            pattern += rf"|\b{name}\b"
        if re.search(pattern, sentence, re.I):
            return spec.name
    return None


# ... and the tool prompt said back ("you may call one or more functions to assist with the user
# query. You are provided with function signatures within <tools></tools> XML tags")
_CALL_TALK = re.compile(r"```|</?tools?>|\btool_call\b|\bjson\b|\bfunction signatures?\b"
                        r"|\bfunctions?\b.*\b(?:call|calls|arguments?|parameters?|return)\b"
                        r"|\b(?:call|calls|arguments?|parameters?|return)\b.*\bfunctions?\b", re.I)


def talks_about_calling(sentence: str) -> bool:
    """Does a sentence talk about making a call, naming no tool ("To respond to this, you could
    return the following JSON object:", "Here's a json object with the function name and
    arguments:")? A small model that cannot make the call writes that; no caller is to hear it."""
    return bool(_CALL_TALK.search(sentence))


def after_words(said: str, owed: str) -> str:
    """The owed words as they follow what was said: after a clause the chunker let go on its
    own ("Yes," when "it went through." was not said), the sentence goes on in lower case."""
    if not said.strip():
        return owed
    if said.rstrip().endswith((",", ";", ":")) and not owed.startswith(("I ", "I'")):
        owed = owed[:1].lower() + owed[1:]
    return " " + owed
