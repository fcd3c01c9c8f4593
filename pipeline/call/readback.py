"""Read-back: a consequential tool's values said back to the caller before it runs.

A tool marked `read_back` (`@tool(read_back=True)`, or a sentence with its arguments in braces:
`read_back="A taxi from {pickup_address} at {pickup_time}"`) does not run when the model calls
it, even on values the caller gave (`tools.provenance` has judged those first: a call with a value
nobody gave is refused, never read back). The agent says the values back after the reply's own
words ("A taxi from 42 Elm Street at 6 PM, is that right?"), and the call's output tells the
model it waits for the caller. The caller's next turn decides:
- a plain yes ("Yes.", "That's right.", "Yes please, go ahead."): the session runs the call as
  read back (the model writes nothing: a small model asked to write it again may not), and the
  ledger keeps the read-back and the yes beside the effect (`Ledger.confirmation`);
- anything else (a correction, "No, six thirty", a no, a question): nothing runs; the turn is the
  model's as any turn is, and the call it makes with the corrected value is read back again.

A client's own functions are not read back here: the client runs them, and asks its caller first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from ..base import events as ev
from ..base.conversation import Item
from ..tools.asks import asks_for_a_change, declines
from ..tools.evidence import Evidence
from ..tools.given import offers_value
from ..tools.number_role import folded
from ..tools.picks import word_choices
from ..tools.provenance import rules, spans_of_numbers
from ..tools.runner import ToolResult
from ..tools.schema import ToolCall, ToolSpec
from ..tools.spoken import ValueKind
from ..tools.spoken.clock import said_clock
from ..tools.spoken.kinds import name_words, stem
from ..tools.spoken.names import choice_named
from ..tools.spoken.times import moments
from ..tools.spoken.words import is_number_word, words

if TYPE_CHECKING:
    from .response import Response

_YES = re.compile(r"^\W*(yes|yeah|yep|yup|yes please|correct|that'?s (right|correct|it)|right|exactly|"
                  r"sure|ok(ay)?|perfect|absolutely|confirm(ed)?|please do|go ahead|sounds (good|right)|"
                  r"uh[- ]?huh|mm[- ]?hmm|affirmative|that is (right|correct))\b", re.I)
_NOT_PLAIN = re.compile(r"\b(no|not|n't|wait|but|actually|instead|change|wrong|except|rather|make it)\b"
                        r"|\d|\?", re.I)
_QUESTION = ", is that right?"


def affirms(text: str) -> bool:
    """Is this turn a plain yes, adding and changing nothing ("Yes, but at seven" is a correction)?"""
    said = text.strip()
    return bool(_YES.match(said)) and not _NOT_PLAIN.search(said) and not any(
        is_number_word(w.text) for w in words(said))  # "Yes, six thirty": a new value


@dataclass(frozen=True)
class Pending:
    """A call said back and waiting for the caller's yes."""

    call: ToolCall
    call_id: str
    response_id: str
    turn_id: str | None  # the turn whose reply read it back: its own words answer nothing
    sentence: str


class ReadBacks:
    """The desk's read-backs: at most one waits, the latest the model asked for."""

    def __init__(self, desk: Any) -> None:
        self.desk = desk  # the ToolDesk: its conversation, runner, calls and results
        self.pending: Pending | None = None
        self._dropped: Pending | None = None  # the one the latest turn answered other than yes
        self._said: set[str] = set()  # every read-back of the call, as `_plain` writes it
        self._readers: set[str] = set()  # the responses that said them

    def hold(self, response: Response, call_id: str, spec: ToolSpec, call: ToolCall) -> str | None:
        """The sentence to say back, where this call is to wait for the caller's yes (None: it
        runs now)."""
        if not spec.read_back:
            return None
        earlier = self.pending
        if earlier is not None and earlier.turn_id != response.turn_id and response.held and \
                affirms(response.asked.transcript or ""):
            return None  # a reply begun before a "yes" was committed: the yes runs the earlier one
        sentence = read_back(spec, call.arguments)
        self._said.add(_plain(sentence))
        self._readers.add(response.id)
        self.pending = Pending(call, call_id, response.id, response.turn_id, sentence)
        self.desk.core.log(f"{call.name} read back, waiting for the caller: {sentence!r}")
        return sentence

    def takes(self, turn_id: str, text: str) -> bool:
        """The caller's turn: a plain yes runs the waiting call (True: the desk answers this
        turn, with the call's result); anything else lets it go (False: the model answers)."""
        pending = self.pending
        if pending is None or pending.turn_id == turn_id:  # read back by this turn's (held) reply
            return False
        self.pending, self._dropped = None, pending  # the reply to this turn may correct it
        if not affirms(text):
            self.desk.core.log(f"{pending.call.name} not confirmed ({text!r}): it does not run")
            return False
        call_id = ev.new_id("call")
        self.desk.calls[call_id] = (pending.response_id, turn_id)
        self.desk.core.add_item(Item(type="function_call", call_id=call_id, name=pending.call.name,
                                     arguments=json.dumps(pending.call.arguments), status="completed"))
        self.desk.core.spawn(self.desk.run_confirmed(pending.response_id, turn_id, call_id, pending.call,
                                                     f"{pending.sentence} / {text.strip()}"))
        return True


    def waiting(self, response: Response, call_id: str, call: ToolCall) -> ToolResult:
        """The read-back call's output: it has not run, and waits for the caller; the model
        writes no reply to it (the read-back is this reply's last words)."""
        sentence = self.pending.sentence if self.pending is not None else ""
        result = ToolResult(call_id, response.id, response.turn_id, call.name, call.arguments,
                            {"status": "awaiting_confirmation", "read_back": sentence,
                             "message": f"{call.name} has not run: the values were read back to the "
                                        "caller, and it runs when they say yes."})
        result.extra["no_reply"] = True
        return result

    def said_back(self, words_said: str) -> bool:
        """Did the agent's words hold one of the session's own read-backs (its yes is `takes`'s)?"""
        plain = f" {_plain(words_said)} "
        return self.pending is not None or any(f" {said} " in plain for said in self._said)

    def repeats(self, sentence: str, response_id: str) -> bool:
        """The model's own words say a read-back again (Qwen, answering the booking's result,
        opened with "A taxi from 42 Elm Street at 6:30 PM, is that right?"): it is not asked
        twice, and the question it asks is long answered."""
        if response_id in self._readers:
            return False  # the session's own read-back, said by the reply whose call it is
        plain = _plain(sentence)  # a chunk may be a clause of it: "A taxi from 42 Elm Street at 6 PM,"
        return len(plain.split()) >= 3 and any(f" {plain} " in f" {said} " for said in self._said)

    def corrected_by(self, turn_id: str | None, text: str, evidence: Evidence) -> list[ToolSpec]:
        """The read-back tool this turn corrects, as the one call its reply may make: the caller
        answered the read-back with a new value for it ("No, make it six thirty"). A small model
        otherwise says the corrected booking back in words and books nothing. [] where the turn
        is a yes, a plain no, or gives no value the tool takes (a question: the model answers)."""
        pending = self.pending if self.pending is not None else self._dropped
        if pending is None or pending.turn_id == turn_id or affirms(text) or declines(text):
            return []
        spec = self.desk.registry.get(pending.call.name)
        if spec is None or not corrects_value(spec, text, pending.sentence, evidence):
            return []
        return [spec]


def _plain(sentence: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", sentence.lower()).strip()


def read_back(spec: ToolSpec, arguments: dict[str, Any]) -> str:
    """The call's values as the agent says them back: the tool's own sentence, or each value by
    its argument's name ("To confirm: pickup address 42 Elm Street, pickup time 6 PM")."""
    kinds = {name: rule.kind for name, rule in rules(spec).items()}
    said = {name: spoken(value, kinds.get(name)) for name, value in arguments.items() if name not in spec.spoken}
    if isinstance(spec.read_back, str):
        fields = re.findall(r"\{(\w+)\}", spec.read_back)
        if all(f in said for f in fields):
            return spec.read_back.format(**said).rstrip(".?! ") + _QUESTION
    listed = ", ".join(f"{' '.join(name_words(name))} {value}" for name, value in said.items())
    return f"To confirm: {listed}{_QUESTION}"


def spoken(value: Any, kind: ValueKind | None) -> str:
    """A value as it is said: "18:30" is "6:30 PM", "2026-06-04" is "Thursday, June 4"."""
    text = str(value)
    if kind is ValueKind.TIME and (found := moments(words(text), None, written=True)) and \
            len(found) == 1 and len(found[0].spans) == 1 and found[0].spans[0][0] == found[0].spans[0][1]:
        return said_clock(found[0].spans[0][0])  # "6 thirty pm", "18:30": one time of day
    if kind in (ValueKind.TIME, ValueKind.DATETIME) and (m := re.search(r"\b(\d{1,2}):(\d{2})", text)):
        clock = said_clock(int(m.group(1)) * 60 + int(m.group(2)))
        if kind is ValueKind.TIME:
            return clock
        text = text[:m.start()].rstrip("T ") + " at " + clock
    if kind in (ValueKind.DATE, ValueKind.DATETIME) and (d := re.match(r"(\d{4})-(\d{2})-(\d{2})", text)):
        day = date(int(d.group(1)), int(d.group(2)), int(d.group(3)))
        return f"{day:%A}, {day:%B} {day.day}" + text[d.end():]
    return text


# The agent's words that ask the caller to confirm an action ("..., is that right?", "Shall I
# cancel it?"), whoever wrote them: the model's own read-back in words, not the session's.
_CONFIRMING = re.compile(r"\b(is that (right|correct|ok(ay)?|all right)|is this (right|correct)|shall i|"
                         r"should i|do you want me to|would you like me to|can i go ahead|did i get that right|"
                         r"can you confirm|could you confirm)\b|\b(right|correct|ok(ay)?)\s*\?", re.I)


def asked_to_confirm(evidence: Evidence) -> bool:
    """Did the agent's last words ask the caller to confirm an action ("..., is that right?")?"""
    return bool(evidence.said and evidence.asked and _CONFIRMING.search(evidence.asked[-1] or ""))


def confirmed_in_words(specs: list[ToolSpec], evidence: Evidence) -> list[ToolSpec]:
    """The tools this reply must call from: the agent asked in its own words to confirm an
    action ("Dr. Lindqvist tomorrow at 5 am for Omar Said, is that right?") and the caller said
    yes, or corrected a value a tool takes ("No, five pm, not five in the morning"). A small
    model otherwise answers a yes or a correction in words and books nothing. The tools: those
    the question names ("shall I cancel it?": `cancel_ride`), else those whose arguments the
    question's values fill; on a correction (any answer but a yes that gives a value: "Ah, no, it's
    the sixteenth", "Fifteen, one five, Oak Road"), those the correction gives a value to. []
    where the agent asked no such question, or the caller called it off ("No, don't"), or asked
    something."""
    if not asked_to_confirm(evidence):
        return []
    question, said = evidence.asked[-1], evidence.said[-1]
    if affirms(said):
        correcting = False
    elif "?" in said and not asks_for_a_change(said) or declines(said):
        return []
    else:  # not a yes: a value said again ("The fifteenth, one five") corrects as "No, ..." does
        correcting = True
    asked = {w.text for w in words(question)}
    named = [s for s in specs if name_words(s.name)[0] in asked]
    stems = {stem(w) for w in asked}  # "book the collection": book_collection, of two tools to book
    named = [s for s in named if stems & {stem(w) for w in name_words(s.name)[1:]}] or named
    earlier = Evidence(said=evidence.said[:-1], asked=evidence.asked[:-1], results=evidence.results,
                       instructions=evidence.instructions, now=evidence.now)
    candidates = named or [s for s in specs if offers_value(s, question, earlier)]
    if correcting:
        candidates = [s for s in candidates if corrects_value(s, said, question, evidence)]
    return candidates


def corrects_value(spec: ToolSpec, said: str, question: str, evidence: Evidence) -> bool:
    """Do these words, an answer to this tool's read-back, give it a value: one of an argument's
    kind ("No, make it six thirty"; any words could be an address, "my home address", so those
    count for nothing), a choice of its schema's ("Can it be the afternoon?", "velvet instead"),
    or a number where the read-back said one ("Ah sorry, make it two. Four's heaps", after "Four
    bottles of algaecide": a correction that says several numbers has no one for a role)?"""
    if offers_value(spec, said, evidence, loose=(ValueKind.TEXT, ValueKind.ADDRESS)):
        return True
    properties = spec.parameters.get("properties", {})
    if any(choice_named(word_choices(spec, name), said) for name in properties):
        return True
    return bool(spans_of_numbers(folded(said)) and spans_of_numbers(folded(question))) and any(
        rule.traced and rule.kind in (ValueKind.NUMBER, ValueKind.CODE) for rule in rules(spec).values())
