"""The session's tool orchestration: start calls, bind results, ask for replies, remind.

A mixin of `Session` (pipeline/session.py), split out so each file keeps one responsibility.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import events as ev
from .conversation import Item
from .response import Response
from .tools import ToolRegistry
from .tools.runner import Query, ToolResult, ToolRunner

if TYPE_CHECKING:
    from .session import Session

    _Base = Session
else:
    _Base = object


class ToolsMixin(_Base):

    def use_tools(self, registry: ToolRegistry, *, ledger: Any = None,
                  queries: dict[str, Query] | None = None) -> None:
        """Offer these tools to the model; side-effecting ones go through `ledger`."""
        if self.config.call.end_call and "end_call" not in registry:
            from .callctl import end_call_tool

            registry = ToolRegistry(specs=[*registry.specs(), end_call_tool()])
        self.tools = registry
        self.ledger = ledger
        self.runner = ToolRunner(registry, ledger=ledger, queries=queries, control=self.control)

    def tool_grammar(self) -> str | None:
        """The constrained-decoding grammar for the current tools (None without tools)."""
        if not len(self.tools):
            return None
        names = tuple(spec.name for spec in self.tools.specs())
        if getattr(self, "_grammar_for", None) != names:
            from .tools import tool_call_grammar

            self._grammar_for, self._grammar = names, tool_call_grammar(self.tools.specs())
        return self._grammar

    def start_tool(self, response: Response, call_id: str, call: Any) -> None:
        """Called as soon as a call's arguments are final, before its holding line has played."""
        self.calls[call_id] = (response.id, response.turn_id)
        spec = self.tools.get(call.name)
        if spec is not None and spec.fn is None:
            return  # a client's tool: the client runs it and sends function_call_output
        self.spawn(self._run_tool(response, call_id, call))

    def deliver_client_output(self, call_id: str, output: str) -> bool:
        """A client's function_call_output: bound to the call it answers, like our own results.

        Raises KeyError for a call this session never made. As with a hosted API, the client
        asks for the reply itself (response.create).
        """
        bound = self.calls.get(call_id)
        if bound is None:
            raise KeyError(call_id)
        call_item = next((i for i in self.conversation.items if i.call_id == call_id and i.type == "function_call"),
                         None)
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        result = ToolResult(call_id, bound[0], bound[1], call_item.name if call_item else "tool",
                            json.loads(call_item.arguments) if call_item and call_item.arguments else {},
                            parsed if isinstance(parsed, dict) else {"output": output})
        result.extra["from_client"] = True
        return self.deliver(result)

    async def _run_tool(self, response: Response, call_id: str, call: Any) -> None:
        try:
            if self.runner is None:
                raise RuntimeError("no tools are configured for this session; call session.use_tools(...)")
            result = await self.runner.run(call, call_id=call_id, response_id=response.id,
                                           turn_id=response.turn_id)
        except Exception as exc:  # every call gets an output: the model must never wait forever
            result = ToolResult(call_id, response.id, response.turn_id, call.name, call.arguments,
                                {"error": f"{type(exc).__name__}: {exc}"})
        self.deliver(result)

    def deliver(self, result: ToolResult) -> bool:
        """A tool result arrives; it must match the call, response and turn it answers."""
        bound = self.calls.get(result.call_id)
        if bound is None:
            self.emit(ev.error_event("unknown_call_id", f"no tool call {result.call_id!r} is pending"))
            return False
        if bound != (result.response_id, result.turn_id):
            self.emit(ev.error_event("call_binding_mismatch",
                                     f"result for {result.call_id!r} names response {result.response_id!r} "
                                     f"and turn {result.turn_id!r}; the call belongs to {bound}"))
            return False
        if result.call_id in self._delivered:
            self.emit(ev.error_event("duplicate_result", f"{result.call_id!r} already has a result"))
            return False
        self._delivered.add(result.call_id)
        if result.business_key:
            self.ledger_keys.add(result.business_key)
        self._record_results(*self.results.add(result))
        return True

    def _record_results(self, results: list[ToolResult], dropped: list[ToolResult]) -> None:
        for r in dropped:
            self.log(f"dropped the {r.name} result of {r.call_id}: its response was interrupted")
        fresh = []
        for r in results:
            item = self.conversation.add(Item(
                type="function_call_output", call_id=r.call_id, name=r.name, output=json.dumps(r.output),
                note="completed during an interruption" if r.interrupted else None))
            self.emit(ev.ItemCreated(item=item.to_dict(), previous_item_id=self.conversation.previous_id(item)))
            if not r.interrupted and not r.extra.get("from_client"):
                fresh.append(r)
        if results:
            self.history_version += 1
        if fresh and not self.control.closed:
            keys = tuple(r.business_key for r in fresh if r.business_key)
            self._reply_pending.update(keys)  # at once: a reminder must not race this reply
            self.spawn(self._ask_for_reply(self.history_version, fresh, keys))

    async def _floor_free(self) -> None:
        """Wait until no response is running and the caller is not holding the floor."""
        while self.active is not None or self.caller_speaking:
            await self.clock.sleep(0.02)

    async def _ask_for_reply(self, version: int, results: list[ToolResult], keys: tuple[str, ...]) -> None:
        """Speak about new results, unless a response that already saw them has started."""
        try:
            await self._floor_free()  # never talk over the caller
            if any(r.history_version >= version for r in self.responses if not r.held):
                return
            self._begin(Response(self, results[0].turn_id, self._messages(), purpose="tool_result",
                                 about_keys=keys))
        finally:
            self._reply_pending.difference_update(keys)

    def _maybe_remind(self) -> None:
        """A side effect the caller never heard about gets a dedicated reply (at most twice)."""
        if self.ledger is None:
            return
        telling = set(self._reply_pending)
        for r in self.responses:
            if r.may_still_tell:
                telling.update(r.about_keys)
        rows = [r for r in self.ledger.untold() if r.business_key in self.ledger_keys
                and r.business_key not in telling and r.tell_attempts < 2]
        if not rows:
            return
        keys = tuple(r.business_key for r in rows)
        for key in keys:
            self.ledger.note_tell_attempt(key)
        self._reply_pending.update(keys)
        self.spawn(self._remind(keys))

    async def _remind(self, keys: tuple[str, ...]) -> None:
        try:
            await self._floor_free()
            rows = [r for r in self.ledger.untold() if r.business_key in keys]
            if not rows or self.control.closed:
                return
            facts = "; ".join(f"{r.tool} for {r.business_key}: {r.state}, {json.dumps(r.result or r.error)}"
                              for r in rows)
            note = f"The caller has not heard this outcome yet. Tell them now, in one short sentence: {facts}"
            self._begin(Response(self, None, self._messages(system_note=note), purpose="reminder",
                                 about_keys=tuple(r.business_key for r in rows)))
        finally:
            self._reply_pending.difference_update(keys)


def _tools_prompt(tools: ToolRegistry) -> str:
    lines = ["You can use tools. To use one, reply with only a JSON object: "
             '{"name": "<tool>", "arguments": {...}}. Fill every spoken argument with a short '
             "sentence to say to the caller while the tool runs. Tools:"]
    for spec in tools.specs():
        params = spec.parameters.get("properties", {})
        args = ", ".join(f"{k} ({v.get('type', 'string')}{', spoken' if k in spec.spoken else ''})"
                         f"{': ' + v['description'] if v.get('description') else ''}" for k, v in params.items())
        lines.append(f"- {spec.name}: {spec.description} Arguments: {args}")
    return "\n".join(lines)
