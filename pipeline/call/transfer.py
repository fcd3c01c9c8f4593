"""A hand-off to a person: the built-in `transfer_call` tool (`call.transfer`, off by default).

The agent says a short line (the tool's spoken `line`, as `end_call` says its goodbye) and the
call is handed over. The close is `end_call`'s: the line is heard in full and the speaker has
drained before anything happens, a caller who talks over it keeps the call, and a caller who
answers it ("okay, thanks") is let finish. Only then does the line (`HandOverSink`, a carrier's
media stream: `transports.telephony`) hand the call over instead of hanging up.

Cold by default; warm (`call.transfer_warm`) writes a summary of the call from the
conversation and this call's ledger rows: it goes to the person where the carrier's command can
carry it, and into the tool's result, so the event stream and the recording keep it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from ..base.conversation import Item
from ..tools import ToolSpec, tool
from ..tools.runner import current_call
from ..tools.schema import ToolRegistry
from .callctl import CallControl, end_call_tool

SUMMARY_CHARS = 600  # a SIP header line stays under ~1 kB once escaped
_TURNS = 4  # the caller's last turns a summary quotes


@dataclass(frozen=True)
class Handoff:
    """Where the call goes and what the person is told."""

    reason: str
    to: str = ""  # a number or sip: URI; empty: the carrier's own set-up decides (TwiML <Dial>)
    url: str = ""  # Plivo's transfer URL
    summary: str | None = None  # warm transfer only

    @property
    def mode(self) -> str:
        return "warm" if self.summary is not None else "cold"


@runtime_checkable
class HandOverSink(Protocol):
    """A line that can hand its call to a person: the next hang-up hands over (None: it hangs
    up again)."""

    def hand_over(self, handoff: Handoff | None) -> None: ...


def summary_of(items: list[Item], rows: list[Any], reason: str) -> str:
    """The call in a few lines, for the person taking it: why it comes, what the caller said
    last, and each side effect with its ledger state (a refund `unknown` must be checked)."""
    said = [i.text for i in items if i.type == "message" and i.role == "user" and i.text]
    parts = [f"Transferred: {reason}."]
    if said:
        parts.append("Caller said: " + " / ".join(t.strip() for t in said[-_TURNS:]) + ".")
    for row in rows:
        args = ", ".join(f"{k}={v}" for k, v in sorted(row.arguments.items()))
        told = "told" if row.told else "not yet told"
        parts.append(f"{row.tool}({args}): {row.state}, caller {told}.")
    text = " ".join(parts)
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 3] + "..."


def transfer_call_tool(desk: Any) -> ToolSpec:
    """The tool for one session's desk (`ToolDesk`): it reads the desk's conversation and the
    ledger rows of this call's side effects for a warm summary."""

    @tool(spoken=("line",), timeout_s=30.0)  # as end_call: the cap, a caller's reply, the grace
    async def transfer_call(line: str, reason: str) -> dict[str, Any]:
        """Hand the phone call to a person, when the caller asks for one or you cannot help.

        Args:
            line: What to say before the hand-over, e.g. "I'll put you through to a colleague now."
            reason: Why, in a few words, e.g. "caller asked for a person".
        """
        ctx = current_call()
        control: CallControl = ctx.control
        policy = control.core.config.call
        sink = control.sink
        if not isinstance(sink, HandOverSink):
            return {"transferred": False, "why": "this line cannot be handed to a person"}
        summary = None
        if policy.transfer_warm:
            rows = []
            if desk.ledger is not None:
                keys = sorted(desk.ledger_keys)
                rows = [r for r in await control.core.clock.run_in_thread(
                    lambda: [desk.ledger.get(k) for k in keys]) if r is not None]
            summary = summary_of(list(control.core.conversation.items), rows, reason)
        handoff = Handoff(reason, policy.transfer_to, policy.transfer_url, summary)
        sink.hand_over(handoff)
        outcome = await control.end_call(response_id=ctx.response_id, reason=f"transfer: {reason}")
        if not outcome.get("hung_up"):
            sink.hand_over(None)  # the call goes on: a later end_call hangs up, not transfers
            return {"transferred": False, **{k: v for k, v in outcome.items() if k != "hung_up"}}
        result: dict[str, Any] = {"transferred": True, "mode": handoff.mode}
        if handoff.to:
            result["to"] = handoff.to
        if summary is not None:
            result["summary"] = summary
        return result

    # as end_call: "we did not transfer because..." must reach the model even when cut off
    return replace(transfer_call, keep_on_interrupt=True)


def built_in(desk: Any, registry: ToolRegistry) -> ToolRegistry:
    """`registry` with the call-control tools the config turns on and it lacks: `end_call`
    (`call.end_call`), `transfer_call` (`call.transfer`, where the line can hand over)."""
    policy = desk.core.config.call
    extra = []
    if policy.end_call and "end_call" not in registry:
        extra.append(end_call_tool())
    if policy.transfer and "transfer_call" not in registry and isinstance(desk.control.sink, HandOverSink):
        extra.append(transfer_call_tool(desk))
    return ToolRegistry(specs=[*registry.specs(), *extra]) if extra else registry
