"""The session's tools: start calls, bind results, ask for replies, remind about side effects.

Every result is bound to the call, response and turn that asked for it; results are held per
response and flushed when it ends cleanly, or sorted out when it was cut off. Once results enter
the conversation the model is asked to speak (unless a newer response already saw them); a side
effect the caller never heard about gets a reminder, at most twice. What counts as told is judged
from the words the caller heard, whichever response said them (`confirms`). Ledger reads and
writes run in a thread (an fsync on the event loop would delay barge-in), bar one at setup.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..base import events as ev
from ..base.conversation import Item
from ..tools.buffer import TurnResultBuffer
from ..tools.choice import called_for, must_close, offered
from ..tools.dialect import JSON, ToolDialect
from ..tools.evidence import Evidence, evidence_from
from ..tools.given import with_unsettled
from ..tools.provenance import trace
from ..tools.runner import Query, ToolResult, ToolRunner
from ..tools.schema import ToolCall, ToolRegistry, ToolSpec
from ..tools.unasked import unasked
from .callctl import CallControl
from .core import SessionCore
from .handle import Purpose
from .owed import OwedWords
from .readback import ReadBacks, asked_to_confirm, confirmed_in_words
from .responder import Responder
from .response import Response
from .results_reply import reply_about
from .telling import Telling
from .transfer import built_in

# Results recorded within this long of each other are answered in one reply: one audio frame,
# on the simulated clock "the same moment" (everything due at an instant runs before it passes)
RESULTS_TOGETHER_S = 0.02


class ToolDesk:
    """Implements the response's `ToolHooks`; bound to the responder once both exist."""

    def __init__(self, core: SessionCore, control: CallControl) -> None:
        self.core = core
        self.control = control
        self.responder: Responder | None = None
        self.registry = ToolRegistry()
        self.runner: ToolRunner | None = None
        self.ledger: Any = None
        self.results = TurnResultBuffer()
        self.calls: dict[str, tuple[str, str | None]] = {}  # call_id -> (response_id, turn_id)
        self._delivered: set[str] = set()
        self.history_version = 0  # bumped whenever tool results enter the conversation
        self.ledger_keys: set[str] = set()  # side effects this call asked for
        self.reply_pending: dict[str, int] = {}  # key -> history version of the reply waiting to start
        self._unanswered: list[ToolResult] = []  # recorded, waiting for the one reply about them
        self._asker: Any = None  # the task that starts that reply
        self.telling = Telling(self)  # told, and the reminders of what was not (`telling`)
        self._grammar: tuple[tuple[str, ...], str] | None = None
        self._offered: dict[str, set[str]] = {}  # response id -> the tools its grammar offered
        self.words_only: set[str] = set()  # replies offered no tool (`results_reply`)
        self._withheld: set[str] = set()  # client calls on values nobody gave: refused here (`prepare`)
        self.words = OwedWords(self)  # what a reply must not say, and what it owes (`owed`)
        self.readback = ReadBacks(self)  # calls said back, waiting for the caller's yes (`readback`)
        self.now: Callable[[], datetime] = datetime.now  # when the words were said ("tomorrow"); a replay sets its own
        self.dialect: ToolDialect = JSON  # how the model writes a call: its LLM's, once bound
        if core.config.call.end_call or core.config.call.transfer:  # the built-in tools alone
            self.use(ToolRegistry())

    def bind(self, responder: Responder) -> None:
        self.responder = responder
        self.dialect = getattr(responder.ctx.llm, "tool_dialect", JSON)

    @property
    def _responses(self) -> Responder:
        assert self.responder is not None, "ToolDesk.bind(responder) first"
        return self.responder

    # --- configuration ---------------------------------------------------------------------------

    def use(self, registry: ToolRegistry, *, ledger: Any = None,
            queries: dict[str, Query] | None = None) -> None:
        """Offer these tools to the model; side-effecting ones go through `ledger`."""
        registry = built_in(self, registry)  # end_call, transfer_call (`call.transfer`)
        self.registry = registry
        self.ledger = ledger
        self.runner = ToolRunner(registry, ledger=ledger, queries=queries, control=self.control,
                                 clock=self.core.clock, evidence=self.evidence)
        self.unsettled: list[Any] = ledger.unsettled() if hasattr(ledger, "unsettled") else []  # a crash's

    def evidence(self) -> Evidence:
        """What a tool's arguments must be found in (`provenance`): the caller's words in this
        call (transcripts, typed text), what the agent said before each (a number given in answer
        to "What's the order number?" is an order number), the outputs of earlier calls, and the
        instructions (an account the deployment put there)."""
        said: list[str] = []
        asked: list[str] = []
        agent = ""
        for item in self.core.conversation.items:
            if item.type == "message" and item.role == "assistant":
                agent = item.text  # what was heard of it, where it was cut short
            elif item.type == "message" and item.role == "user":
                said.append(item.text)
                asked.append(agent)
                agent = ""
        return evidence_from(said, (i.output or "" for i in self.core.conversation.items
                                    if i.type == "function_call_output"), asked,
                             instructions=self.core.config.response.instructions, now=self.now())

    # --- ToolHooks (what a response needs) -------------------------------------------------------

    def __len__(self) -> int:
        return len(self.registry)

    def specs(self) -> list[ToolSpec]:
        return self.registry.specs()

    def spec(self, name: str) -> ToolSpec | None:
        return self.registry.get(name)

    def grammar(self, response: Response | None = None) -> str | None:
        """The constrained-decoding grammar for the tools this response may call (`choice`: none it
        could not ground, an effect a crash left unknown counting as given, no hang-up the caller
        did not ask for, in the reply about a turn's results none of the calls it answers)."""
        if not len(self.registry):
            return None
        specs, forced = self.registry.specs(), []
        if response is not None and response.id in self.words_only:
            specs = []
        elif response is not None and self.core.config.call.tool_choice:
            evidence = with_unsettled(self.unsettled, self.evidence_for(response))
            # the calls the reply about results answers: its turn's, or with no turn (a client's
            # response.create) those since the caller last spoke; a refused call is not offered again
            called = () if response.purpose is not Purpose.TOOL_RESULT else tuple(
                i.name or "" for i in (self.core.conversation.items if response.turn_id else self.core.conversation.since_caller())
                if i.type == "function_call" and self.calls.get(i.call_id or "", ("", None))[1] == response.turn_id)
            last = evidence.said[-1] if evidence.said else ""
            specs = offered(specs, evidence, last_said=last, called=called, telling=bool(response.asked.about_keys))
            answers = self.answers_the_caller(response)
            forced = must_close(specs, last) if answers else []
            if answers and not forced:  # a read-back corrected: the call again
                forced = self.readback.corrected_by(response.turn_id, last, evidence)
            if answers and not forced and asked_to_confirm(evidence) and not self.readback.said_back(
                    evidence.asked[-1]):  # a yes to the model's own read-back, from the tools its
                # question may name (offered again, unnarrowed), not the one the answer's words fit best
                forced = confirmed_in_words(offered(self.registry.specs(), evidence, last_said=last, called=called,
                                                    telling=bool(response.asked.about_keys), narrow=False), evidence)
            if answers and not forced:  # "please freeze the card ending 0387"
                forced = called_for(specs, last)
            specs = forced or specs
        if response is not None:
            self._offered[response.id] = {spec.name for spec in specs}
        names = (self.dialect.name, str(not forced), *(spec.name for spec in specs))
        if self._grammar is None or self._grammar[0] != names:
            self._grammar = (names, self.dialect.grammar(specs, allow_text=not forced))
        return self._grammar[1]

    def answers_the_caller(self, response: Response) -> bool:
        """A reply to the caller's words: their committed turn, or a client's response.create
        right after the caller's message (typed, or a turn the client committed itself)."""
        if response.purpose is Purpose.TURN:
            return True
        own = response.item  # the reply's own item is in the conversation already
        items = [i for i in self.core.conversation.items if i is not own]
        return response.purpose is Purpose.CLIENT and bool(items) and items[-1].type == "message" \
            and items[-1].role == "user"

    def evidence_for(self, response: Response) -> Evidence:
        """The evidence, with the words a held (preemptive) response answers: not yet in the
        conversation."""
        evidence = self.evidence()
        transcript = response.asked.transcript
        if transcript is not None and response.held:  # asked: what the agent said since the caller spoke
            last = next((i for i in reversed(self.core.conversation.items) if i.type == "message" and i is not response.item), None)
            agent = last.text if last is not None and last.role == "assistant" else ""
            evidence = replace(evidence, said=[*evidence.said, transcript], asked=[*evidence.asked, agent])
        return evidence

    def screens(self) -> bool:
        return bool(len(self.registry)) or self.core.config.call.unsourced_facts

    def screen(self, response: Response, chunk: str) -> str | None:
        return self.words.screen(response, chunk)

    async def owed(self, response: Response, reached: str | None, said: str) -> str | None:
        return await self.words.owed(response, reached, said)

    def prompt(self) -> str | None:
        return self.dialect.prompt(self.registry.specs()) if len(self.registry) else None

    def say_param(self, spec: ToolSpec, param: str) -> bool:
        return not (spec.name == "end_call" and self.control.farewell_said)  # one farewell a call

    def offers(self, response: Response, name: str) -> bool:
        """Whether this response's grammar offered the tool (`choice`): a call the model writes
        in its words (a markdown block) past the grammar is no call of a tool it was not given."""
        offered = self._offered.get(response.id)
        return offered is None or name in offered

    def repeats(self, response: Response, call: ToolCall) -> bool:
        """This turn already made the call, with the same arguments but the words said while it
        runs: a model that writes it again after its result (Qwen2.5-0.5B does) asks for nothing
        new, and what the first one did stands (a side effect's second run would be the ledger's
        `already_done`, and a reply about that, and so on)."""
        spec = self.registry.get(call.name)
        spoken = set(spec.spoken) if spec is not None else set()

        def effect(arguments: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in arguments.items() if k not in spoken}

        for item in self.core.conversation.items:
            if (item.type == "function_call" and item.name == call.name and item.call_id in self.calls
                    and self.calls[item.call_id][1] == response.turn_id and response.turn_id is not None
                    and effect(json.loads(item.arguments or "{}")) == effect(call.arguments)):
                return True
        return False

    def prepare(self, response: Response, call_id: str, call: ToolCall) -> ToolCall:
        """The call as it will be made: each argument traced (`provenance`), optional ones nobody gave
        left out. A client's function acts as ours may: with a required value nobody gave, or as an act
        nobody asked for (`unasked`), it is not handed to the client; the model reads the refusal (`_run`)."""
        spec = self.registry.get(call.name)
        if spec is None or self.runner is None or self.runner.evidence is None:
            return call
        traced = trace(spec, call.arguments, evidence := self.evidence_for(response))
        if traced.dropped:
            self.core.log(f"{call.name}: left out {', '.join(traced.dropped)}, which nobody gave "
                          f"({json.dumps({k: call.arguments[k] for k in traced.dropped})})")
        if (refused := bool(traced.missing) or unasked(spec, traced.arguments, evidence)) and spec.fn is None:
            self._withheld.add(call_id)  # refused by the runner (`_run`), as our own tools are
        made = ToolCall(name=call.name, arguments=traced.arguments)
        if not refused and spec.fn is not None and (
                sentence := self.readback.hold(response, call_id, spec, made)) is not None:
            self.words.read_backs[response.id] = sentence  # said after the reply's words
        return made

    def handed(self, call_id: str) -> bool:
        return call_id not in self._withheld

    def start(self, response: Response, call_id: str, call: ToolCall) -> None:
        """Called as soon as a call's arguments are final, before its holding line has played."""
        self.calls[call_id] = (response.id, response.turn_id)
        spec = self.registry.get(call.name)
        self.words.started(call_id, spec)
        if spec is not None and spec.fn is None and call_id not in self._withheld:
            return  # a client's tool: the client runs it and sends function_call_output
        if (pending := self.readback.pending) is not None and pending.call_id == call_id:
            self.deliver(self.readback.waiting(response, call_id, call))  # it runs on the caller's yes
            return
        self.core.spawn(self._run(response, call_id, call))

    def said_back(self, response: Response) -> str | None:
        return self.words.read_backs.pop(response.id, None)

    def takes_turn(self, turn_id: str, text: str) -> bool:
        return self.readback.takes(turn_id, text)

    async def run_confirmed(self, response_id: str, turn_id: str, call_id: str, call: ToolCall,
                            confirmation: str) -> None:
        """The call the caller said yes to, run as read back; the confirmation goes on its row."""
        assert self.runner is not None
        try:
            result = await self.runner.run(call, call_id=call_id, response_id=response_id, turn_id=turn_id,
                                           confirmation=confirmation)
        except Exception as exc:  # every call gets an output, as in `_run`
            result = ToolResult(call_id, response_id, turn_id, call.name, call.arguments,
                                {"error": f"{type(exc).__name__}: {exc}"})
        self.deliver(result)

    def settle(self, response: Response, *, clean: bool) -> None:
        pending = self.readback.pending
        if not clean and pending is not None and pending.response_id == response.id:
            self.readback.pending = None  # cut off: the read-back was not heard, so no yes answers it
        self._offered.pop(response.id, None)
        self.words_only.discard(response.id)
        self.words.forget(response.id)
        self._record(*self.results.settle(response.id, clean=clean))
        if not clean and response.item.interrupted and self.ledger is not None:
            # cut off: the words heard before the cut may still have stated an outcome
            self.core.spawn(self.telling.judge(response, response.item.text or ""))

    def heard(self, response: Response) -> None:
        if self.ledger is None:  # told and reminders are about ledger rows
            return
        self.core.spawn(self.telling.after_heard(response))

    # --- results ---------------------------------------------------------------------------------

    async def _run(self, response: Response, call_id: str, call: ToolCall) -> None:
        try:
            if self.runner is None:
                raise RuntimeError("no tools are configured for this session; call session.use_tools(...)")
            result = await self.runner.run(call, call_id=call_id, response_id=response.id,
                                           turn_id=response.turn_id)
            if (missing := result.extra.get("ungrounded")) is not None or "unasked" in result.extra:
                self.core.log(f"{call.name} not run: " + (f"the caller never gave its {', '.join(missing)} "
                              f"({json.dumps(call.arguments)})" if missing else "nobody asked for it"))
                # refused again in the very reply meant to ask the caller: the model is guessing
                # in a loop; the refusal enters the history, and the caller's next turn is heard
                result.extra["no_reply"] = response.purpose not in (Purpose.TURN, Purpose.CLIENT)
        except Exception as exc:  # every call gets an output: the model must never wait forever
            result = ToolResult(call_id, response.id, response.turn_id, call.name, call.arguments,
                                {"error": f"{type(exc).__name__}: {exc}"})
        self.deliver(result)

    def deliver_client_output(self, call_id: str, output: str, item_id: str | None = None) -> bool:
        """A client's function_call_output: bound to the call it answers, like our own results.

        Raises KeyError for a call this session never made. As with a hosted API, the client
        asks for the reply itself (response.create). `item_id`: the id the client gave the item
        (a client that mirrors the conversation waits for that id to be added).
        """
        bound = self.calls.get(call_id)
        if bound is None:
            raise KeyError(call_id)
        call_item = next((i for i in self.core.conversation.items
                          if i.call_id == call_id and i.type == "function_call"), None)
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        result = ToolResult(call_id, bound[0], bound[1], call_item.name if call_item and call_item.name is not None else "tool",
                            json.loads(call_item.arguments) if call_item and call_item.arguments else {},
                            parsed if isinstance(parsed, dict) else {"output": output})
        result.extra["from_client"] = True
        if item_id is not None:
            result.extra["item_id"] = item_id
        return self.deliver(result)

    def deliver(self, result: ToolResult) -> bool:
        """A tool result arrives; it must match the call, response and turn it answers."""
        emit = self.core.emit
        bound = self.calls.get(result.call_id)
        if bound is None:
            emit(ev.error_event("unknown_call_id", f"no tool call {result.call_id!r} is pending"))
            return False
        if bound != (result.response_id, result.turn_id):
            emit(ev.error_event("call_binding_mismatch",
                                f"result for {result.call_id!r} names response {result.response_id!r} "
                                f"and turn {result.turn_id!r}; the call belongs to {bound}"))
            return False
        if result.call_id in self._delivered:
            emit(ev.error_event("duplicate_result", f"{result.call_id!r} already has a result"))
            return False
        self._delivered.add(result.call_id)
        self.words.finished(result.call_id)
        if result.business_key:
            self.ledger_keys.add(result.business_key)
        self._record(*self.results.add(result))
        return True

    def _record(self, results: list[ToolResult], dropped: list[ToolResult]) -> None:
        for r in dropped:
            self.core.log(f"dropped the {r.name} result of {r.call_id}: its response was interrupted")
        fresh = []
        for r in results:
            given_id = {"id": r.extra["item_id"]} if "item_id" in r.extra else {}
            self.core.add_item(Item(
                type="function_call_output", call_id=r.call_id, name=r.name, output=json.dumps(r.output),
                note="completed during an interruption" if r.interrupted else None, **given_id))
            if not r.interrupted and not r.extra.get("from_client") and not r.extra.get("no_reply"):
                fresh.append(r)
        if results:
            self.history_version += 1
        if fresh and not self.control.closed:
            keys = tuple(r.business_key for r in fresh if r.business_key)
            self.reply_pending.update(dict.fromkeys(keys, self.history_version))  # before a reminder looks
            self._unanswered += fresh
            if self._asker is None or self._asker.done():
                self._asker = self.core.spawn(self._ask_for_reply())

    async def _ask_for_reply(self) -> None:
        """Speak about new results, unless a response that already saw them has started.

        One reply answers every result recorded before it begins: results that land together
        (a refund settling as the change to it is refused) are confirmed once, by a reply that
        sees all of them, never by one reply each where the second repeats the first.
        """
        responder = self._responses
        await self.core.clock.sleep(RESULTS_TOGETHER_S)
        version = self.history_version
        keys: tuple[str, ...] = ()
        try:
            while self._unanswered:
                version = self.history_version
                keys = tuple(dict.fromkeys(r.business_key for r in self._unanswered if r.business_key))
                if self.superseded(version):
                    self._unanswered.clear()
                    return
                if responder.active is None and not responder.caller_speaking():  # never talk over the caller
                    results, self._unanswered = self._unanswered, []
                    reply_about(self, responder, results, keys)
                    return
                await self.core.floor.wait()
        finally:
            for key in keys:
                if self.reply_pending.get(key, version + 1) <= version:
                    del self.reply_pending[key]

    def superseded(self, version: int) -> bool:
        """A response that saw this history version has started: it speaks about those results."""
        return any(r.asked.history_version >= version for r in self._responses.responses if not r.held)
