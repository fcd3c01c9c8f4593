"""The one tool the caller's words fit clearly better than any other, where one does.

A small model picks among a desk's tools badly: on the multi-domain set's lines that ask for an
act, Qwen2.5-0.5B called another tool than the one asked for on about a third of them ("Could ye
book the Links for me and ma brother-in-law" booked a lesson beside `book_tee_time`; "Could you
tell me how much I owe?" changed a payment plan). Each tool declares the words it is about: its
name, its verb and the words English uses for that act, the choices of its arguments, its
description, its arguments' names. A word the caller says counts for each tool that declares it,
by how few of the offered tools do (a word all of them declare counts least) and
by where it is declared (its name's own words most; a choice of several words, "mao_shan_wang",
once, not once a word). Where one tool scores at least `_MARGIN`
times the next, and `_FLOOR` more, the session's tool choice offers only it (`choice.offered`).

Nothing here knows a domain: the words are the tools' own. On the set's lines up to fresh27 (no
model: `bench.tool_domains_run --ceiling` counts the lines), it offered one tool on about one line
in five that asks for an act, the labelled one on 86% of them. With the model, on splits nobody
had read, run with and without it: even on fresh28 (recall 52 and 54% against 54 and 52%), and
38% on both paths of fresh30 against 29 and 33%, no right call lost (bench/README.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from .schema import ToolSpec
from .spoken.kinds import name_words, stem
from .spoken.words import words
from .unasked import NO_LONGER, act_said, asks_state, phrased_acts, same_act

__all__ = ["best_fit", "choice_words", "declared", "object_elsewhere"]

_MARGIN = 2.0  # the best tool's score, at least this many times the next one's
_FLOOR = 1.0  # ...and at least this much more than it
# where a tool declares a word: its name's own words; its verb and the act's other words; its
# choices, its description and its arguments' names
_NAME, _ACT, _CHOICE, _DESCRIBED, _ARGUMENT = 3.0, 2.0, 1.0, 1.0, 1.0
# words that tell no tool from another, whoever declares them
_NO_SENSE = frozenset("""
    the and but for with from about into are was were been this that these those its it's
    i'm i'd i'll i've our you your yours she his her they their them what which who whom when
    where why how can could would will shall should may might must does did done have has had
    get got just then than there here please hello yes not okay right well like actually really
    thanks thank one two some any all more also out want need know let tell say said going make
    time day over under off onto upon plus per via across along
    """.split())


def best_fit(specs: Iterable[ToolSpec], said: str) -> ToolSpec | None:
    """Of `specs` (the tools a reply is offered), the one the words `said` fit clearly better than
    any other (see the module), or None: no tool stands out, or fewer than two to choose from."""
    specs = [spec for spec in specs if not spec.closes]
    if len(specs) < 2:
        return None
    ws = [w.text for w in words(NO_LONGER.sub("", said.replace("’", "'")))]
    heard = {stem(w) for w in ws} | phrased_acts(said) | ({stem("status")} if asks_state(said) else set())
    owns = [_declared(spec) for spec in specs]
    scores = []
    for spec, own in zip(specs, owns, strict=True):
        verb = name_words(spec.name)[0]
        at = [i for i, w in enumerate(ws) if w == verb]
        if at and all(object_elsewhere(spec, specs, ws[i + 1:i + 7]) for i in at):
            own = {w: weight for w, weight in own.items() if w != stem(verb)}  # "register a business name"
        shared = [w for w in own if w in heard]
        scores.append(sum(own[w] * math.log((len(specs) + 1) / sum(w in d for d in owns)) for w in shared))
    ranked = sorted(range(len(specs)), key=lambda i: -scores[i])
    best, next_ = scores[ranked[0]], scores[ranked[1]]
    if best < _MARGIN * next_ or best - next_ < _FLOOR:
        return None
    verbs = [name_words(spec.name)[0] for spec in specs]  # "call off that wagon ride": no booking of one
    if not act_said(verbs[ranked[0]], said) and any(act_said(v, said) for v in verbs if v != verbs[ranked[0]]):
        return None
    return specs[ranked[0]]


def declared(spec: ToolSpec) -> set[str]:
    """The words this tool declares (see the module), as stems."""
    return set(_declared(spec))


def choice_words(spec: ToolSpec) -> set[str]:
    """The words of its arguments' choices ("business_name": business, name), as stems."""
    return {stem(w) for schema in (spec.parameters.get("properties") or {}).values()
            for choice in schema.get("enum") or () if isinstance(choice, str) for w in _letters(choice)}


def _declared(spec: ToolSpec) -> dict[str, float]:
    """The words this tool declares, each with the weight of where it most counts."""
    out: dict[str, float] = {}

    def add(ws: Iterable[str], weight: float) -> None:
        for w in ws:
            if len(s := stem(w)) >= 3 and s not in _NO_SENSE:
                out[s] = max(out.get(s, 0.0), weight)

    verb, *objects = name_words(spec.name) or [""]
    add(objects, _NAME)
    add([verb, *same_act(verb)], _ACT)
    add(_letters(spec.description), _DESCRIBED)
    for name, schema in (spec.parameters.get("properties") or {}).items():
        add(name_words(name), _ARGUMENT)
        for choice in schema.get("enum") or ():
            if isinstance(choice, str) and (ws := _letters(choice)):
                add(ws, _CHOICE / len(ws))  # a choice counts once: "Mao Shan Wang" is one durian, not three words
    return out


def _letters(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def object_elsewhere(spec: ToolSpec, specs: list[ToolSpec], after: list[str]) -> bool:
    """Do the words after this tool's verb name a choice of another tool's and nothing of this
    one's? "I want to register a business name" is an appointment whose service may be
    "business_name", not `register_sms_alerts`, whose verb alone was said. Not for a verb of the
    acts English has other words for (`same_act`): those act on any kind of thing ("cancel the MOT")."""
    verb = name_words(spec.name)[0]
    if same_act(verb):
        return False
    heard = {stem(w) for w in after} - _NO_SENSE
    if heard & (declared(spec) - {stem(verb)}):
        return False
    return any(heard & (choice_words(s) - declared(spec)) for s in specs if s is not spec and not s.closes)
