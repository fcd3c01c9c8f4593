"""Each argument's rule, read from its tool's schema: its kind, where its value may come from
(`spoken.sources_of`), the words that name it and the tool's other numbers (a number's role), and
how a moment is to be written. `provenance.trace` checks a call against these."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from .moments import written_as
from .record import code_shape, example_form
from .schema import ToolSpec
from .spoken import SOURCE_KEY, Source, ValueKind, cue_words, kind_from_schema, sources_of
from .spoken.kinds import name_words, stem
from .spoken.times import Written

__all__ = ["MONEY_MARKS", "NUMBERS", "Rule", "rules"]

NUMBERS = (ValueKind.NUMBER, ValueKind.CODE)  # what a caller may say as a number
# Words that say a number is money, and the words of an argument that holds money
MONEY_MARKS = frozenset("$ € £ dollar buck cent euro pound usd eur gbp".split())
# a tool named for one of these verbs makes a new thing (a booking, an order, a visit)
_MAKES = frozenset("book reserve schedule arrange make place create add buy purchase register enrol "
                   "enroll open start".split())
_MONEY_ARGS = MONEY_MARKS | frozenset("price cost fee fare charge payment balance money sum deposit tip".split())
_CLOCK = re.compile(r"(?:[01]?\d|2[0-3]):[0-5]\d")  # a choice that is a time of day ("20:00")


@dataclass(frozen=True)
class Rule:
    """One argument's rule: its kind, where its value may come from, and the words that name it
    and the tool's other arguments (a number's role)."""

    name: str
    kind: ValueKind | None
    sources: frozenset[Source]
    cues: frozenset[str]
    rivals: frozenset[str]
    required: bool
    money: bool = False  # a price, a fee, a sum: "$", "dollars" around a number name it
    clock24: bool = False  # a time its schema asks for as HH:MM ("format": "time", "HH:MM")
    written: Written | None = None  # a moment its schema asks for written so ("format": "date")
    lone: bool = False  # the tool's only argument a caller says as a number
    choices: tuple[str, ...] = ()  # a schema's named choices ("Aire Court", "Wharfe House"), said
    fresh: bool = False  # its tool makes a new thing (`book_`, `place_`): the record's entries describe others
    form: str | None = None  # a code's form, from its description's example ("e.g. FRE-A1-TUE": AAA-A9-AAA)
    tool: frozenset[str] = frozenset()  # the words of its tool's name ("book", "mot"): they point at no record
    things: frozenset[str] = frozenset()  # of its one count, the words of the tool's choices it counts, as said
    shared: frozenset[str] = frozenset()  # its cues another number of the tool has too ("tickets" of two counts)
    about: frozenset[str] = frozenset()  # the words of its tool's description, stemmed: what it acts on
    shapes: frozenset[str] = frozenset()  # of the codes its description gives as examples ("e.g. C-9814 or S-441")
    others: frozenset[str] = frozenset()  # of a name, the tool's other arguments' word choices, as said ("sugar apple")

    @property
    def traced(self) -> bool:
        return self.kind is not None and Source.COMPOSED not in self.sources


def rules(spec: ToolSpec) -> dict[str, Rule]:
    """Each argument's rule, read from the tool's schema (cached per tool)."""
    fresh = bool(verb := name_words(spec.name)[:1]) and verb[0] in _MAKES
    return _rules(json.dumps(spec.parameters), spec.spoken, spec.grounded, fresh, frozenset(name_words(spec.name)),
                  frozenset(stem(w) for w in re.findall(r"[a-z]{3,}", spec.description.lower())))


@lru_cache(maxsize=256)
def _rules(parameters: str, spoken: tuple[str, ...], grounded: tuple[str, ...] | None, fresh: bool,
           tool: frozenset[str] = frozenset(), about: frozenset[str] = frozenset()) -> dict[str, Rule]:
    schema = json.loads(parameters)
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out: dict[str, Rule] = {}
    kinds: dict[str, ValueKind | None] = {}
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        if name in spoken or (grounded is not None and name not in grounded):
            kind, sources = None, frozenset(Source)
        else:
            kind = kind_from_schema(name, prop)
            if grounded is not None and kind is None:
                kind = ValueKind.TEXT
            sources = sources_of(name, prop)
            if name not in required and SOURCE_KEY not in prop:
                # an optional value is the caller's to add: the record's doctor or address on file
                # is not asked for by a caller who named none (`x-source` may say otherwise)
                sources = sources - {Source.INSTRUCTIONS}
            if grounded is not None:
                sources = sources - {Source.COMPOSED}
            enum = _choices(prop)
            clocks = enum is not None and all(isinstance(v, str) and _CLOCK.fullmatch(v) for v in enum)
            if enum is not None and "x-source" not in prop and not clocks and not all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in enum):
                # (a number is said, whichever of the schema's it is: "every 4, 6 or 8 weeks" on
                # the desk's list is no caller's choice of 6; a time too: "the eight o'clock" is "20:00")
                # a required one is one of the values the schema allows, the model's choice ("a
                # shower leaking" is "plumbing"), unless its values are names (a hall, a branch:
                # "Aire Court" is the caller's to say, not the model's pick from the desk's list);
                # an optional one is the caller's to add, as any optional value is: a room "if the
                # caller said" is not the model's "meeting_room" on a line that named none
                words_ = all(isinstance(v, str) for v in enum)
                names = words_ and all(v[:1].isupper() for v in enum)
                kind = ValueKind.TEXT if words_ and (names or name not in required and grounded is None) else None
                sources = frozenset({Source.CALLER, Source.RESULT}) if kind else sources
        kinds[name] = kind_from_schema(name, prop)
        cues = _cues(name, prop, kinds[name])
        description = str(prop.get("description", ""))
        out[name] = Rule(name, kind, sources, cues, frozenset(), name in required,
                         money=kind is ValueKind.NUMBER and bool(cues & _MONEY_ARGS),
                         clock24=kind is ValueKind.TIME and (prop.get("format") == "time" or "HH:MM" in description
                                                             or "24-hour" in description or bool(_choices(prop))),
                         written=written_as(kind, prop, description),
                         choices=tuple(_choices(prop) or ()) if kind is ValueKind.TEXT else (), fresh=fresh,
                         form=example_form(description) if kind is ValueKind.CODE else None, tool=tool, about=about,
                         shapes=_example_shapes(description) if kind is ValueKind.CODE else frozenset())
    counts = [n for n, r in out.items() if kinds[n] is ValueKind.NUMBER and not r.money]
    if len(counts) == 1 and not set(name_words(counts[0])) & _MEASURES:  # a tool's one count counts its things:
        # "four lemon sole" for `product`'s lemon_sole; an age or a length counts none ("Stage 6" is no age)
        things = {stem(w) for prop in props.values() if isinstance(prop, dict) for v in _choices(prop) or ()
                  if isinstance(v, str) for w in re.findall(r"[a-z]{3,}", v.lower())}
        out[counts[0]] = replace(out[counts[0]], cues=out[counts[0]].cues | things, things=frozenset(things))
    for name, rule in out.items():  # the words that name the other numbers, and not this one
        rivals = frozenset().union(*(r.cues for o, r in out.items() if o != name and kinds[o] in NUMBERS))
        others = frozenset(c.replace("_", " ").lower() for o, p in props.items() if o != name and isinstance(p, dict)
                           for c in _choices(p) or () if isinstance(c, str)) if kinds[name] is ValueKind.NAME else frozenset()
        out[name] = replace(rule, rivals=rivals - rule.cues, shared=rivals & rule.cues, lone=kinds[name] in NUMBERS and not any(
            kinds[o] in NUMBERS for o in out if o != name), others=others)
    return out


def _choices(prop: dict[str, Any]) -> list[Any] | None:
    """The schema's choices for this argument: its enum, or its items' (a list of extras, each
    one of the schema's: "add_ons": ["teeth_clean"])."""
    if "enum" in prop:
        return list(prop["enum"])
    items = prop.get("items")
    if prop.get("type") == "array" and isinstance(items, dict) and "enum" in items:
        return list(items["enum"])
    return None


def _cues(name: str, prop: dict[str, Any], kind: ValueKind | None) -> frozenset[str]:
    """The words that name this argument: its own (`spoken.cue_words`), "lastfour" for "the last four"
    digits, money's marks for money, "#" for an id."""
    cues = set(cue_words(name, prop))
    if "last" in cues and cues & {"four", "4", "digit"} or "last4" in cues:
        cues |= {"lastfour", "ending", "end", "ended"}  # "the one ending 5678": its last digits
    if cues & _MONEY_ARGS and kind is ValueKind.NUMBER:
        cues |= MONEY_MARKS
    if kind is ValueKind.CODE:
        cues |= {"#"}
    return frozenset(cues)


_MEASURES = frozenset("age aged year years minute minutes hour hours day days night nights week weeks month months".split())


def _example_shapes(description: str) -> frozenset[str]:
    """The shapes of the codes a description gives as its examples ("The booking reference, e.g.
    R-2217, LN-530 or P-118": R-9999, LN-999, P-999): each is a code of the argument's role."""
    shown = re.search(r"\b(?:e\.g\.?|for example|such as|like)\s", description)
    return frozenset(code_shape(code) for code in re.findall(r"\b[A-Z][A-Z0-9-]*\d[A-Z0-9-]*\b",
                                                             description[shown.end():])) if shown else frozenset()
