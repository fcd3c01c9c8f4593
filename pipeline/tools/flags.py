"""An optional yes-or-no is the caller's to ask for, as any optional value is.

A small model sets the flags a schema offers on its own: on "can you tell me where my technician
is?" it wrote `child_or_pet_inside: true` into a locksmith's dispatch. A required flag is the
model's choice within the schema (it has to write one); an optional one, true or false, runs only
where the caller's words, or the agent's question they answered, touch what the flag is about: a
word of its name or description ("gift wrap" for `gift_wrap`, "my dog is shut in the car" for
"True if a child or pet is shut inside"). Otherwise it is left out, and the tool's own default
stands. A flag with `x-source` or `x-kind` is traced as that says (`argrules`), and a tool's
`grounded` list, where set, decides alone.
"""

from __future__ import annotations

import re
from typing import Any

from .evidence import Evidence
from .schema import ToolSpec
from .spoken import cue_words
from .spoken.kinds import KIND_KEY, SOURCE_KEY, stem

__all__ = ["unasked_flags"]

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
        if (not isinstance(value, bool) or not isinstance(prop, dict) or prop.get("type") != "boolean"
                or name in required or name in spec.spoken or SOURCE_KEY in prop or KIND_KEY in prop):
            continue
        about = cue_words(name, prop) - _FLAG_TALK  # its name's, description's and `x-cues` words
        if not any(_same(word, cue) for word in heard for cue in about):
            out.append(name)
    return out


def _heard(evidence: Evidence) -> set[str]:
    """The words of the caller's turns, and of what the agent asked before each ("would you like it
    gift wrapped?" answered "yes, please")."""
    return {stem(word) for text in evidence.exchanged for word in re.findall(r"[a-z0-9']+", text.lower())}


def _same(word: str, cue: str) -> bool:
    return word == cue or len(word) >= _PREFIX and len(cue) >= _PREFIX and word[:_PREFIX] == cue[:_PREFIX]
