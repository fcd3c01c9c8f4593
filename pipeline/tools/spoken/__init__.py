"""Where a tool argument's value came from: was it said, as a caller says it?

Domain-free: nothing here knows what a shop, a clinic or a taxi is. `kinds` reads an argument's
kind and allowed sources from its JSON Schema; `match.said_in` says whether a text (the caller's
words, a tool result, the instructions) holds a value of that kind, as speech writes it.
"""

from .kinds import (
    SOURCE_KEY,
    Source,
    ValueKind,
    cue_words,
    default_sources,
    kind_from_schema,
    sources_of,
)
from .match import find_said, said_in

__all__ = ["SOURCE_KEY", "Source", "ValueKind", "cue_words", "default_sources", "find_said",
           "kind_from_schema", "said_in", "sources_of"]
