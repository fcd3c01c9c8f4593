"""An optional yes-or-no is the caller's to ask for, as any optional value is.

A small model sets the flags a schema offers on its own: on "can you tell me where my technician
is?" it wrote `child_or_pet_inside: true` into a locksmith's dispatch. A required flag is the
model's choice within the schema (it has to write one); an optional one, true or false, runs only
where the caller's words, or the agent's question they answered, touch what the flag is about: a
word of its name or description ("gift wrap" for `gift_wrap`, "my dog is shut in the car" for
"True if a child or pet is shut inside"). Otherwise it is left out, and the tool's own default
stands. A flag with `x-source` or `x-kind` is traced as that says (`argrules`), and a tool's
`grounded` list, where set, decides alone.

Optional prose (a note, a reason, a card's message: `ValueKind.TEXT`, no choices) is the model's to
word, but about what was said: one with no word of the caller's turns, or of the agent's question
they answered, is left out too. In the stored runs every such value was made up: the schema's own
description copied ("A high chair or a birthday, in the caller's words"), a refusal ("I'm sorry,
but I can't assist with that."), "DAD" on a tribute card for the caller's nan.
"""

from __future__ import annotations

import re
from typing import Any

from .argrules import rules
from .evidence import Evidence
from .schema import ToolSpec
from .spoken import ValueKind, cue_words
from .spoken.kinds import CUES_KEY, KIND_KEY, SOURCE_KEY, name_words, stem

__all__ = ["flag_as_said", "same_word", "unasked_flags", "unsaid_prose"]

# a flag's description talks about the flag, not about what it is: these words touch nothing
_FLAG_TALK = frozenset("true false whether set flag yes no want wants wanted ask asked said say "
                       "request requested need needs needed customer client guest option optional "
                       "should will would default given only when".split())
_PREFIX = 5  # letters two words share to be one ("wheelchair"/"wheelchairs", "urgent"/"urgently")


def unasked_flags(spec: ToolSpec, arguments: dict[str, Any], evidence: Evidence) -> list[str]:
    """The optional boolean arguments of this call that nothing the caller said, or answered,
    touches: they are left out of the call."""
    if spec.grounded is not None:
        return []
    props = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    heard = _heard(evidence)
    out = []
    for name, value in arguments.items():
        prop = props.get(name)
        if not isinstance(value, bool) or not _optional_flag(spec, name, prop, required):
            continue
        about = cue_words(name, prop) - _FLAG_TALK  # its name's, description's and `x-cues` words
        if not any(same_word(word, cue) for word in heard for cue in about):
            out.append(name)
    return out


def flag_as_said(spec: ToolSpec, name: str, value: Any, evidence: Evidence) -> Any:
    """An optional flag as the caller's latest words on it say it, where they say it one way: "Just
    put it on my card" is `use_card_on_file: true`, "No lunch, now" `picnic_lunch: false`, whatever
    the model wrote (Qwen wrote false for the card). Any other value, as it is."""
    prop = spec.parameters.get("properties", {}).get(name)
    if not isinstance(value, bool) or spec.grounded is not None or not _optional_flag(
            spec, name, prop, set(spec.parameters.get("required", ()))):
        return value
    about = {stem(w) for w in [*name_words(name), *(str(c) for c in prop.get(CUES_KEY) or ())]
             if len(w) > 3 and w not in _FLAG_TALK and w not in _FUNCTION}  # its own words: "picnic", "lunch"; not the description's "they"
    negated = name_words(name)[:1] in (["no"], ["without"], ["skip"])  # "no_chilli": "no chilli ah" wants it
    for text in reversed(evidence.said):
        if (said := _polarity(text, about)) is not None:
            return not said if negated else said
    return value


def _optional_flag(spec: ToolSpec, name: str, prop: Any, required: set[str]) -> bool:
    """Is this argument an optional flag the caller's words decide (not traced another way)?"""
    return isinstance(prop, dict) and prop.get("type") == "boolean" and name not in required \
        and name not in spec.spoken and SOURCE_KEY not in prop and KIND_KEY not in prop


_NEGATORS = frozenset("no not never without nae nah nope skip".split())


def _polarity(text: str, about: set[str]) -> bool | None:
    """Do these words want what the flag is about (a word of it, no "not", "no", "don't" in the four
    words before it, in its clause), or not? None where they do not touch it, or say both."""
    found: set[bool] = set()
    for clause in re.split(r"[,.;:!?]|\bbut\b", text.replace("’", "'").lower()):
        ws = re.findall(r"[a-z0-9']+", clause)
        for i, word in enumerate(ws):
            if any(same_word(stem(word), cue) for cue in about):
                found.add(not any(w in _NEGATORS or w.endswith("n't") for w in ws[max(0, i - 4):i]))
    return found.pop() if len(found) == 1 else None


# words any sentence has: prose sharing only these with the caller shares nothing
_FUNCTION = frozenset("the and for with that this from into onto are was were has have had not but its it's our "
                      "your their his her him she they them you who what when where which how any all some "
                      "can could would should will please thanks thank just about customer caller".split())


def unsaid_prose(spec: ToolSpec, arguments: dict[str, Any], evidence: Evidence) -> list[str]:
    """The optional prose arguments of this call with no word of what the caller said, or the
    question they answered, in them: they are left out of the call (see the module)."""
    if spec.grounded is not None:
        return []
    props, required, heard = spec.parameters.get("properties", {}), set(spec.parameters.get("required", ())), None
    out = []
    for name, rule in rules(spec).items():
        value, prop = arguments.get(name), props.get(name)
        if (not isinstance(value, str) or rule.kind is not ValueKind.TEXT or rule.choices or name in required
                or name in spec.spoken or not isinstance(prop, dict) or SOURCE_KEY in prop or KIND_KEY in prop):
            continue
        heard = _heard(evidence) if heard is None else heard
        own = {stem(w) for w in re.findall(r"[a-z0-9']+", value.lower()) if len(w) > 2 and w not in _FUNCTION}
        if not any(same_word(word, said) for word in own for said in heard):
            out.append(name)
    return out


def _heard(evidence: Evidence) -> set[str]:
    """The words of the caller's turns, and of what the agent asked before each ("would you like it
    gift wrapped?" answered "yes, please")."""
    return {stem(word) for text in evidence.exchanged for word in re.findall(r"[a-z0-9']+", text.lower())}


def same_word(word: str, cue: str) -> bool:
    """One word, written either way ("wheelchair"/"wheelchairs", "delivered"/"delivery")."""
    return word == cue or len(word) >= _PREFIX and len(cue) >= _PREFIX and word[:_PREFIX] == cue[:_PREFIX]
