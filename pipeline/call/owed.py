"""What a reply must not say, and what it still owes the caller after its own words.

A small model is a weak judge of what the caller may hear. The session holds two lines for it:

Not said (`screen`, each chunk before it is spoken):
- a sentence that talks about a tool by its identifier ("You may call the `refund` function
  ...", `tools.ask.names_a_tool`), or about making a call at all ("you could return the following
  JSON object:", `tools.ask.talks_about_calling`);
- a sentence that states an id nobody gave, named by a tool's own argument words
  (`given.stated_ids`:
  asked "Where is my order?", Qwen2.5-0.5B said "The order number is 4417.", its schema's
  example); the question back asks for it instead;
- a sentence that says an effect went through while one is still running: asked "Did that go
  through?" before the gateway answered, Qwen2.5-0.5B said "Yes, it went through.";
- a read-back the session said earlier, said again by the model (`readback.repeats`);
- with `call.unsourced_facts` on, a sentence that states a number, price, time or limit no
  source gave (`tools.facts`: "The daily limit is 10,000 dollars."); the caller hears "I'm
  sorry, I don't have that information." instead.

Owed (`owed`, after the reply's last word), where the words said do not already do it:
- where a reply to the caller had nothing they may hear, a request to say it again (`NOTHING_SAID`);
- the question back (`tools.ask.question`) for a tool the reply reached for and could not use
  (written in its words, cut off mid-call, or talked about), or that the caller asked for by
  name and was not offered (`tools.choice.asked_for`), or for the call the provenance
  guard refused that this reply answers;
- in place of a claim that was not said, the effect's honest state (`STILL_RUNNING`);
- the outcome of an effect the reply is about (`tools.confirms.statement`), so the caller hears
  what moved and where ("The refund was committed and succeeded." names neither).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..tools.ask import asking_for, names_a_tool, owes_question, question, talks_about_calling
from ..tools.choice import asked_for
from ..tools.confirms import claims_done, confirms, statement
from ..tools.evidence import Evidence
from ..tools.facts import NO_INFORMATION, unsourced
from ..tools.given import lacking, stated_ids
from ..tools.number_role import folded
from ..tools.provenance import spans_of_numbers
from ..tools.schema import ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from .response import Response


class Desk(Protocol):
    """What of the session's tools this needs (`desk.ToolDesk`)."""

    registry: ToolRegistry
    core: Any  # its log and clock
    ledger: Any  # the rows a reply is about (None without side effects)
    readback: Any  # its ReadBacks: the sentences said back (`readback`)
    words_only: set[str]  # replies that answer the caller's words in place of a refused act (`results_reply`)

    def offers(self, response: Response, name: str) -> bool: ...

    def evidence_for(self, response: Response) -> Evidence: ...

    def answers_the_caller(self, response: Response) -> bool: ...


# Said where a reply to the caller had nothing they may hear (its only sentence read back an id they
# never gave, "that's order DC-5719?" for "D C, five, seven, nine, one"; or a call in its words).
NOTHING_SAID = "Sorry, I didn't get that down. Could you say it once more?"

# Said where a claim that it went through was not: an open state, which never counts as told.
STILL_RUNNING = "It's still going through; I'll tell you as soon as it's done."


class OwedWords:
    """The desk's part of each reply's words (`ToolHooks.screen`, `ToolHooks.owed`)."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.questions: dict[str, str | None] = {}  # response id -> the question its refusal owes
        self.read_backs: dict[str, str] = {}  # response id -> the read-back its call owes (`readback`)
        self.running: dict[str, str] = {}  # call id -> the side-effecting tool it runs
        self._talked: dict[str, str] = {}  # response id -> the tool a dropped sentence was about
        self._claimed: set[str] = set()  # responses that claimed a running effect done
        self._no_information: set[str] = set()  # responses that stated a fact nobody gave

    def started(self, call_id: str, spec: ToolSpec | None) -> None:
        if spec is not None and spec.side_effect:
            self.running[call_id] = spec.name

    def finished(self, call_id: str) -> None:
        self.running.pop(call_id, None)

    def screen(self, response: Response, chunk: str) -> str | None:
        """Why this chunk is not said (None: it is)."""
        named = names_a_tool(chunk, self.desk.registry.specs())
        if named is not None:
            self._talked.setdefault(response.id, named)
            return f"it talks about the tool {named}"
        if talks_about_calling(chunk):
            return "it talks about making a call"
        specs = self.desk.registry.specs()
        if specs and spans_of_numbers(folded(chunk)) and (
                invented := stated_ids(chunk, specs, self._words_evidence(response))):
            evidence = self.desk.evidence_for(response)
            spec = asking_for(invented[0][1], specs, lambda s: lacking(s, evidence))
            if spec is not None:
                self._talked.setdefault(response.id, spec.name)
            return f"it states an id nobody gave ({invented[0][1]})"
        if self.desk.core.config.call.unsourced_facts and (
                facts := unsourced(chunk, self._words_evidence(response))):
            self._no_information.add(response.id)
            return f"it states a fact nobody gave ({facts[0]})"
        if self.desk.readback.repeats(chunk, response.id):
            return "it repeats a read-back the caller has answered"
        if self.running and claims_done(chunk):
            self._claimed.add(response.id)
            return f"it says done while {', '.join(sorted(set(self.running.values())))} still runs"
        return None

    def _words_evidence(self, response: Response) -> Evidence:
        """What the agent's own words may take an id from: the caller's words and results, the
        instructions it was given (a desk told the caller's booking reference) and this reply's
        notes (a reminder's outcome, read from the ledger); not the tools' schema, whose example
        ids Qwen read out."""
        evidence = self.desk.evidence_for(response)
        asked = response.asked
        told = [asked.options.instructions or self.desk.core.config.response.instructions]
        told += [str(m.get("content", "")) for m in asked.messages[1:] if m.get("role") == "system"]
        told = [t for t in told if t]
        return replace(evidence, said=[*evidence.said, *told], asked=[*evidence.asked, *[""] * len(told)])

    async def owed(self, response: Response, reached: str | None, said: str) -> str | None:
        out = [NO_INFORMATION] if response.id in self._no_information else []
        if (back := self.read_backs.pop(response.id, None)) is not None:  # a call written after words
            out.append(back)
        elif owes_question(said) and response.id not in self.desk.words_only and (ask := self._question(
                response, reached or self._talked.get(response.id) or self._asked_for(response))):
            out.append(ask)
        if response.id in self._claimed and self.running:
            out.append(STILL_RUNNING)
        for row in await self._rows(response):
            tells = spec.tells if (spec := self.desk.registry.get(row.tool)) is not None else ()
            if not confirms(row, said, tells).told and (line := statement(row, tells)) is not None:
                self.desk.core.log(f"{response.id} did not state {row.business_key}; the session says it")
                out.append(line)
        if not out and not said.strip() and response.call_out.made is None and (
                self.desk.answers_the_caller(response) or response.id in self.desk.words_only):
            # every sentence screened, or only markup written: the caller would hear nothing
            self.desk.core.log(f"{response.id} had nothing the caller may hear; the session asks again")
            out.append(NOTHING_SAID)
        self.forget(response.id)
        return " ".join(out) or None

    async def _rows(self, response: Response) -> list[Any]:
        """The ledger rows of the effects the reply is about (read in a thread: the ledger's rule)."""
        ledger = self.desk.ledger
        keys = response.asked.about_keys
        if ledger is None or not keys:
            return []
        rows = await self.desk.core.clock.run_in_thread(lambda: [ledger.get(k) for k in keys])
        return [row for row in rows if row is not None]

    def forget(self, response_id: str) -> None:
        """The response has ended (its words owed, or cut off before its last word)."""
        self._talked.pop(response_id, None)
        self._claimed.discard(response_id)
        self._no_information.discard(response_id)
        self.questions.pop(response_id, None)
        self.read_backs.pop(response_id, None)

    def _asked_for(self, response: Response) -> str | None:
        """The side effect the caller's words this reply answers asked for by name (their turn's
        reply, or a client's response.create right after their words)."""
        if not self.desk.answers_the_caller(response):
            return None
        said = self.desk.evidence_for(response).said
        spec = asked_for(self.desk.registry.specs(), said[-1]) if said else None
        return spec.name if spec is not None else None

    def _question(self, response: Response, reached: str | None) -> str | None:
        """A tool this reply was not offered for want of what the caller has not said
        (`given.lacking`), or a refusal this reply answers: what to ask for."""
        desk = self.desk
        spec = desk.registry.get(reached) if reached else None
        if spec is not None and not desk.offers(response, spec.name):
            if (ask := question(spec, lacking(spec, desk.evidence_for(response)))) is not None:
                return ask
        return self.questions.pop(response.id, None)
