"""Running a tool call: validation, the ledger for side effects, a timeout, always an output.

Every call gets an output the model can read (an error output on exception or timeout), so the
model never waits forever. A side-effecting tool runs only when the ledger says so, with the
ledger's idempotency key available to it through `current_call()`; any tool runs only on values
somebody gave (`provenance`), where the session hands the runner its evidence. Time-outs run on
the session clock (so they fire in simulated time too), and ledger reads and writes (SQLite, fsync on
commit) run in a thread, off the event loop.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..base.clock import Clock, RealClock
from .evidence import Evidence
from .ledger import Intent, Ledger
from .provenance import Traced, refusal, trace
from .schema import ToolCall, ToolRegistry, ToolSpec
from .unasked import unasked, unasked_refusal


@dataclass(frozen=True)
class CallContext:
    """What a running tool may need to know about its own call."""

    call_id: str
    response_id: str
    turn_id: str | None
    idempotency_key: str | None = None
    control: Any = None  # the call's CallControl: lets a tool end the call


_current: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("tool_call", default=None)


def current_call() -> CallContext:
    ctx = _current.get()
    if ctx is None:
        raise RuntimeError("current_call() works only inside a tool run by the pipeline")
    return ctx


@dataclass
class ToolResult:
    """A tool's output, bound to the call, response and turn that asked for it."""

    call_id: str
    response_id: str
    turn_id: str | None
    name: str
    arguments: dict[str, Any]
    output: dict[str, Any]
    side_effect: bool = False
    business_key: str | None = None
    interrupted: bool = False  # completed while its response was being interrupted
    keep_on_interrupt: bool = False  # a side effect, or a result the model must always see
    extra: dict[str, Any] = field(default_factory=dict)


Query = Callable[[str], Awaitable[dict[str, Any] | None]]


class ToolRunner:
    """Runs calls from one registry; side effects go through the ledger."""

    def __init__(self, registry: ToolRegistry, *, ledger: Ledger | None = None,
                 queries: dict[str, Query] | None = None, control: Any = None,
                 clock: Clock | None = None, evidence: Callable[[], Evidence] | None = None) -> None:
        self.registry = registry
        self.control = control
        self.ledger = ledger
        self.queries = queries or {}  # tool name -> provider lookup by idempotency key
        self.clock: Clock = clock if clock is not None else RealClock()
        # what the caller said and earlier results: a side effect's arguments must be in it
        self.evidence = evidence

    def _keyed_ledger(self) -> Ledger:
        """The ledger, for a run with a business key (`run` refuses one without a ledger)."""
        assert self.ledger is not None
        return self.ledger

    async def _ledger(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self.clock.run_in_thread(lambda: method(*args, **kwargs))

    async def run(self, call: ToolCall, *, call_id: str, response_id: str, turn_id: str | None,
                  confirmation: str | None = None) -> ToolResult:
        """Run one call. `confirmation`: the read-back the caller said yes to (kept on the
        ledger's row beside the effect)."""
        spec = self.registry[call.name]
        args = spec.validate(dict(call.arguments))
        result = ToolResult(call_id, response_id, turn_id, spec.name, args, {}, side_effect=spec.side_effect,
                            keep_on_interrupt=spec.side_effect or spec.keep_on_interrupt)
        key = spec.key_for(args)
        traced = await self.trace(spec, args, key)
        if traced.missing:  # nobody gave it: refused back to the model, the ledger never hears of it
            result.output = refusal(spec, traced.missing)
            result.extra["ungrounded"] = traced.missing
            return result
        if self.evidence is not None and unasked(spec, traced.arguments, self.evidence()):
            result.output = unasked_refusal(spec)  # every value on file, and nobody asked for it
            result.extra["unasked"] = True
            return result
        if traced.dropped:  # optional, and nobody gave them: left out, not invented
            result.extra["dropped"] = traced.dropped
            args = result.arguments = traced.arguments
            key = spec.key_for(args)
        ctx = CallContext(call_id, response_id, turn_id, control=self.control)
        if not spec.side_effect:
            result.output = await self._invoke(spec, args, ctx)
            return result
        if self.ledger is None:
            raise RuntimeError(f"tool {spec.name!r} has side effects but the session has no ledger")
        assert key is not None  # ToolSpec refuses a side effect without a business_key
        ledger = self.ledger
        result.business_key = key
        # Spoken words are not part of the effect: "one moment" vs "let me check" is one refund.
        effect = {k: v for k, v in args.items() if k not in spec.spoken}

        async def intend() -> Intent:
            return await self._ledger(ledger.intend, business_key=key, tool=spec.name, arguments=effect,
                                      target="", call_id=call_id)

        intent = await intend()
        recovered = False
        if intent.kind == "unknown" and spec.name in self.queries:
            row = await ledger.resolve_unknown(key, self.queries[spec.name],
                                               run_blocking=self.clock.run_in_thread)
            if row.state != "unknown":  # the provider said what became of it: decide from that
                intent, recovered = await intend(), True
        if intent.kind == "already_done":
            row = intent.row
            status = "already_done" if row.state == "committed" else "already_in_progress"
            result.output = {"status": status, "result": row.result}
            if recovered:
                result.output["recovered"] = "the provider confirmed the earlier attempt went through"
            return result
        if intent.kind in ("refused", "unknown"):
            result.output = {"status": intent.kind, "message": intent.message}
            return result
        if confirmation is not None:
            await self._ledger(ledger.record_confirmation, key, confirmation)
        ctx = CallContext(call_id, response_id, turn_id, intent.row.idempotency_key, control=self.control)
        change = intent if intent.kind == "updated" else None
        result.output = await self._invoke(spec, args, ctx, ledger_key=key, change=change)
        if change is not None and result.output.get("status") != "change_refused":
            result.output["updated"] = True
        return result

    async def trace(self, spec: ToolSpec, args: dict[str, Any], key: str | None) -> Traced:
        """Where each argument came from (`provenance`). What the ledger already holds for this
        key (an earlier call's intent, perhaps before a restart) counts as given: repeating it is
        no new effect."""
        if self.evidence is None:
            return Traced(dict(args))
        evidence = self.evidence()
        traced = trace(spec, args, evidence)
        if (traced.missing or traced.dropped) and key is not None and self.ledger is not None:
            row = await self._ledger(self.ledger.get, key)
            if row is not None:
                traced = trace(spec, args, replace(evidence, results=[*evidence.results, row.arguments]))
        return traced

    async def _invoke(self, spec: Any, args: dict[str, Any], ctx: CallContext, *,
                      ledger_key: str | None = None, change: Intent | None = None) -> dict[str, Any]:
        token = _current.set(ctx)
        try:
            value = await self.clock.wait_for(spec(**args), spec.timeout_s)
        except TimeoutError:
            if ledger_key is not None:  # it may or may not have happened: query later, never retry
                await self._ledger(self._keyed_ledger().mark_unknown, ledger_key,
                                   f"timed out after {spec.timeout_s:g} s")
                return {"status": "unknown", "error": f"no answer within {spec.timeout_s:g} s; "
                        "it may still go through, we are checking"}
            return {"error": f"{spec.name} did not answer within {spec.timeout_s:g} s"}
        except Exception as exc:
            if change is not None and change.previous is not None:
                # A refused change is not a failed effect: the earlier request is still in flight
                # under the same key, and its own run settles the row when it lands.
                await self._ledger(self._keyed_ledger().restore_intent, ledger_key, change.previous,
                                   refused_digest=change.row.intent_digest)
                return {"status": "change_refused", "error": str(exc),
                        "still_in_progress": change.previous.arguments}
            if ledger_key is not None:
                await self._ledger(self._keyed_ledger().fail, ledger_key, f"{type(exc).__name__}: {exc}")
                return {"status": "failed", "error": str(exc)}
            return {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            _current.reset(token)
        value = value if isinstance(value, dict) else {"result": value}
        if ledger_key is not None:
            await self._ledger(self._keyed_ledger().commit, ledger_key, value)
            return {"status": "committed", "result": value}
        return value
